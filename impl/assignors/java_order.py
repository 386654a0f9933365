"""Java's hash-based iteration orders, reproduced so the sticky assignors decide like Kafka's.

Kafka's sticky assignors walk `HashMap<String, ...>` of member ids and take the first element of
a `HashSet<TopicPartition>`; which member keeps its partitions or which partition moves depends
on that order. A HashMap iterates bucket by bucket (bucket = spread hash & (capacity - 1)), and
within a bucket in insertion order (resizing keeps the relative order). Tree bins (9+ keys in one
bucket of a 64+ table) are not modelled; they need adversarial ids.
"""
from __future__ import annotations

_MASK = 0xFFFFFFFF


def _to_int32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def string_hash(s: str) -> int:
    """Java `String.hashCode()` over UTF-16 code units (signed 32-bit)."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK
    return _to_int32(h)


def topic_partition_hash(tp) -> int:
    """Java `TopicPartition.hashCode()`: 31 * (31 + partition) + topic.hashCode()."""
    return _to_int32(31 * (31 + tp[1]) + string_hash(tp[0]))


def _bucket(h: int, capacity: int) -> int:
    u = h & _MASK
    return (u ^ (u >> 16)) & (capacity - 1)


def capacity_for(size: int, initial: int = 16) -> int:
    """Table capacity of a HashMap that grew by puts (default construction) to `size` keys."""
    cap = initial
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def hashmap_order(keys, hash_fn=string_hash) -> list:
    """Iteration order of a default-constructed HashMap after putting `keys` in this order."""
    keys = list(dict.fromkeys(keys))
    cap = capacity_for(len(keys))
    return [k for _, _, k in sorted((_bucket(hash_fn(k), cap), i, k) for i, k in enumerate(keys))]


class JavaHashSet:
    """A `HashSet` whose `first()` is the element Java's iterator would return first."""

    def __init__(self, hash_fn=topic_partition_hash):
        self._hash = hash_fn
        self._seq = {}
        self._next = 0
        self._cap = 16

    def add(self, item) -> None:
        if item in self._seq:
            return
        self._seq[item] = self._next
        self._next += 1
        if len(self._seq) > self._cap * 3 // 4:
            self._cap *= 2

    def remove(self, item) -> None:
        self._seq.pop(item, None)

    def __contains__(self, item) -> bool:
        return item in self._seq

    def __len__(self) -> int:
        return len(self._seq)

    def first(self):
        return min(self._seq, key=lambda k: (_bucket(self._hash(k), self._cap), self._seq[k]))
