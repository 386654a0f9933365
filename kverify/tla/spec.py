"""Read a TLA+ module with the `tla` parser (PyPI `tla`): constants, variables, operators, the
actions named in `Next`, and the modules it instantiates (`R == INSTANCE Replication`).

Convention the specs in `specs/` follow (and `next_actions` relies on): every disjunct of `Next`
is a named action, optionally under `\\E` quantifiers (`\\E m \\in Slots : Join(m)`); a disjunct
naming an operator whose name ends in `Next` is expanded (a sub-list of actions). Anything else
in `Next` (an anonymous formula) is reported by name-free position, so the match fails loudly.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

SPECS_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "specs"))


class SpecError(ValueError):
    """A spec that cannot be read or does not follow the conventions (one-line message)."""


@dataclass
class ModuleInfo:
    name: str
    path: str
    constants: list = field(default_factory=list)
    variables: list = field(default_factory=list)
    operators: dict = field(default_factory=dict)      # name -> OperatorDefinition node
    instances: dict = field(default_factory=dict)      # local name -> ModuleInfo (INSTANCE)
    extends: list = field(default_factory=list)

    def tuple_names(self, op: str) -> list:
        """Names in an operator defined as a tuple of identifiers (`modelVars == <<a, b>>`)."""
        node = self.operators.get(op)
        if node is None:
            raise SpecError(f"{self.name}: no operator {op}")
        d = node.definiens
        items = getattr(d, "items", None)
        if type(d).__name__ != "Tuple" or items is None:
            raise SpecError(f"{self.name}: {op} is not a tuple of variables")
        out = []
        for it in items:
            name = getattr(it, "operator", None)
            if not isinstance(name, str) or getattr(it, "arguments", None):
                raise SpecError(f"{self.name}: {op} holds something other than a variable name")
            out.append(name)
        return out


def spec_path(name_or_path: str) -> str:
    """`GroupMembership`, `GroupMembership.tla` or a path -> an existing .tla path."""
    cands = [name_or_path]
    if not name_or_path.endswith(".tla"):
        cands.append(name_or_path + ".tla")
    cands += [os.path.join(SPECS_DIR, c) for c in list(cands)]
    for c in cands:
        if os.path.isfile(c):
            return os.path.abspath(c)
    raise SpecError(f"no TLA+ module {name_or_path!r} (looked in . and {SPECS_DIR})")


def parse_source(source: str, path: str = "<string>", search_dir: str | None = None) -> ModuleInfo:
    try:
        import tla
    except ImportError as exc:  # pragma: no cover - the dev install has it
        raise SpecError(f"the `tla` parser is not installed ({exc}); pip install tla") from None
    try:
        tree = tla.parse(source)
    except Exception as exc:
        raise SpecError(f"{os.path.basename(path)}: does not parse: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if tree is None:
        raise SpecError(f"{os.path.basename(path)}: does not parse")
    info = ModuleInfo(tree.name, path)
    info.extends = [e.operator for e in (tree.extendees or [])]
    for unit in tree.units:
        kind = type(unit).__name__
        if kind == "Constants":
            info.constants += [_decl_name(n) for n in unit.names]
        elif kind == "Variables":
            info.variables += [_decl_name(n) for n in unit.names]
        elif kind == "OperatorDefinition":
            info.operators[unit.name] = unit
            if type(unit.definiens).__name__ == "Instance":
                target = unit.definiens.name
                sub = search_dir or os.path.dirname(path) or "."
                info.instances[unit.name] = parse_file(os.path.join(sub, target + ".tla"))
    return info


def _decl_name(node) -> str:
    return node if isinstance(node, str) else node.operator


@lru_cache(maxsize=32)
def _parse_cached(path: str, mtime: float) -> ModuleInfo:
    with open(path, encoding="utf-8") as fh:
        return parse_source(fh.read(), path)


def parse_file(path: str) -> ModuleInfo:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise SpecError(f"no TLA+ module at {path}")
    return _parse_cached(path, os.path.getmtime(path))


def _disjuncts(node):
    kind = type(node).__name__
    if kind == "VerticalList" and node.operator == "\\/":
        for item in node.arguments:
            yield from _disjuncts(item.expression)
    elif kind == "OperatorApplication" and node.operator == "\\/" and node.arguments:
        for arg in node.arguments:
            yield from _disjuncts(arg)
    elif kind == "Parentheses" or (kind == "VerticalList" and len(node.arguments) == 1):
        inner = getattr(node, "expression", None)
        if inner is None and kind == "VerticalList":
            inner = node.arguments[0].expression
        yield from _disjuncts(inner)
    else:
        yield node


def _strip_quantifiers(node):
    while type(node).__name__ == "Quantification" and node.quantifier == "\\E":
        node = node.predicate
    return node


def next_actions(info: ModuleInfo, op: str = "Next") -> list:
    """Names of the actions the disjuncts of `op` apply, in order (see the module docstring).
    Anonymous disjuncts come out as `<anonymous disjunct at line N>`."""
    node = info.operators.get(op)
    if node is None:
        raise SpecError(f"{info.name}: no {op} operator")
    out = []
    for d in _disjuncts(node.definiens):
        body = _strip_quantifiers(d)
        name = getattr(body, "operator", None) if type(body).__name__ == "OperatorApplication" else None
        if isinstance(name, str) and name in info.operators:
            if name.endswith("Next") and name != op:
                out += next_actions(info, name)
            else:
                out.append(name)
        else:
            line = getattr(getattr(d, "start", None), "line", "?")
            out.append(f"<anonymous disjunct at line {line + 1 if isinstance(line, int) else line}>")
    return out


def next_action_lines(info: ModuleInfo, op: str = "Next") -> dict:
    """1-based line of each disjunct of `op` -> the action it names (TLC labels a step taken by
    `\\E r, q : Apply(r, q)` with the disjunct's position, not with the action's name)."""
    node = info.operators.get(op)
    out = {}
    if node is None:
        return out
    for d in _disjuncts(node.definiens):
        body = _strip_quantifiers(d)
        name = getattr(body, "operator", None) if type(body).__name__ == "OperatorApplication" else None
        line = getattr(getattr(d, "start", None), "line", None)
        if isinstance(name, str) and isinstance(line, int):
            out[line + 1] = name
    return out
