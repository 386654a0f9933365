"""Replica placement at topic creation: Kafka's rack-unaware `assignReplicasToBrokers`.

Exists so topic creation in the model uses the real rule (start index and a shift that grows every
n partitions) instead of the simplified "replica j of partition i on broker (i+j) mod n", which the
real rule reduces to only when both random values are 0 and i < n (reference replication.md 57-59).
The random values are inputs, so placement stays deterministic.
"""
from __future__ import annotations


class InvalidReplicationFactor(ValueError):
    """Replication factor larger than the number of brokers (Kafka's InvalidReplicationFactorException)."""


def assign_replicas(brokers, partitions: int, replication_factor: int, start_index: int = 0,
                    shift: int = 0, start_partition: int = 0) -> dict[int, tuple[int, ...]]:
    """Map partition id -> ordered replica list (the first is the preferred leader)."""
    brokers = list(brokers)
    n = len(brokers)
    if partitions < 0:
        raise ValueError("number of partitions must be >= 0")
    if replication_factor <= 0:
        raise InvalidReplicationFactor("replication factor must be larger than 0")
    if replication_factor > n:
        raise InvalidReplicationFactor(
            f"replication factor {replication_factor} larger than available brokers {n}")
    if not (0 <= start_index < n and 0 <= shift < n):
        raise ValueError(f"start index and shift must lie in [0, {n})")
    out: dict[int, tuple[int, ...]] = {}
    next_shift = shift
    current = start_partition
    for _ in range(partitions):
        if current > 0 and current % n == 0:
            next_shift += 1
        first = (current + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (next_shift + j) % (n - 1)) % n])
        out[current] = tuple(replicas)
        current += 1
    return out
