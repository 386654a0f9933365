"""One replica's log of one partition: records, the leader-epoch cache, LEO, flushed offset.

Kept apart from the replica's role logic because the epoch arithmetic (the KIP-101/279 `endOffsetFor`
lookup and its pre-KIP-279 variant, truncation keeping the cache consistent) is where the historical
divergence bugs live, and it must be testable on its own. Offsets start at 0; the log never has a
start offset above 0 (no retention in this model).
"""
from __future__ import annotations

UNDEFINED = -1  # UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET


class ReplicaLog:
    """Records are (offset, epoch, value) tuples; `epochs` is the ordered (epoch, start_offset) cache."""

    __slots__ = ("records", "epochs", "flushed")

    def __init__(self, records=(), epochs=(), flushed=0):
        self.records: list[tuple[int, int, object]] = list(records)
        self.epochs: list[tuple[int, int]] = list(epochs)
        self.flushed = flushed  # offsets below this survive a lossy restart

    # ---------------------------------------------------------------- reading
    @property
    def leo(self) -> int:
        return len(self.records)

    def latest_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else UNDEFINED

    def last_record_epoch(self) -> int:
        return self.records[-1][1] if self.records else UNDEFINED

    def read(self, start: int, end: int | None = None) -> tuple:
        return tuple(self.records[start:end])

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """KIP-279 lookup: (largest cached epoch <= `epoch`, the end offset of that epoch).

        Follows Kafka's LeaderEpochFileCache.endOffsetFor: the latest epoch ends at the LEO; an
        epoch above every entry is UNDEFINED; an epoch below every entry answers (epoch, first start).
        """
        ep = self.epochs
        if epoch == UNDEFINED or not ep:
            return (UNDEFINED, UNDEFINED)
        if epoch == ep[-1][0]:
            return (epoch, self.leo)
        higher = None
        floor = None
        for e, start in ep:
            if e > epoch:
                higher = start
                break
            floor = e
        if higher is None:
            return (UNDEFINED, UNDEFINED)
        if floor is None:
            return (epoch, higher)
        return (floor, higher)

    def legacy_end_offset_for(self, epoch: int) -> int:
        """Pre-KIP-279 lookup: only an offset, the start of the first epoch above `epoch`.

        The LEO if `epoch` is the latest; UNDEFINED if no epoch is larger or `epoch` precedes the
        first cached epoch (the follower then falls back to its high watermark).
        """
        ep = self.epochs
        if epoch == UNDEFINED or not ep:
            return UNDEFINED
        if epoch == ep[-1][0]:
            return self.leo
        if epoch < ep[0][0]:
            return UNDEFINED
        for e, start in ep:
            if e > epoch:
                return start
        return UNDEFINED

    # ---------------------------------------------------------------- writing
    def assign_epoch_start(self, epoch: int, offset: int) -> None:
        """Record that `epoch` starts at `offset` (Kafka's LeaderEpochFileCache.assign): nothing to do
        when the latest entry already has this epoch at or below `offset`; otherwise entries with an
        epoch >= `epoch` or a start >= `offset` are removed first, so the cache stays strictly
        increasing in both (KAFKA-7415)."""
        ep = self.epochs
        if ep and ep[-1][0] == epoch and ep[-1][1] <= offset:
            return
        while ep and (ep[-1][0] >= epoch or ep[-1][1] >= offset):
            ep.pop()
        ep.append((epoch, offset))

    def append(self, epoch: int, value) -> int:
        off = len(self.records)
        self.assign_epoch_start(epoch, off)
        self.records.append((off, epoch, value))
        return off

    def append_records(self, records) -> None:
        """Append records copied from a leader (each keeps its own epoch)."""
        for off, epoch, value in records:
            if off != len(self.records):
                raise ValueError(f"non-contiguous append at {off}, LEO {len(self.records)}")
            self.assign_epoch_start(epoch, off)
            self.records.append((off, epoch, value))

    def truncate_to(self, offset: int) -> None:
        """Remove every record at or above `offset`, and cache entries starting at or above it."""
        offset = max(offset, 0)
        if offset < len(self.records):
            del self.records[offset:]
        ep = self.epochs
        while ep and ep[-1][1] >= offset:
            ep.pop()
        if self.flushed > offset:
            self.flushed = offset

    def flush(self) -> None:
        self.flushed = len(self.records)

    def lose_unflushed(self) -> None:
        self.truncate_to(self.flushed)

    # ---------------------------------------------------------------- value
    def copy(self) -> "ReplicaLog":
        return ReplicaLog(self.records, self.epochs, self.flushed)

    def snapshot(self) -> tuple:
        return (tuple(self.records), tuple(self.epochs), self.flushed)
