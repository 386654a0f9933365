"""OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete and offset retention/expiry (digest §7).

A mixin of `GroupCoordinator`. Commits are validated by Kafka 3.6's rules (§7.1.2), staged as
pending, appended through the offsets log, and materialised only when the append succeeds.
Expiry follows `GroupMetadata.removeExpiredOffsets` (§7.5.1) and runs from the periodic
("expire",) timer task, followed by `cleanupGroupMetadata` (Empty group without offsets -> Dead).
"""
from __future__ import annotations

from kverify.impl.coordinator.group import CommittedOffset
from kverify.impl.coordinator.messages import (
    Errors as E, OffsetCommitResponse, OffsetDeleteResponse, OffsetFetchPartition, OffsetFetchResponse,
    TxnOffsetCommitResponse)
from kverify.impl.coordinator.records import GroupTombstone, OffsetCommitRecord, OffsetTombstone
from kverify.impl.coordinator.states import (
    COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE)


def map_commit_append_error(error: str) -> str:
    """Raw append error of an offset write -> OffsetCommit partition error (digest §7.3.1)."""
    if error in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return E.COORDINATOR_NOT_AVAILABLE
    if error in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    if error in (E.MESSAGE_TOO_LARGE, E.RECORD_LIST_TOO_LARGE, E.INVALID_FETCH_SIZE):
        return E.INVALID_COMMIT_OFFSET_SIZE
    return error


class OffsetHandling:
    # ---- OffsetCommit ----------------------------------------------------------------------------
    def _handle_offset_commit(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=True)
        if err is not None:
            self._emit(cid, OffsetCommitResponse(tuple((tp, err) for tp, _ in req.offsets)))
            return
        group = self._groups.get(req.group_id)
        if group is None:
            if req.generation_id < 0:
                group = self._add_new_group(req.group_id)
            else:
                self._emit(cid, OffsetCommitResponse(tuple((tp, E.ILLEGAL_GENERATION) for tp, _ in req.offsets)))
                return
        err = self._validate_offset_commit(group, req)
        if err is not None:
            self._emit(cid, OffsetCommitResponse(tuple((tp, err) for tp, _ in req.offsets)))
            return
        st = group.state
        if st == EMPTY:
            self._store_offsets(group, req)
        elif st in (STABLE, PREPARING_REBALANCE):
            self._schedule_heartbeat(group, group.members[req.member_id])
            self._store_offsets(group, req)
        elif st == COMPLETING_REBALANCE:
            self._emit(cid, OffsetCommitResponse(tuple((tp, E.REBALANCE_IN_PROGRESS) for tp, _ in req.offsets)))
        else:
            raise RuntimeError(f"Logic error: unexpected group state {st}")

    def _validate_offset_commit(self, group, req, transactional=False):
        if group.state == DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        gen = req.generation_id
        if gen < 0 and group.state == EMPTY:
            return None      # admin client / simple consumer: no member or instance check at all
        if gen >= 0 or req.member_id != "" or req.group_instance_id is not None:
            err = self._validate_member(group, req.member_id, req.group_instance_id)
            if err is not None:
                return err
            if gen != group.generation_id:
                if self._stale_generation_commit and 0 <= gen < group.generation_id:
                    return None
                return E.ILLEGAL_GENERATION
            return None
        if not transactional and group.state != EMPTY:
            return E.UNKNOWN_MEMBER_ID
        return None

    def _metadata_ok(self, metadata) -> bool:
        return metadata is None or len(metadata) <= self.config.offset_metadata_max_bytes

    def _store_offsets(self, group, req, producer_id=None):
        cid = req.correlation_id
        response = OffsetCommitResponse if producer_id is None else TxnOffsetCommitResponse
        valid = [(tp, om) for tp, om in req.offsets if self._metadata_ok(om.metadata)]
        if not valid:
            self._emit(cid, response(tuple((tp, E.OFFSET_METADATA_TOO_LARGE) for tp, _ in req.offsets)))
            return
        now = self.now
        order = self._append_count
        retention = getattr(req, "retention_time_ms", -1)
        expire = None if retention == -1 else now + retention
        staged = tuple((tp, CommittedOffset(om.offset, om.leader_epoch, om.metadata, now, expire, order))
                       for tp, om in valid)
        # Kafka 3.6 (GroupMetadataManager.storeOffsets) stages EVERY requested partition as pending,
        # including those rejected for oversized metadata, but only settles the valid ones: the
        # rejected ones stay pending until a later commit of the same partition settles.
        # (the same holds for transactional commits, staged per producer id)
        if producer_id is None:
            for tp, om in req.offsets:
                group.pending_offsets[tp] = CommittedOffset(om.offset, om.leader_epoch, om.metadata, now, expire, order)
        else:
            pending = group.pending_txn_offsets.setdefault(producer_id, {})
            for tp, om in req.offsets:
                pending[tp] = (CommittedOffset(om.offset, om.leader_epoch, om.metadata, now, expire, order), False)
        gid = group.group_id
        records = tuple(OffsetCommitRecord(gid, tp, co.offset, co.leader_epoch, co.metadata, co.commit_timestamp,
                                           co.expire_timestamp, producer_id) for tp, co in staged)
        shape = tuple((tp, not self._metadata_ok(om.metadata)) for tp, om in req.offsets)
        self._store(self._partition(gid), records, ("commit", gid, group.incarnation, cid, staged, shape, producer_id))

    def _finish_commit_store(self, cont, error):
        _, gid, inc, cid, staged, shape, producer_id = cont
        group = self._live_group(gid, inc)
        alive = group is not None and group.state != DEAD
        response = OffsetCommitResponse if producer_id is None else TxnOffsetCommitResponse
        if producer_id is not None:
            pending = group.pending_txn_offsets.get(producer_id) if alive else None
            if pending is not None:
                for tp, co in staged:
                    if error == E.NONE:
                        if tp in pending and pending[tp][0] == co:
                            pending[tp] = (co, True)         # onTxnOffsetCommitAppend
                    else:
                        pending.pop(tp, None)                # failPendingTxnOffsetCommit
                if not pending:
                    del group.pending_txn_offsets[producer_id]
            result = E.NONE if error == E.NONE else map_commit_append_error(error)
        elif error == E.NONE:
            if alive:
                for tp, co in staged:
                    if tp in group.pending_offsets:
                        # `<=`: a partition named twice in one request (the same append) takes its LAST entry,
                        # as Kafka does (KafkaApis collects the request into a map; the new coordinator's
                        # OffsetMetadataManager.commitOffset writes one record per entry and replays them
                        # in order) and as replaying this append's records on a reload does
                        cur = group.offsets.get(tp)
                        if cur is None or cur.append_order <= co.append_order:
                            group.offsets[tp] = co
                    if group.pending_offsets.get(tp) == co:
                        del group.pending_offsets[tp]
            result = E.NONE
        else:
            if alive:
                for tp, co in staged:
                    if group.pending_offsets.get(tp) == co:
                        del group.pending_offsets[tp]
            result = map_commit_append_error(error)
        self._emit(cid, response(tuple(
            (tp, E.OFFSET_METADATA_TOO_LARGE if too_large else result) for tp, too_large in shape)))

    # ---- TxnOffsetCommit and transaction markers -------------------------------------------------
    def _handle_txn_offset_commit(self, req):
        """`handleTxnCommitOffsets`: the group is created if absent; validation as OffsetCommit but a
        generation-less commit is accepted on any non-Dead group and there is no state check (§7.2)."""
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=False)
        if err is None:
            group = self._groups.get(req.group_id) or self._add_new_group(req.group_id)
            err = self._validate_offset_commit(group, req, transactional=True)
        if err is not None:
            self._emit(cid, TxnOffsetCommitResponse(tuple((tp, err) for tp, _ in req.offsets)))
            return
        self._store_offsets(group, req, producer_id=req.producer_id)

    def complete_transaction(self, producer_id: int, commit: bool, partitions=None) -> list:
        """The transaction marker of `producer_id` is written in the offsets `partitions` (None = all):
        its staged offsets become visible (commit; the later log append wins) or are dropped (abort).
        Kafka's `handleTxnCompletion`. A staged offset whose record never reached the log is skipped
        (Kafka throws IllegalStateException there)."""
        out = self._begin()
        for gid in sorted(self._groups, key=str):
            group = self._groups[gid]
            if partitions is not None and self._partition(gid) not in partitions:
                continue
            if group.state == DEAD or producer_id not in group.pending_txn_offsets:
                continue
            self._settle_txn(group, group.pending_txn_offsets.pop(producer_id), commit)
        return out

    @staticmethod
    def _settle_txn(group, pending, commit):
        if not commit:
            return
        for tp, (co, appended) in sorted(pending.items()):
            if not appended:
                continue
            cur = group.offsets.get(tp)
            if cur is None or cur.append_order < co.append_order:
                group.offsets[tp] = co

    # ---- OffsetFetch -----------------------------------------------------------------------------
    def _handle_offset_fetch(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=True)
        if err is not None:
            self._emit(cid, OffsetFetchResponse(err, ()))
            return
        group = self._groups.get(req.group_id)
        if group is None or group.state == DEAD:
            parts = tuple(OffsetFetchPartition(tp, -1, None, "", E.NONE) for tp in (req.partitions or ()))
            self._emit(cid, OffsetFetchResponse(E.NONE, parts))
            return
        tps = req.partitions if req.partitions is not None else sorted(group.offsets)
        out = []
        for tp in tps:
            if req.require_stable and group.has_pending_commit(tp):
                out.append(OffsetFetchPartition(tp, -1, None, "", E.UNSTABLE_OFFSET_COMMIT))
                continue
            co = group.offsets.get(tp)
            if co is None:
                out.append(OffsetFetchPartition(tp, -1, None, "", E.NONE))
            else:
                out.append(OffsetFetchPartition(tp, co.offset, co.leader_epoch, co.metadata, E.NONE))
        self._emit(cid, OffsetFetchResponse(E.NONE, tuple(out)))

    # ---- OffsetDelete ----------------------------------------------------------------------------
    def _handle_offset_delete(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=False)
        if err is not None:
            self._emit(cid, OffsetDeleteResponse(err, ()))
            return
        group = self._groups.get(req.group_id)
        if group is None or group.state == DEAD:
            self._emit(cid, OffsetDeleteResponse(self._group_absent_error(req.group_id), ()))
            return
        errors = {}
        st = group.state
        if st == EMPTY:
            eligible = list(req.partitions)
        elif group.protocol_type == "consumer":
            subscribed = group.subscribed_topics
            eligible = []
            for tp in req.partitions:
                if subscribed is None or tp.topic in subscribed:
                    errors[tp] = E.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    eligible.append(tp)
        else:
            self._emit(cid, OffsetDeleteResponse(E.NON_EMPTY_GROUP, ()))
            return
        if eligible:
            targets = set(eligible)
            self._cleanup_group_metadata([group], lambda g: self._remove_offsets(g, targets))
            for tp in eligible:
                errors[tp] = E.NONE
        seen, out = set(), []
        for tp in req.partitions:
            if tp not in seen:
                seen.add(tp)
                out.append((tp, errors[tp]))
        self._emit(cid, OffsetDeleteResponse(E.NONE, tuple(out)))

    @staticmethod
    def _remove_offsets(group, partitions):
        removed = []
        for tp in sorted(partitions):
            group.pending_offsets.pop(tp, None)
            for pid in list(group.pending_txn_offsets):
                group.pending_txn_offsets[pid].pop(tp, None)
                if not group.pending_txn_offsets[pid]:
                    del group.pending_txn_offsets[pid]
            if group.offsets.pop(tp, None) is not None:
                removed.append(tp)
        return removed

    # ---- expiry ----------------------------------------------------------------------------------
    def _remove_expired_offsets(self, group):
        now, retention = self.now, self.config.offsets_retention_ms
        pt = group.protocol_type
        subscribed = frozenset()
        if pt is not None and group.state == EMPTY:
            ts = group.state_timestamp
            base = (lambda co: co.commit_timestamp) if ts is None else (lambda co: ts)
        elif (pt == "consumer" and group.subscribed_topics is not None
              and (group.state == STABLE or self._expire_while_rebalancing)):
            base = lambda co: co.commit_timestamp
            subscribed = group.subscribed_topics
        elif pt is None:
            base = lambda co: co.commit_timestamp
        else:
            return []
        expired = []
        for tp, co in group.offsets.items():
            if tp.topic in subscribed or tp in group.pending_offsets:
                continue
            if co.expire_timestamp is None:
                if now - base(co) >= retention:
                    expired.append(tp)
            elif now >= co.expire_timestamp:
                expired.append(tp)
        for tp in expired:
            del group.offsets[tp]
        return sorted(expired)

    def on_partitions_deleted(self, partitions) -> list:
        """Topic deletion (`handleDeletedPartitions`, §7.5.4): drop those partitions' offsets from every
        group at once, with tombstones; Empty groups left without offsets die."""
        out = self._begin()
        targets = set(partitions)
        self._cleanup_group_metadata([self._groups[g] for g in sorted(self._groups, key=str)],
                                     lambda g: self._remove_offsets(g, targets & (set(g.offsets) | set(g.pending_offsets))))
        return out

    def _on_expire_timer(self):
        self._cleanup_group_metadata([self._groups[g] for g in sorted(self._groups)], self._remove_expired_offsets)
        self._timer.schedule(("expire",), self.config.offsets_retention_check_interval_ms, None)

    def _cleanup_group_metadata(self, groups, selector):
        """`cleanupGroupMetadata`: apply `selector` (returns removed partitions), kill Empty groups
        left without offsets, drop Dead groups from the cache, write tombstones (acks=0)."""
        by_partition = {}
        for group in groups:
            removed = selector(group)
            if group.state == EMPTY and not group.has_offsets():
                self._transition(group, DEAD)
            gid = group.group_id
            records = [OffsetTombstone(gid, tp) for tp in removed]
            if group.state == DEAD and self._groups.get(gid) is group:
                del self._groups[gid]
                if group.generation_id > 0:
                    records.append(GroupTombstone(gid))
            if records:
                by_partition.setdefault(self._partition(gid), []).extend(records)
        for p in sorted(by_partition, key=lambda x: (x is None, x)):
            self._append(p, tuple(by_partition[p]), ("ignore",))
