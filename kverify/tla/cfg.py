"""TLC configuration files (.cfg): read them, and turn their CONSTANTS into a kverify bound.

A spec's .cfg is the single statement of a bound: its UPPER_CASE constants are the model's
parameters (kverify/tla/names.py) and its CamelCase boolean constants the historical behaviours
(every behaviour the model SUPPORTS must be given, TRUE or FALSE). `bound(model, cfg)` gives the
parameters and behaviours the explorer must use to explore the same state space. A SYMMETRY line
means "symmetry on" (the explorer then uses the model's canonical form); the shipped .cfg files
have none and the explorer runs with symmetry off.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kverify.tla import names

_KEYWORDS = {
    "CONSTANT": "constants", "CONSTANTS": "constants",
    "INIT": "init", "NEXT": "next", "SPECIFICATION": "specification",
    "INVARIANT": "invariants", "INVARIANTS": "invariants",
    "PROPERTY": "properties", "PROPERTIES": "properties",
    "VIEW": "view", "SYMMETRY": "symmetry",
    "CONSTRAINT": "constraints", "CONSTRAINTS": "constraints",
    "ACTION_CONSTRAINT": "action_constraints", "ACTION_CONSTRAINTS": "action_constraints",
    "CHECK_DEADLOCK": "check_deadlock", "POSTCONDITION": "postcondition", "ALIAS": "alias",
}
# parameters that are engine settings rather than part of the state space
ENGINE_PARAMS = frozenset({"symmetry"})


class CfgError(ValueError):
    """A .cfg that cannot be read or does not describe a bound of its model (one line)."""


@dataclass
class Cfg:
    path: str
    constants: dict = field(default_factory=dict)     # name -> int | bool | str
    init: str = ""
    next: str = ""
    specification: str = ""
    invariants: list = field(default_factory=list)
    properties: list = field(default_factory=list)
    view: str = ""
    symmetry: str = ""
    constraints: list = field(default_factory=list)
    action_constraints: list = field(default_factory=list)


def _strip_comments(text: str) -> str:
    text = re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)
    return "\n".join(line.split("\\*", 1)[0] for line in text.splitlines())


def _value(raw: str, where: str):
    raw = raw.strip()
    if raw == "TRUE":
        return True
    if raw == "FALSE":
        return False
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r'"[^"]*"', raw):
        return raw[1:-1]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", raw):
        return raw          # model value
    raise CfgError(f"{where}: constant value {raw!r} is not an integer, boolean, string or model value")


def parse_text(text: str, path: str = "<cfg>") -> Cfg:
    cfg = Cfg(path)
    where = os.path.basename(path)
    tokens = re.findall(r'"[^"]*"|<-|==|=|[A-Za-z0-9_]+|\S', _strip_comments(text))
    section = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _KEYWORDS:
            section = _KEYWORDS[tok]
            i += 1
            continue
        if section is None:
            raise CfgError(f"{where}: {tok!r} outside any section")
        if section == "constants":
            if i + 2 >= len(tokens) + 0 and (i + 2 > len(tokens) - 1):
                raise CfgError(f"{where}: incomplete constant assignment at {tok!r}")
            op = tokens[i + 1] if i + 1 < len(tokens) else ""
            if op not in ("=", "<-"):
                raise CfgError(f"{where}: expected '=' after constant {tok}")
            if op == "<-":
                raise CfgError(f"{where}: constant substitution {tok} <- ... is not a bound value")
            val = tokens[i + 2] if i + 2 < len(tokens) else ""
            if val == "-" and i + 3 < len(tokens):
                val, i = "-" + tokens[i + 3], i + 1
            cfg.constants[tok] = _value(val, where)
            i += 3
            continue
        if section in ("invariants", "properties", "constraints", "action_constraints"):
            getattr(cfg, section).append(tok)
        elif section in ("init", "next", "specification", "view", "symmetry"):
            if getattr(cfg, section):
                raise CfgError(f"{where}: more than one {section.upper()}")
            setattr(cfg, section, tok)
        i += 1
    return cfg


def parse_file(path: str) -> Cfg:
    try:
        with open(path, encoding="utf-8") as fh:
            return parse_text(fh.read(), path)
    except OSError as exc:
        raise CfgError(f"cannot read {path}: {exc.strerror}") from None


@dataclass(frozen=True)
class Bound:
    model: str
    params: dict
    behaviours: frozenset
    symmetry: bool


def bound(model: str, cfg: Cfg) -> Bound:
    """The explorer's parameters and behaviours for the state space `cfg` describes."""
    from kverify.model import registry

    where = os.path.basename(cfg.path)
    spec_params = {k: v for k, v in registry.spec_for(model).params.items() if k not in ENGINE_PARAMS}
    supports = registry.supports(model)
    params, behaviours = {}, set()
    for const, value in cfg.constants.items():
        if names.is_param_constant(const):
            key = names.tla_to_param(const)
            if key not in spec_params:
                raise CfgError(f"{where}: constant {const} is no parameter of model {model!r} "
                               f"(known: {', '.join(names.param_to_tla(k) for k in spec_params)})")
            default = spec_params[key][0]
            if isinstance(default, bool) != isinstance(value, bool) or not isinstance(value, (int, bool)):
                raise CfgError(f"{where}: {const} = {value!r} does not have the type of {key} ({type(default).__name__})")
            params[key] = value
            continue
        try:
            beh = names.tla_to_kebab(const)
        except ValueError:
            raise CfgError(f"{where}: constant {const} is neither a parameter nor a behaviour") from None
        if beh not in supports:
            raise CfgError(f"{where}: constant {const} ({beh}) is not a behaviour model {model!r} supports")
        if not isinstance(value, bool):
            raise CfgError(f"{where}: behaviour constant {const} must be TRUE or FALSE")
        if value:
            behaviours.add(beh)
    missing = sorted(set(spec_params) - set(params))
    if missing:
        raise CfgError(f"{where}: no value for parameter(s) {', '.join(names.param_to_tla(k) for k in missing)}")
    given = {names.tla_to_kebab(c) for c in cfg.constants if not names.is_param_constant(c)}
    missing_b = sorted(supports - given)
    if missing_b:
        raise CfgError(f"{where}: no TRUE/FALSE for behaviour(s) {', '.join(names.kebab_to_tla(b) for b in missing_b)}")
    return Bound(model, params, frozenset(behaviours), bool(cfg.symmetry))


def render(model: str, params: dict, behaviours=(), *, invariants=(), properties=(), view: str = "",
           comment: str = "") -> str:
    """A .cfg for `model` at a bound (the inverse of `bound`), used by the bench and tests."""
    from kverify.model import registry

    spec_params = [k for k in registry.spec_for(model).params if k not in ENGINE_PARAMS]
    full = registry.parse_params(model, {k: v for k, v in params.items()})
    lines = [f"\\* {comment}"] if comment else []
    lines.append("CONSTANTS")
    for k in spec_params:
        v = full[k]
        lines.append(f"    {names.param_to_tla(k)} = {('TRUE' if v else 'FALSE') if isinstance(v, bool) else v}")
    for b in sorted(registry.supports(model)):
        lines.append(f"    {names.kebab_to_tla(b)} = {'TRUE' if b in behaviours else 'FALSE'}")
    lines += ["INIT Init", "NEXT Next"]
    if view:
        lines.append(f"VIEW {view}")
    if invariants:
        lines.append("INVARIANTS")
        lines += [f"    {x}" for x in invariants]
    if properties:
        lines.append("PROPERTIES")
        lines += [f"    {x}" for x in properties]
    return "\n".join(lines) + "\n"
