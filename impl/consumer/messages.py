"""Requests and responses of KIP-848's consumer group protocol, as immutable values.

Why it exists: the coordinator (`impl/consumer/coordinator.py`), the client membership
(`impl/consumer/client.py`), the world models and the wire server all exchange these values.
Field names follow Kafka's JSON message specs (clients/src/main/resources/common/message/
ConsumerGroupHeartbeatRequest.json / Response.json v0-1, ConsumerGroupDescribeRequest.json /
Response.json v0, OffsetCommitRequest.json v9+ and OffsetFetchRequest.json v9+) in snake_case.
Errors are Kafka `Errors` names as strings. `None` stands for a nullable field left null (for
the heartbeat: "unchanged since the last request"). Every request carries `correlation_id`,
echoed by the coordinator in the `Reply` (shared with impl/coordinator).
Offsets reuse the classic value types (TopicPartition, OffsetAndMetadata, OffsetCommitResponse,
OffsetFetchResponse, OffsetFetchPartition, Reply) of impl/coordinator/messages.py.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.coordinator.messages import (  # noqa: F401  (re-exported)
    OffsetAndMetadata, OffsetCommitResponse, OffsetFetchPartition, OffsetFetchResponse, Reply,
    TopicPartition)

LEAVE_GROUP_MEMBER_EPOCH = -1          # ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2   # ConsumerGroupHeartbeatRequest.LEAVE_GROUP_STATIC_MEMBER_EPOCH
JOIN_GROUP_MEMBER_EPOCH = 0


class Errors:
    NONE = "NONE"
    UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
    NOT_COORDINATOR = "NOT_COORDINATOR"
    COORDINATOR_NOT_AVAILABLE = "COORDINATOR_NOT_AVAILABLE"
    COORDINATOR_LOAD_IN_PROGRESS = "COORDINATOR_LOAD_IN_PROGRESS"
    GROUP_AUTHORIZATION_FAILED = "GROUP_AUTHORIZATION_FAILED"
    INVALID_REQUEST = "INVALID_REQUEST"
    INVALID_GROUP_ID = "INVALID_GROUP_ID"
    GROUP_ID_NOT_FOUND = "GROUP_ID_NOT_FOUND"
    UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
    FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"
    STALE_MEMBER_EPOCH = "STALE_MEMBER_EPOCH"
    UNSUPPORTED_ASSIGNOR = "UNSUPPORTED_ASSIGNOR"
    UNRELEASED_INSTANCE_ID = "UNRELEASED_INSTANCE_ID"
    FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"
    GROUP_MAX_SIZE_REACHED = "GROUP_MAX_SIZE_REACHED"
    UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
    ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
    OFFSET_METADATA_TOO_LARGE = "OFFSET_METADATA_TOO_LARGE"
    UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
    INVALID_REGULAR_EXPRESSION = "INVALID_REGULAR_EXPRESSION"


class TopicPartitions(NamedTuple):
    """ConsumerGroupHeartbeat*.TopicPartitions: a topic id and its partitions (sorted)."""
    topic_id: str
    partitions: tuple


class ConsumerGroupHeartbeatRequest(NamedTuple):
    group_id: str
    member_id: str = ""
    member_epoch: int = 0
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1                  # -1 = unchanged
    subscribed_topic_names: Optional[tuple] = None  # None = unchanged
    subscribed_topic_regex: Optional[str] = None    # None = unchanged; "" = no regex (v1+)
    server_assignor: Optional[str] = None
    topic_partitions: Optional[tuple] = None        # (TopicPartitions, ...) owned; None = unchanged
    client_id: str = "client"                       # request header / context, not body fields
    client_host: str = "/127.0.0.1"
    correlation_id: int = 0


class ConsumerGroupHeartbeatResponse(NamedTuple):
    error: str = Errors.NONE                        # ErrorCode
    error_message: Optional[str] = None
    member_id: Optional[str] = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Optional[tuple] = None              # (TopicPartitions, ...) or None = not sent


class ConsumerGroupDescribeRequest(NamedTuple):
    group_ids: tuple = ()
    include_authorized_operations: bool = False
    correlation_id: int = 0


class DescribedTopicPartitions(NamedTuple):
    topic_id: str
    topic_name: str
    partitions: tuple


class DescribedMember(NamedTuple):
    member_id: str
    instance_id: Optional[str]
    rack_id: Optional[str]
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple
    subscribed_topic_regex: Optional[str]
    assignment: tuple                               # (DescribedTopicPartitions, ...)
    target_assignment: tuple


class DescribedGroup(NamedTuple):
    error: str
    error_message: Optional[str]
    group_id: str
    group_state: str = ""
    group_epoch: int = -1
    assignment_epoch: int = -1
    assignor_name: str = ""
    members: tuple = ()
    authorized_operations: int = -2147483648


class ConsumerGroupDescribeResponse(NamedTuple):
    groups: tuple = ()                              # (DescribedGroup, ...) in request order


class OffsetCommitRequest(NamedTuple):
    """OffsetCommit v9+: `generation_id_or_member_epoch` is the member epoch for consumer groups."""
    group_id: str
    generation_id_or_member_epoch: int = -1
    member_id: str = ""
    group_instance_id: Optional[str] = None
    offsets: tuple = ()                             # ((TopicPartition, OffsetAndMetadata), ...)
    api_version: int = 9
    correlation_id: int = 0


class OffsetFetchRequest(NamedTuple):
    """OffsetFetch v9+ (one group): member id / epoch validated for consumer groups."""
    group_id: str
    member_id: Optional[str] = None
    member_epoch: int = -1
    partitions: Optional[tuple] = None              # (TopicPartition, ...) or None = all
    require_stable: bool = True
    correlation_id: int = 0
