"""consumer-group-world: the KIP-848 impl (coordinator + clients) under a lossy network, judged by
invariants/consumer_group.py. Each historical behaviour is found by the explorer with it on, and
nothing is found with it off within the same number of states."""
import pytest

from kverify.impl.consumer import behaviours as CB
from kverify.invariants.consumer_group import CLIENT_NAMES, NAMES
from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.worlds import consumer_group_world as W


def build(params=None, behaviours=()):
    return registry.build("consumer-group-world", params or {}, behaviours)


def run(world, actions):
    s = world.init_states()[0]
    for a in actions:
        assert a in world.actions(s), (a, world.actions(s))
        s = world.step(s, a)
    return s


def test_spec_declares_the_table_and_behaviours():
    w = build()
    assert w.action_table is W.ACTIONS
    assert registry.spec_for("consumer-group-world").supports == W.SUPPORTS
    assert set(W.HUNT_PARAMS) == W.SUPPORTS
    assert w.is_fault(("crash", 0)) and w.is_fault(("stall",)) and not w.is_fault(("deliver", 0))
    assert {i.name for i in w.invariants()} == set(NAMES) | set(CLIENT_NAMES)   # K3's objects, not copies
    assert not build().regex and build({"regex": True}).regex        # regexes off by default


def test_regex_subscription_resolves_through_the_timer():
    """A member switching from t0 to the pattern t.* is subscribed to nothing new until the
    coordinator's resolution timer fires (tick); then the group epoch moves and the member gets t1p0
    too. Back to names (subscribe) drops the pattern's partitions again."""
    w = build({"regex": True, "members": 1, "topics": 2, "grow": False, "failover": False, "perturbations": 2})
    s = settle(w, run(w, [("start", 0)]))
    assert ("subscribe_regex", 0, 0) in w.actions(s)
    s = until(w, w.step(s, ("subscribe_regex", 0, 1)),               # names t0 + pattern t.*
              lambda s: s.group().member("m0").subscribed_topic_regex == W.PATTERN)
    s = until(w, s, lambda s: s.net.idle())
    assert s.group().resolved_regexes == () and w.view(s).clients[0].owned == 1     # not resolved yet
    assert not w.is_quiescent_good(s)            # settled needs the pattern resolved
    assert [k[0] for _d, k, _p in s.coord.timers()] == ["regex", "session"]
    s = until(w, s, lambda s: w.view(s).clients[0].owned == 0b11)    # tick: resolved, then a heartbeat
    s = settle(w, s)
    g = s.group()
    assert dict(g.resolved_regexes) == {W.PATTERN: frozenset({"t0", "t1"})}
    assert w.view(s).members[0].subscribed == 0b11 and w.view(s).clients[0].owned == 0b11
    s = until(w, w.step(s, ("subscribe", 0, 1)),                      # back to t0 only
              lambda s: not s.group().member("m0").subscribed_topic_regex)
    s = settle(w, s)
    v = w.view(s)
    assert v.members[0].subscribed == 1 and v.clients[0].owned == 1 and v.target == ((0, 1),)
    assert s.group().resolved_regexes == () and v.group_epoch > g.group_epoch


def test_regex_off_has_no_regex_action():
    w = build({"members": 1})
    s = settle(w, run(w, [("start", 0)]))
    assert not any(a[0] == "subscribe_regex" for a in w.actions(s))


def test_view_reads_coordinator_and_clients():
    w = build()
    s = run(w, [("start", 0), ("deliver", 0), ("receive", 0)])
    v = w.view(s)
    assert v.group_epoch == 1 and v.assignment_epoch == 1
    assert [m.member_id for m in v.members] == [0] and v.members[0].assigned == 1      # t0p0 is bit 0
    assert v.target == ((0, 1),) and v.partition_epochs[0] == 1
    assert v.clients[0].live and v.clients[0].member_epoch == 1 and v.clients[0].owned == 1
    assert not v.clients[1].live


def test_key_is_relative_to_time():
    """A settled member heartbeating along returns to the same state (times relative to now)."""
    w = build({"members": 1, "perturbations": 0})
    s = run(w, [("start", 0)])
    while w.actions(s) != [("tick",)]:          # deliver/receive everything in flight
        s = w.step(s, w.actions(s)[0])
    t = s
    for _ in range(3):                          # tick (heartbeat out), deliver, receive
        t = w.step(t, w.actions(t)[0])
    assert [a[0] for a in w.actions(t)] == ["tick"]
    assert t.now == s.now + W.HEARTBEAT_MS and t == s and hash(t) == hash(s)
    assert w.step(t, ("tick",)).now > t.now


def test_restart_takes_the_next_member_id():
    w = build()
    s = run(w, [("start", 0), ("deliver", 0), ("receive", 0), ("crash", 0)])
    assert ("restart", 0) not in w.actions(s)            # its old member is still known
    while ("restart", 0) not in w.actions(s):
        s = w.step(s, ("tick",))
    s = w.step(s, ("restart", 0))
    assert s.clients[0].member_id == "m0-r1" and w.mid("m0-r1") == 2


def run_from(world, s, actions):
    for a in actions:
        assert a in world.actions(s), (a, world.actions(s))
        s = world.step(s, a)
    return s


def settle(w, s, limit=60):
    """Deliver, receive and let time pass (no fault) until the world is quiescent and good."""
    for _ in range(limit):
        if w.is_quiescent_good(s):
            return s
        acts = [a for a in w.actions(s) if a[0] in ("start", "deliver", "receive", "load", "tick", "restart")]
        s = w.step(s, acts[0])
    raise AssertionError(f"not settled: {w.describe(s)}")


def until(w, s, done, limit=60):
    """Deliver, receive and let time pass (no fault) until `done(s)`."""
    for _ in range(limit):
        if done(s):
            return s
        s = w.step(s, [a for a in w.actions(s) if a[0] in ("deliver", "receive", "tick")][0])
    raise AssertionError(f"not reached: {w.describe(s)}")


def test_failover_answers_not_coordinator_then_recovers():
    w = build({"members": 1})
    s = settle(w, run(w, [("start", 0)]))
    s = w.step(s, ("unload",))
    assert ("load",) in w.actions(s) and not w.is_quiescent_good(s)
    s = run_from(w, s, [("tick",), ("deliver", 0)])            # the periodic heartbeat goes out
    assert s.net.responses[0][0][1].error == "NOT_COORDINATOR"
    s = settle(w, w.step(s, ("load",)))
    assert w.view(s).clients[0].owned == 1 and w.view(s).group_epoch == 1


def test_a_lost_join_answer_is_retried_at_epoch_zero():
    w = build({"members": 1, "losses": 1, "perturbations": 0})
    s = run(w, [("start", 0), ("deliver", 0), ("lose", 0)])
    assert s.budget.losses == 0 and w.view(s).members[0].member_epoch == 1 and s.clients[0].member_epoch == 0
    s = settle(w, s)
    assert [m.member_id for m in w.view(s).members] == [0] and w.view(s).clients[0].member_epoch == 1


@pytest.mark.parametrize("behaviour", sorted(W.SUPPORTS))
def test_behaviour_found_with_it_on_not_off(behaviour):
    params, engine = W.HUNT_PARAMS[behaviour]
    assert engine == "explorer"
    on = explore(build(params, [behaviour]), stop_on_first=True, max_states=6000)
    assert on.violations, behaviour
    inv = on.violations[0].violation.invariant
    broken = {i.name: i.broken_by for i in build().invariants()}
    assert behaviour in broken[inv], (behaviour, inv)
    off = explore(build(params), max_states=max(on.distinct_states, 2000))
    assert not off.violations, off.violations[0].violation


def test_a_bug_is_found_through_the_reduction():
    """The relative-time/cid key must not hide a behaviour (symmetry on is the explorer default)."""
    r = explore(build({"grow": False, "failover": False}, [CB.EMPTY_GROUP_ASSIGNMENT_EPOCH]), symmetry=True,
                stop_on_first=True, max_states=2000)
    assert [a[0] for a in r.violations[0].actions] == ["start", "deliver", "stall"]


@pytest.mark.slow
def test_explore_defaults_complete_clean_and_every_sometimes():
    r = explore(build())
    assert r.complete and not r.violations
    assert r.sometimes and all(d is not None for d in r.sometimes.values()), r.sometimes
    assert r.distinct_states > 5000


def test_a_coordinator_accepting_stale_commits_is_caught(monkeypatch):
    """The world's `accepted` facts reach commits-at-current-epoch: a coordinator that skips
    ConsumerGroup.validateOffsetCommit is caught; the real one is not (same bound)."""
    from kverify.impl.consumer import group as G
    params = {"grow": False, "failover": False}
    clean = explore(build(params), max_states=3000)
    assert not clean.violations and clean.sometimes["commit-accepted"] is not None
    monkeypatch.setattr(G.ConsumerGroup, "validate_offset_commit", lambda self, *args: None)
    r = explore(build(params), stop_on_first=True, max_states=3000)
    assert r.violations and r.violations[0].violation.invariant == "commits-at-current-epoch"


def _double_owner_run(behaviours):
    """KAFKA-19974's scenario through the world (2 patterns, range assignor): m0 holds t0p0, t0p1,
    t1p0, t1p1 with names t0 + pattern t.*, switches to names t0 + pattern t0 (unresolved: no new
    epoch, t1 revoked at its epoch 3); m1 joins (epoch 4: range gives it t0p1); m0's revocation
    heartbeat reaches the coordinator, then everything settles. Returns {(partition, epoch): holders}
    read from the coordinator after every step."""
    w = build({"regex": True, "patterns": 2, "members": 2, "topics": 2, "partitions": 2, "perturbations": 2,
               "grow": False, "failover": False, "assignor": "range"}, behaviours)
    history = {}

    def record(s):
        for m in s.group().members:
            for tp in m.assigned | m.pending_revocation:
                history.setdefault((tp, m.member_epoch), set()).add(m.member_id)
        return s

    s = until(w, run(w, [("start", 0)]), w.is_quiescent_good)          # m1 not started yet
    s = until(w, w.step(s, ("subscribe_regex", 0, 1, 0)),
              lambda s: s.group().resolved_regexes != () and w.is_quiescent_good(s))
    s = run_from(w, s, [("subscribe_regex", 0, 1, 1), ("tick",), ("deliver", 0)])
    assert s.group().member("m0").state == "UNREVOKED_PARTITIONS" and s.group().member("m0").member_epoch == 3
    s = record(run_from(w, s, [("start", 1), ("deliver", 1)]))
    # m0's answers and requests first, time last; settled includes the pattern t0 resolved, which the coordinator
    # does only once REGEX_BATCH_REFRESH_MIN_INTERVAL_MS (10 s) has passed since the last resolution (~66 steps)
    for _ in range(100):
        acts = sorted((a for a in w.actions(s) if a[0] in ("receive", "deliver", "tick")),
                      key=lambda a: (a[0] != "receive", a != ("deliver", 0), a[0] == "tick"))
        s = record(w.step(s, acts[0]))
        if w.is_quiescent_good(s):
            break
    assert w.is_quiescent_good(s)
    names = {t.topic_id: t.name for t in s.coord.topics.topics}
    return {(f"{names[t]}p{p}", e): h for ((t, p), e), h in history.items() if len(h) > 1}


def test_kafka_19974_double_owner_reached_through_a_regex_change():
    """With two patterns the world reaches KAFKA-19974's harm, not only its epoch bump: t0p1 held by
    m0 and then by m1 at the same member epoch 4 (no state invariant sees a history; epoch-follows-target
    fires first in the same trace). The fixed coordinator keeps m0 at epoch 3 while it revokes."""
    assert _double_owner_run([CB.UNREVOKED_EPOCH_BUMP]) == {("t0p1", 4): {"m0", "m1"}}
    assert _double_owner_run([]) == {}
