"""Kafka's `range` assignor (RangeAssignor, 3.x, without rack information).

Topic by topic, among that topic's subscribers only (sorted as MemberInfo sorts them), each
subscriber takes a consecutive block of n/k partitions and the first n%k take one more. Totals
across topics are not balanced; that is range's contract, not a bug.
"""
from __future__ import annotations


class RangeAssignor:
    name = "range"
    cooperative = False

    def __init__(self, behaviours=frozenset()):
        self.behaviours = frozenset(behaviours)

    def assign(self, problem) -> dict:
        assignment = {m.id: [] for m in problem.members}
        ordered = problem.member_order_kafka()
        subscribers: dict = {}
        for m in ordered:
            for t in m.topics:
                subscribers.setdefault(t, []).append(m.id)
        for topic, n in problem.topics.items():
            consumers = subscribers.get(topic)
            if n <= 0 or not consumers:
                continue
            per, extra = divmod(n, len(consumers))
            start = 0
            for i, cid in enumerate(consumers):
                length = per + (1 if i < extra else 0)
                assignment[cid].extend((topic, p) for p in range(start, start + length))
                start += length
        return assignment
