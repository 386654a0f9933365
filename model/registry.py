"""Names -> protocols: how the CLI, replay, the zoo and Spark executors build a protocol.

Each entry names a module exposing `make(params: dict, behaviours: frozenset) -> Protocol`,
`PARAMS: dict[str, tuple[default, one-line help]]` and `SUPPORTS: frozenset` (the historical
behaviours the model implements; asking for another one is an error, not a silent no-op). Modules are imported lazily so that a command
only pays for the models it uses. Parameters given on the command line arrive as strings and are
converted to the type of their default here, with one clear error for a bad name or value.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from kverify import behaviours as _behaviours


@dataclass(frozen=True)
class Entry:
    name: str
    module: str
    description: str


# One line per model or world. The abstract models are small enough for exhaustive search; the
# *-world entries wrap the reference implementation (impl/) behind the same interface.
ENTRIES: dict[str, Entry] = {e.name: e for e in [
    Entry("group", "kverify.model.group", "abstract group membership, rebalancing and offset commits"),
    Entry("replication", "kverify.model.replication", "abstract replication, ISR, HW and leader election"),
    Entry("offsets", "kverify.model.offsets", "abstract group offsets on the replicated offsets partition"),
    Entry("group-world", "kverify.model.worlds.group_world", "impl coordinator + consumer members + network"),
    Entry("replication-world", "kverify.model.worlds.replication_world", "impl brokers + controller + clients"),
    Entry("offsets-world", "kverify.model.worlds.offsets_world", "impl group committing through replicated __consumer_offsets"),
    Entry("assignor-rounds", "kverify.model.worlds.assignor_rounds", "a group's life across rebalances with one impl assignor"),
]}


class ModelError(ValueError):
    """Bad model name or parameter; the message is one line."""


def names() -> list[str]:
    return sorted(ENTRIES)


def module_for(name: str):
    try:
        entry = ENTRIES[name]
    except KeyError:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(names())}") from None
    return importlib.import_module(entry.module)


def parse_params(name: str, given: dict) -> dict:
    """Merge `given` (values may be strings from the CLI) over the model's defaults."""
    spec = module_for(name).PARAMS
    out = {k: v[0] for k, v in spec.items()}
    for key, raw in (given or {}).items():
        if key not in spec:
            raise ModelError(f"model {name!r} has no parameter {key!r}; known: {', '.join(sorted(spec)) or 'none'}")
        default = spec[key][0]
        out[key] = _convert(name, key, raw, default)
    return out


def _convert(model, key, raw, default):
    if not isinstance(raw, str) or isinstance(default, str):
        return raw
    try:
        if isinstance(default, bool):
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        raise ModelError(f"model {model!r}: parameter {key}={raw!r} is not a valid {type(default).__name__}") from None
    return raw


def build(name: str, params: dict | None = None, behaviours=()):
    """Build a protocol by name; unknown names, parameters or behaviours raise ModelError /
    UnknownBehaviour with a one-line message."""
    mod = module_for(name)
    p = parse_params(name, params or {})
    b = _behaviours.validate(behaviours)
    unsupported = sorted(b - supports(name))
    if unsupported:
        where = [n for n in names() if unsupported[0] in supports(n)]
        hint = f" (it applies to: {', '.join(where)})" if where else ""
        raise ModelError(f"model {name!r} does not implement behaviour {unsupported[0]!r}{hint}")
    return mod.make(p, b)


def supports(name: str) -> frozenset:
    """Behaviours the model implements (empty when the module declares none)."""
    try:
        return frozenset(getattr(module_for(name), "SUPPORTS", frozenset()))
    except ImportError:
        return frozenset()


def parse_kv(items) -> dict:
    """`["k=v", ...]` from `--param` flags -> dict (strings)."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise ModelError(f"--param expects k=v, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out
