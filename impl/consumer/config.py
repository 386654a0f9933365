"""Configuration of the KIP-848 consumer group coordinator (group.consumer.* broker configs).

Why it exists: one immutable value, shared by copies, naming Kafka's defaults
(GroupCoordinatorConfig: group.consumer.session.timeout.ms 45000,
group.consumer.heartbeat.interval.ms 5000, group.consumer.max.size Integer.MAX_VALUE,
group.consumer.assignors "uniform,range": the first is the default).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ConsumerCoordinatorConfig:
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_size: Optional[int] = None            # None = Integer.MAX_VALUE
    default_assignor: Optional[str] = None    # None = the first assignor given (Kafka: uniform)
    offset_metadata_max_bytes: int = 4096
    start_ms: int = 0
    regex_resolution_ms: int = 1              # how long the asynchronous regex resolution takes here
    regex_refresh_interval_ms: int = 600000   # group.consumer.regex.refresh.interval.ms
    metadata_refresh_interval_ms: int = 2**31 - 1   # consumerGroupMetadataRefreshIntervalMs (never, in production)
