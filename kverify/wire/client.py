"""A small synchronous Kafka protocol client for tests, conformance runs over the wire and benchmarks.

Why it exists: the real client libraries hide the requests they send (they heartbeat, rejoin and
commit on their own schedule); conformance scenarios, bad-input tests and the benchmark need to send
exactly one chosen request at a chosen version and see exactly its answer. Every Kafka message is
encoded and decoded with kafka-python 3.x's message classes (`kafka.protocol`, generated from Kafka's
JSON schemas) and its framing parser (`kafka.protocol.parser.KafkaProtocol`); this module adds only
sockets, version negotiation, consumer-protocol payloads and a scripted group member. No codec is
hand-written here; kverify broker's clock-control request (not a Kafka API) lives in
kverify/wire/control.py with the broker.
"""
from __future__ import annotations

import select
import socket
import time
from typing import Any, Optional

from kafka.protocol.admin.groups import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer.group import (HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
                                           OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
                                           SyncGroupRequest)
from kafka.protocol.metadata import ApiVersionsRequest, FindCoordinatorRequest, MetadataRequest
from kafka.protocol.parser import KafkaProtocol

from kverify.wire.codec import ERROR_NAMES, build, error_code, to_json  # noqa: F401  (the server's tables)

# The highest version of each API this client speaks by default: below the versions that switch to
# topic ids (OffsetCommit/OffsetFetch v10) or batched groups (OffsetFetch v8), which the scenario
# format cannot express. Callers can ask for any other version explicitly.
PREFERRED = {
    ApiVersionsRequest: 3, MetadataRequest: 9, FindCoordinatorRequest: 3, JoinGroupRequest: 9,
    SyncGroupRequest: 5, HeartbeatRequest: 4, LeaveGroupRequest: 5, OffsetCommitRequest: 8,
    OffsetFetchRequest: 7, DescribeGroupsRequest: 5, ListGroupsRequest: 4, DeleteGroupsRequest: 2,
    OffsetDeleteRequest: 0,
}


class WireError(Exception):
    """The connection failed, closed, or the broker did not answer in time."""


def error_name(code: int) -> str:
    """Kafka error code -> the `Errors` enum name the rest of kverify uses ("NONE" for 0)."""
    return ERROR_NAMES.get(code, f"UNKNOWN_CODE_{code}")


def message(cls, version: int, **fields):
    """A kafka-python message at `version`; nested structs may be given as dicts (the server's `codec.build`)."""
    return build(cls, version, fields)


def plain(msg) -> Any:
    """A decoded message -> JSON-ready dicts (bytes as hex, kafka-python field names): the trace's `to_json`."""
    return to_json(msg)


class WireClient:
    """One TCP connection to a broker; requests may be pipelined, answers are matched by correlation id."""

    def __init__(self, host: str, port: int, client_id: str = "kverify", timeout: float = 5.0,
                 negotiate: bool = True):
        self.host, self.port, self.client_id, self.timeout = host, port, client_id, timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.proto = KafkaProtocol(client_id=client_id)
        self.answers: dict[int, Any] = {}     # correlation id -> decoded response (not yet taken)
        self.closed = False
        self.versions: dict[int, tuple[int, int]] = {}   # api key -> (min, max) advertised by the broker
        if negotiate:
            self.negotiate()

    # ---- versions
    def negotiate(self) -> dict:
        """ApiVersions at the highest version both sides know (retrying at v0 on UNSUPPORTED_VERSION)."""
        resp = self.call(message(ApiVersionsRequest, 3, client_software_name="kverify",
                                 client_software_version="1"))
        if resp.error_code == 35:   # UNSUPPORTED_VERSION: the broker answers with v0 and its range
            resp = self.call(message(ApiVersionsRequest, 0))
        if resp.error_code:
            raise WireError(f"ApiVersions failed: {error_name(resp.error_code)}")
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
        return self.versions

    def version(self, cls, want: Optional[int] = None) -> int:
        """The version to send `cls` at: `want` (default PREFERRED) capped by the broker's and the library's maximum."""
        top = min(cls.max_version, PREFERRED.get(cls, cls.max_version) if want is None else want)
        if self.versions:
            rng = self.versions.get(cls.API_KEY)
            if rng is None:
                raise WireError(f"the broker does not offer {cls.__name__[:-7]} (api key {cls.API_KEY})")
            top = min(top, rng[1])
            if top < rng[0]:
                raise WireError(f"no common version of {cls.__name__[:-7]}: broker {rng}, wanted <= {want}")
        return top

    def build(self, cls, want: Optional[int] = None, **fields):
        return message(cls, self.version(cls, want), **fields)

    # ---- sending and receiving
    def send(self, msg) -> int:
        """Queue and write one request; returns its correlation id (the answer arrives via `poll`/`wait`)."""
        cid = self.proto.send_request(msg)
        self.send_raw(self.proto.send_bytes())
        return cid

    def send_raw(self, data: bytes) -> None:
        if self.closed:
            raise WireError("connection closed")
        view = memoryview(bytes(data))
        deadline = time.monotonic() + self.timeout
        while view:
            try:
                n = self.sock.send(view)
                view = view[n:]
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise WireError("send timed out") from None
                select.select([], [self.sock], [], 0.05)
            except OSError as exc:
                self.closed = True
                raise WireError(f"send failed: {exc}") from None

    def poll(self, timeout: float = 0.0) -> list:
        """Read what has arrived within `timeout` seconds; returns [(cid, response)] decoded now."""
        if self.closed:
            return []
        got = []
        ready, _, _ = select.select([self.sock], [], [], timeout)
        while ready:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            for cid, resp in self.proto.receive_bytes(data):
                self.answers[cid] = resp
                got.append((cid, resp))
            ready, _, _ = select.select([self.sock], [], [], 0)
        return got

    def wait(self, cid: int, timeout: Optional[float] = None):
        """Block until the answer to `cid` arrives (WireError on close or timeout)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while cid not in self.answers:
            left = deadline - time.monotonic()
            if self.closed:
                raise WireError(f"connection closed before the answer to correlation id {cid}")
            if left <= 0:
                raise WireError(f"no answer to correlation id {cid} within {timeout or self.timeout}s")
            self.poll(min(left, 0.5))
        return self.answers.pop(cid)

    def take(self, cid: int):
        """The answer to `cid` if it has arrived (removing it), else None."""
        return self.answers.pop(cid, None)

    def call(self, msg, timeout: Optional[float] = None):
        return self.wait(self.send(msg), timeout)

    def recv_closed(self, timeout: float = 2.0) -> bool:
        """True if the broker closes this connection within `timeout` (raw bytes read are dropped)."""
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            ready, _, _ = select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                try:
                    if not self.sock.recv(1 << 16):
                        self.closed = True
                except BlockingIOError:
                    pass
                except OSError:
                    self.closed = True
        return self.closed

    def close(self) -> None:
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- consumer-protocol payloads and a scripted group member (tests, benchmarks) --------------------
def subscription_bytes(topics, owned=(), version: int = 1) -> bytes:
    """ConsumerProtocolSubscription bytes (kafka-python's class): topics and owned [(topic, partition)]."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    by = {}
    for t, p in sorted(owned):
        by.setdefault(t, []).append(p)
    fields = {"topics": list(topics), "user_data": None}
    if version >= 1:
        fields["owned_partitions"] = [{"topic": t, "partitions": ps} for t, ps in by.items()]
    return bytes(build(ConsumerProtocolSubscription, version, fields).encode())


def assignment_bytes(partitions, version: int = 1) -> bytes:
    """ConsumerProtocolAssignment bytes for [(topic, partition)]."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    by = {}
    for t, p in sorted(partitions):
        by.setdefault(t, []).append(p)
    return bytes(build(ConsumerProtocolAssignment, version, {
        "assigned_partitions": [{"topic": t, "partitions": ps} for t, ps in by.items()], "user_data": None}).encode())


class GroupMember:
    """One consumer-group member driven request by request over its own connection (no background threads).

    Joins and syncs may be parked by the coordinator, so each is split into `send_*` (returns the
    correlation id) and `finish_*` (waits for the answer and records it)."""

    def __init__(self, client: WireClient, group: str, topics=("t0",), session_timeout_ms: int = 10000,
                 rebalance_timeout_ms: int = 10000, instance_id: Optional[str] = None):
        self.c, self.group, self.topics = client, group, tuple(topics)
        self.session_timeout_ms, self.rebalance_timeout_ms = session_timeout_ms, rebalance_timeout_ms
        self.instance_id = instance_id
        self.member_id, self.generation, self.leader = "", -1, ""
        self.members: list = []            # (member_id, metadata) when leader
        self.owned: list = []              # [(topic, partition)] from the last SyncGroup answer

    def send_join(self, owned=()) -> int:
        """JoinGroup; a MEMBER_ID_REQUIRED answer is handled here (rejoin with the given id)."""
        while True:
            cid = self.c.send(self.c.build(
                JoinGroupRequest, group_id=self.group, session_timeout_ms=self.session_timeout_ms,
                rebalance_timeout_ms=self.rebalance_timeout_ms, member_id=self.member_id,
                group_instance_id=self.instance_id, protocol_type="consumer",
                protocols=[{"name": "range", "metadata": subscription_bytes(self.topics, owned)}]))
            if self.member_id or self.instance_id:
                return cid
            r = self.c.wait(cid)
            if error_name(r.error_code) != "MEMBER_ID_REQUIRED":
                self.c.answers[cid] = r
                return cid
            self.member_id = r.member_id

    def finish_join(self, cid: int, timeout: Optional[float] = None):
        r = self.c.wait(cid, timeout)
        if error_name(r.error_code) == "NONE":
            self.member_id, self.generation, self.leader = r.member_id, r.generation_id, r.leader
            self.members = [(m.member_id, bytes(m.metadata or b"")) for m in r.members or ()]
        return r

    def send_sync(self, assignment: Optional[dict] = None) -> int:
        """SyncGroup; `assignment` = {member_id: [(topic, partition)]} when this member is the leader."""
        return self.c.send(self.c.build(
            SyncGroupRequest, group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=self.instance_id, protocol_type="consumer", protocol_name="range",
            assignments=[{"member_id": m, "assignment": assignment_bytes(ps)} for m, ps in (assignment or {}).items()]))

    def finish_sync(self, cid: int, timeout: Optional[float] = None):
        from kverify.wire.trace import decode_assignment

        r = self.c.wait(cid, timeout)
        if error_name(r.error_code) == "NONE":
            dec = decode_assignment(bytes(r.assignment or b"")) or {}
            self.owned = sorted((t, p) for t, ps in dec.items() for p in ps)
        return r

    def heartbeat(self) -> str:
        r = self.c.call(self.c.build(HeartbeatRequest, group_id=self.group, generation_id=self.generation,
                                     member_id=self.member_id, group_instance_id=self.instance_id))
        return error_name(r.error_code)

    def commit(self, offsets: dict, generation: Optional[int] = None) -> dict:
        """offsets {(topic, partition): offset} -> {(topic, partition): error name}."""
        by = {}
        for (t, p), o in sorted(offsets.items()):
            by.setdefault(t, []).append({"partition_index": p, "committed_offset": o, "committed_metadata": ""})
        r = self.c.call(self.c.build(
            OffsetCommitRequest, group_id=self.group,
            generation_id_or_member_epoch=self.generation if generation is None else generation,
            member_id=self.member_id, group_instance_id=self.instance_id,
            topics=[{"name": t, "partitions": ps} for t, ps in by.items()]))
        return {(t.name, p.partition_index): error_name(p.error_code) for t in r.topics for p in t.partitions}

    def fetch(self, partitions) -> None:
        """A Fetch request for [(topic, partition)] at offset 0 (the answer is read and dropped)."""
        from kafka.protocol.consumer.fetch import FetchRequest

        by = {}
        for t, p in sorted(partitions):
            by.setdefault(t, []).append({"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 16})
        self.c.call(self.c.build(FetchRequest, 11, replica_id=-1, max_wait_ms=0, min_bytes=0,
                                 topics=[{"topic": t, "partitions": ps} for t, ps in by.items()]))
