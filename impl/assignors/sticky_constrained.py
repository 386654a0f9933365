"""Kafka's ConstrainedAssignmentBuilder: the sticky algorithm when every member subscribes to
the same topics (AbstractStickyAssignor, 3.9, no racks).

Claimed partitions are kept up to the quota (floor or ceil of partitions per member), the rest
is dealt round robin to members still under quota; every partition that leaves a claimant or
was claimed twice is recorded as transferring ownership (the cooperative assignor withholds it).
"""
from __future__ import annotations

from kverify.impl.assignors.errors import AssignorCrash
from kverify.impl.assignors.problem import java_key
from kverify.impl.assignors.sticky_support import JavaIterator, remove_first


class ConstrainedBuilder:
    """ConstrainedAssignmentBuilder: every member subscribes to the same topics."""

    def __init__(self, core, per_topic, owned_map, multi):
        self.core = core
        self.per_topic = per_topic
        self.current = owned_map
        self.multi = multi
        self.maybe_revoked = {}
        self.under_min = []
        self.exactly_min = []
        total = sum(per_topic.values())
        n = len(owned_map)
        self.total = total
        self.min_quota = total // n
        self.max_quota = -(-total // n)
        self.expected_over = total % n
        self.current_over = 0
        self.assignment = {c: [] for c in owned_map}
        self.assigned = []

    def build(self) -> dict:
        self._assign_owned()
        unassigned = self._unassigned(self.assigned)
        self.under_min.sort(key=java_key)
        self.exactly_min.sort(key=java_key)
        self._round_robin(unassigned)
        self._verify_unfilled()
        return self.assignment

    def _assign_owned(self) -> None:
        for c, claimed in self.current.items():
            owned = sorted(claimed, key=lambda tp: (tp[1], java_key(tp[0])))
            mine = self.assignment[c]
            for tp in list(self.multi):
                if tp in owned:
                    remove_first(owned, tp)
            if len(owned) < self.min_quota:
                mine.extend(owned)
                self.assigned.extend(owned)
                self.under_min.append(c)
            elif len(owned) >= self.max_quota and self.current_over < self.expected_over:
                self.current_over += 1
                if self.current_over == self.expected_over:
                    self.exactly_min.clear()
                mine.extend(owned[:self.max_quota])
                self.assigned.extend(owned[:self.max_quota])
                for tp in owned[self.max_quota:]:
                    self.maybe_revoked[tp] = c
            else:
                mine.extend(owned[:self.min_quota])
                self.assigned.extend(owned[:self.min_quota])
                for tp in owned[self.min_quota:]:
                    self.maybe_revoked[tp] = c
                if self.current_over < self.expected_over:
                    self.exactly_min.append(c)

    def _unassigned(self, assigned) -> list:
        topics = sorted(self.per_topic, key=java_key)
        if not assigned:
            return [(t, p) for t in topics for p in range(self.per_topic[t])]
        assigned.sort(key=lambda tp: (java_key(tp[0]), tp[1]))
        out = []
        add_directly = False
        it = iter(assigned)
        nxt = next(it)
        for t in topics:
            for p in range(self.per_topic[t]):
                if add_directly or nxt != (t, p):
                    out.append((t, p))
                else:
                    try:
                        nxt = next(it)
                    except StopIteration:
                        add_directly = True
        return out

    def _round_robin(self, unassigned) -> None:
        it = JavaIterator(self.under_min)
        for tp in unassigned:
            if it.has_next():
                consumer = it.next()
            elif not self.under_min and not self.exactly_min:
                raise AssignorCrash("IllegalStateException: No more unfilled consumers to be assigned.")
            elif not self.under_min:
                consumer = self.exactly_min.pop(0)
            else:
                it = JavaIterator(self.under_min)
                consumer = it.next()
            count = self._assign_new(tp, consumer)
            if count == self.min_quota:
                it.remove()
                self.exactly_min.append(consumer)
            elif count == self.max_quota:
                self.current_over += 1

    def _assign_new(self, tp, consumer) -> int:
        mine = self.assignment[consumer]
        mine.append(tp)
        prev = self.maybe_revoked.get(tp)
        if (prev is not None and prev != consumer) or tp in self.multi:
            self.core.transferring[tp] = consumer
        return len(mine)

    def _verify_unfilled(self) -> None:
        if not self.under_min:
            return
        if self.current_over != self.expected_over:
            raise AssignorCrash("IllegalStateException: We haven't reached the expected number of members with "
                                "more than the minQuota partitions, but no more partitions to be assigned")
        for c in self.under_min:
            if len(self.assignment[c]) != self.min_quota:
                raise AssignorCrash(f"IllegalStateException: Consumer: [{c}] doesn't reach minQuota partitions, "
                                    "and no more partitions to be assigned")
