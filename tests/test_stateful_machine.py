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
