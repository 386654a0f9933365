"""copy()/snapshot() and partition ownership: loading, election (reload from the log), resignation."""
import random

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, MemoryOffsetsLog
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import TopicPartition

G = "groupId"
TP = TopicPartition("t", 0)


def make(log=None, **kw):
    cfg = dict(group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50,
               offsets_expiration_enabled=False, offsets_partitions=2, owned_partitions=(0,))
    cfg.update(kw)
    return Harness(GroupCoordinator(CoordinatorConfig(**cfg), log=log))


def stable_two(h):
    a, b = h.join_dynamic(G), h.join_dynamic(G)
    while not (h.done(a) and h.done(b)):
        h.advance(51)
    ra, rb = h.get(a), h.get(b)
    leader = ra.leader_id
    follower = rb.member_id if leader == ra.member_id else ra.member_id
    h.sync(G, ra.generation_id, leader, {leader: b"L", follower: b"F"})
    h.sync(G, ra.generation_id, follower)
    return leader, follower, ra.generation_id


def random_ops(h, rng, n):
    for _ in range(n):
        g = h.c.group(G)
        mids = list(g.members) if g else []
        gen = g.generation_id if g else 0
        op = rng.randrange(6)
        if op == 0 or not mids:
            h.join_dynamic(G) if rng.random() < 0.5 else h.join(G, require_known=False)
        elif op == 1:
            h.join(G, member_id=rng.choice(mids))
        elif op == 2:
            m = rng.choice(mids)
            h.sync(G, gen, m, {x: b"a" for x in mids} if g.leader_id == m else {})
        elif op == 3:
            h.heartbeat(G, gen, rng.choice(mids))
        elif op == 4:
            h.commit(G, gen, rng.choice(mids), {TP: rng.randrange(100)})
        else:
            h.advance(rng.choice([1, 50, 200, 501]))


def test_copy_is_independent_and_snapshots_track_equality():
    h = make()
    stable_two(h)
    snap = h.c.snapshot()
    c2 = h.c.copy()
    assert c2.snapshot() == snap and hash(snap) == hash(c2.snapshot())
    h2 = Harness(c2)
    h2._next = h._next
    h2.join(G, require_known=False)
    assert c2.snapshot() != snap and h.c.snapshot() == snap, "the original did not move"
    h.join(G, require_known=False)
    assert h.c.snapshot() == c2.snapshot(), "same request on both -> same state again"


def test_same_seed_same_run_and_copies_replay_identically():
    def run(seed):
        h = make()
        random_ops(h, random.Random(seed), 150)
        return h.c.snapshot(), h.responses
    assert run(3) == run(3)
    h = make()
    rng = random.Random(11)
    random_ops(h, rng, 60)
    fork = Harness(h.c.copy())
    fork._next = h._next
    state = rng.getstate()
    random_ops(h, rng, 60)
    rng2 = random.Random()
    rng2.setstate(state)
    random_ops(fork, rng2, 60)
    assert fork.c.snapshot() == h.c.snapshot()


def test_requests_while_loading():
    h = make()
    h.commit(G, -1, "", {TP: 1})
    h.c.internal.set_partition_loading(0)
    assert h.get(h.join(G)).error == "COORDINATOR_LOAD_IN_PROGRESS"
    assert h.get(h.sync(G, 1, "m")).error == "REBALANCE_IN_PROGRESS"
    assert h.heartbeat(G, 1, "m") == "NONE"
    assert h.commit(G, 1, "m", {TP: 2}) == {TP: "COORDINATOR_LOAD_IN_PROGRESS"}
    assert h.describe(G).error == "COORDINATOR_LOAD_IN_PROGRESS"
    assert h.delete_groups(G) == {G: "COORDINATOR_LOAD_IN_PROGRESS"}
    lst = h.list_groups()
    assert lst.error == "COORDINATOR_LOAD_IN_PROGRESS" and [g for g, _, _ in lst.groups] == [G]


def test_resignation_answers_parked_requests_and_reload_restores_last_persisted_generation():
    log = MemoryOffsetsLog()
    h = make(log=log)
    leader, follower, gen = stable_two(h)
    assert h.commit(G, gen, follower, {TP: 42}) == {TP: "NONE"}
    # a new rebalance reaches CompletingRebalance in memory only (gen + 1 is never persisted)
    h.join(G, member_id=leader)
    h.join(G, member_id=follower)
    parked = h.sync(G, gen + 1, follower)
    assert not h.done(parked)
    h._record(h.c.on_resignation(0, 5))
    assert h.get(parked).error == "NOT_COORDINATOR"
    assert h.c.group(G) is None
    assert h.c.on_resignation(0, 5) == []
    h2 = make(log=log, owned_partitions=())
    assert h2.get(h2.join(G)).error == "NOT_COORDINATOR"
    h2.c.on_election(0, 6, log.records(0))
    g = h2.c.group(G)
    assert g.state == "Stable" and g.generation_id == gen, "ghost generation: back to the last persisted one"
    assert set(g.members) == {leader, follower} and g.members[follower].assignment == b"F"
    assert h2.fetch(G, (TP,)).partitions[0].offset == 42
    assert h2.heartbeat(G, gen, follower) == "NONE"
    # every member got a fresh session timer: silent members expire
    h2.advance(501)
    assert h2.c.group(G).state != "Stable"


def test_resignation_replies():
    h = make()
    leader, follower, gen = stable_two(h)
    h.join(G, member_id=leader)
    replies = h.c.on_resignation(0, 1)
    assert [(type(r.response).__name__, r.response.error) for r in replies] == [("JoinGroupResponse", "NOT_COORDINATOR")]
    assert h.get(h.join(G)).error == "NOT_COORDINATOR"


def test_stale_epochs_are_ignored():
    h = make()
    h.commit(G, -1, "", {TP: 1})
    h.c.on_election(0, 5, ())
    assert h.c.on_resignation(0, 4) == [] and h.c.group(G) is not None, "older epoch: ignored"
    h.c.on_resignation(0, 5)
    assert h.c.group(G) is None and 0 not in h.c.owned_partitions()
    h.c.on_election(0, 4, ())
    assert 0 not in h.c.owned_partitions(), "older epoch: ignored"
    h.c.on_election(0, 7, ())
    assert 0 in h.c.owned_partitions()


def test_election_of_an_owned_partition_reloads_nothing():
    log = MemoryOffsetsLog()
    h = make(log=log)
    leader, follower, gen = stable_two(h)
    h.join(G, member_id=leader)                     # in-memory rebalance in progress
    before = h.c.snapshot()
    h.c.on_election(0, 3, log.records(0))
    assert h.c.group(G).state == "PreparingRebalance"
    assert h.c.snapshot()[1:3] == before[1:3]


def test_static_replacement_pending_persistence_survives_unload_like_kafka():
    from kverify.impl.coordinator import DeferredOffsetsLog
    log = DeferredOffsetsLog()
    h = make(log=log)
    a = h.join(G, instance_id="s1", require_known=False)
    h.advance(51)
    r = h.get(a)
    h.sync(G, r.generation_id, r.member_id, {r.member_id: b"x"})
    for aid, _, _ in h.c.pending_appends():
        h.complete_append(aid)
    assert h.c.group(G).state == "Stable"
    new = h.join(G, instance_id="s1", require_known=False)
    (aid, _, _), = h.c.pending_appends()
    assert not h.done(new) and h.c.group(G).members[h.c.group(G).static_members["s1"]].awaiting_join
    h._record(h.c.on_resignation(0, 1))
    assert not h.done(new), "unloading a Stable group answers parked SyncGroups only"
    h.complete_append(aid)
    resp = h.get(new)
    assert resp.error == "NONE" and resp.generation_id == r.generation_id and resp.member_id.startswith("s1-")


def test_commit_after_a_reload_is_newer_than_every_loaded_offset():
    """Found by offsets-world exploration: appends after a load must win over loaded records."""
    log = MemoryOffsetsLog()
    h = make(log=log)
    assert h.commit("simple", -1, "", {TP: 1}) == {TP: "NONE"}
    h2 = make(log=MemoryOffsetsLog(), owned_partitions=())
    h2.c.on_election(0, 1, log.records(0))
    assert h2.fetch("simple", (TP,)).partitions[0].offset == 1
    assert h2.commit("simple", -1, "", {TP: 2}) == {TP: "NONE"}
    assert h2.fetch("simple", (TP,)).partitions[0].offset == 2


def test_a_partition_named_twice_in_one_commit_keeps_its_last_entry_in_memory_and_after_a_reload():
    """Kafka keeps the last entry (a map in KafkaApis; records replayed in order by the new coordinator); the
    in-memory offset and the one a new coordinator loads from the same records must agree."""
    from kverify.impl.coordinator.messages import OffsetAndMetadata, OffsetCommitRequest

    log = MemoryOffsetsLog()
    h = make(log=log)
    items = ((TP, OffsetAndMetadata(5)), (TP, OffsetAndMetadata(9)))
    cid = h.send(lambda c: OffsetCommitRequest(G, -1, "", None, items, c))
    assert dict(h.get(cid).partition_errors) == {TP: "NONE"}
    assert h.fetch(G, (TP,)).partitions[0].offset == 9
    h2 = make(log=log, owned_partitions=())
    h2.c.on_election(0, 6, log.records(0))
    assert h2.fetch(G, (TP,)).partitions[0].offset == 9
