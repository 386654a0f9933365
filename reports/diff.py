"""Which fields of a described state changed between two steps (for highlighting in reports)."""
from __future__ import annotations


def flatten(value, prefix: str = "") -> dict:
    """Nested dicts -> {"a.b.c": leaf}; lists and other leaves are kept whole (rendered compactly)."""
    out = {}
    if isinstance(value, dict):
        for k, v in value.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.update(flatten(v, key))
            else:
                out[key] = v
    else:
        out[prefix or "value"] = value
    return out


def changed_fields(before: dict | None, after: dict) -> dict:
    """{field: (old, new)} for every flattened field whose value differs (new fields: old None)."""
    a = flatten(after)
    if before is None:
        return {}
    b = flatten(before)
    out = {}
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            out[key] = (b.get(key), a.get(key))
    return out


def compact(value) -> str:
    """Short text form of a leaf value."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(compact(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {compact(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "—"
    return str(value)
