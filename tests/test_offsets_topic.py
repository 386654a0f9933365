"""__consumer_offsets under the coordinator: commits answered only once acknowledged by the ISR,
coordinator movement on leader election (unload -> NOT_COORDINATOR, load -> LOAD_IN_PROGRESS), and
the end-to-end durability of committed offsets under clean versus unclean leader election."""
from kverify.impl.coordinator.messages import (JoinGroupRequest, OffsetAndMetadata, OffsetCommitRequest,
                                               OffsetFetchRequest, TopicPartition)
from kverify.impl.replication import ReplicationConfig
from kverify.impl.replication.offsets_topic import OFFSETS_TOPIC, OffsetsTopicWorld

G = "group-1"
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
OTP = (OFFSETS_TOPIC, 0)
LAG = 30000


def make(behaviours=(), required_acks=-1):
    w = OffsetsTopicWorld(brokers=(0, 1, 2, 3), partitions=1, replication_factor=3, required_acks=required_acks,
                          behaviours=frozenset(behaviours), controller=0, assignment={0: (1, 2, 3)},
                          replication_config=ReplicationConfig(replica_lag_time_max_ms=LAG))
    w.complete_loads()
    assert w.coordinator_for(G) == 1
    return w


_cid = [100]


def commit(w, offsets, group=G):
    _cid[0] += 1
    req = OffsetCommitRequest(group, offsets=tuple((tp, OffsetAndMetadata(o)) for tp, o in offsets),
                              correlation_id=_cid[0])
    return _cid[0], w.handle(w.coordinator_for(G), req)


def fetch(w, broker, group=G):
    replies = w.handle(broker, OffsetFetchRequest(group, partitions=None, require_stable=False, correlation_id=7))
    assert len(replies) == 1
    resp = replies[0][1].response
    return resp.error, {p.partition: p.offset for p in resp.partitions}


def responses(replies, cid):
    return [r.response for _, r in replies if r.correlation_id == cid]


def test_commit_is_answered_only_after_the_isr_has_it():
    w = make()
    cid, out = commit(w, [(T0, 10)])
    assert responses(out, cid) == []                        # waiting for acks=all
    out = w.run("replicate", 2, OTP) + w.run("replicate", 3, OTP)
    assert responses(out, cid) == []                        # followers fetched, HW not yet past it
    out = w.run("replicate", 2, OTP) + w.run("replicate", 3, OTP)
    [resp] = responses(out, cid)
    assert resp.partition_errors == ((T0, "NONE"),)
    assert fetch(w, 1) == ("NONE", {T0: 10})


def test_required_acks_1_answers_at_once():
    w = make(required_acks=1)
    cid, out = commit(w, [(T0, 3)])
    assert responses(out, cid)[0].partition_errors == ((T0, "NONE"),)


def test_leader_move_unloads_old_and_loads_new_coordinator():
    w = make()
    # a JoinGroup parked in the old coordinator (initial rebalance delay) ...
    w.handle(1, JoinGroupRequest(G, correlation_id=1, protocols=(("range", b""),)))
    [(_, first)] = w.handle(1, JoinGroupRequest(G, correlation_id=1, protocols=(("range", b""),)))
    member = first.response.member_id
    assert w.handle(1, JoinGroupRequest(G, member_id=member, correlation_id=2, protocols=(("range", b""),))) == []
    cid, out = commit(w, [(T0, 1)], group="group-2")       # ... and a commit of another group
    out += w.replicate_all()
    assert responses(out, cid)[0].partition_errors == ((T0, "NONE"),)
    assert w.cluster.controlled_shutdown(1) == []
    out = w.run("deliver_all")
    assert [r.response.error for b, r in out if r.correlation_id == 2] == ["NOT_COORDINATOR"]
    assert w.coordinator_for(G) == 2 and w.loading() == [(2, 0)]
    assert fetch(w, 2)[0] == "COORDINATOR_LOAD_IN_PROGRESS"
    assert fetch(w, 1)[0] == "NOT_COORDINATOR"
    w.complete_loads()
    assert fetch(w, 2, "group-2") == ("NONE", {T0: 1})


def test_clean_election_keeps_every_acked_commit():
    w = make()
    acked = {}
    for tp, off in ((T0, 10), (T1, 20), (T0, 11)):
        cid, out = commit(w, [(tp, off)])
        out += w.replicate_all()
        assert responses(out, cid)[0].partition_errors == ((tp, "NONE"),)
        acked[tp] = off
    w.run("crash", 1, lossy=True)                           # the coordinator's broker dies
    w.run("handle_broker_changes")
    w.run("deliver_all")
    assert w.coordinator_for(G) == 2                        # clean election: first live ISR replica
    assert fetch(w, 2)[0] == "COORDINATOR_LOAD_IN_PROGRESS"
    w.complete_loads()
    assert fetch(w, 2) == ("NONE", acked)


def lagging_replica_run(behaviours):
    """All three replicas have T0=5; then broker 3 falls out of the ISR; T0=9 and T1=7 are committed
    and acked with ISR {1,2}; brokers 1 and 2 die."""
    w = make(behaviours)
    cid, out = commit(w, [(T0, 5)])
    out += w.replicate_all()
    assert responses(out, cid)[0].partition_errors == ((T0, "NONE"),)
    cid9, out = commit(w, [(T0, 9)])                        # broker 3 has stopped fetching
    out += w.run("replicate", 2, OTP) + w.run("replicate", 2, OTP)
    assert responses(out, cid9) == []                       # waits for 3, still in the ISR
    out += w.advance(LAG + 1)
    out += w.run("replicate", 2, OTP)
    out += w.run("isr_check", 1, OTP)
    out += w.run("deliver_all")
    assert w.cluster.state(OTP).isr == (1, 2)
    assert responses(out, cid9)[0].partition_errors == ((T0, "NONE"),)
    cid, out = commit(w, [(T1, 7)])
    out += w.run("replicate", 2, OTP) + w.run("replicate", 2, OTP)
    assert responses(out, cid)[0].partition_errors == ((T1, "NONE"),)
    assert fetch(w, 1) == ("NONE", {T0: 9, T1: 7})
    w.run("crash", 1)
    w.run("crash", 2)
    w.run("handle_broker_changes")
    w.run("deliver_all")
    w.complete_loads()
    return w


def test_unclean_election_moves_a_committed_offset_back_and_loses_another():
    w = lagging_replica_run({"unclean-election"})
    assert w.coordinator_for(G) == 3
    err, offsets = fetch(w, 3)
    assert err == "NONE"
    assert offsets[T0] == 5                                 # acked 9, now 5: went backwards
    assert offsets.get(T1, -1) == -1                        # acked 7, now gone
    assert w.cluster.missing_acked(OTP) != []


def test_clean_election_waits_for_an_isr_member_and_keeps_offsets():
    w = lagging_replica_run(())
    assert w.coordinator_for(G) == -1                       # no live ISR member: offline, no coordinator
    assert fetch(w, 3)[0] == "NOT_COORDINATOR"
    w.run("restart", 2)
    w.run("handle_broker_changes")
    w.run("deliver_all")
    w.complete_loads()
    assert w.coordinator_for(G) == 2
    assert fetch(w, 2) == ("NONE", {T0: 9, T1: 7})


def test_world_copy_is_independent():
    w = make()
    commit(w, [(T0, 4)])
    v = w.copy()
    assert v.snapshot() == w.snapshot()
    v.replicate_all()
    assert v.snapshot() != w.snapshot()
    assert fetch(v, 1) == ("NONE", {T0: 4})
    assert fetch(w, 1)[1] == {}


def test_unacked_commit_fails_with_not_coordinator_but_can_survive_the_move():
    """Reference fact 66: a commit appended but not acknowledged when leadership moves is answered
    NOT_COORDINATOR by the old coordinator, yet the new leader keeps its whole log and loads it."""
    w = make()
    cid, out = commit(w, [(T0, 42)])
    out += w.run("replicate", 2, OTP) + w.run("replicate", 2, OTP)   # 2 has it, 3 does not: no ack
    assert responses(out, cid) == []
    assert w.cluster.controlled_shutdown(1) == []
    out = w.run("deliver_all")
    [resp] = responses(out, cid)
    assert resp.partition_errors == ((T0, "NOT_COORDINATOR"),)
    w.complete_loads()
    assert w.coordinator_for(G) == 2
    assert fetch(w, 2) == ("NONE", {T0: 42})


def offsets_walk(seed, steps, behaviours=()):
    """Random commits interleaved with random cluster steps (no lossy crashes; broker 0, the
    controller, stays up). After every load of a new coordinator, every commit that was answered
    NONE must be fetched back at least as high. Returns the first violation or None."""
    import random

    from kverify.impl.replication.steps import apply, enabled_steps
    rng = random.Random(seed)
    w = OffsetsTopicWorld(brokers=(0, 1, 2, 3), partitions=1, replication_factor=3, controller=0,
                          behaviours=frozenset(behaviours), assignment={0: (1, 2, 3)},
                          replication_config=ReplicationConfig(min_insync_replicas=2, replica_lag_time_max_ms=100))
    w.complete_loads()
    sent, acked, cid = {}, {}, 1000
    for i in range(steps):
        x = rng.random()
        check = False
        if x < 0.15 and w.coordinator_for(G) >= 0:
            cid += 1
            tp = TopicPartition("t", rng.randrange(2))
            sent[cid] = (tp, i)
            out = w.handle(w.coordinator_for(G), OffsetCommitRequest(
                G, offsets=((tp, OffsetAndMetadata(i)),), correlation_id=cid))
        elif x < 0.2:
            loads = w.loading()
            out = w.complete_loads()
            b = w.coordinator_for(G)
            check = (b, 0) in loads and w.cluster.brokers[b].alive and w.cluster.replica(b, OTP).role == "leader"
        else:
            options = [s for s in enabled_steps(w.cluster, values=("x",), advance_ms=60)
                       if s[0] not in ("produce", "consume") and not (s[0] in ("crash", "restart") and s[1] == 0)]
            weights = [0.05 if s[0] == "crash" else 0.3 if s[0] == "drop" else 1.0 for s in options]
            apply(w.cluster, rng.choices(options, weights)[0])
            out = w.sync()
        for _b, r in out:
            if r.correlation_id in sent:
                tp, off = sent.pop(r.correlation_id)
                if r.response.partition_errors[0][1] == "NONE":
                    acked[tp] = max(off, acked.get(tp, -1))
        if check:
            err, got = fetch(w, w.coordinator_for(G))
            lost = {tp: off for tp, off in acked.items() if got.get(tp, -1) < off}
            if err == "NONE" and lost:
                return i, lost, got
    return None


def test_random_walks_keep_acked_commits_across_coordinator_moves():
    for seed in range(25):
        assert offsets_walk(seed, 250) is None, f"seed {seed}"


def test_random_walks_with_unclean_election_lose_commits():
    for seed in range(70):
        bad = offsets_walk(seed, 400, {"unclean-election"})
        if bad is not None:
            step, lost, got = bad
            assert all(got.get(tp, -1) < off for tp, off in lost.items())
            return
    raise AssertionError("no seed lost an acked commit under unclean election")
