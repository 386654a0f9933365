"""Registry of historical behaviours: named switches that re-create real Kafka bugs.

Every component of the reference implementation declares its behaviours in a module named
`behaviours` inside its package under `impl/` (for example `impl/coordinator/behaviours.py`),
by calling `declare(...)` at import time. Components receive the set of switched-on names as a
frozenset and test membership once, at construction, never on a hot path.
"""
from __future__ import annotations

import difflib
import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Behaviour:
    name: str          # kebab-case switch name, e.g. "stale-generation-commit"
    component: str     # "coordinator", "member", "assignor", "replication", "controller", "offsets"
    reference: str     # the JIRA / KIP it re-creates, e.g. "KAFKA-12890"
    description: str   # one line: what the switched-on behaviour does


_REGISTRY: dict[str, Behaviour] = {}
_discovered = False


class UnknownBehaviour(ValueError):
    """Raised for a behaviour name nobody declared; the message is one line, suggestions included."""


def declare(name: str, component: str, reference: str, description: str) -> str:
    """Declare a behaviour (idempotent for an identical declaration); returns its name."""
    b = Behaviour(name, component, reference, description)
    old = _REGISTRY.get(name)
    if old is not None and old != b:
        raise ValueError(f"behaviour {name!r} declared twice with different definitions")
    _REGISTRY[name] = b
    return name


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    import kverify.impl as impl_pkg

    for info in pkgutil.walk_packages(impl_pkg.__path__, impl_pkg.__name__ + "."):
        if info.name.rsplit(".", 1)[-1] == "behaviours":
            importlib.import_module(info.name)


def all_behaviours() -> list[Behaviour]:
    """Every declared behaviour, sorted by component then name."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda b: (b.component, b.name))


def get(name: str) -> Behaviour:
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else " (see `kverify behaviours`)"
        raise UnknownBehaviour(f"unknown behaviour {name!r}{hint}") from None


def validate(names, component: str | None = None) -> frozenset[str]:
    """Check every name is declared (and, if given, belongs to `component`); return a frozenset."""
    out = set()
    for n in names or ():
        b = get(n)
        if component is not None and b.component != component:
            raise UnknownBehaviour(f"behaviour {n!r} belongs to {b.component}, not {component}")
        out.add(n)
    return frozenset(out)


def by_component(component: str) -> list[Behaviour]:
    return [b for b in all_behaviours() if b.component == component]
