"""Where the search loop remembers the states it has seen: small storage classes, one per mode.

Why it exists: the breadth-first loop (model/search/loop.py) is written once; what differs between
the explorer's modes is only how a successor is recognised as seen. Each store has two callables:
`key(state)` (fingerprint, `(core, spare)` or the exact key) and `visit(key, j) -> int`: `j` when
the state is new (it is now remembered under index `j`), the index it was first stored under when
it is not, or -1 when it was seen but the store keeps no index (fingerprints only). Two plain
calls per successor, as in the loop before stores were classes.

- `FingerprintStore`  8 bytes a state: 64-bit fingerprints in a flat open-addressing table
                      (`FingerprintSet`); the explorer's default.
- `IndexedStore`      fingerprint -> index dict: the state graph needs the index of a seen
                      successor (edges); `shrink()` turns it into a FingerprintStore once the graph
                      outgrows its limit.
- `SubsumptionStore`  a state covered by a seen one with at least as much fault budget is not new
                      (`Protocol.subsumption`; 16 bytes a slot, see `Subsumption`).
- `ExactStore`        whole keys in a dict (no fingerprint collisions): the TLA+ state comparison,
                      refinement's path search and the benchmark's naive reference.

Fingerprints are Python's 64-bit `hash` of the (canonical) state: stable within one process; a
collision (probability ~n^2/2^65) would only hide a state, as in TLC.
"""
from __future__ import annotations

from array import array
from typing import Callable


class FingerprintSet:
    """Open-addressing set of 64-bit fingerprints in one flat array (8 bytes a slot, load <= 3/4).

    A Python `set` of ints costs ~80 bytes per entry (the int object plus its slot); this costs
    11-21 bytes, which is what keeps the explorer under 100 bytes per distinct state. Lookups run
    in Python, which is negligible next to stepping a model."""

    __slots__ = ("table", "mask", "count", "limit", "zero")

    def __init__(self, capacity: int = 1 << 12):
        size = 1 << max(4, (capacity - 1).bit_length())
        self.table = array("q", bytes(8 * size))
        self.mask = size - 1
        self.count = 0
        self.limit = size * 3 // 4
        self.zero = False              # 0 marks an empty slot, so fingerprint 0 is kept aside

    def visit(self, fp: int, j: int) -> int:
        """Insert; `j` if it was not there yet, else -1 (the store interface, see the module docstring)."""
        if not -0x8000000000000000 <= fp <= 0x7FFFFFFFFFFFFFFF:    # (a hash() already is: no arithmetic)
            fp = ((fp & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)) - (1 << 63)   # any int -> signed 64 bits
        if fp == 0:
            if self.zero:
                return -1
            self.zero = True
            self.count += 1
            return j
        t, mask = self.table, self.mask
        i = (fp ^ (fp >> 31)) & mask
        while True:
            v = t[i]
            if v == fp:
                return -1
            if v == 0:
                t[i] = fp
                self.count += 1
                if self.count > self.limit:
                    self._grow()
                return j
            i = (i + 1) & mask

    def add(self, fp: int) -> bool:
        """Insert; True if it was not there yet."""
        return self.visit(fp, 0) == 0

    def __contains__(self, fp: int) -> bool:
        fp = ((fp & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)) - (1 << 63)
        if fp == 0:
            return self.zero
        t, mask = self.table, self.mask
        i = (fp ^ (fp >> 31)) & mask
        while True:
            v = t[i]
            if v == fp:
                return True
            if v == 0:
                return False
            i = (i + 1) & mask

    def __len__(self) -> int:
        return self.count

    def _grow(self) -> None:
        old = self.table
        size = (self.mask + 1) * 2
        self.table = t = array("q", bytes(8 * size))
        self.mask = mask = size - 1
        self.limit = size * 3 // 4
        for fp in old:
            if fp:
                i = (fp ^ (fp >> 31)) & mask
                while t[i]:
                    i = (i + 1) & mask
                t[i] = fp


class Subsumption:
    """Seen states by core fingerprint, each with the fault budgets it was explored with (only the
    maximal ones: a budget vector below another one is redundant). Laid out like `FingerprintSet`:
    two flat arrays (core fingerprint, and the state's index packed with its budgets when they are at
    most 3 numbers below 256: ~20-40 bytes a state); a core seen with several incomparable budget
    vectors (rare) keeps them in a small dict, as does fingerprint 0 (0 marks an empty slot)."""

    __slots__ = ("keys", "vals", "mask", "count", "limit", "more")

    def __init__(self, capacity: int = 1 << 12):
        size = 1 << max(4, (capacity - 1).bit_length())
        self.keys = array("q", bytes(8 * size))
        self.vals = array("q", bytes(8 * size))
        self.mask = size - 1
        self.count = 0
        self.limit = size * 3 // 4
        self.more: dict = {}        # core fingerprint -> [(index, budgets), ...] (vals holds -1 then)

    def find_or_add(self, key: int, spare: tuple, idx: int) -> int:
        """Index of a seen state with this core and budgets >= `spare`; else remember `(idx, spare)`
        and return -1."""
        key = ((key & 0xFFFFFFFFFFFFFFFF) ^ (1 << 63)) - (1 << 63)
        if key == 0:
            return self._find_or_add_zero(spare, idx)
        keys, mask = self.keys, self.mask
        i = (key ^ (key >> 31)) & mask
        while True:
            k = keys[i]
            if k == key:
                break
            if k == 0:
                keys[i] = key
                self._store(i, key, [(idx, spare)])
                self.count += 1
                if self.count > self.limit:
                    self._grow()
                return -1
            i = (i + 1) & mask
        v = self.vals[i]
        entries = self.more[key] if v < 0 else [_unpack(v)]
        j = _dominating(entries, spare)
        if j < 0:
            self._store(i, key, _kept(entries, spare, idx))
        return j

    def _find_or_add_zero(self, spare: tuple, idx: int) -> int:
        entries = self.more.get(0)
        if entries is None:
            self.more[0] = [(idx, spare)]
            self.count += 1
            return -1
        j = _dominating(entries, spare)
        if j < 0:
            self.more[0] = _kept(entries, spare, idx)
        return j

    def _store(self, i: int, key: int, entries: list) -> None:
        packed = _pack(*entries[0]) if len(entries) == 1 else -1
        self.vals[i] = packed
        if packed < 0:
            self.more[key] = entries
        else:
            self.more.pop(key, None)

    def __len__(self) -> int:
        return self.count

    def _grow(self) -> None:
        old_k, old_v = self.keys, self.vals
        size = (self.mask + 1) * 2
        self.keys = keys = array("q", bytes(8 * size))
        self.vals = vals = array("q", bytes(8 * size))
        self.mask = mask = size - 1
        self.limit = size * 3 // 4
        for k, v in zip(old_k, old_v):
            if k:
                i = (k ^ (k >> 31)) & mask
                while keys[i]:
                    i = (i + 1) & mask
                keys[i] = k
                vals[i] = v


def _dominating(entries: list, spare: tuple) -> int:
    """Index of an entry whose budgets are >= `spare` item by item, else -1."""
    for j, b in entries:
        if b == spare or all(x >= y for x, y in zip(b, spare)):
            return j
    return -1


def _kept(entries: list, spare: tuple, idx: int) -> list:
    """The entries not below `spare`, plus (idx, spare)."""
    return [(j, b) for j, b in entries if not all(y >= x for x, y in zip(b, spare))] + [(idx, spare)]


def _pack(idx: int, spare: tuple) -> int:
    """idx, len(spare) and up to 3 budgets below 256 in one non-negative int64; -1 if they do not fit."""
    if len(spare) > 3 or idx >= 1 << 36 or any(not 0 <= x < 256 for x in spare):
        return -1
    v = (idx << 26) | (len(spare) << 24)
    for pos, x in enumerate(spare):
        v |= x << (16 - 8 * pos)
    return v


def _unpack(v: int) -> tuple:
    n = (v >> 24) & 3
    return v >> 26, tuple((v >> (16 - 8 * pos)) & 0xFF for pos in range(n))


class FingerprintStore:
    """Seen = the state's fingerprint is in a `FingerprintSet` (no index kept)."""

    __slots__ = ("key", "seen", "visit")

    def __init__(self, fp_of: Callable, capacity: int = 1 << 12, seen: "FingerprintSet | None" = None):
        self.key = fp_of
        self.seen = seen if seen is not None else FingerprintSet(capacity)
        self.visit = self.seen.visit

    def __len__(self) -> int:
        return len(self.seen)

    def shrink(self) -> "FingerprintStore":
        return self


class IndexedStore:
    """Seen = the fingerprint is a key of a dict that maps it to the state's index (graph edges)."""

    __slots__ = ("key", "index_of", "visit")

    def __init__(self, fp_of: Callable):
        self.key = fp_of
        self.index_of: dict = {}
        self.visit = self.index_of.setdefault

    def __len__(self) -> int:
        return len(self.index_of)

    def shrink(self) -> FingerprintStore:
        """The same seen set as fingerprints only (8 bytes a state instead of a dict entry)."""
        seen = FingerprintSet(2 * len(self.index_of))
        visit = seen.visit
        for fp in self.index_of:
            visit(fp, 0)
        return FingerprintStore(self.key, seen=seen)


class SubsumptionStore:
    """Seen = a state with the same core and fault budgets >= this one's was stored (the index of
    that state is returned: the graph edge goes to the state that subsumes). Key: `(core, spare)`."""

    __slots__ = ("key", "dom", "visit")

    def __init__(self, split: Callable):
        self.key = split
        self.dom = Subsumption()
        find = self.dom.find_or_add

        def visit(core_spare, j: int) -> int:
            i = find(hash(core_spare[0]), core_spare[1], j)
            return j if i < 0 else i
        self.visit = visit

    def __len__(self) -> int:
        return len(self.dom)

    def shrink(self) -> "SubsumptionStore":
        return self


def _same(state):
    return state


class ExactStore:
    """Seen = `key(state)` (default: the state itself) is a key of a dict; no collisions."""

    __slots__ = ("key", "index_of", "visit")

    def __init__(self, key: Callable | None = None):
        self.key = key or _same
        self.index_of: dict = {}
        self.visit = self.index_of.setdefault

    def __len__(self) -> int:
        return len(self.index_of)

    def shrink(self) -> "ExactStore":
        return self


def offers_subsumption(protocol, inits) -> bool:
    """Whether `protocol` implements `Protocol.subsumption` (offered for every state or for none)."""
    from kverify.model.protocol import Protocol

    return (type(protocol).subsumption is not Protocol.subsumption and bool(inits)
            and protocol.subsumption(inits[0]) is not None)
