"""OffsetCommit (v9+) and OffsetFetch for KIP-848 groups: offsets validated against member epochs.

Why it exists: KIP-848 fences commits by member epoch (STALE_MEMBER_EPOCH) instead of generations;
this mixin of ConsumerGroupCoordinator follows OffsetMetadataManager.commitOffset /
validateOffsetCommit / fetchOffsets / fetchAllOffsets with ConsumerGroup.validateOffsetCommit and
validateOffsetFetch (group.py). Offsets live in `self._offsets` {group_id: {TopicPartition:
OffsetAndMetadata}}; there is no __consumer_offsets log (appends succeed at once).
"""
from __future__ import annotations

from kverify.impl.consumer.group import ConsumerGroup
from kverify.impl.consumer.messages import (Errors as E, OffsetCommitRequest, OffsetCommitResponse,
                                            OffsetFetchPartition, OffsetFetchRequest, OffsetFetchResponse,
                                            Reply)


class OffsetHandling:
    def _handle_offset_commit(self, req: OffsetCommitRequest) -> None:
        """OffsetMetadataManager.commitOffset + validateOffsetCommit."""
        group = self._groups.get(req.group_id)
        err = None
        if group is None:
            if req.generation_id_or_member_epoch >= 0:
                err = E.GROUP_ID_NOT_FOUND if req.api_version >= 9 else E.ILLEGAL_GENERATION
        else:
            err = group.validate_offset_commit(req.member_id, req.group_instance_id,
                                               req.generation_id_or_member_epoch, req.api_version)
        if err is not None:
            self._out.append(Reply(req.correlation_id, OffsetCommitResponse(tuple((tp, err) for tp, _ in req.offsets))))
            return
        if group is None:
            self._groups[req.group_id] = ConsumerGroup(req.group_id, self._lost_epoch)
        store = self._offsets.setdefault(req.group_id, {})
        results = []
        for tp, om in req.offsets:
            if om.metadata is not None and len(om.metadata) > self.config.offset_metadata_max_bytes:
                results.append((tp, E.OFFSET_METADATA_TOO_LARGE))
            else:
                store[tp] = om
                results.append((tp, E.NONE))
        self._out.append(Reply(req.correlation_id, OffsetCommitResponse(tuple(results))))

    def _handle_offset_fetch(self, req: OffsetFetchRequest) -> None:
        """OffsetMetadataManager.fetchOffsets / fetchAllOffsets + validateOffsetFetch."""
        group = self._groups.get(req.group_id)
        if group is not None:
            err = group.validate_offset_fetch(req.member_id, req.member_epoch)
            if err is not None:
                self._out.append(Reply(req.correlation_id, OffsetFetchResponse(err)))
                return
        store = self._offsets.get(req.group_id, {}) if group is not None else {}
        wanted = req.partitions if req.partitions is not None else tuple(sorted(store))
        parts = []
        for tp in wanted:
            om = store.get(tp)
            if om is None:
                parts.append(OffsetFetchPartition(tp, -1, None, "", E.NONE))
            else:
                parts.append(OffsetFetchPartition(tp, om.offset, om.leader_epoch, om.metadata, E.NONE))
        self._out.append(Reply(req.correlation_id, OffsetFetchResponse(E.NONE, tuple(parts))))


