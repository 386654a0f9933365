"""Java's hash orders as JDK 17 printed them, replayed on impl/assignors/java_order.py (a `kverify verify` check).

Why it exists: the sticky and KIP-848 assignors decide like Kafka's only if `string_hash` and `JavaHashMap`
reproduce Java's `String.hashCode()` and `HashMap`/`HashSet` iteration order exactly. A wrong hash still gives
valid, balanced assignments, so no assignor property can see it: only a comparison with Java's own output can.
The vectors (tests/scenarios/java_order_jdk17.json) were printed by OpenJDK 17.0.15 running
tests/scenarios/JavaOrderRecord.java (`javac JavaOrderRecord.java && java JavaOrderRecord > java_order_jdk17.json`);
they are data, never computed here.
"""
from __future__ import annotations

import json
import os

from kverify.impl.assignors import java_order as JO

VECTORS = os.path.join("tests", "scenarios", "java_order_jdk17.json")


def _hash(name: str):
    return {"string": JO.string_hash, "integer": JO.integer_hash}[name]


def load(path: str = VECTORS) -> list:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _replay_map(case) -> list:
    m = JO.JavaHashMap(_hash(case["hash"]), case["initial"])
    for kind, key in case["ops"]:
        if kind == "put":
            m.put(key, True)
        elif kind == "remove":
            m.remove(key)
        elif kind == "cia":
            m.put_if_absent(key, lambda: True)
        else:
            raise ValueError(f"unknown map operation {kind!r}")
    return m.keys()


def mismatches(cases: list) -> list:
    """One line per vector the implementation answers differently from Java (empty: all agree)."""
    out = []
    for i, case in enumerate(cases):
        kind = case["kind"]
        if kind == "string-hash":
            for s, h in case["values"]:
                got = JO.string_hash(s)
                if got != h:
                    out.append(f"#{i} String.hashCode({s!r}) is {h} in Java, {got} here")
        elif kind == "hashmap":
            got = _replay_map(case)
            if got != case["order"]:
                out.append(f"#{i} HashMap<{case['hash']}> iterates {case['order']} in Java, {got} here")
        elif kind == "hashset-copy":
            got = JO.java_hash_set_copy(_hash(case["hash"]), case["items"]).keys()
            if got != case["order"]:
                out.append(f"#{i} new HashSet<>({case['items']}) iterates {case['order']} in Java, {got} here")
        else:
            raise ValueError(f"unknown vector kind {kind!r}")
    return out


def count(cases: list) -> int:
    return sum(len(c["values"]) if c["kind"] == "string-hash" else 1 for c in cases)
