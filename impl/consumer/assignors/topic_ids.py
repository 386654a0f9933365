"""Kafka topic ids (`org.apache.kafka.common.Uuid`) as the server-side assignors see them.

KIP-848's assignors work on topic ids, not names, and their answers depend on them: the uniform
assignor orders topics by `Uuid.compareTo` and iterates `HashSet<Uuid>`/`HashMap<Uuid, ...>` by
`Uuid.hashCode`. A problem may give each topic's id as Kafka prints it (`Uuid.toString`: URL-safe
base64 of the 16 bytes, no padding); a topic without one gets a derived id (`derived_topic_id`).
Here an id is a `TopicId(msb, lsb)` value with Kafka's hash, order and text form.
"""
from __future__ import annotations

import base64
import hashlib
from typing import NamedTuple

from kverify.impl.assignors.java_order import _to_int32


def _signed64(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x & (1 << 63) else x


class TopicId(NamedTuple):
    """A Kafka `Uuid`: most and least significant bits as signed 64-bit longs. Tuple order is
    `Uuid.compareTo` (signed msb, then signed lsb)."""
    msb: int
    lsb: int

    def __str__(self) -> str:
        raw = (self.msb & ((1 << 64) - 1)).to_bytes(8, "big") + (self.lsb & ((1 << 64) - 1)).to_bytes(8, "big")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def __repr__(self) -> str:
        return f"TopicId({str(self)!r})"


def uuid_hash(topic_id: TopicId) -> int:
    """`Uuid.hashCode()`: the two halves of msb ^ lsb xor-ed, as a signed 32-bit int."""
    x = (topic_id.msb ^ topic_id.lsb) & ((1 << 64) - 1)
    return _to_int32((x >> 32) ^ (x & 0xFFFFFFFF))


ZERO = TopicId(0, 0)
ONE = TopicId(0, 1)
METADATA_TOPIC_ID = ONE      # Uuid.METADATA_TOPIC_ID == Uuid.ONE_UUID
RESERVED = frozenset({ZERO, ONE})


def parse_topic_id(text: str) -> TopicId:
    """`Uuid.fromString`: URL-safe base64 of exactly 16 bytes (22 characters, padding optional).
    Raises ValueError with a one-line reason otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"a topic id must be a string, got {text!r}")
    if len(text) > 24:
        raise ValueError(f"topic id {text!r} is too long to be a base64 Kafka Uuid")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        raise ValueError(f"topic id {text!r} is not URL-safe base64") from None
    if len(raw) != 16 or any(c not in _B64URL for c in text.rstrip("=")):
        raise ValueError(f"topic id {text!r} does not decode to 16 bytes (a Kafka Uuid)")
    return TopicId(_signed64(int.from_bytes(raw[:8], "big")), _signed64(int.from_bytes(raw[8:], "big")))


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def derived_topic_id(name: str) -> TopicId:
    """The id kverify gives a topic whose id the problem does not state.

    The 16 bytes are the first 16 bytes of SHA-256 of the UTF-8 text `kverify-topic-id:<name>`; if the
    result is one of Kafka's reserved ids or its text form starts with '-' (ids `Uuid.randomUuid()`
    never returns), the next candidate hashes `kverify-topic-id:<name>#1`, `#2`, ... So the same name
    always gets the same id, and different names practically never share one."""
    attempt = 0
    while True:
        seed = f"kverify-topic-id:{name}" + (f"#{attempt}" if attempt else "")
        raw = hashlib.sha256(seed.encode("utf-8")).digest()[:16]
        tid = TopicId(_signed64(int.from_bytes(raw[:8], "big")), _signed64(int.from_bytes(raw[8:], "big")))
        if tid not in RESERVED and not str(tid).startswith("-"):
            return tid
        attempt += 1
