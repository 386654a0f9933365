"""The bug zoo catches historical behaviours (explorer first) and raises no false alarm."""
import json
import subprocess
import sys

from kverify.zoo import candidates, hunt


def test_candidates_are_models_supporting_the_behaviour():
    models = candidates("stale-generation-commit")
    assert models and models[0] == "group"          # abstract model before the worlds
    assert "replication" not in models


def test_zoo_catches_and_reports(tmp_path):
    r = subprocess.run([sys.executable, "-m", "kverify", "zoo", "no-generation-bump", "stale-generation-commit",
                        "--states", "50000", "--json", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(r.stdout)["behaviours"]
    assert [x["name"] for x in rows] == ["no-generation-bump", "stale-generation-commit"]
    for row in rows:
        assert row["caught"] and row["engine"] == "explore" and row["trace_length"] >= 1
        rep = subprocess.run([sys.executable, "-m", "kverify", "replay", row["report"]], capture_output=True, text=True)
        assert rep.returncode == 1, rep.stdout + rep.stderr   # the report's replay reproduces it


def test_control_run_has_no_false_alarm_on_abstract_group_model():
    row = hunt(None, states=30_000, walk_steps=20_000, seed=3, engines=("explore", "walk"), models=["group"])
    assert row.note == "no engine found a violation"
    assert not row.caught, row


def test_unknown_behaviour_is_usage_error():
    r = subprocess.run([sys.executable, "-m", "kverify", "zoo", "not-a-bug"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown behaviour" in r.stderr


def test_every_behaviour_is_caught_and_its_report_replays(tmp_path):
    """The zoo is the suite's acceptance test: every declared behaviour is caught within its counted budget,
    and the written report's replay command reproduces it (issues #6 and #10)."""
    from kverify import behaviours as B
    from kverify.reports.record import Counterexample
    from kverify.reports.replayer import replay_record

    missed, not_replayed = [], []
    for b in B.all_behaviours():
        row = hunt(b.name, seed=0, out_dir=str(tmp_path))       # counted budgets: the same on any machine
        if not row.caught:
            missed.append((b.name, row.note))
            continue
        assert row.report
        if not replay_record(Counterexample.load(row.report)).reproduced:
            not_replayed.append(b.name)
    assert not missed, missed
    assert not not_replayed, not_replayed


def test_zoo_budgets_are_counts_and_usage_is_checked():
    r = subprocess.run([sys.executable, "-m", "kverify", "zoo", "no-generation-bump", "--states", "0"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--states" in r.stderr
    a = hunt("no-generation-bump", states=20_000, seed=0)
    b = hunt("no-generation-bump", states=20_000, seed=0)
    assert a.caught and (a.invariant, a.engine, a.model, a.trace_length) == (b.invariant, b.engine, b.model,
                                                                            b.trace_length)
