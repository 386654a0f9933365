"""Records the coordinator writes to `__consumer_offsets` and reads back when it loads a partition.

Plain immutable values (Kafka's GroupMetadata key/value and OffsetCommit key/value records,
reduced to what a reload needs). A world that replicates the offsets topic (issue #4) stores these
tuples in its log and hands them back to `GroupCoordinator.on_election`.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.coordinator.messages import TopicPartition


class MemberRecord(NamedTuple):
    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes          # metadata of the selected protocol only
    assignment: bytes


class GroupMetadataRecord(NamedTuple):
    group_id: str
    protocol_type: Optional[str]
    generation_id: int
    protocol_name: Optional[str]
    leader_id: Optional[str]
    current_state_timestamp: Optional[int]
    members: tuple = ()          # (MemberRecord, ...)


class GroupTombstone(NamedTuple):
    group_id: str


class OffsetCommitRecord(NamedTuple):
    group_id: str
    partition: TopicPartition
    offset: int
    leader_epoch: Optional[int]
    metadata: str
    commit_timestamp: int
    expire_timestamp: Optional[int] = None
    producer_id: Optional[int] = None      # set for a transactional offset commit (pending until its marker)


class OffsetTombstone(NamedTuple):
    group_id: str
    partition: TopicPartition


class TxnMarkerRecord(NamedTuple):
    """A transaction marker in an offsets partition: commits or aborts the producer's staged offsets.
    Written by whoever writes markers (the transaction coordinator's WriteTxnMarkers), not by the
    group coordinator, which only learns of it through `GroupCoordinator.complete_transaction`."""
    producer_id: int
    commit: bool
