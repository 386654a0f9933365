"""replication-world (model/worlds/replication_world.py): the reference cluster behind the Protocol
interface. The correct cluster keeps every shared replication invariant under the explorer, the
walker and the Hypothesis machine (and reaches its `sometimes` goals); each behaviour the world
declares in SUPPORTS is caught by an engine within seconds, while the correct cluster explored over
at least as many states at the same parameters is not."""
import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.shrink import shrink_trace
from kverify.model.walk import WalkMemo, initial_index, replay, walk
from kverify.model.worlds import replication_world as RW
from kverify.stateful_tests.machine import run_machine

# one partition, full ISR, no controller failover (3 brokers, every acks setting, a preferred election)
SINGLE = dict(RW.WALK_BOUNDS, partitions=1, failovers=0, init_isr=0)
SMALLEST = dict(SINGLE, brokers=2, preferred=0)
# Controller failovers together with message loss once made the correct cluster break I-RQS (a leader forgot
# its in-flight ISR expansion while no controller existed; fixed in impl/replication/cluster.py `_propose_isr`);
# the rich control world keeps one of the two each.
RICH = dict(RW.WALK_BOUNDS, brokers=4, partitions=2, crashes=3, lossy=1, reassignments=2, failovers=0,
            ticks=2, drops=2, records=3, acks="-1,1,0")
RICH_FAILOVER = dict(RICH, failovers=1, drops=0)

# behaviour -> invariant that breaks; the explorer reaches it at the world's RW.HUNT bounds
CATCHES = {
    "truncate-to-hw": "i-lcc",
    "unclean-election": "i-dur",
    "preferred-election-outside-isr": "i-dur",
    "no-maximal-isr": "i-rqs",
    "no-broker-epoch-check": "i-lcc",          # KIP-903: AlterPartition with a pre-restart broker epoch
    "expand-without-epoch-start": "i-lcc",     # KAFKA-7128: empty follower joins a lagging-HW leader's ISR
    "reassignment-drops-old-replicas-early": "i-reassign",   # fact 55 R1 (also tests/test_invariants_reassign.py)
}
# behaviour -> (invariant that breaks, walk length, seeds at most); seeded walks reach it at the RW.HUNT bounds
WALK_CATCHES = {
    "stale-controller-accepted": ("i-epoch", 200, 200),
    "no-fetch-epoch-fencing": ("follower-epoch-known", 40, 5000),   # KIP-320: a fenced fetch served (first seen)
}


def build(params=None, behaviours=()):
    return registry.build("replication-world", params or {}, behaviours)


def test_every_supported_behaviour_has_a_catching_test():
    assert set(CATCHES) | set(WALK_CATCHES) == set(RW.SUPPORTS) == set(RW.HUNT)


def test_smallest_bounds_are_explored_exhaustively_without_violation():
    res = explore(build(SMALLEST), max_seconds=60)
    assert res.complete and res.ok, (res.violations, res.vacuous)
    assert res.distinct_states > 100
    assert all(depth is not None for depth in res.sometimes.values()) and res.sometimes
    assert res.graph.analysed and res.graph.unrecoverable == 0


@pytest.mark.slow
def test_default_bounds_are_explored_exhaustively_without_violation():
    """Issue #5: the defaults (2 replicas, one acks=all record, a broker crash, a controller failover)
    are a bound the explorer finishes (~28,600 states) with no violation, every goal reached and a
    good state always reachable once faults stop."""
    proto = build()
    assert proto.rf == 2 and -1 in proto.acks
    assert proto.params["crashes"] >= 1 and proto.params["failovers"] >= 1 and proto.params["records"] >= 1
    res = explore(proto, max_seconds=120)
    assert res.complete and res.ok, (res.violations, res.vacuous)
    assert res.distinct_states > 20_000
    assert {"acked-all", "committed", "leader-moved"} <= set(res.sometimes)
    assert all(depth is not None for depth in res.sometimes.values())
    assert res.graph.analysed and res.graph.unrecoverable == 0


@pytest.mark.parametrize("behaviour", sorted(CATCHES))
def test_explorer_catches_behaviour_and_not_the_correct_cluster(behaviour):
    params, invariant = RW.HUNT[behaviour], CATCHES[behaviour]
    bad = explore(build(params, {behaviour}), stop_on_first=True, max_states=60_000, graph=False)
    assert bad.violations, f"{behaviour} not caught in {bad.distinct_states} states"
    found = bad.violations[0]
    assert found.invariant == invariant
    # the counterexample replays on a fresh protocol and is a shortest one for its invariant
    _, v = replay(build(params, {behaviour}), found.actions, found.init_index)
    assert v is not None and v.invariant == invariant
    ok = explore(build(params), max_states=bad.distinct_states + 200, graph=False)
    assert not ok.violations, ok.violations[0].violation
    assert ok.distinct_states >= bad.distinct_states
    assert all(depth is not None for depth in ok.sometimes.values()), ok.sometimes


@pytest.mark.parametrize("params", [RICH, RICH_FAILOVER], ids=["drops", "failovers"])
def test_walks_of_a_rich_correct_world_break_nothing_and_reach_every_goal(params):
    proto = build(params)
    reached = set()
    for seed in range(15):
        res = walk(proto, seed, 150)
        assert res.violation is None, f"seed {seed}: {res.violation}"
        reached |= res.reached
    assert reached == {s.name for s in proto.sometimes()}


def test_hypothesis_machine_finds_nothing_on_the_correct_world_and_catches_a_behaviour():
    assert run_machine("replication-world", protocol=build(dict(SINGLE, init_isr=2)), seed=3, profile="fast",
                       database=False) is None
    found = run_machine("replication-world", protocol=build(dict(SINGLE, init_isr=2), {"no-maximal-isr"}),
                        seed=3, profile="fast", database=False)
    assert found is not None and found.violation.invariant == "i-rqs"


@pytest.mark.parametrize("behaviour", sorted(WALK_CATCHES))
def test_walker_then_shrinker_catch_behaviour_and_not_the_correct_cluster(behaviour):
    params, (invariant, length, seeds) = RW.HUNT[behaviour], WALK_CATCHES[behaviour]
    proto = build(params, {behaviour})
    for seed in range(seeds):
        res = walk(proto, seed, length, record_trace=True, track_sometimes=False)
        if res.violation is not None:
            break
    else:
        pytest.fail(f"no walk of {seeds} caught {behaviour}")
    assert res.violation.invariant == invariant
    shrunk = shrink_trace(proto, res.trace, invariant, initial_index(proto, seed))
    assert shrunk.minimal and len(shrunk.actions) < res.violation.step_index
    # the correct cluster takes the same shrunk steps without breaking anything, and the same number
    # of walks from the same seeds find nothing
    ok = build(params)
    _, v = replay(ok, shrunk.actions)
    assert v is None
    for s in range(seed + 1):
        assert walk(ok, s, length, track_sometimes=False).violation is None


def test_walks_are_deterministic_from_their_seed():
    proto = build(RICH)
    a = walk(proto, 11, 120, record_trace=True)
    b = walk(build(RICH), 11, 120, record_trace=True)
    assert a.trace == b.trace and a.steps == b.steps


def test_states_equal_up_to_message_ids_are_one_state():
    proto = build(dict(SINGLE, fetch="split"))
    s0 = proto.init_states()[0]
    fetch2 = ("send_fetch", 2, "t", 0, 1)
    fetch3 = ("send_fetch", 3, "t", 0, 1)
    a = proto.step(proto.step(s0, fetch2), fetch3)
    b = proto.step(proto.step(s0, fetch3), fetch2)
    assert a.cluster.net == b.cluster.net                            # ids renumbered canonically
    assert [e.src for e in a.cluster.net.values()] == [2, 3]
    assert a == b and hash(a) == hash(b)
    assert list(proto.actions(a)) == list(proto.actions(b))          # so equal states offer equal actions


def test_lossy_crash_is_guarded_and_detected_at_once():
    proto = build(dict(SINGLE, lossy=1, acks="-1"))
    s = proto.init_states()[0]
    acts = list(proto.actions(s))
    assert ("crash", 1, True) not in acts                            # broker 1 is the stored leader
    assert ("crash", 2, True) in acts
    t = proto.step(s, ("crash", 2, True))
    st = t.cluster.store.states[("t", 0)]
    assert 2 not in st.isr and not t.cluster.brokers[2].alive       # the controller processed it
    assert t.budget[RW.LOSSY] == 0 and t.budget[RW.CRASHES] == proto.init_states()[0].budget[RW.CRASHES] - 1


def test_budgets_bound_faults_and_parameters_are_checked():
    proto = build({"crashes": 0, "drops": 0, "ticks": 0, "preferred": 0, "records": 0, "failovers": 0})
    names = {a[0] for a in proto.actions(proto.init_states()[0])}
    assert not names & {"crash", "drop", "advance", "elect_preferred", "produce", "expire_controller"}
    for bad in ({"brokers": 6}, {"partitions": 0}, {"acks": "2"}, {"fetch": "eager"}, {"init_isr": 4}):
        with pytest.raises(ValueError):
            build(bad)
    with pytest.raises(registry.ModelError):
        build({}, {"ofle-offset-only"})


def test_sequence_diagram_and_description():
    proto = build(dict(SINGLE, fetch="split"))
    assert proto.participants() == ("producer", "broker 1", "broker 2", "broker 3", "controller")
    assert proto.arrow(("produce", "t", 0, 0, -1, 1)) == ("producer", "broker 1")
    assert proto.arrow(("send_fetch", 2, "t", 0, 1)) == ("broker 2", "broker 1")
    assert proto.arrow(("deliver", 7, "LeaderAndIsr", 0, 3)) == ("controller", "broker 3")
    assert proto.arrow(("deliver", 8, "AlterPartition", 1, 0)) == ("broker 1", "controller")
    assert proto.arrow(("crash", 0, False)) == ("controller", "controller")
    s = proto.step(proto.init_states()[0], ("produce", "t", 0, 0, -1, 1))
    d = proto.describe(s)
    p = d["partitions"]["t-0"]
    assert p["leader"] == 1 and p["isr"] == [1, 2, 3] and p["leader_epoch"] == 0
    assert d["brokers"]["broker 1"]["replicas"]["t-0"]["log"] == ["0@e0"]
    assert d["brokers"]["broker 1"]["replicas"]["t-0"]["role"] == "leader"
    assert d["controller"] == 0 and d["budget"]["records"] == 0


@pytest.mark.parametrize("params,behaviours", [(RICH, ()), (RW.HUNT["truncate-to-hw"], ("truncate-to-hw",))],
                         ids=["correct", "truncate-to-hw"])
def test_walk_memo_gives_the_same_traces_and_verdicts(params, behaviours):
    """The walker's memo (model/walk.py) only saves work: walks sharing one memo, and walks with a
    memo so small that it keeps starting again, take exactly the steps and reach exactly the
    verdicts of plain walks from the same seeds."""
    shared, tiny = WalkMemo(), WalkMemo(limit=50)
    memo_proto, tiny_proto, plain_proto = build(params, behaviours), build(params, behaviours), build(params, behaviours)
    violations = 0
    for seed in range(40):
        runs = [walk(memo_proto, seed, 40, record_trace=True, memo=shared),
                walk(tiny_proto, seed, 40, record_trace=True, memo=tiny),
                walk(plain_proto, seed, 40, record_trace=True, memo=False)]
        a = runs[-1]
        for b in runs[:2]:
            assert (b.trace, b.steps, b.violation, b.deadlock, b.reached, b.actions) == \
                (a.trace, a.steps, a.violation, a.deadlock, a.reached, a.actions), f"seed {seed}"
        violations += a.violation is not None
    assert shared.hits > 0 and len(tiny.nodes) <= 50
    assert (violations > 0) == bool(behaviours)
