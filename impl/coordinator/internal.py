"""Setup hooks kept out of the request path (`GroupCoordinator.internal`).

They do what Kafka's own coordinator tests do directly on coordinator internals, so conformance
scenarios (coordinator-scenarios.md §5) can be replayed: register a group in a given state, force a
legal transition, invoke prepareRebalance, choose the raw result of log appends, mark an offsets
partition as loading / loaded. Each call that can complete parked requests returns the replies.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.coordinator.group import Group, Member
from kverify.impl.coordinator.states import ALL_STATES, IllegalStateError


class MemberSpec(NamedTuple):
    member_id: str
    instance_id: Optional[str] = None
    client_id: str = "clientId"
    client_host: str = "clientHost"
    rebalance_timeout_ms: int = 500
    session_timeout_ms: int = 500
    protocol_type: str = "consumer"
    protocols: tuple = ()


class CoordinatorInternals:
    __slots__ = ("_c",)

    def __init__(self, coordinator):
        self._c = coordinator

    def create_group(self, group_id: str, state: str, protocol_type: Optional[str] = None, members=()) -> None:
        """Register a group in `state`, generation 0, no selected protocol; add `members` (MemberSpec
        or dicts with its fields) in order, without parked requests or heartbeat timers."""
        c = self._c
        if state not in ALL_STATES:
            raise IllegalStateError(f"unknown group state {state!r}")
        group = Group(group_id, state, c.now)
        c._incarnations += 1
        group.incarnation = c._incarnations
        for spec in members:
            if isinstance(spec, dict):
                spec = MemberSpec(**spec)
            protocols = tuple((name, meta) for name, meta in spec.protocols)
            group.add(Member(spec.member_id, spec.instance_id, spec.client_id, spec.client_host,
                             spec.rebalance_timeout_ms, spec.session_timeout_ms, spec.protocol_type, protocols))
        if protocol_type is not None:
            group.protocol_type = protocol_type
        c._groups[group_id] = group

    def force_transition(self, group_id: str, to: str) -> None:
        """`GroupMetadata.transitionTo` (legal transitions only; nothing else changes)."""
        self._c._begin()
        self._c._transition(self._c._groups[group_id], to)

    def force_prepare_rebalance(self, group_id: str) -> list:
        c = self._c
        out = c._begin()
        c._prepare_rebalance(c._groups[group_id])
        return out

    def set_log_append_result(self, error: str) -> None:
        """Raw result of every later append when the coordinator has no external log (sticky)."""
        self._c._append_result = error

    def set_partition_loading(self, partition: int) -> None:
        self._c._loading.add(partition)
        self._c._owned.discard(partition)

    def complete_partition_load(self, partition: int) -> None:
        """Loading finished with an empty log: the partition is owned, no group loaded."""
        self._c._loading.discard(partition)
        self._c._owned.add(partition)

    def set_active(self, active: bool) -> None:
        self._c._active = bool(active)

    def partition_of(self, group_id: str) -> int:
        return self._c._partition(group_id)

    def timers(self) -> list:
        """Live timer tasks in firing order: [(deadline, key, payload), ...]."""
        return self._c._timer.entries()
