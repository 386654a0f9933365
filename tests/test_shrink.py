"""Delta debugging of failing traces (model/shrink.py) on the toy counters protocol."""
import pytest

from kverify.model.shrink import DEADLOCK, ddmin, replays_to, shrink_trace
from kverify.model.walk import replay, walk
from kverify.spark.toy_counter import make
from kverify.invariants.core import Invariant
from kverify.model.protocol import Protocol


def test_ddmin_finds_the_two_needed_items():
    items = list(range(20))
    result, tests, finished = ddmin(items, lambda c: 3 in c and 17 in c)
    assert result == [3, 17]
    assert finished and tests > 0


def test_ddmin_respects_budget():
    result, tests, finished = ddmin(list(range(64)), lambda c: 5 in c, budget=3)
    assert tests == 3 and not finished
    assert 5 in result


def _failing_walk(protocol, invariant, longer_than=15):
    for seed in range(500):
        r = walk(protocol, seed, 200, record_trace=True)
        if r.violation and r.violation.invariant == invariant and r.violation.step_index > longer_than:
            return r
    raise AssertionError(f"no seed breaks {invariant}")


def test_shrunk_trace_is_minimal_and_breaks_the_same_invariant():
    p = make({"cap": 7})
    r = _failing_walk(p, "sum-within-cap")
    res = shrink_trace(p, r.trace, "sum-within-cap")
    # the total must reach 8 from 0: eight inc actions and nothing else is the only minimal form
    assert res.actions == [a for a in res.actions if a[0] == "inc"] and len(res.actions) == 8
    assert res.minimal and res.original_length == len(r.trace)
    _, v = replay(p, res.actions)
    assert v.invariant == "sum-within-cap" and v.step_index == 8 == res.violation.step_index
    for i in range(len(res.actions)):          # 1-minimal: no single action can go
        assert replays_to(p, res.actions[:i] + res.actions[i + 1:], 0, "sum-within-cap") is None


def test_step_invariant_shrinks_to_one_move():
    p = make({"leak": True})
    r = _failing_walk(p, "move-conserves-total", longer_than=3)
    res = shrink_trace(p, r.trace, "move-conserves-total")
    assert [a[0] for a in res.actions] == ["inc", "move"]
    assert res.violation.invariant == "move-conserves-total"


def test_non_executable_candidates_count_as_not_failing():
    p = make({"cap": 1})
    # dec(0) is not enabled from the all-zero state: the candidate is not failing, not an error
    assert replays_to(p, [("dec", 0), ("inc", 0), ("inc", 0)], 0, "sum-within-cap") is None
    assert replays_to(p, [("inc", 0), ("inc", 0)], 0, "sum-within-cap").step_index == 2
    res = shrink_trace(p, [("inc", 0), ("dec", 0), ("inc", 1), ("inc", 1)], "sum-within-cap")
    assert res.actions == [("inc", 1), ("inc", 1)]


def test_a_different_invariant_does_not_count():
    p = make({"cap": 2, "leak": True})
    # the leaky move breaks move-conserves-total first; asking for sum-within-cap must not accept it
    trace = [("inc", 0), ("move", 0, 1), ("inc", 2), ("inc", 2)]
    assert replays_to(p, trace, 0, "sum-within-cap") is None
    assert replays_to(p, trace, 0, "move-conserves-total") is not None
    with pytest.raises(ValueError, match="does not break"):
        shrink_trace(p, trace, "sum-within-cap")


class _Stuck(Protocol):
    """Counts up to 3 with `up`, or jumps to a dead end with `trap` (no actions, not terminal)."""

    def init_states(self):
        return [0]

    def actions(self, s):
        if s == "trap":
            return []
        return [("up",), ("trap",)] if s < 3 else [("trap",)]

    def step(self, s, a):
        return s + 1 if a[0] == "up" else "trap"

    def invariants(self):
        return (Invariant("small", "s < 10", lambda s: None),)

    def allows_terminal(self, s):
        return s != "trap"


def test_deadlock_shrinks_to_the_trap_alone():
    res = shrink_trace(_Stuck(), [("up",), ("up",), ("trap",)], DEADLOCK)
    assert res.actions == [("trap",)] and res.violation.invariant == DEADLOCK
