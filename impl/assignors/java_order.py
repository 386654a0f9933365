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


# --- Added for KIP-848's server-side assignors (impl/consumer/assignors/) -------------------------
# A general HashMap/HashSet model with Java's capacity rules, so that code which copies, pre-sizes
# and mutates maps (Kafka's group coordinator does all three) iterates exactly like JDK 17.

import struct as _struct

MAXIMUM_CAPACITY = 1 << 30


def integer_hash(i: int) -> int:
    """Java `Integer.hashCode()`: the value itself."""
    return _to_int32(i)


def table_size_for(cap: int) -> int:
    """Java `HashMap.tableSizeFor`: the smallest power of two >= cap (1 for cap <= 1)."""
    if cap <= 1:
        return 1
    n = 1
    while n < cap:
        n <<= 1
    return min(n, MAXIMUM_CAPACITY)


def float32(x: float) -> float:
    """Round a Python float to Java's `float` (IEEE single precision)."""
    return _struct.unpack("f", _struct.pack("f", x))[0]


def presized_capacity(n: int) -> int:
    """`(int) ((n / 0.75f) + 1)`: the initial capacity Kafka passes when it pre-sizes a map for n keys."""
    return int(float32(float32(n / 0.75) + 1.0))


def copy_capacity_jdk17(n: int) -> int:
    """Initial capacity of `new HashSet<>(collection)` of size n on JDK 17:
    `Math.max((int) (n / .75f) + 1, 16)`. Newer JDKs size it as `HashMap.newHashMap(Math.max(n, 12))`
    = ceil(max(n, 12) / 0.75) (JDK 19+; checked on JDK 25): the table differs exactly when n / 0.75 is a
    power of two >= 16 (n = 12, 24, 48, ...), where JDK 17's is twice as large, so iteration orders of
    such sets (a member's 12 partitions of a topic, a 12-topic subscription) differ on those JDKs."""
    return max(int(float32(n / 0.75)) + 1, 16)


class JavaHashMap:
    """A `java.util.HashMap` (or, with `linked=True`, a `LinkedHashMap`) whose iteration order is
    Java's: buckets in index order (index = spread hash & (capacity - 1)), within a bucket the order
    in which keys entered it (`put` appends, `computeIfAbsent` prepends). Resizes double the table when
    size exceeds 0.75 * capacity and keep the relative order inside a bucket, so sorting by (bucket at
    the current capacity, rank) is exact, rank = +n for the n-th key put, -n for one computeIfAbsent
    added; a removed and re-added key gets a new rank. Tree bins (8+ colliding keys in
    a table of 64+) are not modelled.

    `initial_capacity=None` is the default constructor (16); an int is `new HashMap<>(n)`
    (table = tableSizeFor(n), allocated on the first put)."""

    __slots__ = ("_hash", "_cap", "_vals", "_seq", "_next", "linked", "immutable")

    def __init__(self, hash_fn, initial_capacity=None, linked=False):
        self._hash = hash_fn
        self._cap = 16 if initial_capacity is None else table_size_for(initial_capacity)
        self._vals = {}
        self._seq = {}
        self._next = 0
        self.linked = linked
        self.immutable = False     # Collections.unmodifiableMap / emptyMap wrapper (Kafka tests it)

    def put(self, key, value) -> None:
        """`put` (also `putIfAbsent`, `HashSet.add`): a new key goes to the END of its bucket, and the
        table doubles once if the size now exceeds the threshold."""
        if key not in self._vals:
            self._seq[key] = self._next
            self._next += 1
            self._vals[key] = value
            if len(self._vals) > int(self._cap * 0.75):
                self._cap *= 2
        else:
            self._vals[key] = value

    def put_if_absent(self, key, factory):
        """`computeIfAbsent(key, k -> factory())`: unlike `put`, Java checks the size BEFORE looking the
        key up, on every call (present key or not), doubling the table if the size already exceeds the
        threshold; a new key is linked at the HEAD of its bucket."""
        if len(self._vals) > int(self._cap * 0.75):
            self._cap *= 2
        if key not in self._vals:
            self._seq[key] = -self._next
            self._next += 1
            self._vals[key] = factory()
        return self._vals[key]

    def remove(self, key) -> None:
        if self._vals.pop(key, _MISSING) is not _MISSING:
            del self._seq[key]

    def get(self, key, default=None):
        return self._vals.get(key, default)

    def __contains__(self, key) -> bool:
        return key in self._vals

    def __len__(self) -> int:
        return len(self._vals)

    @property
    def capacity(self) -> int:
        return self._cap

    def keys(self) -> list:
        """Keys in Java iteration order."""
        if self.linked:
            return sorted(self._vals, key=self._seq.__getitem__)
        cap = self._cap
        h = self._hash
        return sorted(self._vals, key=lambda k: (_bucket(h(k), cap), self._seq[k]))

    def items(self) -> list:
        return [(k, self._vals[k]) for k in self.keys()]

    def __iter__(self):
        return iter(self.keys())


_MISSING = object()


def java_hash_set(hash_fn, items=(), initial_capacity=None) -> JavaHashMap:
    """A `HashSet` (a JavaHashMap whose values are unused) after adding `items` in order."""
    s = JavaHashMap(hash_fn, initial_capacity)
    for x in items:
        s.put(x, True)
    return s


def java_hash_set_copy(hash_fn, items, size=None) -> JavaHashMap:
    """`new HashSet<>(collection)` on JDK 17: pre-sized from the collection's size (`size`, when the
    collection reports a size different from what it iterates), then filled in its iteration order."""
    items = list(items)
    return java_hash_set(hash_fn, items, copy_capacity_jdk17(len(items) if size is None else size))
