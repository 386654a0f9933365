"""The seeded random walker: the cheapest engine, and the unit of work Spark fans out.

From a seed, pick an initial state and then, step after step, one enabled action uniformly at
random, checking every invariant after every step. The same seed always gives the same trace
(protocols return their enabled actions in a deterministic order), so any finding replays on
one machine from its seed alone.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from kverify.invariants.core import Violation
from kverify.model.protocol import Protocol, stable_fingerprint


@dataclass
class WalkResult:
    seed: int
    steps: int                                   # actions applied
    violation: Optional[Violation] = None
    deadlock: bool = False                       # stopped in a state with no action that is not allowed to be terminal
    actions: Counter = field(default_factory=Counter)   # action name -> times fired
    abstract_fingerprints: set = field(default_factory=set)
    reached: set = field(default_factory=set)    # names of `sometimes` properties reached
    trace: Optional[list] = None                 # the actions, when asked for


def walk(protocol: Protocol, seed: int, steps: int, *, record_trace: bool = False,
         coverage: bool = False, track_sometimes: bool = True,
         fingerprint_cache: Optional[dict] = None) -> WalkResult:
    """One seeded walk. `fingerprint_cache` (abstract state -> stable fingerprint), shared by the
    caller across many walks, turns the coverage fingerprint of a repeated abstract state into a
    dict lookup."""
    rng = random.Random(seed)
    inits = protocol.init_states()
    state = inits[rng.randrange(len(inits))] if len(inits) > 1 else inits[0]
    res = WalkResult(seed=seed, steps=0, trace=[] if record_trace else None)
    pending = list(protocol.sometimes()) if track_sometimes else []
    abstract = protocol.abstract
    check_state = protocol.check_state
    has_step_invs = bool(protocol.step_invariants)

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

    v = check_state(state, 0)
    note(state)
    if v is not None:
        res.violation = v
        return res
    for i in range(1, steps + 1):
        acts = list(protocol.actions(state))
        if not acts:
            res.deadlock = not protocol.allows_terminal(state)
            break
        a = acts[rng.randrange(len(acts))]
        nxt = protocol.step(state, a)
        res.steps = i
        res.actions[a[0]] += 1
        if record_trace:
            res.trace.append(a)
        if has_step_invs:
            v = protocol.check_step(state, a, nxt, i)
            if v is not None:
                res.violation = v
                break
        v = check_state(nxt, i)
        state = nxt
        note(state)
        if v is not None:
            res.violation = v
            break
    return res


def replay(protocol: Protocol, actions, init_index: int = 0):
    """Re-execute `actions` from initial state `init_index`; returns (states, violation).
    Raises ValueError when an action is not enabled where the trace applies it."""
    state = protocol.init_states()[init_index]
    states = [state]
    v = protocol.check_state(state, 0)
    if v is not None:
        return states, v
    for i, a in enumerate(actions, 1):
        enabled = list(protocol.actions(state))
        if a not in enabled:
            raise ValueError(f"step {i}: action {a!r} is not enabled")
        nxt = protocol.step(state, a)
        v = protocol.check_step(state, a, nxt, i) if protocol.step_invariants else None
        if v is None:
            v = protocol.check_state(nxt, i)
        states.append(nxt)
        state = nxt
        if v is not None:
            return states, v
    return states, None


def initial_index(protocol: Protocol, seed: int) -> int:
    """The initial state `walk(protocol, seed, ...)` starts from."""
    n = len(protocol.init_states())
    return random.Random(seed).randrange(n) if n > 1 else 0
