"""`legacy-range`: the pre-0.9 ZooKeeper-era consumer rebalance, kept as a historical reference.

All partitions of all subscribed, existing topics are sorted, consumers are sorted (member id,
Java string order), and consumer i takes the block i*N .. (i+1)*N-1 with N = ceil(P/C). Blocks
are cut from the global list, so the last consumers may get nothing, and a consumer may get
partitions of a topic it does not subscribe to when subscriptions differ (the old consumer
assumed identical subscriptions): a known weakness the certification shows.
"""
from __future__ import annotations

from kverify.impl.assignors.problem import java_key, java_sorted


class LegacyRangeAssignor:
    name = "legacy-range"
    cooperative = False

    def __init__(self, behaviours=frozenset()):
        self.behaviours = frozenset(behaviours)

    def assign(self, problem) -> dict:
        assignment = {m.id: [] for m in problem.members}
        consumers = sorted(problem.members, key=lambda m: java_key(m.id))
        if not consumers:
            return assignment
        topics = java_sorted({t for m in consumers for t in m.topics})
        partitions = [(t, p) for t in topics for p in range(problem.topics.get(t, 0))]
        per = -(-len(partitions) // len(consumers))
        for i, m in enumerate(consumers):
            assignment[m.id].extend(partitions[i * per:(i + 1) * per])
        return assignment
