"""`--command`: certification of programs in other languages over the JSON-lines wire format,
including ones that crash, hang or write garbage (each a finding with its input)."""
import os
import shutil
import subprocess
import sys

import pytest

from kverify.certify.check import check_property
from kverify.certify.targets import TargetFailure, make_target
from kverify.cli import main

HERE = os.path.join(os.path.dirname(__file__), "external_assignors")
PY = sys.executable


def script(name):
    return f"{PY} {os.path.join(HERE, name)}"


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory):
    javac = shutil.which("javac")
    java = shutil.which("java")
    if not javac or not java:
        print("skipping: javac/java not found on PATH; the Java external assignor cannot be compiled")
        pytest.skip("javac/java not found on PATH")
    out = tmp_path_factory.mktemp("java")
    subprocess.run([javac, "-d", str(out), os.path.join(HERE, "RoundRobinAssignor.java")], check=True,
                   capture_output=True, timeout=120)
    return f"{java} -cp {out} RoundRobinAssignor"


def test_java_roundrobin_matches_the_reference_and_holds_its_claims(java_classes, tmp_path, capsys):
    from kverify.impl.assignors import assign

    target = make_target(None, java_classes, timeout=20)
    try:
        problem = {"id": "p\u00e9", "topics": {"t0": 3, "t1": 3},
                   "members": [{"id": "C1", "topics": ["t0", "t1"], "owned": None, "generation": None, "instance_id": None},
                               {"id": "C0", "topics": ["t0", "t1"], "owned": None, "generation": None,
                                "instance_id": None}]}
        assert target.solve(problem) == assign(problem, "roundrobin")
    finally:
        target.close()
    rc = main(["assignor", "check", "--command", java_classes, "--timeout", "20", "--seed", "3", "--examples", "25",
               "--claims", "complete,exclusive,subscribed-only,no-ghosts,deterministic,robust", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "all claimed properties hold" in out and "seed=3" in out


def test_crashing_program_is_reported_with_its_input():
    target = make_target(None, script("crashing_assignor.py"), timeout=10)
    try:
        v = check_property(target, "answers", seed=4, examples=100)
        complete = check_property(target, "complete", seed=4, examples=100)
    finally:
        target.close()
    assert not v.holds and "crash" in v.message and "cannot handle 3 members" in v.message
    assert len(v.counterexample["problem"]["members"]) == 3
    assert v.counterexample["answer"]["failure"] == "crash"
    # the crash is the `answers` finding; `complete` is judged on the problems it did answer
    assert complete.holds and complete.refused > 0 and complete.judged > 0


def test_hanging_program_times_out_and_the_check_goes_on():
    target = make_target(None, script("hanging_assignor.py"), timeout=0.5)
    try:
        with pytest.raises(TargetFailure) as exc:
            target.solve({"id": 1, "topics": {"t": 0}, "members": []})
        assert exc.value.kind == "hang"
        # the process was restarted: the next problem is answered
        answer = target.solve({"id": 2, "topics": {"t": 1}, "members": [
            {"id": "a", "topics": ["t"], "owned": None, "generation": None, "instance_id": None}]})
        assert answer == {"id": 2, "assignment": {"a": [["t", 0]]}}
        v = check_property(target, "robust", seed=4, examples=30)
    finally:
        target.close()
    assert not v.holds and "hang" in v.message


def test_malformed_line_is_a_finding():
    target = make_target(None, script("malformed_assignor.py"), timeout=10)
    try:
        v = check_property(target, "answers", seed=4, examples=100)
    finally:
        target.close()
    assert not v.holds and "malformed" in v.message and "not JSON" in v.message
    assert max(v.counterexample["problem"]["topics"].values()) >= 4


def test_missing_program_is_a_usage_error(capsys):
    assert main(["assignor", "check", "--command", "/nonexistent/assignor-binary"]) == 2
    assert "cannot start" in capsys.readouterr().err


def test_program_that_stops_reading_is_a_hang_not_a_stuck_check():
    target = make_target(None, f"{PY} -c \"import time; time.sleep(600)\"", timeout=0.5)
    big = {"id": 1, "topics": {f"t{i}": 1 for i in range(30000)}, "members": []}  # > a pipe buffer
    try:
        with pytest.raises(TargetFailure) as exc:
            target.solve(big)
    finally:
        target.close()
    assert exc.value.kind == "hang"
