"""Run-time resolution of `$label[.field][+N|-N]` references against delivered responses.

Kept apart from the runner because both request fields and expectation values (and object keys
inside them) are resolved the same way, at the moment the step containing them executes.
"""
from __future__ import annotations

from kverify.conformance.format import parse_ref


class Unresolvable(Exception):
    """A reference to a response that was not delivered (still parked) or that raised."""


def resolve(value, lookup):
    """Return `value` with every reference replaced; `lookup(label)` gives the delivered response dict
    or raises Unresolvable."""
    if isinstance(value, str):
        r = parse_ref(value)
        if r is None:
            return value
        resp = lookup(r.label)
        got = resp.get(r.field)
        if r.delta:
            if not isinstance(got, int) or isinstance(got, bool):
                raise Unresolvable(f"reference {r.text}: field {r.field} is {got!r}, not an integer")
            return got + r.delta
        return got
    if isinstance(value, list):
        return [resolve(v, lookup) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            rk = resolve(k, lookup)
            out[rk if isinstance(rk, str) else str(rk)] = resolve(v, lookup)
        return out
    return value
