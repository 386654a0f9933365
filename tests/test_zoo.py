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
                        "--budget", "30", "--json", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(r.stdout)["behaviours"]
    assert [x["name"] for x in rows] == ["no-generation-bump", "stale-generation-commit"]
    for row in rows:
        assert row["caught"] and row["engine"] == "explore" and row["trace_length"] >= 1
        rep = subprocess.run([sys.executable, "-m", "kverify", "replay", row["report"]], capture_output=True, text=True)
        assert rep.returncode == 1, rep.stdout + rep.stderr   # the report's replay reproduces it


def test_control_run_has_no_false_alarm_on_abstract_group_model():
    row = hunt(None, budget=8, seed=3, engines=("explore", "walk"), models=["group"])
    assert row.note == "no engine found a violation"
    assert not row.caught, row


def test_unknown_behaviour_is_usage_error():
    r = subprocess.run([sys.executable, "-m", "kverify", "zoo", "not-a-bug"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown behaviour" in r.stderr
