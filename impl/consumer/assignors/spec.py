"""What a KIP-848 server-side assignor is given and what it may throw.

Mirrors Kafka 4.0's `org.apache.kafka.coordinator.group.api.assignor` interfaces as the group
coordinator fills them (`GroupSpecImpl`, `MemberSubscriptionAndAssignmentImpl`,
`SubscribedTopicDescriberImpl`, built by `TargetAssignmentBuilder.build`), keeping the Java
iteration orders the assignors' answers depend on:

- `GroupSpec.member_ids`: the iteration order of `memberIds()` (Kafka: the keys of a fresh
  `HashMap<String, ...>` filled from the group's members, so String.hashCode bucket order);
- `MemberSpec.subscribed`: the member's topic ids in the order `TopicIds` iterates them (the order of
  the member's `HashSet<String>` of subscribed names, names without a topic skipped);
  `subscribed_size` is what `TopicIds.size()` reports (the number of names, existing or not);
- `MemberSpec.assigned`: the member's current target assignment, an immutable
  `Map<Uuid, Set<Integer>>` (a JavaHashMap of JavaHashMap sets, see java_order.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kverify.impl.assignors.java_order import JavaHashMap, java_hash_set_copy, string_hash
from kverify.impl.consumer.assignors.assignment_maps import empty_assignment, from_record
from kverify.impl.consumer.assignors.topic_ids import TopicId, parse_topic_id, uuid_hash

HOMOGENEOUS = "Homogeneous"
HETEROGENEOUS = "Heterogeneous"


class PartitionAssignorError(Exception):
    """Kafka's `PartitionAssignorException` (and the other exceptions an assignor lets escape)."""


def _as_topic_id(t):
    return t if isinstance(t, TopicId) else parse_topic_id(t)


def _subscription_order(subscribed) -> tuple:
    """Topic ids in TopicIds iteration order. A list/tuple is taken as that order; a set (no order)
    is put in a HashSet of its ids (in Uuid order), which is exact unless two ids share a bucket."""
    if isinstance(subscribed, (list, tuple)):
        return tuple(_as_topic_id(t) for t in subscribed)
    return tuple(java_hash_set_copy(uuid_hash, sorted(_as_topic_id(t) for t in subscribed)).keys())


def _assignment_map(assigned):
    """A plain {topic id: partitions} dict (dict order = record order) -> Assignment.fromRecord map."""
    if isinstance(assigned, JavaHashMap):
        return assigned
    if not assigned:
        return empty_assignment()
    return from_record([(_as_topic_id(t), sorted(ps)) for t, ps in assigned.items()])


@dataclass(frozen=True)
class MemberSpec:
    """`MemberSubscriptionAndAssignmentImpl`. `subscribed`: topic ids (TopicId or Kafka Uuid strings)
    in TopicIds iteration order (a set is accepted, see `_subscription_order`); `assigned`: the current
    target assignment, a JavaHashMap (exact order) or a plain {topic id: partitions} dict."""
    rack: Optional[str] = None
    instance_id: Optional[str] = None
    subscribed: tuple = ()
    assigned: object = None
    subscribed_size: Optional[int] = None
    names: Optional[frozenset] = None      # the subscribed topic NAMES, when known (subscription type)
    _subscribed_set: frozenset = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "subscribed", _subscription_order(self.subscribed))
        object.__setattr__(self, "assigned", _assignment_map(self.assigned))
        object.__setattr__(self, "_subscribed_set", frozenset(self.subscribed))
        if self.subscribed_size is None:
            object.__setattr__(self, "subscribed_size", len(self.subscribed))

    def subscribes(self, topic_id) -> bool:
        """`subscribedTopicIds().contains(topicId)`."""
        return topic_id in self._subscribed_set

    @classmethod
    def from_names(cls, names, topic_ids: dict, rack=None, instance_id=None, assigned=None) -> "MemberSpec":
        """Kafka's construction from the member's subscribed topic NAMES (the heartbeat's list):
        `new HashSet<>(names)` (ConsumerGroupMember), iterated and resolved to ids through the topics
        image `topic_ids` {name: id}, names without a topic skipped (TopicIds)."""
        name_set = java_hash_set_copy(string_hash, list(names))
        ids = [topic_ids[n] for n in name_set.keys() if n in topic_ids]
        return cls(rack, instance_id, tuple(ids), assigned, len(name_set), frozenset(name_set.keys()))


class GroupSpec:
    """`GroupSpecImpl`: members in Kafka's iteration order, the subscription type and the inverted
    target assignment (topic id -> partition -> member) behind `isPartitionAssigned`.

    `member_ids` is the exact `memberIds()` order; without it, the members (in `member_order`, else
    dict order: the group's insertion order) are put into a Java HashMap, as TargetAssignmentBuilder
    does, and iterate in its order. Ids in `member_order` that are not in `members` are put and then
    removed, as TargetAssignmentBuilder does with a static member being replaced (the table keeps the
    capacity it grew to). `subscription_type` defaults to ModernGroup's rule over the
    members' subscribed topic names (`MemberSpec.from_names`), else ids; `inverted` defaults to the
    union of the members' assignments."""

    def __init__(self, members: dict, member_order=None, subscription_type: Optional[str] = None,
                 inverted: Optional[dict] = None, member_ids=None):
        self.members = dict(members)
        self.member_order = None if member_order is None else tuple(member_order)
        if member_ids is None:
            table = JavaHashMap(string_hash)
            order = list(self.members if member_order is None else member_order)
            for m in order:
                table.put(m, True)
            for m in order:                 # put, then removed: a replaced static member
                if m not in self.members:
                    table.remove(m)
            member_ids = table.keys()
        if set(member_ids) != set(self.members) or len(member_ids) != len(self.members):
            raise ValueError("the member order must list every member exactly once")
        self.member_ids = list(member_ids)
        if subscription_type is None:
            specs = [self.members[m] for m in self.member_ids]
            named = all(spec.names is not None for spec in specs)
            subscription_type = _subscription_type([spec.names if named else spec.subscribed for spec in specs])
        self.subscription_type = subscription_type
        if inverted is None:
            inverted = {}
            for m in self.member_ids:
                for t, ps in self.members[m].assigned.items():
                    inverted.setdefault(t, {}).update({p: m for p in ps.keys()})
        self.inverted = inverted

    def is_partition_assigned(self, topic_id, partition: int) -> bool:
        return partition in self.inverted.get(topic_id, ())

    def member_subscription(self, member_id: str) -> MemberSpec:
        return self.members[member_id]

    def member_assignment(self, member_id: str):
        return self.members[member_id].assigned


class TopicDescriber:
    """`SubscribedTopicDescriberImpl`: partition counts of the topics in the group's subscription
    metadata (-1 for any other id). At Kafka 4.0 its `racksForPartition` always answers the empty
    set, so no server-side assignor is rack-aware (KAFKA-16694 removed rack awareness in 3.8)."""

    def __init__(self, partitions: dict, racks: Optional[dict] = None):
        self._partitions = {_as_topic_id(t): n for t, n in partitions.items()}
        self.text = {_as_topic_id(t): str(t) for t in partitions}   # id -> the caller's spelling
        self._racks = racks or {}

    def num_partitions(self, topic_id) -> int:
        return self._partitions.get(topic_id, -1)

    def racks_for_partition(self, topic_id, partition: int) -> frozenset:
        return frozenset()


def subscription_type(subscriptions) -> str:
    """`ModernGroup.subscriptionType`: HOMOGENEOUS when every subscribed topic NAME (existing or not)
    is subscribed by every member, or nobody subscribes to anything; else HETEROGENEOUS."""
    subscriptions = [set(s) for s in subscriptions]
    counts: dict = {}
    for s in subscriptions:
        for name in s:
            counts[name] = counts.get(name, 0) + 1
    return HOMOGENEOUS if all(c == len(subscriptions) for c in counts.values()) else HETEROGENEOUS


_subscription_type = subscription_type
