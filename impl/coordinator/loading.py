"""Ownership of `__consumer_offsets` partitions: load on election, unload on resignation (§8.4-8.6).

A mixin of `GroupCoordinator`. Loading replays the partition's records (group metadata, offsets,
tombstones) into groups: a group with members comes back Stable at its persisted generation,
without members Empty; every member gets a fresh session timer; a group over group.max.size starts
a rebalance at once. Unloading moves each group of the partition to Dead, answering parked
JoinGroups (PreparingRebalance) or SyncGroups (CompletingRebalance/Stable) with NOT_COORDINATOR.
Both are ignored when their coordinator epoch is older than the last one seen for the partition;
an election for a partition already owned loads nothing, and a group already cached is kept
(Kafka's `addLoadingPartition` / `addGroup` = putIfNotExists).
"""
from __future__ import annotations

from kverify.impl.coordinator.group import CommittedOffset, Group, Member
from kverify.impl.coordinator.messages import Errors as E, JoinGroupResponse, SyncGroupResponse
from kverify.impl.coordinator.records import (
    GroupMetadataRecord, GroupTombstone, OffsetCommitRecord, OffsetTombstone, TxnMarkerRecord)
from kverify.impl.coordinator.states import (
    COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE)


class PartitionLoading:
    def _maybe_update_epoch(self, partition, epoch) -> bool:
        current = self._epochs.get(partition)
        if current is None:
            if epoch is not None:
                self._epochs[partition] = epoch
            return True
        if epoch is not None and epoch > current:
            self._epochs[partition] = epoch
        return epoch is None or epoch == self._epochs[partition]

    def on_election(self, partition: int, coordinator_epoch, records=()) -> list:
        """This coordinator now leads `partition`: load its groups and offsets from `records`."""
        out = self._begin()
        if not self._maybe_update_epoch(partition, coordinator_epoch):
            return out
        if partition in self._owned:
            return out          # Kafka: "Already loading offsets and group metadata" -> nothing reloaded
        self._loading.discard(partition)
        metas, offsets, txn = {}, {}, {}      # txn: producer id -> group id -> {tp: CommittedOffset}
        # Loaded records keep their log order, and every later append of this coordinator must count as
        # newer (Kafka compares log offsets): number them from the current append counter and move it past.
        records = tuple(records)
        base = self._append_count
        self._append_count += len(records)
        for order, rec in enumerate(records, start=base):
            if isinstance(rec, GroupMetadataRecord):
                metas[rec.group_id] = rec
            elif isinstance(rec, GroupTombstone):
                metas[rec.group_id] = None
            elif isinstance(rec, OffsetCommitRecord):
                co = CommittedOffset(rec.offset, rec.leader_epoch, rec.metadata, rec.commit_timestamp,
                                     rec.expire_timestamp, order)
                if rec.producer_id is None:
                    offsets.setdefault(rec.group_id, {})[rec.partition] = co
                else:
                    txn.setdefault(rec.producer_id, {}).setdefault(rec.group_id, {})[rec.partition] = co
            elif isinstance(rec, OffsetTombstone):
                offsets.setdefault(rec.group_id, {}).pop(rec.partition, None)
            elif isinstance(rec, TxnMarkerRecord):
                for gid, staged in txn.pop(rec.producer_id, {}).items():
                    if rec.commit:
                        target = offsets.setdefault(gid, {})
                        for tp, co in staged.items():
                            if tp not in target or target[tp].append_order < co.append_order:
                                target[tp] = co
            else:
                raise TypeError(f"not an offsets-topic record: {rec!r}")
        pending = {}                           # group id -> producer id -> {tp: (CommittedOffset, True)}
        for pid, by_group in txn.items():
            for gid, staged in by_group.items():
                pending.setdefault(gid, {})[pid] = {tp: (co, True) for tp, co in staged.items()}
        loaded = []
        for gid in sorted(set(metas) | set(offsets) | set(pending), key=str):
            meta = metas.get(gid)
            offs = offsets.get(gid) or {}
            if meta is None and not offs and gid not in pending:
                continue
            if gid in self._groups:
                continue        # Kafka: addGroup is putIfNotExists; a cached group wins over the log
            group = self._load_group(gid, meta, offs)
            group.pending_txn_offsets = pending.get(gid, {})
            self._groups[gid] = group
            loaded.append(group)
        self._owned.add(partition)
        for group in loaded:
            if len(group.members) > self.config.group_max_size:
                self._prepare_rebalance(group)
            for m in list(group.members.values()):
                self._schedule_heartbeat(group, m)
        return out

    def _load_group(self, gid, meta, offsets) -> Group:
        group = Group(gid, EMPTY, self.now)
        self._incarnations += 1
        group.incarnation = self._incarnations
        if meta is not None:
            group.generation_id = meta.generation_id
            group.protocol_type = meta.protocol_type
            group.protocol_name = meta.protocol_name
            group.state_timestamp = meta.current_state_timestamp
            for mr in meta.members:
                m = Member(mr.member_id, mr.group_instance_id, mr.client_id, mr.client_host,
                           mr.rebalance_timeout_ms, mr.session_timeout_ms, meta.protocol_type or "",
                           ((meta.protocol_name, mr.subscription),))
                m.assignment = mr.assignment
                group.add(m)
            group.protocol_type = meta.protocol_type
            group.leader_id = meta.leader_id
            if group.members:
                group.state = STABLE
            group.subscribed_topics = self._compute_subscribed_topics(group)
        group.offsets = dict(offsets)
        return group

    def on_resignation(self, partition: int, coordinator_epoch=None) -> list:
        """This coordinator no longer leads `partition`: unload its groups (-> Dead)."""
        out = self._begin()
        if not self._maybe_update_epoch(partition, coordinator_epoch):
            return out
        self._owned.discard(partition)
        self._loading.discard(partition)
        for gid in sorted((g for g in self._groups if self._partition(g) == partition), key=str):
            group = self._groups.pop(gid)
            self._on_group_unloaded(group)
        return out

    def _on_group_unloaded(self, group):
        previous = group.state
        self._transition(group, DEAD)
        if previous == PREPARING_REBALANCE:
            for m in group.members.values():
                cid = group.take_join(m)
                if cid is not None:
                    self._emit(cid, JoinGroupResponse(E.NOT_COORDINATOR, m.member_id))
        elif previous in (STABLE, COMPLETING_REBALANCE):
            for m in group.members.values():
                cid = group.take_sync(m)
                if cid is not None:
                    self._emit(cid, SyncGroupResponse(E.NOT_COORDINATOR))
        gid = group.group_id
        for key in (("join", gid), ("ijoin", gid), ("sync", gid)):
            self._timer.cancel(key)
        for mid in list(group.members) + sorted(group.pending_members):
            self._timer.cancel(("hb", gid, mid))
        group.pending_sync_members.clear()
