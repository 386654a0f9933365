"""An in-memory log per topic partition: just enough of Produce/Fetch/ListOffsets for real clients.

Record batches (magic v2) are stored as the producer sent them, with the base offset rewritten to the
log's next offset (the batch CRC does not cover the base offset, so the batch stays valid). A fetch
answers whole batches starting at the batch that holds the fetch offset; clients skip the records
before their position, as they do with a real broker.
"""
from __future__ import annotations

import bisect
import struct

from kverify.wire.codec import iter_batches


class PartitionLog:
    __slots__ = ("bases", "batches", "end_offset", "size")

    def __init__(self):
        self.bases: list = []       # base offset of each batch (ascending)
        self.batches: list = []     # bytes of each batch (base offset already rewritten)
        self.end_offset = 0         # log end offset = high watermark (one replica, acks immediately)
        self.size = 0

    def append(self, records) -> int:
        """Append every batch of `records`; returns the base offset of the first. Raises BadRequest."""
        parsed = list(iter_batches(records))
        data = bytes(records)
        first = self.end_offset
        for _base, delta, start, end in parsed:
            batch = bytearray(data[start:end])
            struct.pack_into(">q", batch, 0, self.end_offset)
            self.bases.append(self.end_offset)
            self.batches.append(bytes(batch))
            self.end_offset += delta + 1
            self.size += end - start
        return first

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding `offset`, at least one, then up to `max_bytes`."""
        if offset >= self.end_offset or not self.batches:
            return b""
        i = max(0, bisect.bisect_right(self.bases, offset) - 1)
        out, total = [], 0
        while i < len(self.batches):
            b = self.batches[i]
            if out and total + len(b) > max_bytes:
                break
            out.append(b)
            total += len(b)
            i += 1
        return b"".join(out)


class Topics:
    """The broker's topics: name -> list of PartitionLog; fixed at start (no auto-creation)."""

    def __init__(self, partitions: dict):
        self.logs = {t: [PartitionLog() for _ in range(n)] for t, n in partitions.items()}

    def get(self, topic: str, partition: int):
        parts = self.logs.get(topic)
        if parts is None or not 0 <= partition < len(parts):
            return None
        return parts[partition]

    def names(self) -> list:
        return sorted(self.logs)

    def count(self, topic: str) -> int:
        return len(self.logs.get(topic, ()))
