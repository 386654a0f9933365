"""`kverify assignor check` end to end on built-in and deliberately broken assignors (small runs)."""
import json
import os
import sys

import pytest

from kverify.certify.check import check_property, run_check
from kverify.certify.targets import make_target
from kverify.cli import main
from kverify.reports.record import Counterexample

BROKEN = os.path.join(os.path.dirname(__file__), "external_assignors")
SMALL = 25


@pytest.fixture(autouse=True)
def _broken_on_path(monkeypatch):
    monkeypatch.syspath_prepend(BROKEN)


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky", "legacy-range"])
def test_builtin_holds_every_property_it_claims(name, tmp_path):
    target = make_target(name)
    verdicts = run_check(target, seed=11, examples=SMALL, out_dir=str(tmp_path))
    claimed = {v.name: v for v in verdicts if v.claimed}
    assert claimed and all(v.holds for v in claimed.values()), {n: v.message for n, v in claimed.items()}
    assert all(v.examples >= SMALL for v in claimed.values())


def test_unclaimed_properties_are_still_checked_and_reported(tmp_path):
    v = check_property(make_target("range"), "balanced", seed=3, examples=SMALL)
    assert not v.claimed and "topic by topic" in v.reason
    assert not v.holds and "could take" in v.message   # range's imbalance across topics, shown not hidden


def test_json_output_and_counterexample_record(tmp_path, capsys):
    rc = main(["assignor", "check", "broken_assignors:OffByOneRange", "--seed", "5", "--examples", "30",
               "--property", "no-ghosts", "--property", "complete", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert out["target"] == "broken_assignors:OffByOneRange" and out["seed"] == 5
    ng = out["properties"]["no-ghosts"]
    assert ng["holds"] is False and ng["examples"] >= 1
    assert out["properties"]["complete"]["holds"] is True and out["properties"]["complete"]["counterexample"] is None
    cx = ng["counterexample"]
    assert "partitions" in cx["violation"]
    path = str(tmp_path / "no-ghosts" / "counterexample.json")
    record = Counterexample.load(path)
    assert record.engine == "assignor-check" and record.model == "assignor:broken_assignors:OffByOneRange"
    assert record.extra["problem"] == cx["problem"] and record.extra["answer"] == cx["answer"]
    assert record.trace[-1].state["problem"] == cx["problem"] and record.seed == 5
    assert record.replay == f"kverify replay {path}"
    assert record.extra["assignor_check_command"] == \
        "kverify assignor check broken_assignors:OffByOneRange --seed 5 --property no-ghosts"
    assert (tmp_path / "no-ghosts" / "counterexample.html").exists()
    from kverify.reports.replayer import replay_record
    assert replay_record(record).reproduced        # `kverify replay` re-asks the target the same problem


def test_same_seed_same_counterexample(tmp_path):
    target = make_target("broken_assignors:AssignsTwice")
    a = check_property(target, "exclusive", seed=9, examples=SMALL)
    b = check_property(target, "exclusive", seed=9, examples=SMALL)
    assert not a.holds and a.counterexample == b.counterexample


@pytest.mark.parametrize("target, failing, holding", [
    # off-by-one range: runs past the end of a topic
    ("broken_assignors:OffByOneRange", ["no-ghosts", "robust"], ["complete", "exclusive", "subscribed-only"]),
    # one partition to two members
    ("broken_assignors:AssignsTwice", ["exclusive", "subscribed-only"], ["complete", "no-ghosts"]),
    # crashes once partitions are owned
    ("broken_assignors:Raises", ["robust"], []),
])
def test_broken_assignors_are_caught_property_by_property(target, failing, holding):
    t = make_target(target)
    for name in failing:
        v = check_property(t, name, seed=2, examples=200)
        assert not v.holds, name
        assert v.counterexample["problem"]["members"], name
    for name in holding:
        assert check_property(t, name, seed=2, examples=SMALL).holds, name


def test_smallest_counterexample_is_shrunk():
    v = check_property(make_target("broken_assignors:AssignsTwice"), "exclusive", seed=2, examples=200)
    problem = v.counterexample["problem"]
    assert len(problem["members"]) == 2 and sum(problem["topics"].values()) <= 2


def test_crash_in_a_python_target_is_a_finding_not_a_traceback():
    v = check_property(make_target("broken_assignors:Raises"), "robust", seed=2, examples=100)
    assert v.counterexample["answer"] == {"failure": "crash", "message": "KeyError: 'owned'"}


@pytest.mark.slow
def test_kafka_14639_stale_owner_ignored_breaks_cooperative_safe():
    bad = check_property(make_target("cooperative-sticky", behaviours=frozenset({"kafka-14639-stale-owner-ignored"})),
                         "cooperative-safe", seed=1, examples=500)
    assert not bad.holds and "still owns it" in bad.message
    gens = {m["generation"] for m in bad.counterexample["problem"]["members"]}
    assert len(gens) > 1  # a member with a stale generation is involved
    assert check_property(make_target("cooperative-sticky"), "cooperative-safe", seed=1, examples=150).holds


def test_kafka_12984_double_claim_breaks_exclusive():
    from kverify.certify.properties import check_exclusive
    from kverify.impl.assignors import assign

    problem = {"id": 1, "assignor": "cooperative-sticky", "topics": {"t": 3}, "members": [
        {"id": "a", "topics": ["t"], "owned": [["t", 0]], "generation": 4},
        {"id": "b", "topics": ["t"], "owned": [["t", 0]], "generation": 4}]}
    broken = assign(problem, behaviours=frozenset({"kafka-12984-double-claim"}))
    assert "t-0 is assigned" in check_exclusive(problem, broken)
    assert check_exclusive(problem, assign(problem)) is None


@pytest.mark.slow
def test_sticky_reports_gaps_outside_its_scope_without_failing():
    v = check_property(make_target("sticky"), "sticky", seed=5, examples=250)
    assert v.holds and v.scope and v.outside["rounds"] >= 1
    assert "gap" in v.outside["example"]["violation"]


@pytest.mark.parametrize("argv, fragment", [
    (["assignor", "check"], "exactly one of TARGET or --command"),
    (["assignor", "check", "nosuch"], "unknown target"),
    (["assignor", "check", "range", "--property", "nope"], "unknown property"),
    (["assignor", "check", "range", "--claims", "complete,nope"], "unknown property"),
    (["assignor", "check", "nomodule_xyz:thing"], "cannot import"),
    (["assignor", "check", "range", "--behaviour", "kafka-12984-double-claim"], None),
    (["assignor"], "missing sub-command"),
    (["assignor", "check", "range", "--examples", "0"], "at least 1"),
    (["assignor", "check", "kafka-python:nope"], "unknown client assignor"),
])
def test_usage_errors_exit_2_with_one_line(argv, fragment, capsys):
    if fragment is None:  # a valid behaviour with a quick run: not a usage error
        assert main(argv + ["--examples", "2", "--property", "complete"]) == 0
        return
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1
