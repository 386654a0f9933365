"""A small driver for a `GroupCoordinator`, used by unit tests (a test helper kept out of impl/).

It numbers requests (correlation ids), records every reply by correlation id (failing loudly if a
response is delivered twice, which Kafka never does), and offers one-line helpers for the usual
requests with the Kafka test defaults (protocols [("range", b"")], session/rebalance 500 ms).
"""
from __future__ import annotations

from kverify.impl.coordinator.coordinator import GroupCoordinator
from kverify.impl.coordinator.messages import (
    DeleteGroupsRequest, DescribeGroupsRequest, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
    ListGroupsRequest, MemberIdentity, OffsetAndMetadata, OffsetCommitRequest, OffsetDeleteRequest,
    OffsetFetchRequest, SyncGroupRequest, TopicPartition, TxnOffsetCommitRequest)

PROTOCOLS = (("range", b""),)


class Harness:
    def __init__(self, coordinator: GroupCoordinator):
        self.c = coordinator
        self.responses: dict = {}
        self._next = 0

    # ---- plumbing ----------------------------------------------------------------------------
    def _record(self, replies):
        for r in replies:
            if r.correlation_id in self.responses:
                raise AssertionError(f"response to request {r.correlation_id} delivered twice: {r.response}")
            self.responses[r.correlation_id] = r.response
        return replies

    def send(self, make) -> int:
        """`make(correlation_id)` builds the request; returns its correlation id."""
        self._next += 1
        cid = self._next
        self._record(self.c.handle(make(cid)))
        return cid

    def advance(self, ms: int):
        return self._record(self.c.advance(ms))

    def complete_append(self, append_id: int, error: str = "NONE"):
        return self._record(self.c.complete_append(append_id, error))

    def done(self, cid: int) -> bool:
        return cid in self.responses

    def get(self, cid: int):
        if cid not in self.responses:
            raise AssertionError(f"request {cid} has no response yet (still parked)")
        return self.responses[cid]

    # ---- requests ----------------------------------------------------------------------------
    def join(self, group="g", member_id="", instance_id=None, protocols=PROTOCOLS, session=500, rebalance=500,
             require_known=True, protocol_type="consumer", skip=False, client_id="clientId") -> int:
        return self.send(lambda cid: JoinGroupRequest(
            group, member_id, instance_id, protocol_type, tuple(protocols), session, rebalance, require_known,
            skip, client_id, "clientHost", cid))

    def sync(self, group, generation, member_id, assignments=(), instance_id=None, protocol_type=None,
             protocol_name=None) -> int:
        if isinstance(assignments, dict):
            assignments = tuple(assignments.items())
        return self.send(lambda cid: SyncGroupRequest(group, generation, member_id, instance_id, protocol_type,
                                                      protocol_name, tuple(assignments), cid))

    def heartbeat(self, group, generation, member_id, instance_id=None) -> str:
        return self.get(self.send(lambda cid: HeartbeatRequest(group, generation, member_id, instance_id, cid))).error

    def leave(self, group, *identities):
        members = tuple(i if isinstance(i, MemberIdentity) else MemberIdentity(*((i,) if isinstance(i, str) else i))
                        for i in identities)
        return self.get(self.send(lambda cid: LeaveGroupRequest(group, members, cid)))

    def commit(self, group, generation=-1, member_id="", offsets=None, instance_id=None) -> dict:
        offsets = offsets or {TopicPartition("t", 0): 1}
        items = tuple((tp if isinstance(tp, TopicPartition) else TopicPartition.parse(tp),
                       o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o)) for tp, o in offsets.items())
        cid = self.send(lambda c: OffsetCommitRequest(group, generation, member_id, instance_id, items, c))
        return dict(self.get(cid).partition_errors) if self.done(cid) else None

    def txn_commit(self, group, producer_id, generation=-1, member_id="", offsets=None, instance_id=None) -> dict:
        offsets = offsets or {TopicPartition("t", 0): 1}
        items = tuple((tp, o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o)) for tp, o in offsets.items())
        cid = self.send(lambda c: TxnOffsetCommitRequest(f"txn-{producer_id}", group, producer_id, 0, generation,
                                                         member_id, instance_id, items, c))
        return dict(self.get(cid).partition_errors) if self.done(cid) else None

    def fetch(self, group, partitions=None, require_stable=True):
        return self.get(self.send(lambda cid: OffsetFetchRequest(group, partitions, require_stable, cid)))

    def describe(self, group):
        return self.get(self.send(lambda cid: DescribeGroupsRequest(group, cid)))

    def list_groups(self, states=()):
        return self.get(self.send(lambda cid: ListGroupsRequest(tuple(states), cid)))

    def delete_groups(self, *groups) -> dict:
        return dict(self.get(self.send(lambda cid: DeleteGroupsRequest(tuple(groups), cid))).results)

    def delete_offsets(self, group, *partitions):
        return self.get(self.send(lambda cid: OffsetDeleteRequest(group, tuple(partitions), cid)))

    # ---- composite steps ---------------------------------------------------------------------
    def join_dynamic(self, group="g", **kw) -> int:
        """KIP-394 two-step join: MEMBER_ID_REQUIRED, then rejoin with the id; returns the 2nd cid."""
        first = self.get(self.join(group, **kw))
        assert first.error == "MEMBER_ID_REQUIRED", first
        kw.pop("member_id", None)
        return self.join(group, member_id=first.member_id, **kw)
