"""The whole state sets of a spec and its model, compared, with the first state where they part.

Why it exists: equal verdicts and equal state counts can hide two different state spaces (a rule
changed on one side only, under a behaviour no verdict depends on). `compare_sets` runs TLC with
every invariant and property off and the deadlock check off, and reads its state graph
(`-dump dot,actionlabels`); it explores the Python model the same way (no invariants), maps every
Python state to its spec's variables (kverify/tla/forms.py), and compares the two sets. On a
difference it names the first differing state: one of the smallest depth reached by one side
only, with its shortest trace (every state before it is reached by both sides), the common state
it was reached from, and what the other side reaches from that state by the same action; all on
both sides' terms (TLA+ values, and the Python state).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from kverify.tla import forms
from kverify.tla import values as V

TLC_SIDE, PY_SIDE = "TLC", "the explorer"


@dataclass
class Node:
    depth: int
    parent: object              # the parent's key, None for an initial state
    action: object              # TLC: the action's name; explorer: the action tuple (None at depth 0)
    native: object = None       # explorer: the Python state


@dataclass
class Graph:
    """Reachable states in TLA+ form (key) -> Node (a BFS tree: shortest traces)."""

    side: str
    nodes: dict
    edges: dict = field(default_factory=dict)     # TLC only: key -> [(action name, key)]

    def trace(self, key) -> list:
        """[(action, key)] from an initial state (action None) to `key`."""
        out = []
        while key is not None:
            node = self.nodes[key]
            out.append((node.action, key))
            key = node.parent
        return out[::-1]


# --- the explorer's side -------------------------------------------------------------------------------------
class MappingError(ValueError):
    """Two different Python states have one TLA+ form: the mapping in kverify/tla/forms.py loses data."""


def _visitor_base():
    from kverify.model.search import Visitor

    return Visitor


class _Nodes(_visitor_base()):
    """Search visitor: every new distinct state as a Node keyed by `to_key(state)` (its TLA+ form)."""

    def __init__(self, to_key, native: bool):
        self.to_key, self.native = to_key, native
        self.keys, self.nodes, self.error = [], {}, None

    def on_new(self, idx, state, depth, src, action) -> None:
        key = self.to_key(state)
        self.keys.append(key)
        parent = self.keys[src] if src >= 0 else None
        if self.native:
            try:
                _add(self.nodes, key, Node(depth, parent, action, state))
            except MappingError as exc:        # the loop turns exceptions into findings: keep this one
                self.error = self.error or exc
                raise
        elif key not in self.nodes:
            self.nodes[key] = Node(depth, parent, None if action is None else action[0])


def _search_nodes(space, to_key, native: bool, limit: int) -> dict:
    from kverify.model.search import ExactStore, search

    v = _Nodes(to_key, native)
    run = search(space, ExactStore(), [v], max_states=limit + 1)
    if v.error is not None:
        raise v.error
    if run.stopped:
        raise ValueError(f"more than {limit} states")
    if run.found:
        name, (_, _, violation) = next(iter(run.found.items()))
        raise ValueError(f"the search stopped on {name}: {violation}")
    return v.nodes


def python_graph(model: str, proto, limit: int = 2_000_000) -> Graph:
    """Every reachable state of `proto` (the one search loop, no invariants), keyed by its TLA+ form."""
    to_tla = forms.mapping(model)
    return Graph(PY_SIDE, _search_nodes(proto, lambda s: V.rec(**to_tla(proto, s)), True, limit))


def _add(nodes: dict, key, node: Node) -> None:
    old = nodes.get(key)
    if old is not None and old.native != node.native:
        raise MappingError(f"two Python states have one TLA+ form: {old.native} and {node.native}")
    if old is None:
        nodes[key] = node


# --- TLC's side --------------------------------------------------------------------------------------------------
_NODE = re.compile(r'^(-?\d+) \[label="(.*)"(,style = filled)?\];?$')
_EDGE = re.compile(r'^(-?\d+) -> (-?\d+) \[label="([^"]*)"')


_ESCAPE = re.compile(r"\\(.)")


def _unescape(text: str) -> str:
    """A DOT string's content (\\n = newline, \\x = x)."""
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _label_state(label: str, keep, cache: dict):
    """A node label (still DOT-escaped) -> the state's record of the variables in `keep`. States
    share most variable values, so each `/\\ x = v` chunk is parsed once (`cache`)."""
    fields = {}
    for chunk in label.split("\\n/\\\\ "):
        if chunk.startswith("/\\\\ "):
            chunk = chunk[4:]
        name = chunk.split(" ", 1)[0]
        if keep is not None and name not in keep:
            continue
        val = cache.get(chunk)
        if val is None:
            val = V.parse_state("/\\ " + _unescape(chunk))[1][0][1]
            cache[chunk] = val
        fields[name] = val
    return V.rec(**fields)


def parse_dot(path: str, keep) -> Graph:
    """TLC's `-dump dot,actionlabels` file -> its state graph (BFS tree from the initial states)."""
    ids, inits, adj, cache = {}, [], {}, {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            m = _EDGE.match(line)
            if m:
                adj.setdefault(m.group(1), []).append((m.group(3), m.group(2)))
                continue
            m = _NODE.match(line)
            if m:
                ids[m.group(1)] = _label_state(m.group(2), keep, cache)
                if m.group(3):
                    inits.append(m.group(1))
    edges = {}
    for i, key in ids.items():
        out = edges.setdefault(key, [])
        for label, j in adj.get(i, ()):
            if ids[j] != key:             # not a stutter (AllowedEnd)
                out.append((label, ids[j]))
    roots = list(dict.fromkeys(ids[i] for i in inits))
    return Graph(TLC_SIDE, _search_nodes(_EdgeSpace(roots, edges), lambda k: k, False, len(ids) + 1), edges)


class _EdgeSpace:
    """TLC's state graph as a search space: states are the TLA+ values, actions the labelled edges."""

    def __init__(self, roots, edges):
        self.roots, self.edges = roots, edges

    def init_states(self):
        return self.roots

    def actions(self, key):
        return self.edges.get(key, ())

    def step(self, key, edge):
        return edge[1]


def sets_only_cfg(cfg_path: str) -> str:
    """The .cfg's bound with every invariant, property and constraint off (text of a new .cfg)."""
    from kverify.tla import cfg as cfgmod

    c = cfgmod.parse_file(cfg_path)
    lines = ["\\* " + os.path.basename(cfg_path) + " with its invariants and properties off (kverify/tla/states.py)",
             "CONSTANTS"]
    for k, v in c.constants.items():
        lines.append(f"    {k} = {('TRUE' if v else 'FALSE') if isinstance(v, bool) else v}")
    lines += [f"INIT {c.init or 'Init'}", f"NEXT {c.next or 'Next'}"]
    if c.view:
        lines.append(f"VIEW {c.view}")
    if c.symmetry:
        lines.append(f"SYMMETRY {c.symmetry}")
    return "\n".join(lines) + "\n"


def tlc_graph(cfg_path: str, spec_path: str, timeout: Optional[float] = None) -> Graph:
    """TLC's reachable states at the .cfg's bound, invariants and the deadlock check off."""
    from kverify.tla import runner

    spec_path = os.path.abspath(spec_path)
    with tempfile.TemporaryDirectory(prefix="kverify-dump-") as tmp:
        cfg = os.path.join(tmp, "sets.cfg")
        with open(cfg, "w", encoding="utf-8") as fh:
            fh.write(sets_only_cfg(cfg_path))
        dump = os.path.join(tmp, "graph")
        java, jar = runner.find_java(), runner.find_jar()
        cds, fresh = runner.class_archive_flags(java, jar, runner.FAST_START_FLAGS)
        cmd = [java, *runner.FAST_START_FLAGS, *cds, f"-Djava.io.tmpdir={tmp}", "-cp", jar,
               "tlc2.TLC", "-workers", "1", "-deadlock", "-metadir", tmp, "-dump", "dot,actionlabels", dump,
               "-config", cfg, os.path.basename(spec_path)]
        try:
            proc = subprocess.run(cmd, cwd=os.path.dirname(spec_path), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            runner._keep_archive(fresh, False)
            raise runner.TlcError(f"TLC did not finish within {timeout:g} s on {os.path.basename(cfg_path)}") from None
        runner._keep_archive(fresh, proc.returncode >= 0)
        res = runner.TlcResult(spec_path, cfg_path, "1")
        runner.parse_output(proc.stdout + proc.stderr, res)     # raises TlcError on a spec error
        if not res.complete:
            raise runner.TlcError(f"TLC did not complete the state-set run on {os.path.basename(cfg_path)}")
        return graph_of_dump(dump + ".dot", spec_path, cfg_path, res.distinct)


def graph_of_dump(dot_path: str, spec_path: str, cfg_path: str, distinct: int) -> Graph:
    """The graph in TLC's `-dump dot,actionlabels` file, checked against the run's distinct count."""
    from kverify.tla import models, runner
    from kverify.tla import spec as specmod

    graph = parse_dot(dot_path, set(models.spec_model_variables(specmod.parse_file(spec_path))))
    if len(graph.nodes) != distinct:
        raise runner.TlcError(f"TLC's dump of {os.path.basename(cfg_path)} holds {len(graph.nodes)} states, "
                              f"its summary says {distinct}")
    return graph


# --- the comparison --------------------------------------------------------------------------------------------
@dataclass
class FirstDifference:
    side: str                 # who reaches the state: TLC_SIDE or PY_SIDE
    depth: int
    state: object             # TLA+ form
    trace: list               # [(action, key)] on `side`, from an initial state
    parent: object            # the common state it is reached from (TLA+ form), None at depth 0
    action: object            # the action taken from `parent` on `side`
    other_successors: list    # [(action, key)]: what the other side reaches from `parent` by that action
    native: object = None     # the Python state (explorer side) of `state` or of the other side's closest

    def fields(self) -> list:
        """Leaf differences between the state and the other side's closest successor (same action)."""
        if not self.other_successors:
            return []
        best = min((V.differences(k, self.state) for _, k in self.other_successors), key=len)
        return best

    def lines(self) -> list:
        other = PY_SIDE if self.side == TLC_SIDE else TLC_SIDE
        steps = " -> ".join(_label(a) for a, _ in self.trace[1:]) or "(an initial state)"
        out = [f"first differing state, at depth {self.depth}: only {self.side} reaches it; trace ({self.side}): {steps}"]
        if self.parent is not None:
            out.append(f"  from the state both reach: {V.render(self.parent)}")
            out.append(f"  {self.side} takes {_label(self.action)} to: {V.render(self.state)}")
            if self.other_successors:
                for a, k in self.other_successors:
                    out.append(f"  {other} takes {_label(a)} to: {V.render(k)}")
                diffs = self.fields()
                if diffs:
                    out.append("  they differ in " + "; ".join(
                        f"{p}: {self.side} {V.render(x)}, {other} {V.render(y)}" for p, y, x in diffs))
            else:
                out.append(f"  {other} has no {_label(self.action, name_only=True)} step from that state")
        else:
            out.append(f"  initial state ({self.side}): {V.render(self.state)}")
            for _, k in self.other_successors:
                out.append(f"  initial state ({other}): {V.render(k)}")
            mine = {f for f, _ in self.state[1]} if V.is_rec(self.state) else set()
            theirs = {f for _, k in self.other_successors for f, _ in k[1]} if self.other_successors else mine
            if mine != theirs:
                out.append(f"  the variables differ: {self.side} has {', '.join(sorted(mine - theirs))}; "
                           f"{other} has {', '.join(sorted(theirs - mine))}")
            elif self.fields():
                out.append("  they differ in " + "; ".join(
                    f"{p}: {self.side} {V.render(x)}, {other} {V.render(y)}" for p, y, x in self.fields()))
        if self.native is not None:
            out.append(f"  Python state: {self.native}")
        return out


def _label(a, name_only: bool = False) -> str:
    if a is None:
        return "(init)"
    if isinstance(a, tuple):
        from kverify.tla import names

        name = names.action_to_tla(a[0])
        return name if name_only or len(a) == 1 else f"{name}({', '.join(map(str, a[1:]))})"
    return str(a)


def _tla_name(a) -> str:
    return _label(a, name_only=True)


@dataclass
class SetComparison:
    model: str
    cfg: str
    tlc_states: int
    python_states: int
    only_tlc: int
    only_python: int
    first: Optional[FirstDifference] = None

    @property
    def equal(self) -> bool:
        return self.first is None

    def lines(self) -> list:
        if self.equal:
            return []
        head = (f"state sets differ on {os.path.basename(self.cfg)} (invariants off): TLC {self.tlc_states} states, "
                f"explorer {self.python_states}; {self.only_tlc} only TLC reaches, {self.only_python} only the explorer")
        return [head] + self.first.lines()


def _python_step_to(proto, model: str, py: Graph, src, dst):
    """The explorer's action from state `src` to state `dst` (both TLA+ keys it reaches), or None."""
    node = py.nodes.get(src)
    if node is None or dst not in py.nodes:
        return None
    to_tla = forms.mapping(model)
    for a in proto.actions(node.native):
        if V.rec(**to_tla(proto, proto.step(node.native, a))) == dst:
            return a
    return None


def first_difference(model: str, proto, tlc: Graph, py: Graph) -> Optional[FirstDifference]:
    only = [(n.depth, 0, repr(k), k) for k, n in tlc.nodes.items() if k not in py.nodes]
    only += [(n.depth, 1, repr(k), k) for k, n in py.nodes.items() if k not in tlc.nodes]
    if not only:
        return None
    depth, which, _, key = min(only)
    side, other = (tlc, py) if which == 0 else (py, tlc)
    node = side.nodes[key]
    trace = side.trace(key)
    if side is tlc:
        # TLC names a step of a disjunct with several bound variables after `Next`: every state before
        # the differing one is common, so name those steps with the explorer's action between them
        for i in range(1, len(trace) - 1):
            a = _python_step_to(proto, model, py, trace[i - 1][1], trace[i][1])
            if a is not None:
                trace[i] = (_label(a), trace[i][1])
    succ = []
    if node.parent is None:           # an initial state: compare with the other side's initial states
        succ = [(None, k) for k, n in other.nodes.items() if n.depth == 0]
    else:
        name = _tla_name(node.action)
        if other is tlc:
            edges = tlc.edges.get(node.parent, ())
            succ = [(a, k) for a, k in edges if a == name] or [(a, k) for a, k in edges if a == "Next"]
        else:
            s = py.nodes[node.parent].native
            to_tla = forms.mapping(model)
            named = {_tla_name(e[0]) for e in tlc.edges.get(node.parent, ())}
            for a in proto.actions(s):
                # TLC's "Next": a disjunct TLC did not name; any explorer action TLC never names from there
                if _tla_name(a) == name or (name == "Next" and _tla_name(a) not in named):
                    succ.append((a, V.rec(**to_tla(proto, proto.step(s, a)))))
    native = node.native
    if native is None and succ and other is py:
        native = py.nodes.get(succ[0][1], Node(0, None, None)).native
    return FirstDifference(side.side, depth, key, trace, node.parent, node.action, succ, native)


def compare_sets(model: str, cfg_path: str, spec_path: Optional[str] = None, timeout: Optional[float] = None,
                 tlc: Optional[Graph] = None) -> SetComparison:
    """TLC's and the explorer's reachable states at the .cfg's bound, invariants off on both sides."""
    from kverify.model import registry
    from kverify.tla import cfg as cfgmod
    from kverify.tla import models

    b = cfgmod.bound(model, cfgmod.parse_file(cfg_path))
    spec_path = spec_path or models.spec_file(model)
    if tlc is None:
        tlc = tlc_graph(cfg_path, spec_path, timeout=timeout)
    proto = registry.build(model, b.params, b.behaviours)
    py = python_graph(model, proto)
    only_tlc = sum(1 for k in tlc.nodes if k not in py.nodes)
    only_py = sum(1 for k in py.nodes if k not in tlc.nodes)
    return SetComparison(model, cfg_path, len(tlc.nodes), len(py.nodes), only_tlc, only_py,
                         first_difference(model, proto, tlc, py))


def diff(model: str, cfg_path: str, spec_path: Optional[str] = None) -> list:
    """Lines describing how the state sets differ at the .cfg's bound (empty: the same sets)."""
    return compare_sets(model, cfg_path, spec_path).lines()
