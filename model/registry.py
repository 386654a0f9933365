"""Names -> protocols: how the CLI, replay, the zoo and Spark executors build a protocol.

Each entry names a module that declares `SPEC = ModelSpec(...)` (model/spec.py): its `make`, its
parameters (defaults, ranges, help), the historical behaviours it implements (asking for another one
is an error, not a silent no-op) and its optional hooks. The registry reads `SPEC` only, checks it
when the module is first loaded, and owns parameter parsing: values from the command line arrive as
strings, are converted to the type of their default and range-checked here, with one clear
`ModelError` line, so `make` always receives the complete, validated parameters. Modules are
imported lazily so that a command only pays for the models it uses.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from kverify import behaviours as _behaviours
from kverify.model.spec import ModelError, ModelSpec, Param  # noqa: F401  (re-exported)


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
    Entry("consumer-group", "kverify.model.consumer_group", "abstract KIP-848 consumer group: heartbeats, epochs, reconciliation"),
    Entry("group-world", "kverify.model.worlds.group_world", "impl coordinator + consumer members + network"),
    Entry("consumer-group-world", "kverify.model.worlds.consumer_group_world", "impl KIP-848 coordinator + consumer clients + network"),
    Entry("replication-world", "kverify.model.worlds.replication_world", "impl brokers + controller + clients"),
    Entry("offsets-world", "kverify.model.worlds.offsets_world", "impl group committing through replicated __consumer_offsets"),
    Entry("assignor-rounds", "kverify.model.worlds.assignor_rounds", "a group's life across rebalances with one impl assignor"),
]}


def names() -> list[str]:
    return sorted(ENTRIES)


def module_for(name: str):
    try:
        entry = ENTRIES[name]
    except KeyError:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(names())}") from None
    return importlib.import_module(entry.module)


_SPECS: dict = {}


def spec_for(name: str) -> ModelSpec:
    """The module's declared `SPEC`, checked once when first loaded (model/spec.py)."""
    spec = _SPECS.get(name)
    if spec is None:
        mod = module_for(name)
        spec = mod.__dict__.get("SPEC")
        if not isinstance(spec, ModelSpec):
            raise ModelError(f"model {name!r}: {ENTRIES[name].module} declares no SPEC = ModelSpec(...)")
        if spec.name != name:
            raise ModelError(f"model {name!r}: its SPEC is named {spec.name!r}")
        spec.validate()
        _SPECS[name] = spec
    return spec


def parse_params(name: str, given: dict) -> dict:
    """The complete, validated parameters: `given` (values may be strings from the CLI) over the
    model's defaults; one-line ModelError for an unknown name or a bad value."""
    return spec_for(name).resolve(given)


def build(name: str, params: dict | None = None, behaviours=()):
    """Build a protocol by name; unknown names, parameters or behaviours raise ModelError /
    UnknownBehaviour with a one-line message."""
    spec = spec_for(name)
    p = spec.resolve(params or {})
    b = _behaviours.validate(behaviours)
    unsupported = sorted(b - spec.supports)
    if unsupported:
        where = [n for n in names() if unsupported[0] in supports(n)]
        hint = f" (it applies to: {', '.join(where)})" if where else ""
        raise ModelError(f"model {name!r} does not implement behaviour {unsupported[0]!r}{hint}")
    return spec.make(p, b)


def supports(name: str) -> frozenset:
    """Behaviours the model implements (empty when its module cannot be imported yet)."""
    try:
        return spec_for(name).supports
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
