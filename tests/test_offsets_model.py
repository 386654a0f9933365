"""The offsets model: coordinator failover over the replicated offsets partition keeps what was
acknowledged or delivered, loses (allowed) a generation that was never persisted, and breaks under
an unclean election."""
import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import replay, walk

UNCLEAN = {"records": "1", "joins": "0", "epochs": "2", "crashes": "2", "init_isr": "2"}


def build(params=None, behaviours=()):
    return registry.build("offsets", params or {}, behaviours)


def run(model, trace):
    states = [model.init_states()[0]]
    for a in trace:
        assert a in list(model.actions(states[-1])), f"{a} not enabled in {model.actions(states[-1])}"
        states.append(model.step(states[-1], a))
    return states


def inv(model, name):
    return next(i for i in model.invariants() if i.name == name)


def test_small_bounds_exhaustive_no_violation_and_not_vacuous():
    res = explore(build({"records": "1", "joins": "1"}), graph=False)
    assert res.complete and not res.violations, [(f.invariant, f.violation.message) for f in res.violations]
    assert res.sometimes["commit-survives-failover"] is not None


def test_invariants_include_the_group_ones():
    names = {i.name for i in build().invariants()}
    assert {"acked-commit-durable", "generation-monotonicity", "valid-state-transition", "i-dur"} <= names


def test_unclean_bounds_without_the_behaviour_are_safe():
    res = explore(build(UNCLEAN), graph=False)
    assert res.complete and not res.violations


def test_unclean_election_gives_shortest_counterexample():
    res = explore(build(UNCLEAN, ["unclean-election"]), graph=False, stop_on_first=True)
    assert res.violations
    found = res.violations[0]
    assert len(found.actions) == 6 and found.actions[-1][0] == "elect_unclean"


def test_acked_commit_lost_by_unclean_election_is_caught():
    model = build(UNCLEAN, ["unclean-election"])
    states = run(model, [("commit", 0, 0), ("fetch", 1), ("inc_hw", 0), ("crash", 0), ("crash", 1),
                         ("elect_unclean", 2), ("apply", 2, 3)])
    check = inv(model, "acked-commit-durable").check
    assert check(states[3]) is None                  # acknowledged and served
    msg = check(states[-1])
    assert msg and "serves offset 0 for p0 but 1 was acknowledged" in msg


def test_acked_commit_survives_clean_failover():
    model = build({"records": "1", "joins": "0"})
    trace = [("commit", 0, 0), ("fetch", 1), ("fetch", 2), ("inc_hw", 0), ("crash", 0), ("elect", 1), ("apply", 1, 2)]
    states, v = replay(model, trace)
    assert v is None
    assert model._commit_survives(states[-1])
    assert model.served_offsets(states[-1]) == (1,)


def test_delivered_assignment_lost_by_unclean_election_is_caught():
    params = dict(UNCLEAN, records="2", joins="2")
    model = build(params, ["unclean-election"])
    trace = [("join", 0), ("sync", 0), ("fetch", 1), ("inc_hw", 0), ("crash", 0), ("crash", 1),
             ("elect_unclean", 2), ("apply", 2, 3)]
    states = run(model, trace)
    assert model.delivered(states[4]) == ((1, (0b01, 0b10)),)
    gm = inv(model, "generation-monotonicity")
    msg = gm.check(states[-2], trace[-1], states[-1])
    assert msg and "generation 1's assignment was already delivered" in msg


def test_unpersisted_generation_lost_and_reused_is_allowed():
    model = build({"records": "1", "joins": "2", "epochs": "2", "crashes": "1"})
    trace = [("join", 0), ("crash", 0), ("elect", 1), ("apply", 1, 2), ("join", 1), ("sync", 1),
             ("apply", 2, 2), ("truncate", 2), ("fetch", 2), ("inc_hw", 1)]
    states, v = replay(model, trace)
    assert v is None, v
    assert model._lost_reused(states[-1])
    assert model.delivered(states[-1]) == ((1, (0b10, 0b01)),)
    assert not model._lost_reused(states[-2])


def test_random_walks_clean_and_deterministic():
    model = build()
    for seed in range(15):
        res = walk(model, seed=seed, steps=60)
        assert res.violation is None, (seed, res.violation)
    assert walk(model, seed=4, steps=40, record_trace=True).trace == walk(model, seed=4, steps=40, record_trace=True).trace


def test_symmetry_keeps_the_coordinator_with_its_replica():
    model = build({"records": "1", "joins": "1"})
    res = walk(model, seed=11, steps=15, record_trace=True)
    states, _ = replay(model, res.trace)
    ldr = 6                                   # replica field: the leader it believes in
    for s in states:
        c = model.canonical(s)
        assert model.canonical(c) == c
        o, co = s[1][0], c[1][0]
        assert (o < 0) == (co < 0)
        if o >= 0:
            # the coordinator moved with its replica: same replica state, same belief
            assert (s[0][0][o][ldr] == o) == (c[0][0][co][ldr] == co)
            assert s[0][0][o][1] == c[0][0][co][1]
        assert model.served_offsets(c) == model.served_offsets(s)


def test_bad_parameters():
    with pytest.raises(ValueError, match="partitions"):
        build({"partitions": "3"})
    with pytest.raises(ValueError, match="joins"):
        build({"joins": "9"})


def test_describe_is_json_and_names_the_coordinator():
    import json
    model = build({"records": "1", "joins": "1"})
    s = run(model, [("join", 0), ("sync", 0)])[-1]
    d = json.loads(json.dumps(model.describe(s)))
    assert d["coordinator"]["broker"] == 0 and d["coordinator"]["generation"] == 1
    assert d["replicas"][0]["log"] == ["group(gen 1, [1, 2])@e0"]
    assert model.arrow(("commit", 0, 0)) == ("broker 0", "broker 0")


def test_fingerprint_is_the_hash_of_the_canonical_state():
    """The fingerprint hashes the canonical image built as plain tuples: the same value as the named one."""
    from kverify.model import offsets as O
    model = build({"records": "2", "joins": "1"})
    states = run(model, [])
    for seed in range(3):
        res = walk(model, seed=seed, steps=30, record_trace=True)
        states.extend(replay(model, res.trace)[0])
    relabelled = 0
    for s in states:
        c = model.canonical(s)
        assert type(c) is O.OffsetsState and model.canonical(s, named=False) == c
        assert model.fingerprint(s) == hash(c)
        relabelled += c is not s
    assert relabelled > 0
