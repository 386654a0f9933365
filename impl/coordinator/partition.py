"""Which `__consumer_offsets` partition (hence which broker) coordinates a group.

Kafka: `partitionFor(groupId) = Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`.
`String.hashCode` is Java's `h = 31*h + c` over UTF-16 code units with 32-bit signed wrap-around,
and `Utils.abs` maps Integer.MIN_VALUE to 0 (Java's `Math.abs(MIN_VALUE)` stays negative). The
historical behaviour `math-abs-coordinator` uses `Math.abs` and Java's remainder (sign of the
dividend), so an id hashing to MIN_VALUE ("polygenelubricants") gets a negative partition.
"""
from __future__ import annotations

from kverify.impl.coordinator.behaviours import MATH_ABS_COORDINATOR

INT_MIN = -(1 << 31)


def java_string_hash(text: str) -> int:
    """Java `String.hashCode()`: 31*h + c over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def utils_abs(n: int) -> int:
    """Kafka `Utils.abs`: |n|, but 0 for Integer.MIN_VALUE."""
    return 0 if n == INT_MIN else abs(n)


def java_math_abs(n: int) -> int:
    """Java `Math.abs` on an int: MIN_VALUE stays MIN_VALUE."""
    return n if n == INT_MIN else abs(n)


def java_rem(a: int, b: int) -> int:
    """Java `%` on ints: truncating division, result has the sign of the dividend."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def partition_for(group_id: str, n: int = 50, behaviours: frozenset = frozenset()) -> int:
    if n <= 0:
        raise ValueError(f"number of partitions must be positive, got {n}")
    h = java_string_hash(group_id)
    if MATH_ABS_COORDINATOR in behaviours:
        return java_rem(java_math_abs(h), n)
    return utils_abs(h) % n
