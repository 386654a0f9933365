"""`kverify coordinator run` over the conformance scenarios of tests/scenarios/ (issue #11).

The scenario files are the checked-in statement of what Kafka's coordinator answers; every one must
pass against the reference coordinator, every historical coordinator behaviour must make at least
one of them fail, and the runner must report failures readably and reject malformed files.
"""
import glob
import json
import os

import pytest

from kverify import behaviours as B
from kverify.cli import main
from kverify.conformance.format import TOPICS, load_file

HERE = os.path.dirname(__file__)
FILES = sorted(glob.glob(os.path.join(HERE, "scenarios", "*.jsonl")))


def run_cli(capsys, *argv):
    rc = main(["coordinator", "run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_at_least_40_scenarios_spanning_every_topic():
    scenarios = [sc for f in FILES for sc in load_file(f)]
    assert len(scenarios) >= 40
    covered = {sc.topic for sc in scenarios} | {t for sc in scenarios for t in sc.tags}
    assert covered >= set(TOPICS), sorted(set(TOPICS) - covered)
    assert all(sc.notes and "coordinator.md" in sc.source for sc in scenarios)


def test_all_scenario_files_pass(capsys):
    rc, out, err = run_cli(capsys, *FILES)
    failing = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert rc == 0, "\n".join(failing)
    assert out.strip().splitlines()[-1].endswith("scenarios passed")


def test_json_output_shape(capsys):
    rc, out, _ = run_cli(capsys, FILES[0], "--json")
    doc = json.loads(out)
    assert set(doc) >= {"scenarios", "passed", "total"}
    assert doc["total"] == len(doc["scenarios"]) == len(load_file(FILES[0]))
    assert set(doc["scenarios"][0]) >= {"id", "passed", "failed_step", "expected", "actual"}
    assert rc == (0 if doc["passed"] == doc["total"] else 1)


WRONG = {"id": "wrong_generation", "source": "test", "topic": "join", "config": {}, "steps": [
    {"op": "join", "as": "j1", "group": "groupId", "member_id": ""},
    {"op": "advance", "ms": 51},
    {"op": "expect", "of": "j1", "error": "NONE", "generation_id": 2, "leader_id": "$j1"}]}
PARKED = {"id": "still_parked", "source": "test", "topic": "join", "config": {}, "steps": [
    {"op": "join", "as": "j1", "group": "groupId", "member_id": ""},
    {"op": "advance", "ms": 50},
    {"op": "expect", "of": "j1", "error": "NONE"}]}
REF_PARKED = {"id": "ref_to_parked", "source": "test", "topic": "join", "config": {}, "steps": [
    {"op": "join", "as": "j1", "group": "groupId", "member_id": ""},
    {"op": "heartbeat", "as": "h1", "group": "groupId", "member_id": "$j1", "generation": 1}]}


def write(tmp_path, *objs, name="s.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return str(p)


def test_wrong_expectation_fails_with_readable_diff(tmp_path, capsys):
    rc, out, _ = run_cli(capsys, write(tmp_path, WRONG, PARKED, REF_PARKED))
    assert rc == 1
    lines = out.splitlines()
    assert lines[0] == "FAIL wrong_generation: step 3 (expect j1): generation_id: expected 2, got 1"
    assert lines[1] == "FAIL still_parked: step 3 (expect j1): response j1 still parked (not delivered)"
    assert lines[2].startswith("FAIL ref_to_parked: step 2 (heartbeat h1): cannot resolve reference")
    assert "still parked" in lines[2]
    assert lines[-1] == "0/3 scenarios passed"
    rc, out, _ = run_cli(capsys, write(tmp_path, WRONG), "--json")
    doc = json.loads(out)["scenarios"][0]
    assert (doc["passed"], doc["failed_step"], doc["expected"], doc["actual"]) == (False, 3, {"generation_id": 2},
                                                                                   {"generation_id": 1})


def test_malformed_file_exit_2_one_line(tmp_path, capsys):
    bad = dict(WRONG, steps=WRONG["steps"] + [{"op": "expect", "of": "j7", "error": "NONE"}])
    rc, out, err = run_cli(capsys, write(tmp_path, bad))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1
    assert "scenario 'wrong_generation' step 4" in err and "undefined label 'j7'" in err
    rc, _, err = run_cli(capsys, write(tmp_path, dict(WRONG, steps=[{"op": "teleport"}]), name="b.jsonl"))
    assert rc == 2 and "unknown op 'teleport'" in err and err.count("\n") == 1
    rc, _, err = run_cli(capsys, str(tmp_path / "missing.jsonl"))
    assert rc == 2 and "cannot read" in err


def test_only_and_bad_options(tmp_path, capsys):
    f = write(tmp_path, WRONG, PARKED)
    rc, out, _ = run_cli(capsys, f, "--only", "still_parked")
    assert rc == 1 and out.splitlines()[0].startswith("FAIL still_parked") and "wrong_generation" not in out
    assert out.splitlines()[-1] == "0/1 scenarios passed"
    rc, _, err = run_cli(capsys, "--only", "nope", f)
    assert rc == 2 and "no scenario with id 'nope'" in err
    rc, _, err = run_cli(capsys, f, "--behaviour", "no-such-behaviour")
    assert rc == 2 and "unknown behaviour" in err
    rc, _, err = run_cli(capsys, f, "--behaviour", "stale-generation-commit", "--behaviour", "x")
    assert rc == 2


def _failing(capsys, *extra):
    rc, out, _ = run_cli(capsys, *FILES, "--json", *extra)
    doc = json.loads(out)
    return rc, doc, {s["id"] for s in doc["scenarios"] if not s["passed"]}


@pytest.mark.parametrize("behaviour", [b.name for b in B.by_component("coordinator")])
def test_every_coordinator_behaviour_fails_some_scenario(behaviour, capsys):
    _, _, baseline = _failing(capsys)
    rc, doc, failed = _failing(capsys, "--behaviour", behaviour)
    assert rc == 1 and failed - baseline, f"no scenario detects {behaviour}"
    assert doc["behaviours"] == [behaviour]
