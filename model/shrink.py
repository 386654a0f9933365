"""Shrinking a failing action sequence to a minimal one (delta debugging).

A random walk that breaks an invariant usually carries many irrelevant steps. `shrink_trace`
removes chunks of the action sequence (Zeller's ddmin, then single actions until nothing more can
go) and keeps a candidate only when replaying it from the same initial state still breaks the
*same* invariant. A candidate in which some action is not enabled where it is applied is simply
"not failing" -- it is never repaired or skipped over. The result is 1-minimal: removing any one
action from it no longer reproduces the violation (unless the test budget ran out first, which
the result says). A crash (the violation `exception`, see model/walk.py) shrinks like an invariant,
keeping only candidates that crash at the same site (exception type and innermost frame).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from kverify.invariants.core import Violation
from kverify.model.protocol import Protocol
from kverify.model.walk import crash_site, replay

DEADLOCK = "deadlock"   # pseudo-invariant: a state without enabled actions that must not be terminal


@dataclass
class ShrinkResult:
    actions: list                 # the shrunk sequence (ends with the action after which it breaks)
    violation: Violation          # the violation the shrunk sequence produces
    original_length: int
    tests: int                    # candidate replays performed
    minimal: bool                 # True: 1-minimal; False: the test budget ran out first


def ddmin(items: Sequence, fails: Callable[[list], bool], *, budget: int = 5000) -> tuple[list, int, bool]:
    """Smallest sub-sequence (order kept) of `items` for which `fails` holds, by delta debugging.
    `fails(list(items))` must hold. Returns (sequence, tests used, finished within budget)."""
    current = list(items)
    tests = 0
    n = 2
    while len(current) >= 2:
        chunk = -(-len(current) // n)
        reduced = False
        for start in range(0, len(current), chunk):
            if tests >= budget:
                return current, tests, False
            candidate = current[:start] + current[start + chunk:]
            tests += 1
            if candidate and fails(candidate):
                current = candidate
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(n * 2, len(current))
    # Leaving the loop without a reduction at chunk size 1 means every single removal was tried
    # on the final sequence and none still fails: it is 1-minimal.
    return current, tests, True


def replays_to(protocol: Protocol, actions: Sequence, init_index: int, invariant: str,
               site: Optional[str] = None) -> Optional[Violation]:
    """Replay `actions`; the violation if it is one of `invariant` (at any step; for a crash, at
    `site` when given), else None. An action that is not enabled where it is applied makes the
    candidate not failing."""
    try:
        states, violation = replay(protocol, actions, init_index)
    except ValueError:
        return None
    if invariant == DEADLOCK:
        if violation is not None:
            return None
        last = states[-1]
        if any(True for _ in protocol.actions(last)) or protocol.allows_terminal(last):
            return None
        return Violation(DEADLOCK, "no action is enabled in a state that must not be terminal", len(actions))
    if violation is None or violation.invariant != invariant:
        return None
    if site is not None and crash_site(violation) != site:
        return None
    return violation


def shrink_trace(protocol: Protocol, actions: Sequence, invariant: str, init_index: int = 0,
                 *, budget: int = 5000) -> ShrinkResult:
    """Shrink `actions` (which, replayed from `init_index`, break `invariant`) to a minimal trace
    breaking the same invariant. Raises ValueError when the input itself does not reproduce it."""
    original = list(actions)
    first = replays_to(protocol, original, init_index, invariant)
    if first is None:
        raise ValueError(f"the given trace does not break {invariant!r} when replayed")
    # Anything after the breaking step is irrelevant: cut there before searching.
    current = original[:first.step_index] if invariant != DEADLOCK else original
    site = crash_site(first) or None

    def fails(candidate: list) -> bool:
        return replays_to(protocol, candidate, init_index, invariant, site) is not None

    if current and first.step_index > 0:
        current, tests, finished = ddmin(current, fails, budget=budget)
    else:
        tests, finished = 0, True
    final = replays_to(protocol, current, init_index, invariant, site)
    assert final is not None  # every accepted candidate was checked to fail
    if invariant != DEADLOCK:
        current = current[:final.step_index]
    return ShrinkResult(current, final, len(original), tests + 1, finished)
