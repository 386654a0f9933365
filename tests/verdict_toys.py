"""Tiny protocols for the verdict tests (registered by the tests only, never shipped).

A counter that counts up to `limit`. Switches make it misbehave in the ways a gate must report:
`crash_at=k` makes the step from k raise (a bug in a model or world step), `goal=g` asks for a
`sometimes` property "the counter reaches g" (unreachable when g > limit), `stuck=true` makes the
final state a deadlock, `bad_at=k` breaks the invariant at k.
"""
import sys
import types

from kverify.invariants.core import Invariant, Sometimes
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec

PARAMS = {
    "limit": (4, "count up to this"),
    "crash_at": (-1, "the step leaving this value raises ZeroDivisionError (-1: never)"),
    "goal": (-1, "a `sometimes` property: the counter reaches this value (-1: the limit)"),
    "stuck": (False, "the final state is not an allowed end state (a deadlock)"),
    "bad_at": (-1, "the invariant breaks at this value (-1: never)"),
}
SUPPORTS = frozenset()


class Counter(Protocol):
    name = "counter"

    def __init__(self, params, behaviours=frozenset()):
        self.params = dict(params)
        self.behaviours = behaviours
        self.limit = params["limit"]

    def init_states(self):
        return [0]

    def actions(self, s):
        if s < self.limit:
            yield ("inc", 1)
            yield ("skip", 0)

    def step(self, s, a):
        if s == self.params["crash_at"]:
            return s // (s - s)          # the bug: a step that raises
        return s + a[1] if a[0] == "inc" else s

    def invariants(self):
        bad = self.params["bad_at"]
        return [Invariant("below-bad", "the counter never reaches bad_at",
                          lambda s: f"counter is {s}" if s == bad else None)]

    def sometimes(self):
        goal = self.params["goal"] if self.params["goal"] >= 0 else self.limit
        return [Sometimes("reaches-goal", f"the counter reaches {goal}", lambda s: s == goal)]

    def allows_terminal(self, s):
        return not self.params["stuck"]

    def describe(self, s):
        return {"counter": s}


def make(params, behaviours):
    return Counter(params, behaviours)


def register(monkeypatch, name: str) -> None:
    """Register this toy under registry name `name` for one test (a module of its own holding a
    `SPEC` of that name, as the registry expects one SPEC per module)."""
    from kverify.model import registry

    module = types.ModuleType(f"verdict_toy_{name.replace('-', '_')}")
    module.SPEC = ModelSpec(name=name, make=make, params=PARAMS, supports=SUPPORTS)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(registry.ENTRIES, name, registry.Entry(name, module.__name__, "test toy"))
