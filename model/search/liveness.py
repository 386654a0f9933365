"""Liveness under fairness on the state graph: `Eventually` properties checked exhaustively.

Why it exists: the explorer's `recoverable` asks whether a good state stays reachable once faults
stop, and every world recovers when the failed broker restarts, so a controller that never fails a
partition over passed every gate (issue 17). Here the fair moves exclude the faults AND each
property's `excluded` actions (the failed node's return), and each `Eventually` property
(invariants/liveness.py) is judged on the graph of the whole reachable state space:

  a reachable state where the property is pending, from which no path of fair moves reaches a
  state where it is discharged, is a counterexample.

In a finite graph that is exactly "some fair continuation never discharges it": every fair
successor of such a state is again such a state, so following fair moves from it ends in a cycle
(or in a state without fair moves) that never discharges the property, whatever the scheduler does.
The counterexample is a lasso: the shortest prefix to the first such state (BFS order), then fair
moves to a state seen before on that path, the loop (or a state where no fair move is enabled: the
loop is standing still there). Reports mark the loop (reports/record.py `loop_start`).

Pieces: `LivenessGraph` is a search visitor (model/search/visitors.py) that records, per state, which
properties are pending and, per edge, for which properties it is a fair move; `analyse` finds the
lassos; `check_liveness(protocol, ...)` runs the one BFS loop (model/search/loop.py) with it and
returns a `LivenessResult`; `replay_lasso` re-executes a recorded lasso (`kverify replay`). The same properties
on single runs (walks, Spark) are bounded responses: model/response.py.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Optional

from kverify.invariants.core import Violation
from kverify.model.response import bounded_response, properties_of  # noqa: F401  (walks' form; re-exported)
from kverify.model.search.visitors import Visitor

GRAPH_LIMIT = 200_000          # states: ~40 bytes a state plus ~20 bytes a fair edge


class LivenessGraph(Visitor):
    """Per state a pending bit per property; per fair edge (src, dst, the properties it is fair for,
    the action). Needs a store that returns indices (IndexedStore); gives up beyond `limit` states."""

    def __init__(self, protocol, props, limit: int = GRAPH_LIMIT):
        self.props = tuple(props)
        self.is_fault = protocol.is_fault
        self.limit = limit
        self.pending = [bytearray() for _ in self.props]
        self.ever = [False] * len(self.props)        # some reachable state has it pending (premise triggered)
        self.src, self.dst, self.fair = array("i"), array("i"), array("I")
        self.actions: list = []
        self.dropped = False

    def active(self) -> bool:
        return not self.dropped

    def on_new(self, idx: int, state, depth: int, src: int, action) -> None:
        for k, p in enumerate(self.props):
            bit = 0 if p.pending(state) is None else 1
            self.pending[k].append(bit)
            if bit:
                self.ever[k] = True

    def on_edge(self, src: int, action, dst: int) -> None:
        if self.is_fault(action):
            return
        mask = 0
        for k, p in enumerate(self.props):
            if not p.excluded(action):
                mask |= 1 << k
        if mask:
            self.src.append(src)
            self.dst.append(dst)
            self.fair.append(mask)
            self.actions.append(action)

    def on_level(self, depth: int, admitted: int) -> None:
        if self.props and len(self.pending[0]) > self.limit:
            self.dropped = True
            self.src, self.dst, self.fair, self.actions = array("i"), array("i"), array("I"), []
            self.pending = [bytearray() for _ in self.props]

    # --- the analysis -------------------------------------------------------------------------------
    def stuck(self, k: int) -> list:
        """Indices of the states where property k is pending and no fair path discharges it."""
        pend = self.pending[k]
        n = len(pend)
        bit = 1 << k
        preds: list = [[] for _ in range(n)]
        for a, d, m in zip(self.src, self.dst, self.fair):
            if m & bit:
                preds[d].append(a)
        ok = bytearray(1 - b for b in pend)
        stack = [i for i in range(n) if ok[i]]
        while stack:
            d = stack.pop()
            for a in preds[d]:
                if not ok[a]:
                    ok[a] = 1
                    stack.append(a)
        return [i for i in range(n) if not ok[i]]

    def loop_from(self, k: int, start: int) -> tuple:
        """(actions, loop start position) of fair moves from `start`: the first fair edge each time,
        until a state repeats (the loop begins at its first visit) or no fair move is enabled
        (loop start = the number of actions: the run stands still in the last state)."""
        bit = 1 << k
        out: dict = {}
        for e, (a, m) in enumerate(zip(self.src, self.fair)):
            if m & bit and a not in out:
                out[a] = e
        seen = {start: 0}
        acts, cur = [], start
        while True:
            e = out.get(cur)
            if e is None:
                return acts, len(acts)
            acts.append(self.actions[e])
            cur = self.dst[e]
            if cur in seen:
                return acts, seen[cur]
            seen[cur] = len(acts)


@dataclass
class Lasso:
    """A liveness counterexample: `prefix` actions from initial state `init_index`, then `loop`
    actions; the loop starts after `len(prefix) + loop_start` actions and ends back in that state (or,
    when `loop_start == len(loop)`, no fair move is enabled in the last state)."""

    violation: Violation
    init_index: int
    prefix: list
    loop: list
    loop_start: int

    @property
    def actions(self) -> list:
        return self.prefix + self.loop

    @property
    def loop_step(self) -> int:
        """Index (0 = initial state) of the trace state where the loop begins."""
        return len(self.prefix) + self.loop_start


@dataclass
class LivenessResult:
    properties: list = field(default_factory=list)      # names
    triggered: dict = field(default_factory=dict)       # name -> some reachable state had it pending
    lassos: list = field(default_factory=list)          # [Lasso]
    findings: list = field(default_factory=list)        # [(Violation, init index, actions)] of the search (exceptions)
    states: int = 0
    transitions: int = 0
    fair_edges: int = 0
    depth: int = 0
    complete: bool = False
    stopped: str = ""
    analysed: bool = False
    note: str = ""


def analyse(run, graph: LivenessGraph) -> list:
    """The lassos of a complete search (one per property that has one: the shortest prefix)."""
    out = []
    for k, p in enumerate(graph.props):
        bad = graph.stuck(k)
        if not bad:
            continue
        first = min(bad)
        init, prefix, state = run.trace_to(first)
        loop, start = graph.loop_from(k, first)
        msg = p.pending(state)
        where = "no fair move is enabled" if start == len(loop) else f"a loop of {len(loop) - start} fair moves"
        v = Violation(p.name, f"{len(bad)} reachable states never discharge it under fair moves (faults and the "
                              f"failed node's return excluded); from step {len(prefix)}: {msg}; then {where}",
                      len(prefix) + len(loop))
        out.append(Lasso(v, init, prefix, loop, start))
    return out


def check_liveness(protocol, max_states: Optional[int] = None, graph_limit: int = GRAPH_LIMIT,
                   max_seconds: Optional[float] = None, invariants: bool = True) -> LivenessResult:
    """One exhaustive search of `protocol` recording the liveness graph, then `analyse`. With
    `invariants` the state and step invariants are checked on the way (a violation is a finding and
    leaves the liveness graph unanalysed: violating states are not expanded)."""
    from kverify.model.protocol import Protocol
    from kverify.model.search.loop import search
    from kverify.model.search.storage import IndexedStore

    props = properties_of(protocol)
    res = LivenessResult(properties=[p.name for p in props])
    if not props:
        res.note = "the model declares no liveness property"
        return res
    # a symmetry reduction would make recorded edge actions refer to another member of the orbit
    exact = type(protocol).canonical is Protocol.canonical
    store = IndexedStore(protocol.fingerprint if exact else hash)
    graph = LivenessGraph(protocol, props, graph_limit)
    visitors = [graph]
    if invariants:
        from kverify.model.search.visitors import StateInvariants, StepInvariants

        visitors += [StateInvariants(protocol), StepInvariants(protocol)]
    run = search(protocol, store, visitors, max_states=max_states, max_seconds=max_seconds)
    res.states, res.transitions, res.depth = len(run.parent), run.transitions, run.depth
    res.complete, res.stopped = run.complete, run.stopped
    res.fair_edges = len(graph.src)
    res.triggered = {p.name: graph.ever[k] for k, p in enumerate(props)}
    res.findings = run.traces()
    if graph.dropped:
        res.note = f"liveness graph not built: more than {graph_limit:,} states"
    elif not run.complete:
        res.note = f"search cut by {run.stopped} before it was complete"
    elif res.findings:
        res.note = "the search found violations: liveness not analysed"
    else:
        res.analysed = True
        res.lassos = analyse(run, graph)
    return res


def replay_lasso(cx) -> tuple:
    """Replayer (reports/replayer.py `extra["replayer"]`) of a lasso record: the trace runs, the
    property is pending in every state of the loop, the loop's moves are fair, and the loop closes
    (its last state equals its first; or no fair move is enabled in the last state)."""
    from kverify.model import registry

    p = registry.build(cx.model, cx.params, cx.behaviours)
    prop = {q.name: q for q in properties_of(p)}.get(cx.invariant)
    if prop is None:
        return False, f"no longer reproduces: {cx.model} declares no liveness property {cx.invariant!r}"
    start = cx.loop_start if cx.loop_start is not None else len(cx.trace) - 1
    state = p.init_states()[cx.init_index]
    states = [state]
    for i, a in enumerate(cx.actions, 1):
        if a not in list(p.actions(state)):
            return False, f"no longer reproduces: step {i} is not enabled any more"
        if i > start and (p.is_fault(a) or prop.excluded(a)):
            return False, f"not a fair loop: step {i} is a fault or an excluded move"
        state = p.step(state, a)
        states.append(state)
    for i in range(start, len(states)):
        if prop.pending(states[i]) is None:
            return False, f"no longer reproduces: `{cx.invariant}` is discharged at step {i}"
    last = states[-1]
    if start == len(states) - 1:
        fair = [a for a in p.actions(last) if not p.is_fault(a) and not prop.excluded(a)]
        if fair:
            return False, "no longer reproduces: a fair move is enabled in the last state"
        return True, f"reproduced: `{cx.invariant}` pending from step {start} and no fair move is enabled"
    if p.fingerprint(last) != p.fingerprint(states[start]):
        return False, f"no longer reproduces: the loop does not return to the state of step {start}"
    return True, f"reproduced: `{cx.invariant}` pending on the loop from step {start} back to it"


def lasso_record(protocol, lasso: Lasso, model_name: Optional[str] = None, engine: str = "explore"):
    """The counterexample record of a lasso (reports/record.py): the trace, the loop marked by
    `loop_start`, the property's statement, replayed by `replay_lasso`."""
    from kverify.reports.record import from_trace

    cx = from_trace(protocol, lasso.actions, lasso.violation, engine=engine, init_index=lasso.init_index,
                    model_name=model_name)
    prop = {p.name: p for p in properties_of(protocol)}.get(lasso.violation.invariant)
    cx.statement = prop.statement if prop is not None else cx.statement
    cx.loop_start = lasso.loop_step
    cx.extra["replayer"] = "kverify.model.search.liveness:replay_lasso"
    cx.extra["lasso"] = {"prefix": len(lasso.prefix), "loop": len(lasso.loop) - lasso.loop_start,
                         "stands_still": lasso.loop_start == len(lasso.loop)}
    return cx
