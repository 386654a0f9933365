"""The uniform assignor for a group whose members subscribe to different topics.

Follows Kafka 4.0's `UniformHeterogeneousAssignmentBuilder` (as reworked by KAFKA-17710, #17385):
1. members are numbered in `memberIds()` iteration order; that number breaks every tie;
2. each member keeps its current partitions of topics it still subscribes to (no quota here);
3. topics are taken by partitions-per-subscriber descending, then subscriber count ascending, then
   topic id ascending (`Uuid.compareTo`); a topic's free partitions go, in partition order, round
   after round to its least loaded subscribers (`MemberAssignmentBalancer.nextLeastLoadedMember`);
4. balancing: topics with 2+ subscribers, in the same order, move partitions from their most to their
   least loaded subscribers until the loads differ by at most one, looping over the topics until a
   full loop moves nothing (at most MAX_ITERATION_COUNT loops). A donor gives its highest-numbered
   partition of the topic.
Balance is near-optimal, not guaranteed, for overlapping subscriptions (Kafka's own javadoc example).
"""
from __future__ import annotations

from kverify.impl.assignors.java_order import presized_capacity
from kverify.impl.consumer.assignors.assignment_maps import deep_copy_assignment, new_partition_set
from kverify.impl.consumer.assignors.spec import PartitionAssignorError

MAX_ITERATION_COUNT = 16


class _Balancer:
    """`MemberAssignmentBalancer`: a least loaded range growing right and a most loaded range growing
    left over the subscribers sorted by (load, member number); loads are read live."""

    def __init__(self, sizes: list):
        self.sizes = sizes
        self.sorted = []

    def initialize(self, members) -> int:
        if not members:
            raise PartitionAssignorError("Cannot balance an empty subscriber list.")
        sizes = self.sizes
        self.sorted = sorted(members, key=lambda i: (sizes[i], i))
        n = len(self.sorted)
        self.least_end = 0
        self.least_count = sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = n
        self.most_end = n
        self.most_count = sizes[self.sorted[-1]] + 1
        self.next_most = n - 1
        return sizes[self.sorted[-1]] - sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        order, sizes = self.sorted, self.sizes
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = order[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        order, sizes = self.sorted, self.sizes
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = sizes[order[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = order[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        order = self.sorted
        i = self.next_most + 1
        order[i], order[self.most_end - 1] = order[self.most_end - 1], order[i]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class HeterogeneousBuilder:
    """One run of `UniformHeterogeneousAssignmentBuilder`."""

    def __init__(self, group, describer):
        self.group = group
        self.describer = describer
        self.member_ids = list(group.member_ids)
        self.index = {m: i for i, m in enumerate(self.member_ids)}
        self.sizes = [0] * len(self.member_ids)
        self.subscribers = {}          # topic id -> [member number, ...] ascending
        for i, member_id in enumerate(self.member_ids):
            for topic_id in group.member_subscription(member_id).subscribed:
                if describer.num_partitions(topic_id) == -1:
                    raise PartitionAssignorError(
                        f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata.")
                self.subscribers.setdefault(topic_id, []).append(i)
        self.owners = {t: [-1] * describer.num_partitions(t) for t in self.subscribers}
        self.target = {}

    def _topic_order(self, topic_ids) -> list:
        def key(t):
            count, subs = self.describer.num_partitions(t), len(self.subscribers[t])
            return (-(count / subs), subs, t)
        return sorted(topic_ids, key=key)

    def build(self) -> dict:
        if not self.subscribers:
            return {}
        self._keep_subscribed()
        free = {}
        for topic_id, owners in self.owners.items():
            ps = [p for p, o in enumerate(owners) if o == -1]
            if ps:
                free[topic_id] = ps
        balancer = _Balancer(self.sizes)
        for topic_id in self._topic_order(free):
            balancer.initialize(self.subscribers[topic_id])
            for p in free[topic_id]:
                self._assign(topic_id, p, balancer.next_least_loaded())
        shared = [t for t, subs in self.subscribers.items() if len(subs) >= 2]
        if shared:
            self._balance_topics(shared)
        return self.target

    def _keep_subscribed(self) -> None:
        """`maybeRevokePartitions`: drop unsubscribed topics, count and own the rest."""
        for member_id in self.group.member_ids:
            i = self.index[member_id]
            old = self.group.member_assignment(member_id)
            if not old.immutable:
                raise PartitionAssignorError("The assignor expect an immutable map.")
            spec = self.group.member_subscription(member_id)
            new = None
            for topic_id, partitions in old.items():
                if spec.subscribes(topic_id):
                    self.sizes[i] += len(partitions)
                    owners = self.owners[topic_id]
                    for p in partitions.keys():
                        if not 0 <= p < len(owners):   # Java: ArrayIndexOutOfBoundsException
                            raise PartitionAssignorError(f"Index {p} out of bounds for length {len(owners)}")
                        owners[p] = i
                else:
                    if new is None:
                        new = deep_copy_assignment(old)
                    new.remove(topic_id)
            self.target[member_id] = old if new is None else new

    def _balance_topics(self, topic_ids) -> None:
        order = self._topic_order(topic_ids)
        last_moved = -1
        balancer = _Balancer(self.sizes)
        for _ in range(MAX_ITERATION_COUNT):
            for ti, topic_id in enumerate(order):
                if ti == last_moved:
                    return
                moved = self._balance_topic(topic_id, balancer)
                if moved > 0 or last_moved == -1:
                    last_moved = ti

    def _balance_topic(self, topic_id, balancer: _Balancer) -> int:
        moved = 0
        owners = self.owners[topic_id]
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return 0
        parts = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start, end = {}, {}
        for i, p in enumerate(parts):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            donor = -1
            while True:
                donor = balancer.next_most_loaded()
                if donor == -1:
                    break
                if donor not in end or end[donor] - start[donor] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if donor == -1:
                break
            partition = parts[end[donor] - 1]
            end[donor] -= 1
            receiver = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic_id, partition, receiver)
            moved += 1
        return moved

    def _mutable(self, member_id):
        assignment = self.target[member_id]
        if assignment.immutable:
            assignment = deep_copy_assignment(assignment)
            self.target[member_id] = assignment
        return assignment

    def _assign(self, topic_id, partition: int, member: int) -> None:
        owners = self.owners[topic_id]
        previous = owners[partition]
        if previous != -1:
            assignment = self._mutable(self.member_ids[previous])
            kept = assignment.get(topic_id)
            if kept is not None:
                kept.remove(partition)
                if len(kept) == 0:
                    assignment.remove(topic_id)
            owners[partition] = -1
            self.sizes[previous] -= 1
        assignment = self._mutable(self.member_ids[member])
        count, subs = len(owners), len(self.subscribers[topic_id])
        estimate = (count + subs - 1) // subs
        assignment.put_if_absent(topic_id, lambda: new_partition_set(presized_capacity(estimate))).put(partition, True)
        owners[partition] = member
        self.sizes[member] += 1


def assign_heterogeneous(group, describer) -> dict:
    """`UniformHeterogeneousAssignmentBuilder.build()`: {member id: JavaHashMap assignment}."""
    return HeterogeneousBuilder(group, describer).build()
