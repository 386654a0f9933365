"""Bytes carried inside JoinGroup/SyncGroup: the consumer subscription and the assignment.

Kafka puts a `ConsumerProtocolSubscription` (topics, user data, owned partitions, generation,
rack) in each JoinGroup protocol entry and a `ConsumerProtocolAssignment` (partitions, user data)
in each SyncGroup assignment. kverify keeps the same *content* (v2 semantics: owned partitions and
the member's generation travel with the subscription) but uses its own compact, deterministic,
human-readable encoding, because nothing outside kverify reads these bytes:

    subscription  b"S2|<topics>|<owned>|<generation>|<userdata>"
    assignment    b"A0|<partitions>"

* `<topics>`      topic names joined by ","  (kept in the member's order)
* `<owned>`, `<partitions>`  "topic:partition" joined by ",", sorted by (topic, partition)
* `<generation>`  decimal, -1 for none
* `<userdata>`    "" (none) or "<partitions>@<generation>": the eager `sticky` assignor's memory of
                  its last assignment (Kafka's StickyAssignor user data), used only by that assignor

Kafka topic names only use [a-zA-Z0-9._-], so "|", ",", ":" and "@" never appear inside a field.
An assignment is never shorter than 2 bytes; Kafka's client rejects shorter buffers (an empty byte
array is what the coordinator hands to members missing from the leader's assignment).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.coordinator.messages import TopicPartition


class CodecError(ValueError):
    """Bytes that are not a subscription/assignment in kverify's encoding (one-line message)."""


class Subscription(NamedTuple):
    topics: tuple                       # (topic, ...)
    owned: tuple                        # (TopicPartition, ...) sorted
    generation: int                     # -1 = none
    user_data: Optional[tuple] = None   # ((TopicPartition, ...), generation) for `sticky`, else None


def _tps(partitions) -> str:
    return ",".join(f"{t}:{p}" for t, p in sorted(partitions))


def _parse_tps(text: str) -> tuple:
    if not text:
        return ()
    out = []
    for item in text.split(","):
        topic, sep, part = item.rpartition(":")
        if not sep or not topic or not part.lstrip("-").isdigit():
            raise CodecError(f"bad topic-partition {item!r}")
        out.append(TopicPartition(topic, int(part)))
    return tuple(sorted(out))


def encode_subscription(topics, owned, generation: int, user_data=None) -> bytes:
    ud = "" if user_data is None else f"{_tps(user_data[0])}@{int(user_data[1])}"
    return f"S2|{','.join(topics)}|{_tps(owned)}|{int(generation)}|{ud}".encode()


def decode_subscription(data: bytes) -> Subscription:
    try:
        text = bytes(data).decode()
    except UnicodeDecodeError:
        raise CodecError("subscription is not UTF-8") from None
    fields = text.split("|")
    if len(fields) != 5 or fields[0] != "S2":
        raise CodecError(f"not a kverify subscription: {text[:40]!r}")
    _, topics, owned, gen, ud = fields
    if not gen.lstrip("-").isdigit():
        raise CodecError(f"bad generation {gen!r}")
    user_data = None
    if ud:
        parts, sep, ugen = ud.rpartition("@")
        if not sep or not ugen.lstrip("-").isdigit():
            raise CodecError(f"bad user data {ud!r}")
        user_data = (_parse_tps(parts), int(ugen))
    return Subscription(tuple(t for t in topics.split(",") if t), _parse_tps(owned), int(gen), user_data)


def encode_assignment(partitions) -> bytes:
    return f"A0|{_tps(partitions)}".encode()


def decode_assignment(data: bytes) -> tuple:
    """(TopicPartition, ...) sorted; CodecError for anything else (including b"")."""
    try:
        text = bytes(data).decode()
    except UnicodeDecodeError:
        raise CodecError("assignment is not UTF-8") from None
    if not text.startswith("A0|"):
        raise CodecError(f"not a kverify assignment: {text[:40]!r}")
    return _parse_tps(text[3:])
