"""Cluster and data APIs of the one-node broker: ApiVersions, Metadata, FindCoordinator, Produce,
Fetch, ListOffsets, on the in-memory `partition_log.Topics`.

The broker is node 0 and leads every partition (one replica, in sync); the high watermark is the log
end offset. Fetches with no data wait (long poll) until data arrives or `max_wait_ms` passes.
"""
from __future__ import annotations

import functools
import uuid

from kverify.wire.codec import APIS, BadRequest, error_code

NODE_ID = 0
CLUSTER_ID = "kverify-broker"
UNKNOWN_TOPIC = error_code("UNKNOWN_TOPIC_OR_PARTITION")
UNKNOWN_TOPIC_ID = 100          # Errors.UNKNOWN_TOPIC_ID


def _name_of(b, tid):
    """Topic name of a wire topic id (None when no topic has it)."""
    for name in b.topics.names():
        if topic_id(name) == tid:
            return name
    return None


def api_versions_fields(version: int, error: int = 0) -> dict:
    out = {"error_code": error,
           "api_keys": [{"api_key": a.key, "min_version": a.min_version, "max_version": a.max_version}
                        for a in sorted(APIS.values(), key=lambda a: a.key)]}
    if version >= 1:
        out["throttle_time_ms"] = 0
    return out


def api_versions(b, ctx, body):
    b.respond(ctx, api_versions_fields(ctx.version))


@functools.lru_cache(maxsize=4096)
def topic_id(name: str) -> uuid.UUID:
    """The id impl/consumer gives the topic (K1's derivation), as the 16 bytes of the wire."""
    from kverify.impl.consumer.topics import topic_id_for
    from kverify.wire.consumer_api import wire_topic_id
    return wire_topic_id(topic_id_for(name))


def metadata(b, ctx, body):
    v = ctx.version
    requested = body.topics
    if requested is None or (v == 0 and not requested):
        names = b.topics.names()
    else:           # by name, or (v10+, KIP-848 clients) by topic id with a null name
        names = [t.name if t.name is not None or v < 10 else _name_of(b, t.topic_id) for t in requested]
    topics = []
    for name in names:
        n = b.topics.count(name) if name is not None else 0
        error = 0 if n else (UNKNOWN_TOPIC if name is not None else UNKNOWN_TOPIC_ID)
        t = {"error_code": error, "name": name, "partitions": [
            {"error_code": 0, "partition_index": i, "leader_id": NODE_ID, "replica_nodes": [NODE_ID],
             "isr_nodes": [NODE_ID], **({"leader_epoch": 0} if v >= 7 else {}),
             **({"offline_replicas": []} if v >= 5 else {})} for i in range(n)]}
        if v >= 1:
            t["is_internal"] = False
        if v >= 10:
            t["topic_id"] = topic_id(name) if n else None
        topics.append(t)
    broker = {"node_id": NODE_ID, "host": b.advertised_host, "port": b.port}
    if v >= 1:
        broker["rack"] = None
    out = {"brokers": [broker], "topics": topics}
    if v >= 1:
        out["controller_id"] = NODE_ID
    if v >= 2:
        out["cluster_id"] = CLUSTER_ID
    if v >= 3:
        out["throttle_time_ms"] = 0
    b.respond(ctx, out)


def find_coordinator(b, ctx, body):
    v = ctx.version
    me = {"node_id": NODE_ID, "host": b.advertised_host, "port": b.port}
    if v >= 4:
        out = {"throttle_time_ms": 0, "coordinators": [
            {"key": k, **me, "error_code": 0, "error_message": None} for k in body.coordinator_keys or ()]}
    else:
        out = {"error_code": 0, **me}
        if v >= 1:
            out["throttle_time_ms"], out["error_message"] = 0, None
    b.respond(ctx, out)


def produce(b, ctx, body):
    v = ctx.version
    responses = []
    woke = False
    for t in body.topic_data or ():
        parts = []
        for p in t.partition_data or ():
            log = b.topics.get(t.name, p.index)
            r = {"index": p.index, "error_code": 0, "base_offset": -1, "log_append_time_ms": -1}
            if v >= 5:
                r["log_start_offset"] = 0
            if log is None:
                r["error_code"] = UNKNOWN_TOPIC
            else:
                try:
                    r["base_offset"] = log.append(p.records or b"")
                    woke = True
                except BadRequest:
                    r["error_code"] = error_code("CORRUPT_MESSAGE")
            parts.append(r)
        responses.append({"name": t.name, "partition_responses": parts})
    if woke:
        b.wake_fetches()
    if body.acks == 0:
        b.no_response(ctx)
        return
    b.respond(ctx, {"responses": responses, "throttle_time_ms": 0})


def _fetch_answer(b, v, body):
    """(fields, bytes found) of a fetch answered now."""
    budget = body.max_bytes if v >= 3 and body.max_bytes not in (None,) else 0x7FFFFFFF
    found = 0
    responses = []
    for t in body.topics or ():
        parts = []
        for p in t.partitions or ():
            log = b.topics.get(t.topic, p.partition)
            r = {"partition_index": p.partition, "error_code": 0, "high_watermark": -1,
                 "last_stable_offset": -1, "aborted_transactions": None, "records": b""}
            if v >= 5:
                r["log_start_offset"] = -1
            if v >= 11:
                r["preferred_read_replica"] = -1
            if log is None:
                r["error_code"] = UNKNOWN_TOPIC
            elif p.fetch_offset < 0 or p.fetch_offset > log.end_offset:
                r["error_code"] = error_code("OFFSET_OUT_OF_RANGE")
                r["high_watermark"] = r["last_stable_offset"] = log.end_offset
                if v >= 5:
                    r["log_start_offset"] = 0
            else:
                data = log.read(p.fetch_offset, min(p.partition_max_bytes, max(budget, 1)))
                if found and len(data) > budget:
                    data = b""
                budget -= len(data)
                found += len(data)
                r["high_watermark"] = r["last_stable_offset"] = log.end_offset
                if v >= 5:
                    r["log_start_offset"] = 0
                r["records"] = data
            parts.append(r)
        responses.append({"topic": t.topic, "partitions": parts})
    out = {"throttle_time_ms": 0, "responses": responses}
    if v >= 7:
        out["error_code"], out["session_id"] = 0, 0      # no fetch sessions: every fetch is a full fetch
    return out, found


def fetch(b, ctx, body):
    v = ctx.version
    out, found = _fetch_answer(b, v, body)
    wait = body.max_wait_ms or 0
    if found >= max(body.min_bytes or 0, 1) or wait <= 0:
        b.respond(ctx, out)
        return
    b.park_fetch(ctx, wait, lambda: _fetch_answer(b, v, body)[0])


def list_offsets(b, ctx, body):
    v = ctx.version
    topics = []
    for t in body.topics or ():
        parts = []
        for p in t.partitions or ():
            log = b.topics.get(t.name, p.partition_index)
            r = {"partition_index": p.partition_index, "error_code": 0, "timestamp": -1, "offset": -1}
            if v >= 4:
                r["leader_epoch"] = 0
            if log is None:
                r["error_code"] = UNKNOWN_TOPIC
            elif p.timestamp == -2:          # EARLIEST
                r["offset"] = 0
            else:                            # LATEST, and any timestamp: the end (no time index here)
                r["offset"] = log.end_offset
            parts.append(r)
        topics.append({"name": t.name, "partitions": parts})
    out = {"topics": topics}
    if v >= 2:
        out["throttle_time_ms"] = 0
    b.respond(ctx, out)


def init_producer_id(b, ctx, body):
    """Idempotent producers (no transactions): a fresh producer id, epoch 0."""
    if body.transactional_id is not None:
        b.respond(ctx, {"throttle_time_ms": 0, "error_code": error_code("TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
                        "producer_id": -1, "producer_epoch": -1})
        return
    b.producer_ids += 1
    b.respond(ctx, {"throttle_time_ms": 0, "error_code": 0, "producer_id": b.producer_ids, "producer_epoch": 0})


HANDLERS = {"InitProducerId": init_producer_id, "ApiVersions": api_versions, "Metadata": metadata, "FindCoordinator": find_coordinator,
            "Produce": produce, "Fetch": fetch, "ListOffsets": list_offsets}
