"""Certifying KIP-848 server-side assignors (`"protocol": "consumer"`) with the same scenarios and properties.

Why it exists: under the consumer group protocol the coordinator runs the assignor, and what it hands the
assignor is not each member's owned partitions with a generation but the group's current *target
assignment* (`assigned`). The scenarios of `scenarios.py` are played unchanged; this module translates
each round's problem into the consumer-protocol format (problem.py of impl/consumer/assignors):
a member's partitions from the previous round become its `assigned` list, so `sticky` is judged against
the current target assignment. Stale claims do not exist here (the coordinator's target assignment is the
one truth), so the stale family is played as the realistic one; `cooperative-safe` is not a property of a
server-side assignor (the coordinator withholds a partition until its previous owner revoked it).

Targets: `consumer:uniform`, `consumer:range` (Kafka 4.0's, kverify.impl.consumer.assignors), or any
program with `--command CMD --protocol consumer` that reads one consumer-protocol problem per line.
"""
from __future__ import annotations

from kverify.certify.failures import TargetError, TargetFailure
from kverify.certify.properties import ORDER

PREFIX = "consumer:"
SERVER_SIDE = ("the coordinator withholds a partition until its previous owner revoked it (partition epochs): "
               "a server-side assignor may move partitions directly")
STICKY_18688 = ("Kafka 4.0's homogeneous uniform builder can move a partition of an already balanced group "
                "(KAFKA-18688, fixed in 4.1): reproduced faithfully, so the gap is reported, not claimed")
CLAIMS = {
    "uniform": {"cooperative-safe": SERVER_SIDE, "sticky": STICKY_18688},
    "range": {"cooperative-safe": SERVER_SIDE,
              "balanced": "range balances topic by topic among each topic's subscribers, not across topics",
              "sticky": "range keeps each member's contiguous range of a topic; it does not maximise the partitions "
                        "kept"},
}
HASH_ORDER = ("member order not required: Kafka's coordinator iterates members and assignments in HashMap "
              "order, which follows insertion history")


def consumer_problem(problem: dict, assignor: str | None) -> dict:
    """The round's problem in the consumer-protocol format: previous partitions become `assigned`. What a
    coordinator's target assignment cannot hold is left out: a partition listed twice (the first listing
    counts; the target assignment gives a partition to one member) and a partition number past an existing
    topic's count (Kafka's partitions never shrink: a re-created topic has a new topic id, so an old
    assignment names a topic that no longer exists, which is kept)."""
    topics = problem["topics"]
    taken = set()
    members = []
    for m in problem["members"]:
        assigned = []
        for x in m.get("owned") or []:
            tp = (x[0], x[1])
            if tp in taken or (tp[0] in topics and not 0 <= tp[1] < topics[tp[0]]):
                continue
            taken.add(tp)
            assigned.append(list(tp))
        members.append({"id": m["id"], "topics": list(m["topics"]), "rack": None,
                        "instance_id": m.get("instance_id"), "assigned": assigned})
    out = {"id": problem["id"], "protocol": "consumer", "topics": dict(topics), "members": members}
    if assignor is not None:
        out["assignor"] = assignor
    return out


class ConsumerTarget:
    """A built-in server-side assignor of kverify.impl.consumer.assignors."""

    protocol = "consumer"

    def __init__(self, spec: str):
        from kverify.impl.consumer.assignors import names

        assignor = spec[len(PREFIX):]
        if assignor not in names():
            raise TargetError(f"unknown server-side assignor {assignor!r} (known: "
                              f"{', '.join(PREFIX + n for n in names())})")
        self.assignor = assignor
        self.name = spec
        self.behaviours = frozenset()
        self.cooperative = False
        self.member_order_free = False
        self.claims = {p: CLAIMS[assignor].get(p) for p in ORDER}
        self.note = HASH_ORDER
        self.scopes = {}

    def solve(self, problem: dict) -> dict:
        from kverify.impl.consumer.assignors import assign

        answer = assign(consumer_problem(problem, self.assignor))
        if not isinstance(answer, dict):
            raise TargetFailure("malformed", f"assign() returned {type(answer).__name__}")
        return answer

    def close(self) -> None:
        pass


class ConsumerProtocol:
    """Wraps a target that speaks the consumer-protocol format (an external program): each round's
    problem is translated before it is sent."""

    protocol = "consumer"

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.behaviours = frozenset()
        self.cooperative = False
        self.member_order_free = inner.member_order_free
        self.claims = dict(inner.claims, **{"cooperative-safe": SERVER_SIDE})
        self.note = getattr(inner, "note", None)
        self.scopes = {}
        self.command = inner.command

    def solve(self, problem: dict) -> dict:
        return self.inner.solve(consumer_problem(problem, None))

    def close(self) -> None:
        self.inner.close()
