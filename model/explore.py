"""The explicit-state explorer: breadth-first search over any `Protocol`, shortest counterexamples.

Why it exists: the random walker samples, this engine enumerates. It visits every state reachable
within a model's bounds, checks every state and step invariant, detects deadlocks, tracks the
`sometimes` properties (a complete run that never reaches one fails as vacuous) and, for models that
fit, builds the state graph to check that a quiescent good state stays reachable once faults stop.

Memory layout (the reason it scales): per distinct state it keeps only its fingerprint (8 bytes in
a flat open-addressing table, `FingerprintSet`) plus two compact array entries, the index of its
parent and the index of the action (in the parent's `actions()` order) that produced it: about
20-30 bytes. Whole states live only in the BFS frontier (the level being expanded, released state
by state, and the next one). A trace is rebuilt by re-executing the recorded action indices from
the initial state, which is why actions must come out of `actions()` in a deterministic order.
While the state graph is built for the recoverability check (models up to `graph_limit` states),
a dict from fingerprint to index and the edge arrays are kept too; they are dropped once the model
outgrows the limit. BFS discovers every state at its minimal depth, so every reported trace is a
shortest one (step-invariant violations: shortest path to the source state plus the bad step).

Fingerprints are Python's 64-bit `hash` of the (canonical) state: within one process they are
stable; a collision (probability ~n^2/2^65) would only hide a state, as in TLC.

Subsumption (with reductions on, for protocols that offer `Protocol.subsumption`): a state whose
core (the state without its fault budgets) was already seen with fault budgets at least as large is
not expanded again. Sound for every property the explorer checks: the larger-budget state can do
everything the smaller one can into states again larger (the protocol's contract), found no later in
BFS order, so each violation keeps a trace no longer than without the reduction; step invariants are
still checked on every transition; and since fault budgets only gate fault actions, the fault-free
paths the recoverability analysis follows are the same from both (the graph edge goes to the state
that subsumes). It keeps the index of the state with the fingerprint: 16 bytes a slot instead of 8.
"""
from __future__ import annotations

import sys
import time
from array import array
from dataclasses import dataclass, field
from typing import Callable, Optional

from kverify.invariants.core import Violation
from kverify.model.protocol import Protocol, action_label

DEADLOCK = "deadlock"
RECOVERABLE = "recoverable"        # name of the graph property (quiescent good state stays reachable)
GRAPH_LIMIT = 100_000              # default: build the state graph only up to this many states (~1.3 KB each)


class FingerprintSet:
    """Open-addressing set of 64-bit fingerprints in one flat array (8 bytes a slot, load <= 3/4).

    A Python `set` of ints costs ~80 bytes per entry (the int object plus its slot); this costs
    11-21 bytes, which is what keeps the explorer under 100 bytes per distinct state. Lookups run
    in Python, which is negligible next to stepping a model."""

    __slots__ = ("table", "mask", "count", "limit", "zero")

    def __init__(self, capacity: int = 1 << 12):
        size = 1 << max(4, (capacity - 1).bit_length())
        self.table = array("q", bytes(8 * size))
        self.mask = size - 1
        self.count = 0
        self.limit = size * 3 // 4
        self.zero = False              # 0 marks an empty slot, so fingerprint 0 is kept aside

    def add(self, fp: int) -> bool:
        """Insert; True if it was not there yet."""
        fp = ((fp & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)) - (1 << 63)   # any int -> signed 64 bits
        if fp == 0:
            if self.zero:
                return False
            self.zero = True
            self.count += 1
            return True
        t, mask = self.table, self.mask
        i = (fp ^ (fp >> 31)) & mask
        while True:
            v = t[i]
            if v == fp:
                return False
            if v == 0:
                t[i] = fp
                self.count += 1
                if self.count > self.limit:
                    self._grow()
                return True
            i = (i + 1) & mask

    def __contains__(self, fp: int) -> bool:
        fp = ((fp & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)) - (1 << 63)
        if fp == 0:
            return self.zero
        t, mask = self.table, self.mask
        i = (fp ^ (fp >> 31)) & mask
        while True:
            v = t[i]
            if v == fp:
                return True
            if v == 0:
                return False
            i = (i + 1) & mask

    def __len__(self) -> int:
        return self.count

    def _grow(self) -> None:
        old = self.table
        size = (self.mask + 1) * 2
        self.table = t = array("q", bytes(8 * size))
        self.mask = mask = size - 1
        self.limit = size * 3 // 4
        for fp in old:
            if fp:
                i = (fp ^ (fp >> 31)) & mask
                while t[i]:
                    i = (i + 1) & mask
                t[i] = fp


class Subsumption:
    """Seen states by core fingerprint, each with the fault budgets it was explored with (only the
    maximal ones: a budget vector below another one is redundant). Laid out like `FingerprintSet`:
    two flat arrays (core fingerprint, and the state's index packed with its budgets when they are at
    most 3 numbers below 256: ~20-40 bytes a state); a core seen with several incomparable budget
    vectors (rare) keeps them in a small dict, as does fingerprint 0 (0 marks an empty slot)."""

    __slots__ = ("keys", "vals", "mask", "count", "limit", "more")

    def __init__(self, capacity: int = 1 << 12):
        size = 1 << max(4, (capacity - 1).bit_length())
        self.keys = array("q", bytes(8 * size))
        self.vals = array("q", bytes(8 * size))
        self.mask = size - 1
        self.count = 0
        self.limit = size * 3 // 4
        self.more: dict = {}        # core fingerprint -> [(index, budgets), ...] (vals holds -1 then)

    def find_or_add(self, key: int, spare: tuple, idx: int) -> int:
        """Index of a seen state with this core and budgets >= `spare`; else remember `(idx, spare)`
        and return -1."""
        key = ((key & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)) - (1 << 63)
        if key == 0:
            return self._find_or_add_zero(spare, idx)
        keys, mask = self.keys, self.mask
        i = (key ^ (key >> 31)) & mask
        while True:
            k = keys[i]
            if k == key:
                break
            if k == 0:
                keys[i] = key
                self._store(i, key, [(idx, spare)])
                self.count += 1
                if self.count > self.limit:
                    self._grow()
                return -1
            i = (i + 1) & mask
        v = self.vals[i]
        entries = self.more[key] if v < 0 else [_unpack(v)]
        j = _dominating(entries, spare)
        if j < 0:
            self._store(i, key, _kept(entries, spare, idx))
        return j

    def _find_or_add_zero(self, spare: tuple, idx: int) -> int:
        entries = self.more.get(0)
        if entries is None:
            self.more[0] = [(idx, spare)]
            self.count += 1
            return -1
        j = _dominating(entries, spare)
        if j < 0:
            self.more[0] = _kept(entries, spare, idx)
        return j

    def _store(self, i: int, key: int, entries: list) -> None:
        packed = _pack(*entries[0]) if len(entries) == 1 else -1
        self.vals[i] = packed
        if packed < 0:
            self.more[key] = entries
        else:
            self.more.pop(key, None)

    def __len__(self) -> int:
        return self.count

    def _grow(self) -> None:
        old_k, old_v = self.keys, self.vals
        size = (self.mask + 1) * 2
        self.keys = keys = array("q", bytes(8 * size))
        self.vals = vals = array("q", bytes(8 * size))
        self.mask = mask = size - 1
        self.limit = size * 3 // 4
        for k, v in zip(old_k, old_v):
            if k:
                i = (k ^ (k >> 31)) & mask
                while keys[i]:
                    i = (i + 1) & mask
                keys[i] = k
                vals[i] = v


def _dominating(entries: list, spare: tuple) -> int:
    """Index of an entry whose budgets are >= `spare` item by item, else -1."""
    for j, b in entries:
        if b == spare or all(x >= y for x, y in zip(b, spare)):
            return j
    return -1


def _kept(entries: list, spare: tuple, idx: int) -> list:
    """The entries not below `spare`, plus (idx, spare)."""
    return [(j, b) for j, b in entries if not all(y >= x for x, y in zip(b, spare))] + [(idx, spare)]


def _pack(idx: int, spare: tuple) -> int:
    """idx, len(spare) and up to 3 budgets below 256 in one non-negative int64; -1 if they do not fit."""
    if len(spare) > 3 or idx >= 1 << 36 or any(not 0 <= x < 256 for x in spare):
        return -1
    v = (idx << 26) | (len(spare) << 24)
    for pos, x in enumerate(spare):
        v |= x << (16 - 8 * pos)
    return v


def _unpack(v: int) -> tuple:
    n = (v >> 24) & 3
    return v >> 26, tuple((v >> (16 - 8 * pos)) & 0xFF for pos in range(n))


@dataclass
class Found:
    """One violation with the trace (actions from initial state `init_index`) that reaches it."""

    violation: Violation
    init_index: int
    actions: list

    @property
    def invariant(self) -> str:
        return self.violation.invariant


@dataclass
class GraphReport:
    """Outcome of the recoverability analysis over the state graph."""

    nodes: int = 0
    edges: int = 0
    fault_edges: int = 0
    good_states: int = 0
    unrecoverable: int = 0         # states from which no good state is reachable without faults
    analysed: bool = False
    note: str = ""                 # why it was not analysed, when it was not

    def to_json(self) -> dict:
        return {"analysed": self.analysed, "nodes": self.nodes, "edges": self.edges,
                "fault_edges": self.fault_edges, "good_states": self.good_states,
                "unrecoverable": self.unrecoverable, "note": self.note}


@dataclass
class ExploreResult:
    distinct_states: int = 0
    transitions: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: str = ""              # "" when complete, else max-states | max-seconds | violation
    violations: list = field(default_factory=list)        # [Found], at most one per property
    sometimes: dict = field(default_factory=dict)         # name -> depth where first reached, or None
    states_per_depth: dict = field(default_factory=dict)  # depth -> distinct states first found there
    deadlocks: int = 0
    graph: Optional[GraphReport] = None

    @property
    def vacuous(self) -> list:
        """`sometimes` properties a complete run never reached (the run fails). Not reported when
        the run found violations: violating states are not expanded, so reachability is partial."""
        if not self.complete or self.violations:
            return []
        return sorted(n for n, d in self.sometimes.items() if d is None)

    @property
    def ok(self) -> bool:
        return not self.violations and not self.vacuous

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


class Explorer:
    """One BFS run over `protocol`. Use `explore(...)` unless you need the trace helpers."""

    def __init__(self, protocol: Protocol, *, symmetry: bool = True, max_states: Optional[int] = None,
                 max_seconds: Optional[float] = None, graph: bool = True, graph_limit: int = GRAPH_LIMIT,
                 keep_edge_labels: bool = False, stop_on_first: bool = False,
                 progress: Optional[Callable[[str], None]] = None, progress_every: float = 2.0):
        self.protocol = protocol
        self.symmetry = symmetry
        self.max_states = max_states
        self.max_seconds = max_seconds
        self.want_graph = graph
        self.graph_limit = graph_limit
        self.keep_edge_labels = keep_edge_labels
        self.stop_on_first = stop_on_first
        self.progress = progress
        self.progress_every = progress_every
        # compact per-state storage
        self.parent = array("i")           # parent index, -1 for initial states
        self.via = array("H")              # action index in the parent's actions() (init index for roots)
        # graph (only while it fits)
        self.index_of: Optional[dict] = None
        self.edge_src = array("i")
        self.edge_dst = array("i")
        self.edge_fault = array("b")
        self.edge_labels: list = []
        self.good = array("b")

    # --- traces ------------------------------------------------------------------------------
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
        p = self.protocol
        init, steps = self.path_indices(idx)
        state = p.init_states()[init]
        actions = []
        for k in steps:
            a = list(p.actions(state))[k]
            actions.append(a)
            state = p.step(state, a)
        return init, actions, state

    # --- the search --------------------------------------------------------------------------
    def run(self) -> ExploreResult:
        p = self.protocol
        res = ExploreResult()
        t0 = time.monotonic()
        deadline = t0 + self.max_seconds if self.max_seconds else None
        max_states = self.max_states
        fp_of = p.fingerprint if self.symmetry else hash
        inits = p.init_states()
        subsume = (self.symmetry and type(p).subsumption is not Protocol.subsumption and bool(inits)
                   and p.subsumption(inits[0]) is not None)      # offered for every state or for none
        split = p.subsumption
        dom = Subsumption() if subsume else None
        dom_find = dom.find_or_add if subsume else None
        check_state = p.check_state
        check_step = p.check_step
        has_step = bool(p.step_invariants)
        actions_of = p.actions
        step = p.step
        allows_terminal = p.allows_terminal
        is_fault = p.is_fault
        pending = list(p.sometimes())
        res.sometimes = {s.name: None for s in pending}
        found: dict[str, Found] = {}
        parent, via = self.parent, self.via
        graph = self.want_graph
        index_of = {} if graph else None
        seen = index_of if graph else FingerprintSet()
        seen_add = None if graph else seen.add
        edge_src, edge_dst, edge_fault, good = self.edge_src, self.edge_dst, self.edge_fault, self.good
        labels = self.edge_labels if (graph and self.keep_edge_labels) else None
        quiescent = p.is_quiescent_good

        def record(idx_or_none, v, extra_action=None):
            if v.invariant in found:
                return
            if idx_or_none is None:
                init, acts = 0, []
            else:
                init, acts, _ = self.trace_to(idx_or_none)
            if extra_action is not None:
                acts = acts + [extra_action]
            found[v.invariant] = Found(Violation(v.invariant, v.message, len(acts)), init, acts)

        def note_sometimes(s, depth):
            hit = [q for q in pending if q.predicate(s)]
            for q in hit:
                res.sometimes[q.name] = depth
                pending.remove(q)

        # roots; a BFS level is two parallel sequences (states, their indices): no pair tuples
        frontier, frontier_idx = [], array("i")
        for i, s in enumerate(p.init_states()):
            idx = len(parent)
            if subsume:
                core, spare = split(s)
                if dom_find(hash(core), spare, idx) >= 0:
                    continue
            else:
                fp = fp_of(s)
                if fp in seen:
                    continue
            parent.append(-1)
            via.append(i)
            if graph:
                if not subsume:
                    index_of[fp] = idx
                good.append(1 if quiescent(s) else 0)
            elif not subsume:
                seen_add(fp)
            v = check_state(s, 0)
            if v is not None:
                found.setdefault(v.invariant, Found(v, i, []))
                continue
            if pending:
                note_sometimes(s, 0)
            frontier.append(s)
            frontier_idx.append(idx)

        depth = 0
        res.states_per_depth[0] = len(frontier)
        transitions = 0
        expanded = 0
        last_report = t0
        stopped = ""
        while frontier and not stopped:
            nxt_frontier, nxt_idx = [], array("i")
            append_next, append_idx = nxt_frontier.append, nxt_idx.append
            depth += 1
            for pos in range(len(frontier)):
                s = frontier[pos]
                frontier[pos] = None          # expanded states are released at once (peak memory)
                idx = frontier_idx[pos]
                expanded += 1
                if (expanded & 1023) == 0:
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        stopped = "max-seconds"
                        break
                    if self.progress is not None and now - last_report >= self.progress_every:
                        last_report = now
                        n = len(parent)
                        self.progress(f"explore: {transitions} states, {n} distinct, depth {depth}, "
                                      f"{n / max(now - t0, 1e-9):,.0f} distinct/s")
                acts = list(actions_of(s))
                if not acts:
                    if not allows_terminal(s):
                        res.deadlocks += 1
                        if DEADLOCK not in found:
                            record(idx, Violation(DEADLOCK, "no action is enabled and the state is not an allowed end state", 0))
                    continue
                if len(acts) > 65535:
                    raise ValueError(f"{p.name}: more than 65535 actions in one state")
                for k, a in enumerate(acts):
                    t = step(s, a)
                    transitions += 1
                    if has_step:
                        v = check_step(s, a, t, depth)
                        if v is not None:
                            if v.invariant not in found:
                                record(idx, v, a)
                            continue
                    if subsume:
                        core, spare = split(t)
                        j = dom_find(hash(core), spare, len(parent))
                        new = j < 0
                        if new:
                            j = len(parent)
                    elif graph:
                        fp = fp_of(t)
                        j = index_of.get(fp)
                        new = j is None
                        if new:
                            j = len(parent)
                            index_of[fp] = j
                    else:
                        if not seen_add(fp_of(t)):
                            continue
                        j = len(parent)
                        new = True
                    if graph:
                        if new:
                            good.append(1 if quiescent(t) else 0)
                        edge_src.append(idx)
                        edge_dst.append(j)
                        edge_fault.append(1 if is_fault(a) else 0)
                        if labels is not None:
                            labels.append(action_label(a))
                    if not new:
                        continue
                    parent.append(idx)
                    via.append(k)
                    v = check_state(t, depth)
                    if v is not None:
                        if v.invariant not in found:
                            record(j, v)
                        continue
                    if pending:
                        note_sometimes(t, depth)
                    append_next(t)
                    append_idx(j)
                    if max_states is not None and len(parent) >= max_states:
                        stopped = "max-states"
                        break
                if stopped:
                    break
                if found and self.stop_on_first:
                    stopped = "violation"
                    break
            if graph and len(parent) > self.graph_limit:
                graph = False
                if not subsume:
                    seen = FingerprintSet(2 * len(index_of))
                    seen_add = seen.add
                    for fp in index_of:
                        seen_add(fp)
                index_of = None
                self.index_of = None
                del edge_src[:], edge_dst[:], edge_fault[:], good[:]
                self.edge_labels.clear()
                labels = None
            if nxt_frontier:
                res.max_depth = depth
                res.states_per_depth[depth] = len(nxt_frontier)
            frontier, frontier_idx = nxt_frontier, nxt_idx

        res.complete = not stopped
        res.stopped = stopped
        res.distinct_states = len(parent)
        res.transitions = transitions
        res.seconds = time.monotonic() - t0
        if self.want_graph:
            rep = GraphReport()
            if not graph:
                rep.note = f"state graph not built: more than {self.graph_limit} states"
            elif not res.complete:
                rep.note = "state graph not analysed: the run stopped before it was complete"
            elif any(name != DEADLOCK for name in found):
                rep.note = "state graph not analysed: violating states were not expanded"
            else:
                self.index_of = index_of
                self._analyse(rep, record)
            res.graph = rep
        # keep violations in the order of their trace length (shortest first), then by name
        res.violations = sorted(found.values(), key=lambda f: (len(f.actions), f.invariant))
        return res

    def _analyse(self, rep: GraphReport, record) -> None:
        """Recoverability: from every reachable state, a quiescent good state is reachable using
        non-fault transitions only: a backward search from every good state along the non-fault
        edges (their reverse adjacency in two flat arrays), every state it misses is stuck."""
        n = len(self.parent)
        src, dst, fault, good = self.edge_src, self.edge_dst, self.edge_fault, self.good
        rep.nodes = n
        rep.edges = len(src)
        rep.fault_edges = sum(fault)
        rep.good_states = sum(good)
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
        bad = [i for i in range(n) if not ok[i]]
        rep.unrecoverable = len(bad)
        rep.analysed = True
        if bad:
            first = min(bad)   # BFS order: smallest index = shortest trace
            record(first, Violation(RECOVERABLE, f"{len(bad)} reachable states cannot reach a quiescent good state "
                                    "once faults stop (first one at the end of this trace)", 0))

    def write_dot(self, path: str) -> int:
        """Write the state graph (after `run`) as Graphviz DOT; returns the number of nodes."""
        n = len(self.parent) if self.index_of is not None else 0
        if n == 0:
            raise ValueError("no state graph to write (the model did not fit or the run was partial)")
        labels = self.edge_labels
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"digraph {_dot_id(self.protocol.name)} {{\n  node [shape=circle fontsize=9];\n")
            for i in range(n):
                attrs = ['style=filled fillcolor="palegreen"'] if self.good[i] else []
                if self.parent[i] < 0:
                    attrs.append("shape=doublecircle")
                fh.write(f"  s{i} [label=\"{i}\"{(' ' + ' '.join(attrs)) if attrs else ''}];\n")
            for e, (s, d, f) in enumerate(zip(self.edge_src, self.edge_dst, self.edge_fault)):
                lab = labels[e].replace('"', "'") if labels else ""
                style = " style=dashed color=red" if f else ""
                fh.write(f"  s{s} -> s{d} [label=\"{lab}\"{style}];\n")
            fh.write("}\n")
        return n


def _dot_id(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name) or "g"


def explore(protocol: Protocol, **kwargs) -> ExploreResult:
    """Run one exhaustive BFS (see `Explorer` for the keyword arguments)."""
    return Explorer(protocol, **kwargs).run()


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def can_recover(protocol: Protocol, state, limit: int = 1_000_000) -> Optional[bool]:
    """Is a quiescent good state reachable from `state` without fault actions? None if the search
    hit `limit` states before deciding."""
    fp_of = protocol.fingerprint
    seen = {fp_of(state)}
    frontier = [state]
    while frontier:
        nxt = []
        for s in frontier:
            if protocol.is_quiescent_good(s):
                return True
            for a in protocol.actions(s):
                if protocol.is_fault(a):
                    continue
                t = protocol.step(s, a)
                fp = fp_of(t)
                if fp not in seen:
                    seen.add(fp)
                    if len(seen) > limit:
                        return None
                    nxt.append(t)
        frontier = nxt
    return False


def replay_graph_property(cx) -> tuple:
    """Replayer (reports/replayer.py `extra["replayer"]`) for the explorer's own properties,
    `deadlock` and `recoverable`, which no invariant object checks."""
    from kverify.model import registry

    p = registry.build(cx.model, cx.params, cx.behaviours)
    state = p.init_states()[cx.init_index]
    for i, a in enumerate(cx.actions, 1):
        if a not in list(p.actions(state)):
            return False, f"no longer reproduces: step {i} {action_label(a)} is not enabled any more"
        state = p.step(state, a)
    if cx.invariant == DEADLOCK:
        stuck = not list(p.actions(state)) and not p.allows_terminal(state)
        return stuck, ("reproduced: deadlock at the end of the trace" if stuck
                       else "no longer reproduces: the last state is not a deadlock")
    verdict = can_recover(p, state)
    if verdict is None:
        return False, "undecided: the recovery search hit its state limit"
    return (not verdict), ("reproduced: no quiescent good state is reachable without faults from the last state"
                           if not verdict else "no longer reproduces: a quiescent good state is reachable again")
