"""The abstract replication model: exhaustive runs clean by default, each behaviour a shortest
counterexample, symmetry sound, truncation rules as the KIPs describe them."""
import pytest

from kverify.model import registry
from kverify.model import replication as R
from kverify.model.explore import explore
from kverify.model.walk import replay, walk

SMALL = {"records": 1, "epochs": 1, "alters": 2}


def build(behaviours=(), **params):
    return registry.build("replication", {k: str(v) for k, v in params.items()}, behaviours)


def test_small_bounds_exhaustive_no_violation_and_not_vacuous():
    res = explore(build(**SMALL), graph=False)
    assert res.complete
    assert not res.violations, [(f.invariant, f.violation.message) for f in res.violations]
    assert res.distinct_states > 10_000  # the whole space, not a fragment
    assert res.sometimes["acked-survives-failover"] is not None
    assert res.sometimes["elr-used"] is not None


def test_two_replicas_exhaustive_no_violation():
    res = explore(build(replicas=2, records=2, epochs=2, lossy=1), graph=False)
    assert res.complete and not res.violations, [(f.invariant, f.violation.message) for f in res.violations]


def test_unclean_bounds_without_the_behaviour_are_safe():
    # same bounds that expose unclean-election below: with the switch off, nothing breaks
    res = explore(build(records=1, epochs=2, crashes=2, lossy=0, alters=0, init_isr=2), graph=False)
    assert res.complete and not res.violations


# behaviour -> (params, invariant of the shortest counterexample, its length)
CASES = {
    "truncate-to-hw": (SMALL, "i-lcc", 6),
    "isr-shrinks-to-leader-min-isr-1": (SMALL, "i-dur", 10),
    "hw-ignores-min-isr": (SMALL, "i-lcc", 7),
    "no-maximal-isr": (SMALL, "i-rqs", 6),
    "expand-without-epoch-start": (SMALL, "i-lcc", 11),
    "no-broker-epoch-check": (SMALL, "i-lcc", 11),
    "unclean-election": ({"records": 1, "epochs": 2, "crashes": 2, "lossy": 0, "alters": 0, "init_isr": 2}, "i-dur", 6),
    "ofle-offset-only": ({"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0}, "i-lcc", 12),
    "skip-truncate-same-leader": ({"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0}, "i-lcc", 14),
    "no-fetch-epoch-fencing": ({"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0}, "log-epochs-ordered", 7),
    # the follower's HW covers its diverged record: i-lm (checked first) and hw-bounds break together
    "kafka-14704-hw-before-truncate": (R.HUNT_PARAMS["kafka-14704-hw-before-truncate"][0], "i-lm", 13),
}


@pytest.mark.parametrize("behaviour", sorted(CASES))
def test_behaviour_gives_shortest_counterexample(behaviour):
    params, invariant, length = CASES[behaviour]
    model = build([behaviour], **params)
    res = explore(model, graph=False, stop_on_first=True)
    assert [f.invariant for f in res.violations] == [invariant]
    found = res.violations[0]
    assert len(found.actions) == length
    assert behaviour in {i.name: i for i in model.invariants()}[invariant].broken_by
    # the trace replays to the same violation
    _, v = replay(model, found.actions, found.init_index)
    assert v is not None and v.invariant == invariant


@pytest.mark.slow
def test_stale_controller_accepted_gives_counterexample():
    params = dict(records=1, epochs=2, ctrl_failovers=1, alters=2, crashes=0, lossy=0)
    res = explore(build(["stale-controller-accepted"], **params), graph=False, stop_on_first=True)
    # the zombie controller's election names a second leader at the new controller's epoch: caught at once by
    # leader-epoch-names-one-leader, before the quorum it skips (i-rqs, 10 steps) matters
    assert [f.invariant for f in res.violations] == ["leader-epoch-names-one-leader"]
    assert len(res.violations[0].actions) <= 10
    assert any(a[0] == "zombie_elect" for a in res.violations[0].actions)



def test_controller_failover_with_zombie_is_safe_without_the_behaviour():
    res = explore(build(records=1, epochs=2, ctrl_failovers=1, alters=0, crashes=1, lossy=0), graph=False)
    assert res.complete and not res.violations
    assert res.distinct_states > 50_000


def test_stale_controller_rejected_without_the_behaviour():
    # the zombie controller's request is in the set but no broker may apply it
    model = build(records=0, epochs=2, ctrl_failovers=1, crashes=0, lossy=0)
    s = model.init_states()[0]
    s = model.step(s, ("ctrl_failover",))
    s = model.step(s, ("zombie_elect", 1))
    assert not any(a[0] == "apply" for a in model.actions(s))
    model_b = build(["stale-controller-accepted"], records=0, epochs=2, ctrl_failovers=1, crashes=0, lossy=0)
    assert ("apply", 1, 1) in model_b.actions(s)


def test_kafka_14704_bounds_without_the_behaviour_are_safe_and_reach_the_window():
    # the same bounds: a follower that must truncate sees a leader HW above its diverging record, and
    # only the behaviour lets it take that HW before truncating
    params = R.HUNT_PARAMS["kafka-14704-hw-before-truncate"][0]
    model = build(**params)
    res = explore(model, graph=False)
    assert res.complete and not res.violations, [(f.invariant, f.violation.message) for f in res.violations]
    bad = build(["kafka-14704-hw-before-truncate"], **params)
    found = explore(bad, graph=False, stop_on_first=True).violations[0]
    states, _ = replay(model, found.actions[:-1])         # the window exists in the correct model too
    assert ("truncate", 1) in model.actions(states[-1]) and found.actions[-1] == ("fetch_hw", 1)
    assert not any(a[0] == "fetch_hw" for a in model.actions(states[-1]))


def test_every_supported_behaviour_has_a_case():
    assert set(CASES) | {"stale-controller-accepted"} == set(R.SUPPORTS)


def test_symmetry_is_sound_on_small_bounds():
    on = explore(build(replicas=3, records=1, epochs=1, crashes=1, lossy=0, alters=1), graph=False)
    off = explore(build(replicas=3, records=1, epochs=1, crashes=1, lossy=0, alters=1, symmetry=False), graph=False)
    assert on.complete and off.complete
    assert on.distinct_states < off.distinct_states
    assert on.max_depth == off.max_depth
    assert set(k for k, v in on.sometimes.items() if v is not None) == set(k for k, v in off.sometimes.items() if v is not None)
    bad_on = explore(build(["truncate-to-hw"], **SMALL), graph=False, stop_on_first=True)
    bad_off = explore(build(["truncate-to-hw"], symmetry=False, **SMALL), graph=False, stop_on_first=True)
    assert len(bad_on.violations[0].actions) == len(bad_off.violations[0].actions)


def test_canonical_is_invariant_under_relabelling():
    model = build(**SMALL)
    res = walk(model, seed=7, steps=12, record_trace=True)
    states, _ = replay(model, res.trace)
    for s in states:
        c = model.canonical(s)
        for p, mm in model._all_perms:
            if mm is not None:
                assert model.canonical(model._permute(s, p, mm)) == c


def test_fingerprint_is_the_hash_of_the_canonical_state():
    """The fingerprint hashes the canonical image built as plain tuples: the same value as the named one."""
    model = build(**SMALL)
    states, _ = replay(model, walk(model, seed=3, steps=40, record_trace=True).trace)
    relabelled = 0
    for s in states:
        c = model.canonical(s)
        assert type(c) is R.State and model.canonical(s, named=False) == c
        assert model.fingerprint(s) == hash(c)
        relabelled += c is not s
    assert relabelled > 0                  # the relabelling path was taken, not only the identity


def test_random_walks_are_clean_and_deterministic():
    model = build()
    for seed in range(20):
        a = walk(model, seed=seed, steps=60, record_trace=True)
        assert a.violation is None, (seed, a.violation)
    b1 = walk(model, seed=3, steps=60, record_trace=True)
    b2 = walk(model, seed=3, steps=60, record_trace=True)
    assert b1.trace == b2.trace


def test_bad_parameters_are_one_line_errors():
    with pytest.raises(ValueError, match="replicas=4 must be between 2 and 3"):
        build(replicas=4)
    with pytest.raises(ValueError, match="init_isr"):
        build(init_isr=5)
    with pytest.raises(registry.ModelError):
        registry.build("replication", {"nope": "1"})


# --- truncation rules (replication.md facts 39-45, scenario 3.B(c)) ---------------------------------
def log(*pairs):
    """A log from (leader epoch, record id) pairs."""
    return tuple(R.Record(e, i) for e, i in pairs)


def leader(records, epoch, leso):
    return R.Replica(alive=True, log=records, hw=0, leader_epoch=epoch, partition_epoch=0, controller_epoch=0,
                     leader=0, must_truncate=False, isr=1, alter=R.NO_ALTER, leso=leso, leading_since=epoch)


def test_kip279_fixes_kafka_6361_where_offset_only_diverges():
    # A = {e1: 0..1, e3: 2}, B = {e1: 0, e2: 1..2}; B asks for the end of epoch 2
    a = leader(log((1, 1), (1, 2), (3, 5)), 3, 2)
    b_log = log((1, 1), (2, 3), (2, 4))
    assert R.truncation_point(b_log, 0, a, offset_only=False) == 1     # (epoch 1, end 2) -> min(1, 2, 3)
    assert R.truncation_point(b_log, 0, a, offset_only=True) == 2      # start of epoch 3: keeps 3@e2 at offset 1


def test_follower_tracking_no_smaller_epoch_keeps_diverging_until_a_new_epoch():
    # Kafka's rule when the follower has no epoch <= the leader's answer: truncate to the leader's
    # offset (AbstractFetcherThread.getOffsetTruncationState); the leader then keeps reporting a
    # diverging epoch on fetch (KAFKA-10554) and never counts the follower (KAFKA-13141).
    a = leader(log((0, 1)), 2, 1)
    assert R.truncation_point(log((1, 2)), 0, a, offset_only=False) == 1
    model = build(records=2, epochs=2)
    s = model.init_states()[0]
    follower = s.replicas[1]._replace(log=log((1, 2)), leader_epoch=2, must_truncate=True)
    replicas = (a, follower) + s.replicas[2:]
    assert model.truncation(replicas, 1) == (1, False)
    assert not model.counts(replicas, 0, 1)


def test_kip279_keeps_a_matching_prefix():
    a = leader(log((0, 1), (0, 2), (1, 3)), 1, 2)
    assert R.truncation_point(log((0, 1), (0, 2)), 0, a, offset_only=False) == 2
    assert R.truncation_point(log((0, 1), (0, 2), (0, 4)), 0, a, offset_only=False) == 2
    assert R.truncation_point((), 0, a, offset_only=False) == 0


def test_offset_only_falls_back_to_hw_for_unknown_epochs():
    a = leader(log((1, 1)), 1, 0)
    # follower's last epoch 0 is below the leader's first cached epoch: UNDEFINED -> its HW
    assert R.truncation_point(log((0, 5), (0, 6)), 1, a, offset_only=True) == 1


def test_describe_is_json_and_arrows_name_participants():
    import json
    model = build(**SMALL)
    s = model.step(model.init_states()[0], ("write", 0))
    d = json.loads(json.dumps(model.describe(s)))
    assert d["replicas"][0]["log"] == ["1@e0"] and d["controller"]["isr"] == [0, 1, 2]
    parts = set(model.participants())
    for a in model.actions(s):
        src, dst = model.arrow(a)
        assert src in parts and dst in parts


# --- one action table: the rules named once (model/actions.py) --------------------------------------
def test_actions_steps_and_faults_come_from_the_one_table():
    model = build(**SMALL)
    assert model.action_table is R.ACTIONS and R.ACTION_NAMES == R.ACTIONS.names()
    assert {a.name for a in R.ACTIONS.actions if a.fault} == {"crash", "elect_unclean", "ctrl_failover", "zombie_elect"}
    s = model.init_states()[0]
    for a in model.actions(s):
        assert R.ACTIONS.by_name[a[0]].guard(model, s, *a[1:])
        assert model.step(s, a) == R.ACTIONS.by_name[a[0]].update(model, s, *a[1:])
    assert model.is_fault(("crash", 1)) and not model.is_fault(("write", 0))


def test_every_guard_is_false_outside_its_domain_narrowing():
    """Domains only narrow by role: on reachable states, no guard holds for an argument its domain
    left out (so a domain never hides an enabled action)."""
    model = build(replicas=2, records=1, epochs=2, alters=1, ctrl_failovers=1)
    states, _ = replay(model, walk(model, seed=5, steps=40, record_trace=True).trace)
    n = model.n
    full = {"restart": [(r, k) for r in range(n) for k in range(3)], "apply": [(r, i) for r in range(n) for i in range(4)],
            "shrink": [(r, f) for r in range(n) for f in range(n)], "expand": [(r, f) for r in range(n) for f in range(n)],
            "ctrl_failover": [()]}
    for s in states:
        enabled = set(model.actions(s))
        for a in R.ACTIONS.actions:
            for args in full.get(a.name, [(r,) for r in range(n)]):
                try:
                    holds = a.guard(model, s, *args)
                except IndexError:            # a request / log index beyond the state's
                    continue
                assert not holds or (a.name, *args) in enabled, (a.name, args)


def test_a_mutated_rule_through_replace_action_is_caught():
    """An unclean election that keeps the old ISR (leader outside it) breaks leader-in-isr."""
    params = R.HUNT_PARAMS["unclean-election"][0]
    model = build(["unclean-election"], **params)

    def keeps_isr(m, s, r):
        c = s.controller
        c = c._replace(leader=r, leader_epoch=c.leader_epoch + 1, elr=0, partition_epoch=c.partition_epoch + 1)
        return s._replace(controller=c, requests=R.add_request(s.requests, R.request_from(c)),
                          spent=s.spent._replace(unclean=s.spent.unclean + 1))

    model.replace_action("elect_unclean", update=keeps_isr)
    assert R.ACTIONS.by_name["elect_unclean"].update is R.elect_unclean          # only this object changed
    res = explore(model, graph=False, stop_on_first=True)
    assert "leader-in-isr" in [f.invariant for f in res.violations]


def test_tla_state_names_every_field_once():
    model = build(**SMALL)
    s = model.step(model.init_states()[0], ("write", 0))
    v = R.tla_state(model, s)
    assert set(v) == {"replicas", "controller", "requests", "zombie", "nextRecord", "committed", "acked", "spent"}
    assert v["nextRecord"] == 2 and v["zombie"] == frozenset()
