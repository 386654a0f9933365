"""Coordinator conformance scenarios (coordinator-scenarios.md) driven over the Kafka wire protocol.

Why a second adapter and not a second runner: `kverify.conformance.runner` already executes the
steps, resolves references and checks every expectation; it talks to an *adapter*. This module is the
adapter for a broker reached over TCP (`WireAdapter`), plus the static test deciding which scenarios
can run over the wire at all (`not_runnable`).

How the format maps onto a broker:
* requests become real Kafka requests (kafka-python's classes, `kverify.wire.client`), each on a
  connection with nothing in flight (a broker answers one request per connection at a time, and a
  JoinGroup/SyncGroup may stay parked); the header client id is the step's `client_id`;
* every group id gets a per-run, per-scenario prefix (scenarios share the broker) whose Java hash is
  0, so the renamed group hashes exactly like the original and maps to the same `__consumer_offsets`
  partition; responses are mapped back (ListGroups shows only the scenario's own groups);
* `advance` is kverify broker's control request (`{"op": "advance"}`, kverify/wire/control.py) when
  the broker answers it; against any other broker it is a wait of that many milliseconds;
* whether a parked response is "not delivered yet": against kverify broker, the control answer's
  `handled` counter says every request sent so far was handled (a barrier; so the run must be the
  broker's only client); elsewhere the adapter waits `settle` seconds for an answer;
* `expect_group` is answered from DescribeGroups when it asks only for what that API shows (state and
  member ids); everything else the format reaches through coordinator internals (create_group,
  force_transition, partition loading, log append errors, exceptions, pending/new/static member
  introspection, DeleteGroups with a null id, ...) makes the scenario "not runnable over the wire".
"""
from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Optional

from kafka.protocol.admin.groups import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer.group import (HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
                                           OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
                                           SyncGroupRequest)

from kverify.conformance.format import CONFIG_KEYS
from kverify.impl.coordinator.partition import java_string_hash
from kverify.wire import control as wire_control
from kverify.wire.client import WireClient, WireError, error_name

# the configuration a broker must run with for the scenarios (the format's §2 values)
STANDARD_CONFIG = {k: v for k, (v, _kind) in CONFIG_KEYS.items() if k != "group_partitions"}
# expect_group fields DescribeGroups answers (state, and the member list: pending members are not in it)
DESCRIBABLE = frozenset({"exists", "state", "member_count", "member_ids", "has_members", "lacks_members", "dynamic_member_ids",
                         "dynamic_member_count", "static_instance_ids", "has_static_instances",
                         "lacks_static_instances"})
INTERNAL_OPS = {"create_group": "create_group (coordinator internals)",
                "force_transition": "force_transition (coordinator internals)",
                "force_prepare_rebalance": "force_prepare_rebalance (coordinator internals)",
                "set_partition_loading": "set_partition_loading (offsets partition loading)",
                "complete_partition_load": "complete_partition_load (offsets partition loading)",
                "delete_partitions": "delete_partitions (topic deletion inside the broker)"}
API_OF = {"join": JoinGroupRequest, "sync": SyncGroupRequest, "heartbeat": HeartbeatRequest,
          "leave": LeaveGroupRequest, "commit": OffsetCommitRequest, "fetch_offsets": OffsetFetchRequest,
          "describe": DescribeGroupsRequest, "list_groups": ListGroupsRequest,
          "delete_groups": DeleteGroupsRequest, "delete_offsets": OffsetDeleteRequest}


def broker_coordinator_config() -> dict:
    """CoordinatorConfig keyword arguments a kverify broker needs to run the scenarios."""
    c = dict(STANDARD_CONFIG)
    c["owned_partitions"] = tuple(c["owned_partitions"])
    c["loading_partitions"] = tuple(c["loading_partitions"])
    return c


def _flat(steps):
    for st in steps:
        yield st
        for alt in st.get("alternatives", ()):
            yield from _flat(alt)


def not_runnable(sc, offered: Optional[dict] = None, broker_config: Optional[dict] = None) -> Optional[str]:
    """Why scenario `sc` cannot run over the wire (one phrase), or None when it can.
    `offered`: api key -> (min, max) versions the broker advertises (None = not known yet);
    `broker_config`: the broker's coordinator settings (default: the format's standard ones)."""
    have = dict(STANDARD_CONFIG)
    have.update({k: (list(v) if isinstance(v, tuple) else v) for k, v in (broker_config or {}).items() if k in have})
    diff = sorted(k for k in STANDARD_CONFIG if sc.config.get(k) != have[k])
    if diff:
        return "config differs from the broker's (" + ", ".join(f"{k}={sc.config.get(k)!r}" for k in diff) + ")"
    old_joins = {st["as"] for st in _flat(sc.steps) if st["op"] == "join" and _join_version(st) < 7}
    for st in _flat(sc.steps):
        op = st["op"]
        if op == "expect" and st["of"] in old_joins and ({"protocol_type", "protocol_name"} & set(st)):
            return ("expects protocol_type/protocol_name of a JoinGroup without require_known_member_id, which only "
                    "JoinGroup v0-3 express and those versions do not carry them")
        if op in INTERNAL_OPS:
            return INTERNAL_OPS[op]
        if op == "commit" and st.get("retention_time_ms", -1) != -1:
            return "commit with retention_time_ms (an OffsetCommit v2-v4 field the wire client does not send)"
        if op == "set_log_append_result" and st["error"] != "NONE":
            return f"set_log_append_result {st['error']} (a mocked log append)"
        if op == "expect" and "raises" in st:
            return "expects an exception thrown inside the coordinator"
        if op == "expect_group":
            extra = sorted(k for k in st if k not in ("op", "group", "implicit") and k not in DESCRIBABLE)
            if extra:
                return f"expect_group {', '.join(extra)} (coordinator introspection)"
        if op in API_OF and offered is not None and API_OF[op].API_KEY not in offered:
            return f"the broker does not offer {API_OF[op].__name__[:-7]}"
        if op == "delete_groups" and any(g is None for g in st.get("groups") or ()):
            return "delete_groups with a null group id (not encodable on the wire)"
        if op == "join" and st.get("instance_id") is None and not st.get("require_known_member_id") \
                and st.get("support_skipping_assignment") is False:
            return "a JoinGroup no wire version expresses (v3 semantics with skipping assignment switched off)"
    return None


def _join_version(f: dict) -> int:
    """The JoinGroup version whose semantics match the step: require_known_member_id is Kafka's v4+ behaviour and
    support_skipping_assignment its v9+ one; a static member (v5+) and a known member id ignore
    require_known_member_id."""
    if f.get("instance_id") is None and not f.get("require_known_member_id") and f.get("member_id") == "":
        return 3
    return 9 if f.get("support_skipping_assignment", True) else 8


def zero_hash_prefix(seed: str) -> str:
    """`seed` + 7 characters from ASCII '0'..'N' such that Java's String.hashCode of the result is 0 (mod 2**32).

    Then `prefix + g` hashes exactly like `g` (h(P + g) = h(P) * 31**len(g) + h(g)), so a renamed group
    lands on the same `__consumer_offsets` partition as the original under ANY partition count and
    any partitionFor variant (math-abs-coordinator included)."""
    h = java_string_hash(seed) & 0xFFFFFFFF
    k = 7
    base = sum(48 * 31 ** j for j in range(k))            # all '0'
    target = (-h * 31 ** k) % (1 << 32)                   # h(suffix) must be this, mod 2**32
    d = (target - base) % (1 << 32)
    digits = []
    for _ in range(k):
        d, r = divmod(d, 31)
        digits.append(r)
    if d:
        raise ValueError("no 7-character suffix")          # cannot happen: 31**7 > 2**32
    return seed + "".join(chr(48 + x) for x in reversed(digits))


def wire_group(original, prefix: str):
    """The per-scenario wire name of a group id (`prefix` from `zero_hash_prefix`); "" and null keep their meaning."""
    if original in ("", None):
        return original
    return prefix + original


class Target:
    """A broker under test: address, whether it is `kverify broker` (control request), run prefix.
    Calling it with (config, behaviours) gives a fresh `WireAdapter` for the next scenario."""

    def __init__(self, host: str, port: int, settle: float = 0.3, timeout: float = 10.0, prefix: Optional[str] = None,
                 broker_config: Optional[dict] = None):
        self.host, self.port, self.settle, self.timeout = host, port, settle, timeout
        self.prefix = prefix if prefix is not None else f"kv{os.getpid()}-{int(time.time()) % 100000}-"
        probe = WireClient(host, port, client_id="kverify-probe", timeout=timeout)
        self.versions = probe.versions
        probe.close()
        self.controlled = self._has_control()
        self.count = 0
        self.sent_total = 0        # requests sent by this target's adapters since `base_handled` was read
        first = self.control({"op": "clock"}) if self.controlled else {}
        # a kverify broker on the wall clock (`--clock real`) moves time by itself: advance by waiting there too
        self.manual = False
        if self.controlled:
            time.sleep(0.12)
            self.manual = self.control({"op": "clock"}).get("clock_ms") == first.get("clock_ms")
            first = self.control({"op": "clock"})
        self.base_handled = first.get("handled")
        # the broker's coordinator settings: as it says in its control answers, else as the caller says
        self.config = first.get("config") or broker_config

    def _has_control(self) -> bool:
        try:
            ans = wire_control.control(self.host, self.port, {"op": "clock"}, timeout=self.timeout)
        except (OSError, RuntimeError, ValueError):
            return False
        return isinstance(ans, dict) and "clock_ms" in ans

    @property
    def clock_mode(self) -> str:
        if self.controlled and self.manual:
            return "control request (kverify broker)"
        return "waits (wall clock" + (", kverify broker --clock real)" if self.controlled else ")")

    def control(self, op: dict) -> dict:
        return wire_control.control(self.host, self.port, op, timeout=self.timeout)

    def __call__(self, config: dict, behaviours=frozenset()):
        self.count += 1
        return WireAdapter(self, zero_hash_prefix(f"{self.prefix}s{self.count}-"), config)


class WireAdapter:
    """The runner's adapter interface (see kverify/conformance/adapter.py) over TCP."""

    def __init__(self, target: Target, prefix: str, config: dict):
        self.t = target
        self.prefix = prefix
        self.delivered, self.raised, self.problems = {}, {}, []
        self._groups = {}          # original -> wire id
        self._back = {}            # wire id -> original
        self._conns = []           # WireClient
        self._busy = {}            # WireClient -> (cid, label) in flight
        self._kind = {}            # label -> op
        self.sent = 0

    # ---- group renaming
    def g(self, original):
        if original in ("", None):
            return original
        if original not in self._groups:
            w = wire_group(original, self.prefix)
            self._groups[original], self._back[w] = w, original
        return self._groups[original]

    def back(self, wire_id):
        return self._back.get(wire_id, wire_id)

    # ---- connections
    def _conn(self, client_id: str) -> WireClient:
        for c in self._conns:
            if c not in self._busy and c.client_id == client_id and not c.closed:
                return c
        c = WireClient(self.t.host, self.t.port, client_id=client_id, timeout=self.t.timeout, negotiate=False)
        c.versions = self.t.versions
        self._conns.append(c)
        return c

    # ---- requests
    def send(self, label: str, op: str, f: dict) -> None:
        self._kind[label] = op
        client_id = f.get("client_id") or "clientId"
        conn = self._conn(client_id)
        msg = self._message(conn, op, f)
        cid = conn.send(msg)
        self._busy[conn] = (cid, label)
        self._sent(1)
        self._settle()

    def _sent(self, n: int) -> None:
        self.sent += n
        self.t.sent_total += n

    def advance(self, ms: int) -> None:
        if self.t.controlled and self.t.manual:
            self.t.control({"op": "advance", "ms": int(ms)})
        else:
            time.sleep(ms / 1000.0)
        self._settle(after_advance=True)

    def _settle(self, after_advance: bool = False) -> None:
        """Collect every answer the broker has produced so far."""
        if self.t.controlled:
            deadline = time.monotonic() + self.t.timeout
            while True:
                ans = self.t.control({"op": "clock"})
                handled = ans.get("handled")
                if handled is None or self.t.base_handled is None:
                    self._poll(self.t.settle)       # a broker without the barrier counter
                    return
                if handled >= self.t.sent_total + self.t.base_handled:
                    break
                if time.monotonic() > deadline:
                    raise WireError(f"broker handled {handled} requests, {self.t.sent_total} sent")
                self._poll(0.002)
            self._poll(0.002)
            self._poll(0.0)
        else:
            self._poll(self.t.settle)

    def _poll(self, timeout: float) -> None:
        waiting = [c for c in self._busy]
        if not waiting:
            return
        end = time.monotonic() + timeout
        while True:
            for c in list(self._busy):
                for cid, resp in c.poll(0):
                    want, label = self._busy.get(c, (None, None))
                    if cid == want:
                        del self._busy[c]
                        self._deliver(label, resp)
                        c.answers.pop(cid, None)
                if c.closed and c in self._busy:
                    cid, label = self._busy.pop(c)
                    self.problems.append(f"broker closed the connection of {label}")
            if time.monotonic() >= end or not self._busy:
                return
            time.sleep(0.001)

    def _deliver(self, label: str, resp) -> None:
        if label in self.delivered:
            self.problems.append(f"response {label} delivered twice")
            return
        self.delivered[label] = self._normalize(self._kind[label], resp)

    # ---- unsupported setup hooks (the scenario is filtered out by `not_runnable` before)
    def set_log_append_result(self, error: str) -> None:
        if error != "NONE":
            raise WireError("set_log_append_result is not runnable over the wire")

    def _internal(self, *_a, **_k):
        raise WireError("coordinator internals are not reachable over the wire")

    create_group = force_transition = force_prepare_rebalance = _internal
    set_partition_loading = complete_partition_load = _internal

    def group(self, group_id):
        """A view good enough for the DescribeGroups-answerable expect_group fields."""
        conn = self._conn("kverify-describe")
        msg = conn.build(DescribeGroupsRequest, groups=[self.g(group_id)], include_authorized_operations=False)
        cid = conn.send(msg)
        self._sent(1)
        resp = conn.wait(cid, self.t.timeout)
        d = resp.groups[0]
        if d.group_state == "Dead" and not d.members:
            return None
        members = {m.member_id: SimpleNamespace(group_instance_id=m.group_instance_id, is_new=False)
                   for m in d.members}
        static = {m.group_instance_id: m.member_id for m in d.members if m.group_instance_id is not None}
        return SimpleNamespace(state=d.group_state, members=members, static_members=static, pending_members=(),
                               generation_id=None, leader_id=None)

    def close(self) -> None:
        for c in self._conns:
            c.close()

    # ---- format fields -> kafka-python messages
    def _message(self, conn: WireClient, op: str, f: dict):
        g = self.g(f.get("group"))
        if op == "join":
            return conn.build(JoinGroupRequest, _join_version(f), group_id=g,
                              session_timeout_ms=f["session_timeout_ms"], rebalance_timeout_ms=f["rebalance_timeout_ms"],
                              member_id=f["member_id"], group_instance_id=f["instance_id"],
                              protocol_type=f["protocol_type"],
                              protocols=[{"name": n, "metadata": bytes.fromhex(md)} for n, md in f["protocols"]])
        if op == "sync":
            return conn.build(SyncGroupRequest, group_id=g, generation_id=f["generation"], member_id=f["member_id"],
                              group_instance_id=f["instance_id"], protocol_type=f["protocol_type"],
                              protocol_name=f["protocol_name"],
                              assignments=[{"member_id": m, "assignment": bytes.fromhex(a or "")}
                                           for m, a in f["assignment"].items()])
        if op == "heartbeat":
            return conn.build(HeartbeatRequest, group_id=g, generation_id=f["generation"], member_id=f["member_id"],
                              group_instance_id=f["instance_id"])
        if op == "leave":
            return conn.build(LeaveGroupRequest, group_id=g, members=[
                {"member_id": m["member_id"], "group_instance_id": m.get("instance_id")} for m in f["members"]])
        if op == "commit":
            topics = {}
            for tp, o in f["offsets"].items():
                t, _, p = tp.rpartition("-")
                epoch = o.get("leader_epoch")
                topics.setdefault(t, []).append({"partition_index": int(p), "committed_offset": o["offset"],
                                                 "committed_leader_epoch": -1 if epoch is None else epoch,
                                                 "committed_metadata": o.get("metadata", "")})
            return conn.build(OffsetCommitRequest, group_id=g, generation_id_or_member_epoch=f["generation"],
                              member_id=f["member_id"], group_instance_id=f["instance_id"],
                              topics=[{"name": t, "partitions": ps} for t, ps in topics.items()])
        if op == "fetch_offsets":
            topics = None
            if f["partitions"] is not None:
                by = {}
                for tp in f["partitions"]:
                    t, _, p = tp.rpartition("-")
                    by.setdefault(t, []).append(int(p))
                topics = [{"name": t, "partition_indexes": ps} for t, ps in by.items()]
            return conn.build(OffsetFetchRequest, group_id=g, topics=topics, require_stable=f["require_stable"])
        if op == "describe":
            return conn.build(DescribeGroupsRequest, groups=[g], include_authorized_operations=False)
        if op == "list_groups":
            return conn.build(ListGroupsRequest, states_filter=list(f["states"]))
        if op == "delete_groups":
            return conn.build(DeleteGroupsRequest, groups_names=[self.g(x) for x in f["groups"]])
        if op == "delete_offsets":
            by = {}
            for tp in f["partitions"]:
                t, _, p = tp.rpartition("-")
                by.setdefault(t, []).append({"partition_index": int(p)})
            return conn.build(OffsetDeleteRequest, group_id=g, topics=[{"name": t, "partitions": ps}
                                                                        for t, ps in by.items()])
        raise ValueError(f"unknown request op {op}")

    # ---- kafka-python responses -> the format's dicts (same shape as conformance/adapter.normalize)
    def _normalize(self, kind: str, r) -> dict:
        e = error_name
        if kind == "join":
            return {"error": e(r.error_code), "member_id": r.member_id, "generation_id": r.generation_id,
                    "protocol_type": getattr(r, "protocol_type", None) if r.version >= 7 else None,
                    "protocol_name": r.protocol_name if (r.version >= 7 or r.protocol_name) else None,
                    "leader_id": r.leader, "skip_assignment": bool(getattr(r, "skip_assignment", False) or False),
                    "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                                 "metadata": bytes(m.metadata or b"").hex()} for m in r.members or ()]}
        if kind == "sync":
            return {"error": e(r.error_code), "protocol_type": r.protocol_type, "protocol_name": r.protocol_name,
                    "assignment": bytes(r.assignment or b"").hex()}
        if kind == "heartbeat":
            return {"error": e(r.error_code)}
        if kind == "leave":
            return {"error": e(r.error_code), "members": [
                {"member_id": m.member_id, "instance_id": m.group_instance_id, "error": e(m.error_code)}
                for m in r.members or ()]}
        if kind == "commit":
            return {"partition_errors": {f"{t.name}-{p.partition_index}": e(p.error_code)
                                         for t in r.topics or () for p in t.partitions or ()}}
        if kind == "fetch_offsets":
            return {"error": e(r.error_code), "partitions": {
                f"{t.name}-{p.partition_index}": {
                    "offset": p.committed_offset,
                    "leader_epoch": None if p.committed_leader_epoch in (None, -1) else p.committed_leader_epoch,
                    "metadata": p.metadata, "error": e(p.error_code)}
                for t in r.topics or () for p in t.partitions or ()}}
        if kind == "describe":
            d = r.groups[0]
            return {"error": e(d.error_code), "state": d.group_state, "protocol_type": d.protocol_type,
                    "protocol": d.protocol_data,
                    "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                                 "client_id": m.client_id, "client_host": m.client_host,
                                 "metadata": bytes(m.member_metadata or b"").hex(),
                                 "assignment": bytes(m.member_assignment or b"").hex()} for m in d.members or ()]}
        if kind == "list_groups":
            mine = [g for g in r.groups or () if g.group_id in self._back]
            return {"error": e(r.error_code),
                    "groups": [[self.back(g.group_id), g.protocol_type, g.group_state] for g in mine]}
        if kind == "delete_groups":
            return {"results": [[self.back(x.group_id), e(x.error_code)] for x in r.results or ()]}
        if kind == "delete_offsets":
            return {"error": e(r.error_code), "partition_errors": {} if r.error_code else {
                f"{t.name}-{p.partition_index}": e(p.error_code) for t in r.topics or () for p in t.partitions or ()}}
        raise ValueError(f"unknown response kind {kind}")

