"""The BFS explorer on small hand-made protocols: shortest traces, deadlocks, vacuity, bounds,
symmetry, recoverability, DOT export and the compact per-state storage."""
import tracemalloc

from kverify.invariants.core import Invariant, Sometimes
from kverify.model.explore import (DEADLOCK, RECOVERABLE, Explorer, can_recover, explore)
from kverify.model.protocol import Protocol


class Counter(Protocol):
    """x starts at 0; actions add 1 or 2 up to `top`; optional bad value and step rule."""

    name = "counter"

    def __init__(self, top=10, bad=None, jump_bad=False, terminal_ok=True, goal=None):
        self.top, self.bad, self.jump_bad, self.terminal_ok, self.goal = top, bad, jump_bad, terminal_ok, goal

    def init_states(self):
        return [0]

    def actions(self, s):
        return [("add", k) for k in (1, 2) if s + k <= self.top]

    def step(self, s, a):
        return s + a[1]

    def invariants(self):
        out = []
        if self.bad is not None:
            out.append(Invariant("not-bad", "x never equals bad", lambda s: f"x={s}" if s == self.bad else None))
        if self.jump_bad:
            out.append(Invariant("no-jump-from-3", "never add 2 at 3",
                                 lambda a, act, b: "jumped" if a == 3 and act == ("add", 2) else None, "step"))
        return out

    def sometimes(self):
        if self.goal is None:
            return ()
        return (Sometimes("reach-goal", "x reaches goal", lambda s: s == self.goal),)

    def allows_terminal(self, s):
        return self.terminal_ok


def test_state_violation_comes_back_with_the_shortest_trace():
    res = explore(Counter(top=20, bad=7), graph=False)
    (f,) = res.violations
    assert f.invariant == "not-bad"
    assert len(f.actions) == 4                      # 2+2+2+1: no shorter path reaches 7
    assert sum(a[1] for a in f.actions) == 7
    assert f.violation.step_index == 4


def test_step_violation_trace_ends_with_the_bad_action():
    res = explore(Counter(top=10, jump_bad=True), graph=False)
    (f,) = res.violations
    assert f.invariant == "no-jump-from-3"
    assert f.actions[-1] == ("add", 2)
    assert sum(a[1] for a in f.actions[:-1]) == 3
    assert len(f.actions) == 3                      # 2+1 then the jump


def test_correct_protocol_is_complete_with_exact_counts():
    res = explore(Counter(top=10), graph=False)
    assert res.complete and res.ok and not res.violations
    assert res.distinct_states == 11
    assert res.transitions == 19                    # 10 (+1) edges and 9 (+2) edges
    assert res.max_depth == 5                       # BFS levels: 0 -> 2 -> 4 -> ... -> 10


def test_deadlock_is_reported_when_terminal_states_are_not_allowed():
    res = explore(Counter(top=5, terminal_ok=False), graph=False)
    assert [f.invariant for f in res.violations] == [DEADLOCK]
    assert sum(a[1] for a in res.violations[0].actions) == 5
    assert res.deadlocks == 1
    assert explore(Counter(top=5, terminal_ok=True), graph=False).ok


def test_unreached_sometimes_makes_a_complete_run_vacuous():
    res = explore(Counter(top=5, goal=99), graph=False)
    assert res.complete and res.vacuous == ["reach-goal"] and not res.ok
    res = explore(Counter(top=5, goal=4), graph=False)
    assert res.ok and res.sometimes == {"reach-goal": 2}


def test_bounds_stop_cleanly_with_partial_statistics():
    res = explore(Counter(top=100_000), graph=False, max_states=50)
    assert not res.complete and res.stopped == "max-states" and res.distinct_states == 50
    assert res.vacuous == []                        # a partial run never claims vacuity
    res = explore(Counter(top=10_000_000), graph=False, max_seconds=0.2)
    assert not res.complete and res.stopped == "max-seconds" and res.distinct_states > 0


def test_stop_on_first():
    res = explore(Counter(top=50, bad=7, jump_bad=True), graph=False, stop_on_first=True)
    assert res.stopped == "violation" and len(res.violations) == 1


def test_progress_line_reports_states_distinct_depth_rate():
    lines = []
    explore(Counter(top=5000), graph=False, progress=lines.append, progress_every=0.0)
    assert lines and all(("distinct" in x and "depth" in x and "/s" in x) for x in lines)


class Pairs(Protocol):
    """Two interchangeable tokens, each 0..3; canonical form sorts them (symmetry)."""

    name = "pairs"

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        return [("inc", i) for i in range(2) if s[i] < 3]

    def step(self, s, a):
        t = list(s)
        t[a[1]] += 1
        return tuple(t)

    def canonical(self, s):
        return tuple(sorted(s))


def test_symmetry_reduction_merges_permuted_states():
    assert explore(Pairs(), symmetry=False, graph=False).distinct_states == 16
    assert explore(Pairs(), symmetry=True, graph=False).distinct_states == 10


class Trap(Protocol):
    """0 -> 1 (good) and a fault 0 -> 2; 2 can only loop (unless `exit`), so it cannot recover."""

    name = "trap"

    def __init__(self, exit=False):
        self.exit = exit

    def init_states(self):
        return [0]

    def actions(self, s):
        if s == 0:
            return [("ok",), ("fault",)]
        if s == 2:
            return [("spin",)] + ([("repair",)] if self.exit else [])
        return []

    def step(self, s, a):
        return {"ok": 1, "fault": 2, "spin": 2, "repair": 1}[a[0]]

    def is_fault(self, a):
        return a[0] == "fault"

    def is_quiescent_good(self, s):
        return s == 1


def test_recoverability_finds_the_trap_and_passes_without_it(tmp_path):
    res = explore(Trap())
    assert [f.invariant for f in res.violations] == [RECOVERABLE]
    assert res.violations[0].actions == [("fault",)]
    assert res.graph.analysed and res.graph.unrecoverable == 1 and res.graph.fault_edges == 1
    assert can_recover(Trap(), 2) is False and can_recover(Trap(exit=True), 2) is True
    ex = Explorer(Trap(exit=True), keep_edge_labels=True)
    res = ex.run()
    assert res.ok and res.graph.unrecoverable == 0
    path = tmp_path / "g.dot"
    assert ex.write_dot(str(path)) == 3
    text = path.read_text()
    assert text.startswith("digraph trap {") and "fault()" in text and "style=dashed" in text
    assert text.count("->") == res.transitions


def test_graph_is_dropped_past_its_limit():
    res = explore(Counter(top=200), graph_limit=50)
    assert res.complete and res.graph is not None and not res.graph.analysed
    assert "more than 50" in res.graph.note


def test_traces_are_rebuilt_by_re_execution():
    ex = Explorer(Counter(top=30), graph=False)
    ex.run()
    for idx in (0, 5, 17, len(ex.parent) - 1):
        init, actions, state = ex.trace_to(idx)
        assert init == 0 and state == sum(a[1] for a in actions)
        assert len(actions) == (state + 1) // 2     # BFS: the shortest path to every state


class Grid(Protocol):
    """A wide 2-D grid: many distinct states, a frontier much smaller than the visited set."""

    name = "grid"

    def __init__(self, n):
        self.n = n

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        return [("r",)] * (s[0] < self.n) + [("u",)] * (s[1] < self.n)

    def step(self, s, a):
        return (s[0] + 1, s[1]) if a[0] == "r" else (s[0], s[1] + 1)


def test_per_state_memory_is_compact():
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        res = explore(Grid(119), graph=False)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert res.distinct_states == 120 * 120
    assert peak / res.distinct_states < 100, peak / res.distinct_states


def test_fingerprint_set_keeps_every_distinct_value_through_growth():
    from kverify.model.explore import FingerprintSet

    fs = FingerprintSet(16)
    values = [0, 1, -1, 2**63 - 1, -(2**63), 2**64 + 5] + [hash((i, "x")) for i in range(5000)]
    for v in values:
        assert fs.add(v)
        assert not fs.add(v)
    assert len(fs) == len(values) and all(v in fs for v in values)
    assert 7 not in fs or 7 in values


class Glitchy(Protocol):
    """(x, faults): `inc` adds 1 up to `top`; fault actions spend the budget: `blip` changes nothing
    else (the pause-and-resume twin), `jump` adds 3. Good states: x == top. Offers subsumption on the
    fault budget when `subsume`."""

    name = "glitchy"

    def __init__(self, top=9, faults=2, bad=None, subsume=True, jumps=True):
        self.top, self.faults, self.bad, self.subsume, self.jumps = top, faults, bad, subsume, jumps

    def init_states(self):
        return [(0, self.faults)]

    def actions(self, s):
        x, f = s
        out = [("inc",)] if x < self.top else []
        if f:
            out.append(("blip",))
            if self.jumps and x + 3 <= self.top:
                out.append(("jump",))
        return out

    def step(self, s, a):
        x, f = s
        return (x + 1, f) if a[0] == "inc" else (x, f - 1) if a[0] == "blip" else (x + 3, f - 1)

    def invariants(self):
        if self.bad is None:
            return ()
        return (Invariant("not-bad", "x never equals bad", lambda s: f"x={s[0]}" if s[0] == self.bad else None),)

    def is_fault(self, a):
        return a[0] != "inc"

    def is_quiescent_good(self, s):
        return s[0] == self.top

    def subsumption(self, s):
        return (s[0], (s[1],)) if self.subsume else Protocol.subsumption(self, s)


def test_subsumption_skips_states_with_smaller_fault_budgets_and_keeps_every_verdict():
    full = explore(Glitchy(subsume=False))            # not offered: every (x, budget) pair
    reduced = explore(Glitchy())
    off = explore(Glitchy(), symmetry=False)          # reductions off: the plain fingerprint again
    assert full.complete and reduced.complete and full.ok and reduced.ok
    assert full.distinct_states == 10 * 3 and off.distinct_states == 30
    assert 10 <= reduced.distinct_states < 30         # a jump may reach (x, 1) before inc does (x, 2)
    # blips only: (x, f) is never expanded since (x, 2), reached without faults, comes first
    assert explore(Glitchy(jumps=False)).distinct_states == 10
    assert explore(Glitchy(jumps=False, subsume=False)).distinct_states == 30
    for res in (full, reduced):
        assert res.graph.analysed and res.graph.unrecoverable == 0 and res.graph.fault_edges > 0
    bad_full, bad_reduced = explore(Glitchy(bad=6, subsume=False)), explore(Glitchy(bad=6))
    assert [f.invariant for f in bad_reduced.violations] == ["not-bad"]
    # the shortest trace is kept: 0 -jump-> 3 -jump-> 6 with the budget of 2
    assert len(bad_reduced.violations[0].actions) == len(bad_full.violations[0].actions) == 2


def test_subsumption_table_keeps_only_maximal_budgets():
    from kverify.model.explore import Subsumption

    t = Subsumption()
    assert t.find_or_add(7, (1, 0), 0) == -1
    assert t.find_or_add(7, (0, 1), 1) == -1          # incomparable: both kept
    assert t.find_or_add(7, (0, 0), 2) == 0           # below the first one found
    assert t.find_or_add(7, (1, 1), 3) == -1          # above both: they are dropped
    assert t.find_or_add(7, (1, 0), 4) == 3 and t.find_or_add(7, (0, 1), 5) == 3
    assert t.find_or_add(8, (0, 0), 6) == -1 and len(t) == 2


def test_subsumption_table_survives_growth_and_unpackable_budgets():
    from kverify.model.explore import Subsumption

    t = Subsumption(16)
    for i in range(3000):
        assert t.find_or_add(hash(("c", i)), (i % 3, 1), i) == -1
    assert all(t.find_or_add(hash(("c", i)), (0, 0), 10**6) == i for i in range(3000))
    assert t.find_or_add(0, (300, 1, 2, 3), 5) == -1          # does not pack: kept aside
    assert t.find_or_add(0, (299, 1, 2, 3), 6) == 5
    assert len(t) >= 3000
