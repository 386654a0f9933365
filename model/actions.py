"""Actions written once: a named guard and a named update, as a TLA+ spec writes a disjunct.

Why it exists: a protocol's rules used to live inside one hand-written `actions()` and one
`step()` dispatch per model. Here each action is declared once, with

- `name`    the action's name in traces (`join`, `commit_arrives`, ...); its TLA+ disjunct is
            `tla` (default: the name in CamelCase, `CommitArrives`),
- `domain`  the candidate argument tuples in a state (deterministic order; `()` for no argument),
- `guard`   `guard(proto, state, *args) -> bool`: the enabling condition,
- `update`  `update(proto, state, *args) -> state`: the successor,
- `fault`   whether the action is a fault (crash, loss, failover...): engines remove fault edges
            when they ask whether a good state stays reachable once faults stop,
- `domain_enabled`  the domain already yields only arguments for which the guard holds (a composed
            model whose domain is its inner model's enumeration): the compiled enumerator does not
            test the guard again; `enabled_plain` still does, and tests compare the two.
- `domain_actions`  (with `domain_enabled`) the domain yields the enabled actions themselves,
            `(name, *args)`, as the inner model's enumeration made them: the compiled enumerator
            appends them as they are; `enabled_plain` rebuilds each from this action's name and the
            arguments and tests the guard, so a wrong name or argument is told apart the same way.

`ActionTable` turns a sequence of them into `actions(state)`, `step(state, action)` and
`is_fault(action)`; the BFS explorer, the walker, Spark and Hypothesis (one rule per action) all
read the same table, and the Z3 encodings and the TLA+ modules are checked against its names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from kverify.model.enumerator import compile_enabled

NO_ARGS: tuple = ((),)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@dataclass(frozen=True)
class Action:
    name: str
    guard: Callable[..., bool]
    update: Callable[..., Any]
    domain: Callable[[Any, Any], Iterable[tuple]] = field(default=lambda proto, state: NO_ARGS)
    fault: bool = False
    tla: str = ""
    doc: str = ""
    domain_enabled: bool = False
    domain_actions: bool = False

    @property
    def disjunct(self) -> str:
        """The TLA+ disjunct this action is written as."""
        return self.tla or _camel(self.name)

    def enabled(self, proto, state) -> Iterable[tuple]:
        """The argument tuples for which the guard holds, in domain order."""
        guard = self.guard
        for args in self.domain(proto, state):
            if self.domain_actions:
                args = args[1:]
            if guard(proto, state, *args):
                yield args


class ActionTable:
    """A protocol's actions, in the order `actions()` yields them."""

    __slots__ = ("actions", "by_name", "updates", "faults", "_fast", "_fast_for")

    def __init__(self, actions: Sequence[Action]):
        self._fast, self._fast_for = None, None
        self.actions = tuple(actions)
        self.by_name = {a.name: a for a in self.actions}
        self.updates = {a.name: a.update for a in self.actions}     # step's dispatch, one lookup
        if len(self.by_name) != len(self.actions):
            dup = sorted({a.name for a in self.actions if [b.name for b in self.actions].count(a.name) > 1})
            raise ValueError(f"action names declared twice: {', '.join(dup)}")
        self.faults = frozenset(a.name for a in self.actions if a.fault)

    def names(self) -> frozenset:
        return frozenset(self.by_name)

    def enabled(self, proto, state) -> list:
        """The enabled actions `(name, *args)`, in table order then domain order. Runs the compiled
        enumerator (model/enumerator.py: the guards' bodies inlined) once it exists for the current
        action list; `enabled_plain` is the reference it is checked against."""
        if self._fast_for is not self.actions:
            self._fast, self._fast_for = compile_enabled(self.actions) or self.enabled_plain, self.actions
        return self._fast(proto, state)

    def enabled_plain(self, proto, state) -> list:
        out = []
        for a in self.actions:
            name = a.name
            guard = a.guard
            whole = a.domain_actions
            for args in a.domain(proto, state):
                if whole:
                    args = args[1:]
                if guard(proto, state, *args):
                    out.append((name, *args))
        return out

    def step(self, proto, state, action: tuple):
        return self.updates[action[0]](proto, state, *action[1:])

    def is_fault(self, action: tuple) -> bool:
        return action[0] in self.faults
