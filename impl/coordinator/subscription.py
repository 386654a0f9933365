"""Just enough of the consumer protocol's Subscription encoding to know a group's topics.

Kafka recomputes `subscribedTopics` of a "consumer" group at every generation by parsing each
member's metadata with the version-0 prefix of ConsumerProtocolSubscription (int16 version, then
an int32-counted array of int16-length UTF-8 topic names, then nullable user data); a parse failure
makes the set unknown (None). Offset expiry and OffsetDelete depend on it (digest §7.5, §7.6.2).

kverify's own consumer member (impl/member/codec.py) encodes subscriptions in a compact text form
(b"S2|topics|..."); those are recognised too, through that module, so a world of kverify members
gets the same subscribed-topic bookkeeping as Kafka consumers.
"""
from __future__ import annotations

import struct
from typing import Optional


def encode_subscription(topics, user_data: Optional[bytes] = None, version: int = 0) -> bytes:
    """Encode a minimal Subscription (`version`, topics, user data); later fields are omitted."""
    out = [struct.pack(">hi", version, len(topics))]
    for t in topics:
        b = t.encode("utf-8")
        out.append(struct.pack(">h", len(b)) + b)
    if user_data is None:
        out.append(struct.pack(">i", -1))
    else:
        out.append(struct.pack(">i", len(user_data)) + user_data)
    return b"".join(out)


def decode_subscription_topics(data: bytes) -> Optional[frozenset]:
    """Topics of an encoded Subscription, or None if the bytes do not parse (Kafka: SchemaException)."""
    if data[:1] == b"S" and data[2:3] == b"|":
        return _member_codec_topics(data)
    try:
        if len(data) < 6:
            return None
        _version, count = struct.unpack_from(">hi", data, 0)
        if count < 0:
            return None
        pos = 6
        topics = []
        for _ in range(count):
            (n,) = struct.unpack_from(">h", data, pos)
            pos += 2
            if n < 0 or pos + n > len(data):
                return None
            topics.append(data[pos:pos + n].decode("utf-8"))
            pos += n
        (ud,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if ud > 0 and pos + ud > len(data):
            return None
        return frozenset(topics)
    except (struct.error, UnicodeDecodeError):
        return None


def _member_codec_topics(data: bytes) -> Optional[frozenset]:
    try:
        from kverify.impl.member.codec import CodecError, decode_subscription
    except ImportError:
        return None
    try:
        return frozenset(decode_subscription(data).topics)
    except (CodecError, ValueError):
        return None
