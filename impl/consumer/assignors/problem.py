"""The `"protocol": "consumer"` assignment problem: parsed, validated, turned into a GroupSpec.

Format (one JSON object; `kverify assign` reads one per line):
  {"id", "protocol": "consumer", "assignor": "uniform" | "range",
   "topics": {name: partitions},                 existing topics (the group's subscription metadata)
   "topic_ids": {name: "Kafka Uuid"},            optional; missing ids are derived (topic_ids.py)
   "racks": {topic: [[rack, ...] per partition]}, optional; validated, unused (Kafka 4.0 is not rack-aware)
   "members": [{"id", "topics": [name, ...], "rack", "instance_id",
                "assigned": [[topic, partition], ...]}],   assigned = current target assignment
   "member_order": "hash" | "input",            optional, default "hash"
   "assigned_order": "hash" | "input"}          optional, default "hash"
A topic named in `topic_ids` but absent from `topics` exists in the cluster but not in the group's
subscription metadata: Kafka's assignors throw when a member subscribes to it.
`member_order`: "hash" = Kafka's coordinator (`TargetAssignmentBuilder` puts the members, in the
listed order, into a HashMap, so `memberIds()` iterates in String.hashCode bucket order); "input" =
the listed order (Kafka's assignor tests use a TreeMap or a sorted list: list members sorted).
`assigned_order`: "hash" = `Assignment.fromRecord` (a HashMap filled in the order topics first
appear in `assigned`, a HashSet of partitions per topic); "input" = topics in that order (a
LinkedHashMap, as Kafka's tests' `mkOrderedAssignment`), partitions still in a HashSet.
"""
from __future__ import annotations

from dataclasses import dataclass

from kverify.impl.assignors.problem import ProblemError
from kverify.impl.consumer.assignors.assignment_maps import from_record
from kverify.impl.consumer.assignors.spec import GroupSpec, MemberSpec, TopicDescriber
from kverify.impl.consumer.assignors.topic_ids import derived_topic_id, parse_topic_id

ASSIGNORS = ("uniform", "range")
_FIELDS = {"id", "protocol", "assignor", "topics", "topic_ids", "racks", "members", "member_order",
           "assigned_order"}
_MEMBER_FIELDS = {"id", "topics", "rack", "instance_id", "assigned"}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class ConsumerProblem:
    id: object
    assignor: str
    group: GroupSpec
    describer: TopicDescriber
    member_ids: list            # input order
    names: dict                 # topic id -> name


def _opt_str(raw, key, where):
    v = raw.get(key)
    if v is not None and not isinstance(v, str):
        raise ProblemError(f"{where}: '{key}' must be a string or null")
    return v


def _topic_ids(raw, topics) -> dict:
    given = raw.get("topic_ids", {})
    if not isinstance(given, dict):
        raise ProblemError("'topic_ids' must be an object {topic: Kafka Uuid string}")
    ids = {}
    for name, text in given.items():
        try:
            ids[name] = parse_topic_id(text)
        except ValueError as exc:
            raise ProblemError(f"topic_ids[{name!r}]: {exc}") from None
    return ids


def _racks(raw, topics) -> dict:
    racks = raw.get("racks", {})
    if not isinstance(racks, dict):
        raise ProblemError("'racks' must be an object {topic: [[rack, ...] per partition]}")
    for topic, per_partition in racks.items():
        if topic not in topics:
            raise ProblemError(f"racks: topic {topic!r} is not in 'topics'")
        if (not isinstance(per_partition, list) or len(per_partition) != topics[topic]
                or not all(isinstance(rs, list) and all(isinstance(r, str) for r in rs) for rs in per_partition)):
            raise ProblemError(f"racks[{topic!r}]: must be one list of rack names per partition "
                               f"({topics[topic]} partitions)")
    return racks


def parse_consumer_problem(raw, assignor=None) -> ConsumerProblem:
    """Validate a consumer-protocol problem; raises ProblemError (one line) when it is malformed."""
    if not isinstance(raw, dict):
        raise ProblemError("a problem must be a JSON object")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise ProblemError(f"unknown field(s) {', '.join(sorted(unknown))}")
    name = assignor or raw.get("assignor")
    if name not in ASSIGNORS:
        raise ProblemError(f"unknown consumer assignor {name!r} (server-side: {', '.join(ASSIGNORS)})")
    topics = raw.get("topics", {})
    if not isinstance(topics, dict):
        raise ProblemError("'topics' must be an object {topic: partition count}")
    for t, n in topics.items():
        if not _is_int(n) or n < 0:
            raise ProblemError(f"topic {t!r}: partition count must be a non-negative integer, got {n!r}")
    ids = _topic_ids(raw, topics)
    _racks(raw, topics)
    orders = {}
    for key in ("member_order", "assigned_order"):
        orders[key] = raw.get(key, "hash")
        if orders[key] not in ("hash", "input"):
            raise ProblemError(f"'{key}' must be \"hash\" or \"input\"")
    members_raw = raw.get("members", [])
    if not isinstance(members_raw, list):
        raise ProblemError("'members' must be a list")

    def id_of(topic):
        if topic not in ids:
            ids[topic] = derived_topic_id(topic)
        return ids[topic]

    parsed = []
    owner_of = {}
    for index, m in enumerate(members_raw):
        where = f"members[{index}]"
        if not isinstance(m, dict):
            raise ProblemError(f"{where}: must be an object")
        bad = set(m) - _MEMBER_FIELDS
        if bad:
            raise ProblemError(f"{where}: unknown field(s) {', '.join(sorted(bad))}")
        mid = m.get("id")
        if not isinstance(mid, str):
            raise ProblemError(f"{where}: 'id' must be a string")
        where = f"{where} ({mid})"
        subs = m.get("topics", [])
        if not isinstance(subs, list) or not all(isinstance(t, str) for t in subs):
            raise ProblemError(f"{where}: 'topics' must be a list of strings")
        rack, instance = _opt_str(m, "rack", where), _opt_str(m, "instance_id", where)
        assigned = m.get("assigned", [])
        if not isinstance(assigned, list):
            raise ProblemError(f"{where}: 'assigned' must be a list of [topic, partition]")
        by_topic = {}
        for tp in assigned:
            if (not isinstance(tp, list) or len(tp) != 2 or not isinstance(tp[0], str) or not _is_int(tp[1])
                    or tp[1] < 0):
                raise ProblemError(f"{where}: assigned: a partition must be [topic, number >= 0], got {tp!r}")
            topic, p = tp
            if topic in topics and p >= topics[topic]:
                raise ProblemError(f"{where}: assigned [{topic!r}, {p}] but {topic!r} has {topics[topic]} partitions")
            if (topic, p) in owner_of:
                raise ProblemError(f"{where}: [{topic!r}, {p}] is also assigned to {owner_of[(topic, p)]!r}")
            owner_of[(topic, p)] = mid
            by_topic.setdefault(topic, []).append(p)
        parsed.append((mid, subs, rack, instance, by_topic))

    seen = set()
    for mid, *_ in parsed:
        if mid in seen:
            raise ProblemError(f"duplicate member id {mid!r}")
        seen.add(mid)
    # Topic ids: given, else derived; ids must be distinct.
    for _mid, subs, _r, _i, by_topic in parsed:
        for t in list(subs) + list(by_topic):
            id_of(t)
    for t in topics:
        id_of(t)
    names = {}
    for t, tid in ids.items():
        if tid in names:
            raise ProblemError(f"topics {names[tid]!r} and {t!r} have the same topic id {tid}")
        names[tid] = t

    # The cluster's topics image: existing topics, and topics named in topic_ids.
    image = {t: ids[t] for t in list(topics) + list(raw.get("topic_ids", {}))}
    members = {}
    for mid, subs, rack, instance, by_topic in parsed:
        record = [(ids[t], ps) for t, ps in by_topic.items()]
        assignment = from_record(record, linked=orders["assigned_order"] == "input")
        members[mid] = MemberSpec.from_names(subs, image, rack, instance, assignment)
    input_order = [p[0] for p in parsed]
    by_input = orders["member_order"] == "input"
    group = GroupSpec(members, member_order=input_order, member_ids=input_order if by_input else None)
    describer = TopicDescriber({ids[t]: n for t, n in topics.items()})
    return ConsumerProblem(raw.get("id"), name, group, describer, input_order, names)
