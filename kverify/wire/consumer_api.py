"""KIP-848 on the wire: ConsumerGroupHeartbeat (v0-1) and ConsumerGroupDescribe (v0) served by the
reference consumer-group coordinator of impl/consumer (K2), beside the classic one.

Message classes: kverify/wire/kip848 (schemas kafka-python does not ship, read by kafka-python's codec).
Topic ids on the wire are 16-byte UUIDs; impl/consumer names them by Kafka's Uuid text (base64url of the
same 16 bytes, `topic_id_for(name)`), and Metadata announces the same ids (and resolves them).
OffsetCommit/OffsetFetch of a group that exists in the consumer coordinator go to it (it validates the
member epoch, and answers UNSUPPORTED_VERSION below v9 as Kafka); every other group stays classic
(group_api). Not done: failover of consumer groups (the failover fault moves classic groups only).
"""
from __future__ import annotations

import base64
import uuid

from kverify.impl.consumer import messages as K
from kverify.wire import group_api
from kverify.wire.codec import error_code


def wire_topic_id(kafka_uuid: str) -> uuid.UUID:
    """Kafka Uuid text (base64url, no padding) -> uuid.UUID for kafka-python's uuid fields."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(kafka_uuid + "=="))


def kafka_topic_id(u) -> str:
    if not isinstance(u, uuid.UUID):
        u = uuid.UUID(str(u))
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode("ascii")


def _partitions(items):
    return tuple(K.TopicPartitions(kafka_topic_id(t.topic_id), tuple(sorted(t.partitions or ()))) for t in items)


def to_request(version, body, client_id="", client_host=""):
    names = body.subscribed_topic_names
    return K.ConsumerGroupHeartbeatRequest(
        group_id=body.group_id, member_id=body.member_id or "", member_epoch=body.member_epoch,
        instance_id=body.instance_id, rack_id=body.rack_id, rebalance_timeout_ms=body.rebalance_timeout_ms,
        subscribed_topic_names=None if names is None else tuple(names),
        subscribed_topic_regex=body.subscribed_topic_regex if version >= 1 else None,
        server_assignor=body.server_assignor,
        topic_partitions=None if body.topic_partitions is None else _partitions(body.topic_partitions),
        client_id=client_id or "", client_host=client_host)


def to_wire(r) -> dict:
    assignment = None
    if r.assignment is not None:
        assignment = {"topic_partitions": [{"topic_id": wire_topic_id(tp.topic_id), "partitions": list(tp.partitions)}
                                           for tp in r.assignment]}
    return {"throttle_time_ms": 0, "error_code": error_code(r.error), "error_message": r.error_message,
            "member_id": r.member_id, "member_epoch": r.member_epoch,
            "heartbeat_interval_ms": r.heartbeat_interval_ms, "assignment": assignment}


def heartbeat(b, ctx, body):
    req = to_request(ctx.version, body, ctx.client_id, "/" + ctx.host)
    b.submit(ctx, lambda cid: req._replace(correlation_id=cid), to_wire, coordinator=b.consumer_coordinator)


def _described_assignment(parts):
    return {"topic_partitions": [{"topic_id": wire_topic_id(p.topic_id), "topic_name": p.topic_name,
                                  "partitions": list(p.partitions)} for p in parts]}


def describe(b, ctx, body):
    def answer(r):
        return {"throttle_time_ms": 0, "groups": [{
            "error_code": error_code(g.error), "error_message": g.error_message, "group_id": g.group_id,
            "group_state": g.group_state, "group_epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch,
            "assignor_name": g.assignor_name, "authorized_operations": g.authorized_operations,
            "members": [{"member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                         "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
                         "subscribed_topic_names": list(m.subscribed_topic_names),
                         "subscribed_topic_regex": m.subscribed_topic_regex,
                         "assignment": _described_assignment(m.assignment),
                         "target_assignment": _described_assignment(m.target_assignment)} for m in g.members]}
            for g in r.groups]}
    req = K.ConsumerGroupDescribeRequest(group_ids=tuple(body.group_ids or ()),
                                         include_authorized_operations=bool(body.include_authorized_operations))
    b.submit(ctx, lambda cid: req._replace(correlation_id=cid), answer, coordinator=b.consumer_coordinator)


def _is_consumer_group(b, group_id) -> bool:
    return group_id in b.consumer_coordinator.group_ids()


def offset_commit(b, ctx, body):
    if not _is_consumer_group(b, body.group_id):
        group_api.handle(b, ctx, body)
        return
    v = ctx.version
    c = group_api.to_requests("OffsetCommit", v, body)[0]
    req = K.OffsetCommitRequest(group_id=c.group_id, generation_id_or_member_epoch=c.generation_id,
                                member_id=c.member_id, group_instance_id=c.group_instance_id, offsets=c.offsets,
                                api_version=v)
    b.submit(ctx, lambda cid: req._replace(correlation_id=cid),
             lambda r: group_api.to_wire("OffsetCommit", v, [r], body), coordinator=b.consumer_coordinator)


def offset_fetch(b, ctx, body):
    v = ctx.version
    classic = group_api.to_requests("OffsetFetch", v, body)
    groups = list(body.groups or ()) if v >= 8 else [None]
    if not any(_is_consumer_group(b, r.group_id) for r in classic):
        group_api.handle(b, ctx, body)
        return
    responses = []
    for req, g in zip(classic, groups):
        if _is_consumer_group(b, req.group_id):
            member_id = g.member_id if g is not None and v >= 9 else None
            epoch = g.member_epoch if g is not None and v >= 9 else -1
            k = K.OffsetFetchRequest(group_id=req.group_id, member_id=member_id, member_epoch=epoch,
                                     partitions=req.partitions, require_stable=req.require_stable)
            responses.append(b.ask(lambda cid, k=k: k._replace(correlation_id=cid), b.consumer_coordinator))
        else:
            responses.append(b.ask(lambda cid, req=req: req._replace(correlation_id=cid)))
    b.respond(ctx, group_api.to_wire("OffsetFetch", v, responses, body))


HANDLERS = {"ConsumerGroupHeartbeat": heartbeat, "ConsumerGroupDescribe": describe,
            "OffsetCommit": offset_commit, "OffsetFetch": offset_fetch}
