"""consumer-group-world: the KIP-848 impl (coordinator + clients) under a lossy network, judged by
invariants/consumer_group.py. Each historical behaviour is found by the explorer with it on, and
nothing is found with it off within the same number of states."""
import pytest

from kverify.impl.consumer import behaviours as CB
from kverify.invariants.consumer_group import NAMES
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
    assert {i.name for i in w.invariants()} == set(NAMES)      # K3's objects, not copies


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
