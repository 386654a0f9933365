"""Group APIs on the wire <-> the reference coordinator's requests and responses (impl/coordinator/messages).

Public conversion (also used by `kverify replay` of wire traces, W2):
  `to_requests(api, version, body, client_id="", client_host="") -> [messages request, ...]`
      a decoded kafka-python request body -> the coordinator requests it stands for (correlation_id 0;
      set yours with `._replace(correlation_id=...)`). One request, except OffsetFetch v8+ (one per
      group) and DescribeGroups (one per group id).
  `to_wire(api, version, responses) -> dict`  the coordinator's responses (same order) -> the wire
      response fields (snake_case, as `codec.build` takes them).
`handle(broker, ctx, body)` serves one request: a single coordinator request is submitted and may be
parked (JoinGroup/SyncGroup: its Reply comes back later through `Broker.route`); several are asked
one after the other (those APIs never park). Version differences of the wire live here.
"""
from __future__ import annotations

from kverify.impl.coordinator import messages as M
from kverify.wire.codec import error_code

API_NAMES = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
             "DescribeGroups", "ListGroups", "DeleteGroups", "OffsetDelete")


def _s(v):
    """Non-nullable wire strings: None -> ""."""
    return "" if v is None else v


def _throttle(out, v, since):
    if v >= since:
        out["throttle_time_ms"] = 0
    return out


# ---- wire -> coordinator ------------------------------------------------------------------------
def _join(v, body, client_id, host):
    session = body.session_timeout_ms
    rebalance = body.rebalance_timeout_ms if v >= 1 and body.rebalance_timeout_ms not in (None, -1) else session
    return [M.JoinGroupRequest(
        group_id=body.group_id, member_id=_s(body.member_id),
        group_instance_id=body.group_instance_id if v >= 5 else None, protocol_type=_s(body.protocol_type),
        protocols=tuple((_s(p.name), bytes(p.metadata or b"")) for p in body.protocols or ()),
        session_timeout_ms=session, rebalance_timeout_ms=rebalance, require_known_member_id=v >= 4,
        support_skipping_assignment=v >= 9, client_id=_s(client_id), client_host=_s(host))]


def _sync(v, body, client_id, host):
    return [M.SyncGroupRequest(
        group_id=body.group_id, generation_id=body.generation_id, member_id=_s(body.member_id),
        group_instance_id=body.group_instance_id if v >= 3 else None,
        protocol_type=body.protocol_type if v >= 5 else None, protocol_name=body.protocol_name if v >= 5 else None,
        assignments=tuple((_s(a.member_id), bytes(a.assignment or b"")) for a in body.assignments or ()))]


def _heartbeat(v, body, client_id, host):
    return [M.HeartbeatRequest(group_id=body.group_id, generation_id=body.generation_id,
                               member_id=_s(body.member_id),
                               group_instance_id=body.group_instance_id if v >= 3 else None)]


def _leave(v, body, client_id, host):
    if v >= 3:
        members = tuple(M.MemberIdentity(_s(m.member_id), m.group_instance_id) for m in body.members or ())
    else:
        members = (M.MemberIdentity(_s(body.member_id), None),)
    return [M.LeaveGroupRequest(group_id=body.group_id, members=members)]


def _commit(v, body, client_id, host):
    offsets = []
    for t in body.topics or ():
        for p in t.partitions or ():
            epoch = p.committed_leader_epoch if v >= 6 else -1
            offsets.append((M.TopicPartition(_s(t.name), p.partition_index),
                            M.OffsetAndMetadata(p.committed_offset, None if epoch in (None, -1) else epoch,
                                                _s(p.committed_metadata))))
    retention = body.retention_time_ms if 2 <= v <= 4 and body.retention_time_ms is not None else -1
    return [M.OffsetCommitRequest(group_id=body.group_id, generation_id=body.generation_id_or_member_epoch,
                                  member_id=_s(body.member_id),
                                  group_instance_id=body.group_instance_id if v >= 7 else None,
                                  offsets=tuple(offsets), retention_time_ms=retention)]


def _fetch_request(group_id, topics, stable):
    parts = None if topics is None else tuple(
        M.TopicPartition(_s(t.name), p) for t in topics for p in t.partition_indexes or ())
    return M.OffsetFetchRequest(group_id=group_id, partitions=parts, require_stable=stable)


def _offset_fetch(v, body, client_id, host):
    stable = bool(body.require_stable) if v >= 7 else False
    if v >= 8:
        return [_fetch_request(g.group_id, g.topics, stable) for g in body.groups or ()]
    return [_fetch_request(body.group_id, body.topics if v >= 2 else (body.topics or ()), stable)]


def _describe(v, body, client_id, host):
    return [M.DescribeGroupsRequest(group_id=g) for g in body.groups or ()]


def _list(v, body, client_id, host):
    return [M.ListGroupsRequest(states=tuple(body.states_filter or ()) if v >= 4 else ())]


def _delete_groups(v, body, client_id, host):
    return [M.DeleteGroupsRequest(groups=tuple(body.groups_names or ()))]


def _offset_delete(v, body, client_id, host):
    return [M.OffsetDeleteRequest(group_id=body.group_id, partitions=tuple(
        M.TopicPartition(_s(t.name), p.partition_index) for t in body.topics or () for p in t.partitions or ()))]


# ---- coordinator -> wire ------------------------------------------------------------------------
def _join_wire(v, rs, body):
    r = rs[0]
    out = {"error_code": error_code(r.error), "generation_id": r.generation_id,
           "protocol_name": r.protocol_name if v >= 7 else _s(r.protocol_name),
           "leader": _s(r.leader_id), "member_id": _s(r.member_id),
           "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                        "metadata": m.metadata} for m in r.members]}
    if v >= 7:
        out["protocol_type"] = r.protocol_type
    if v >= 9:
        out["skip_assignment"] = bool(r.skip_assignment)
    return _throttle(out, v, 2)


def _sync_wire(v, rs, body):
    r = rs[0]
    out = {"error_code": error_code(r.error), "assignment": r.assignment or b""}
    if v >= 5:
        out["protocol_type"], out["protocol_name"] = r.protocol_type, r.protocol_name
    return _throttle(out, v, 1)


def _heartbeat_wire(v, rs, body):
    return _throttle({"error_code": error_code(rs[0].error)}, v, 1)


def _leave_wire(v, rs, body):
    r = rs[0]
    if v >= 3:
        out = {"error_code": error_code(r.error),
               "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                            "error_code": error_code(m.error)} for m in r.members]}
    else:   # one member, whose own error is the top-level error (LeaveGroupResponse v0-2)
        err = r.error if r.error != M.Errors.NONE or not r.members else r.members[0].error
        out = {"error_code": error_code(err)}
    return _throttle(out, v, 1)


def _by_topic(pairs):
    """[(TopicPartition, x), ...] -> [(topic, [(partition, x), ...]), ...] keeping first-seen order."""
    topics: dict = {}
    for tp, x in pairs:
        topics.setdefault(tp.topic, []).append((tp.partition, x))
    return list(topics.items())


def _commit_wire(v, rs, body):
    out = {"topics": [{"name": t, "partitions": [{"partition_index": p, "error_code": error_code(e)}
                                                  for p, e in parts]}
                      for t, parts in _by_topic(rs[0].partition_errors)]}
    return _throttle(out, v, 3)


def _fetched_topics(r):
    return [{"name": t, "partitions": [
        {"partition_index": p, "committed_offset": x.offset,
         "committed_leader_epoch": -1 if x.leader_epoch is None else x.leader_epoch,
         "metadata": x.metadata, "error_code": error_code(x.error)} for p, x in parts]}
        for t, parts in _by_topic([(x.partition, x) for x in r.partitions])]


def _offset_fetch_wire(v, rs, body):
    if v >= 8:
        groups = [{"group_id": g.group_id, "topics": _fetched_topics(r), "error_code": error_code(r.error)}
                  for g, r in zip(body.groups or (), rs)]
        return {"throttle_time_ms": 0, "groups": groups}
    r = rs[0]
    topics = _fetched_topics(r)
    out = {"topics": topics}
    if v >= 2:
        out["error_code"] = error_code(r.error)
    elif r.error != M.Errors.NONE:      # v0-1 carry a group error in every partition
        for t in topics:
            for p in t["partitions"]:
                p["error_code"] = error_code(r.error)
    return _throttle(out, v, 3)


def _describe_wire(v, rs, body):
    groups = [{
        "error_code": error_code(r.error), "group_id": _s(gid), "group_state": _s(r.state),
        "protocol_type": _s(r.protocol_type), "protocol_data": _s(r.protocol),
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                     "client_id": _s(m.client_id), "client_host": _s(m.client_host),
                     "member_metadata": m.metadata or b"", "member_assignment": m.assignment or b""}
                    for m in r.members]} for gid, r in zip(body.groups or (), rs)]
    return _throttle({"groups": groups}, v, 1)


def _list_wire(v, rs, body):
    r = rs[0]
    groups = []
    for gid, ptype, state in r.groups:
        g = {"group_id": gid, "protocol_type": _s(ptype)}
        if v >= 4:
            g["group_state"] = _s(state)
        groups.append(g)
    return _throttle({"error_code": error_code(r.error), "groups": groups}, v, 1)


def _delete_groups_wire(v, rs, body):
    return {"throttle_time_ms": 0, "results": [{"group_id": g, "error_code": error_code(e)}
                                               for g, e in rs[0].results]}


def _offset_delete_wire(v, rs, body):
    r = rs[0]
    return {"error_code": error_code(r.error), "throttle_time_ms": 0, "topics": [
        {"name": t, "partitions": [{"partition_index": p, "error_code": error_code(e)} for p, e in parts]}
        for t, parts in _by_topic(r.partition_errors)]}


_CONVERT = {"JoinGroup": (_join, _join_wire), "SyncGroup": (_sync, _sync_wire),
            "Heartbeat": (_heartbeat, _heartbeat_wire), "LeaveGroup": (_leave, _leave_wire),
            "OffsetCommit": (_commit, _commit_wire), "OffsetFetch": (_offset_fetch, _offset_fetch_wire),
            "DescribeGroups": (_describe, _describe_wire), "ListGroups": (_list, _list_wire),
            "DeleteGroups": (_delete_groups, _delete_groups_wire), "OffsetDelete": (_offset_delete, _offset_delete_wire)}


def to_requests(api: str, version: int, body, client_id="", client_host="") -> list:
    return _CONVERT[api][0](version, body, client_id, client_host)


def to_wire(api: str, version: int, responses, body) -> dict:
    """`body` is the request (OffsetFetch v8 and DescribeGroups answer per requested group)."""
    return _CONVERT[api][1](version, list(responses), body)


def handle(b, ctx, body):
    api, v = ctx.api.name, ctx.version
    requests = to_requests(api, v, body, ctx.client_id, "/" + ctx.host)
    if len(requests) == 1:
        req = requests[0]
        b.submit(ctx, lambda cid: req._replace(correlation_id=cid), lambda r: to_wire(api, v, [r], body))
    else:
        rs = [b.ask(lambda cid, req=req: req._replace(correlation_id=cid)) for req in requests]
        b.respond(ctx, to_wire(api, v, rs, body))


HANDLERS = {name: handle for name in API_NAMES}
