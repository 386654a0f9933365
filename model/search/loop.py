"""The one breadth-first search loop of kverify.

Why it exists: the explorer, refinement's path search, the TLA+ state comparison, the recovery
check of a replayed trace and the benchmarks all enumerate states level by level; they share this
loop and differ only in the store (model/search/storage.py) and the visitors
(model/search/visitors.py) they pass. The expansion of one state is model/search/expand.py's.

Memory layout: per distinct state only two compact array entries, the index of its parent and
the index of the action (in the parent's `actions()` order) that produced it, plus what the store
keeps (8 bytes for fingerprints). Whole states live only in the BFS frontier (the level being
expanded, released state by state, and the next one). A trace is rebuilt by re-executing the
recorded action indices from the initial state, which is why `actions()` must yield in a
deterministic order. BFS discovers every state at its minimal depth, so every trace is a shortest
one (a step finding: shortest path to the source state plus the step).

`space` is anything with `init_states()`, `actions(state)` and `step(state, action)` (a Protocol,
or a small adapter such as a fault-free view of one).

Garbage collection: states, views and action tuples are acyclic and freed by reference counting;
the cyclic collector, triggered by their sheer number, would walk the growing frontier again and
again and find nothing (10-15% of a replication run's CPU). `run` pauses it for the loop and resumes
it afterwards (unless it was off already, e.g. in a search nested in another).

Verdict facts (issue 17): `Run.complete` is True only when every admitted state was expanded;
otherwise `stopped` names the cut (`max-states`, `max-seconds`, `violation` for stop-on-first, or a
visitor's reason such as `goal`), and `covered_depth` is the depth up to which every state was
found and checked (the levels before the cut), `expanded` / `unexpanded` count the states expanded
and the admitted ones left.
"""
from __future__ import annotations

import gc
import time
from array import array
from typing import Callable, Optional

from kverify.model.search.expand import Expander
from kverify.model.search.visitors import HookTable



def follow_indices(space, init: int, steps) -> tuple[list, object]:
    """(actions, state) reached from initial state `init` by taking, at each step, the action at that index
    of `space.actions(state)`: how a path kept as indices becomes a trace again."""
    state = space.init_states()[init]
    actions = []
    for k in steps:
        a = list(space.actions(state))[k]
        actions.append(a)
        state = space.step(state, a)
    return actions, state


class Run:
    """One search: its store, the BFS tree (parent/action index per state), its findings (the first
    per property name) and the counters; `run()` does the search."""

    def __init__(self, space, store, visitors=(), *, max_states: Optional[int] = None,
                 max_seconds: Optional[float] = None, stop_on_first: bool = False,
                 progress: Optional[Callable[[str], None]] = None, progress_every: float = 2.0,
                 shrink_store_at: Optional[int] = None):
        self.space = space
        self.store = store
        self.visitors = tuple(visitors)
        self.max_states = max_states
        self.max_seconds = max_seconds
        self.stop_on_first = stop_on_first
        self.progress = progress
        self.progress_every = progress_every
        self.shrink_store_at = shrink_store_at      # store.shrink() once more states than this (graph limit)
        self.parent = array("i")            # parent index, -1 for initial states
        self.via = array("H")               # action index in the parent's actions() (init index for roots)
        self.found: dict = {}               # property name -> (state index or None, extra action or None, Violation)
        self.stopped = ""
        self.complete = False
        self.transitions = 0
        self.expanded = 0
        self.unexpanded = 0
        self.depth = 0                      # deepest level with a state admitted
        self.covered_depth = 0
        self.seconds = 0.0

    # --- what visitors and the expansion call ----------------------------------------------------
    def note(self, idx, action, violation) -> None:
        """A finding at state `idx` (plus the step `action` when it is a step's); the first per name is kept."""
        if violation.invariant not in self.found:
            self.found[violation.invariant] = (idx, action, violation)

    def stop(self, reason: str) -> None:
        if not self.stopped:
            self.stopped = reason

    def __len__(self) -> int:
        return len(self.parent)

    # --- traces ---------------------------------------------------------------------------------
    def path_indices(self, idx: int) -> tuple[int, list]:
        """(init index, action indices) of the BFS-tree path to state `idx`."""
        steps = []
        parent, via = self.parent, self.via
        while parent[idx] >= 0:
            steps.append(via[idx])
            idx = parent[idx]
        steps.reverse()
        return via[idx], steps

    def trace_to(self, idx: int) -> tuple[int, list, object]:
        """(init index, actions, state) reached by re-executing the path to `idx`."""
        space = self.space
        init, steps = self.path_indices(idx)
        actions, state = follow_indices(space, init, steps)
        return init, actions, state

    def traces(self) -> list:
        """[(Violation with its step index = trace length, init index, actions)] for the findings,
        shortest trace first, then by name."""
        from kverify.invariants.core import Violation

        out = []
        for name, (idx, action, v) in self.found.items():
            init, acts = (0, []) if idx is None else self.trace_to(idx)[:2]
            if action is not None:
                acts = acts + [action]
            out.append((Violation(name, v.message, len(acts)), init, acts))
        out.sort(key=lambda f: (len(f[2]), f[0].invariant))
        return out

    # --- the loop -------------------------------------------------------------------------------
    def run(self) -> "Run":
        collecting = gc.isenabled()
        gc.disable()                  # see the module docstring: nothing cyclic to collect in the loop
        try:
            return self._run()
        finally:
            if collecting:
                gc.enable()

    def _run(self) -> "Run":
        t0 = time.monotonic()
        deadline = t0 + self.max_seconds if self.max_seconds else None
        hooks = HookTable(self.visitors)
        self._hooks = hooks
        expander = Expander(self.space, hooks)
        for v in self.visitors:
            v.begin(self)
        frontier, frontier_idx = [], array("i")
        admit = expander.root(self, frontier, frontier_idx)
        try:
            inits = self.space.init_states()
        except Exception as exc:
            from kverify.model.search.visitors import crash

            self.note(None, None, crash(exc))
            inits = ()
        for i, s in enumerate(inits):
            admit(s, i)
        self._level_done(0, len(frontier))
        stop_on_first, found = self.stop_on_first, self.found
        progress, every, last_report = self.progress, self.progress_every, t0
        depth = 0
        expanded = transitions = 0
        while frontier and not self.stopped:
            depth += 1
            nxt, nxt_idx = [], array("i")
            expand = expander.bind(self, depth, nxt, nxt_idx)
            for pos in range(len(frontier)):
                expanded += 1
                if (expanded & 1023) == 0:
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        expanded -= 1
                        self.stop("max-seconds")
                        break
                    if progress is not None and now - last_report >= every:
                        last_report = now
                        n = len(self.parent)
                        progress(f"explore: {transitions} states, {n} distinct, depth {depth}, "
                                 f"{n / max(now - t0, 1e-9):,.0f} distinct/s")
                s = frontier[pos]
                frontier[pos] = None          # expanded states are released at once (peak memory)
                transitions += expand(s, frontier_idx[pos])
                if self.stopped:
                    break
                if stop_on_first and found:
                    self.stop("violation")
                    break
            if self.stopped:
                self.unexpanded = sum(1 for x in frontier if x is not None) + len(nxt)
            self._level_done(depth, len(nxt))
            if nxt:
                self.depth = depth
            frontier, frontier_idx = nxt, nxt_idx
        self.expanded, self.transitions = expanded, transitions
        self.complete = not self.stopped
        self.covered_depth = self.depth if self.complete else max(depth - 1, 0)
        self.seconds = time.monotonic() - t0
        for v in self.visitors:
            v.end(self)
        return self

    def _level_done(self, depth: int, admitted: int) -> None:
        for f in self._hooks.table()["on_level"]:
            f(depth, admitted)
        if self.shrink_store_at is not None and len(self.parent) > self.shrink_store_at:
            self.store = self.store.shrink()
            self.shrink_store_at = None


def search(space, store, visitors=(), **options) -> Run:
    """Run one breadth-first search (see `Run` for the options)."""
    return Run(space, store, visitors, **options).run()
