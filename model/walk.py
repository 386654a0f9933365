"""The seeded random walker: the cheapest engine, and the unit of work Spark fans out.

From a seed, pick an initial state and then, step after step, one enabled action uniformly at
random, checking every invariant after every step. The same seed always gives the same trace
(protocols return their enabled actions in a deterministic order), so any finding replays on
one machine from its seed alone.

A step that raises (in `actions`, `step`, an invariant or a `sometimes` predicate) does not end the
caller: it becomes the violation `exception` (`crash_violation`) at the step where it happened, so
a crash is a finding with its trace like any broken invariant, and `replay`/shrinking reproduce it.

With `response_bound=N` a walk also judges the protocol's liveness properties as bounded responses
(model/response.py). Along the walk, and at every step where an obligation starts (a property becomes
pending, or a fault or the failed node's return leaves it pending) the walk follows a fair tail from
there: the run as it would go on if the perturbations stopped at that step (only fair moves: no fault,
not the property's excluded moves; drawn from a generator seeded by the walk's seed, the property's
name and the step), which must discharge the property within N fair steps, invariants checked on the
way. Tails draw nothing from the walk's own generator: the walk's trace is the same with or without them.
"""
from __future__ import annotations

import gc
import os
import random
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from kverify.invariants.core import Violation
from kverify.model.protocol import Protocol, stable_fingerprint


EXCEPTION = "exception"      # the violation name of a step (or a check) that raised
EXCEPTION_STATEMENT = "no step of the protocol, and no check of a state, raises an exception"
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crash_violation(exc: BaseException, step_index: int) -> Violation:
    """The finding for an exception raised at `step_index` (0: the initial state): one line with the
    exception's type, message and innermost frame (file relative to the kverify package)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        f = frames[-1]
        path = os.path.abspath(f.filename)
        where = os.path.relpath(path, _PACKAGE_ROOT) if path.startswith(_PACKAGE_ROOT + os.sep) else os.path.basename(path)
        text += f" (at {where}:{f.lineno} in {f.name})"
    return Violation(EXCEPTION, text, step_index)


@dataclass
class WalkResult:
    seed: int
    steps: int                                   # actions applied
    violation: Optional[Violation] = None
    deadlock: bool = False                       # stopped in a state with no action that is not allowed to be terminal
    actions: Counter = field(default_factory=Counter)   # action name -> times fired
    abstract_fingerprints: set = field(default_factory=set)
    reached: set = field(default_factory=set)    # names of `sometimes` properties reached
    trace: Optional[list] = None                 # the actions, when asked for (a failed tail: the walk, then it)
    # with a response bound (model/response.py): the fair tails' steps (not in `steps`), and per property the
    # tails followed and the most fair steps one took to discharge it (the margin the bound leaves)
    tail_steps: int = 0
    responses: dict = field(default_factory=dict)       # name -> [tails, longest]


class WalkMemo:
    """What the walks of one run already computed about a protocol's states: per distinct state its
    enabled actions and invariant verdict, per action taken from it the successor (the first equal
    state met) and the step invariants' verdict. Only for protocols whose equal states behave
    identically (`memo_safe = True`: the same actions, equal successors, the same verdicts), so a
    walk gives the same trace and the same verdicts with or without it; every state is still checked
    the first time any walk reaches it. Bounded: past `limit` states it starts again empty."""

    __slots__ = ("nodes", "limit", "hits", "misses", "checks")

    def __init__(self, limit: int = 10_000):
        self.nodes: dict = {}
        self.limit = limit
        self.hits = 0
        self.misses = 0
        self.checks = None      # the invariants the verdicts were computed with

    def bind(self, protocol: Protocol) -> None:
        """Start again if the protocol's invariants are not those the verdicts were computed with."""
        checks = (protocol.state_invariants, protocol.step_invariants)
        if self.checks is None or self.checks[0] is not checks[0] or self.checks[1] is not checks[1]:
            self.clear()
            self.checks = checks

    def enter(self, protocol: Protocol, state) -> list:
        """The node of `state` ([state, actions or None, {action index: (node, step verdict)},
        state verdict]), checking the state invariants when it is new."""
        node = self.nodes.get(state)
        if node is None:
            if len(self.nodes) >= self.limit:
                self.clear()
            v = protocol.check_state(state, 0)
            node = self.nodes[state] = [state, None, {}, None if v is None else (v.invariant, v.message)]
        return node

    def clear(self) -> None:
        if not self.nodes:
            return
        for node in self.nodes.values():
            node[2].clear()       # edges hold other nodes: drop them so the states can go
        self.nodes = {}
        gc.collect()              # states may hold cycles, and walks pause the collector


def memo_for(protocol: Protocol) -> Optional[WalkMemo]:
    """The memo the walks of `protocol` share (kept on the protocol object), if it is memo-safe."""
    if not protocol.memo_safe:
        return None
    memo = protocol.__dict__.get("_walk_memo")
    if memo is None:
        memo = protocol.__dict__["_walk_memo"] = WalkMemo()
    return memo


def walk(protocol: Protocol, seed: int, steps: int, *, record_trace: bool = False,
         coverage: bool = False, track_sometimes: bool = True,
         fingerprint_cache: Optional[dict] = None, memo=None, response_bound: int = 0) -> WalkResult:
    """One seeded walk. `fingerprint_cache` (abstract state -> stable fingerprint), shared by the
    caller across many walks, turns the coverage fingerprint of a repeated abstract state into a
    dict lookup. `memo`: a `WalkMemo` to use, None for the protocol's own when it is memo-safe,
    False for none; the trace and the verdicts are the same either way. `response_bound`: fair steps
    within which each liveness property must be discharged (0: liveness not judged; module docstring)."""
    watch = None
    if response_bound:
        from kverify.model.response import ResponseWatch

        watch = ResponseWatch(protocol, response_bound) or None
    if memo is None:
        memo = memo_for(protocol)
    if memo:
        return _walk_memo(protocol, seed, steps, memo, record_trace, coverage, track_sometimes, fingerprint_cache,
                          watch)
    rng = random.Random(seed)
    res = WalkResult(seed=seed, steps=0, trace=[] if record_trace else None)
    try:
        _plain_steps(protocol, rng, steps, res, record_trace, coverage, track_sometimes, fingerprint_cache, watch)
    except Exception as exc:      # a crash is a finding at the step being taken (res.steps)
        res.violation = crash_violation(exc, res.steps)
    return res


def _tails(protocol, res: WalkResult, state, at: int, watch, record_trace: bool) -> bool:
    """From step `at` (in `state`), one fair tail per obligation the step started (module docstring),
    until the property is discharged, its bound runs out, or no fair move is enabled. True when one
    ended in a violation: it is the walk's, and the trace becomes the walk up to `at`, then that tail."""
    from kverify.model.response import fair

    for clock in watch.started:
        prop, tail_clock = clock.prop, clock.copy()
        rng = random.Random(f"{res.seed}:{prop.name}:{at}")
        s, i, tail, v = state, at, [], None
        try:
            while v is None and tail_clock.since is not None:
                moves = [a for a in protocol.actions(s) if fair(protocol, prop, a)]
                if not moves:
                    v = tail_clock.stands_still(s, i, moves)
                    break
                a = moves[rng.randrange(len(moves))]
                i += 1
                tail.append(a)
                nxt = protocol.step(s, a)
                v = protocol.check_step(s, a, nxt, i) if protocol.step_invariants else None
                if v is None:
                    v = protocol.check_state(nxt, i)
                s = nxt
                if v is None:
                    v = tail_clock.after(a, s, i)
        except Exception as exc:     # as in the walk: a crash is a finding at the step being taken
            v = crash_violation(exc, i)
        res.tail_steps += len(tail)
        fig = res.responses.setdefault(prop.name, [0, 0])
        fig[0] += 1
        if tail_clock.answered is not None:
            fig[1] = max(fig[1], tail_clock.answered)
        if v is not None:
            res.violation = v
            if record_trace:
                res.trace[at:] = tail
            return True
    return False


def _plain_steps(protocol, rng, steps, res: WalkResult, record_trace, coverage, track_sometimes,
                 fingerprint_cache, watch=None) -> None:
    inits = protocol.init_states()
    state = inits[rng.randrange(len(inits))] if len(inits) > 1 else inits[0]
    check_state = protocol.check_state
    has_step_invs = bool(protocol.step_invariants)
    note = _noter(protocol, res, coverage, track_sometimes, fingerprint_cache)

    v = check_state(state, 0)
    note(state)
    if v is not None:
        res.violation = v
        return
    if watch is not None:
        watch.start(state)
        if watch.started and _tails(protocol, res, state, 0, watch, record_trace):
            return
    for i in range(1, steps + 1):
        acts = list(protocol.actions(state))
        if not acts:
            res.deadlock = not protocol.allows_terminal(state)
            break
        a = acts[rng.randrange(len(acts))]
        res.steps = i                 # counted before stepping: a crash in `step` blames this step
        res.actions[a[0]] += 1
        if record_trace:
            res.trace.append(a)
        nxt = protocol.step(state, a)
        if has_step_invs:
            v = protocol.check_step(state, a, nxt, i)
            if v is not None:
                res.violation = v
                break
        v = check_state(nxt, i)
        state = nxt
        note(state)
        if v is None and watch is not None:
            v = watch.after(a, state, i)
            if v is None and watch.started and _tails(protocol, res, state, i, watch, record_trace):
                break
        if v is not None:
            res.violation = v
            break


def replay(protocol: Protocol, actions, init_index: int = 0):
    """Re-execute `actions` from initial state `init_index`; returns (states, violation). A step
    that raises gives the violation `exception` (`crash_violation`) where `walk` reports it: the
    step being applied, or, for `actions(state)` raising, the step that reached that state (the
    final state's actions are enumerated too, so a walk that crashed there replays). Raises
    ValueError when an action is not enabled where the trace applies it."""
    states: list = []
    at = 0                                  # the step a crash is blamed on
    try:
        state = protocol.init_states()[init_index]
        states.append(state)
        v = protocol.check_state(state, 0)
        if v is not None:
            return states, v
        for i, a in enumerate(actions, 1):
            at = i - 1
            enabled = list(protocol.actions(state))
            if a not in enabled:
                raise _NotEnabled(f"step {i}: action {a!r} is not enabled")
            at = i
            nxt = protocol.step(state, a)
            v = protocol.check_step(state, a, nxt, i) if protocol.step_invariants else None
            if v is None:
                v = protocol.check_state(nxt, i)
            states.append(nxt)
            state = nxt
            if v is not None:
                return states, v
        for _ in protocol.actions(state):
            pass
    except _NotEnabled:
        raise
    except Exception as exc:
        return states, crash_violation(exc, at)
    return states, None


def crash_site(violation: Violation) -> str:
    """What identifies a crash independently of the values in its message: the exception type and
    the innermost frame ("" for other violations). Shrinking keeps a crash trace only while it
    crashes at the same site."""
    if violation.invariant != EXCEPTION:
        return ""
    kind = violation.message.split(":", 1)[0]
    where = violation.message.rsplit(" (at ", 1)
    return kind + (" at " + where[1] if len(where) == 2 else "")


class _NotEnabled(ValueError):
    """A trace applies an action that is not enabled (replay's documented ValueError)."""


def initial_index(protocol: Protocol, seed: int) -> int:
    """The initial state `walk(protocol, seed, ...)` starts from."""
    n = len(protocol.init_states())
    return random.Random(seed).randrange(n) if n > 1 else 0


def _noter(protocol: Protocol, res: WalkResult, coverage: bool, track_sometimes: bool, fingerprint_cache):
    """The per-state bookkeeping of a walk: coverage fingerprints and `sometimes` properties reached."""
    pending = list(protocol.sometimes()) if track_sometimes else []
    abstract = protocol.abstract
    cache = fingerprint_cache if fingerprint_cache is not None else {}

    def note(s):
        if coverage:
            key = abstract(s)
            fp = cache.get(key)
            if fp is None:
                fp = cache[key] = stable_fingerprint(key)
            res.abstract_fingerprints.add(fp)
        if pending:
            for prop in [p for p in pending if p.predicate(s)]:
                res.reached.add(prop.name)
                pending.remove(prop)
    return note


def _violation(verdict, step_index: int) -> Optional[Violation]:
    return None if verdict is None else Violation(verdict[0], verdict[1], step_index)


def _walk_memo(protocol, seed, steps, memo: WalkMemo, record_trace, coverage, track_sometimes,
               fingerprint_cache, watch=None):
    """`walk` over a memo: the same draws from the same generator, in the same states. The cyclic
    garbage collector pauses meanwhile: the memo keeps many objects alive, which it would otherwise
    traverse again and again (reference counting still frees what a step drops)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    res = WalkResult(seed=seed, steps=0, trace=[] if record_trace else None)
    try:
        _memo_steps(protocol, seed, steps, memo, res, record_trace, coverage, track_sometimes, fingerprint_cache,
                    watch)
    except Exception as exc:      # as in `walk`: a crash is a finding at the step being taken
        res.violation = crash_violation(exc, res.steps)
    finally:
        if paused:
            gc.enable()
    return res


def _memo_steps(protocol, seed, steps, memo: WalkMemo, res: WalkResult, record_trace, coverage, track_sometimes,
                fingerprint_cache, watch=None) -> None:
    memo.bind(protocol)
    rng = random.Random(seed)
    inits = protocol.init_states()
    state = inits[rng.randrange(len(inits))] if len(inits) > 1 else inits[0]
    has_step_invs = bool(protocol.step_invariants)
    note = _noter(protocol, res, coverage, track_sometimes, fingerprint_cache)
    counts = res.actions
    trace = res.trace

    node = memo.enter(protocol, state)
    note(node[0])
    if node[3] is not None:
        res.violation = _violation(node[3], 0)
        return
    if watch is not None:
        watch.start(node[0])
        if watch.started and _tails(protocol, res, node[0], 0, watch, record_trace):
            return
    hits = 0
    for i in range(1, steps + 1):
        acts = node[1]
        if acts is None:
            acts = node[1] = tuple(protocol.actions(node[0]))
        if not acts:
            res.deadlock = not protocol.allows_terminal(node[0])
            break
        k = rng.randrange(len(acts))
        a = acts[k]
        res.steps = i                 # counted before stepping: a crash in `step` blames this step
        counts[a[0]] += 1
        if record_trace:
            trace.append(a)
        edge = node[2].get(k)
        if edge is None:
            nxt = protocol.step(node[0], a)
            sv = protocol.check_step(node[0], a, nxt, i) if has_step_invs else None
            child = memo.enter(protocol, nxt) if sv is None else [nxt, None, {}, None]
            edge = (child, None if sv is None else (sv.invariant, sv.message))
            node[2][k] = edge
        else:
            hits += 1
        if edge[1] is not None:
            res.violation = _violation(edge[1], i)
            break
        node = edge[0]
        note(node[0])
        if node[3] is not None:
            res.violation = _violation(node[3], i)
            break
        if watch is not None:
            v = watch.after(a, node[0], i)
            if v is not None:
                res.violation = v
                break
            if watch.started and _tails(protocol, res, node[0], i, watch, record_trace):
                break
    memo.hits += hits
    memo.misses += res.steps - hits
