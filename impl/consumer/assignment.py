"""Assignments as hashable values: a frozenset of (topic_id, partition) pairs.

Why it exists: Kafka keeps `Map<Uuid, Set<Integer>>`; a frozenset of pairs is the same
information, hashable (snapshots, model states) and set algebra is the reconciliation's language.
These helpers convert to and from the wire's `TopicPartitions` lists (sorted by topic id, then
partition, so equal assignments give equal messages).
"""
from __future__ import annotations

from typing import Iterable

from kverify.impl.consumer.messages import TopicPartitions

EMPTY = frozenset()


def to_topic_partitions(assignment: Iterable) -> tuple:
    by_topic: dict = {}
    for topic_id, partition in assignment:
        by_topic.setdefault(topic_id, []).append(partition)
    return tuple(TopicPartitions(t, tuple(sorted(ps))) for t, ps in sorted(by_topic.items()))


def from_by_topic(mapping) -> frozenset:
    return frozenset((t, p) for t, ps in mapping.items() for p in ps)
