"""The abstract group model: exhaustive runs are clean by default, each historical behaviour it
carries gives its shortest counterexample, and its rules follow coordinator.md."""

import pytest

from kverify.model import registry
from kverify.model.explore import DEADLOCK, RECOVERABLE, explore
from kverify.model import group as G
from kverify.model.group import (COMPLETING, CSTABLE, EMPTY, PREPARING, STABLE, SUPPORTS, SYNCING, Delivered)
from kverify.model.walk import replay, walk

SMALL = {"partitions": 1, "events": 2, "faults": 1, "commits": 1}


def build(params=None, behaviours=()):
    return registry.build("group", params or {}, behaviours)


def test_default_bounds_explore_exhaustively_without_violation():
    p = build()
    assert p.n == 2 and p.p == 2
    res = explore(p)
    assert res.complete and res.violations == [] and res.vacuous == []
    assert all(d is not None for d in res.sometimes.values())          # incl. lost-generation-reused
    assert res.graph.analysed and res.graph.unrecoverable == 0 and res.graph.good_states > 0
    assert res.distinct_states > 5_000


@pytest.mark.slow
def test_two_faults_explore_exhaustively_without_violation():
    res = explore(build({"faults": 2, "commits": 1}))
    assert res.complete and res.ok and res.graph.unrecoverable == 0
    assert res.distinct_states > 30_000


@pytest.mark.slow
def test_three_members_explore_exhaustively_without_violation():
    res = explore(build({"members": 3, "partitions": 1, "faults": 1, "commits": 1}))
    assert res.complete and res.ok and res.graph.unrecoverable == 0
    assert res.sometimes["stable-with-all-members"] is not None


# behaviour -> {property: length of the shortest counterexample}
EXPECTED = {
    "stale-generation-commit": {"committed-offset-safety": 8},
    "no-generation-bump": {"generation-monotonicity": 2},
    "leader-not-reelected": {"leader-in-members": 4},
    "kafka-12890-no-sync-barrier": {RECOVERABLE: 4, DEADLOCK: 5},
    "unclean-election": {"generation-monotonicity": 4, "committed-offset-safety": 6},
}


@pytest.mark.parametrize("behaviour", sorted(EXPECTED))
def test_each_behaviour_yields_its_shortest_counterexample(behaviour):
    res = explore(build(SMALL, [behaviour]))
    assert res.complete
    got = {f.invariant: len(f.actions) for f in res.violations}
    assert got == EXPECTED[behaviour]
    for f in res.violations:                      # the trace really ends in the violation, at its last step
        assert f.violation.step_index == len(f.actions)


def test_supports_lists_exactly_the_behaviours_with_a_counterexample():
    assert SUPPORTS == frozenset(EXPECTED)
    with pytest.raises(registry.ModelError):
        build({}, ["math-abs-coordinator"])


def test_counterexample_traces_replay_to_the_same_violation():
    p = build(SMALL, ["stale-generation-commit"])
    for f in explore(p).violations:
        _, v = replay(p, f.actions, f.init_index)
        assert v is not None and v.invariant == f.invariant and v.step_index == len(f.actions)


def _run(p, labels):
    actions = [tuple([x.split()[0]] + [int(y) for y in x.split()[1:]]) for x in labels]
    states, v = replay(p, actions)
    return states, v


def test_lost_generation_is_reused_and_passes():
    """Generation 2 completes its join in memory, the coordinator fails over before the leader's
    SyncGroup persisted it, the group reloads at generation 1 and the next join reuses 2."""
    p = build({"events": 3, "faults": 1})
    states, v = _run(p, ["start 0", "join_timeout", "sync 0", "start 1", "rejoin 0", "failover",
                         "sync 0", "join 0", "sync 0"])
    assert v is None
    coords = [(s.coord.state, s.coord.generation, s.coord.leader, s.coord.members) for s in states]
    assert coords[5] == (COMPLETING, 2, 0, 0b11)   # generation 2 = {m0, m1}, only in memory
    assert coords[6] == (STABLE, 1, 0, 0b01)       # reloaded at the persisted generation 1
    assert coords[-1] == (STABLE, 2, 0, 0b01)      # 2 is reused for the membership {m0}
    assert states[-1].clients[0].status == CSTABLE and states[-1].clients[0].owned == 0b11
    assert states[-1].delivered == (Delivered(generation=2, assignment=(0b11, 0)),)   # delivered once


def test_commit_rules_follow_the_reference():
    p = build()
    s = p.init_states()[0]
    states, v = _run(p, ["start 0", "join_timeout", "sync 0", "start 1"])
    assert v is None
    prep = states[-1]
    assert prep.coord.state == PREPARING
    assert p.commit_verdict(prep.coord, 0, 1) == "NONE"                # old generation commits in PreparingRebalance
    states, v = _run(p, ["start 0", "join_timeout", "sync 0", "start 1", "rejoin 0"])
    comp = states[-1].coord
    assert comp.state == COMPLETING and comp.generation == 2
    assert p.commit_verdict(comp, 0, 2) == "REBALANCE_IN_PROGRESS"     # §7.1.2: new generation must sync first
    assert p.commit_verdict(comp, 0, 1) == "ILLEGAL_GENERATION"
    assert s.coord.state == EMPTY


def test_generation_grows_at_every_completed_join_also_into_empty():
    p = build({"members": 1, "partitions": 1})
    states, v = _run(p, ["start 0", "join_timeout", "sync 0", "leave 0"])
    assert v is None
    views = [p.view(s) for s in states]
    assert [(v.state, v.generation) for v in views] == [(EMPTY, 0), (PREPARING, 0), (COMPLETING, 1), (STABLE, 1), (EMPTY, 2)]
    assert states[-1].persisted.generation == 2      # the Empty group is persisted at generation 2


def test_join_response_goes_to_every_rejoined_member():
    p = build()
    states, v = _run(p, ["start 0", "start 1", "join_timeout"])
    assert v is None
    coord, clients = states[-1].coord, states[-1].clients
    assert (coord.state, coord.generation, coord.leader) == (COMPLETING, 1, 0)
    assert [c.status for c in clients] == [SYNCING, SYNCING]


def test_no_symmetry_reduction_because_slots_are_not_interchangeable():
    """Slot order decides the assignment and the next leader, so a slot permutation is not a
    symmetry of the rules; a reduction that identified permuted states hid this violation."""
    p = build({"members": 2, "partitions": 1, "faults": 0}, ["no-generation-bump"])
    p.__dict__["_state_invs"] = ()
    p.__dict__["_step_invs"] = tuple(i for i in p.invariants() if i.name == "committed-offset-safety")
    res = walk(p, seed=7, steps=40, record_trace=True)
    state = p.init_states()[0]
    for a in res.trace:
        state = p.step(state, a)
        assert p.canonical(state) is state
    reduced, plain = explore(p), explore(p, symmetry=False)
    assert reduced.distinct_states == plain.distinct_states
    assert [f.invariant for f in reduced.violations] == ["committed-offset-safety"]


def test_random_walks_stay_clean_and_deterministic():
    p = build({"members": 3, "partitions": 2})
    for seed in range(20):
        a = walk(p, seed=seed, steps=60, record_trace=True)
        b = walk(p, seed=seed, steps=60, record_trace=True)
        assert a.violation is None and not a.deadlock
        assert a.trace == b.trace


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        build({"members": 0})
    with pytest.raises(ValueError):
        build({"commits": -1})


def test_describe_and_arrows_name_members_and_coordinator():
    p = build()
    states, _ = _run(p, ["start 0", "join_timeout", "sync 0"])
    d = p.describe(states[-1])
    assert d["coordinator"]["state"] == "Stable" and d["clients"]["m0"]["owned"] == ["p0", "p1"]
    assert p.arrow(("sync", 1)) == ("member m1", "coordinator")
    assert p.arrow(("failover",)) == ("coordinator", "coordinator")
    assert set(p.participants()) >= {"member m0", "member m1", "coordinator"}
    assert p.is_fault(("crash", 0)) and not p.is_fault(("expire", 0))


def test_step_views_expose_states_passed_inside_one_request():
    p = build({"members": 1, "partitions": 1})
    states, v = _run(p, ["start 0", "join_timeout", "sync 0", "leave 0"])
    assert v is None
    before, after = p.step_views(states[3], ("leave", 0), states[4])
    assert (before.state, after.state, after.passed) == (STABLE, EMPTY, (PREPARING,))
    _, direct = p.step_views(states[1], ("join_timeout",), states[2])
    assert direct.passed == () and direct.state == COMPLETING


def test_in_flight_commit_lands_in_its_generation_and_is_fenced_after_it():
    p = build()
    base = ["start 0", "join_timeout", "sync 0", "commit 0", "start 1"]
    states, v = _run(p, base + ["commit_arrives 0"])        # PreparingRebalance: old generation commits
    assert v is None and states[-1][2] == (1, 1)
    states, v = _run(p, base + ["rejoin 0", "sync 0", "commit_arrives 0"])   # generation 2 is Stable: fenced
    assert v is None and states[-1][2] == (0, 0) and states[-1][1][0][5] == ()


def test_departed_leader_is_kept_through_a_completed_join_under_leader_not_reelected():
    """Issue 17: as impl/coordinator does it (group.py maybe_elect_new_joined_leader keeps a departed
    leader while some member rejoined), the model keeps m0 as leader after it left and the join
    completed with m1 alone; the correct model re-elects m1. specs/GroupMembership.tla's NewLeader
    says the same (tests/test_tlc_crosscheck.py compares the state sets under this behaviour)."""
    trace = ["start 0", "join_timeout", "sync 0", "start 1", "rejoin 0", "sync 1", "sync 0", "leave 0", "rejoin 1"]
    for behaviours, leader in (((), 1), (("leader-not-reelected",), 0)):
        p = build({"partitions": 1, "events": 3}, behaviours)
        p.__dict__["_invs"] = ()                     # leader-in-members would stop the bug's trace
        states, _ = _run(p, trace)
        end = states[-1].coord
        assert (end.state, end.members, end.leader) == (COMPLETING, 0b10, leader), behaviours


def test_actions_step_and_faults_come_from_the_action_table():
    p = build()
    states, _ = _run(p, ["start 0", "start 1", "join_timeout", "sync 0"])
    for s in states:
        assert p.actions(s) == G.ACTIONS.enabled(p, s)
        for a in p.actions(s):
            assert p.step(s, a) == G.ACTIONS.step(p, s, a)
    assert {a for a in G.ACTION_NAMES if p.is_fault((a,))} == G.ACTIONS.faults == \
        {"crash", "pause", "stall", "failover", "unclean_failover"}
    assert G.SPEC.action_names == G.ACTIONS.names() and G.SPEC.state_fields == G.GroupState._fields


def test_states_are_named_tuples_all_the_way_down():
    p = build({}, ["unclean-election"])
    states, _ = _run(p, ["start 0", "join_timeout", "sync 0", "commit 0", "commit_arrives 0"])
    s = states[-1]
    assert type(s) is G.GroupState and type(s.coord) is G.Coordinator and type(s.persisted) is G.GroupRecord
    assert all(type(c) is G.Client for c in s.clients) and type(s.budget) is G.Budget
    assert type(s.prev) is G.LastAppend and all(type(d) is Delivered for d in s.delivered)
    assert s.offsets == (1, 1) and s.budget.commit_generation == 1
    assert G.as_state(tuple(tuple(x) if isinstance(x, tuple) else x for x in s)) == s
