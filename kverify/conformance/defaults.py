"""The reference implementation's configuration defaults against Kafka's (a `kverify verify` check).

Why it exists: every world passes its own timeouts, so no explored run depends on a default; yet a
scenario, the wire server or a user building a coordinator or client with defaults gets Kafka's behaviour
only if the defaults are Kafka's. The table (tests/scenarios/kafka_defaults.json) names, for each config
field, Kafka's setting, its default and where Kafka defines it; this check reads the dataclass defaults.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import os

TABLE = os.path.join("tests", "scenarios", "kafka_defaults.json")


def load(path: str = TABLE) -> list:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["defaults"]


def _default(qualname: str, field: str):
    module, _, cls = qualname.rpartition(".")
    klass = getattr(importlib.import_module(module), cls)
    for f in dataclasses.fields(klass):
        if f.name == field:
            if f.default is dataclasses.MISSING:
                raise ValueError(f"{qualname}.{field} has no default")
            return f.default
    raise ValueError(f"{qualname} has no field {field!r}")


def mismatches(rows: list) -> list:
    """One line per field whose default differs from Kafka's (empty: all agree)."""
    out = []
    for qualname, field, kafka, setting, source in rows:
        got = _default(qualname, field)
        if got != kafka or type(got) is not type(kafka):
            out.append(f"{qualname.rsplit('.', 1)[1]}.{field} defaults to {got!r}; Kafka's {setting} "
                       f"({source}) defaults to {kafka!r}")
    return out
