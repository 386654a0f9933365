"""KIP-848's server-side range assignor.

Follows Kafka 4.0's `RangeAssignor` (group-coordinator module, rewritten by KAFKA-16944, #16504):
members are sorted with static members first by instance id, then the others by member id (Java
String order); each topic's partitions are cut into contiguous ranges of numPartitions / subscribers,
the first numPartitions % subscribers subscribers (in that sorted order) getting one more. It reads
no current assignment: stickiness comes only from instance ids. Homogeneous and heterogeneous groups
give the same ranges (Kafka has one code path for each, equivalent in result). Not rack-aware.
"""
from __future__ import annotations

from kverify.impl.assignors.java_order import JavaHashMap, integer_hash, presized_capacity
from kverify.impl.assignors.problem import java_key
from kverify.impl.consumer.assignors.spec import HOMOGENEOUS, PartitionAssignorError
from kverify.impl.consumer.assignors.topic_ids import uuid_hash


def sorted_member_ids(group) -> list:
    """`RangeAssignor.sortMemberIds`: instance ids first (String.compareTo), then member ids. Java's
    List.sort is stable, so two members with the same instance id keep their memberIds() order."""
    def key(member_id):
        instance = group.member_subscription(member_id).instance_id
        return (0, java_key(instance)) if instance is not None else (1, java_key(member_id))
    return sorted(group.member_ids, key=key)


def _range_set(start: int, end: int) -> JavaHashMap:
    """`RangeSet(start, end)`: iterates start..end-1 in order."""
    s = JavaHashMap(integer_hash, linked=True)
    for p in range(start, end):
        s.put(p, True)
    s.immutable = True
    return s


class _TopicRanges:
    """Per-topic state of Kafka's `RangeAssignor.TopicMetadata`: quota, extras left, next range."""

    def __init__(self, topic_id, partitions: int, members: int):
        self.topic_id = topic_id
        self.partitions = partitions
        self.members = members
        self.min_quota = -1
        self.extra = -1
        self.next_start = 0

    def take(self, assignment: JavaHashMap) -> None:
        if self.min_quota == -1:
            self.min_quota, self.extra = divmod(self.partitions, self.members)
        quota = self.min_quota
        if self.extra > 0:
            quota += 1
            self.extra -= 1
        start = self.next_start
        end = min(start + quota, self.partitions)
        self.next_start = end
        if start < end:
            assignment.put(self.topic_id, _range_set(start, end))


def _partitions_or_fail(describer, topic_id) -> int:
    count = describer.num_partitions(topic_id)
    if count == -1:
        raise PartitionAssignorError("Member is subscribed to a non-existent topic")
    return count


def assign_range(group, describer) -> dict:
    """`RangeAssignor.assign`: {member id: JavaHashMap assignment}."""
    if not group.member_ids:
        return {}
    members = sorted_member_ids(group)
    result = {}
    if group.subscription_type == HOMOGENEOUS:
        first = group.member_subscription(members[0])
        topics = [_TopicRanges(t, _partitions_or_fail(describer, t), len(members)) for t in first.subscribed]
        for member_id in members:
            assignment = JavaHashMap(uuid_hash, presized_capacity(len(topics)))
            for topic in topics:
                topic.take(assignment)
            result[member_id] = assignment
        return result
    topics = {}
    for member_id in members:
        for t in group.member_subscription(member_id).subscribed:
            if t not in topics:
                topics[t] = _TopicRanges(t, _partitions_or_fail(describer, t), 0)
            topics[t].members += 1
    for member_id in members:
        spec = group.member_subscription(member_id)
        assignment = JavaHashMap(uuid_hash, presized_capacity(spec.subscribed_size))
        for t in spec.subscribed:
            topics[t].take(assignment)
        result[member_id] = assignment
    return result
