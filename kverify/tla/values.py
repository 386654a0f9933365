"""TLA+ values in one Python form, shared by TLC's output and the Python models' states.

Why it exists: comparing what TLC reaches with what the explorer reaches needs both sides' states
in one comparable, hashable form, and a difference must be shown back in TLA+ terms. The form:
- integers, booleans, strings as themselves;
- a set: `frozenset`;
- a sequence / tuple `<<a, b>>` (a function with domain 1..n, also the empty function): `tuple`;
- a record `[a |-> 1, b |-> 2]`: `("rec", ((field, value), ...))`, fields sorted;
- any other function (TLC prints `(0 :> a @@ 1 :> b)`): `("fun", ((key, value), ...))`, keys sorted.
`rec`, `fun`, `seq`, `bits` build them from Python values; `parse` reads TLC's printed values;
`render` writes a value as TLA+ text; `differences` names the leaves where two values differ.
"""
from __future__ import annotations

import re

_TOK = re.compile(r'\s*(<<|>>|\|->|:>|@@|\.\.|/\\|[\[\](){},=]|"[^"]*"|-?\d+|[A-Za-z_][A-Za-z0-9_]*)')


# --- building values ------------------------------------------------------------------------------
def rec(**fields):
    return ("rec", tuple(sorted(fields.items())))


def fun(mapping: dict):
    return ("fun", tuple(sorted(mapping.items(), key=repr)))


def seq(items) -> tuple:
    return tuple(items)


def bits(mask: int) -> frozenset:
    """A bitmask as the set of its set bits' indices."""
    return frozenset(i for i in range(mask.bit_length()) if mask >> i & 1)


record, function = rec, fun      # the longer names, as model modules call them


def is_rec(v) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "rec" and isinstance(v[1], tuple)


def is_fun(v) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "fun" and isinstance(v[1], tuple)


# --- reading TLC's printed values ---------------------------------------------------------------------
def _tokens(text: str) -> list:
    out, pos = [], 0
    while pos < len(text):
        m = _TOK.match(text, pos)
        if not m:
            if not text[pos:].strip():
                break
            raise ValueError(f"cannot read TLC value near {text[pos:pos + 30]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


class Reader:
    """A cursor over the tokens of TLC's printed values (used for states: `/\\ x = v` lines)."""

    def __init__(self, text: str):
        self.t, self.i = _tokens(text), 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.t[self.i]
        self.i += 1
        if want is not None and tok != want:
            raise ValueError(f"expected {want!r}, got {tok!r}")
        return tok

    def value(self):
        v = self.atom()
        if self.peek() == "..":
            self.take()
            return frozenset(range(v, self.atom() + 1))
        if self.peek() == ":>":
            items = {}
            self.take()
            items[v] = self.value()
            while self.peek() == "@@":
                self.take()
                k = self.atom()
                self.take(":>")
                items[k] = self.value()
            return fun(items)
        return v

    def _items(self, close):
        items = []
        while self.peek() != close:
            items.append(self.value())
            if self.peek() == ",":
                self.take()
        self.take(close)
        return items

    def atom(self):
        tok = self.take()
        if tok == "<<":
            return tuple(self._items(">>"))
        if tok == "{":
            return frozenset(self._items("}"))
        if tok == "[":
            fields = {}
            while self.peek() != "]":
                k = self.take()
                self.take("|->")
                fields[k] = self.value()
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return rec(**fields)
        if tok == "(":
            v = self.value()
            self.take(")")
            return v
        if tok in ("TRUE", "FALSE"):
            return tok == "TRUE"
        if tok.startswith('"'):
            return tok[1:-1]
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        raise ValueError(f"unexpected token {tok!r} in a TLC value")

    def state(self, keep=None) -> dict:
        """`/\\ x = v /\\ y = w ...` -> {variable: value} (only the variables in `keep`, if given)."""
        out = {}
        while self.peek() == "/\\":
            self.take()
            name = self.take()
            self.take("=")
            val = self.value()
            if keep is None or name in keep:
                out[name] = val
        return out


def parse(text: str):
    return Reader(text).value()


def parse_state(text: str, keep=None):
    """A state as TLC prints it, as a record of its variables."""
    return rec(**Reader(text).state(keep))


# --- writing and comparing ------------------------------------------------------------------------------
def render(v) -> str:
    """A value as TLA+ text."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted((render(x) for x in v), key=lambda s: (len(s), s))) + "}"
    if is_rec(v):
        return "[" + ", ".join(f"{k} |-> {render(x)}" for k, x in v[1]) + "]"
    if is_fun(v):
        return "(" + " @@ ".join(f"{render(k)} :> {render(x)}" for k, x in v[1]) + ")"
    if isinstance(v, tuple):
        return "<<" + ", ".join(render(x) for x in v) + ">>"
    return repr(v)


def differences(a, b, path: str = "") -> list:
    """[(path, a_leaf, b_leaf)] where `a` and `b` differ, descending into records, functions and
    sequences of equal length (`coord.leader`, `clients[1].status`, `delivered[2]`)."""
    if a == b:
        return []
    if is_rec(a) and is_rec(b):
        da, db = dict(a[1]), dict(b[1])
        if da.keys() == db.keys():
            out = []
            for k in sorted(da):
                out += differences(da[k], db[k], f"{path}.{k}" if path else k)
            return out
    if is_fun(a) and is_fun(b):
        da, db = dict(a[1]), dict(b[1])
        if da.keys() == db.keys():
            out = []
            for k in sorted(da, key=repr):
                out += differences(da[k], db[k], f"{path}[{render(k)}]")
            return out
    if (isinstance(a, tuple) and isinstance(b, tuple) and not (is_rec(a) or is_fun(a) or is_rec(b) or is_fun(b))
            and len(a) == len(b)):
        out = []
        for i, (x, y) in enumerate(zip(a, b), start=1):
            out += differences(x, y, f"{path}[{i}]")
        return out
    return [(path, a, b)]
