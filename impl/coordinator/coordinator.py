"""The reference group coordinator: one object, requests in, replies out, time as an input.

`GroupCoordinator` assembles the request handlers (membership, offsets, administration, partition
loading) around a deterministic `Timer`. Every entry point (`handle`, `advance`, `complete_append`,
`on_election`, `on_resignation`, `internal.force_prepare_rebalance`) returns the list of `Reply`
values produced while it ran, including parked JoinGroup/SyncGroup responses it completed.
Behaviour follows Kafka 3.6's Scala coordinator as digested in shared/reference/coordinator.md.
"""
from __future__ import annotations

from typing import Optional

from kverify.impl.coordinator import behaviours as B
from kverify.impl.coordinator.admin import GroupAdministration
from kverify.impl.coordinator.config import CoordinatorConfig
from kverify.impl.coordinator.group import Group
from kverify.impl.coordinator.internal import CoordinatorInternals
from kverify.impl.coordinator.loading import PartitionLoading
from kverify.impl.coordinator.membership import MembershipHandling
from kverify.impl.coordinator.messages import (
    DeleteGroupsRequest, DescribeGroupsRequest, Errors as E, HeartbeatRequest, JoinGroupRequest,
    LeaveGroupRequest, ListGroupsRequest, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
    Reply, SyncGroupRequest, TxnOffsetCommitRequest)
from kverify.impl.coordinator.offset_handling import OffsetHandling
from kverify.impl.coordinator.partition import partition_for
from kverify.impl.coordinator.records import GroupMetadataRecord, MemberRecord
from kverify.impl.coordinator.views import GroupView
from kverify.impl.timer import Timer


class GroupCoordinator(MembershipHandling, OffsetHandling, GroupAdministration, PartitionLoading):
    def __init__(self, config: Optional[CoordinatorConfig] = None, behaviours=frozenset(), log=None):
        self.config = config = config or CoordinatorConfig()
        self.behaviours = frozenset(behaviours or ())
        self._set_flags()
        self._log = log
        self._timer = Timer(self._fire, config.start_ms)
        self._groups: dict = {}
        n = config.offsets_partitions
        self._owned: set = set(range(n)) if config.owned_partitions is None else set(config.owned_partitions)
        self._loading: set = set(config.loading_partitions)
        self._owned -= self._loading
        self._epochs: dict = {}
        self._active = config.active
        self._append_result = E.NONE
        self._append_count = 0
        self._pending_appends: dict = {}
        self._member_counter = 0
        self._incarnations = 0
        self._pinned = dict(config.group_partitions or ())
        self._partition_cache: dict = {}
        self._out: list = []
        self._transitions: list = []
        self.last_append_id: Optional[int] = None
        if config.offsets_expiration_enabled:
            self._timer.schedule(("expire",), config.offsets_retention_check_interval_ms, None)

    def _set_flags(self):
        b = self.behaviours
        self._stale_generation_commit = B.STALE_GENERATION_COMMIT in b
        self._no_generation_bump = B.NO_GENERATION_BUMP in b
        self._leader_not_reelected = B.LEADER_NOT_REELECTED in b
        self._no_sync_barrier = B.NO_SYNC_BARRIER in b
        self._static_replace_in_completing = B.STATIC_REPLACE_IN_COMPLETING in b
        self._duplicate_static_member = B.DUPLICATE_STATIC_MEMBER in b
        self._expire_while_rebalancing = B.EXPIRE_WHILE_REBALANCING in b

    # ---- public API ------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self._timer.now

    @property
    def internal(self) -> CoordinatorInternals:
        return CoordinatorInternals(self)

    def handle(self, request) -> list:
        """Handle one request; returns every Reply produced (its own and parked ones completed)."""
        handler = _HANDLERS.get(type(request))
        if handler is None:
            raise TypeError(f"not a group coordinator request: {type(request).__name__}")
        out = self._begin()
        handler(self, request)
        return out

    def advance(self, ms: int) -> list:
        """Move the clock by `ms` (Kafka MockTimer semantics); returns the replies of fired tasks."""
        out = self._begin()
        self._timer.advance(ms)
        return out

    def complete_append(self, append_id: int, error: str = E.NONE) -> list:
        """Finish a pending append to the offsets log with its raw result."""
        try:
            _partition, _records, cont = self._pending_appends.pop(append_id)
        except KeyError:
            raise KeyError(f"no pending append with id {append_id}") from None
        out = self._begin()
        self._finish(cont, error)
        return out

    @property
    def last_transitions(self) -> tuple:
        """(group id, from state, to state) of every transition made by the last entry-point call
        (handle, advance, complete_append, on_election, ...), in order. Not part of `snapshot()`."""
        return tuple(self._transitions)

    def pending_appends(self) -> list:
        """[(append_id, partition, records), ...] of appends the log has not finished, oldest first."""
        return [(aid, p, r) for aid, (p, r, _) in sorted(self._pending_appends.items())]

    def group(self, group_id: str) -> Optional[GroupView]:
        g = self._groups.get(group_id)
        return None if g is None else GroupView(g)

    def group_ids(self) -> list:
        return sorted(self._groups, key=str)

    def owned_partitions(self) -> frozenset:
        return frozenset(self._owned)

    def loading_partitions(self) -> frozenset:
        return frozenset(self._loading)

    def next_deadline(self):
        """Earliest deadline of a scheduled task (None if nothing is scheduled)."""
        return self._timer.next_deadline()

    def copy(self, log=None) -> "GroupCoordinator":
        """Independent copy. The offsets log is shared unless another one is given."""
        c = GroupCoordinator.__new__(GroupCoordinator)
        c.config = self.config
        c.behaviours = self.behaviours
        c._stale_generation_commit = self._stale_generation_commit
        c._no_generation_bump = self._no_generation_bump
        c._leader_not_reelected = self._leader_not_reelected
        c._no_sync_barrier = self._no_sync_barrier
        c._static_replace_in_completing = self._static_replace_in_completing
        c._duplicate_static_member = self._duplicate_static_member
        c._expire_while_rebalancing = self._expire_while_rebalancing
        c._log = self._log if log is None else log
        c._timer = self._timer.copy(c._fire)
        c._groups = {gid: g.copy() for gid, g in self._groups.items()}
        c._owned = set(self._owned)
        c._loading = set(self._loading)
        c._epochs = dict(self._epochs)
        c._active = self._active
        c._append_result = self._append_result
        c._append_count = self._append_count
        c._pending_appends = dict(self._pending_appends)
        c._member_counter = self._member_counter
        c._incarnations = self._incarnations
        c._pinned = self._pinned
        c._partition_cache = self._partition_cache
        c._out = []
        c._transitions = []
        c.last_append_id = self.last_append_id
        return c

    def snapshot(self) -> tuple:
        """Hashable value; equal snapshots <=> equal observable state (and equal futures)."""
        return (self._timer.snapshot(),
                tuple(g.snapshot() for _, g in sorted(self._groups.items(), key=lambda kv: str(kv[0]))),
                tuple(sorted(self._owned)), tuple(sorted(self._loading)), tuple(sorted(self._epochs.items())),
                self._active, self._append_result, self._member_counter, self._append_count,
                tuple(sorted(self._pending_appends.items())))

    # ---- plumbing ---------------------------------------------------------------------------------
    def _begin(self) -> list:
        self._out = out = []
        self._transitions = []
        return out

    def _transition(self, group, target) -> None:
        """Every state change goes through here: checked against Kafka's table, and journaled."""
        source = group.state
        group.transition_to(target, self.now)
        self._transitions.append((group.group_id, source, target))

    def _emit(self, correlation_id, response) -> None:
        self._out.append(Reply(correlation_id, response))

    def _partition(self, group_id) -> int:
        p = self._partition_cache.get(group_id)
        if p is None:
            p = self._pinned.get(group_id)
            if p is None:
                p = partition_for(group_id, self.config.offsets_partitions, self.behaviours)
            self._partition_cache[group_id] = p
        return p

    def _validate_status(self, group_id, allow_empty_id: bool):
        """`validateGroupStatus` (digest §3.1.1-3.1.2)."""
        if group_id is None or (group_id == "" and not allow_empty_id):
            return E.INVALID_GROUP_ID
        if not self._active:
            return E.COORDINATOR_NOT_AVAILABLE
        p = self._partition(group_id)
        if p in self._loading:
            return E.COORDINATOR_LOAD_IN_PROGRESS
        if p not in self._owned:
            return E.NOT_COORDINATOR
        return None

    def _add_new_group(self, group_id) -> Group:
        g = Group(group_id, "Empty", self.now)
        self._incarnations += 1
        g.incarnation = self._incarnations
        self._groups[group_id] = g
        return g

    def _live_group(self, group_id, incarnation):
        g = self._groups.get(group_id)
        return g if g is not None and g.incarnation == incarnation else None

    def _generate_member_id(self, client_id, instance_id) -> str:
        self._member_counter += 1
        seed = self.config.member_id_seed & 0xFFFFFFFF
        n = self._member_counter
        prefix = instance_id if instance_id is not None else client_id
        return f"{prefix}-{seed:08x}-{(n >> 64) & 0xFFFF:04x}-4{(n >> 48) & 0xFFF:03x}-8{(n >> 36) & 0xFFF:03x}-{n & 0xFFFFFFFFF:012x}"

    def _group_record(self, group, assignment) -> GroupMetadataRecord:
        pname = group.protocol_name
        members = ()
        if pname is not None:
            members = tuple(MemberRecord(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                         m.rebalance_timeout_ms, m.session_timeout_ms, m.metadata(pname),
                                         assignment.get(m.member_id, b""))
                            for m in group.members.values())
        return GroupMetadataRecord(group.group_id, group.protocol_type, group.generation_id, pname,
                                   group.leader_id, group.state_timestamp, members)

    def _append(self, partition, records, cont):
        """Append through the log; returns the raw error if finished now, None if pending."""
        aid = self._append_count
        self._append_count += 1
        if self._log is None:
            return self._append_result
        result = self._log.append(partition, records)
        if result is None:
            self._pending_appends[aid] = (partition, records, cont)
            self.last_append_id = aid
        return result

    def _store(self, partition, records, cont) -> None:
        error = self._append(partition, records, cont)
        if error is not None:
            self._finish(cont, error)

    def _finish(self, cont, error) -> None:
        kind = cont[0]
        if kind == "sync":
            self._finish_sync_store(cont, error)
        elif kind == "commit":
            self._finish_commit_store(cont, error)
        elif kind == "static":
            self._finish_static_store(cont, error)

    def _fire(self, key, payload) -> None:
        kind = key[0]
        if kind == "expire":
            self._on_expire_timer()
            return
        group = self._groups.get(key[1])
        if group is None:
            return
        if kind == "hb":
            self._on_heartbeat_timer(group, key[2], payload)
        elif kind == "join":
            self._on_join_timer(group)
        elif kind == "ijoin":
            self._on_initial_join_timer(group, payload)
        elif kind == "sync":
            self._on_sync_timer(group, payload)


_HANDLERS = {
    JoinGroupRequest: GroupCoordinator._handle_join,
    SyncGroupRequest: GroupCoordinator._handle_sync,
    HeartbeatRequest: GroupCoordinator._handle_heartbeat,
    LeaveGroupRequest: GroupCoordinator._handle_leave,
    OffsetCommitRequest: GroupCoordinator._handle_offset_commit,
    TxnOffsetCommitRequest: GroupCoordinator._handle_txn_offset_commit,
    OffsetFetchRequest: GroupCoordinator._handle_offset_fetch,
    OffsetDeleteRequest: GroupCoordinator._handle_offset_delete,
    DescribeGroupsRequest: GroupCoordinator._handle_describe,
    ListGroupsRequest: GroupCoordinator._handle_list,
    DeleteGroupsRequest: GroupCoordinator._handle_delete_groups,
}
