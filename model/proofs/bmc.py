"""Bounded model checking with Z3: is a bad state (or bad step) reachable from an initial state in at
most k steps? An induction proof that fails on a counterexample to induction (CTI) says nothing
about reachability: the CTI's pre-state may be unreachable. BMC answers the other half: a trace from
the initial state, or "clean up to depth k".

The encoding (duck-typed; `group_inductive.Enc` is one) offers:
  enc.state(name) -> dict field -> z3 term   (fresh constants for one state; the same keys each call)
  enc.init(s) -> BoolRef                     (s is an initial state)
  enc.actions(s) -> iterable of tuples (label, action, guard, next_state_dict, *extra)
                                             (label: readable str; action: JSON-able tuple; guard: BoolRef;
                                              next_state_dict: the successor's terms over s; extra: anything
                                              the step predicate needs, e.g. `completed`, `extra`)
  enc.same(t, nxt) -> BoolRef                (the state t equals the successor terms nxt)
Globals shared by every state (parameters such as a symbolic max generation) are plain z3 constants
the encoding reuses; `init` constrains them.

    bmc(enc, k, bad_state=None, bad_step=None, decode=None, work=WORK) -> BmcResult
      bad_state(s) -> BoolRef                  a state is bad (checked at depths 0..k)
      bad_step(s, t, act_tuple) -> BoolRef     the step s -act-> t is bad (act_tuple: the whole tuple from
                                               enc.actions(s), so extra items are available)
      decode(model, s) -> dict                 readable state; default: {field: python value}

Depths are searched smallest first with one incremental solver (push/pop per depth), so a falsified
result is a shortest counterexample. At each step a selector integer picks which action fires, so the
trace names its actions. `BmcResult`: status "falsified" (depth, trace = [{"action", "label", "state"}]
starting with the initial state, action None; `violation` = "state" or "step"), "clean" (no violation
within depth k) or "unknown" (the solver ran out of its work budget, or gave up, at `depth`; the depths
below were clean). Each depth's query is bounded by `work` units of Z3's deterministic resource counter
(`kverify.model.proofs.limit`), so the depth reached does not depend on the machine's load.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import z3

from kverify.model.proofs import limit

WORK = 50_000_000      # default per-depth budget in Z3 resource units (callers size their own)


@dataclass
class BmcResult:
    status: str                                   # falsified | clean | unknown
    bound: int                                    # k searched (clean: no violation at depths 0..bound)
    depth: Optional[int] = None                   # falsified: trace length in steps; unknown: depth that timed out
    trace: list = field(default_factory=list)     # [{"action", "label", "state"}], first = initial state
    violation: Optional[str] = None               # "state" | "step"
    reason: str = ""                              # unknown: the solver's reason
    seconds: float = 0.0

    def as_counterexample(self) -> dict:
        """The result as a counterexample dict (the shape `to_record` renders)."""
        return {"kind": "bmc", "depth": self.depth, "violation": self.violation, "trace": self.trace}


def z3_var(name: str, kind: str, width: int):
    """A state field's Z3 variable: kind "int", "bool", or any bit-vector kind of the given width."""
    if kind == "int":
        return z3.Int(name)
    if kind == "bool":
        return z3.Bool(name)
    return z3.BitVec(name, width)


def default_decode(model: z3.ModelRef, s: dict) -> dict:
    out = {}
    for name, term in s.items():
        v = model.eval(term, model_completion=True)
        if z3.is_true(v) or z3.is_false(v):
            out[name] = z3.is_true(v)
        elif z3.is_int_value(v) or z3.is_bv_value(v):
            out[name] = v.as_long()
        else:
            out[name] = str(v)
    return out


class _Unroller:
    """The unrolled path s0 -a0-> s1 -a1-> ... with one action selector per step."""

    def __init__(self, enc, solver: z3.Solver):
        self.enc, self.solver = enc, solver
        self.states = [enc.state("k0")]
        self.acts: list[list[tuple]] = []       # acts[i]: the action tuples enabled over states[i]
        self.selectors: list[z3.ArithRef] = []
        self.constraints: list = []             # everything added (for a fresh solver per depth)
        self.add(enc.init(self.states[0]))

    def add(self, *cs):
        self.constraints.extend(cs)
        self.solver.add(*cs)

    def extend(self):
        """Add step i = len(selectors): states[i] -> states[i+1]."""
        i = len(self.selectors)
        s, t = self.states[i], self.enc.state(f"k{i + 1}")
        acts = list(self.enc.actions(s))
        sel = z3.Int(f"bmc_action_{i}")
        self.add(sel >= 0, sel < len(acts))
        for j, a in enumerate(acts):
            self.add(z3.Implies(sel == j, z3.And(a[2], self.enc.same(t, a[3]))))
        self.states.append(t)
        self.acts.append(acts)
        self.selectors.append(sel)

    def bad_at(self, d: int, bad_state, bad_step):
        """Violation exactly at depth d: state d is bad, or step d-1 is."""
        out = []
        if bad_state is not None:
            out.append(bad_state(self.states[d]))
        if bad_step is not None and d > 0:
            s, t, sel = self.states[d - 1], self.states[d], self.selectors[d - 1]
            out.append(z3.Or([z3.And(sel == j, bad_step(s, t, a)) for j, a in enumerate(self.acts[d - 1])]))
        return z3.Or(out) if out else z3.BoolVal(False)

    def trace(self, model: z3.ModelRef, d: int, decode) -> list:
        out = [{"action": None, "label": "initial state", "state": decode(model, self.states[0])}]
        for i in range(d):
            a = self.acts[i][model.eval(self.selectors[i], model_completion=True).as_long()]
            out.append({"action": list(a[1]), "label": a[0], "state": decode(model, self.states[i + 1])})
        return out


def bmc(enc, k: int, bad_state: Optional[Callable] = None, bad_step: Optional[Callable] = None,
        decode: Optional[Callable] = None, work: int = WORK, fresh_solver: Optional[Callable] = None) -> BmcResult:
    """Search depths 0..k for a bad state/step reachable from `enc.init` (see the module docstring).
    `work` bounds each depth's query (Z3 resource units, see `limit`). `fresh_solver()`, when given, makes a new solver that
    checks each depth from scratch (e.g. a tactic pipeline with `solve-eqs`, which incremental
    solving bypasses: ~10x faster on the replication encoding)."""
    if bad_state is None and bad_step is None:
        raise ValueError("bmc needs bad_state or bad_step")
    decode = decode or default_decode
    t0 = time.perf_counter()
    solver = limit(z3.Solver(), work)
    path = _Unroller(enc, solver)
    for d in range(k + 1):
        if d > 0:
            path.extend()
        query = solver
        if fresh_solver is not None:
            query = limit(fresh_solver(), work)
            query.add(*path.constraints)
        query.push()
        query.add(path.bad_at(d, bad_state, bad_step))
        r = query.check()
        if r == z3.sat:
            m = query.model()
            kind = "state" if bad_state is not None and z3.is_true(
                m.eval(bad_state(path.states[d]), model_completion=True)) else "step"
            return BmcResult("falsified", k, d, path.trace(m, d, decode), kind,
                             seconds=round(time.perf_counter() - t0, 3))
        if r == z3.unknown:
            return BmcResult("unknown", k, d, reason=query.reason_unknown(),
                             seconds=round(time.perf_counter() - t0, 3))
        query.pop()
    return BmcResult("clean", k, seconds=round(time.perf_counter() - t0, 3))
