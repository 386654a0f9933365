"""Member assignments as Kafka's group coordinator holds them: `Map<Uuid, Set<Integer>>`.

The assignors read a member's current target assignment in the map's iteration order (which
partitions a member keeps when it is over its quota depends on it) and return new maps whose order
becomes the order of the next `ConsumerGroupTargetAssignmentMemberValue` record. These helpers build
those maps the way Kafka does, on top of java_order.JavaHashMap:
`Assignment.fromRecord` (a `Collectors.toMap` HashMap, one `new HashSet<>(partitions)` per topic),
`AssignorHelpers.deepCopyAssignment`, and `Collections.emptyMap()` (`Assignment.EMPTY`).
"""
from __future__ import annotations

from kverify.impl.assignors.java_order import (JavaHashMap, integer_hash, java_hash_set,
                                               java_hash_set_copy)
from kverify.impl.consumer.assignors.topic_ids import uuid_hash


def empty_assignment() -> JavaHashMap:
    """`Collections.emptyMap()` / `Assignment.EMPTY`: immutable, no entries."""
    m = JavaHashMap(uuid_hash)
    m.immutable = True
    return m


def from_record(topic_partitions, linked: bool = False) -> JavaHashMap:
    """`Assignment.fromRecord`: [(topic_id, [partition, ...]), ...] in record order -> an immutable
    HashMap (default capacity, filled in record order) of `new HashSet<>(partitions)`.
    `linked=True` gives a LinkedHashMap instead (Kafka's tests build assignments with
    `mkOrderedAssignment`: topics in the written order, partitions in a HashSet)."""
    m = JavaHashMap(uuid_hash, linked=linked)
    for topic_id, partitions in topic_partitions:
        if topic_id in m:
            raise ValueError(f"topic id {topic_id} appears twice in one assignment")
        m.put(topic_id, java_hash_set_copy(integer_hash, partitions))
    m.immutable = True
    return m


def deep_copy_assignment(m: JavaHashMap) -> JavaHashMap:
    """`AssignorHelpers.deepCopyAssignment`: `new HashMap<>(size)` filled in the source's order with
    `new HashSet<>(partitions)` copies; the copy is mutable."""
    copy = JavaHashMap(uuid_hash, len(m))
    for topic_id, partitions in m.items():
        copy.put(topic_id, java_hash_set_copy(integer_hash, partitions.keys()))
    return copy


def new_partition_set(initial_capacity=None) -> JavaHashMap:
    """`new HashSet<>()` / `new HashSet<>(n)` of partition numbers."""
    return java_hash_set(integer_hash, (), initial_capacity)


def ordered(m: JavaHashMap) -> list:
    """[(topic_id, [partition, ...]), ...] in Java iteration order (the record Kafka would write)."""
    return [(t, list(ps.keys())) for t, ps in m.items()]
