"""KIP-848's server-side assignors (`uniform`, `range`), Kafka-exact as of Kafka 4.0.

Source followed: apache/kafka trunk at 1eb7644349c (2024-10-25). The mirror available here has no 4.0
tag or branch; this is its newest commit, after the last rework before 4.0 (KAFKA-17710, heterogeneous
builder, 2024-10-17). The pull-request history shows no behavioural change to these classes between
it and 4.0.0; the next one, KAFKA-18688 (homogeneous builder stability, May 2025), is in 4.1, and
Kafka's later tests expect different answers accordingly. Rack awareness was removed in 3.8
(KAFKA-16694) and is absent at 4.0: racks are accepted and ignored.
Iteration orders are JDK 17's, checked against Kafka's classes run on OpenJDK 17 (see
tests/test_consumer_assignors_vectors.py); java_order.py notes where JDK 19+ differs.

Entry points:
- `assign(problem: dict) -> dict`: answers a `"protocol": "consumer"` problem (format in problem.py)
  with `{"id", "assignment": {member: [[topic, partition], ...]}}` (every member, input order,
  partitions sorted) or `{"id", "error": "one line"}` where Kafka's assignor throws or the problem is
  malformed. Never raises.
- `assign_ordered(problem: dict) -> dict`: the same, but each member's assignment is
  `[[topic, [partition, ...]], ...]` in the iteration order of Kafka's result map, i.e. the order of
  the ConsumerGroupTargetAssignmentMemberValue record Kafka writes (feed it back as `assigned`).
- `get(name).assign(GroupSpec, TopicDescriber)`: the coordinator's call (TargetAssignmentBuilder in impl/consumer),
  {member: {topic id: frozenset(partitions)}}; `.assign_maps` keeps Kafka's map orders.
- `topic_id_for(name)`: the Kafka Uuid string derived for a topic given without an id.
"""
from __future__ import annotations

from kverify.impl.assignors.problem import ProblemError, tp_key
from kverify.impl.consumer.assignors.problem import ASSIGNORS, parse_consumer_problem
from kverify.impl.consumer.assignors.range_assignor import assign_range
from kverify.impl.consumer.assignors.spec import (HETEROGENEOUS, HOMOGENEOUS, GroupSpec, MemberSpec,
                                                  PartitionAssignorError, TopicDescriber)
from kverify.impl.consumer.assignors.topic_ids import derived_topic_id
from kverify.impl.consumer.assignors.uniform import assign_uniform

_REGISTRY = {"uniform": assign_uniform, "range": assign_range}


def names() -> list:
    """The server-side assignor names, Kafka's default (`uniform`) first."""
    return list(ASSIGNORS)


class ServerAssignor:
    """A `ConsumerGroupPartitionAssignor`: `name` and `assign(GroupSpec, TopicDescriber)`."""

    def __init__(self, name: str):
        self.name = name
        self._fn = _REGISTRY[name]

    def assign_maps(self, group: GroupSpec, describer: TopicDescriber) -> dict:
        """{member id: JavaHashMap[TopicId -> JavaHashMap[int]]}: Kafka's GroupAssignment, its maps'
        iteration order included (members Kafka leaves out are absent). Raises PartitionAssignorError."""
        return self._fn(group, describer)

    def assign(self, group: GroupSpec, describer: TopicDescriber) -> dict:
        """{member id: {topic id: frozenset(partitions)}} for EVERY member of the spec (empty dict when
        Kafka gives a member nothing); topic ids spelled as the describer was given them.
        Raises PartitionAssignorError where Kafka's assignor throws."""
        maps = self._fn(group, describer)
        text = describer.text
        out = {}
        for member_id in group.member_ids:
            m = maps.get(member_id)
            out[member_id] = {} if m is None else {text.get(t, str(t)): frozenset(ps.keys()) for t, ps in m.items()}
        return out


def get(name: str) -> ServerAssignor:
    """The server-side assignor called `name` ("uniform" or "range")."""
    if name not in _REGISTRY:
        raise ProblemError(f"unknown consumer assignor {name!r} (server-side: {', '.join(ASSIGNORS)})")
    return ServerAssignor(name)


def topic_id_for(name: str) -> str:
    """The Kafka Uuid string kverify derives for a topic given without an id (topic_ids.py)."""
    return str(derived_topic_id(name))


def _solve(problem: dict, assignor):
    parsed = parse_consumer_problem(problem, assignor)
    result = get(parsed.assignor).assign_maps(parsed.group, parsed.describer)
    return parsed, result


def _pid(problem):
    return problem.get("id") if isinstance(problem, dict) else None


def assign(problem: dict, assignor: str | None = None) -> dict:
    """Answer one consumer-protocol problem (see problem.py). Never raises."""
    try:
        parsed, result = _solve(problem, assignor)
    except (ProblemError, PartitionAssignorError) as exc:
        return {"id": _pid(problem), "error": str(exc)}
    out = {}
    for member_id in parsed.member_ids:
        m = result.get(member_id)
        tps = [] if m is None else [(parsed.names[t], p) for t, ps in m.items() for p in ps.keys()]
        out[member_id] = [[t, p] for t, p in sorted(tps, key=tp_key)]
    return {"id": parsed.id, "assignment": out}


def assign_ordered(problem: dict, assignor: str | None = None) -> dict:
    """Like `assign`, each member's answer in Kafka's map iteration order:
    `[[topic, [partition, ...]], ...]`. Never raises."""
    try:
        parsed, result = _solve(problem, assignor)
    except (ProblemError, PartitionAssignorError) as exc:
        return {"id": _pid(problem), "error": str(exc)}
    out = {}
    for member_id in parsed.member_ids:
        m = result.get(member_id)
        out[member_id] = [] if m is None else [[parsed.names[t], list(ps.keys())] for t, ps in m.items()]
    return {"id": parsed.id, "assignment": out}


__all__ = ["assign", "assign_ordered", "get", "names", "topic_id_for", "ServerAssignor", "GroupSpec", "MemberSpec",
           "TopicDescriber",
           "PartitionAssignorError", "HOMOGENEOUS", "HETEROGENEOUS"]
