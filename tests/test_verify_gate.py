"""`kverify verify` as a CI gate: reports written, baseline of known violations, new ones fail."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def kv(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kverify", *args], capture_output=True, text=True, cwd=cwd)


def test_gate_baseline_flow(tmp_path):
    out1, out2, out3 = tmp_path / "r1", tmp_path / "r2", tmp_path / "r3"
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps({"violations": []}))
    only = ["--only", "walk:group"]
    # quick walks are complete (every run of the budget, every `sometimes` reached): PASS, exit 0
    ok = kv("verify", "--profile", "quick", "--seed", "1", "--out", str(out1), "--baseline", str(base), *only)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    summary = json.loads((out1 / "summary.json").read_text())
    assert summary["passed"] and {c["name"] for c in summary["checks"]} == {"walk:group", "walk:group-world"}
    suite = ET.parse(out1 / "junit.xml").getroot()
    assert int(suite.get("tests")) == len(summary["checks"]) and suite.get("failures") == "0"
    assert (out1 / "index.html").read_text().count('class="check verdict-pass"') == len(summary["checks"])

    bad = kv("verify", "--profile", "quick", "--seed", "1", "--out", str(out2), "--baseline", str(base),
             "--behaviour", "stale-generation-commit", *only)
    assert bad.returncode == 1
    assert "new violation: committed-offset-safety" in bad.stdout
    failed = [c for c in json.loads((out2 / "summary.json").read_text())["checks"] if not c["passed"]]
    assert failed and all(c["reports"] for c in failed)
    junit = ET.parse(out2 / "junit.xml").getroot()
    assert int(junit.get("failures")) == len(failed)

    upd = kv("baseline", "update", "--run", str(out2), "--file", str(base))
    assert upd.returncode == 0 and json.loads(base.read_text())["violations"]
    known = kv("verify", "--profile", "quick", "--seed", "1", "--out", str(out3), "--baseline", str(base),
               "--behaviour", "stale-generation-commit", *only)
    assert known.returncode == 0, known.stdout
    assert "known (baseline)" in known.stdout


def test_verify_usage_errors(tmp_path):
    r = kv("verify", "--profile", "nope")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = kv("verify", "--baseline", str(tmp_path / "missing.json"), "--only", "z3")
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = kv("verify", "--behaviour", "no-such-bug", "--only", "z3")
    assert r.returncode == 2 and "unknown behaviour" in r.stderr


def test_a_walk_that_never_reaches_a_sometimes_property_is_inconclusive(tmp_path, monkeypatch):
    """No vacuous pass: the walk check is INCONCLUSIVE, naming the property, when its runs never reach
    one, after stretching its counted run budget (the same count on every machine)."""
    from kverify.invariants.core import Sometimes
    from kverify.suite import Context, profiles
    from kverify.suite import providers as P
    from kverify.suite.verdicts import INCONCLUSIVE

    build = P._build

    def with_unreachable(ctx, name, walk=False):
        proto = build(ctx, name, walk)
        extra = Sometimes("generation-999", "the group reaches generation 999", lambda s: False)
        proto.sometimes = lambda: (*type(proto).sometimes(proto), extra)
        return proto

    monkeypatch.setattr(P, "_build", with_unreachable)
    small = profiles.Budget(explore_states=10, walk_total=100, walk_steps=30, walk_stretch=3, machine_examples=1,
                            machine_steps=1, examples=1)
    monkeypatch.setitem(profiles.BUDGETS, "quick", small)
    res = P._walk_check("group")(Context("quick", str(tmp_path), seed=1, progress=False))
    assert res.verdict == INCONCLUSIVE and not res.passed and "generation-999" in res.summary.split("never reached ")[1]
    assert 300 <= res.covered["steps"] < 330 and "generation-999" in res.cut
