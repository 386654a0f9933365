"""A model's declared specification: parameters, supported behaviours and optional hooks, in one value.

Why it exists: a model module used to expose its parameters, behaviours and optional hooks as loose
module attributes (`PARAMS`, `SUPPORTS`, `WALK_PARAMS`, `HUNT_PARAMS`, `STATE_FIELDS`, ...) that
engines found with `getattr`, so a misspelt hook was silently ignored and every constructor re-merged
defaults and hand-wrote range errors. Now each model module declares

    SPEC = ModelSpec(name="group-world", make=make, params={...}, supports=SUPPORTS, walk_params={...})

A misspelt keyword is a `TypeError` when the module is imported (dataclass keywords), and the
registry (model/registry.py) checks the spec when it loads the module (defaults inside their ranges,
hunt/walk parameters known and valid, hunted behaviours supported). The registry alone parses and
range-checks parameters (`ModelSpec.resolve`); `make` always receives the complete, validated dict.

Hooks that belong to one built protocol rather than to the module (`memo_safe`, `check_refinement`)
are declared on `kverify.model.protocol.Protocol` with their defaults.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Optional


class ModelError(ValueError):
    """Bad model name, parameter or specification; the message is one line."""


class Param(NamedTuple):
    """One model parameter. A NamedTuple so that `param[0]` (the default) and `param[1]` (the help)
    keep working where a `(default, help)` pair was read. `lo`/`hi` bound numbers (inclusive);
    `choices` lists the allowed values."""

    default: Any
    help: str
    lo: Optional[float] = None
    hi: Optional[float] = None
    choices: Optional[tuple] = None

    def convert(self, model: str, key: str, raw) -> Any:
        """`raw` (a CLI string or a Python value) as a value of the default's type, range-checked;
        ModelError with one line otherwise."""
        value = _typed(model, key, raw, self.default)
        if self.choices is not None and value not in self.choices:
            raise ModelError(f"model {model!r}: parameter {key}={value!r} must be one of "
                             f"{', '.join(str(c) for c in self.choices)}")
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            if self.lo is not None and self.hi is not None:
                bound = f"between {self.lo} and {self.hi}"
            else:
                bound = f">= {self.lo}" if self.lo is not None else f"<= {self.hi}"
            raise ModelError(f"model {model!r}: parameter {key}={value!r} must be {bound}")
        return value


def _typed(model: str, key: str, raw, default):
    kind = type(default)
    if default is None or isinstance(raw, kind) and not (kind is int and isinstance(raw, bool)):
        return raw
    bad = ModelError(f"model {model!r}: parameter {key}={raw!r} is not a valid {kind.__name__}")
    if isinstance(raw, str):
        text = raw.strip()
        if kind is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise bad
        try:
            if kind is int:
                return int(text)
            if kind is float:
                return float(text)
        except ValueError:
            raise bad from None
        raise bad
    if kind is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    if kind is int and isinstance(raw, float) and raw.is_integer():
        return int(raw)
    raise bad


def _as_param(value) -> Param:
    if isinstance(value, Param):
        return value
    if isinstance(value, tuple) and len(value) == 2:        # the older (default, help) form
        return Param(value[0], value[1])
    raise ModelError(f"a parameter must be Param(default, help, ...), got {value!r}")


@dataclass(frozen=True)
class ModelSpec:
    """Everything engines may ask of a model module, declared once (see the module docstring).

    - `name`         the registry name (`group-world`); the registry checks it matches its entry.
    - `make`         `make(params, behaviours) -> Protocol`; params are complete and validated.
    - `params`       `{name: Param}` (a `(default, help)` pair is accepted and turned into a Param).
    - `supports`     historical behaviours the model implements (others are refused by the registry).
    - `check`        optional `check(params) -> None | str`: a rule across parameters (one-line message).
    - `walk_params`  parameters random walks in `kverify verify` start from (kverify/suite).
    - `hunt_params`  `{behaviour: (params, engine hint or None)}`: the bug zoo's bounds (kverify/zoo.py).
    - `state_fields` top-level state field names, as TLA+ variables (kverify/tla); None: inferred.
    - `action_names` every action name the model takes (kverify/tla); None: inferred by exploring.
    - `tla_state`    `tla_state(proto, state) -> {TLA+ variable: value}` (kverify/tla/values.py forms):
                     the state as its spec's variables, for the whole-state-set TLC comparison.
    """

    name: str
    make: Callable
    params: Mapping[str, Param] = field(default_factory=dict)
    supports: frozenset = frozenset()
    check: Optional[Callable[[dict], Optional[str]]] = None
    walk_params: Mapping[str, Any] = field(default_factory=dict)
    hunt_params: Mapping[str, tuple] = field(default_factory=dict)
    state_fields: Optional[tuple] = None
    action_names: Optional[frozenset] = None
    tla_state: Optional[Callable] = None

    def __post_init__(self):
        object.__setattr__(self, "params", {k: _as_param(v) for k, v in self.params.items()})
        object.__setattr__(self, "supports", frozenset(self.supports))
        object.__setattr__(self, "hunt_params", {b: _hunt_entry(v) for b, v in self.hunt_params.items()})
        if self.action_names is not None:
            object.__setattr__(self, "action_names", frozenset(self.action_names))

    # --- the one parameter parser ------------------------------------------------------------
    def defaults(self) -> dict:
        return {k: p.default for k, p in self.params.items()}

    def resolve(self, given: Optional[Mapping] = None) -> dict:
        """Defaults overlaid with `given` (CLI strings or Python values), every value typed and
        range-checked, then the cross-parameter `check`. Raises ModelError (one line)."""
        spec = self.params
        out = self.defaults()
        for key, raw in (given or {}).items():
            param = spec.get(key)
            if param is None:
                raise ModelError(f"model {self.name!r} has no parameter {key!r}; "
                                 f"known: {', '.join(sorted(spec)) or 'none'}")
            out[key] = param.convert(self.name, key, raw)
        for key in spec.keys() - dict(given or {}).keys():
            spec[key].convert(self.name, key, out[key])             # defaults obey their own ranges
        if self.check is not None:
            msg = self.check(out)
            if msg:
                raise ModelError(f"model {self.name!r}: {msg}")
        return out

    def validate(self) -> None:
        """Consistency of the declaration itself (the registry calls it when it loads the module)."""
        if not callable(self.make):
            raise ModelError(f"model {self.name!r}: make is not callable")
        self.resolve({})
        self.resolve(self.walk_params)
        for behaviour, (params, _engine) in self.hunt_params.items():
            if behaviour not in self.supports:
                raise ModelError(f"model {self.name!r}: hunt_params names {behaviour!r}, which it does not support")
            self.resolve(params)


def _hunt_entry(value) -> tuple:
    """`(params, engine)` or bare `params` -> `(dict, engine or None)`."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Mapping):
        return dict(value[0]), value[1]
    if isinstance(value, Mapping):
        return dict(value), None
    raise ModelError(f"a hunt_params entry must be (params, engine) or params, got {value!r}")
