"""offsets-world (model/worlds/offsets_world.py): a group committing through the replicated
__consumer_offsets partition of the reference implementation. The correct implementation keeps
`acked-commit-durable` and the replication invariants of the offsets partition under the explorer,
the walker and the Hypothesis machine; each behaviour in SUPPORTS is caught by the explorer, while
the correct implementation explored over as many states at the same parameters is not."""
import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import WalkMemo, walk
from kverify.model.worlds import offsets_world as OW
from kverify.stateful_tests.machine import run_machine

SMALLEST = {"brokers": 2}
RICH = {"crashes": 3, "lossy": 1, "drops": 1, "ticks": 2, "commits": 3, "partitions": 2, "preferred": 1,
        "failovers": 1}

# behaviour -> invariant that breaks first; the explorer reaches it at the world's OW.HUNT bounds
CATCHES = {
    "unclean-election": "i-dur",
    "truncate-to-hw": "i-lcc",
}


def build(params=None, behaviours=()):
    return registry.build("offsets-world", params or {}, behaviours)


def test_every_supported_behaviour_has_a_catching_test():
    assert set(CATCHES) == set(OW.SUPPORTS) == set(OW.HUNT)


def test_smallest_bounds_are_explored_exhaustively_without_violation():
    res = explore(build(SMALLEST), max_seconds=60)
    assert res.complete and res.ok, (res.violations, res.vacuous)
    assert set(res.sometimes) == {"commit-acked", "acked-served-after-failover"}
    assert all(d is not None for d in res.sometimes.values())
    assert res.graph.analysed and res.graph.unrecoverable == 0 and res.graph.good_states > 0


@pytest.mark.parametrize("behaviour", sorted(CATCHES))
def test_explorer_catches_behaviour_and_not_the_correct_implementation(behaviour):
    params, invariant = OW.HUNT[behaviour], CATCHES[behaviour]
    bad = explore(build(params, {behaviour}), stop_on_first=True, max_states=60_000, graph=False)
    assert bad.violations and bad.violations[0].invariant == invariant
    ok = explore(build(params), max_states=bad.distinct_states + 200, graph=False)
    assert not ok.violations, ok.violations[0].violation
    assert ok.distinct_states >= bad.distinct_states
    assert all(depth is not None for depth in ok.sometimes.values()), ok.sometimes


def test_unclean_election_then_loses_the_acknowledged_commit_on_the_new_coordinator():
    """Continue the explorer's shortest counterexample: once the uncleanly elected broker learns it
    leads and loads the partition, it serves an offset below the acknowledged one."""
    params = OW.HUNT["unclean-election"]
    proto = build(params, {"unclean-election"})
    found = explore(proto, stop_on_first=True, max_states=60_000, graph=False).violations[0]
    s = proto.init_states()[0]
    for a in found.actions:
        s = proto.step(s, a)
    leader = s.world.cluster.store.states[OW.OTP].leader
    for a in list(proto.actions(s)):
        if a[0] == "deliver" and a[2] == "LeaderAndIsr" and a[4] == leader:
            s = proto.step(s, a)
    s = proto.step(s, ("load",))
    view = proto.offsets_view(s)
    assert view.coordinator == leader and view.current and view.served[0] < view.acked[0]
    assert [inv.name for inv in proto.invariants() if inv.kind == "state" and inv.check(s)][0] == "acked-commit-durable"


def test_walks_of_a_rich_correct_world_break_nothing_and_reach_every_goal():
    proto = build(RICH)
    reached = set()
    for seed in range(12):
        res = walk(proto, seed, 150)
        assert res.violation is None, f"seed {seed}: {res.violation}"
        reached |= res.reached
    assert reached == {s.name for s in proto.sometimes()}


def test_hypothesis_machine_finds_nothing_on_the_correct_world():
    assert run_machine("offsets-world", protocol=build(), seed=5, profile="fast", database=False) is None


def test_commit_is_acknowledged_only_after_the_isr_has_it_and_one_at_a_time():
    proto = build({"brokers": 2})
    s = proto.init_states()[0]
    assert list(a for a in proto.actions(s) if a[0] == "commit") == [("commit", 0, 1, 1)]
    s = proto.step(s, ("commit", 0, 1, 1))
    assert s.client[0] is not None and s.client[2] == (0,)
    assert not [a for a in proto.actions(s) if a[0] == "commit"]          # commitSync: one in flight
    s = proto.step(s, ("replicate", 2, "__consumer_offsets", 0, 1))
    assert s.client[2] == (0,)                                             # the follower has it, HW not yet
    s = proto.step(s, ("replicate", 2, "__consumer_offsets", 0, 1))
    assert s.client == (None, (2,), (1,))                                  # acknowledged
    assert proto.offsets_view(s) == (1, True, (1,), (1,))
    d = proto.describe(s)
    assert d["partitions"]["__consumer_offsets-0"]["acked"] == ["[commit d-0=1]@0"]
    assert d["brokers"]["broker 2"]["replicas"]["__consumer_offsets-0"]["log"] == ["[commit d-0=1]@e0"]
    assert d["coordinator"] == {"broker": 1, "current": True, "serves": {"d-0": 1}, "loading": []}


def test_commit_fails_with_its_broker_and_reports_describe_it():
    proto = build({"brokers": 2})
    s = proto.step(proto.init_states()[0], ("commit", 0, 1, 1))
    s = proto.step(s, ("crash", 1, False))
    assert s.client[0] is None and s.client[2] == (0,)
    assert proto.participants() == ("consumer", "broker 1", "broker 2", "controller")
    assert proto.arrow(("commit", 0, 1, 1)) == ("consumer", "broker 1")
    assert proto.arrow(("deliver", 4, "LeaderAndIsr", 0, 2)) == ("controller", "broker 2")
    d = proto.describe(s)
    assert d["client"] == {"in_flight": None, "acked": {"d-0": 0}}
    assert d["coordinator"]["broker"] == -1 and d["budget"]["commits"] == 0
    with pytest.raises(registry.ModelError):
        build({}, {"no-maximal-isr"})


def test_walk_memo_gives_the_same_traces_and_verdicts():
    """Walks sharing the walker's memo (model/walk.py) take the steps of plain walks from the same
    seeds and reach the same verdicts; the memo is hit (most of this world's walk steps repeat)."""
    memo = WalkMemo()
    with_memo, plain = build(RICH), build(RICH)
    for seed in range(25):
        a = walk(with_memo, seed, 60, record_trace=True, memo=memo)
        b = walk(plain, seed, 60, record_trace=True, memo=False)
        assert (a.trace, a.violation, a.deadlock, a.reached) == (b.trace, b.violation, b.deadlock, b.reached), seed
    assert memo.hits > 0
