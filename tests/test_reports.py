"""Counterexample records and their renderings: JSON round trip, Markdown, HTML (escaped,
self-contained), replay (exit 1 reproduced / 0 fixed / 2 malformed)."""
import json
import subprocess
import sys

import pytest

import report_toy
from kverify.model import registry
from kverify.model.walk import walk
from kverify.reports.record import Counterexample, RecordError, from_trace
from kverify.reports.writer import signature, write_report


@pytest.fixture
def toy_registered(monkeypatch):
    """The report toy as registry model "toy" (a module holding its SPEC, as the registry expects)."""
    import sys
    import types

    from kverify.model.spec import ModelSpec

    module = types.ModuleType("report_toy_registered")
    module.SPEC = ModelSpec(name="toy", make=report_toy.make, params=report_toy.PARAMS)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(registry.ENTRIES, "toy", registry.Entry("toy", module.__name__, "test toy"))
    yield


def _violating_record():
    proto = report_toy.make({"limit": 4, "lossy": True}, frozenset())
    for seed in range(50):
        res = walk(proto, seed, 10, record_trace=True)
        if res.violation:
            return from_trace(proto, res.trace, res.violation, engine="walk", seed=seed, model_name="toy")
    raise AssertionError("the lossy toy never lost a message in 50 seeds")


def test_record_round_trip_and_renderings(tmp_path):
    cx = _violating_record()
    path = write_report(cx, str(tmp_path))
    again = Counterexample.load(path)
    assert again.invariant == "no-gap" and again.actions == cx.actions
    assert again.replay == f"kverify replay {path}"
    md = (tmp_path / "counterexample.md").read_text()
    assert "no-gap" in md and "⚡" in md
    html = (tmp_path / "counterexample.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched
    assert html.count('class="lifeline"') == 2
    assert html.count('class="step-row') == len(cx.trace)
    assert 'class="changed"' in html


def test_signature_is_stable_and_trace_sensitive():
    cx = _violating_record()
    assert signature(cx) == signature(Counterexample.from_json(json.loads(cx.dumps())))
    other = Counterexample.from_json(json.loads(cx.dumps()))
    other.trace = other.trace[:-1]
    assert signature(other) != signature(cx)


def test_replay_reproduces_and_confirms_fix(tmp_path, toy_registered):
    from kverify.reports.replayer import replay_record

    cx = _violating_record()
    assert replay_record(cx).reproduced
    fixed = Counterexample.from_json(json.loads(cx.dumps()))
    fixed.params = {"limit": 4, "lossy": False}  # the 'lose' action no longer exists
    out = replay_record(fixed)
    assert not out.reproduced and "no longer reproduces" in out.message


def test_replay_cli_exit_codes(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = subprocess.run([sys.executable, "-m", "kverify", "replay", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"schema": "other/9"}))
    r = subprocess.run([sys.executable, "-m", "kverify", "replay", str(wrong)], capture_output=True, text=True)
    assert r.returncode == 2 and "unsupported counterexample schema" in r.stderr


def test_unknown_schema_rejected():
    with pytest.raises(RecordError):
        Counterexample.from_json({"schema": "nope"})
