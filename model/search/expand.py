"""The expansion of one state: actions, successors, step checks, seen test, new-state checks, deadlock.

Why it exists: this is the unit of work of every breadth-first engine. The in-process loop
(model/search/loop.py) calls it for each state of a level; a worker process or a Spark executor
(issue 18) calls the same code on the states it owns, given only the transition system, the
visitors (the checks) and a store, through `expand_one`. Written once, so a rule of the search
(what is a finding, what is new, what is a deadlock) cannot differ between engines.

`Expander(space, visitors).bind(run, depth, next_states, next_indices)` returns a closure
`expand(state, idx) -> transitions` for the level that produces states of depth `depth`; the
closure keeps everything it reads in closure cells (no attribute lookups per successor). For each
enabled action, in `actions()` order: the successor, the step checks (a violation drops the
transition), the store's seen test, the edge hooks, and for a new state the tree entry (parent
index, action index), the new-state hooks, the state checks (a violation: not expanded), the
admission hooks and the next level. An exception raised by `actions`, `step`, a fingerprint or a
visitor is a finding named `exception` at that transition; the other actions go on.
"""
from __future__ import annotations

from typing import NamedTuple

from kverify.model.search.visitors import HookTable, crash

MAX_ACTIONS = 65535                 # the action index of a state is kept in 2 bytes


class Expander:
    """Binds the one per-state expansion to a space, its visitors and a run (see the module docstring)."""

    __slots__ = ("space", "hooks")

    def __init__(self, space, visitors):
        self.space = space
        self.hooks = visitors if isinstance(visitors, HookTable) else HookTable(visitors)

    def bind(self, run, depth: int, next_states: list, next_indices):
        h = self.hooks.table()
        on_new, check_state, on_admit = h["on_new"], h["check_state"], h["on_admit"]
        check_step, on_edge, check_end = h["check_step"], h["on_edge"], h["check_end"]
        actions_of, step = self.space.actions, self.space.step
        key, visit = run.store.key, run.store.visit
        parent, via = run.parent, run.via
        p_append, v_append = parent.append, via.append
        n_append, i_append = next_states.append, next_indices.append
        note = run.note
        limit = run.max_states if run.max_states is not None else 1 << 62

        def expand(s, idx: int) -> int:
            try:
                acts = actions_of(s)
                if acts.__class__ is not list:     # (a generator, a tuple: indexed and counted below)
                    acts = list(acts)
            except Exception as exc:
                note(idx, None, crash(exc))
                return 0
            if not acts:
                for f in check_end:
                    v = f(s)
                    if v is not None:
                        note(idx, None, v)
                        break
                return 0
            if len(acts) > MAX_ACTIONS:
                raise ValueError(f"{getattr(self.space, 'name', 'model')}: more than {MAX_ACTIONS} actions in one state")
            n = len(parent)
            k = -1
            for a in acts:
                k += 1
                try:
                    t = step(s, a)
                    if check_step:
                        v = None
                        for f in check_step:
                            v = f(s, a, t, depth)
                            if v is not None:
                                break
                        if v is not None:
                            note(idx, a, v)
                            continue
                    r = visit(key(t), n)
                    if on_edge:
                        for f in on_edge:
                            f(idx, a, r)
                    if r != n:
                        continue
                    p_append(idx)
                    v_append(k)
                    n += 1
                    if on_new:
                        for f in on_new:
                            f(r, t, depth, idx, a)
                    if check_state:
                        v = None
                        for f in check_state:
                            v = f(t, depth)
                            if v is not None:
                                break
                        if v is not None:
                            note(r, None, v)
                            continue
                    n_append(t)
                    i_append(r)
                    if on_admit:
                        for f in on_admit:
                            f(r, t, depth)
                        if run.stopped:                 # a visitor's goal was reached
                            return k + 1
                    if n >= limit:
                        run.stop("max-states")
                        return k + 1
                except Exception as exc:
                    note(idx, a, crash(exc, depth))
            return k + 1

        return expand

    def root(self, run, next_states: list, next_indices):
        """`admit(state, init_index)` for the initial states (depth 0; no edge, no step check)."""
        h = self.hooks.table()
        on_new, check_state, on_admit = h["on_new"], h["check_state"], h["on_admit"]
        key, visit = run.store.key, run.store.visit

        def admit(s, i: int) -> None:
            n = len(run.parent)
            try:
                if visit(key(s), n) != n:
                    return
                run.parent.append(-1)
                run.via.append(i)
                for f in on_new:
                    f(n, s, 0, -1, None)
                for f in check_state:
                    v = f(s, 0)
                    if v is not None:
                        run.note(n, None, v)
                        return
                for f in on_admit:
                    f(n, s, 0)
            except Exception as exc:
                run.note(n if len(run.parent) > n else None, None, crash(exc))
                return
            next_states.append(s)
            next_indices.append(n)

        return admit


class Expansion(NamedTuple):
    """What `expand_one` found for one state: `successors` [(action index, action, state)] that
    passed the step checks and the state checks, `findings` [(action or None, Violation)] (None: the
    state itself; an action: that transition or its successor), and the transitions taken."""

    successors: list
    findings: list
    transitions: int


class _Local:
    """A run of one state: every successor is new (a worker's own store decides later)."""

    def __init__(self, store, max_states=None):
        from array import array

        self.store = store
        self.parent, self.via = array("q", [-1]), array("q", [0])
        self.max_states = max_states
        self.stopped = ""
        self.found: list = []

    def note(self, idx, action, violation) -> None:
        self.found.append((idx, action, violation))

    def stop(self, reason: str) -> None:
        self.stopped = reason


class _NoStore:
    key = staticmethod(lambda s: None)

    @staticmethod
    def visit(_key, j: int) -> int:
        return j


def expand_one(space, visitors, state, depth: int, store=None) -> Expansion:
    """Expand one state of depth `depth - 1` outside any loop (a worker, an executor): the same
    closure the in-process loop runs. With `store=None` every successor counts as new (the caller
    deduplicates, e.g. after a shuffle by fingerprint); pass a store to deduplicate locally."""
    run = _Local(store or _NoStore())
    nxt, nxt_idx = [], []
    steps = Expander(space, visitors).bind(run, depth, nxt, nxt_idx)(state, 0)
    acts = list(space.actions(state)) if (nxt or run.found) and steps else []
    via = run.via
    successors = [(via[j], acts[via[j]], t) for t, j in zip(nxt, nxt_idx)]
    findings = [(action if idx in (0, None) else acts[via[idx]], v) for idx, action, v in run.found]
    return Expansion(successors, findings, steps)
