"""The two kinds of property every engine checks: `always` (Invariant) and `sometimes` (Sometimes).

An invariant is written once, as a plain function over a protocol's state (or over a *view* of
it that several protocols share), and every engine (BFS explorer, random walker, Hypothesis,
Spark) evaluates the same object. A `Sometimes` is a reachability goal that proves a run was not
vacuous: an engine that never reaches one fails the run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Invariant:
    """An `always` property.

    kind "state": check(state) -> None when it holds, else a one-line explanation naming the
    values that break it. kind "step": check(prev_state, action, next_state) -> same; used for
    monotonicity-style properties that compare two consecutive states.
    """

    name: str                      # kebab-case, stable: reports, baselines and TLA+ use it
    statement: str                 # one line, for reports and `--help`
    check: Callable[..., Optional[str]]
    kind: str = "state"            # "state" | "step"
    # Behaviours known to break it (documentation + the zoo's cross-check); optional.
    broken_by: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in ("state", "step"):
            raise ValueError(f"invariant {self.name}: kind must be 'state' or 'step'")


@dataclass(frozen=True)
class Sometimes:
    """A `sometimes` property: some reachable state satisfies `predicate` (stateright's term)."""

    name: str
    statement: str
    predicate: Callable[[Any], bool]


@dataclass(frozen=True)
class Violation:
    """One broken invariant at one place of a trace."""

    invariant: str
    message: str
    step_index: int                # index of the step after which it broke (0 = initial state)

    def to_json(self) -> dict:
        return {"invariant": self.invariant, "message": self.message, "step": self.step_index}


def bits(mask: int) -> list:
    """Indices of the set bits of `mask` (views carry member/replica sets as bitmasks)."""
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out
