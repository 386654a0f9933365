"""Members wired to the real reference coordinator through the FIFO harness (tests/member_harness.py).

The four rebalancing scenarios of issue #2 (join a Stable group, leave, crash and expire, commits
during a rebalance) plus a static member restarting, each in EAGER and/or COOPERATIVE mode. An
observer checks after every delivered message that no two live members consume one partition.
"""
import pytest

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from kverify.impl.coordinator.messages import JoinGroupRequest, OffsetCommitRequest, TopicPartition as TP
from kverify.impl.member import MemberConfig
from member_harness import Harness

PARTS = frozenset(TP(t, p) for t, n in (("a", 3), ("b", 2)) for p in range(n))
EAGER = ("range",)
COOP = ("cooperative-sticky",)


def exclusive(h):
    seen = {}
    for name, m in h.members.items():
        for tp in m.consuming:
            assert tp not in seen, f"{tp} consumed by {seen[tp]} and {name} at {h.now}"
            seen[tp] = name


def make(n=3, assignors=EAGER, static=False, **kw):
    coord = GroupCoordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=3000))
    base = dict(group_id="g", topics=("a", "b"), cluster={"a": 3, "b": 2}, assignors=assignors,
                session_timeout_ms=10000, heartbeat_interval_ms=3000, rebalance_timeout_ms=20000)
    base.update(kw)
    configs = {f"c{i}": MemberConfig(client_id=f"c{i}", instance_id=f"i{i}" if static else None, **base)
               for i in range(n)}
    return Harness(coord, configs, observer=exclusive)


def start(h, names=None):
    for name in names or list(h.members):
        h.act(name, "start")


def settle(h, ms=30000):
    h.advance(ms)
    assert h.stable(), [repr(m) for m in h.members.values()]


def assert_complete_exclusive(h, parts=PARTS):
    live = list(h.live().values())
    owned = [m.owned for m in live]
    assert frozenset().union(*owned) == parts
    assert sum(len(o) for o in owned) == len(parts)
    assert frozenset().union(*(m.consuming for m in live)) == parts      # positions fetched
    gens = {m.generation.generation_id for m in live}
    g = h.coord.group("g")
    assert gens == {g.generation_id} and g.state == "Stable"
    assert {m.member_id for m in live} == set(g.members)


@pytest.mark.parametrize("assignors", [EAGER, COOP], ids=["eager", "cooperative"])
def test_three_members_reach_stable_with_a_complete_exclusive_assignment(assignors):
    h = make(3, assignors)
    start(h)
    settle(h)
    assert_complete_exclusive(h)
    leaders = [m for m in h.members.values() if m.is_leader]
    assert len(leaders) == 1 and leaders[0].member_id == h.coord.group("g").leader_id


@pytest.mark.parametrize("assignors", [EAGER, COOP], ids=["eager", "cooperative"])
def test_a_member_joining_a_stable_group_gets_its_share(assignors):
    h = make(3, assignors)
    start(h, ["c0", "c1"])
    settle(h)
    gen_before = h.coord.group("g").generation_id
    start(h, ["c2"])
    settle(h)
    assert_complete_exclusive(h)
    assert h.members["c2"].owned
    assert h.coord.group("g").generation_id > gen_before
    if assignors == COOP:                       # revoke, then reassign: two generations
        assert h.coord.group("g").generation_id >= gen_before + 2


@pytest.mark.parametrize("assignors", [EAGER, COOP], ids=["eager", "cooperative"])
def test_a_member_leaving_is_taken_over(assignors):
    h = make(3, assignors)
    start(h)
    settle(h)
    h.act("c1", "leave")
    assert h.members["c1"].closed and h.members["c1"].consuming == frozenset()
    assert len(h.coord.group("g").members) == 2          # removed at once, no session wait
    settle(h)
    assert_complete_exclusive(h)


@pytest.mark.parametrize("assignors", [EAGER, COOP], ids=["eager", "cooperative"])
def test_a_crashed_member_is_expired_and_taken_over(assignors):
    h = make(3, assignors)
    start(h)
    settle(h)
    victim = h.members["c2"].member_id
    h.act("c2", "crash")
    h.advance(5000)
    assert victim in h.coord.group("g").members          # still there before the session timeout
    settle(h, 30000)
    assert victim not in h.coord.group("g").members
    assert_complete_exclusive(h)


def test_commit_on_revoke_lands_during_preparing_rebalance():
    h = make(2, EAGER, commit_on_revoke=True)
    start(h, ["c0"])
    settle(h)
    h.advance(1000)                                       # consume a little
    gen = h.coord.group("g").generation_id
    start(h, ["c1"])                                      # c0 learns of the rebalance by heartbeat
    settle(h)
    revoke_commits = [(req, resp) for name, req, resp in h.delivered
                      if name == "c0" and isinstance(req, OffsetCommitRequest) and req.generation_id == gen]
    assert revoke_commits, "c0 committed its revoked partitions"
    req, [resp] = revoke_commits[-1]
    assert all(err == "NONE" for _, err in resp.partition_errors)
    assert ("revoke" in [p for _, p, o in h.members["c0"].commit_results if o == "ok"])
    committed = h.coord.group("g").offsets
    assert {tp: committed[tp].offset for tp, _ in req.offsets} == {tp: om.offset for tp, om in req.offsets}
    assert all(om.offset > 0 for _, om in req.offsets)       # it had consumed something
    assert_complete_exclusive(h)


def test_a_paused_zombie_is_expired_and_its_commit_is_fenced():
    h = make(3, EAGER)
    start(h)
    settle(h)
    gen = h.coord.group("g").generation_id
    h.observer = None                   # a paused process still holds its partitions (Kafka's zombie)
    h.started.discard("c2")             # paused: neither poll() nor the heartbeat thread runs
    h.advance(15000)
    assert h.coord.group("g").generation_id > gen and h.members["c2"].member_id not in h.coord.group("g").members
    zombie = h.members["c2"]
    assert zombie.state == "STABLE" and zombie.consuming    # it does not know yet
    before = dict(h.coord.group("g").offsets)
    h.started.add("c2")
    [req] = h.act("c2", "commit")
    assert req.generation_id == gen
    [(_, _, [resp])] = [d for d in h.delivered if d[1] is req]
    assert {err for _, err in resp.partition_errors} == {"UNKNOWN_MEMBER_ID"}
    assert dict(h.coord.group("g").offsets) == before        # nothing of the zombie landed
    assert zombie.commit_results[-1][2] == "commit-failed" and zombie.member_id == ""
    settle(h)
    exclusive(h)
    assert_complete_exclusive(h)


def test_commit_while_completing_fails_locally_without_reaching_the_coordinator():
    h = make(2, EAGER)
    start(h)
    m = h.members["c1"]
    for _ in range(200):                     # until the (extended) initial delay ends; SyncGroups stay queued
        h.route(h.coord.advance(100))
        if m.state != "PREPARING_REBALANCE":
            break
    assert m.state == "COMPLETING_REBALANCE" and h.coord.group("g").state == "CompletingRebalance"
    sent = len(h.delivered)
    assert m.commit({TP("a", 0): 1}, now=h.now) == []
    assert m.commit_results[-1][2] == "rebalance-in-progress (local)"
    assert len(h.delivered) == sent
    settle(h)
    assert_complete_exclusive(h)


def test_a_static_member_restarting_keeps_its_partitions_without_a_rebalance():
    h = make(3, EAGER, static=True)
    start(h)
    settle(h)
    g = h.coord.group("g")
    gen, owned = g.generation_id, h.members["c1"].owned
    old_id = h.members["c1"].member_id
    h.act("c1", "crash")
    h.act("c1", "restart")
    settle(h, 10000)
    m = h.members["c1"]
    assert m.member_id != old_id and m.owned == owned
    assert h.coord.group("g").generation_id == gen       # no rebalance for a static restart
    assert h.coord.group("g").static_members["i1"] == m.member_id
    assert_complete_exclusive(h)


def test_harness_runs_are_deterministic():
    def run():
        h = make(3, COOP)
        start(h)
        settle(h)
        h.act("c0", "leave")
        settle(h)
        return [m.snapshot() for m in h.members.values()], h.coord.snapshot()
    assert run() == run()


def test_static_cooperative_member_restarting_between_revocation_and_rejoin_strands_partitions():
    """A liveness gap of Kafka's classic protocol itself (found by test_member_random, seed 886):
    the cooperative first round makes the sole owner revoke partitions for the newcomers and
    rejoin; if that static process dies before its follow-up JoinGroup reaches the coordinator and
    restarts before its session expires, the coordinator replaces the static member in Stable
    without a rebalance (KIP-345), the returning leader skips the assignment (KIP-814), and the
    revoked partitions stay unassigned for as long as nothing else triggers a rebalance."""
    h = make(3, COOP, static=True)
    start(h, ["c0"])
    settle(h)
    assert h.members["c0"].owned == PARTS
    crashed = []

    def crash_after_revocation(hh):
        exclusive(hh)
        m = hh.members["c0"]
        if not crashed and m.alive and m.state == "STABLE" and m.rejoin_needed and len(m.owned) < len(PARTS):
            crashed.append(m.owned)
            m.crash(hh.now)                      # dies before the follow-up JoinGroup is sent
            hh.started.discard("c0")

    h.observer = crash_after_revocation
    start(h, ["c1", "c2"])
    for _ in range(200):
        h.advance(100)
        if crashed:
            break
    assert crashed, "c0 revoked partitions in the cooperative first round"
    gen = h.coord.group("g").generation_id
    h.observer = exclusive
    h.advance(1000)
    h.act("c0", "restart")                       # back well within the 10 s session timeout
    h.advance(60000)
    g = h.coord.group("g")
    assert g.state == "Stable" and g.generation_id == gen          # no rebalance happened
    assert h.stable()                                              # nobody will ever rejoin
    assert h.members["c0"].owned == crashed[0]
    assigned = frozenset().union(*(m.owned for m in h.live().values()))
    assert assigned == crashed[0] and assigned != PARTS            # the rest is stranded


def test_a_client_committing_a_partition_it_gave_up_lands_a_foreign_offset():
    """Kafka's coordinator checks member and generation, never the partitions a commit names: the
    faulty client of `commit-unowned-partitions` overwrites the new owner's offset."""
    from kverify.impl.member import behaviours as MB

    def run(behaviours):
        coord = GroupCoordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
        base = dict(group_id="g", topics=("a",), cluster={"a": 2}, assignors=EAGER, session_timeout_ms=10000,
                    heartbeat_interval_ms=3000, rebalance_timeout_ms=20000)
        h = Harness(coord, {"c0": MemberConfig(client_id="c0", **base), "c1": MemberConfig(client_id="c1", **base)},
                    behaviours=behaviours, observer=exclusive)
        h.act("c0", "start")
        settle(h)
        h.advance(2000)                               # c0 consumes both partitions
        h.act("c1", "start")
        settle(h)
        given_up = h.members["c1"].owned
        assert given_up and not given_up & h.members["c0"].owned
        [req] = h.act("c0", "commit")
        return {tp for tp, _ in req.offsets}, given_up, h

    named, given_up, h = run(frozenset())
    assert not named & given_up
    named, given_up, h = run(frozenset({MB.COMMIT_UNOWNED}))
    assert named & given_up                                        # it names c1's partition...
    [(_, req, [resp])] = [d for d in h.delivered if d[0] == "c0" and d[1].correlation_id == max(
        x[1].correlation_id for x in h.delivered if x[0] == "c0")]
    assert all(err == "NONE" for _, err in resp.partition_errors)  # ...and the coordinator takes it


def test_static_cooperative_member_missing_a_rebalance_commits_partitions_of_another_owner():
    """A safety gap of Kafka's classic protocol itself (found by test_member_random, seed 5667).
    A static member's poll thread stalls while its heartbeats keep it in the group; its late
    JoinGroup is lost, so the join phase ends without it and, being static, it is kept with the
    subscription of its *previous* join, which claimed nothing. cooperative-sticky therefore gives
    some of its partitions straight to another member, which consumes them while the stalled member
    still does. When it rejoins (claiming the older generation), "highest generation wins" leaves
    them with the new owner, it revokes them in onJoinComplete, and its onPartitionsRevoked commit
    carries the NEW generation: the coordinator accepts offsets for another member's partitions."""
    h = make(2, COOP, static=True, commit_on_revoke=True)
    h.observer = None                                # double consumption is part of the finding
    start(h, ["c0"])
    settle(h)
    h.advance(2000)
    assert h.members["c0"].owned == PARTS
    h.no_poll.add("c0")                              # slow processing: only the heartbeat thread runs
    start(h, ["c1"])
    t0 = h.now
    h.advance(15000)
    assert h.members["c0"].rejoin_needed and h.members["c0"].state == "STABLE"
    h.drop = lambda name, req: name == "c0" and isinstance(req, JoinGroupRequest) and not h.lost
    h.no_poll.discard("c0")
    h.advance(20000 - (h.now - t0) + 500)            # the join phase ends without c0's JoinGroup
    [(_, dropped)] = h.lost
    assert dropped.member_id == h.members["c0"].member_id and dropped.group_instance_id == "i0"
    g = h.coord.group("g")
    c0 = h.members["c0"]
    assert c0.member_id in g.members and g.generation_id > c0.generation.generation_id   # kept: static
    both = h.members["c0"].consuming & h.members["c1"].consuming
    assert both, "c1 was handed c0's partitions directly and consumes them while c0 still does"
    h.act("c0", "on_disconnect")                     # c0 gives up on the lost JoinGroup and retries
    accepted = []
    while h.now < t0 + 60000 and not accepted:
        h.advance(100)
        g = h.coord.group("g")
        for name, req, resps in h.delivered:
            if name == "c0" and isinstance(req, OffsetCommitRequest) and req.generation_id == g.generation_id:
                foreign = {tp for tp, _ in req.offsets} & h.members["c1"].owned
                if foreign and all(e == "NONE" for _, e in resps[0].partition_errors):
                    accepted.append((req, foreign))
    assert accepted, "c0's revocation commit for c1's partitions was accepted in the current generation"


def _static_restart_while_completing(coordinator_behaviours):
    """Three static members; while the group is CompletingRebalance (SyncGroups not yet sent) c1's
    process dies and its successor's JoinGroup reaches the coordinator before any SyncGroup."""
    coord = GroupCoordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=3000), behaviours=coordinator_behaviours)
    base = dict(group_id="g", topics=("a", "b"), cluster={"a": 3, "b": 2}, assignors=EAGER,
                session_timeout_ms=10000, heartbeat_interval_ms=3000, rebalance_timeout_ms=20000)
    h = Harness(coord, {f"c{i}": MemberConfig(client_id=f"c{i}", instance_id=f"i{i}", **base) for i in range(3)},
                observer=exclusive)
    start(h)
    for _ in range(300):
        h.route(h.coord.advance(100))
        if h.coord.group("g").state == "CompletingRebalance":
            break
    assert h.coord.group("g").state == "CompletingRebalance"
    for item in [x for x in h.requests if x[0] == "c1"]:
        h.requests.remove(item)                       # c1 dies before sending its SyncGroup
    h.members["c1"].crash(h.now)
    h.act("c1", "restart", deliver=False)
    h.requests.rotate(1)                              # its JoinGroup overtakes the queued SyncGroups
    h.deliver_all()
    h.advance(40000)
    return h


def test_static_restart_while_completing_gets_a_real_assignment():
    h = _static_restart_while_completing(frozenset())
    assert h.members["c1"].fatal is None
    assert_complete_exclusive(h)


def test_kafka_9801_static_restart_while_completing_leaves_the_member_an_empty_assignment():
    h = _static_restart_while_completing(frozenset({"kafka-9801-static-replace-in-completing"}))
    m = h.members["c1"]
    assert m.fatal is not None and "0 bytes" in m.fatal       # Kafka's client throws on b""
    assert not m.consuming
