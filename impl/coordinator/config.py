"""Configuration of the reference group coordinator (Kafka broker settings, defaults of §2.6).

`owned_partitions=None` means "every offsets partition is owned" (convenient for a single
coordinator); a world with several brokers passes the partitions each one leads. `group_partitions`
optionally pins the offsets partition of given group ids (the scenario format precomputes it);
other ids use `partition_for`. `member_id_seed` makes generated member ids deterministic and
distinct per coordinator. `offsets_expiration_enabled` arms the periodic offset-expiry task
(Kafka's "delete-expired-group-metadata"; Kafka's coordinator unit tests run with it disabled).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

INT_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class CoordinatorConfig:
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = INT_MAX
    new_member_join_timeout_ms: int = 300000
    offsets_partitions: int = 50
    owned_partitions: Optional[tuple] = None
    loading_partitions: tuple = ()
    group_partitions: Optional[tuple] = None           # ((group_id, partition), ...) or a dict
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000
    offsets_retention_check_interval_ms: int = 600000
    offsets_expiration_enabled: bool = True
    offset_metadata_max_bytes: int = 4096
    start_ms: int = 0
    member_id_seed: int = 0
    active: bool = True

    def __post_init__(self):
        if self.offsets_partitions <= 0:
            raise ValueError("offsets_partitions must be positive")
        if self.group_max_size < 1:
            raise ValueError("group_max_size must be >= 1")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError("group_min_session_timeout_ms must not exceed group_max_session_timeout_ms")
        if isinstance(self.group_partitions, dict):
            object.__setattr__(self, "group_partitions", tuple(sorted(self.group_partitions.items(), key=str)))
        if self.owned_partitions is not None:
            object.__setattr__(self, "owned_partitions", tuple(self.owned_partitions))
        object.__setattr__(self, "loading_partitions", tuple(self.loading_partitions))
