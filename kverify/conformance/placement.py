"""Kafka's replica placement, recorded from its source, replayed on impl/replication/placement.py (a `kverify
verify` check).

Why it exists: the worlds create topics with fewer partitions than brokers, so the part of Kafka's rule that acts
only once the partition id wraps around the broker list (the follower shift growing by one every n partitions),
a start partition above 0 and broker ids that are not 0..n-1 never occur in an explored run; a placement wrong
there still gives valid, distinct replica sets, so no replication property can see it. The vectors
(tests/scenarios/replica_placement.json) are Kafka's own test expectation and cases worked out by hand from
AdminUtils.assignReplicasToBrokersRackUnaware (apache/kafka), cited per vector; they are data, never computed here.
"""
from __future__ import annotations

import json
import os

from kverify.impl.replication import placement as PL

TABLE = os.path.join("tests", "scenarios", "replica_placement.json")

# the table's error names -> the exception the reference placement raises for them
_ERRORS = {"InvalidReplicationFactor": PL.InvalidReplicationFactor}


def load(path: str = TABLE) -> list:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["vectors"]


def _place(v: dict):
    return PL.assign_replicas(v["brokers"], v["partitions"], v["rf"], start_index=v["start_index"],
                              shift=v["shift"], start_partition=v["start_partition"])


def mismatches(vectors: list) -> list:
    """One line per vector the reference placement answers differently from Kafka (empty: all agree)."""
    out = []
    for v in vectors:
        call = (f"{v['name']}: {v['partitions']} partitions, rf {v['rf']} on brokers {v['brokers']} (start index "
                f"{v['start_index']}, shift {v['shift']}, first partition {v['start_partition']})")
        if "error" in v:
            try:
                got = _place(v)
            except _ERRORS[v["error"]]:
                continue
            except Exception as e:          # noqa: BLE001  (a wrong refusal is a finding, not a crash of the check)
                out.append(f"{call} raises {type(e).__name__} here; Kafka throws {v['error']}Exception")
                continue
            out.append(f"{call} gives {got} here; Kafka throws {v['error']}Exception")
            continue
        want = {p: list(r) for p, r in v["replicas"]}
        try:
            got = {p: list(r) for p, r in _place(v).items()}
        except Exception as e:              # noqa: BLE001
            out.append(f"{call} raises {type(e).__name__}: {e} here; Kafka places {want}")
            continue
        if got != want:
            diff = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
            p = diff[0]
            out.append(f"{call}: partition {p} on {got.get(p)} here, on {want.get(p)} in Kafka "
                       f"({len(diff)} partitions differ)")
    return out
