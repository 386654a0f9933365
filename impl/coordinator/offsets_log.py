"""The hook through which the coordinator writes to `__consumer_offsets`.

`OffsetsLog.append(partition, records)` returns the raw append error name when the append
completes synchronously ("NONE" = success), or None when it is still pending (e.g. waiting for the
in-sync replicas); the coordinator then lists it in `pending_appends()` under an `append_id`, and
the owner of the log finishes it later with `coordinator.complete_append(append_id, error)`.
Raw errors are mapped to response errors by the coordinator as Kafka does (digest §4.4, §7.3.1).

`MemoryOffsetsLog` is the simplest log: it keeps every record per partition and acknowledges at
once (with a settable sticky error), which is enough to test unload/reload.
"""
from __future__ import annotations

from typing import Optional, Protocol


class OffsetsLog(Protocol):
    def append(self, partition: int, records: tuple) -> Optional[str]:
        ...


class MemoryOffsetsLog:
    """Appends complete at once; successful appends are kept per partition (in order)."""

    def __init__(self):
        self.partitions: dict = {}
        self.result = "NONE"

    def append(self, partition: int, records: tuple) -> Optional[str]:
        if self.result == "NONE":
            self.partitions.setdefault(partition, []).extend(records)
        return self.result

    def records(self, partition: int) -> tuple:
        return tuple(self.partitions.get(partition, ()))


class DeferredOffsetsLog(MemoryOffsetsLog):
    """Every append stays pending until the test completes it through the coordinator."""

    def append(self, partition: int, records: tuple) -> Optional[str]:
        self.partitions.setdefault(partition, []).extend(records)
        return None
