"""Which protocol a simulation runs, in a form that travels to Spark executors.

A `WorldSpec` is a small frozen value (name, parameters, behaviours, steps per run): executors
rebuild the protocol from it rather than receiving a pickled protocol object, so a run on a
cluster builds exactly what `--engine inline` builds. The name is a registry name
(model/registry.py: `group`, `group-world`, ...) or `package.module:function` naming any
importable `make(params, behaviours) -> Protocol` (with an optional `PARAMS` dict of defaults in
the same module), which is how the tests and the benchmark run the toy model.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from kverify import behaviours as _behaviours
from kverify.model import registry


class WorldError(ValueError):
    """Bad world name or parameter (one-line message)."""


@dataclass(frozen=True)
class WorldSpec:
    name: str
    params: tuple = ()              # sorted (key, value) pairs, values already converted
    behaviours: tuple = ()          # sorted names
    steps: int = 100

    def build(self):
        return _make(self.name, dict(self.params), frozenset(self.behaviours))

    @property
    def is_registry_name(self) -> bool:
        return ":" not in self.name


def resolve(name: str, raw_params: dict | None = None, behaviours=(), steps: int = 100) -> WorldSpec:
    """Validate everything on the driver (one clear error) and return the spec executors use."""
    if steps < 1:
        raise WorldError(f"--steps must be at least 1, got {steps}")
    if ":" in name:
        module = _factory_module(name)
        spec = getattr(module, "PARAMS", {})
        params = {k: v[0] for k, v in spec.items()}
        for key, raw in (raw_params or {}).items():
            if spec and key not in spec:
                raise WorldError(f"world {name!r} has no parameter {key!r}; known: {', '.join(sorted(spec)) or 'none'}")
            params[key] = registry._convert(name, key, raw, spec[key][0]) if key in spec else raw
        beh = _behaviours.validate(behaviours)
    else:
        try:
            params = registry.parse_params(name, raw_params or {})
        except ModuleNotFoundError as exc:
            raise WorldError(f"world {name!r} is registered but its module is not available yet ({exc.name})") from None
        beh = _behaviours.validate(behaviours)
    ws = WorldSpec(name, tuple(sorted(params.items())), tuple(sorted(beh)), int(steps))
    ws.build()  # fail here, on the driver, rather than in every task
    return ws


def _factory_module(name: str):
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise WorldError(f"cannot import {module_name!r} for world {name!r}: {exc}") from None
    if not callable(getattr(module, attr, None)):
        raise WorldError(f"{module_name} has no function {attr!r} (world {name!r})")
    return module


def _make(name: str, params: dict, behaviours: frozenset):
    if ":" in name:
        module_name, _, attr = name.partition(":")
        return getattr(importlib.import_module(module_name), attr)(params, behaviours)
    return registry.module_for(name).make(params, behaviours)
