"""Requests and responses exchanged between brokers and the controller, as plain NamedTuples.

Every message travels through the cluster's network as an explicit envelope, so a model checker can
deliver, reorder or drop each one. Field and error names follow Kafka's (LeaderAndIsr, Fetch,
OffsetsForLeaderEpoch, AlterPartition, StopReplica).
"""
from __future__ import annotations

from typing import NamedTuple

NONE = "NONE"
NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
STALE_CONTROLLER_EPOCH = "STALE_CONTROLLER_EPOCH"
NOT_CONTROLLER = "NOT_CONTROLLER"
INVALID_UPDATE_VERSION = "INVALID_UPDATE_VERSION"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
INVALID_REQUEST = "INVALID_REQUEST"
INVALID_REQUIRED_ACKS = "INVALID_REQUIRED_ACKS"

TopicPartition = tuple  # (topic: str, partition: int)


class LeaderAndIsr(NamedTuple):
    controller_id: int
    controller_epoch: int
    tp: tuple
    leader: int
    leader_epoch: int
    isr: tuple
    partition_epoch: int
    replicas: tuple


class StopReplica(NamedTuple):
    controller_id: int
    controller_epoch: int
    tp: tuple
    delete: bool


class Fetch(NamedTuple):
    tp: tuple
    replica_id: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    broker_epoch: int


class FetchResponse(NamedTuple):
    tp: tuple
    error: str
    fetch_offset: int
    request_leader_epoch: int   # the current_leader_epoch the follower sent (staleness check)
    records: tuple
    high_watermark: int


class OffsetsForLeaderEpoch(NamedTuple):
    tp: tuple
    replica_id: int
    leader_epoch: int           # the epoch whose end offset is asked for
    current_leader_epoch: int


class OffsetsForLeaderEpochResponse(NamedTuple):
    tp: tuple
    error: str
    request_leader_epoch: int   # echo of current_leader_epoch
    leader_epoch: int           # -1 when the answer is an offset only (pre KIP-279)
    end_offset: int


class AlterPartition(NamedTuple):
    broker_id: int              # the leader sending it
    tp: tuple
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple              # ((replica id, broker epoch), ...)


class AlterPartitionResponse(NamedTuple):
    tp: tuple
    error: str
    leader: int
    leader_epoch: int
    isr: tuple
    partition_epoch: int


class Envelope(NamedTuple):
    msg_id: int
    src: int
    dst: int
    body: tuple
