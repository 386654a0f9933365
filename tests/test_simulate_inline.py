"""`kverify simulate --engine inline`, seed ranges and exactly-once accounting (no Spark needed)."""
import json
import os

from kverify.cli import main
from kverify.spark import aggregate
from kverify.spark.runner import SUMMARY_KEYS
from kverify.spark.task import RunRow, run_range, seeds_per_range, split
from kverify.spark.world import resolve

TOY = "kverify.spark.toy_counter:make"


def _sim(capsys, tmp_path, *extra, name="out"):
    out = str(tmp_path / name)
    rc = main(["simulate", TOY, "--engine", "inline", "--out", out, "--json", *extra])
    return rc, json.loads(capsys.readouterr().out), out


def test_split_covers_every_seed_once_in_ranges_of_thousands():
    ranges = split(7, 100_000)
    seeds = [s for r in ranges for s in range(r.start, r.start + r.count)]
    assert seeds == list(range(7, 100_007))
    assert all(r.count >= 1000 for r in ranges) and len(ranges) == 16
    assert seeds_per_range(10**9) == 10_000 and seeds_per_range(5) == 1000
    assert [r.count for r in split(0, 2500, 1000)] == [1000, 1000, 500]


def test_run_range_is_deterministic_and_fingerprints_partition_the_visited_set():
    world = resolve(TOY, {}, (), 30)
    rng = split(100, 300, 300)[0]
    a, b = list(run_range(world, rng)), list(run_range(world, rng))
    assert a == b and [r.seed for r in a] == list(range(100, 400))
    fps = [fp for r in a for fp in r.fingerprints]
    assert len(fps) == len(set(fps))       # each abstract state reported by the first run only


def test_violation_found_reported_shrunk_and_replayable(capsys, tmp_path):
    rc, s, out = _sim(capsys, tmp_path, "--runs", "1500", "--steps", "40", "--param", "cap=8", "--seed", "3")
    assert rc == 1
    assert list(s) == list(SUMMARY_KEYS)
    assert s["runs_requested"] == s["runs_completed"] == 1500
    assert set(s["violations"]) == {"sum-within-cap"} and s["violations"]["sum-within-cap"] > 10
    (rep,) = s["reports"]
    # nine incs is the shortest way to a total of 9; ddmin guarantees 1-minimality, not the optimum
    assert 9 <= rep["shrunk_steps"] <= rep["step"] and rep["minimal"]
    record = json.load(open(rep["path"]))
    assert record["engine"] == "walk" and record["seed"] == rep["seed"]
    assert record["violation_step"] == rep["shrunk_steps"] == len(record["trace"]) - 1
    assert main(["replay", rep["path"]]) == 1                       # still breaks: reproduced
    assert "reproduced" in capsys.readouterr().out
    # the seed command re-runs that one seed and finds the same thing
    argv = rep["seed_command"].split()[1:] + ["--out", str(tmp_path / "again"), "--json"]
    assert main(argv) == 1
    again = json.loads(capsys.readouterr().out)
    assert again["reports"][0]["seed"] == rep["seed"] and again["reports"][0]["step"] == rep["step"]
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert {k: summary[k] for k in SUMMARY_KEYS} == s and summary["duplicate_rows_dropped"] == 0
    assert sum(1 for _ in open(os.path.join(out, "runs", "runs.jsonl"))) == 1500


def test_no_reports_still_counts_violations(capsys, tmp_path):
    rc, s, out = _sim(capsys, tmp_path, "--runs", "1000", "--steps", "40", "--param", "cap=8", "--no-reports")
    assert rc == 1 and s["violations"]["sum-within-cap"] > 0 and s["reports"] == []
    assert not os.path.exists(os.path.join(out, "reports"))


def test_clean_run_exits_zero_and_reaches_its_sometimes_goal(capsys, tmp_path):
    rc, s, out = _sim(capsys, tmp_path, "--runs", "1000", "--steps", "30")
    assert rc == 0 and s["violations"] == {} and s["reports"] == []
    assert s["steps"] == 30_000 and s["distinct_abstract_states"] == 35   # multisets of 3 values in 0..4
    assert json.load(open(os.path.join(out, "summary.json")))["sometimes"] == {"some-counter-at-limit": True}


def test_deadlock_is_a_finding_with_a_shrunk_replayable_report(capsys, tmp_path):
    rc, s, out = _sim(capsys, tmp_path, "--runs", "1000", "--steps", "60", "--param", "jam=true")
    assert rc == 1 and set(s["violations"]) == {"deadlock"}
    (rep,) = s["reports"]
    assert rep["shrunk_steps"] >= 12 and rep["minimal"]        # twelve incs fill 3 counters of 4
    record = json.load(open(rep["path"]))
    assert record["trace"][-1]["state"]["counters"] == [4, 4, 4]
    assert main(["replay", rep["path"]]) == 1 and "reproduced" in capsys.readouterr().out


def test_bad_input_is_one_line_exit_2(capsys, tmp_path):
    for argv in (["simulate", "no-such-world"], ["simulate", TOY, "--runs", "0"],
                 ["simulate", TOY, "--param", "nope=1"], ["simulate", TOY, "--param", "cap=x"],
                 ["simulate", TOY, "--behaviour", "no-such-behaviour"], ["simulate", "nomodule:make"],
                 ["simulate", TOY, "--engine", "gpu"], ["simulate", TOY, "--steps", "0"],
                 ["simulate", TOY, "--engine", "spark", "--master", "foo://x"]):
        assert main(argv + ["--engine", "inline"] if "--engine" not in argv else argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("kverify: error:"), (argv, err)


def _row(seed, steps=5, inv=None, at=None, fps=()):
    return RunRow(seed, steps, inv, at, False, {"inc": steps}, [], list(fps))


def test_accounting_counts_a_duplicated_seed_once_and_shows_a_lost_one():
    rows = [_row(0, fps=[1, 2]), _row(1, inv="x", at=3, fps=[3]), _row(1, inv="x", at=3, fps=[3]),
            _row(3, inv="x", at=2), _row(99)]
    t = aggregate.from_rows(rows, 0, 4)
    assert (t.rows, t.runs_completed, t.duplicate_rows, t.foreign_rows) == (5, 3, 1, 1)
    assert t.steps == 15 and t.violations == {"x": 2} and t.exemplars == {"x": (2, 3)}
    assert t.distinct_abstract_states == 3 and t.actions == {"inc": 15}


def test_a_seed_that_does_not_reproduce_is_reported_not_papered_over(tmp_path):
    import pytest

    from kverify.spark import findings

    world = resolve(TOY, {"cap": "8"}, (), 40)
    rows = list(run_range(world, split(0, 200, 200)[0]))
    row = next(r for r in rows if r.invariant)
    good = findings.report(world, row.invariant, row.seed, row.violation_step, 1, str(tmp_path), "walk")
    assert good.step == row.violation_step and os.path.exists(good.path)
    with pytest.raises(findings.NondeterministicReplay, match="not deterministic"):
        findings.report(world, row.invariant, row.seed, row.violation_step + 1, 1, str(tmp_path), "walk")
