"""Read-only pictures of a group for tests, scenarios and invariants (`GroupCoordinator.group()`).

Values are copied out when the view is taken: a view never changes afterwards and holding one
cannot disturb the coordinator. Fields follow the introspection list of the scenario format
(coordinator-scenarios.md §6.2).
"""
from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple, Optional

from kverify.impl.coordinator.group import select_protocol


class MemberView(NamedTuple):
    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple
    assignment: bytes
    is_new: bool
    awaiting_join: bool
    awaiting_sync: bool


class GroupView:
    __slots__ = ("group_id", "state", "state_timestamp", "generation_id", "protocol_type", "protocol_name",
                 "leader_id", "members", "static_members", "pending_members", "pending_sync_members",
                 "num_awaiting_join", "new_member_added", "subscribed_topics", "offsets", "pending_offsets")

    def __init__(self, group):
        self.group_id = group.group_id
        self.state = group.state
        self.state_timestamp = group.state_timestamp
        self.generation_id = group.generation_id
        self.protocol_type = group.protocol_type
        self.protocol_name = group.protocol_name
        self.leader_id = group.leader_id
        self.members = MappingProxyType({
            mid: MemberView(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                            m.session_timeout_ms, m.protocol_type, m.protocols, m.assignment, m.is_new,
                            m.awaiting_join is not None, m.awaiting_sync is not None)
            for mid, m in group.members.items()})
        self.static_members = MappingProxyType(dict(group.static_members))
        self.pending_members = frozenset(group.pending_members)
        self.pending_sync_members = frozenset(group.pending_sync_members)
        self.num_awaiting_join = group.num_awaiting_join
        self.new_member_added = group.new_member_added
        self.subscribed_topics = group.subscribed_topics
        self.offsets = MappingProxyType(dict(group.offsets))
        self.pending_offsets = MappingProxyType(dict(group.pending_offsets))

    def select_protocol(self) -> str:
        """The protocol the group would select now (raises IllegalStateError without members)."""
        return select_protocol([m.protocols for m in self.members.values()])

    @property
    def num_new_members(self) -> int:
        return sum(1 for m in self.members.values() if m.is_new)

    @property
    def dynamic_member_ids(self) -> frozenset:
        return frozenset(mid for mid, m in self.members.items() if m.group_instance_id is None)

    def __repr__(self):
        return (f"GroupView({self.group_id!r}, {self.state}, gen={self.generation_id}, leader={self.leader_id!r}, "
                f"members={list(self.members)})")
