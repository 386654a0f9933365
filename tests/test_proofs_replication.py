"""The Z3 encoding of the replication model (model/proofs/replication_inductive.py) against the
explicit-state model/replication.py: at small bounds every transition the Python model takes is one
of the encoding's (same action enabled, same successor), every action the encoding enables is
enabled in Python, and the Z3 models of the transition relation from reachable states are exactly
the Python successors. Then the two obligations as `kverify prove` runs them (tests/test_proofs.py leaves them to
this file): proved on the correct model, and falsified by each breaking behaviour with a BMC trace replayed in the
explicit model; the obligation framework's handling of behaviours the encoding does not cover, and a mutated
encoding caught."""

import pytest
import z3

from kverify.model import replication as R
from kverify.model.proofs import by_name, to_record
from kverify.model.proofs import replication_inductive as RI
from proof_helpers import reachable


def _model(params, behaviours=frozenset()):
    p = {k: v[0] for k, v in R.PARAMS.items()}
    p.update(params, symmetry=False)
    return R.ReplicationModel(p, frozenset(behaviours)), p


def _sample(model, limit, every):
    """The first 120 reachable states, every `every`-th after them, and the first state where each
    action kind is enabled (so the sample does not depend on the order actions are enumerated in)."""
    full = reachable(model, limit)
    picked = full[:120] + full[120::every]
    kinds = {a[0] for _, succ in picked for a, _ in succ}
    for state, succ in full[120:]:
        new = {a[0] for a, _ in succ} - kinds
        if new:
            picked.append((state, succ))
            kinds |= new
    return picked


def _z3_action(state, a):
    """The encoding's name of a Python action (requests by leader epoch)."""
    if a[0] == "apply":
        q = state.requests[a[2]]
        current = q.controller_epoch == state.controller.controller_epoch
        return ("apply", a[1], q.leader_epoch) if current else ("apply_stale", a[1])
    return tuple(a)


def _eval(m, nxt, want):
    return {k: (z3.is_true(m.eval(x, model_completion=True)) if isinstance(want[k], bool)
                else m.eval(x, model_completion=True).as_long()) for k, x in nxt.items()}


FULL = {"replicas": 2, "records": 2, "epochs": 2, "crashes": 1, "lossy": 1, "alters": 2, "ctrl_failovers": 1}
CASES = [
    (FULL, frozenset()),
    ({"replicas": 3, "records": 2, "epochs": 2, "crashes": 1, "lossy": 1, "alters": 1, "ctrl_failovers": 1}, frozenset()),
    ({"replicas": 3, "records": 2, "epochs": 2, "crashes": 1, "lossy": 1, "alters": 1}, frozenset({R.B.TRUNCATE_TO_HW})),
    ({"replicas": 3, "records": 1, "epochs": 2, "crashes": 2, "lossy": 0, "alters": 1, "init_isr": 2},
     frozenset({R.B.UNCLEAN_ELECTION})),
    (FULL, frozenset({R.B.ISR_SHRINKS_TO_LEADER})),
]


@pytest.mark.parametrize("n", [2, 3])
def test_the_encoding_has_a_transition_for_every_action_of_the_table_and_no_other(n):
    """One action list: R.ACTIONS (model/replication.py) names every rule; the encoding has exactly
    those, except the actions only a behaviour it does not cover enables."""
    enc = RI.Enc(n, RI.ENCODED)
    names = RI.encoded_action_names(enc)
    assert names == R.ACTIONS.names() - RI.NOT_ENCODED.keys(), names ^ (R.ACTIONS.names() - RI.NOT_ENCODED.keys())
    assert not set(RI.NOT_ENCODED.values()) & RI.ENCODED
    # without the behaviours it is never enabled, so the encoding misses nothing the correct model does
    model, _ = _model({"replicas": n, "records": 1, "epochs": 1})
    assert not any(a[0] in RI.NOT_ENCODED for s, succ in reachable(model, 3000) for a, _ in succ)


def test_a_rule_added_to_the_table_without_an_encoding_is_noticed():
    enc = RI.Enc(2, frozenset())
    extra = R.ActionTable(list(R.ACTIONS.actions) + [R.Action("purge", lambda m, s: False, lambda m, s: s)])
    assert extra.names() - RI.NOT_ENCODED.keys() != RI.encoded_action_names(enc)


@pytest.mark.parametrize("params,behaviours", CASES, ids=lambda x: f"{x['replicas']}r" if isinstance(x, dict)
                         else ",".join(sorted(x)) or "correct")
def test_every_python_transition_is_a_z3_transition_and_back(params, behaviours):
    model, p = _model(params, behaviours)
    enc = RI.Enc(model.n, behaviours)
    s = enc.state("s")
    acts = enc.actions(s)
    states = _sample(model, 6000, 90)
    assert len(states) > 150
    transitions, covered = 0, set()
    for state, succ in states:
        sol = z3.Solver()
        sol.add(enc.equals(s, RI.values_of(state, model.n)), enc.pin(p))
        assert sol.check() == z3.sat
        m = sol.model()
        enabled = {action: nxt for _, action, guard, nxt in acts if z3.is_true(m.eval(guard, model_completion=True))}
        python = {_z3_action(state, a): t for a, t in succ}
        assert set(enabled) == set(python), (model.describe(state), set(enabled) ^ set(python))
        for a, t in python.items():
            want = RI.values_of(t, model.n)
            got = _eval(m, enabled[a], want)
            assert got == want, (a, {k: (got[k], want[k]) for k in want if got[k] != want[k]})
            transitions += 1
            covered.add(a[0])
    assert transitions > 800
    expected = {"restart", "apply", "write", "inc_hw", "alter_resp", "ctrl_alter", "shrink", "expand", "truncate",
                "fetch", "crash", "elect"}
    if p["ctrl_failovers"]:
        expected |= {"ctrl_failover", "zombie_elect"}
    if R.B.UNCLEAN_ELECTION in behaviours:
        expected |= {"elect_unclean"}
        expected -= {"expand", "shrink", "ctrl_alter", "alter_resp"} if not p["alters"] else set()
    if model.n == 3:
        expected -= {"expand"}        # the 3-replica samples are sparse beyond depth 8
    if R.B.TRUNCATE_TO_HW in behaviours:
        expected -= {"truncate"}      # followers never must-truncate: they cut to the HW on becoming one
    assert expected <= covered, expected - covered


@pytest.mark.parametrize("behaviours", [frozenset(), frozenset({R.B.TRUNCATE_TO_HW})],
                         ids=lambda b: ",".join(sorted(b)) or "correct")
def test_z3_models_of_the_transition_relation_are_python_transitions(behaviours):
    """Enumerate every model t of T(s, t) for sampled reachable s: exactly the Python successors."""
    model, p = _model(FULL, behaviours)
    enc = RI.Enc(model.n, behaviours)
    s, t = enc.state("s"), enc.state("t")
    rel = enc.transition(s, t)
    sample = _sample(model, 3000, 150)[::3]
    assert len(sample) > 40
    for state, succ in sample:
        sol = z3.Solver()
        sol.add(rel, enc.equals(s, RI.values_of(state, model.n)), enc.pin(p))
        found = []
        while sol.check() == z3.sat and len(found) <= len(succ):
            v = RI.model_values(enc, sol.model(), t)
            found.append(v)
            sol.add(z3.Not(enc.equals(t, v)))
        python = {tuple(sorted(RI.values_of(nxt, model.n).items())) for _, nxt in succ}
        assert {tuple(sorted(v.items())) for v in found} == python, model.describe(state)


def test_encoding_rejects_a_wrong_successor_and_a_mutated_rule():
    """The cross-check can fail: a successor with one field changed is not in the relation, and an
    encoding whose ELR rule is mutated disagrees with the explicit model on some crash."""
    model, p = _model(FULL)
    enc = RI.Enc(model.n)
    s, t = enc.state("s"), enc.state("t")
    state = reachable(model, 60)[-1][0]
    a = model.actions(state)[0]
    nxt = RI.values_of(model.step(state, a), model.n)
    sol = z3.Solver()
    sol.add(enc.transition(s, t), enc.equals(s, RI.values_of(state, model.n)), enc.pin(p))
    assert sol.check(enc.equals(t, nxt)) == z3.sat
    assert sol.check(enc.equals(t, dict(nxt, cp=nxt["cp"] + 1))) == z3.unsat

    class Mutant(RI.Enc):
        def new_elr(self, old, new, elr):      # forgets KIP-966: the ELR never grows
            return self.M(0)
    mut = RI.Enc.__new__(Mutant)
    mut.__init__(model.n)
    ms = mut.state("s")
    acts = [(act, nx) for _, act, _, nx in mut.actions(ms) if act[0] == "crash"]
    disagree = False
    for state, succ in reachable(model, 400):
        sol = z3.Solver()
        sol.add(mut.equals(ms, RI.values_of(state, model.n)), mut.pin(p))
        assert sol.check() == z3.sat
        m = sol.model()
        for act, nx in acts:
            for pa, pt in succ:
                if tuple(pa) == act:
                    want = RI.values_of(pt, model.n)
                    disagree |= _eval(m, nx, want) != want
    assert disagree


# every (obligation, breaking behaviour) pair: tests/test_proofs.py leaves these obligations to this file and checks
# that this list has every pair
FALSIFIED = [("replication-i-dur", R.B.ISR_SHRINKS_TO_LEADER), ("replication-i-dur", R.B.TRUNCATE_TO_HW),
             ("replication-i-dur", R.B.UNCLEAN_ELECTION), ("replication-i-lcc", R.B.TRUNCATE_TO_HW),
             ("replication-i-lcc", R.B.UNCLEAN_ELECTION)]


@pytest.mark.slow
@pytest.mark.parametrize("name,behaviour", FALSIFIED)
def test_each_breaking_behaviour_is_falsified_by_a_replayed_trace(name, behaviour):
    """`kverify prove NAME --behaviour B` for each behaviour the obligation declares breaking (`expected` says
    falsified for any one of them): BMC finds a shortest trace from the initial state (3 replicas under
    unclean-election, else 2). find_violation replays its trace in model/replication.py (state by state
    against the Z3 trace) and the explicit invariant fails at its end; re-checked here independently, and
    the trace is the counterexample record's."""
    from kverify.invariants import replication as I

    ob = by_name(name)
    beh = frozenset({behaviour})
    assert ob.expected(beh) == "falsified"
    res = ob.check(beh)
    assert res.status == "falsified", res.detail
    cx = res.counterexample
    trace = cx["trace"]
    assert cx["replicas"] == (3 if behaviour == R.B.UNCLEAN_ELECTION else 2) and len(trace) == cx["depth"] + 1 >= 6
    check = {"replication-i-dur": I.check_dur, "replication-i-lcc": I.check_lcc}[name]
    model = R.make(cx["params"], beh)
    s = model.init_states()[0]
    assert model.describe(s) == trace[0]["state"] and check(model.view(s)) is None
    for step in trace[1:]:
        a = tuple(step["action"])
        assert a in model.actions(s)
        s = model.step(s, a)
        assert model.describe(s) == step["state"]
    assert check(model.view(s)) is not None
    rec = to_record(ob, res, beh)
    assert [st.action for st in rec.trace] == [st["action"] for st in trace] and trace[0]["action"] is None
    assert rec.trace[-1].state == trace[-1]["state"]


def test_behaviours_the_encoding_does_not_cover_give_unknown_not_proved():
    ob = by_name("replication-i-lcc")
    other = frozenset({R.B.HW_IGNORES_MIN_ISR})
    assert ob.expected(other) == "unknown"
    res = ob.check(other)
    assert res.status == "unknown" and "hw-ignores-min-isr" in res.detail
    # a group behaviour is irrelevant to the replication obligations, and vice versa
    assert ob.uncovered(frozenset({"no-generation-bump"})) == frozenset()
    assert ob.expected(frozenset({"no-generation-bump"})) == "proved"
    assert by_name("group-exclusive-ownership").expected(other) == "proved"
    assert ob.expected(frozenset({R.B.TRUNCATE_TO_HW})) == "falsified"
    # the I-LCC strengthening is stated for MinISR >= 2: with MinISR 1 nothing is claimed
    shrink = frozenset({R.B.ISR_SHRINKS_TO_LEADER})
    assert ob.expected(shrink) == "unknown" and ob.check(shrink).status == "unknown"
    assert by_name("replication-i-dur").expected(shrink) == "falsified"


def test_replication_obligations_are_default_obligations_now():
    """Proved, so in the default `kverify prove` list and the suite's gate; nothing is left open."""
    from kverify.model.proofs import all_obligations

    default = {o.name for o in all_obligations()}
    full = {o.name for o in all_obligations(include_open=True)}
    assert {"replication-i-dur", "replication-i-lcc"} <= default and full == default


# tests/test_proofs.py leaves these obligations to this file (it checks that this list has every one of them)
OBLIGATIONS = ("replication-i-dur", "replication-i-lcc")


@pytest.mark.parametrize("name", OBLIGATIONS)
def test_correct_model_is_proved_by_1_induction_with_the_named_strengthening(name):
    """The full obligation (2..3 replicas), as `kverify prove` runs it: proved, and its detail names the method,
    the bounds and every strengthening conjunct (the same ones the reachable-state test checks on the explicit
    model)."""
    res = by_name(name).check(frozenset())
    assert res.status == "proved", res.detail
    assert res.detail.startswith("1-induction: inductive for 2..3 replicas"), res.detail
    assert all(c in res.detail for c in RI.STRENGTHENING_NAMES)
    assert ("assuming lossy restarts < MinISR" in res.detail) == (name == "replication-i-dur")
    enc = RI.Enc(3)
    assert tuple(RI.strengthening(enc, enc.state("s"))) == RI.STRENGTHENING_NAMES


@pytest.mark.parametrize("drop", ["unblocked-leader-covers-electable", "leader-of-a-lagging-electable-holds-committed",
                                  "elr-members-joined-while-the-isr-stayed-small"])
def test_without_a_quorum_conjunct_induction_fails_with_a_cti(drop):
    """The quorum argument is needed: dropping one of its conjuncts gives a counterexample to induction for
    3 replicas (a pre-state satisfying the rest, and the step that breaks it), never `proved`."""
    names = tuple(x for x in RI.STRENGTHENING_NAMES if x != drop)
    status, cti = RI.check_inductive("i-lcc", 3, names=names)
    assert status == "falsified" and cti["kind"] == "consecution" and len(cti["trace"]) == 2


def test_the_proof_needs_its_assumption_and_its_holder_count():
    """Without the assumption lossy < MinISR, or without the electable-count conjunct (the holders of the
    committed prefix), I-DUR is not inductive: the checker does find counterexamples to induction."""
    assert RI.check_inductive("i-dur", 2)[0] == "proved"
    status, cti = RI.check_inductive("i-dur", 2, assume=False)
    assert status == "falsified" and cti["kind"] == "consecution"
    names = tuple(x for x in RI.STRENGTHENING_NAMES if x != "electable-count")
    status, cti = RI.check_inductive("i-dur", 2, names=names)
    assert status == "falsified" and cti["action"].startswith("restart")


@pytest.mark.parametrize("params", [FULL, CASES[1][0]], ids=["2r", "3r"])
def test_reachable_states_satisfy_the_strengthening_and_properties(params):
    """Every stated conjunct is an invariant of the explicit model (sampled reachable states), so the
    strengthening is not stronger than what the model does."""
    model, p = _model(params)
    enc = RI.Enc(model.n)
    s = enc.state("s")
    conj = dict(RI.strengthening(enc, s), dur=enc.dur(s), lcc=enc.lcc(s))
    for state, _ in _sample(model, 6000, 40):
        sol = z3.Solver()
        sol.add(enc.equals(s, RI.values_of(state, model.n)), enc.pin(p))
        assert sol.check() == z3.sat
        m = sol.model()
        for name, c in conj.items():
            assert z3.is_true(m.eval(c, model_completion=True)), (name, model.describe(state))
