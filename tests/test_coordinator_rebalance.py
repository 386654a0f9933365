"""The four rebalancing scenarios of issue #2 and the timers behind them: member joins a Stable
group, member leaves, member crashes and expires, commits during a rebalance; plus leader
selection, the join window, the pending-sync barrier (KAFKA-12890 fix) and session expiry rules."""
from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import TopicPartition

G = "groupId"
TP = TopicPartition("t", 0)


def make(**kw):
    cfg = dict(group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False)
    cfg.update(kw)
    return Harness(GroupCoordinator(CoordinatorConfig(**cfg)))


def stable(h, n, session=500, rebalance=500):
    cids = [h.join_dynamic(G, session=session, rebalance=rebalance) for _ in range(n)]
    for _ in range(20):                      # initial delay windows of 50 ms until the join completes
        if all(h.done(c) for c in cids):
            break
        h.advance(51)
    rs = [h.get(c) for c in cids]
    gen, leader = rs[0].generation_id, rs[0].leader_id
    mids = [r.member_id for r in rs]
    for m in mids:
        h.sync(G, gen, m, {x: x.encode()[-1:] for x in mids} if m == leader else {})
    assert h.c.group(G).state == "Stable"
    return mids, leader, gen


def test_member_joins_stable_group():
    h = make()
    mids, leader, gen = stable(h, 2)
    new = h.join_dynamic(G)
    g = h.c.group(G)
    assert g.state == "PreparingRebalance" and not h.done(new)
    # old members learn of the rebalance through heartbeats and rejoin
    assert all(h.heartbeat(G, gen, m) == "REBALANCE_IN_PROGRESS" for m in mids)
    old = [h.join(G, member_id=m) for m in mids]
    rs = [h.get(c) for c in old + [new]]
    assert {r.generation_id for r in rs} == {gen + 1}
    assert rs[0].leader_id == leader, "the leader keeps its role when it rejoins"
    assert [len(r.members) for r in rs].count(3) == 1
    assert h.c.group(G).state == "CompletingRebalance" and h.c.group(G).pending_sync_members == set(r.member_id for r in rs)


def test_member_leaves():
    h = make()
    mids, leader, gen = stable(h, 3)
    follower = [m for m in mids if m != leader][0]
    assert [m.error for m in h.leave(G, follower).members] == ["NONE"]
    assert h.c.group(G).state == "PreparingRebalance"
    rest = [h.join(G, member_id=m) for m in mids if m != follower]
    assert all(h.get(c).generation_id == gen + 1 for c in rest)
    assert follower not in h.c.group(G).members


def test_leader_leaves_and_another_rejoined_member_becomes_leader():
    h = make()
    mids, leader, gen = stable(h, 3)
    h.leave(G, leader)
    assert h.c.group(G).leader_id in mids and h.c.group(G).leader_id != leader
    rest = [h.join(G, member_id=m) for m in mids if m != leader]
    rs = [h.get(c) for c in rest]
    assert rs[0].leader_id in [r.member_id for r in rs]
    assert sum(1 for r in rs if r.members) == 1


def test_member_crashes_and_expires():
    h = make()
    mids, leader, gen = stable(h, 2, session=1000)
    crashed = [m for m in mids if m != leader][0]
    for _ in range(2):
        h.advance(400)
        assert h.heartbeat(G, gen, leader) == "NONE"
    h.advance(400)
    # the crashed member's session (re-armed when it synced, 1000 ms) has expired by now
    g = h.c.group(G)
    assert crashed not in g.members and g.state in ("PreparingRebalance", "CompletingRebalance")
    assert h.heartbeat(G, gen, leader) == "REBALANCE_IN_PROGRESS"
    r = h.get(h.join(G, member_id=leader))
    assert r.generation_id == gen + 1 and [m.member_id for m in r.members] == [leader]


def test_commits_during_a_rebalance():
    h = make()
    mids, leader, gen = stable(h, 2)
    follower = [m for m in mids if m != leader][0]
    h.join(G, member_id=leader)                                          # PreparingRebalance
    assert h.commit(G, gen, follower, {TP: 10}) == {TP: "NONE"}, "old generation may commit while preparing"
    h.join(G, member_id=follower)                                        # -> CompletingRebalance, gen + 1
    assert h.commit(G, gen, follower, {TP: 11}) == {TP: "ILLEGAL_GENERATION"}
    assert h.commit(G, gen + 1, follower, {TP: 12}) == {TP: "REBALANCE_IN_PROGRESS"}
    h.sync(G, gen + 1, leader, {leader: b"a", follower: b"b"})
    h.sync(G, gen + 1, follower)
    assert h.commit(G, gen + 1, follower, {TP: 13}) == {TP: "NONE"}
    assert h.fetch(G, (TP,)).partitions[0].offset == 13


def test_join_window_removes_dynamic_members_that_did_not_rejoin():
    h = make()
    mids, leader, gen = stable(h, 3, session=10000, rebalance=300)
    a = h.join(G, member_id=leader, session=10000, rebalance=300)
    h.advance(301)
    r = h.get(a)
    assert r.generation_id == gen + 1 and [m.member_id for m in r.members] == [leader]
    assert set(h.c.group(G).members) == {leader}


def test_heartbeating_member_that_never_rejoins_is_removed_at_end_of_join_window():
    h = make()
    mids, leader, gen = stable(h, 2, session=200, rebalance=1000)
    other = [m for m in mids if m != leader][0]
    a = h.join(G, member_id=leader)
    for _ in range(5):
        h.advance(150)
        assert h.heartbeat(G, gen, other) == "REBALANCE_IN_PROGRESS"
    assert other in h.c.group(G).members
    h.advance(300)
    assert h.done(a) and other not in h.c.group(G).members


def test_pending_sync_barrier_removes_member_that_never_syncs():
    h = make()
    mids, leader, gen = stable(h, 2, session=300, rebalance=1000)
    other = [m for m in mids if m != leader][0]
    h.join(G, member_id=leader, session=300, rebalance=1000)
    h.join(G, member_id=other, session=300, rebalance=1000)
    assert h.c.group(G).state == "CompletingRebalance"
    h.sync(G, gen + 1, leader, {leader: b"a", other: b"b"})
    assert h.c.group(G).state == "Stable"
    errors = []
    for _ in range(6):                               # `other` heartbeats but never syncs
        h.advance(200)
        errors.append(h.heartbeat(G, gen + 1, other))
        h.heartbeat(G, h.c.group(G).generation_id, leader)
    assert errors[:4] == ["NONE"] * 4 and errors[-1] == "UNKNOWN_MEMBER_ID"
    g = h.c.group(G)
    assert other not in g.members and leader in g.members
    assert g.state == "PreparingRebalance" and g.generation_id == gen + 1
    assert h.heartbeat(G, gen + 1, leader) == "REBALANCE_IN_PROGRESS"


def test_pending_sync_barrier_also_guards_the_leader():
    h = make()
    mids, leader, gen = stable(h, 2, session=300, rebalance=1000)
    other = [m for m in mids if m != leader][0]
    h.join(G, member_id=leader, session=300, rebalance=1000)
    h.join(G, member_id=other, session=300, rebalance=1000)
    s = h.sync(G, gen + 1, other)
    for _ in range(6):
        h.advance(200)
        h.heartbeat(G, gen + 1, leader)
    assert h.get(s).error == "REBALANCE_IN_PROGRESS"
    assert leader not in h.c.group(G).members


def test_session_expiry_in_completing_rebalance_rebalances():
    h = make()
    mids, leader, gen = stable(h, 2, session=100, rebalance=5000)
    h.join(G, member_id=leader, session=100, rebalance=5000)
    h.join(G, member_id=mids[1] if mids[0] == leader else mids[0], session=100, rebalance=5000)
    s = h.sync(G, gen + 1, [m for m in mids if m != leader][0])
    h.advance(101)
    # the follower is parked in SyncGroup (satisfied), the leader is not: it expires
    g = h.c.group(G)
    assert leader not in g.members and h.get(s).error == "REBALANCE_IN_PROGRESS"


def test_new_member_join_timeout_fails_a_parked_join():
    h = make(new_member_join_timeout_ms=1000)
    mids, leader, gen = stable(h, 1, session=500, rebalance=100000)
    new = h.join_dynamic(G)
    assert not h.done(new)
    for _ in range(3):
        h.advance(400)
        h.heartbeat(G, gen, leader)
    r = h.get(new)
    assert r.error == "UNKNOWN_MEMBER_ID" and r.member_id == ""


def test_nonjoined_static_member_keeps_group_preparing_until_session_expiry():
    h = make()
    a = h.join(G, instance_id="s1", require_known=False, session=2000, rebalance=300)
    b = h.join(G, instance_id="s2", require_known=False, session=2000, rebalance=300)
    h.advance(51); h.advance(301)
    ra, rb = h.get(a), h.get(b)
    gen = ra.generation_id
    h.sync(G, gen, ra.member_id, {ra.member_id: b"x", rb.member_id: b"y"})
    h.sync(G, gen, rb.member_id)
    # both static members go silent; a leader-triggered rebalance starts and nobody rejoins
    h.c.internal.force_prepare_rebalance(G)
    h.advance(301)
    g = h.c.group(G)
    assert g.state == "PreparingRebalance" and len(g.members) == 2, "re-armed: static members are kept"
    h.advance(2000)
    assert h.c.group(G).state == "Empty"


def test_generation_bumps_when_join_ends_empty():
    h = make()
    mids, leader, gen = stable(h, 1)
    h.leave(G, leader)
    g = h.c.group(G)
    assert g.state == "Empty" and g.generation_id == gen + 1 and g.protocol_name is None


def test_last_transitions_journal_every_state_change_of_a_call():
    h = make()
    mids, leader, gen = stable(h, 1)
    h.leave(G, leader)
    assert h.c.last_transitions == ((G, "Stable", "PreparingRebalance"), (G, "PreparingRebalance", "Empty"))
    h.heartbeat(G, gen, leader)
    assert h.c.last_transitions == ()
