"""Online checks over the broker's trace: silent on the reference coordinator, a violation under a historical
behaviour, written as a counterexample record that `kverify replay` re-runs on the reference coordinator."""
import json
import time

import pytest

from kverify.wire.checks import OnlineChecks
from kverify.wire.client import GroupMember, WireClient
from kverify.wire.record import attach, replay
from kverify.wire.server import Broker, BrokerConfig
from kverify.reports.record import Counterexample

T0 = [("t0", 0), ("t0", 1)]


def _broker(behaviours=()):
    b = Broker(BrokerConfig(clock="manual", topics={"t0": 2}, behaviours=frozenset(behaviours),
                            group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=0))
    return b


def _wait_handled(b, n, timeout=5.0):
    end = time.monotonic() + timeout
    while b.handled < n:
        assert time.monotonic() < end, f"broker handled {b.handled} of {n} requests"
        time.sleep(0.001)


def _two_member_rebalance(b, port):
    """A joins alone and gets both partitions (generation 1), B joins, both rejoin; A leads and gives
    t0-1 to B. Returns the two members after their second SyncGroup."""
    a = GroupMember(WireClient("127.0.0.1", port, client_id="ca"), "g1", session_timeout_ms=10000)
    bm = GroupMember(WireClient("127.0.0.1", port, client_id="cb"), "g1", session_timeout_ms=10000)
    a.finish_join(a.send_join())
    a.finish_sync(a.send_sync({a.member_id: T0}))
    assert a.owned == T0
    a.fetch(T0)
    h = b.handled
    jb = bm.send_join()                           # MEMBER_ID_REQUIRED, then the join with the given id
    _wait_handled(b, h + 2)                       # B's second join is parked: the group is rebalancing
    assert a.heartbeat() == "REBALANCE_IN_PROGRESS"
    ja = a.send_join()                            # eager: A owns nothing while it rejoins
    a.finish_join(ja)
    bm.finish_join(jb)
    assert a.leader == a.member_id
    sa = a.send_sync({a.member_id: [T0[0]], bm.member_id: [T0[1]]})
    sb = bm.send_sync()
    a.finish_sync(sa)
    bm.finish_sync(sb)
    return a, bm


def test_checks_silent_on_the_reference_coordinator(tmp_path):
    b = _broker()
    rec = attach(b, str(tmp_path))
    port = b.start()
    try:
        a, bm = _two_member_rebalance(b, port)
        assert (a.generation, bm.generation) == (2, 2)
        assert bm.owned == [T0[1]] and a.owned == [T0[0]]
        a.fetch([T0[0]])
        bm.fetch([T0[1]])
        assert bm.commit({T0[1]: 5}) == {T0[1]: "NONE"}
        assert a.commit({T0[0]: 7}, generation=1) == {T0[0]: "ILLEGAL_GENERATION"}   # a zombie's commit is fenced
    finally:
        b.stop()
    assert rec.errors == [] and b.errors == []
    assert rec.checks.events > 20                 # the checks did see the traffic
    assert rec.violations == [] and rec.reports == []


def test_no_generation_bump_breaks_exclusive_ownership_and_replays(tmp_path):
    b = _broker(["no-generation-bump"])
    rec = attach(b, str(tmp_path))
    port = b.start()
    try:
        a, bm = _two_member_rebalance(b, port)
        assert a.generation == bm.generation == 0     # the bug: no completed join bumps the generation
    finally:
        b.stop()
    names = {v.invariant for v in rec.violations}
    assert "exclusive-ownership" in names, rec.violations
    path = next(p for p in rec.reports if "exclusive-ownership" in p)
    cx = Counterexample.load(path)
    assert cx.model == "wire" and cx.behaviours == ["no-generation-bump"]
    assert "t0-1" in cx.violation and "generation 0" in cx.violation
    assert any(s.src == "cb" for s in cx.trace) and "broker" in cx.participants
    html = (tmp_path / "exclusive-ownership" / "counterexample.html").read_text()
    assert "<svg" in html and "SyncGroup" in html
    reproduced, msg = replay(cx)
    assert reproduced, msg
    # the same recorded requests on the reference coordinator without the behaviour: fixed
    data = json.loads(open(path).read())
    data["behaviours"] = []
    fixed, msg2 = replay(Counterexample.from_json(data))
    assert not fixed and "no longer reproduces" in msg2, msg2


def test_stale_generation_commit_breaks_committed_offset_safety(tmp_path):
    b = _broker(["stale-generation-commit"])
    rec = attach(b, str(tmp_path))
    port = b.start()
    try:
        a, bm = _two_member_rebalance(b, port)
        # a zombie A still acting under generation 1 commits t0-1, which generation 2 gave to B
        assert a.commit({T0[1]: 9}, generation=1) == {T0[1]: "NONE"}
    finally:
        b.stop()
    v = [v for v in rec.violations if v.invariant == "committed-offset-safety"]
    assert v and "generation 1" in v[0].message, rec.violations
    cx = Counterexample.load(next(p for p in rec.reports if "committed-offset-safety" in p))
    assert replay(cx)[0]


def _ev(seq, d, api, conn, corr, body, client_id, decoded=None):
    e = {"seq": seq, "clock_ms": 0, "dir": d, "conn": conn, "api": api, "corr": corr, "client_id": client_id,
         "body": body}
    if decoded is not None:
        e["decoded"] = decoded
    return e


def _sync(seq, conn, cid, member, gen, parts):
    return [_ev(seq, "in", "SyncGroup", conn, 1, {"group_id": "g", "generation_id": gen, "member_id": member}, cid),
            _ev(seq + 1, "out", "SyncGroup", conn, 1, {"error_code": 0}, cid, {"assignment": {"t0": parts}})]


def _fetch(seq, conn, cid, parts):
    return _ev(seq, "in", "Fetch", conn, 9, {"topics": [{"topic": "t0", "partitions": [{"partition": p}
                                                                                       for p in parts]}]}, cid)


def test_no_double_fetch_only_when_both_believe_and_both_fetch():
    # A owns t0-0 (gen 1) and fetches it; B is given t0-0 in gen 2 while A never rejoined; both fetch: violation
    evs = _sync(1, 1, "A", "a", 1, [0]) + [_fetch(3, 2, "A", [0])] + _sync(4, 3, "B", "b", 2, [0]) + \
        [_fetch(6, 4, "B", [0]), _fetch(7, 2, "A", [0])]
    oc = OnlineChecks(only={"no-double-fetch"})
    for e in evs:
        oc.feed(e)
    assert [v.invariant for v in oc.violations] == ["no-double-fetch"]
    # a crashed owner that fetched only BEFORE the new owner got the partition is no double fetch
    oc = OnlineChecks(only={"no-double-fetch"})
    for e in evs[:-1]:
        oc.feed(e)
    assert oc.violations == []
    # an owner that rejoined (eager: revoked everything) before the handover: no double fetch
    rejoin = _ev(3, "in", "JoinGroup", 1, 2, {"group_id": "g", "member_id": "a"}, "A")
    oc = OnlineChecks(only={"no-double-fetch"})
    for e in evs[:3] + [rejoin] + evs[3:]:
        oc.feed(e)
    assert oc.violations == []


def test_generation_monotonicity_per_member():
    evs = _sync(1, 1, "A", "a", 3, [0]) + _sync(3, 1, "A", "a", 2, [0])
    oc = OnlineChecks()
    for e in evs:
        oc.feed(e)
    assert [v.invariant for v in oc.violations] == ["generation-monotonicity"]
    assert "generation 3 and then under generation 2" in oc.violations[0].message


@pytest.mark.parametrize("bad", [None, {"events": "x"}])
def test_replay_refuses_a_record_without_events(bad):
    cx = Counterexample(invariant="exclusive-ownership", statement="", model="wire", params={}, behaviours=[],
                        engine="wire-online", violation_step=0, violation="", extra={} if bad is None else bad)
    ok, msg = replay(cx)
    assert not ok and "extra.events" in msg


def _commit(seq, conn, cid, member, gen, parts, err=0, instance=None):
    req = {"group_id": "g", "generation_id_or_member_epoch": gen, "member_id": member, "group_instance_id": instance,
           "topics": [{"name": "t0", "partitions": [{"partition_index": p, "committed_offset": 1} for p in parts]}]}
    resp = {"topics": [{"name": "t0", "partitions": [{"partition_index": p, "error_code": err} for p in parts]}]}
    return [_ev(seq, "in", "OffsetCommit", conn, 5, req, cid), _ev(seq + 1, "out", "OffsetCommit", conn, 5, resp, cid)]


def _run(evs, only=None):
    oc = OnlineChecks(only=only)
    for e in evs:
        oc.feed(e)
    return oc.violations


def test_commit_for_another_members_partition_in_the_current_generation():
    base = _sync(1, 1, "A", "a", 1, [0]) + _sync(3, 2, "B", "b", 1, [1])
    bad = _run(base + _commit(5, 1, "A", "a", 1, [1]))
    assert [v.invariant for v in bad] == ["committed-offset-safety"] and "gave it to b" in bad[0].message
    assert _run(base + _commit(5, 1, "A", "a", 1, [0])) == []                 # its own partition
    assert _run(base + _commit(5, 1, "A", "a", 1, [1], err=22)) == []         # refused: nothing acknowledged
    assert _run(base + _commit(5, 9, "admin", "", -1, [1])) == []             # a standalone commit is not judged


def test_a_static_member_replaced_under_a_new_member_id_is_the_same_owner():
    sync = lambda seq, conn, member: [  # noqa: E731
        _ev(seq, "in", "SyncGroup", conn, 1, {"group_id": "g", "generation_id": 3, "member_id": member,
                                               "group_instance_id": "i1"}, "S"),
        _ev(seq + 1, "out", "SyncGroup", conn, 1, {"error_code": 0}, "S", {"assignment": {"t0": [0]}})]
    assert _run(sync(1, 1, "old") + sync(3, 2, "new")) == []
    assert [v.invariant for v in _run(_sync(1, 1, "A", "a", 3, [0]) + _sync(3, 2, "B", "b", 3, [0]))] == \
        ["exclusive-ownership"]


def test_unanswered_and_foreign_events_are_ignored():
    evs = [_ev(1, "in", "SyncGroup", 1, 1, {"group_id": "g", "generation_id": 1, "member_id": "a"}, "A"),
           {"seq": 2, "dir": "close", "conn": 1},
           _ev(3, "out", "SyncGroup", 1, 1, {"error_code": 0}, "A", {"assignment": {"t0": [0]}}),   # after close
           _ev(4, "out", "SyncGroup", 7, 1, {"error_code": 0}, "Z", None),                          # no request
           {"seq": 5, "dir": "fault", "fault": "control {}"}, {"seq": 6, "dir": "start", "body": {}}]
    assert _run(evs) == []
