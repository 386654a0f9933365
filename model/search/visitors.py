"""What the search loop checks and records, as visitors (in the spirit of stateright's checker visitors).

Why it exists: the breadth-first loop (model/search/loop.py) only enumerates; every property it
checks and everything it records is a visitor, so the explorer, the TLA+ state comparison,
refinement's path search and the benchmarks share one loop and differ only in the visitors they
pass. A visitor overrides the hooks it needs; the loop looks up once per BFS level which hooks are
overridden (`HookTable`) and calls only those, so an unused hook costs nothing per state.

Hooks (all optional):
- `begin(run)`                            once, before the roots (`run`: model/search/loop.py `Run`)
- `on_new(idx, state, depth, src, action)`  every new distinct state, before it is checked, with the
                                          index of the state it was reached from and the action (-1, None: initial)
- `check_state(state, depth) -> V|None`   a Violation stops at the first one: the state is not expanded
- `on_admit(idx, state, depth)`           every state that passed the checks (it will be expanded)
- `check_step(prev, action, nxt, depth) -> V|None`   every transition; a Violation drops it
- `on_edge(src, action, dst)`             every transition kept (dst: the index, -1 when the store keeps none)
- `check_end(state) -> V|None`            a state in which no action is enabled
- `on_level(depth, admitted)`             after each level (`admitted`: states of depth `depth` to expand)
- `active()`                              False once the visitor needs nothing more (re-read per level)
- `end(run)`                              once, after the search

An exception raised inside a check is itself a finding (`exception`, see model/walk.py
`crash_violation`), never a crash of the search.
"""
from __future__ import annotations

from array import array
from typing import Optional

from kverify.invariants.core import Violation

DEADLOCK = "deadlock"
RECOVERABLE = "recoverable"        # name of the graph property (quiescent good state stays reachable)
HOOKS = ("on_new", "check_state", "on_admit", "check_step", "on_edge", "check_end", "on_level")


class Visitor:
    """Base class: every hook a no-op (see the module docstring)."""

    def begin(self, run) -> None:
        pass

    def active(self) -> bool:
        return True

    def end(self, run) -> None:
        pass


class HookTable:
    """Every hook of a visitor list, resolved once and again only when a visitor's `active()`
    changes (checked once per level): `table()` -> {hook name: tuple of bound hooks}."""

    __slots__ = ("visitors", "overrides", "flags", "hooks")

    def __init__(self, visitors):
        self.visitors = tuple(visitors)
        kinds = tuple(type(v) for v in self.visitors)
        overrides = _OVERRIDES.get(kinds)
        if overrides is None:           # {hook name: positions of the visitors overriding it}, per visitor types
            overrides = {name: tuple(i for i, k in enumerate(kinds) if getattr(k, name, None) is not None)
                         for name in HOOKS}
            overrides = _OVERRIDES[kinds] = {name: pos for name, pos in overrides.items() if pos}
        self.overrides = overrides
        self.flags = None
        self.hooks: dict = _NO_HOOKS

    def table(self) -> dict:
        vs = self.visitors
        flags = tuple(v.active() for v in vs)
        if flags != self.flags:
            self.flags = flags
            hooks = dict(_NO_HOOKS)
            for name, pos in self.overrides.items():
                hooks[name] = tuple(getattr(vs[i], name) for i in pos if flags[i])
            self.hooks = hooks
        return self.hooks


_OVERRIDES: dict = {}
_NO_HOOKS: dict = {name: () for name in HOOKS}


def crash(exc: BaseException, step_index: int = 0) -> Violation:
    from kverify.model.walk import crash_violation      # lazy: walk.py is the engine above this one

    return crash_violation(exc, step_index)


class StateInvariants(Visitor):
    """The protocol's state invariants on every new state (the first broken one is reported)."""

    def __init__(self, protocol):
        self.invariants = tuple(protocol.state_invariants)
        self.checks = tuple((inv.check, inv.name) for inv in self.invariants)

    def active(self) -> bool:
        return bool(self.invariants)

    def check_state(self, state, depth: int) -> Optional[Violation]:
        try:
            for check, name in self.checks:
                msg = check(state)
                if msg is not None:
                    return Violation(name, msg, depth)
        except Exception as exc:
            return crash(exc, depth)
        return None


class StepInvariants(Visitor):
    """The protocol's step invariants on every transition (before the successor is looked up)."""

    def __init__(self, protocol):
        self.invariants = tuple(protocol.step_invariants)
        self.checks = tuple((inv.check, inv.name) for inv in self.invariants)

    def active(self) -> bool:
        return bool(self.invariants)

    def check_step(self, prev, action, nxt, depth: int) -> Optional[Violation]:
        try:
            for check, name in self.checks:
                msg = check(prev, action, nxt)
                if msg is not None:
                    return Violation(name, msg, depth)
        except Exception as exc:
            return crash(exc, depth)
        return None


class Deadlock(Visitor):
    """A state without enabled actions that the protocol does not allow as an end state; counts them."""

    def __init__(self, protocol):
        self.allows_terminal = protocol.allows_terminal
        self.count = 0

    def check_end(self, state) -> Optional[Violation]:
        if self.allows_terminal(state):
            return None
        self.count += 1
        return Violation(DEADLOCK, "no action is enabled and the state is not an allowed end state", 0)


class SometimesTracker(Visitor):
    """Depth at which each `sometimes` property is first reached (None: never); inactive once all are."""

    def __init__(self, protocol):
        self.pending = list(protocol.sometimes())
        self.reached = {s.name: None for s in self.pending}

    def active(self) -> bool:
        return bool(self.pending)

    def on_admit(self, idx: int, state, depth: int) -> None:
        pending = self.pending
        if not pending:
            return
        hit = [q for q in pending if q.predicate(state)]
        for q in hit:
            self.reached[q.name] = depth
            pending.remove(q)


class DepthCounter(Visitor):
    """States per depth (the states of each level that were expanded or are to be)."""

    def __init__(self):
        self.per_depth: dict = {}

    def on_level(self, depth: int, admitted: int) -> None:
        if admitted or depth == 0:
            self.per_depth[depth] = admitted


class GraphBuilder(Visitor):
    """The state graph for the recoverability analysis (`recoverable`): per state whether it is
    quiescent and good, per edge its ends and whether it is a fault. Needs a store that keeps
    indices; gives up (and frees its arrays) once the graph has more than `limit` states."""

    def __init__(self, protocol, limit: int, keep_labels: bool = False):
        self.quiescent = protocol.is_quiescent_good
        self.is_fault = protocol.is_fault
        self.limit = limit
        self.src, self.dst, self.fault = array("i"), array("i"), array("b")
        self.good = array("b")
        self.labels: Optional[list] = [] if keep_labels else None
        self.dropped = False

    def active(self) -> bool:
        return not self.dropped

    def on_new(self, idx: int, state, depth: int, src: int, action) -> None:
        self.good.append(1 if self.quiescent(state) else 0)

    def on_edge(self, src: int, action, dst: int) -> None:
        self.src.append(src)
        self.dst.append(dst)
        self.fault.append(1 if self.is_fault(action) else 0)
        if self.labels is not None:
            from kverify.model.protocol import action_label

            self.labels.append(action_label(action))

    def on_level(self, depth: int, admitted: int) -> None:
        if len(self.good) > self.limit:
            self.drop()

    def drop(self) -> None:
        self.dropped = True
        del self.src[:], self.dst[:], self.fault[:], self.good[:]
        if self.labels is not None:
            self.labels.clear()

    def unrecoverable(self) -> list:
        """Indices of the states from which no quiescent good state is reachable along non-fault
        edges: a backward search from every good state over the reverse adjacency (two flat arrays)."""
        n = len(self.good)
        src, dst, fault, good = self.src, self.dst, self.fault, self.good
        start = array("i", bytes(4 * (n + 1)))          # predecessors of d: preds[start[d]:start[d + 1]]
        for d, f in zip(dst, fault):
            if not f:
                start[d + 1] += 1
        for i in range(n):
            start[i + 1] += start[i]
        fill = array("i", start[:n])
        preds = array("i", bytes(4 * start[n]))
        for a, d, f in zip(src, dst, fault):
            if not f:
                preds[fill[d]] = a
                fill[d] += 1
        ok = bytearray(good)
        stack = [i for i in range(n) if good[i]]
        while stack:
            d = stack.pop()
            for k in range(start[d], start[d + 1]):
                a = preds[k]
                if not ok[a]:
                    ok[a] = 1
                    stack.append(a)
        return [i for i in range(n) if not ok[i]]


class ActionNames(Visitor):
    """The names of every action taken (kverify/tla: the actions a model really has)."""

    def __init__(self):
        self.names: set = set()

    def on_edge(self, src: int, action, dst: int) -> None:
        self.names.add(action[0])


class StateCollector(Visitor):
    """`key(state) -> (depth, state)` of every state the search expands, first (shallowest) one kept."""

    def __init__(self, key=None):
        self.key = key
        self.states: dict = {}

    def on_admit(self, idx: int, state, depth: int) -> None:
        k = state if self.key is None else self.key(state)
        if k not in self.states:
            self.states[k] = (depth, state)


class Goal(Visitor):
    """Stops the search at the first new state for which `test(state)` holds; `found` = its index,
    `state` = the state."""

    def __init__(self, test):
        self.test = test
        self.found = -1
        self.state = None

    def on_admit(self, idx: int, state, depth: int) -> None:
        if self.found < 0 and self.test(state):
            self.found, self.state = idx, state
            self.run.stop("goal")

    def begin(self, run) -> None:
        self.run = run
