"""The uniform assignor for a group whose members all subscribe to the same topics.

Follows Kafka 4.0's `UniformHomogeneousAssignmentBuilder` (group-coordinator module; the file Kafka's
tests still call "OptimizedUniformAssignmentBuilder"): every member gets total / members partitions
and the first `total % members` members, in `memberIds()` iteration order, one more. Each member keeps
its current partitions of subscribed topics up to that quota, walking its assignment map and the
partition sets in Java iteration order; everything else (partitions of unsubscribed topics dropped,
partitions over quota, partitions nobody holds) is handed out, in list order, to the members below
quota in `memberIds()` order. Balance first, then stickiness.
"""
from __future__ import annotations

from kverify.impl.assignors.java_order import java_hash_set_copy
from kverify.impl.consumer.assignors.assignment_maps import deep_copy_assignment, new_partition_set
from kverify.impl.consumer.assignors.spec import PartitionAssignorError
from kverify.impl.consumer.assignors.topic_ids import uuid_hash


def assign_homogeneous(group, describer) -> dict:
    """`UniformHomogeneousAssignmentBuilder.build()`: {member id: JavaHashMap assignment}."""
    member_ids = group.member_ids
    first = group.member_subscription(member_ids[0])
    # new HashSet<>(TopicIds): sized from TopicIds.size() (all subscribed names), filled in its order.
    subscribed = java_hash_set_copy(uuid_hash, first.subscribed, first.subscribed_size)
    if len(subscribed) == 0:
        return {}

    unassigned = []
    total = 0
    for topic_id in subscribed.keys():
        count = describer.num_partitions(topic_id)
        if count == -1:
            raise PartitionAssignorError(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata.")
        unassigned.extend((topic_id, p) for p in range(count) if not group.is_partition_assigned(topic_id, p))
        total += count

    min_quota, extra = divmod(total, len(member_ids))
    target = {}
    unfilled = []
    # maybeRevokePartitions
    for member_id in member_ids:
        old = group.member_assignment(member_id)
        if not old.immutable:
            raise PartitionAssignorError("The assignor expect an immutable map.")
        new = None
        quota = min_quota
        if extra > 0:
            quota += 1
            extra -= 1
        for topic_id, partitions in old.items():
            if topic_id in subscribed:
                if len(partitions) <= quota:
                    quota -= len(partitions)
                    continue
                for p in partitions.keys():
                    if quota > 0:
                        quota -= 1
                        continue
                    if new is None:
                        new = deep_copy_assignment(old)
                    kept = new.get(topic_id)
                    kept.remove(p)
                    if len(kept) == 0:
                        new.remove(topic_id)
                    unassigned.append((topic_id, p))
            else:
                if new is None:
                    new = deep_copy_assignment(old)
                new.remove(topic_id)
        if quota > 0:
            unfilled.append((member_id, quota))
        target[member_id] = old if new is None else new

    # assignRemainingPartitions
    index = 0
    for member_id, quota in unfilled:
        assignment = target[member_id]
        if assignment.immutable:
            assignment = deep_copy_assignment(assignment)
            target[member_id] = assignment
        given = 0
        while given < quota and index < len(unassigned):
            topic_id, p = unassigned[index]
            index += 1
            assignment.put_if_absent(topic_id, new_partition_set).put(p, True)
            given += 1
    if index < len(unassigned):
        raise PartitionAssignorError("Partitions were left unassigned")
    return target
