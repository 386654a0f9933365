"""Kafka's `roundrobin` assignor (RoundRobinAssignor).

All partitions of every subscribed, existing topic (topics in Java string order, partitions
ascending) are dealt over the sorted members in a circle; a member not subscribed to the
partition's topic is skipped (and the circle moves past it).
"""
from __future__ import annotations

from kverify.impl.assignors.problem import java_sorted


class RoundRobinAssignor:
    name = "roundrobin"
    cooperative = False

    def __init__(self, behaviours=frozenset()):
        self.behaviours = frozenset(behaviours)

    def assign(self, problem) -> dict:
        assignment = {m.id: [] for m in problem.members}
        ordered = problem.member_order_kafka()
        if not ordered:
            return assignment
        subscribed = [frozenset(m.topics) for m in ordered]
        topics = java_sorted({t for m in ordered for t in m.topics})
        k = len(ordered)
        pos = 0
        for topic in topics:
            n = problem.topics.get(topic, 0)
            for p in range(n):
                while topic not in subscribed[pos]:
                    pos = (pos + 1) % k
                assignment[ordered[pos].id].append((topic, p))
                pos = (pos + 1) % k
        return assignment
