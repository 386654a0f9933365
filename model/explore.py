"""The explicit-state explorer: breadth-first search over any `Protocol`, shortest counterexamples.

Why it exists: the random walker samples, this engine enumerates. It visits every state reachable
within a model's bounds, checks every state and step invariant, detects deadlocks, tracks the
`sometimes` properties (a complete run that never reaches one fails as vacuous) and, for models that
fit, builds the state graph to check that a quiescent good state stays reachable once faults stop.
An exception raised by the model (its actions, a step, an invariant) is a finding named `exception`
with the trace up to it, not a crash of the search.

It is the one search loop of kverify (model/search/) with the explorer's store and visitors:
- store: fingerprints (`FingerprintStore`, 8 bytes a state), or while the state graph is built (models
  up to `graph_limit` states) fingerprint -> index (`IndexedStore`, shrunk to fingerprints once the model
  outgrows the limit), or, with reductions on for protocols that offer `Protocol.subsumption`, the
  `SubsumptionStore`: a state whose core (the state without its fault budgets) was already seen with
  fault budgets at least as large is not expanded again. Sound for every property the explorer checks:
  the larger-budget state can do everything the smaller one can into states again larger (the
  protocol's contract), found no later in BFS order, so each violation keeps a trace no longer than
  without the reduction; step invariants are still checked on every transition; and since fault budgets
  only gate fault actions, the fault-free paths the recoverability analysis follows are the same from
  both (the graph edge goes to the state that subsumes).
- visitors: state invariants, step invariants, deadlock, `sometimes`, states per depth, the state graph.
Per distinct state the loop keeps a parent index and an action index (about 20-30 bytes with the
store); traces are rebuilt by re-executing those indices (model/search/loop.py).

Verdict facts: `ExploreResult.complete` is True only for a search that expanded every state;
otherwise `stopped` names what cut it (`max-states`, `max-seconds`, `violation` = stop on first) and
`covered_depth`, `expanded` and `unexpanded` say what it covered.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

from kverify.invariants.core import Violation
from kverify.model.protocol import Protocol, action_label
from kverify.model.search import (DEADLOCK, RECOVERABLE, Deadlock, DepthCounter, FingerprintStore, GraphBuilder,
                                  Goal, IndexedStore, Run, SometimesTracker, StateInvariants, StepInvariants,
                                  SubsumptionStore, offers_subsumption, search)
from kverify.model.search.storage import FingerprintSet, Subsumption  # noqa: F401  (importable from here, as before)

GRAPH_LIMIT = 100_000              # default: build the state graph only up to this many states (~1.3 KB each)


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
    stopped: str = ""              # "" when complete, else max-states | max-seconds | violation (stop on first)
    covered_depth: int = 0         # every state within this many steps was found and checked (= max_depth when complete)
    expanded: int = 0              # states whose successors were all generated
    unexpanded: int = 0            # states found and admitted but not expanded when the search was cut
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
    def coverage(self) -> str:
        """One line: complete, or what cut the search and what it covered."""
        if self.complete:
            return f"complete: {self.distinct_states} states, depth {self.max_depth}"
        return (f"partial ({self.stopped}): {self.distinct_states} states, every state within depth "
                f"{self.covered_depth} checked, {self.unexpanded} found but not expanded")

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
        self.search: Optional[Run] = None
        self.graph_builder: Optional[GraphBuilder] = None
        self.analysed = False                    # the state graph was built and analysed (write_dot)

    # --- the search --------------------------------------------------------------------------
    def store(self, inits):
        """The storage mode: subsumption, fingerprint -> index (graph) or fingerprints."""
        p = self.protocol
        if self.symmetry and offers_subsumption(p, inits):
            return SubsumptionStore(p.subsumption)
        fp_of = p.fingerprint if self.symmetry else hash
        return IndexedStore(fp_of) if self.want_graph else FingerprintStore(fp_of)

    def run(self) -> ExploreResult:
        p = self.protocol
        try:
            inits = p.init_states()
        except Exception:
            inits = ()                               # the loop reports it as a finding
        store = self.store(inits)
        state_invs, step_invs, deadlock, sometimes = StateInvariants(p), StepInvariants(p), Deadlock(p), SometimesTracker(p)
        depths = DepthCounter()
        visitors = [state_invs, step_invs, deadlock, sometimes, depths]
        graph = None
        if self.want_graph:
            graph = self.graph_builder = GraphBuilder(p, self.graph_limit, self.keep_edge_labels)
            visitors.insert(0, graph)                # good flags for every new state, violating ones included
        run = self.search = search(p, store, visitors, max_states=self.max_states, max_seconds=self.max_seconds,
                                   stop_on_first=self.stop_on_first, progress=self.progress,
                                   progress_every=self.progress_every,
                                   shrink_store_at=self.graph_limit if self.want_graph else None)
        res = ExploreResult(distinct_states=len(run.parent), transitions=run.transitions, max_depth=run.depth,
                            seconds=run.seconds, complete=run.complete, stopped=run.stopped,
                            covered_depth=run.covered_depth, expanded=run.expanded, unexpanded=run.unexpanded,
                            sometimes=sometimes.reached, states_per_depth=depths.per_depth, deadlocks=deadlock.count)
        if graph is not None:
            rep = GraphReport()
            rep.note = graph_note(graph.dropped, self.graph_limit, run.complete, run.found)
            if not rep.note:
                self.analysed = True
                self._analyse(rep, graph, run)
            res.graph = rep
        # violations in the order of their trace length (shortest first), then by name
        res.violations = [Found(v, init, acts) for v, init, acts in run.traces()]
        return res

    def _analyse(self, rep: GraphReport, graph: GraphBuilder, run: Run) -> None:
        """Recoverability: from every reachable state a quiescent good state is reachable using
        non-fault transitions only (GraphBuilder.unrecoverable); the first stuck state is a finding."""
        rep.nodes = len(graph.good)
        rep.edges = len(graph.src)
        rep.fault_edges = sum(graph.fault)
        rep.good_states = sum(graph.good)
        bad = graph.unrecoverable()
        rep.unrecoverable = len(bad)
        rep.analysed = True
        if bad:
            first = min(bad)   # BFS order: smallest index = shortest trace
            run.note(first, None, recoverable_violation(len(bad), 0))

    # --- traces and the graph, after `run` ---------------------------------------------------------
    @property
    def parent(self):
        return self.search.parent if self.search is not None else []

    def path_indices(self, idx: int) -> tuple[int, list]:
        """(init index, action indices) of the BFS-tree path to state `idx`."""
        return self.search.path_indices(idx)

    def trace_to(self, idx: int) -> tuple[int, list, object]:
        """(init index, actions, state) reached by re-executing the path to `idx`."""
        return self.search.trace_to(idx)

    def write_dot(self, path: str) -> int:
        """Write the state graph (after `run`) as Graphviz DOT; returns the number of nodes."""
        g = self.graph_builder
        n = len(g.good) if g is not None and self.analysed else 0
        if n == 0:
            raise ValueError("no state graph to write (the model did not fit or the run was partial)")
        labels = g.labels
        parent = self.search.parent
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"digraph {_dot_id(self.protocol.name)} {{\n  node [shape=circle fontsize=9];\n")
            for i in range(n):
                attrs = ['style=filled fillcolor="palegreen"'] if g.good[i] else []
                if parent[i] < 0:
                    attrs.append("shape=doublecircle")
                fh.write(f"  s{i} [label=\"{i}\"{(' ' + ' '.join(attrs)) if attrs else ''}];\n")
            for e, (s, d, f) in enumerate(zip(g.src, g.dst, g.fault)):
                lab = labels[e].replace('"', "'") if labels else ""
                style = " style=dashed color=red" if f else ""
                fh.write(f"  s{s} -> s{d} [label=\"{lab}\"{style}];\n")
            fh.write("}\n")
        return n


def graph_note(dropped: bool, limit: int, complete: bool, found) -> str:
    """Why the state graph is not analysed ("" when it is); `found`: the names of the findings.
    Every engine decides it here (model/search/parallel.py too)."""
    if dropped:
        return f"state graph not built: more than {limit} states"
    if not complete:
        return "state graph not analysed: the run stopped before it was complete"
    if any(name != DEADLOCK for name in found):
        return "state graph not analysed: violating states were not expanded"
    return ""


def recoverable_violation(unrecoverable: int, steps: int) -> Violation:
    return Violation(RECOVERABLE, f"{unrecoverable} reachable states cannot reach a quiescent good state once "
                     "faults stop (first one at the end of this trace)", steps)


def _dot_id(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name) or "g"


def explore(protocol: Protocol, **kwargs) -> ExploreResult:
    """Run one exhaustive BFS (see `Explorer` for the keyword arguments)."""
    return Explorer(protocol, **kwargs).run()


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class FaultFree:
    """`protocol` without its fault actions, started from one state (the recovery search's space)."""

    def __init__(self, protocol: Protocol, state):
        self.protocol, self.start = protocol, state
        self.step = protocol.step

    def init_states(self):
        return [self.start]

    def actions(self, state):
        is_fault = self.protocol.is_fault
        return [a for a in self.protocol.actions(state) if not is_fault(a)]


def can_recover(protocol: Protocol, state, limit: int = 1_000_000) -> Optional[bool]:
    """Is a quiescent good state reachable from `state` without fault actions? None if the search
    hit `limit` states before deciding."""
    goal = Goal(protocol.is_quiescent_good)
    run = search(FaultFree(protocol, state), FingerprintStore(protocol.fingerprint), [goal], max_states=limit + 1)
    if goal.found >= 0:
        return True
    return None if run.stopped == "max-states" else False


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
