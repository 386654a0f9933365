"""Three verdicts a CI gate can trust, through the same code path as `kverify verify` (in-process, on
toy protocols registered for the test): PASS only when complete, INCONCLUSIVE when a budget cut a
check short, FAIL on a violation or a crash; exit codes 0 / 3 / 1 (--strict); identical verdict
lines and counts on a second run; a raising step is a FAIL with its trace and the run goes on."""
import json
import xml.etree.ElementTree as ET

import pytest

import verdict_toys
from kverify.cli import main
from kverify.suite import Check, CheckResult, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, INCONCLUSIVE, PASS, gate_verdict

TOYS = {"toy-ok": {}, "toy-crash": {"crash_at": "2"}, "toy-unreached": {"goal": "9"}, "toy-stuck": {"stuck": "true"}}
SMALL = profiles.Budget(explore_states=1000, walk_total=40, walk_steps=10, walk_stretch=2,
                        machine_examples=12, machine_steps=10, examples=1)


@pytest.fixture
def toy_suite(monkeypatch):
    """`kverify verify` planning explore/Hypothesis/walk checks of the toys, on small counted budgets."""
    for name in TOYS:
        verdict_toys.register(monkeypatch, name)
    monkeypatch.setattr(P, "MODELS", tuple(TOYS))
    monkeypatch.setattr(P, "WORLDS", tuple(TOYS))
    monkeypatch.setattr(P, "ALL", [P.explorer, P.stateful, P.random_runs])
    for prof in ("quick", "ci"):
        monkeypatch.setitem(profiles.PARAMS, prof, dict(TOYS))
        monkeypatch.setitem(profiles.BUDGETS, prof, profiles.Budget(**{**SMALL.__dict__,
                                                                       "strict": prof == "ci"}))


def _verify(capsys, out, *args):
    code = main(["verify", "--out", str(out), *args])
    printed = capsys.readouterr().out
    return code, printed, json.loads((out / "summary.json").read_text())


def _by_name(summary):
    return {c["name"]: c for c in summary["checks"]}


def test_three_verdicts_exit_codes_and_renderings(toy_suite, capsys, tmp_path):
    code, printed, summary = _verify(capsys, tmp_path / "a", "--only", "explore:toy-ok", "--only", "walk:toy-ok",
                                     "--only", "hypothesis:toy-ok")
    assert code == 0 and summary["verdict"] == PASS, printed
    assert all(c["verdict"] == PASS for c in summary["checks"])

    code, printed, summary = _verify(capsys, tmp_path / "b", "--only", "walk:toy-unreached", "--only",
                                     "hypothesis:toy-unreached", "--only", "walk:toy-ok")
    checks = _by_name(summary)
    assert code == 3 and summary["verdict"] == INCONCLUSIVE, printed
    assert checks["walk:toy-unreached"]["verdict"] == INCONCLUSIVE
    assert "never reached reaches-goal" in checks["walk:toy-unreached"]["summary"]
    assert checks["walk:toy-unreached"]["covered"]["steps"] >= SMALL.walk_total * SMALL.walk_stretch   # stretched
    assert checks["hypothesis:toy-unreached"]["verdict"] == INCONCLUSIVE
    assert "1 failed" not in printed and "2 inconclusive" in printed.splitlines()[-1]
    junit = ET.parse(tmp_path / "b" / "junit.xml").getroot()
    assert junit.get("failures") == "0" and junit.find(".//skipped") is None      # never hidden as a skip
    case = junit.find(".//testcase[@name='walk:toy-unreached']")
    assert case.find("properties/property[@name='verdict']").get("value") == INCONCLUSIVE
    assert case.find("system-out").text.startswith("INCONCLUSIVE")
    html = (tmp_path / "b" / "index.html").read_text()
    assert html.count("verdict-inconclusive") == 2 and html.count("verdict-pass") == 1

    # --strict (the ci default) turns the same inconclusive checks into a failing gate
    code, printed, summary = _verify(capsys, tmp_path / "c", "--profile", "ci", "--only", "walk:toy-unreached")
    assert code == 1 and summary["strict"] and summary["verdict"] == FAIL
    failure = ET.parse(tmp_path / "c" / "junit.xml").getroot().find(".//failure")
    assert failure is not None and failure.get("type") == "inconclusive"
    code, _, _ = _verify(capsys, tmp_path / "d", "--profile", "ci", "--no-strict", "--only", "walk:toy-unreached")
    assert code == 3

    # a complete exhaustive search that never reaches a `sometimes` property is a FAIL (vacuous)
    code, printed, summary = _verify(capsys, tmp_path / "e", "--only", "explore:toy-unreached")
    assert code == 1 and "vacuous" in _by_name(summary)["explore:toy-unreached"]["summary"]


def test_a_budget_cut_exploration_is_inconclusive(toy_suite, monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(profiles.PARAMS, "quick", {"toy-ok": {"limit": "5000"}})
    code, printed, summary = _verify(capsys, tmp_path, "--only", "explore:toy-ok")
    check = summary["checks"][0]
    assert code == 3 and check["verdict"] == INCONCLUSIVE, printed
    assert "cut by the state budget (1,000 states)" in check["summary"]
    assert check["covered"]["states"] == SMALL.explore_states and check["cut"]


def test_same_profile_twice_gives_identical_verdict_lines_and_counts(toy_suite, capsys, tmp_path):
    runs = []
    for out in (tmp_path / "one", tmp_path / "two"):
        code, printed, summary = _verify(capsys, out, "--only", "walk:", "--only", "hypothesis:")
        lines = [ln for ln in printed.splitlines() if ln.startswith("  ") and ln.split()[0] in (PASS, INCONCLUSIVE, FAIL)]
        runs.append((code, lines, [(c["name"], c["verdict"], c["covered"]) for c in summary["checks"]]))
        assert summary["seed"] == profiles.DEFAULT_SEED and f"--seed {profiles.DEFAULT_SEED}" in printed
    assert runs[0] == runs[1] and len(runs[0][1]) == 2 * len(TOYS)


def test_a_raising_step_is_a_failure_with_its_trace_and_the_run_goes_on(toy_suite, monkeypatch, capsys, tmp_path):
    def broken_provider(profile):
        def run(ctx):
            raise RuntimeError("a bug in the check itself")
        return [Check("broken:check", "test", run)]

    monkeypatch.setattr(P, "ALL", [broken_provider, P.explorer, P.stateful, P.random_runs])
    code, printed, summary = _verify(capsys, tmp_path, "--only", "broken", "--only", "explore:toy-crash",
                                     "--only", "walk:toy-crash", "--only", "hypothesis:toy-crash", "--only", "walk:toy-ok")
    checks = _by_name(summary)
    assert code == 1 and len(checks) == 5                      # every check ran and was recorded
    assert checks["walk:toy-ok"]["verdict"] == PASS
    broken = checks["broken:check"]
    assert broken["verdict"] == FAIL and "RuntimeError: a bug in the check itself" in broken["summary"]
    assert "Traceback" in broken["detail"]
    for name in ("explore:toy-crash", "walk:toy-crash", "hypothesis:toy-crash"):
        c = checks[name]
        assert c["verdict"] == FAIL and c["violations"][0]["invariant"] == "exception", c
        assert "ZeroDivisionError" in c["violations"][0]["message"]
    for name in ("walk:toy-crash", "hypothesis:toy-crash"):
        record = json.loads(open(checks[name]["reports"][0]).read())
        assert record["invariant"] == "exception" and "ZeroDivisionError" in record["violation"]
        last = record["trace"][-1]
        assert record["violation_step"] == last["index"] and "ZeroDivisionError" in last["state"]["exception"]
        assert last["action"][0] in ("inc", "skip") and record["trace"][-2]["state"] == {"counter": 2}
    code = main(["replay", checks["walk:toy-crash"]["reports"][0]])       # the crash replays from its record
    assert code == 1 and "reproduced" in capsys.readouterr().out
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert junit.get("tests") == "5" and junit.get("failures") == "4"
    assert "Traceback" in junit.find(".//testcase[@name='broken:check']/system-err").text


def test_gate_verdict_rules():
    def r(verdict, known=False):
        return CheckResult("c", "k", verdict, "s", known=known)

    assert gate_verdict([r(PASS), r(PASS)], strict=True) == PASS
    assert gate_verdict([r(PASS), r(INCONCLUSIVE)], strict=False) == INCONCLUSIVE
    assert gate_verdict([r(PASS), r(INCONCLUSIVE)], strict=True) == FAIL
    assert gate_verdict([r(INCONCLUSIVE), r(FAIL)], strict=False) == FAIL
    assert gate_verdict([r(FAIL, known=True), r(PASS)], strict=True) == PASS
    with pytest.raises(ValueError):
        r("MAYBE")


def test_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    text = capsys.readouterr().out
    assert "exit codes:" in text and "3  nothing failed, but a check was INCONCLUSIVE" in text and "--no-strict" in text


def test_an_interrupted_run_still_writes_its_reports(toy_suite, monkeypatch, capsys, tmp_path):
    def interrupting(profile):
        def run(ctx):
            raise KeyboardInterrupt
        return [Check("interrupt:me", "test", run)]

    monkeypatch.setattr(P, "ALL", [P.random_runs, interrupting, P.explorer])
    code = main(["verify", "--out", str(tmp_path), "--only", "walk:toy-ok", "--only", "interrupt", "--only",
                 "explore:toy-ok"])
    assert code == 130
    summary = json.loads((tmp_path / "summary.json").read_text())
    verdicts = {c["name"]: (c["verdict"], c["summary"]) for c in summary["checks"]}
    assert verdicts["walk:toy-ok"][0] == PASS
    assert verdicts["interrupt:me"] == (INCONCLUSIVE, "not run: interrupted") == verdicts["explore:toy-ok"]
    assert ET.parse(tmp_path / "junit.xml").getroot().get("tests") == "3"


def test_a_deadlock_fails_every_engine_with_a_replayable_report(toy_suite, capsys, tmp_path):
    code, printed, summary = _verify(capsys, tmp_path, "--only", "explore:toy-stuck", "--only", "walk:toy-stuck",
                                     "--only", "hypothesis:toy-stuck")
    assert code == 1
    for c in summary["checks"]:
        assert c["verdict"] == FAIL and c["violations"][0]["invariant"] == "deadlock", c
        assert main(["replay", c["reports"][0]]) == 1
    assert capsys.readouterr().out.count("reproduced") == 3


def test_checks_in_worker_processes_give_the_same_lines_and_counts(toy_suite, capsys, tmp_path):
    """`--jobs 2` runs checks in forked workers: the same verdicts, summaries, counts and line order as one
    process, a crash and a deadlock included; `--jobs 0` is one line and exit 2."""
    only = ["--only", "explore:", "--only", "walk:toy-ok", "--only", "walk:toy-crash", "--only", "hypothesis:toy-stuck"]
    runs = []
    for jobs in ("1", "2"):
        code, printed, summary = _verify(capsys, tmp_path / jobs, *only, "--jobs", jobs)
        lines = [ln for ln in printed.splitlines() if ln.split()[:1] in (["PASS"], ["FAIL"], ["INCONCLUSIVE"])]
        runs.append((code, lines, [(c["name"], c["verdict"], c["summary"], c["covered"]) for c in summary["checks"]]))
    assert runs[0] == runs[1]
    assert runs[0][0] == 1 and len(runs[0][1]) == len(TOYS) + 3
    assert main(["verify", "--out", str(tmp_path / "0"), "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
