"""Which protocol a simulation runs, in a form that travels to Spark executors.

A `WorldSpec` is a small frozen value (name, parameters, behaviours, steps per run): executors
rebuild the protocol from it rather than receiving a pickled protocol object, so a run on a
cluster builds exactly what `--engine inline` builds. The name is a registry name
(model/registry.py: `group`, `group-world`, ...) or `package.module:function` naming any
importable `make(params, behaviours) -> Protocol` (with an optional `SPEC = ModelSpec(...)` in the
same module, model/spec.py, for its parameters), which is how the tests and the benchmark run the toy model.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, replace

from kverify import behaviours as _behaviours
from kverify.model import registry
from kverify.model.spec import ModelSpec


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
        spec = factory_spec(name)
        try:
            params = spec.resolve(raw_params or {}) if spec is not None else dict(raw_params or {})
        except registry.ModelError as exc:
            raise WorldError(str(exc)) from None
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


def factory_spec(name: str):
    """The ModelSpec of a `module:function` world: the module's `SPEC`, or (older toy modules) one
    made from its `PARAMS`; None when it declares neither (parameters then pass through as given)."""
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise WorldError(f"cannot import {module_name!r} for world {name!r}: {exc}") from None
    factory = module.__dict__.get(attr)
    if not callable(factory):
        raise WorldError(f"{module_name} has no function {attr!r} (world {name!r})")
    spec = module.__dict__.get("SPEC")
    if isinstance(spec, ModelSpec):
        return replace(spec, name=name, make=factory)
    params = module.__dict__.get("PARAMS")     # TRANSITIONAL: until the toy modules declare SPEC
    return ModelSpec(name=name, make=factory, params=params) if params else None


def _make(name: str, params: dict, behaviours: frozenset):
    if ":" in name:
        module_name, _, attr = name.partition(":")
        return importlib.import_module(module_name).__dict__[attr](params, behaviours)
    return registry.spec_for(name).make(params, behaviours)
