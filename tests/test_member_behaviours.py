"""Each historical member behaviour changes the outcome of the same input sequence."""
from kverify import behaviours as B
from kverify.impl.coordinator.messages import (
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, OffsetCommitRequest,
    OffsetFetchPartition, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse,
    TopicPartition as TP)
from kverify.impl.member import Member, MemberConfig
from kverify.impl.member import behaviours as MB
from kverify.impl.member.codec import decode_subscription, encode_assignment

T = [TP("t", i) for i in range(4)]


def cfg(**kw):
    base = dict(group_id="g", topics=("t",), cluster={"t": 4}, client_id="c1",
                session_timeout_ms=10000, heartbeat_interval_ms=3000, assignors=("cooperative-sticky",))
    base.update(kw)
    return MemberConfig(**base)


def only(reqs, kind):
    assert len(reqs) == 1 and isinstance(reqs[0], kind), reqs
    return reqs[0]


def stable_then_rejoining(m, gen=1, parts=(T[0], T[1])):
    """STABLE in `gen` owning `parts` (positions known), then a rebalance: JoinGroup in flight."""
    j = only(m.start(0), JoinGroupRequest)
    s = only(m.on_response(j.correlation_id, JoinGroupResponse(
        "NONE", member_id="m1", generation_id=gen, protocol_type="consumer",
        protocol_name=m.config.assignors[0], leader_id="other")), SyncGroupRequest)
    m.on_response(s.correlation_id, SyncGroupResponse("NONE", "consumer", s.protocol_name, encode_assignment(parts)))
    f = only(m.poll(1), OffsetFetchRequest)
    m.on_response(f.correlation_id, OffsetFetchResponse("NONE", tuple(
        OffsetFetchPartition(tp, 10, None, "", "NONE") for tp in f.partitions)))
    hb = only(m.heartbeat(2), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    return only([r for r in m.poll(3) if isinstance(r, JoinGroupRequest)], JoinGroupRequest)


def test_behaviours_are_declared_for_the_member_component():
    names = {b.name for b in B.by_component("member")}
    assert {MB.SYNC_REBALANCE_RESETS_GENERATION, MB.JOIN_PREPARE_ONCE, MB.COMMIT_UNOWNED,
            MB.NO_PENDING_REVOCATION} <= names
    assert B.validate([MB.JOIN_PREPARE_ONCE], "member") == {MB.JOIN_PREPARE_ONCE}


def _sync_rebalance(behaviours):
    m = Member(cfg(), behaviours)
    j = stable_then_rejoining(m)
    s = only(m.on_response(j.correlation_id, JoinGroupResponse(
        "NONE", member_id="m1", generation_id=2, protocol_type="consumer",
        protocol_name="cooperative-sticky", leader_id="other")), SyncGroupRequest)
    j2 = only(m.on_response(s.correlation_id, SyncGroupResponse("REBALANCE_IN_PROGRESS")), JoinGroupRequest)
    return m, decode_subscription(j2.protocols[0][1])


def test_kafka_13891_sync_rebalance_in_progress_loses_every_partition():
    m, sub = _sync_rebalance(frozenset())
    assert m.consuming == {T[0], T[1]} and sub.owned == (T[0], T[1]) and sub.generation == 2
    m, sub = _sync_rebalance(frozenset({MB.SYNC_REBALANCE_RESETS_GENERATION}))
    assert m.consuming == frozenset() and sub.owned == () and sub.generation == -1
    assert m.member_id == "m1"                      # the member id survives, only the generation goes


def _member_id_lost_mid_rebalance(behaviours):
    m = Member(cfg(), behaviours)
    j = stable_then_rejoining(m)
    j2 = only(m.on_response(j.correlation_id, JoinGroupResponse("UNKNOWN_MEMBER_ID")), JoinGroupRequest)
    return m, j2


def test_kafka_12983_join_prepare_once_rejoins_still_owning_partitions():
    m, j2 = _member_id_lost_mid_rebalance(frozenset())
    assert j2.member_id == "" and m.owned == frozenset() and m.consuming == frozenset()
    assert decode_subscription(j2.protocols[0][1]).owned == ()
    m, j2 = _member_id_lost_mid_rebalance(frozenset({MB.JOIN_PREPARE_ONCE}))
    assert j2.member_id == ""
    assert m.consuming == {T[0], T[1]}              # no onPartitionsLost: still consuming
    sub = decode_subscription(j2.protocols[0][1])
    assert sub.owned == (T[0], T[1]) and sub.generation == -1


def _commit_after_losing_a_partition(behaviours):
    m = Member(cfg(assignors=("range",)), behaviours)
    j = stable_then_rejoining(m)
    s = only(m.on_response(j.correlation_id, JoinGroupResponse(
        "NONE", member_id="m1", generation_id=2, protocol_type="consumer",
        protocol_name="range", leader_id="other")), SyncGroupRequest)
    m.on_response(s.correlation_id, SyncGroupResponse("NONE", "consumer", "range", encode_assignment([T[0]])))
    f = only(m.poll(4), OffsetFetchRequest)
    m.on_response(f.correlation_id, OffsetFetchResponse("NONE", (OffsetFetchPartition(T[0], 11, None, "", "NONE"),)))
    return only(m.commit(now=5), OffsetCommitRequest)


def test_commit_unowned_partitions_commits_what_the_member_gave_up():
    c = _commit_after_losing_a_partition(frozenset())
    assert {tp for tp, _ in c.offsets} == {T[0]}
    c = _commit_after_losing_a_partition(frozenset({MB.COMMIT_UNOWNED}))
    assert {tp for tp, _ in c.offsets} == {T[0], T[1]} and c.generation_id == 2


def _consumed_after_the_prepare_commit(behaviours):
    from kverify.impl.coordinator.messages import OffsetCommitResponse
    m = Member(cfg(assignors=("range",), auto_commit_interval_ms=60000), behaviours)
    j = only(m.start(0), JoinGroupRequest)
    s = only(m.on_response(j.correlation_id, JoinGroupResponse(
        "NONE", member_id="m1", generation_id=1, protocol_type="consumer", protocol_name="range",
        leader_id="other")), SyncGroupRequest)
    m.on_response(s.correlation_id, SyncGroupResponse("NONE", "consumer", "range", encode_assignment([T[0]])))
    f = only(m.poll(1), OffsetFetchRequest)
    m.on_response(f.correlation_id, OffsetFetchResponse("NONE", (OffsetFetchPartition(T[0], 10, None, "", "NONE"),)))
    hb = only(m.heartbeat(2), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    c = only(m.poll(3), OffsetCommitRequest)            # onJoinPrepare's async auto-commit
    m.poll(4)                                           # the commit is still in flight
    m.poll(5)
    last_position = m.positions[T[0]]
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "NONE"),)))
    only(m.poll(6), JoinGroupRequest)                   # revoked now
    return dict(c.offsets)[T[0]].offset, last_position


def test_kafka_14196_records_consumed_after_the_prepare_commit_are_never_committed():
    committed, position = _consumed_after_the_prepare_commit(frozenset())
    assert committed == position                        # the next owner resumes exactly here
    committed, position = _consumed_after_the_prepare_commit(frozenset({MB.NO_PENDING_REVOCATION}))
    assert position == committed + 3                    # polls 3, 4 and 5 consumed: seen again by the next owner
