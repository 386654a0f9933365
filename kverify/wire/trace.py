"""Every request and response the broker sees, as events: a JSON-lines file and in-process listeners.

An event is a dict (one line of `--trace FILE`):
`seq, clock_ms, dir ("in"|"out"|"open"|"close"|"fault"|"clock"|"start"), conn, peer, api, api_key,
version, corr, client_id, body`; "start" (first event) has body {"config": CoordinatorConfig fields,
"behaviours", "topics", "port", "seed", "clock"}; "clock" has body {"advance": ms} for every
`GroupCoordinator.advance` the broker makes (`clock_ms` = the clock after it) (+ `fault` on fault events, + `decoded` for consumer-protocol JoinGroup metadata and
SyncGroup assignments: {member_id or "assignment": {"topics": {topic: [partitions]}}}).
Listeners (`Tracer.listeners`, callables taking the event) run on the broker's thread, in event order.
Bodies are only rendered when someone listens (file or listener), so an untraced broker pays nothing.
"""
from __future__ import annotations

import json

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kverify.wire.codec import to_json


def decode_assignment(data):
    """{topic: [partitions]} of ConsumerProtocolAssignment bytes, or None when they are not one."""
    if not data:
        return {}
    try:
        a = ConsumerProtocolAssignment.decode(bytes(data))
        out = {}
        for tp in a.assigned_partitions or ():
            out.setdefault(tp.topic, []).extend(tp.partitions)
        return {t: sorted(ps) for t, ps in sorted(out.items())}
    except Exception:  # noqa: BLE001 - foreign bytes: not decoded
        return None


def decode_subscription(data):
    """{"topics": [...], "owned": {topic: [partitions]}, "generation": n} or None."""
    try:
        s = ConsumerProtocolSubscription.decode(bytes(data))
        owned = {}
        for tp in s.owned_partitions or ():
            owned.setdefault(tp.topic, []).extend(tp.partitions)
        return {"topics": list(s.topics or ()), "owned": {t: sorted(p) for t, p in sorted(owned.items())},
                "generation": s.generation_id if s.generation_id is not None else -1}
    except Exception:  # noqa: BLE001
        return None


def _decoded(api: str, body) -> dict | None:
    """Consumer-protocol payloads of JoinGroup/SyncGroup messages, decoded for the online checks."""
    if api == "SyncGroup":
        if hasattr(body, "assignments"):          # request (the leader's assignment)
            return {a.member_id: decode_assignment(a.assignment) for a in body.assignments or ()} or None
        return {"assignment": decode_assignment(body.assignment)}
    if api == "JoinGroup":
        if hasattr(body, "protocols"):
            return {p.name: decode_subscription(p.metadata) for p in body.protocols or ()} or None
        return {m.member_id: decode_subscription(m.metadata) for m in body.members or ()} or None
    return None


class Tracer:
    def __init__(self, path=None):
        self.listeners: list = []
        self._file = open(path, "w", encoding="utf-8") if path else None
        self.seq = 0

    @property
    def active(self) -> bool:
        return bool(self._file is not None or self.listeners)

    def emit(self, clock_ms, direction, conn, peer, api=None, api_key=None, version=None, corr=None,
             client_id=None, body=None, fault=None):
        listeners, file = self.listeners, self._file
        if file is None and not listeners:
            return
        self.seq += 1
        event = {"seq": self.seq, "clock_ms": clock_ms, "dir": direction, "conn": conn, "peer": peer,
                 "api": api, "api_key": api_key, "version": version, "corr": corr, "client_id": client_id,
                 "body": None}
        if body is not None:
            if isinstance(body, dict):
                event["body"] = body
            else:
                event["body"] = to_json(body)
                if api == "SyncGroup" or api == "JoinGroup":
                    dec = _decoded(api, body)
                    if dec is not None:
                        event["decoded"] = dec
        if fault is not None:
            event["fault"] = fault
        if file is not None:
            file.write(json.dumps(event, separators=(",", ":")) + "\n")
        for fn in tuple(listeners):
            fn(event)

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None
