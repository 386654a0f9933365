"""A deterministic timer with the semantics of Kafka's test `MockTimer`.

Why it exists: the reference coordinator (and anything else in `impl/`) must never read a wall
clock; time is an input. Kafka's own coordinator tests drive time through `MockTimer`, and the
scenario format of `coordinator-scenarios.md` §3.3 fixes its semantics, which this class follows:

* `advance(ms)` moves the clock first, then fires every live task whose deadline is strictly less
  than the new time, in increasing deadline order, each once;
* among equal deadlines the most recently scheduled task fires first (LIFO);
* a task scheduled while tasks are firing uses the already advanced clock;
* a task scheduled with a delay <= 0 runs at once, inside `schedule`;
* `cancel(key)` removes a task; scheduling under a key that is already live replaces that task.

Tasks are identified by a hashable `key` and carry an immutable `payload`; when a task fires the
timer calls `fire(key, payload)` (the owner's dispatcher). Keeping tasks as plain data (no
closures) is what makes `copy()` cheap and the state comparable (`snapshot()`).
"""
from __future__ import annotations

import heapq
from typing import Callable, Hashable


class Timer:
    __slots__ = ("now", "_heap", "_live", "_seq", "_fire")

    def __init__(self, fire: Callable[[Hashable, object], None], now: int = 0):
        self.now = now
        self._heap: list = []        # (deadline, -seq, key, payload); stale entries skipped lazily
        self._live: dict = {}        # key -> seq of its live entry
        self._seq = 0
        self._fire = fire

    # ---- scheduling ---------------------------------------------------------------------------
    def schedule(self, key: Hashable, delay_ms: int, payload: object = None) -> None:
        """Schedule (or re-schedule) the task `key` to fire `delay_ms` after now."""
        self._live.pop(key, None)
        if delay_ms <= 0:
            self._fire(key, payload)
            return
        self._seq += 1
        self._live[key] = self._seq
        heapq.heappush(self._heap, (self.now + delay_ms, -self._seq, key, payload))
        if len(self._heap) > 64 and len(self._heap) > 4 * len(self._live):
            self._compact()

    def cancel(self, key: Hashable) -> bool:
        """Cancel the live task `key`; returns whether there was one."""
        return self._live.pop(key, None) is not None

    def has(self, key: Hashable) -> bool:
        return key in self._live

    def deadline(self, key: Hashable):
        """Deadline of the live task `key`, or None."""
        seq = self._live.get(key)
        if seq is None:
            return None
        for d, s, k, _ in self._heap:
            if s == -seq and k == key:
                return d
        return None

    def payload(self, key: Hashable):
        seq = self._live.get(key)
        if seq is None:
            return None
        for _, s, k, p in self._heap:
            if s == -seq and k == key:
                return p
        return None

    # ---- time ---------------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Move the clock by `ms` (>= 0), then fire every task with deadline < new now."""
        if ms < 0:
            raise ValueError(f"cannot move time backwards ({ms} ms)")
        self.now += ms
        heap = self._heap
        live = self._live
        while heap and heap[0][0] < self.now:
            _, negseq, key, payload = heapq.heappop(heap)
            if live.get(key) == -negseq:
                del live[key]
                self._fire(key, payload)

    def next_deadline(self):
        """Earliest deadline of a live task, or None."""
        self._drop_stale_head()
        return self._heap[0][0] if self._heap else None

    # ---- copy / compare -----------------------------------------------------------------------
    def copy(self, fire: Callable[[Hashable, object], None]) -> "Timer":
        t = Timer.__new__(Timer)
        t.now = self.now
        t._heap = list(self._heap)
        t._live = dict(self._live)
        t._seq = self._seq
        t._fire = fire
        return t

    def entries(self) -> list:
        """Live tasks in firing order: [(deadline, key, payload), ...]."""
        live = self._live
        return [(d, k, p) for d, s, k, p in sorted(self._heap) if live.get(k) == -s]

    def snapshot(self) -> tuple:
        """Hashable summary: live tasks in firing order (absolute sequence numbers left out)."""
        return (self.now, tuple(self.entries()))

    def __len__(self) -> int:
        return len(self._live)

    # ---- internals ----------------------------------------------------------------------------
    def _drop_stale_head(self) -> None:
        heap, live = self._heap, self._live
        while heap and live.get(heap[0][2]) != -heap[0][1]:
            heapq.heappop(heap)

    def _compact(self) -> None:
        live = self._live
        self._heap = [e for e in self._heap if live.get(e[2]) == -e[1]]
        heapq.heapify(self._heap)
