"""Configuration of the replicated cluster and the behaviour switches turned into booleans once.

A separate module so the replica logic, the controller and the cluster share one immutable settings
object and never test behaviour-name membership on a hot path.
"""
from __future__ import annotations

from dataclasses import dataclass

from kverify.behaviours import validate
from kverify.impl.replication import behaviours as B


@dataclass(frozen=True)
class ReplicationConfig:
    min_insync_replicas: int = 1          # Kafka default 1 (min.insync.replicas)
    replica_lag_time_max_ms: int = 30000  # Kafka default since 2.5 (KIP-537)
    fetch_max_records: int = 0            # 0 = a fetch returns everything up to the leader's LEO
    # How a leader commits ISR changes: False = AlterPartition to the controller (KIP-497, 2.7+);
    # True = the leader itself writes the partition state with a conditional update (0.8-2.6,
    # KAFKA-428), which leaves the controller's cached state stale until its own write fails.
    isr_writes_by_leader: bool = False


class Settings:
    """Config plus one bool attribute per historical behaviour (all False = today's Kafka)."""

    __slots__ = ("config", "behaviours", "truncate_to_hw", "ofle_offset_only", "skip_truncate_same_leader",
                 "no_fetch_epoch_fencing", "expand_without_epoch_start", "no_maximal_isr",
                 "no_broker_epoch_check", "unclean_election", "min_isr_1", "hw_ignores_min_isr",
                 "stale_controller_accepted", "preferred_outside_isr", "reassignment_drops_early")

    def __init__(self, config: ReplicationConfig, behaviours=frozenset()):
        # undeclared names are rejected; switches of other components are ignored here
        names = frozenset(behaviours)
        validate(names)
        self.config = config
        self.behaviours = names
        self.truncate_to_hw = B.TRUNCATE_TO_HW in names
        self.ofle_offset_only = B.OFLE_OFFSET_ONLY in names
        self.skip_truncate_same_leader = B.SKIP_TRUNCATE_SAME_LEADER in names
        self.no_fetch_epoch_fencing = B.NO_FETCH_EPOCH_FENCING in names
        self.expand_without_epoch_start = B.EXPAND_WITHOUT_EPOCH_START in names
        self.no_maximal_isr = B.NO_MAXIMAL_ISR in names
        self.no_broker_epoch_check = B.NO_BROKER_EPOCH_CHECK in names
        self.unclean_election = B.UNCLEAN_ELECTION in names
        self.min_isr_1 = B.ISR_SHRINKS_TO_LEADER in names
        self.hw_ignores_min_isr = B.HW_IGNORES_MIN_ISR in names
        self.stale_controller_accepted = B.STALE_CONTROLLER_ACCEPTED in names
        self.preferred_outside_isr = B.PREFERRED_OUTSIDE_ISR in names
        self.reassignment_drops_early = B.REASSIGNMENT_DROPS_EARLY in names

    def effective_min_isr(self, replication_factor: int) -> int:
        if self.min_isr_1:
            return 1
        return max(1, min(self.config.min_insync_replicas, replication_factor))


_OWN = frozenset({B.TRUNCATE_TO_HW, B.OFLE_OFFSET_ONLY, B.SKIP_TRUNCATE_SAME_LEADER, B.NO_FETCH_EPOCH_FENCING,
                  B.EXPAND_WITHOUT_EPOCH_START, B.NO_MAXIMAL_ISR, B.NO_BROKER_EPOCH_CHECK, B.UNCLEAN_ELECTION,
                  B.ISR_SHRINKS_TO_LEADER, B.HW_IGNORES_MIN_ISR, B.STALE_CONTROLLER_ACCEPTED,
                  B.PREFERRED_OUTSIDE_ISR, B.REASSIGNMENT_DROPS_EARLY})
