"""The consumer member fed with hand-made coordinator responses (no coordinator involved).

Each test follows a fact of coordinator.md §9 / AbstractCoordinator + ConsumerCoordinator (3.6).
"""
import pytest

from kverify.impl.coordinator.messages import (
    HeartbeatRequest, HeartbeatResponse, JoinGroupMember, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchPartition,
    OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse, TopicPartition as TP)
from kverify.impl.member import Member, MemberConfig, MemberState as S
from kverify.impl.member.codec import decode_subscription, encode_assignment

T = [TP("t", i) for i in range(4)]


def cfg(**kw):
    base = dict(group_id="g", topics=("t",), cluster={"t": 4}, client_id="c1",
                session_timeout_ms=10000, heartbeat_interval_ms=3000, rebalance_timeout_ms=60000)
    base.update(kw)
    return MemberConfig(**base)


def only(reqs, kind):
    assert len(reqs) == 1 and isinstance(reqs[0], kind), reqs
    return reqs[0]


def join_ok(m, req, gen, mid="m1", leader="other", protocol=None, members=()):
    return m.on_response(req.correlation_id, JoinGroupResponse(
        "NONE", member_id=mid, generation_id=gen, protocol_type="consumer",
        protocol_name=protocol or m.config.assignors[0], leader_id=leader, members=members))


def sync_ok(m, req, parts):
    return m.on_response(req.correlation_id, SyncGroupResponse(
        "NONE", "consumer", req.protocol_name, encode_assignment(parts)))


def fetch_ok(m, req, offset=-1):
    return m.on_response(req.correlation_id, OffsetFetchResponse("NONE", tuple(
        OffsetFetchPartition(tp, offset, None, "", "NONE") for tp in req.partitions)))


def stable(m, gen=1, parts=(T[0], T[1]), mid="m1", now=0):
    """Drive a fresh follower to STABLE in generation `gen` owning `parts` with known positions."""
    j = only(m.start(now), JoinGroupRequest)
    s = only(join_ok(m, j, gen, mid), SyncGroupRequest)
    assert s.assignments == ()                              # a follower sends no assignment
    assert sync_ok(m, s, parts) == []
    if parts:
        fetch_ok(m, only(m.poll(now), OffsetFetchRequest), offset=5)
    assert m.state == S.STABLE and m.owned == frozenset(parts)
    return m


# ---- joining -----------------------------------------------------------------------------------
def test_dynamic_member_adopts_the_id_from_member_id_required_and_rejoins_at_once():
    m = Member(cfg())
    j1 = only(m.start(0), JoinGroupRequest)
    assert j1.member_id == "" and j1.require_known_member_id and j1.group_instance_id is None
    assert m.state == S.PREPARING_REBALANCE
    j2 = only(m.on_response(j1.correlation_id, JoinGroupResponse("MEMBER_ID_REQUIRED", member_id="m1")),
              JoinGroupRequest)
    assert j2.member_id == "m1" and j2.correlation_id != j1.correlation_id


def test_follower_syncs_becomes_stable_and_consumes_after_the_position_is_fetched():
    m = Member(cfg())
    j = only(m.start(0), JoinGroupRequest)
    s = only(join_ok(m, j, 3), SyncGroupRequest)
    assert m.state == S.COMPLETING_REBALANCE and m.generation.generation_id == 3
    assert (s.generation_id, s.member_id, s.protocol_name) == (3, "m1", "range")
    sync_ok(m, s, [T[0], T[2]])
    assert m.state == S.STABLE and m.owned == {T[0], T[2]}
    assert m.consuming == frozenset()                   # no position yet
    f = only(m.poll(10), OffsetFetchRequest)
    assert set(f.partitions) == {T[0], T[2]}
    m.on_response(f.correlation_id, OffsetFetchResponse("NONE", (
        OffsetFetchPartition(T[0], 7, None, "", "NONE"), OffsetFetchPartition(T[2], -1, None, "", "NONE"))))
    assert m.positions == {T[0]: 7, T[2]: 0}            # committed offset, else earliest
    assert m.consuming == {T[0], T[2]}
    m.poll(20)
    assert m.positions == {T[0]: 8, T[2]: 1}


def test_leader_runs_the_protocol_the_coordinator_selected():
    m = Member(cfg(assignors=("range", "roundrobin"), cluster={"t": 2, "u": 2}, topics=("t", "u")))
    j = only(m.start(0), JoinGroupRequest)
    assert [name for name, _ in j.protocols] == ["range", "roundrobin"]
    members = (JoinGroupMember("m1", None, j.protocols[1][1]), JoinGroupMember("m2", None, j.protocols[1][1]))
    s = only(join_ok(m, j, 1, "m1", leader="m1", protocol="roundrobin", members=members), SyncGroupRequest)
    got = dict(s.assignments)
    assert got == {"m1": b"A0|t:0,u:0", "m2": b"A0|t:1,u:1"}    # round-robin, not range
    assert m.is_leader


def test_static_member_sends_its_instance_id_and_never_leaves():
    m = Member(cfg(instance_id="i1"))
    j = only(m.start(0), JoinGroupRequest)
    assert j.group_instance_id == "i1" and not j.require_known_member_id
    s = only(join_ok(m, j, 1), SyncGroupRequest)
    sync_ok(m, s, [T[0]])
    assert m.leave(5) == []                             # static members rely on session expiry


def test_dynamic_member_leaves_with_its_member_id_and_stops_consuming():
    m = stable(Member(cfg()))
    reqs = m.leave(5)
    lv = only(reqs, LeaveGroupRequest)
    assert [x.member_id for x in lv.members] == ["m1"]
    assert m.consuming == frozenset() and m.closed
    assert m.on_response(lv.correlation_id, None) == []         # closed: everything ignored


# ---- eager / cooperative ------------------------------------------------------------------------
def test_eager_heartbeat_rebalance_in_progress_revokes_everything_before_rejoining():
    m = stable(Member(cfg()), gen=2)
    hb = only(m.heartbeat(100), HeartbeatRequest)
    assert hb.generation_id == 2
    assert m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS")) == []
    assert m.rejoin_needed and m.consuming == {T[0], T[1]}     # still consuming until the next poll
    j = only(m.poll(200), JoinGroupRequest)
    assert m.owned == frozenset() and m.consuming == frozenset()
    sub = decode_subscription(j.protocols[0][1])
    assert sub.owned == () and sub.generation == 2 and j.member_id == "m1"


def test_cooperative_keeps_consuming_during_the_rebalance_and_revokes_only_what_moved():
    m = stable(Member(cfg(assignors=("cooperative-sticky",))), gen=2)
    hb = only(m.heartbeat(100), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    j = only(m.poll(200), JoinGroupRequest)
    assert m.consuming == {T[0], T[1]}                          # nothing revoked up front
    sub = decode_subscription(j.protocols[0][1])
    assert sub.owned == (T[0], T[1]) and sub.generation == 2
    s = only(join_ok(m, j, 3), SyncGroupRequest)
    assert m.consuming == {T[0], T[1]}                          # still consuming while completing
    sync_ok(m, s, [T[0], T[3]])
    assert m.owned == {T[0], T[3]}
    assert m.consuming == {T[0]}                                 # T1 revoked, T3 waits for its position
    assert m.rejoin_needed                                       # revoked something: rejoin
    j2 = only([r for r in m.poll(300) if isinstance(r, JoinGroupRequest)], JoinGroupRequest)
    assert decode_subscription(j2.protocols[0][1]).owned == (T[0], T[3])


def test_cooperative_without_revocation_does_not_rejoin():
    m = stable(Member(cfg(assignors=("cooperative-sticky",))), gen=1, parts=(T[0],))
    hb = only(m.heartbeat(100), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    j = only(m.poll(200), JoinGroupRequest)
    sync_ok(m, only(join_ok(m, j, 2), SyncGroupRequest), [T[0], T[1]])
    assert not m.rejoin_needed and m.owned == {T[0], T[1]}


def test_assignment_outside_the_subscription_makes_the_member_rejoin():
    m = Member(cfg())
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    sync_ok(m, s, [TP("other", 0)])
    assert m.owned == frozenset() and m.rejoin_needed


def test_an_empty_assignment_buffer_kills_the_application():
    m = Member(cfg())
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    m.on_response(s.correlation_id, SyncGroupResponse("NONE", "consumer", "range", b""))
    assert m.fatal and "0 bytes" in m.fatal and m.poll(10) == []


# ---- JoinGroup / SyncGroup errors ---------------------------------------------------------------
@pytest.mark.parametrize("err", ["FENCED_INSTANCE_ID", "INCONSISTENT_GROUP_PROTOCOL", "INVALID_SESSION_TIMEOUT",
                                 "GROUP_MAX_SIZE_REACHED", "INVALID_GROUP_ID", "UNKNOWN_SERVER_ERROR"])
def test_fatal_join_errors_stop_the_member(err):
    m = Member(cfg())
    j = only(m.start(0), JoinGroupRequest)
    assert m.on_response(j.correlation_id, JoinGroupResponse(err)) == []
    assert m.fatal is not None and err in m.fatal
    assert m.poll(10) == [] and m.tick(50000) == []


@pytest.mark.parametrize("err,immediate", [("REBALANCE_IN_PROGRESS", True), ("COORDINATOR_LOAD_IN_PROGRESS", False),
                                           ("COORDINATOR_NOT_AVAILABLE", False), ("NOT_COORDINATOR", False)])
def test_retriable_join_errors(err, immediate):
    m = Member(cfg())
    j = only(m.start(0), JoinGroupRequest)
    out = m.on_response(j.correlation_id, JoinGroupResponse(err))
    if immediate:
        only(out, JoinGroupRequest)
    else:
        assert out == []
        only(m.poll(10), JoinGroupRequest)               # retried at the next poll
    assert m.fatal is None


def test_join_unknown_member_id_resets_the_member_id_and_declares_partitions_lost():
    m = stable(Member(cfg(assignors=("cooperative-sticky",))), gen=4)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    j = only(m.poll(20), JoinGroupRequest)
    assert m.owned == {T[0], T[1]}
    j2 = only(m.on_response(j.correlation_id, JoinGroupResponse("UNKNOWN_MEMBER_ID")), JoinGroupRequest)
    assert j2.member_id == "" and m.owned == frozenset()
    assert decode_subscription(j2.protocols[0][1]).owned == ()


def test_join_unknown_member_id_after_the_generation_changed_keeps_the_member_id():
    m = stable(Member(cfg()), gen=2)
    hb = only(m.heartbeat(10), HeartbeatRequest)            # sent with generation 2
    c = only(m.commit({T[0]: 1}, now=11), OffsetCommitRequest)
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "REBALANCE_IN_PROGRESS"),)))
    j = only(m.poll(20), JoinGroupRequest)                  # rejoining, JoinGroup sent with generation 2
    m.on_response(hb.correlation_id, HeartbeatResponse("ILLEGAL_GENERATION"))
    assert m.generation == (-1, "m1", None)                  # the heartbeat thread reset the generation
    j2 = only(m.on_response(j.correlation_id, JoinGroupResponse("UNKNOWN_MEMBER_ID")), JoinGroupRequest)
    assert j2.member_id == "m1"                              # generation changed since sending: no reset


def test_sync_illegal_generation_keeps_member_id_and_unknown_member_resets_it():
    m = Member(cfg())
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 5), SyncGroupRequest)
    j = only(m.on_response(s.correlation_id, SyncGroupResponse("ILLEGAL_GENERATION")), JoinGroupRequest)
    assert j.member_id == "m1" and m.generation.generation_id == -1
    s = only(join_ok(m, j, 6), SyncGroupRequest)
    j = only(m.on_response(s.correlation_id, SyncGroupResponse("UNKNOWN_MEMBER_ID")), JoinGroupRequest)
    assert j.member_id == ""


def test_sync_rebalance_in_progress_rejoins_without_reset():
    m = stable(Member(cfg(assignors=("cooperative-sticky",))), gen=1)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    s = only(join_ok(m, only(m.poll(20), JoinGroupRequest), 2), SyncGroupRequest)
    j = only(m.on_response(s.correlation_id, SyncGroupResponse("REBALANCE_IN_PROGRESS")), JoinGroupRequest)
    sub = decode_subscription(j.protocols[0][1])
    assert sub.generation == 2 and sub.owned == (T[0], T[1])   # Kafka 3.4+: claims gen-1 partitions under gen 2
    assert m.consuming == {T[0], T[1]}


def test_sync_coordinator_error_rejoins_at_the_next_poll():
    m = Member(cfg())
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    assert m.on_response(s.correlation_id, SyncGroupResponse("NOT_COORDINATOR")) == []
    assert not m.coordinator_known
    j = only(m.poll(10), JoinGroupRequest)
    assert j.member_id == "m1"                       # KAFKA-13214: no member id reset


def test_sync_fenced_is_fatal():
    m = Member(cfg(instance_id="i"))
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    m.on_response(s.correlation_id, SyncGroupResponse("FENCED_INSTANCE_ID"))
    assert m.fatal == "FENCED_INSTANCE_ID"


# ---- heartbeats ---------------------------------------------------------------------------------
def test_heartbeat_errors_reset_only_for_the_generation_they_were_sent_with():
    m = stable(Member(cfg()), gen=3)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.generation = m.generation._replace(generation_id=4)      # a newer generation meanwhile
    m.on_response(hb.correlation_id, HeartbeatResponse("ILLEGAL_GENERATION"))
    assert m.state == S.STABLE and m.generation.generation_id == 4
    m.generation = m.generation._replace(generation_id=3)
    hb = only(m.heartbeat(20), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("ILLEGAL_GENERATION"))
    assert m.state == S.UNJOINED and m.generation == (-1, "m1", None)
    assert m.consuming == {T[0], T[1]}                          # zombie until the next poll
    j = only(m.poll(30), JoinGroupRequest)
    assert m.consuming == frozenset() and j.member_id == "m1"   # onJoinPrepare: lost


def test_heartbeat_unknown_member_resets_the_member_id_and_fenced_is_fatal():
    m = stable(Member(cfg()))
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("UNKNOWN_MEMBER_ID"))
    assert m.generation == (-1, "", None)
    m2 = stable(Member(cfg(instance_id="i")))
    hb = only(m2.heartbeat(10), HeartbeatRequest)
    m2.on_response(hb.correlation_id, HeartbeatResponse("FENCED_INSTANCE_ID"))
    assert m2.fatal == "FENCED_INSTANCE_ID"


def test_heartbeat_rebalance_in_progress_is_ignored_while_completing():
    m = Member(cfg())
    only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    before = (m.state, m.generation, m.join_cid, m.rejoin_needed, m.needs_join_prepare)
    assert m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS")) == []
    assert (m.state, m.generation, m.join_cid, m.rejoin_needed, m.needs_join_prepare) == before
    assert before[0] == S.COMPLETING_REBALANCE and m.join_cid is not None   # SyncGroup still awaited


def test_no_heartbeats_before_the_join_completes():
    m = Member(cfg())
    m.start(0)
    assert m.heartbeat(10) == [] and m.tick(5000) == []


def test_tick_sends_heartbeats_at_the_interval():
    m = stable(Member(cfg()))
    assert m.tick(2999) == []
    hb = only(m.tick(3000), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("NONE"), now=3001)
    assert m.tick(5999) == [] and len(m.tick(6000)) == 1


def test_session_timeout_without_heartbeat_response_disconnects():
    m = stable(Member(cfg()))
    only(m.tick(3000), HeartbeatRequest)                 # never answered
    m.tick(9000)
    assert m.coordinator_known
    m.tick(10000)
    assert not m.coordinator_known and not m.inflight    # in-flight heartbeat failed
    assert m.state == S.STABLE


def test_poll_timeout_leaves_the_group():
    m = stable(Member(cfg(rebalance_timeout_ms=20000, session_timeout_ms=30000)))
    for t in range(3000, 20000, 3000):
        for r in m.tick(t):
            m.on_response(r.correlation_id, HeartbeatResponse("NONE"), now=t)
    lv = only(m.tick(20000), LeaveGroupRequest)
    assert lv.members[0].member_id == "m1" and m.state == S.UNJOINED and m.generation.member_id == ""


def test_request_timeout_fails_the_join_and_the_next_poll_rejoins():
    m = Member(cfg(rebalance_timeout_ms=60000))
    j = only(m.start(0), JoinGroupRequest)
    assert m.tick(64999) == [] and m.wants(j.correlation_id)
    m.tick(65000)                                        # max(30000, 60000 + 5000)
    assert not m.wants(j.correlation_id)
    assert only(m.poll(65001), JoinGroupRequest).correlation_id != j.correlation_id


# ---- commits ------------------------------------------------------------------------------------
def test_commits_carry_the_generation_only_when_stable():
    m = Member(cfg())
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    assert m.commit({T[0]: 3}) == []                                 # COMPLETING: local failure
    assert m.commit_results[-1][2].startswith("rebalance-in-progress")
    sync_ok(m, s, [T[0]])
    c = only(m.commit({T[0]: 3}), OffsetCommitRequest)
    assert (c.generation_id, c.member_id) == (1, "m1")
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "NONE"),)))
    assert m.commit_results[-1][2] == "ok"


def test_commit_of_consumed_positions_by_default():
    m = stable(Member(cfg()))
    m.poll(10)
    c = only(m.commit(now=20), OffsetCommitRequest)
    assert {tp: o.offset for tp, o in c.offsets} == {T[0]: 6, T[1]: 6}


def test_commit_rebalance_in_progress_requests_rejoin_without_reset():
    m = stable(Member(cfg()), gen=2)
    c = only(m.commit({T[0]: 1}), OffsetCommitRequest)
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "REBALANCE_IN_PROGRESS"),)))
    assert m.commit_results[-1][2] == "rebalance-in-progress"
    assert m.rejoin_needed and m.generation.generation_id == 2 and m.state == S.STABLE


@pytest.mark.parametrize("err,member_id", [("ILLEGAL_GENERATION", "m1"), ("UNKNOWN_MEMBER_ID", "")])
def test_commit_generation_errors_reset(err, member_id):
    m = stable(Member(cfg()), gen=2)
    c = only(m.commit({T[0]: 1}), OffsetCommitRequest)
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], err),)))
    assert m.commit_results[-1][2] == "commit-failed"
    assert m.generation == (-1, member_id, None) and m.state == S.UNJOINED


def test_commit_error_for_an_old_generation_while_rejoining_is_rebalance_in_progress():
    m = stable(Member(cfg()), gen=2)
    c = only(m.commit({T[0]: 1}), OffsetCommitRequest)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    j = only(m.poll(20), JoinGroupRequest)
    m.on_response(j.correlation_id, JoinGroupResponse("MEMBER_ID_REQUIRED", member_id="m1b"))
    assert m.state == S.PREPARING_REBALANCE
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "ILLEGAL_GENERATION"),)))
    assert m.commit_results[-1][2] == "rebalance-in-progress"
    assert m.generation.member_id == "m1b"                 # no reset


def test_commit_fenced_for_the_current_generation_is_fatal():
    m = stable(Member(cfg(instance_id="i")))
    c = only(m.commit({T[0]: 1}), OffsetCommitRequest)
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "FENCED_INSTANCE_ID"),)))
    assert m.fatal == "FENCED_INSTANCE_ID"


def test_commit_coordinator_errors_are_retriable_and_disconnect():
    m = stable(Member(cfg()))
    c = only(m.commit({T[0]: 1}), OffsetCommitRequest)
    hb = only(m.heartbeat(5), HeartbeatRequest)
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "NOT_COORDINATOR"),)))
    assert m.commit_results[-1][2] == "retriable:NOT_COORDINATOR"
    assert not m.wants(hb.correlation_id)                 # the disconnect failed the heartbeat too


def test_commit_on_revoke_blocks_the_join_until_the_commit_answers():
    m = stable(Member(cfg(commit_on_revoke=True)), gen=2)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    c = only(m.poll(20), OffsetCommitRequest)               # onPartitionsRevoked commits first
    assert c.generation_id == 2 and {tp for tp, _ in c.offsets} == {T[0], T[1]}
    assert m.poll(30) == [] and m.owned == {T[0], T[1]}     # blocked inside the callback
    assert len(m.heartbeat(40)) == 1                        # the heartbeat thread still runs
    j = only(m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "NONE"), (T[1], "NONE")))),
             JoinGroupRequest)
    assert m.owned == frozenset() and j.member_id == "m1"


def test_commit_on_revoke_retries_retriable_failures():
    m = stable(Member(cfg(commit_on_revoke=True)), gen=2)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    c = only(m.poll(20), OffsetCommitRequest)
    assert m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "COORDINATOR_LOAD_IN_PROGRESS"),))) == []
    c2 = only(m.poll(30), OffsetCommitRequest)
    assert c2.offsets == c.offsets
    only(m.on_response(c2.correlation_id, OffsetCommitResponse(((T[0], "NONE"),))), JoinGroupRequest)


# ---- lifecycle, copies, determinism -------------------------------------------------------------
def test_crash_ignores_late_responses_and_restart_rejoins_as_a_new_process():
    m = Member(cfg(instance_id="i1"))
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    assert m.crash(5) == [] and m.consuming == frozenset()
    assert m.on_response(s.correlation_id, SyncGroupResponse("NONE", "consumer", "range", b"A0|t:0")) == []
    j = only(m.restart(10), JoinGroupRequest)
    assert j.member_id == "" and j.group_instance_id == "i1"
    assert j.correlation_id > s.correlation_id and m.incarnation == 1


def test_copy_is_independent_and_snapshots_compare_state():
    m = stable(Member(cfg()))
    c = m.copy()
    assert c.snapshot() == m.snapshot() and hash(c.snapshot()) == hash(m.snapshot())
    c.poll(10)
    assert c.positions != m.positions and c.snapshot() != m.snapshot()
    m.poll(10)
    assert c.snapshot() == m.snapshot()


def test_same_inputs_same_outputs():
    def run():
        m = stable(Member(cfg(assignors=("cooperative-sticky",))), gen=1)
        out = []
        for t in range(0, 20000, 1000):
            out += m.tick(t) + m.poll(t)
        return out, m.snapshot()
    assert run() == run()


def test_unexpected_response_type_is_a_programming_error():
    m = Member(cfg())
    j = only(m.start(0), JoinGroupRequest)
    with pytest.raises(TypeError):
        m.on_response(j.correlation_id, HeartbeatResponse("NONE"))


def test_config_rejects_impossible_settings():
    from kverify.impl.member import ConfigError
    with pytest.raises(ConfigError):
        MemberConfig("g", heartbeat_interval_ms=10000, session_timeout_ms=10000)
    with pytest.raises(ConfigError):
        MemberConfig("", topics=("t",))
    assert MemberConfig("g", assignors=("range", "cooperative-sticky")).rebalance_protocol == "EAGER"
    assert MemberConfig("g", assignors=("cooperative-sticky",)).rebalance_protocol == "COOPERATIVE"


# ---- auto-commit --------------------------------------------------------------------------------
def test_auto_commit_every_interval_with_the_stable_generation():
    m = stable(Member(cfg(auto_commit_interval_ms=5000)), gen=3)
    assert not [r for r in m.poll(4999) if isinstance(r, OffsetCommitRequest)]
    before = dict(m.positions)
    c = only([r for r in m.poll(5000) if isinstance(r, OffsetCommitRequest)], OffsetCommitRequest)
    # what earlier polls consumed is committed, then this poll consumes more (at-least-once)
    assert c.generation_id == 3 and {tp: o.offset for tp, o in c.offsets} == before
    assert m.positions == {tp: o + 1 for tp, o in before.items()}
    assert not [r for r in m.poll(5001) if isinstance(r, OffsetCommitRequest)]


def _auto_commit_rebalance(**kw):
    m = stable(Member(cfg(auto_commit_interval_ms=60000, **kw)), gen=2)
    m.poll(10)
    hb = only(m.heartbeat(20), HeartbeatRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("REBALANCE_IN_PROGRESS"))
    c = only(m.poll(30), OffsetCommitRequest)                # onJoinPrepare: async commit first
    return m, c


def test_eager_auto_commit_before_revocation_pauses_the_partitions_and_waits():
    m, c = _auto_commit_rebalance()
    committed = {tp: o.offset for tp, o in c.offsets}
    assert m.owned == {T[0], T[1]} and m.consuming == frozenset()     # pending revocation
    assert m.poll(40) == [] and m.positions == committed              # nothing consumed meanwhile
    m.on_response(c.correlation_id, OffsetCommitResponse(tuple((tp, "NONE") for tp in committed)))
    j = only(m.poll(50), JoinGroupRequest)
    assert m.owned == frozenset() and j.member_id == "m1"


def test_auto_commit_before_revocation_retries_retriable_errors_and_gives_up_at_the_rebalance_timeout():
    m, c = _auto_commit_rebalance()
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "COORDINATOR_LOAD_IN_PROGRESS"),)))
    assert m.poll(40) == []                                           # sees the failure, backs off
    c2 = only(m.poll(41), OffsetCommitRequest)                         # sent again
    assert c2.offsets == c.offsets
    assert m.poll(50) == []                                           # waiting
    j = only(m.poll(30 + 60000), JoinGroupRequest)                    # joinPrepare timer expired
    assert m.owned == frozenset() and j.member_id == "m1"


def test_cooperative_auto_commit_before_rejoining_keeps_consuming():
    m, c = _auto_commit_rebalance(assignors=("cooperative-sticky",))
    assert m.consuming == {T[0], T[1]}                                 # no pending revocation
    m.on_response(c.correlation_id, OffsetCommitResponse(tuple((tp, "NONE") for tp, _ in c.offsets)))
    only(m.poll(50), JoinGroupRequest)
    assert m.consuming == {T[0], T[1]}


def test_close_with_auto_commit_commits_then_leaves():
    m = stable(Member(cfg(auto_commit_interval_ms=5000)))
    reqs = m.leave(10)
    assert [type(r) for r in reqs] == [OffsetCommitRequest, LeaveGroupRequest]


# ---- subscription, metadata, static leader, positions, disconnects -----------------------------
def test_cooperative_subscription_change_revokes_only_the_dropped_topic_before_rejoining():
    m = Member(cfg(assignors=("cooperative-sticky",), topics=("t", "u"), cluster={"t": 4, "u": 1}))
    s = only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest)
    sync_ok(m, s, [T[0], TP("u", 0)])
    fetch_ok(m, only(m.poll(5), OffsetFetchRequest))
    assert m.subscribe(("t",), now=10) == []
    j = only(m.poll(20), JoinGroupRequest)
    assert m.owned == {T[0]} and m.consuming == {T[0]}
    sub = decode_subscription(j.protocols[0][1])
    assert sub.topics == ("t",) and sub.owned == (T[0],)


def test_only_the_leader_rejoins_when_topic_metadata_changes():
    def member(leader):
        m = Member(cfg())
        j = only(m.start(0), JoinGroupRequest)
        members = (JoinGroupMember("m1", None, j.protocols[0][1]),) if leader else ()
        s = only(join_ok(m, j, 1, "m1", leader="m1" if leader else "other", members=members), SyncGroupRequest)
        sync_ok(m, s, [T[0]])
        m.set_cluster({"t": 6}, now=5)
        return m.poll(10)
    assert [r for r in member(leader=True) if isinstance(r, JoinGroupRequest)]
    assert not [r for r in member(leader=False) if isinstance(r, JoinGroupRequest)]


def test_a_returning_static_leader_skips_the_assignment():
    m = Member(cfg(instance_id="i1"))
    j = only(m.start(0), JoinGroupRequest)
    assert j.support_skipping_assignment
    resp = JoinGroupResponse("NONE", member_id="m1", generation_id=4, protocol_type="consumer",
                             protocol_name="range", leader_id="m1", skip_assignment=True,
                             members=(JoinGroupMember("m1", "i1", j.protocols[0][1]),))
    s = only(m.on_response(j.correlation_id, resp), SyncGroupRequest)
    assert s.assignments == () and m.is_leader
    sync_ok(m, s, [T[1]])                       # the coordinator hands back the stored assignment
    assert m.owned == {T[1]}


def test_unstable_offsets_are_fetched_again():
    m = Member(cfg())
    sync_ok(m, only(join_ok(m, only(m.start(0), JoinGroupRequest), 1), SyncGroupRequest), [T[0]])
    f = only(m.poll(5), OffsetFetchRequest)
    m.on_response(f.correlation_id, OffsetFetchResponse("NONE", (
        OffsetFetchPartition(T[0], -1, None, "", "UNSTABLE_OFFSET_COMMIT"),)))
    assert m.consuming == frozenset()
    assert only(m.poll(6), OffsetFetchRequest).partitions == (T[0],)


def test_a_disconnect_fails_the_join_and_the_next_poll_rejoins_with_the_same_member_id():
    m = Member(cfg())
    j1 = only(m.start(0), JoinGroupRequest)
    j2 = only(m.on_response(j1.correlation_id, JoinGroupResponse("MEMBER_ID_REQUIRED", member_id="m1")),
              JoinGroupRequest)
    assert m.on_disconnect(5) == [] and not m.wants(j2.correlation_id) and not m.coordinator_known
    assert m.on_response(j2.correlation_id, JoinGroupResponse("NONE", member_id="m1", generation_id=1)) == []
    j3 = only(m.poll(10), JoinGroupRequest)
    assert j3.member_id == "m1" and m.coordinator_known


def test_a_join_answer_after_the_heartbeat_thread_reset_the_member_is_not_used():
    m = stable(Member(cfg()), gen=2)
    hb = only(m.heartbeat(10), HeartbeatRequest)
    c = only(m.commit({T[0]: 1}, now=11), OffsetCommitRequest)
    m.on_response(c.correlation_id, OffsetCommitResponse(((T[0], "REBALANCE_IN_PROGRESS"),)))
    j = only(m.poll(20), JoinGroupRequest)
    m.on_response(hb.correlation_id, HeartbeatResponse("UNKNOWN_MEMBER_ID"))   # reset while joining
    assert m.state == S.UNJOINED
    assert m.on_response(j.correlation_id, JoinGroupResponse(
        "NONE", member_id="m1", generation_id=3, protocol_type="consumer", protocol_name="range",
        leader_id="other")) == []                                               # UnjoinedGroupException
    assert m.generation == (-1, "", None)
    j2 = only(m.poll(30), JoinGroupRequest)
    assert j2.member_id == "" and m.owned == frozenset()
