"""The assignment problem and answer: issue 3's JSON-lines format, parsed once and validated.

Every assignor (built-in, Python object, external process) speaks this one format, so the parsing,
the validation of bad input (one-line `ProblemError`) and the Java string ordering Kafka sorts by
live here and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

TopicPartition = tuple  # (topic: str, partition: int)


class ProblemError(ValueError):
    """A malformed assignment problem (one-line message)."""


def java_key(s: str) -> bytes:
    """Sort key that orders strings like Java's `String.compareTo` (UTF-16 code units).

    Big-endian UTF-16 bytes compare byte by byte exactly as the code units compare, and a proper
    prefix sorts first in both, so the bytes are a faithful key ("C3" < "a" < "c10" < "c2")."""
    return s.encode("utf-16-be", "surrogatepass")


def tp_key(tp) -> tuple:
    """Kafka's TopicPartitionComparator: topic by String.compareTo, then partition number."""
    return (java_key(tp[0]), tp[1])


def java_sorted(strings) -> list:
    return sorted(strings, key=java_key)


@dataclass(frozen=True)
class Member:
    id: str
    topics: tuple                      # subscribed topic names, deduplicated, Java order
    owned: Optional[tuple]             # ((topic, partition), ...) in input order; None = new member
    generation: Optional[int]          # generation of `owned`; None = unknown / new member
    instance_id: Optional[str]         # group.instance.id of a static member

    def to_json(self) -> dict:
        return {"id": self.id, "topics": list(self.topics),
                "owned": None if self.owned is None else [list(tp) for tp in self.owned],
                "generation": self.generation, "instance_id": self.instance_id}


@dataclass(frozen=True)
class Problem:
    id: Any
    assignor: Optional[str]
    topics: dict                       # existing topic -> partition count (>= 0)
    members: tuple                     # (Member, ...) in input order

    def partitions_of(self, topic: str) -> int:
        """Partition count of an existing topic, 0 for a topic that does not exist."""
        return self.topics.get(topic, 0)

    def member_order_kafka(self) -> list:
        """Members as AbstractPartitionAssignor.MemberInfo sorts them: static members first by
        instance id, then dynamic members by member id, Java string order. Two static members
        sharing an instance id (which Kafka's coordinator prevents) fall back to member id."""
        return sorted(self.members, key=lambda m: (0, java_key(m.instance_id), java_key(m.id))
                      if m.instance_id is not None else (1, b"", java_key(m.id)))

    def to_json(self) -> dict:
        d = {"id": self.id}
        if self.assignor is not None:
            d["assignor"] = self.assignor
        d["topics"] = dict(self.topics)
        d["members"] = [m.to_json() for m in self.members]
        return d


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _tp(raw, where: str) -> tuple:
    if (not isinstance(raw, (list, tuple)) or len(raw) != 2 or not isinstance(raw[0], str)
            or not _is_int(raw[1])):
        raise ProblemError(f"{where}: a partition must be [topic, number], got {raw!r}")
    return (raw[0], raw[1])


def parse_member(raw, index: int) -> Member:
    where = f"members[{index}]"
    if not isinstance(raw, dict):
        raise ProblemError(f"{where}: must be an object")
    unknown = set(raw) - {"id", "topics", "owned", "generation", "instance_id"}
    if unknown:
        raise ProblemError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    mid = raw.get("id")
    if not isinstance(mid, str):
        raise ProblemError(f"{where}: 'id' must be a string")
    topics = raw.get("topics", [])
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise ProblemError(f"{where} ({mid}): 'topics' must be a list of strings")
    owned = raw.get("owned")
    if owned is not None:
        if not isinstance(owned, list):
            raise ProblemError(f"{where} ({mid}): 'owned' must be a list of [topic, partition] or null")
        owned = tuple(_tp(x, f"{where} ({mid}) owned") for x in owned)
    gen = raw.get("generation")
    if gen is not None and not _is_int(gen):
        raise ProblemError(f"{where} ({mid}): 'generation' must be an integer or null")
    inst = raw.get("instance_id")
    if inst is not None and not isinstance(inst, str):
        raise ProblemError(f"{where} ({mid}): 'instance_id' must be a string or null")
    return Member(mid, tuple(java_sorted(set(topics))), owned, gen, inst)


def parse_problem(raw) -> Problem:
    """Validate a problem dict (issue 3's format) and return it as a `Problem`."""
    if not isinstance(raw, dict):
        raise ProblemError("a problem must be a JSON object")
    unknown = set(raw) - {"id", "assignor", "topics", "members"}
    if unknown:
        raise ProblemError(f"unknown field(s) {', '.join(sorted(unknown))}")
    assignor = raw.get("assignor")
    if assignor is not None and not isinstance(assignor, str):
        raise ProblemError("'assignor' must be a string")
    topics = raw.get("topics", {})
    if not isinstance(topics, dict):
        raise ProblemError("'topics' must be an object {topic: partition count}")
    for t, n in topics.items():
        if not _is_int(n) or n < 0:
            raise ProblemError(f"topic {t!r}: partition count must be a non-negative integer, got {n!r}")
    members_raw = raw.get("members", [])
    if not isinstance(members_raw, list):
        raise ProblemError("'members' must be a list")
    members = tuple(parse_member(m, i) for i, m in enumerate(members_raw))
    seen = set()
    for m in members:
        if m.id in seen:
            raise ProblemError(f"duplicate member id {m.id!r}")
        seen.add(m.id)
    return Problem(raw.get("id"), assignor, dict(topics), members)


def answer_json(problem_id, assignment: dict, members) -> dict:
    """The answer line: every member of the problem, in input order, partitions sorted."""
    out = {}
    for m in members:
        tps = sorted(assignment.get(m.id, ()), key=tp_key)
        out[m.id] = [[t, p] for t, p in tps]
    return {"id": problem_id, "assignment": out}


def error_json(problem_id, message: str) -> dict:
    return {"id": problem_id, "error": message}
