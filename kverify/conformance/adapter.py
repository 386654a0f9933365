"""Maps the scenario format onto the reference coordinator's API (`kverify.impl.coordinator`).

Why a separate layer: the format speaks Kafka test vocabulary (hex bytes, `"topic-0"` strings,
labels), the coordinator speaks `messages.py` values and correlation ids. The adapter builds the
requests, records every response when the coordinator delivers it (immediately, during a later
request, or during `advance`), detects double deliveries, sets the mocked `__consumer_offsets`
append result (sticky, synchronous: the coordinator's own hook) and exposes the setup/introspection
hooks the optional features need. Responses are handed to the checks as plain dicts with the format's field names.
"""
from __future__ import annotations

from kverify.impl.coordinator import messages as M


def _hex(b) -> str:
    return bytes(b or b"").hex()


def _tp(text: str) -> M.TopicPartition:
    return M.TopicPartition.parse(text)


def normalize(kind: str, resp) -> dict:
    """A coordinator response -> dict with the format's field names (bytes as hex, partitions as text)."""
    if kind == "join":
        return {"error": resp.error, "member_id": resp.member_id, "generation_id": resp.generation_id,
                "protocol_type": resp.protocol_type, "protocol_name": resp.protocol_name,
                "leader_id": resp.leader_id, "skip_assignment": bool(resp.skip_assignment),
                "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                             "metadata": _hex(m.metadata)} for m in resp.members]}
    if kind == "sync":
        return {"error": resp.error, "protocol_type": resp.protocol_type, "protocol_name": resp.protocol_name,
                "assignment": _hex(resp.assignment)}
    if kind == "heartbeat":
        return {"error": resp.error}
    if kind == "leave":
        return {"error": resp.error, "members": [{"member_id": m.member_id, "instance_id": m.group_instance_id,
                                                  "error": m.error} for m in resp.members]}
    if kind == "commit":
        return {"partition_errors": {str(tp): e for tp, e in resp.partition_errors}}
    if kind == "fetch_offsets":
        return {"error": resp.error,
                "partitions": {str(p.partition): {"offset": p.offset, "leader_epoch": p.leader_epoch,
                                                  "metadata": p.metadata, "error": p.error}
                               for p in resp.partitions}}
    if kind == "describe":
        return {"error": resp.error, "state": resp.state, "protocol_type": resp.protocol_type,
                "protocol": resp.protocol,
                "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                             "client_id": m.client_id, "client_host": m.client_host,
                             "metadata": _hex(m.metadata), "assignment": _hex(m.assignment)} for m in resp.members]}
    if kind == "list_groups":
        return {"error": resp.error, "groups": [list(g) for g in resp.groups]}
    if kind == "delete_groups":
        # a list of pairs, not a dict: the null group id is a legal key here (results_null_key)
        return {"results": [[g, e] for g, e in resp.results]}
    if kind == "delete_offsets":
        return {"error": resp.error, "partition_errors": {str(tp): e for tp, e in resp.partition_errors}}
    raise ValueError(f"unknown response kind {kind}")


def as_received(value):
    """A request's fields as a broker holds them: decoded from the request's bytes. A reference resolves to the
    very string object the coordinator answered (a generated member id); a broker never gets that object back,
    only an equal string, so the coordinator must compare ids by value (Kafka: `leaderId.contains(memberId)`)."""
    if isinstance(value, str):
        return value.encode("utf-8").decode("utf-8")
    if isinstance(value, list):
        return [as_received(v) for v in value]
    if isinstance(value, dict):
        return {as_received(k): as_received(v) for k, v in value.items()}
    return value


def build_request(op: str, f: dict, cid: int):
    """A resolved request step -> the coordinator request value."""
    if op == "join":
        return M.JoinGroupRequest(
            group_id=f["group"], member_id=f["member_id"], group_instance_id=f["instance_id"],
            protocol_type=f["protocol_type"], protocols=tuple((n, bytes.fromhex(md)) for n, md in f["protocols"]),
            session_timeout_ms=f["session_timeout_ms"], rebalance_timeout_ms=f["rebalance_timeout_ms"],
            require_known_member_id=f["require_known_member_id"],
            support_skipping_assignment=f["support_skipping_assignment"],
            client_id=f["client_id"], client_host=f["client_host"], correlation_id=cid)
    if op == "sync":
        return M.SyncGroupRequest(
            group_id=f["group"], generation_id=f["generation"], member_id=f["member_id"],
            group_instance_id=f["instance_id"], protocol_type=f["protocol_type"], protocol_name=f["protocol_name"],
            assignments=tuple((m, bytes.fromhex(a or "")) for m, a in f["assignment"].items()), correlation_id=cid)
    if op == "heartbeat":
        return M.HeartbeatRequest(group_id=f["group"], generation_id=f["generation"], member_id=f["member_id"],
                                  group_instance_id=f["instance_id"], correlation_id=cid)
    if op == "leave":
        return M.LeaveGroupRequest(group_id=f["group"], members=tuple(
            M.MemberIdentity(m["member_id"], m.get("instance_id")) for m in f["members"]), correlation_id=cid)
    if op == "commit":
        return M.OffsetCommitRequest(
            group_id=f["group"], generation_id=f["generation"], member_id=f["member_id"],
            group_instance_id=f["instance_id"],
            offsets=tuple((_tp(tp), M.OffsetAndMetadata(o["offset"], o.get("leader_epoch"), o.get("metadata", "")))
                          for tp, o in f["offsets"].items()), retention_time_ms=f.get("retention_time_ms", -1),
            correlation_id=cid)
    if op == "fetch_offsets":
        parts = None if f["partitions"] is None else tuple(_tp(p) for p in f["partitions"])
        return M.OffsetFetchRequest(group_id=f["group"], partitions=parts, require_stable=f["require_stable"],
                                    correlation_id=cid)
    if op == "describe":
        return M.DescribeGroupsRequest(group_id=f["group"], correlation_id=cid)
    if op == "list_groups":
        return M.ListGroupsRequest(states=tuple(f["states"]), correlation_id=cid)
    if op == "delete_groups":
        return M.DeleteGroupsRequest(groups=tuple(f["groups"]), correlation_id=cid)
    if op == "delete_offsets":
        return M.OffsetDeleteRequest(group_id=f["group"], partitions=tuple(_tp(p) for p in f["partitions"]),
                                     correlation_id=cid)
    raise ValueError(f"unknown request op {op}")


class AdapterError(Exception):
    """The coordinator did something the format forbids (double delivery, unknown reply)."""


class CoordinatorAdapter:
    """One coordinator instance driven by one scenario."""

    def __init__(self, config: dict, behaviours=frozenset()):
        from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, IllegalStateError

        # `group_partitions` is NOT pinned into the coordinator: the format layer already checked that
        # it equals Kafka's partitionFor, and leaving the mapping to the coordinator keeps its own
        # partitionFor (and behaviours such as math-abs-coordinator) observable.

        self._illegal = IllegalStateError
        cfg = CoordinatorConfig(
            group_min_session_timeout_ms=config["group_min_session_timeout_ms"],
            group_max_session_timeout_ms=config["group_max_session_timeout_ms"],
            group_initial_rebalance_delay_ms=config["group_initial_rebalance_delay_ms"],
            group_max_size=config["group_max_size"],
            new_member_join_timeout_ms=config["new_member_join_timeout_ms"],
            offsets_partitions=config["offsets_partitions"],
            owned_partitions=tuple(config["owned_partitions"]),
            loading_partitions=tuple(config["loading_partitions"]),
            offsets_expiration_enabled=config["offsets_expiration_enabled"],
            offsets_retention_ms=config["offsets_retention_ms"],
            offsets_retention_check_interval_ms=config["offsets_retention_check_interval_ms"])
        self.coord = GroupCoordinator(cfg, behaviours=frozenset(behaviours), log=None)
        self._next_cid = 1
        self._label_of = {}       # correlation id -> label
        self._kind = {}           # label -> request op
        self.delivered = {}       # label -> normalized response dict
        self.raised = {}          # label -> (exception class name, message)
        self.problems = []        # double deliveries / unknown replies, reported at the next check

    # ---- requests and time
    def send(self, label: str, op: str, fields: dict) -> None:
        cid = self._next_cid
        self._next_cid += 1
        self._label_of[cid] = label
        self._kind[label] = op
        req = build_request(op, as_received(fields), cid)
        try:
            replies = self.coord.handle(req)
        except self._illegal as exc:
            self.raised[label] = ("IllegalStateException", str(exc))
            return
        self._record(replies)

    def advance(self, ms: int) -> None:
        self._record(self.coord.advance(ms))

    def _record(self, replies) -> None:
        for rep in replies or ():
            label = self._label_of.get(rep.correlation_id)
            if label is None:
                self.problems.append(f"reply to unknown correlation id {rep.correlation_id}")
                continue
            if label in self.delivered:
                self.problems.append(f"response {label} delivered twice")
                continue
            self.delivered[label] = normalize(self._kind[label], rep.response)

    # ---- setup hooks (features internal_setup, log_append_error, partition_loading)
    def set_log_append_result(self, error: str) -> None:
        self.coord.internal.set_log_append_result(error)

    def create_group(self, group, state, protocol_type, members) -> None:
        self.coord.internal.create_group(group, state, protocol_type=protocol_type, members=[
            {**m, "protocols": tuple((n, bytes.fromhex(md)) for n, md in m["protocols"])} for m in members])

    def force_transition(self, group, to) -> None:
        self.coord.internal.force_transition(group, to)

    def force_prepare_rebalance(self, group) -> None:
        self._record(self.coord.internal.force_prepare_rebalance(group))

    def set_partition_loading(self, partition) -> None:
        self._record(self.coord.internal.set_partition_loading(partition))

    def complete_partition_load(self, partition) -> None:
        self._record(self.coord.internal.complete_partition_load(partition))

    def delete_partitions(self, partitions) -> None:
        self._record(self.coord.on_partitions_deleted([_tp(p) for p in partitions]))

    # ---- introspection (features group_state_introspection, group_introspection)
    def group(self, group_id):
        return self.coord.group(group_id)
