"""Kafka's GeneralAssignmentBuilder: the sticky algorithm when subscriptions differ
(AbstractStickyAssignor, 3.9, no racks).

Kept claims stay, unassigned partitions go to the least loaded subscriber, then partitions are
moved (preferring their previous owner, undoing earlier moves) until no member could take a
partition from one holding two more; if that did not lower the balance score the pre-balance
assignment is restored. Kafka's orders are kept: a TreeSet of members by (size, id) and the
first element of a HashSet of moved partitions.
"""
from __future__ import annotations

from bisect import bisect_left, insort

from kverify.impl.assignors.errors import AssignorCrash
from kverify.impl.assignors.java_order import JavaHashSet
from kverify.impl.assignors.problem import java_key
from kverify.impl.assignors.sticky_support import DEFAULT_GENERATION, need, remove_first


class _SortedConsumers:
    """TreeSet<String> ordered by (current assignment size, member id): sortedCurrentSubscriptions."""

    def __init__(self, assignment):
        self._assignment = assignment
        self._keys = []
        self._key_of = {}

    def _key(self, c):
        return (len(self._assignment[c]), java_key(c), c)

    def add(self, c) -> None:
        if c in self._key_of:
            return
        k = self._key(c)
        self._key_of[c] = k
        insort(self._keys, k)

    def remove(self, c) -> None:
        k = self._key_of.pop(c, None)
        if k is not None:
            i = bisect_left(self._keys, k)
            if i < len(self._keys) and self._keys[i] == k:
                del self._keys[i]

    def __iter__(self):
        return iter([k[2] for k in self._keys])

    def first(self):
        return self._keys[0][2]

    def last(self):
        return self._keys[-1][2]


class _Movements:
    """PartitionMovements: which partitions moved between which consumers, per topic."""

    def __init__(self):
        self.by_topic = {}
        self.moves = {}

    def _remove_record(self, tp):
        pair = self.moves.pop(tp)
        per = self.by_topic[tp[0]]
        per[pair].remove(tp)
        if not len(per[pair]):
            del per[pair]
        if not per:
            del self.by_topic[tp[0]]
        return pair

    def _add_record(self, tp, pair) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, JavaHashSet()).add(tp)

    def move(self, tp, old, new) -> None:
        if tp in self.moves:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_move(self, tp, old, new):
        per = self.by_topic.get(tp[0])
        if per is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = (new, old)
        if reverse not in per:
            return tp
        return per[reverse].first()


class GeneralBuilder:
    """GeneralAssignmentBuilder: members subscribe to different topics."""

    def __init__(self, core, per_topic, owned_map, subs):
        self.core = core
        self.per_topic = per_topic
        self.subs = subs
        self.current = owned_map
        self.total = sum(per_topic.values())
        self.topic_consumers = {t: [] for t in per_topic}
        self.consumer_topics = {}
        for c, sub in subs.items():
            mine = []
            self.consumer_topics[c] = mine
            for t in sub.topics:
                if t in per_topic:
                    mine.append(t)
                    self.topic_consumers[t].append(c)
            self.current.setdefault(c, [])
        self.partition_consumer = {}
        for c, tps in self.current.items():
            for tp in tps:
                self.partition_consumer[tp] = c
        topics = sorted(self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), java_key(t)))
        self.sorted_all = [(t, p) for t in topics for p in range(per_topic[t])]
        self.sorted_subs = _SortedConsumers(self.current)
        self.revocation_required = False
        self.movements = _Movements()

    def build(self) -> dict:
        prev = {}
        self._prepopulate(prev)
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        for c in self.current:
            self.sorted_subs.add(c)
        self._balance(prev, unassigned)
        return self.current

    def _assign_owned(self) -> list:
        assigned = []
        for c in list(self.current):
            sub = self.subs.get(c)
            tps = self.current[c]
            if sub is None:
                for tp in tps:
                    self.partition_consumer.pop(tp, None)
                del self.current[c]
                continue
            keep = []
            for tp in tps:
                if tp[0] not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp[0] not in sub.topics:
                    self.revocation_required = True
                else:
                    keep.append(tp)
                    assigned.append(tp)
            tps[:] = keep
        return assigned

    def _unassigned(self, assigned) -> list:
        if not assigned:
            return self.sorted_all
        tc = self.topic_consumers
        assigned.sort(key=lambda tp: (len(need(tc, tp[0], "topic")), java_key(tp[0]), tp[1]))
        out = []
        add_directly = False
        it = iter(assigned)
        nxt = next(it)
        for tp in self.sorted_all:
            if add_directly or nxt != tp:
                out.append(tp)
            else:
                try:
                    nxt = next(it)
                except StopIteration:
                    add_directly = True
        return out

    def _prepopulate(self, prev) -> None:
        maxg = self.core.max_generation
        for c, sub in self.subs.items():
            g = sub.data_generation
            if g is not None and g < maxg:
                self._update_prev(prev, sub.data_partitions, c, g)
            elif g is None and maxg > DEFAULT_GENERATION:
                self._update_prev(prev, sub.data_partitions, c, DEFAULT_GENERATION)

    @staticmethod
    def _update_prev(prev, partitions, consumer, generation) -> None:
        for tp in partitions:
            old = prev.get(tp)
            if old is None or generation > old[1]:
                prev[tp] = (consumer, generation)

    # ---------------------------------------------------------------- balancing
    def _max_size(self, topics) -> int:
        if len(topics) == len(self.per_topic):
            return self.total
        return sum(self.per_topic[t] for t in topics)

    def _is_balanced(self) -> bool:
        cur = self.current
        lo = len(cur[self.sorted_subs.first()])
        hi = len(cur[self.sorted_subs.last()])
        if lo >= hi - 1:
            return True
        owner = {}
        for c, tps in cur.items():
            for tp in tps:
                owner[tp] = c
        for c in self.sorted_subs:
            mine = cur[c]
            count = len(mine)
            topics = self.consumer_topics[c]
            if count == self._max_size(topics):
                continue
            mine_set = set(mine)
            for t in topics:
                for p in range(self.per_topic[t]):
                    tp = (t, p)
                    if tp not in mine_set:
                        other = owner.get(tp)
                        if other is None:
                            raise AssignorCrash(f"NullPointerException: partition {tp} has no consumer")
                        if count + 1 < len(need(cur, other, "assignment")):
                            return False
        return True

    def _assign_one(self, tp) -> bool:
        for c in self.sorted_subs:
            if tp[0] in self.consumer_topics[c]:
                self.sorted_subs.remove(c)
                self.current[c].append(tp)
                self.partition_consumer[tp] = c
                self.sorted_subs.add(c)
                return True
        return False

    def _can_topic_move(self, topic) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _can_consumer_move(self, c) -> bool:
        tps = self.current[c]
        if len(tps) < self._max_size(self.consumer_topics[c]):
            return True
        return any(self._can_topic_move(tp[0]) for tp in tps if tp[0] in self.topic_consumers)

    def _balance(self, prev, unassigned) -> None:
        initializing = not self.current[self.sorted_subs.last()]
        for tp in unassigned:
            if not self.topic_consumers[tp[0]]:
                continue
            self._assign_one(tp)
        fixed_partitions = {(t, p) for t in self.topic_consumers if not self._can_topic_move(t)
                            for p in range(self.per_topic[t])}
        same = unassigned is self.sorted_all
        self.sorted_all[:] = [tp for tp in self.sorted_all if tp not in fixed_partitions]
        if not same:
            unassigned[:] = [tp for tp in unassigned if tp not in fixed_partitions]
        fixed = {}
        for c in list(self.consumer_topics):
            if not self._can_consumer_move(c):
                self.sorted_subs.remove(c)
                fixed[c] = self.current.pop(c)
        before = {c: list(tps) for c, tps in self.current.items()}
        before_owner = dict(self.partition_consumer)
        if not self.revocation_required:
            self._reassign(unassigned, prev)
        performed = self._reassign(self.sorted_all, prev)
        if not initializing and performed and _score(self.current) >= _score(before):
            self.current.clear()
            self.current.update({c: list(tps) for c, tps in before.items()})
            self.partition_consumer = before_owner
        for c, tps in fixed.items():
            self.current[c] = tps
            self.sorted_subs.add(c)

    def _reassign(self, partitions, prev) -> bool:
        performed = False
        cur = self.current
        while True:
            modified = False
            for tp in list(partitions):
                if self._is_balanced():
                    break
                consumer = self.partition_consumer.get(tp)
                mine = need(cur, consumer, "assignment")
                if tp in prev:
                    prev_consumer = prev[tp][0]
                    if len(mine) > len(need(cur, prev_consumer, "assignment")) + 1:
                        self._move(tp, prev_consumer)
                        performed = modified = True
                        continue
                for other in self.topic_consumers[tp[0]]:
                    if len(mine) > len(need(cur, other, "assignment")) + 1:
                        self._move_to_best(tp)
                        performed = modified = True
                        break
            if not modified:
                return performed

    def _move_to_best(self, tp) -> None:
        for c in self.sorted_subs:
            if tp[0] in self.consumer_topics[c]:
                self._move(tp, c)
                return
        raise AssignorCrash(f"AssertionError: no consumer can take {tp}")

    def _move(self, tp, new) -> None:
        old = self.partition_consumer.get(tp)
        actual = self.movements.actual_partition_to_move(tp, old, new)
        old = self.partition_consumer.get(actual)
        self.sorted_subs.remove(old)
        self.sorted_subs.remove(new)
        self.movements.move(actual, old, new)
        remove_first(need(self.current, old, "assignment"), actual)
        need(self.current, new, "assignment").append(actual)
        self.partition_consumer[actual] = new
        self.sorted_subs.add(new)
        self.sorted_subs.add(old)


def _score(assignment) -> int:
    sizes = [len(v) for v in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])
