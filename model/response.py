"""Bounded response: the liveness properties judged on single runs (walks, Spark walks, replay).

Why it exists: the explorer checks each `Eventually` property (invariants/liveness.py) on the whole
state graph (model/search/liveness.py), which only small bounds allow. Random walks reach larger
bounds but see one run: there a property is checked as a bounded response, written once here,

  a state where the property is pending, followed by `bound` fair moves (no fault, not one of the
  property's `excluded` moves such as the failed node's return) none of which discharges it, or by
  a state where it is still pending and no fair move is enabled, is a violation.

A perturbation (a fault or an excluded move) while it is pending starts the count again: the response
is owed once perturbations stop. `Response` is that rule as a clock fed one step at a time; walks
(model/walk.py) run it along the walk and, from every step where an obligation starts (the property
becomes pending, or a perturbation leaves it pending), along a fair tail: the run as it would go on
if the perturbations stopped there. `bounded_response` runs it over a recorded trace, which is how
`kverify replay` re-judges a walk's record (`replay_response`). The bound is a count of steps, never
seconds.
"""
from __future__ import annotations

from typing import Optional

from kverify.invariants.core import Violation

# Fair steps within which a pending property must be discharged, unless the caller gives another bound.
# Measured on the correct worlds (bench/liveness_responses.py: 2,000 walks of 100 steps per `liveness:walk/*`
# check, 25 Nov 2026) the longest responses were 95 fair steps (leader-failover, 12,427 tails), 114
# (reassignment-completes, 3,671), 17 (commit-readable, 271) and 28 (group-stabilises, 3,505): the bound is 3.5x
# the longest, while a run that never responds is still cut after a few hundred steps.
DEFAULT_BOUND = 400
REPLAYER = "kverify.model.response:replay_response"


def properties_of(protocol) -> tuple:
    """The protocol's `Eventually` properties (`Protocol.liveness()`; none when it declares none)."""
    return tuple(protocol.liveness())


def fair(protocol, prop, action) -> bool:
    """A move that counts towards `prop`'s response: neither a fault nor one of its excluded moves."""
    return not protocol.is_fault(action) and not prop.excluded(action)


class Response:
    """The bounded-response rule for one property along one run. `since`: the step from which fair
    moves are counted (None: discharged); `started`: the last step fed started an obligation (count
    from there); `answered`: the fair steps the last discharge took (None: not discharged by a fair move)."""

    __slots__ = ("protocol", "prop", "bound", "since", "started", "answered")

    def __init__(self, protocol, prop, bound: int):
        if bound < 1:
            raise ValueError(f"the response bound must be at least 1 step, got {bound}")
        self.protocol, self.prop, self.bound = protocol, prop, bound
        self.since: Optional[int] = None
        self.started = False
        self.answered: Optional[int] = None

    def copy(self) -> "Response":
        c = Response(self.protocol, self.prop, self.bound)
        c.since = self.since
        return c

    def start(self, state) -> None:
        self.since = 0 if self.prop.pending(state) is not None else None
        self.started = self.since is not None

    def after(self, action, state, i: int) -> Optional[Violation]:
        """Feed step `i` (`action` led to `state`); the violation when the bound runs out here."""
        msg = self.prop.pending(state)
        self.started, self.answered = False, None
        if msg is None:
            if self.since is not None and fair(self.protocol, self.prop, action):
                self.answered = i - self.since
            self.since = None
            return None
        if self.since is None or not fair(self.protocol, self.prop, action):
            self.since, self.started = i, True              # newly pending, or perturbed: count from here
        elif i - self.since >= self.bound:
            return Violation(self.prop.name, f"still pending {self.bound} fair steps after step {self.since}: {msg}", i)
        return None

    def stands_still(self, state, i: int, moves=None) -> Optional[Violation]:
        """The violation when the property is pending in `state` (step `i`) and no fair move is enabled
        (`moves`: the enabled actions, when the caller has them)."""
        if self.since is None:
            return None
        moves = self.protocol.actions(state) if moves is None else moves
        if any(fair(self.protocol, self.prop, a) for a in moves):
            return None
        msg = self.prop.pending(state)
        return Violation(self.prop.name, f"pending since step {self.since} and no fair move is enabled: {msg}", i)


class ResponseWatch:
    """One `Response` per property of the protocol, fed together along a walk; `started`: the clocks
    whose obligation the last step started (the walk follows a fair tail for each)."""

    def __init__(self, protocol, bound: int):
        self.bound = bound
        self.clocks = [Response(protocol, p, bound) for p in properties_of(protocol)]
        self.started: list = []

    def __bool__(self) -> bool:
        return bool(self.clocks)

    def start(self, state) -> None:
        for c in self.clocks:
            c.start(state)
        self.started = [c for c in self.clocks if c.started]

    def after(self, action, state, i: int) -> Optional[Violation]:
        found = None
        for c in self.clocks:
            v = c.after(action, state, i)
            if found is None:
                found = v
        self.started = [c for c in self.clocks if c.started]
        return found


def bounded_response(protocol, prop, init_index: int, actions: list, bound: int) -> Optional[Violation]:
    """`Response` over a recorded trace from initial state `init_index`: the violation where the bound
    runs out, or at the end of the trace when the property is pending there and no fair move is enabled."""
    clock = Response(protocol, prop, bound)
    state = protocol.init_states()[init_index]
    clock.start(state)
    for i, a in enumerate(actions, 1):
        state = protocol.step(state, a)
        v = clock.after(a, state, i)
        if v is not None:
            return v
    return clock.stands_still(state, len(actions))


def response_record(protocol, violation: Violation, actions: list, bound: int, *, engine: str, seed=None,
                    init_index: int = 0, model_name: Optional[str] = None, perturbed: Optional[int] = None):
    """The counterexample record of a bounded-response violation: the trace up to the step where the
    bound ran out, the property's statement, the bound, and `replay_response` as its replayer."""
    from kverify.reports.record import from_trace

    cx = from_trace(protocol, actions, violation, engine=engine, seed=seed, init_index=init_index,
                    model_name=model_name)
    prop = {p.name: p for p in properties_of(protocol)}.get(violation.invariant)
    if prop is not None:
        cx.statement = f"{prop.statement} (bounded response: within {bound} fair steps)"
    cx.extra["replayer"] = REPLAYER
    cx.extra["response_bound"] = bound
    if perturbed is not None:
        cx.extra["perturbations_stop_after"] = perturbed      # the walk's last step that could perturb
    return cx


def replay_response(cx) -> tuple:
    """Replayer (reports/replayer.py `extra["replayer"]`) of a bounded-response record: every step is
    enabled, no invariant breaks, and the property's bound runs out at the recorded step."""
    from kverify.model.walk import replay

    p = _build(cx.model, dict(cx.params), frozenset(cx.behaviours))
    prop = {q.name: q for q in properties_of(p)}.get(cx.invariant)
    if prop is None:
        return False, f"no longer reproduces: {cx.model} declares no liveness property {cx.invariant!r}"
    try:
        _, v = replay(p, cx.actions, cx.init_index)
    except ValueError as exc:
        return False, f"no longer reproduces: the trace cannot be executed any more ({exc})"
    if v is not None:
        return False, f"changed: now `{v.invariant}` breaks at step {v.step_index}: {v.message}"
    bound = int(cx.extra["response_bound"])
    v = bounded_response(p, prop, cx.init_index, cx.actions, bound)
    if v is not None and v.step_index == cx.violation_step:
        return True, f"reproduced: `{cx.invariant}` at step {v.step_index}: {v.message}"
    if v is None:
        return False, f"no longer reproduces: `{cx.invariant}` is answered within {bound} fair steps"
    return False, f"changed: `{cx.invariant}` now fails at step {v.step_index} (recorded: {cx.violation_step})"


def _build(model: str, params: dict, behaviours: frozenset):
    """The protocol a record names: a registry model, or a `module:function` factory (kverify simulate)."""
    import importlib

    if ":" in model:
        module, _, attr = model.partition(":")
        return getattr(importlib.import_module(module), attr)(params, behaviours)
    from kverify.model import registry

    return registry.build(model, params, behaviours)
