"""The one BFS loop (model/search/): exceptions as findings, verdict facts of a cut search, the storage
modes agreeing, the per-state expansion a worker reuses, and the loop's other users (recovery, refinement
paths, the TLA+ action names) on hand-made spaces."""
import pytest

from kverify.invariants.core import Invariant, Sometimes
from kverify.model.explore import Explorer, can_recover, explore
from kverify.model.protocol import Protocol
from kverify.model.search import (ActionNames, ExactStore, FingerprintStore, Goal, IndexedStore, StateCollector,
                                  checks, expand_one, search)
from kverify.model.walk import EXCEPTION, replay


class Grid(Protocol):
    """(x, y) on a grid up to `top`; moves right or up. Optional crashes: `step` at `boom_at`, `actions` at
    `stuck_at`, the invariant at `bad_check_at`."""

    name = "grid"

    def __init__(self, top=4, boom_at=None, stuck_at=None, bad_check_at=None, goal=None):
        self.top, self.boom_at, self.stuck_at, self.bad_check_at, self.goal = top, boom_at, stuck_at, bad_check_at, goal

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        if s == self.stuck_at:
            raise KeyError("no such member m7")
        return [(d,) for d in ("right", "up") if (s[0] if d == "right" else s[1]) < self.top]

    def step(self, s, a):
        if s == self.boom_at and a == ("up",):
            raise ZeroDivisionError("division by zero in the rebalance")
        return (s[0] + 1, s[1]) if a == ("right",) else (s[0], s[1] + 1)

    def invariants(self):
        def check(s):
            if s == self.bad_check_at:
                raise IndexError("tuple index out of range")
            return None
        return (Invariant("sane", "the check itself never fails", check),)

    def sometimes(self):
        return (Sometimes("corner", "the far corner is reached", lambda s: s == (self.top, self.top)),)


def test_an_exception_in_step_is_a_finding_with_a_replayable_trace_and_the_search_goes_on():
    p = Grid(boom_at=(1, 1))
    res = explore(p, graph=False)
    (f,) = res.violations
    assert f.invariant == EXCEPTION
    assert "ZeroDivisionError: division by zero in the rebalance" in f.violation.message
    assert f.actions[-1] == ("up",) and len(f.actions) == 3          # shortest path to (1, 1), then the raising step
    assert f.violation.step_index == 3
    assert res.complete and res.distinct_states == 25                 # every other transition still explored
    _states, v = replay(p, f.actions, f.init_index)                  # the record's replay raises the same way
    assert v is not None and v.invariant == EXCEPTION and "ZeroDivisionError" in v.message


def test_an_exception_in_actions_or_an_invariant_is_a_finding_at_that_state():
    res = explore(Grid(stuck_at=(2, 0)), graph=False)
    (f,) = res.violations
    assert f.invariant == EXCEPTION and "KeyError" in f.violation.message and "m7" in f.violation.message
    assert f.actions == [("right",), ("right",)]
    res = explore(Grid(bad_check_at=(0, 2)), graph=False)
    (f,) = res.violations
    assert f.invariant == EXCEPTION and "IndexError: tuple index out of range" in f.violation.message
    assert f.actions == [("up",), ("up",)]
    assert res.complete and res.vacuous == []


def test_a_cut_search_says_what_cut_it_and_what_it_covered():
    full = explore(Grid(top=6), graph=False)
    assert full.complete and full.stopped == "" and full.covered_depth == full.max_depth == 12
    assert full.unexpanded == 0 and full.expanded == 49
    assert full.coverage.startswith("complete: 49 states")
    cut = explore(Grid(top=6), graph=False, max_states=12)
    assert not cut.complete and cut.stopped == "max-states" and cut.distinct_states == 12
    # depths 0..3 hold 1+2+3+4 = 10 states: all found; depth 4 only partly
    assert cut.covered_depth == 3 and cut.unexpanded > 0
    assert "partial (max-states)" in cut.coverage and "within depth 3" in cut.coverage
    first = explore(Grid(top=6, boom_at=(0, 0)), graph=False, stop_on_first=True)
    assert first.stopped == "violation" and not first.complete and first.violations[0].invariant == EXCEPTION
    assert first.vacuous == []                                           # a partial run claims nothing vacuous


def test_storage_modes_find_the_same_states():
    p = Grid(top=5)
    counts = set()
    for store in (FingerprintStore(hash), IndexedStore(hash), ExactStore()):
        run = search(p, store, checks(p))
        counts.add((len(run.parent), run.transitions, run.depth))
    assert counts == {(36, 60, 10)}


def test_expand_one_is_the_loops_expansion():
    p = Grid(top=3, boom_at=(1, 0))
    exp = expand_one(p, checks(p), (1, 0), depth=2)
    assert [(k, a, t) for k, a, t in exp.successors] == [(0, ("right",), (2, 0))]
    ((action, v),) = exp.findings
    assert action == ("up",) and v.invariant == EXCEPTION
    assert exp.transitions == 2
    corner = expand_one(p, checks(p), (3, 3), depth=7)                 # no action: an allowed end state here
    assert corner.successors == [] and corner.findings == [] and corner.transitions == 0


def test_visitors_collect_names_and_states_and_a_goal_stops_the_loop():
    p = Grid(top=2)
    names, states = ActionNames(), StateCollector()
    run = search(p, ExactStore(), [names, states])
    assert names.names == {"right", "up"} and len(states.states) == 9 and states.states[(2, 2)][0] == 4
    goal = Goal(lambda s: s == (1, 1))
    run = search(p, ExactStore(), [goal])
    assert run.stopped == "goal" and run.trace_to(goal.found)[2] == (1, 1)


def test_recovery_search_uses_the_loop():
    p = Grid(top=3)
    p.is_quiescent_good = lambda s: s == (3, 3)
    assert can_recover(p, (0, 0)) is True
    p.is_quiescent_good = lambda s: False
    assert can_recover(p, (0, 0)) is False
    assert can_recover(p, (0, 0), limit=3) is None


def test_explorer_keeps_its_trace_helpers():
    ex = Explorer(Grid(top=3), graph=False)
    res = ex.run()
    assert res.complete and len(ex.parent) == 16
    init, actions, state = ex.trace_to(15)
    assert init == 0 and state == (3, 3) and len(actions) == 6


@pytest.mark.parametrize("graph", [False, True])
def test_graph_mode_gives_the_same_answers(graph):
    res = explore(Grid(top=4), graph=graph)
    assert res.distinct_states == 25 and res.transitions == 40 and res.ok
    assert (res.graph is not None) == graph


class _NoStart(Grid):
    def init_states(self):
        raise RuntimeError("no coordinator for group g")


def test_an_exception_in_init_states_is_a_finding_not_a_crash():
    res = explore(_NoStart(), graph=False)
    (f,) = res.violations
    assert f.invariant == EXCEPTION and "RuntimeError: no coordinator for group g" in f.violation.message
    assert f.actions == [] and res.distinct_states == 0


def test_a_factory_world_is_parsed_by_the_same_spec_rules():
    from kverify.spark.world import WorldError, resolve

    ws = resolve("kverify.spark.toy_counter:make", {"cap": "5"})
    assert dict(ws.params)["cap"] == 5 and dict(ws.params)["counters"] == 3
    with pytest.raises(WorldError, match="cap='x' is not a valid int"):
        resolve("kverify.spark.toy_counter:make", {"cap": "x"})


def test_a_time_cut_counts_what_was_expanded_and_what_was_left():
    # the clock is read every 1024 expansions: with a deadline already past, the cut comes there
    res = explore(Grid(top=40), graph=False, max_seconds=1e-9)
    assert res.stopped == "max-seconds" and not res.complete and res.expanded == 1023
    assert res.expanded + res.unexpanded == res.distinct_states
    assert res.covered_depth == res.max_depth - 1


def test_the_cyclic_collector_pauses_during_the_loop_and_comes_back_as_it_was():
    import gc

    from kverify.model.search.visitors import Visitor

    class Seen(Visitor):
        def __init__(self):
            self.during = set()

        def on_level(self, depth, admitted):
            self.during.add(gc.isenabled())

    was = gc.isenabled()
    try:
        for before in (True, False):
            (gc.enable if before else gc.disable)()
            seen = Seen()
            search(Grid(), FingerprintStore(hash), [seen])
            assert seen.during == {False}
            assert gc.isenabled() is before
    finally:
        (gc.enable if was else gc.disable)()
