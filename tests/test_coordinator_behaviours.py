"""Each historical coordinator behaviour changes the outcome of a concrete request sequence."""
from kverify.behaviours import by_component
from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import TopicPartition

G = "groupId"
TP = TopicPartition("t", 0)
SUPERSET = (("range", b""), ("roundrobin", b""))


def make(*behaviours, **kw):
    cfg = dict(group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False)
    cfg.update(kw)
    return Harness(GroupCoordinator(CoordinatorConfig(**cfg), behaviours=frozenset(behaviours)))


def two_members(h, session=500, rebalance=500):
    a = h.join_dynamic(G, session=session, rebalance=rebalance)
    b = h.join_dynamic(G, session=session, rebalance=rebalance)
    while not (h.done(a) and h.done(b)):
        h.advance(51)
    ra, rb = h.get(a), h.get(b)
    leader = ra.leader_id
    follower = rb.member_id if leader == ra.member_id else ra.member_id
    return leader, follower, ra.generation_id


def stable_two(h, **kw):
    leader, follower, gen = two_members(h, **kw)
    h.sync(G, gen, leader, {leader: b"L", follower: b"F"})
    h.sync(G, gen, follower)
    return leader, follower, gen


def test_every_declared_coordinator_behaviour_is_tested_here():
    names = {b.name for b in by_component("coordinator")}
    tested = {"stale-generation-commit", "no-generation-bump", "math-abs-coordinator", "leader-not-reelected",
              "kafka-12890-no-sync-barrier", "kafka-9801-static-replace-in-completing",
              "kafka-8500-duplicate-static-member", "kafka-13636-expire-while-rebalancing"}
    assert names == tested
    assert all(b.reference.startswith(("KAFKA-", "KIP-")) for b in by_component("coordinator"))


def stale_commit(*b):
    h = make(*b)
    leader, follower, gen = stable_two(h)
    h.join(G, member_id=leader)
    h.join(G, member_id=follower)
    h.sync(G, gen + 1, leader, {leader: b"L", follower: b"F"})
    h.sync(G, gen + 1, follower)
    return h.commit(G, gen, follower, {TP: 99})[TP]


def test_stale_generation_commit():
    assert stale_commit() == "ILLEGAL_GENERATION"
    assert stale_commit("stale-generation-commit") == "NONE"


def generations(*b):
    h = make(*b)
    leader, follower, gen = stable_two(h)
    h.join(G, member_id=leader)
    r = h.get(h.join(G, member_id=follower))
    return gen, r.generation_id


def test_no_generation_bump():
    gen, after = generations()
    assert after == gen + 1
    gen, after = generations("no-generation-bump")
    assert after == gen == 0


def test_math_abs_coordinator():
    plain = make()
    assert plain.c.internal.partition_of("polygenelubricants") == 0
    assert plain.get(plain.join("polygenelubricants")).error == "MEMBER_ID_REQUIRED"
    h = make("math-abs-coordinator")
    assert h.c.internal.partition_of("polygenelubricants") == -48
    assert h.get(h.join("polygenelubricants")).error == "NOT_COORDINATOR"


def leader_after_leave(*b):
    h = make(*b)
    leader, follower, gen = stable_two(h)
    h.leave(G, leader)
    r = h.get(h.join(G, member_id=follower))
    return leader, follower, h.c.group(G).leader_id, r


def test_leader_not_reelected():
    leader, follower, now_leader, r = leader_after_leave()
    assert now_leader == follower and r.leader_id == follower and len(r.members) == 1
    leader, follower, now_leader, r = leader_after_leave("leader-not-reelected")
    assert now_leader == leader and r.leader_id == leader and r.members == (), "nobody is told to assign"


def stuck_without_sync(*b):
    h = make(*b, group_max_session_timeout_ms=600000)
    leader, follower, gen = two_members(h, session=300, rebalance=1000)
    h.sync(G, gen, follower)                         # the leader heartbeats but never syncs
    for _ in range(20):
        h.advance(200)
        h.heartbeat(G, gen, leader)
        h.heartbeat(G, h.c.group(G).generation_id, follower)
    return h.c.group(G)


def test_kafka_12890_no_sync_barrier():
    g = stuck_without_sync()
    assert g.state != "CompletingRebalance"
    g = stuck_without_sync("kafka-12890-no-sync-barrier")
    assert g.state == "CompletingRebalance" and len(g.members) == 2


def static_replace_in_completing(*b):
    h = make(*b)
    a = h.join(G, instance_id="leader", require_known=False, protocols=SUPERSET)
    c = h.join(G, instance_id="follower", require_known=False, protocols=SUPERSET)
    h.advance(51)
    h.advance(51)
    ra, rc = h.get(a), h.get(c)
    assert h.c.group(G).state == "CompletingRebalance"
    new = h.join(G, instance_id="follower", require_known=False, protocols=SUPERSET)   # restarted follower
    s = h.sync(G, ra.generation_id, ra.member_id, {ra.member_id: b"L", rc.member_id: b"F"})
    return h, new, s


def test_kafka_9801_static_replace_in_completing():
    h, new, s = static_replace_in_completing()
    assert not h.done(new) and h.get(s).error == "REBALANCE_IN_PROGRESS"
    h, new, s = static_replace_in_completing("kafka-9801-static-replace-in-completing")
    r = h.get(new)
    assert r.error == "NONE" and h.get(s).error == "NONE" and h.c.group(G).state == "Stable"
    assert h.get(h.sync(G, r.generation_id, r.member_id)).assignment == b"", "replaced member gets nothing"


def duplicate_static(*b):
    h = make(*b)
    leader, follower, gen = stable_two(h)
    h.join(G, member_id=leader)                                   # PreparingRebalance
    first = h.join(G, instance_id="dup", require_known=False)
    second = h.join(G, instance_id="dup", require_known=False)    # a second process, same instance id
    h.join(G, member_id=follower)
    return h, first, second


def test_kafka_8500_duplicate_static_member():
    h, first, second = duplicate_static()
    assert h.get(first).error == "FENCED_INSTANCE_ID"
    assert sum(1 for m in h.c.group(G).members.values() if m.group_instance_id == "dup") == 1
    h, first, second = duplicate_static("kafka-8500-duplicate-static-member")
    assert h.get(first).error == "NONE" and h.get(second).error == "NONE"
    assert sum(1 for m in h.c.group(G).members.values() if m.group_instance_id == "dup") == 2


def offsets_left_while_rebalancing(*b):
    from kverify.impl.coordinator.subscription import encode_subscription
    day = 24 * 3600 * 1000
    h = make(*b, offsets_expiration_enabled=True, offsets_retention_ms=day, group_max_session_timeout_ms=10 * day)
    cid = h.join_dynamic(G, protocols=(("range", encode_subscription(["t"])),), session=3 * day, rebalance=5 * day)
    h.advance(51)
    r = h.get(cid)
    h.sync(G, r.generation_id, r.member_id, {r.member_id: b""})
    h.commit(G, r.generation_id, r.member_id, {TopicPartition("old-topic", 0): 2})
    h.c.internal.force_prepare_rebalance(G)
    h.advance(day + 600000)
    assert h.c.group(G).state == "PreparingRebalance"
    return dict(h.c.group(G).offsets)


def test_kafka_13636_expire_while_rebalancing():
    assert offsets_left_while_rebalancing() != {}
    assert offsets_left_while_rebalancing("kafka-13636-expire-while-rebalancing") == {}


def static_leader_not_rejoining(*b):
    h = make(*b)
    a = h.join(G, instance_id="lead", require_known=False, protocols=SUPERSET, session=100000, rebalance=300)
    c = h.join(G, instance_id="foll", require_known=False, protocols=SUPERSET, session=100000, rebalance=300)
    h.advance(51)
    h.advance(51)
    ra, rc = h.get(a), h.get(c)
    leader = ra.leader_id
    follower = rc.member_id if leader == ra.member_id else ra.member_id
    h.sync(G, ra.generation_id, leader, {leader: b"L", follower: b"F"})
    h.sync(G, ra.generation_id, follower)
    h.c.internal.force_prepare_rebalance(G)
    f = h.join(G, member_id=follower, instance_id=h.c.group(G).members[follower].group_instance_id,
               protocols=SUPERSET, session=100000, rebalance=300)
    h.advance(301)                       # the static leader never rejoins: the join window closes
    return leader, follower, h.get(f)


def test_leader_not_reelected_when_static_leader_does_not_rejoin_kafka_8220():
    leader, follower, r = static_leader_not_rejoining()
    assert r.leader_id == follower and len(r.members) == 2, "a rejoined member is elected and assigns"
    leader, follower, r = static_leader_not_rejoining("leader-not-reelected")
    assert r.leader_id == leader and r.members == (), "the absent leader is named: nobody assigns"
