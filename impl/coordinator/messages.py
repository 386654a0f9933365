"""Requests and responses of the classic group protocol, as immutable values.

Field names follow Kafka's (and the scenario format of `shared/reference/coordinator-scenarios.md`).
Errors are Kafka `Errors` enum names as strings ("NONE", "ILLEGAL_GENERATION", ...). Bytes fields
(protocol metadata, assignments) are `bytes`. Every request carries `correlation_id`, chosen by
the sender; the coordinator echoes it in the `Reply` that carries the response, which is how a
response parked for a while finds its way back (to a scenario label, or to a member in the world).
"""
from __future__ import annotations

from typing import NamedTuple, Optional


class Errors:
    NONE = "NONE"
    UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
    UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
    ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
    REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"
    MEMBER_ID_REQUIRED = "MEMBER_ID_REQUIRED"
    FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"
    GROUP_MAX_SIZE_REACHED = "GROUP_MAX_SIZE_REACHED"
    INCONSISTENT_GROUP_PROTOCOL = "INCONSISTENT_GROUP_PROTOCOL"
    INVALID_SESSION_TIMEOUT = "INVALID_SESSION_TIMEOUT"
    INVALID_GROUP_ID = "INVALID_GROUP_ID"
    NOT_COORDINATOR = "NOT_COORDINATOR"
    COORDINATOR_NOT_AVAILABLE = "COORDINATOR_NOT_AVAILABLE"
    COORDINATOR_LOAD_IN_PROGRESS = "COORDINATOR_LOAD_IN_PROGRESS"
    NON_EMPTY_GROUP = "NON_EMPTY_GROUP"
    GROUP_ID_NOT_FOUND = "GROUP_ID_NOT_FOUND"
    GROUP_SUBSCRIBED_TO_TOPIC = "GROUP_SUBSCRIBED_TO_TOPIC"
    OFFSET_METADATA_TOO_LARGE = "OFFSET_METADATA_TOO_LARGE"
    INVALID_COMMIT_OFFSET_SIZE = "INVALID_COMMIT_OFFSET_SIZE"
    UNSTABLE_OFFSET_COMMIT = "UNSTABLE_OFFSET_COMMIT"
    NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
    REQUEST_TIMED_OUT = "REQUEST_TIMED_OUT"
    UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
    KAFKA_STORAGE_ERROR = "KAFKA_STORAGE_ERROR"
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    RECORD_LIST_TOO_LARGE = "RECORD_LIST_TOO_LARGE"
    INVALID_FETCH_SIZE = "INVALID_FETCH_SIZE"


UNKNOWN_MEMBER_ID = ""          # the member id of a member that has none yet
NO_GENERATION = -1              # OffsetCommitRequest.DEFAULT_GENERATION_ID


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self):
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, text: str) -> "TopicPartition":
        """`"other-topic-0"` -> ("other-topic", 0): split at the LAST dash."""
        topic, _, part = text.rpartition("-")
        if not topic or not part.lstrip("-").isdigit():
            raise ValueError(f"not a topic-partition: {text!r}")
        return cls(topic, int(part))


# ---- requests --------------------------------------------------------------------------------
class JoinGroupRequest(NamedTuple):
    group_id: str
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: Optional[str] = None
    protocol_type: str = "consumer"
    protocols: tuple = ()                       # ((name, metadata_bytes), ...) in preference order
    session_timeout_ms: int = 10000
    rebalance_timeout_ms: int = 300000
    require_known_member_id: bool = True        # JoinGroup v4+ (KIP-394)
    support_skipping_assignment: bool = False   # JoinGroup v9+ (KIP-814)
    client_id: str = "clientId"
    client_host: str = "clientHost"
    correlation_id: int = 0


class SyncGroupRequest(NamedTuple):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: Optional[str] = None
    protocol_type: Optional[str] = None         # None = not sent (SyncGroup < v5)
    protocol_name: Optional[str] = None
    assignments: tuple = ()                     # ((member_id, assignment_bytes), ...); () for followers
    correlation_id: int = 0


class HeartbeatRequest(NamedTuple):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: Optional[str] = None
    correlation_id: int = 0


class MemberIdentity(NamedTuple):
    member_id: str
    group_instance_id: Optional[str] = None


class LeaveGroupRequest(NamedTuple):
    group_id: str
    members: tuple = ()                         # (MemberIdentity, ...)
    correlation_id: int = 0


class OffsetAndMetadata(NamedTuple):
    offset: int
    leader_epoch: Optional[int] = None
    metadata: str = ""


class OffsetCommitRequest(NamedTuple):
    group_id: str
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: Optional[str] = None
    offsets: tuple = ()                         # ((TopicPartition, OffsetAndMetadata), ...)
    correlation_id: int = 0
    retention_time_ms: int = -1                 # OffsetCommit v2-v4 retention_time; -1 = none (v5+ has none)


class TxnOffsetCommitRequest(NamedTuple):
    """TxnOffsetCommit (KIP-98; member/generation/instance fields since KIP-447, v3+)."""
    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int = 0
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: Optional[str] = None
    offsets: tuple = ()                         # ((TopicPartition, OffsetAndMetadata), ...)
    correlation_id: int = 0


class OffsetFetchRequest(NamedTuple):
    group_id: str
    partitions: Optional[tuple] = None          # (TopicPartition, ...) or None = all
    require_stable: bool = True
    correlation_id: int = 0


class DescribeGroupsRequest(NamedTuple):
    group_id: str
    correlation_id: int = 0


class ListGroupsRequest(NamedTuple):
    states: tuple = ()                          # () = all
    correlation_id: int = 0


class DeleteGroupsRequest(NamedTuple):
    groups: tuple = ()                          # group ids; may contain None (an invalid id)
    correlation_id: int = 0


class OffsetDeleteRequest(NamedTuple):
    group_id: str
    partitions: tuple = ()                      # (TopicPartition, ...)
    correlation_id: int = 0


# ---- responses -------------------------------------------------------------------------------
class JoinGroupMember(NamedTuple):
    member_id: str
    group_instance_id: Optional[str]
    metadata: bytes


class JoinGroupResponse(NamedTuple):
    error: str
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = NO_GENERATION
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    leader_id: str = ""
    skip_assignment: bool = False
    members: tuple = ()                         # (JoinGroupMember, ...): non-empty for the leader only


class SyncGroupResponse(NamedTuple):
    error: str
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    assignment: bytes = b""


class HeartbeatResponse(NamedTuple):
    error: str


class LeaveMemberResponse(NamedTuple):
    member_id: str
    group_instance_id: Optional[str]
    error: str


class LeaveGroupResponse(NamedTuple):
    error: str
    members: tuple = ()                         # (LeaveMemberResponse, ...) in request order


class OffsetCommitResponse(NamedTuple):
    partition_errors: tuple = ()                # ((TopicPartition, error), ...)


class TxnOffsetCommitResponse(NamedTuple):
    partition_errors: tuple = ()                # ((TopicPartition, error), ...)


class OffsetFetchPartition(NamedTuple):
    partition: TopicPartition
    offset: int                                 # -1 = none
    leader_epoch: Optional[int]
    metadata: str
    error: str


class OffsetFetchResponse(NamedTuple):
    error: str
    partitions: tuple = ()                      # (OffsetFetchPartition, ...)


class DescribedMember(NamedTuple):
    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


class DescribeGroupsResponse(NamedTuple):
    error: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple = ()                         # (DescribedMember, ...)


class ListGroupsResponse(NamedTuple):
    error: str
    groups: tuple = ()                          # ((group_id, protocol_type, state), ...)


class DeleteGroupsResponse(NamedTuple):
    results: tuple = ()                         # ((group_id, error), ...)


class OffsetDeleteResponse(NamedTuple):
    error: str
    partition_errors: tuple = ()                # ((TopicPartition, error), ...)


class Reply(NamedTuple):
    """A response leaving the coordinator, addressed by the request's correlation id."""
    correlation_id: int
    response: tuple
