"""A bounded-counters protocol that exercises the simulation pipeline without the real models.

The Spark fan-out, the exactly-once accounting, shrinking and the benchmark must be testable on
their own (and on executors, which is why this lives in the shipped package rather than in
tests/). State: a tuple of `counters` integers in [0, limit]. Actions: inc(i), dec(i),
move(i, j). Invariants: the total stays within `cap` (a `cap` below counters*limit breaks it) and
a move conserves the total (`leak=true` makes move add one unit, which breaks it). With
`jam=true` the all-full state has no enabled action and is not an acceptable end (a deadlock).
Reach it with
`kverify simulate kverify.spark.toy_counter:make --param cap=5 ...`.
"""
from __future__ import annotations

from kverify.invariants.core import Invariant, Sometimes
from kverify.model.protocol import Protocol

PARAMS = {
    "counters": (3, "number of counters"),
    "limit": (4, "largest value of one counter"),
    "cap": (-1, "largest allowed total (-1: counters*limit, never broken)"),
    "leak": (False, "move(i, j) adds one extra unit (breaks move-conserves-total)"),
    "jam": (False, "once every counter is at its limit nothing is enabled any more (a deadlock)"),
}


class ToyCounters(Protocol):
    name = "toy-counter"

    def __init__(self, params: dict, behaviours=frozenset()):
        self.params = dict(params)
        self.behaviours = frozenset(behaviours)
        self.n = int(params["counters"])
        self.limit = int(params["limit"])
        cap = int(params["cap"])
        self.cap = self.n * self.limit if cap < 0 else cap
        self.leak = bool(params["leak"])
        self.jam = bool(params.get("jam", False))
        self._invariants = (
            Invariant("sum-within-cap", f"the total of the counters stays <= {self.cap}", self._check_cap),
            Invariant("move-conserves-total", "move(i, j) leaves the total unchanged",
                      self._check_move, kind="step"),
        )
        self._sometimes = (
            Sometimes("some-counter-at-limit", "some counter reaches its limit",
                      lambda s: self.limit in s),
        )

    def init_states(self):
        return [tuple([0] * self.n)]

    def actions(self, s):
        if self.jam and self._full(s):
            return
        for i, v in enumerate(s):
            if v < self.limit:
                yield ("inc", i)
            if v > 0:
                yield ("dec", i)
        for i, v in enumerate(s):
            if v > 0:
                for j, w in enumerate(s):
                    if j != i and w < self.limit - (1 if self.leak else 0):
                        yield ("move", i, j)

    def step(self, s, a):
        out = list(s)
        if a[0] == "inc":
            out[a[1]] += 1
        elif a[0] == "dec":
            out[a[1]] -= 1
        else:
            out[a[1]] -= 1
            out[a[2]] += 2 if self.leak else 1
        return tuple(out)

    def _full(self, s):
        return all(v == self.limit for v in s)

    def allows_terminal(self, s):
        return not (self.jam and self._full(s))

    def invariants(self):
        return self._invariants

    def sometimes(self):
        return self._sometimes

    def abstract(self, s):
        return tuple(sorted(s))

    def describe(self, s):
        return {"counters": list(s), "total": sum(s)}

    def _check_cap(self, s):
        total = sum(s)
        return None if total <= self.cap else f"total {total} > cap {self.cap} (counters {list(s)})"

    def _check_move(self, prev, a, nxt):
        if a[0] != "move" or sum(prev) == sum(nxt):
            return None
        return f"move({a[1]}, {a[2]}) changed the total from {sum(prev)} to {sum(nxt)}"


def make(params: dict, behaviours=frozenset()) -> ToyCounters:
    full = {k: v[0] for k, v in PARAMS.items()}
    full.update(params or {})
    return ToyCounters(full, behaviours)
