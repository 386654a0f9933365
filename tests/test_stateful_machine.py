"""The Hypothesis driver draws only enabled actions, checks invariants after every step, shrinks to
the shortest failing trace, and is reproducible from its seed."""
import report_toy
from kverify.model.walk import replay
from stateful_tests_helper import run_toy


def test_finds_and_shrinks_violation():
    finding = run_toy(lossy=True, seed=7)
    assert finding is not None
    assert finding.violation.invariant == "no-gap"
    assert finding.trace == [("lose", "<script>alert(1)</script>", 0)]   # shrunk to one step
    proto = report_toy.make({"limit": 4, "lossy": True}, frozenset())
    _, v = replay(proto, finding.trace, finding.init_index)
    assert v is not None and v.invariant == "no-gap"


def test_no_false_alarm_on_correct_protocol():
    assert run_toy(lossy=False, seed=7) is None


def test_same_seed_same_finding():
    a, b = run_toy(lossy=True, seed=11), run_toy(lossy=True, seed=11)
    assert a.trace == b.trace and a.violation == b.violation


def test_failing_example_replays_from_the_database(tmp_path):
    """A failure is saved to the example database; the next run replays it first, even with a seed
    and an example budget that would not find it by generation alone."""
    from hypothesis import Phase

    from kverify.stateful_tests.machine import run_machine

    db = str(tmp_path / "db")
    proto = report_toy.make({"limit": 4, "lossy": True}, frozenset())
    first = run_machine("toy", {"lossy": True}, protocol=proto, seed=7, database=db)
    assert first is not None
    # reuse phase only: no generation, so only the saved example can fail
    again = run_machine("toy", {"lossy": True}, protocol=proto, seed=999, database=db,
                        phases=[Phase.reuse])
    assert again is not None and again.trace == first.trace
    import os
    assert any(files for _, _, files in os.walk(db))          # the example is on disk


# --- one rule per action name, deadlocks, crashes, `sometimes` across examples -------------------------
import verdict_toys  # noqa: E402
from kverify.model.actions import Action, ActionTable  # noqa: E402
from kverify.stateful_tests.machine import machine_for, run_machine_report  # noqa: E402


def _toy(**kw):
    params = {k: v[0] for k, v in verdict_toys.PARAMS.items()}
    params.update(kw)
    return verdict_toys.make(params, frozenset())


def _run(proto, seed=3, **kw):
    return run_machine_report("toy", protocol=proto, seed=seed, database=False, max_examples=30,
                              stateful_step_count=15, **kw)


def test_one_rule_per_action_name():
    assert machine_for("toy", protocol=_toy()).rule_names == ["inc", "skip", "other_action"]

    class Tabled(verdict_toys.Counter):
        action_table = ActionTable([
            Action("bump", lambda p, s: s < p.limit, lambda p, s: s + 1),
            Action("reset", lambda p, s: s > 0, lambda p, s: 0, fault=True),
        ])

        def actions(self, s):
            return self.action_table.enabled(self, s)

        def step(self, s, a):
            return self.action_table.step(self, s, a)

    params = {k: v[0] for k, v in verdict_toys.PARAMS.items()}
    proto = Tabled(params)
    machine = machine_for("tabled", protocol=proto)
    assert machine.rule_names == ["bump", "reset", "other_action"]
    assert {"rule_bump", "rule_reset"} <= set(dir(machine))
    run = _run(proto)
    assert run.finding is None and run.unreached == [] and run.rules == machine.rule_names


def test_a_deadlock_is_a_finding():
    run = _run(_toy(limit=2, stuck=True))
    assert run.finding is not None and run.finding.violation.invariant == "deadlock"
    assert run.finding.trace == [("inc", 1), ("inc", 1)]          # shrunk to the shortest way in


def test_a_raising_step_is_a_finding_with_its_trace():
    run = _run(_toy(limit=5, crash_at=1))
    v = run.finding.violation
    assert v.invariant == "exception" and v.message.startswith("ZeroDivisionError")
    assert run.finding.trace[0] == ("inc", 1) and len(run.finding.trace) == 2 == v.step_index


def test_sometimes_held_across_the_examples_of_a_run():
    ok = _run(_toy(limit=3))
    assert ok.finding is None and ok.reached == ["reaches-goal"] and ok.unreached == []
    assert ok.examples >= 1 and ok.steps > 0
    never = _run(_toy(limit=3, goal=7))
    assert never.finding is None and never.unreached == ["reaches-goal"]


def test_a_time_cap_stops_the_examples_and_says_so():
    import time

    run = _run(_toy(limit=3), stop_at=time.monotonic() - 1)
    assert run.cut == "max-seconds" and run.examples == 0 and run.finding is None
