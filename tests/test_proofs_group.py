"""The Z3 encoding of the group model (model/proofs/group_inductive.py) against the explicit-state
model/group.py: at small bounds every transition the Python model takes is one of the encoding's
(same action enabled, same successor), every action the encoding enables is enabled in Python, and
Z3 models of the transition relation from reachable states are Python transitions ("and vice
versa"). Then the inductive proofs and their counterexamples."""
import pytest
import z3

from kverify.model.group import SUPPORTS, GroupModel
from kverify.model.proofs import group_inductive as G
from kverify.model.proofs import to_record
from kverify.model.proofs.bmc import bmc
from proof_helpers import reachable


PARAMS = {"members": 2, "partitions": 2, "events": 3, "faults": 1, "commits": 2, "max_generation": 3}
PARAMS3 = {"members": 3, "partitions": 2, "events": 3, "faults": 1, "commits": 2, "max_generation": 2}
CASES = [(PARAMS, frozenset())] + [(PARAMS, frozenset({b})) for b in sorted(SUPPORTS)] + [(PARAMS3, frozenset())]


def _sample(model: GroupModel, every: int, limit: int = 10**6):
    """The shallow states (BFS order) plus every `every`-th state of the first `limit` reachable ones."""
    full = reachable(model, limit)
    return full[:150] + full[150::every]


@pytest.mark.parametrize("params,behaviours", CASES,
                         ids=lambda x: f"{x['members']}m" if isinstance(x, dict) else ",".join(sorted(x)) or "correct")
def test_every_python_transition_is_a_z3_transition_and_back(params, behaviours):
    model = GroupModel(params, behaviours)
    n, p = model.n, model.p
    enc = G.Enc(n, p, behaviours)
    s = enc.state("s")
    acts = enc.actions(s)
    states = _sample(model, 60) if model.n == 2 else _sample(model, 150, 60_000)
    assert len(states) > 300
    transitions = 0
    covered = set()
    for state, succ in states:
        sol = z3.Solver()
        sol.add(enc.equals(s, G.values_of(state, n, p, enc.unclean)), enc.maxgen == model.max_gen)
        assert sol.check() == z3.sat
        m = sol.model()
        enabled = {action for _, action, guard, _, _, _ in acts if z3.is_true(m.eval(guard, model_completion=True))}
        assert enabled == set(succ_a for succ_a, _ in succ), (state, enabled)
        by_action = {action: nxt for _, action, _, nxt, _, _ in acts}
        for a, t in succ:
            want = G.values_of(t, n, p, enc.unclean)
            got = {k: (z3.is_true(m.eval(x, model_completion=True)) if k in {f for f, kd in enc.fields() if kd == "bool"}
                       else m.eval(x, model_completion=True).as_long())
                   for k, x in by_action[a].items()}
            assert got == want, (state, a, {k: (got[k], want[k]) for k in want if got[k] != want[k]})
            transitions += 1
            covered.add(a[0])
    assert transitions > 1000
    # every kind of action the model has under these parameters was cross-checked
    expected = {"start", "join", "rejoin", "sync", "commit", "commit_arrives", "leave", "expire", "crash", "pause",
                "stall", "resume", "join_timeout", "admin_reset", "failover"}
    if "kafka-12890-no-sync-barrier" not in behaviours:
        expected.add("sync_timeout")
    if "unclean-election" in behaviours:
        expected.add("unclean_failover")
    assert covered == expected, expected ^ covered


@pytest.mark.parametrize("behaviours", [frozenset(), frozenset({"unclean-election"})],
                         ids=lambda b: ",".join(sorted(b)) or "correct")
def test_z3_models_of_the_transition_relation_are_python_transitions(behaviours):
    """Enumerate every model t of T(s, t) for sampled reachable s: exactly the Python successors."""
    model = GroupModel(PARAMS, behaviours)
    n, p = model.n, model.p
    enc = G.Enc(n, p, behaviours)
    s, t = enc.state("s"), enc.state("t")
    rel = enc.transition(s, t)
    sample = _sample(model, 200)[::3]
    assert len(sample) > 60
    for state, succ in sample:
        sol = z3.Solver()
        sol.add(rel, enc.equals(s, G.values_of(state, n, p, enc.unclean)), enc.maxgen == model.max_gen)
        found = []
        while sol.check() == z3.sat and len(found) <= len(succ):
            v = G.model_values(enc, sol.model(), t)
            found.append(v)
            sol.add(z3.Not(enc.equals(t, v)))
        python = {tuple(sorted(G.values_of(nxt, n, p, enc.unclean).items())) for _, nxt in succ}
        assert {tuple(sorted(v.items())) for v in found} == python, state


@pytest.mark.parametrize("params", [PARAMS, PARAMS3], ids=["2m", "3m"])
def test_reachable_states_satisfy_the_strengthening_and_properties(params):
    """The strengthening is an invariant of the explicit model (reachable states satisfy every
    conjunct), so the inductive invariant is not stronger than what the model does."""
    model = GroupModel(params)
    enc = G.Enc(model.n, model.p)
    s = enc.state("s")
    conj = dict(enc.strengthening(s), exclusive=enc.exclusive(s))
    seen = set()
    for state, _ in _sample(model, 97, 40_000):
        sol = z3.Solver()
        sol.add(enc.equals(s, G.values_of(state, model.n, model.p)))
        assert sol.check() == z3.sat
        m = sol.model()
        for name, c in conj.items():
            assert z3.is_true(m.eval(c, model_completion=True)), (name, model.describe(state))
        seen.add(state[0][0])
    assert seen == {0, 1, 2, 3, 5}


def test_encoding_rejects_a_wrong_successor():
    """The cross-check can fail: a successor with one field changed is not in the relation."""
    model = GroupModel(PARAMS)
    enc = G.Enc(model.n, model.p)
    s, t = enc.state("s"), enc.state("t")
    state = reachable(model, 50)[-1][0]
    a = model.actions(state)[0]
    nxt = G.values_of(model.step(state, a), model.n, model.p)
    sol = z3.Solver()
    sol.add(enc.transition(s, t), enc.equals(s, G.values_of(state, model.n, model.p)), enc.maxgen == model.max_gen)
    assert sol.check(enc.equals(t, nxt)) == z3.sat
    wrong = dict(nxt, gen=nxt["gen"] + 5)
    assert sol.check(enc.equals(t, wrong)) == z3.unsat


def test_assignment_encoding_matches_python_assignor():
    for n, p in ((3, 2), (4, 3), (8, 2)):
        model = GroupModel({"members": min(n, 6), "partitions": p}) if n <= 6 else None
        enc = G.Enc(n, p)
        mem = z3.BitVec("mem", n)
        asg = enc.assign_of(mem)
        for mask in range(1, 1 << n, 7 if n == 8 else 1):
            order = [i for i in range(n) if (mask >> i) & 1]
            want = [0] * n
            for q in range(p):
                want[order[q % len(order)]] |= 1 << q
            if model is not None:
                assert tuple(want) == model.assign(mask)
            got = [z3.simplify(z3.substitute(a, (mem, z3.BitVecVal(mask, n)))).as_long() for a in asg]
            assert got == want, (n, p, mask)


def test_small_bound_proofs_and_timing():
    for prop in G.PROPERTIES:
        status, info = G.check_inductive(prop, 3, 2, frozenset())
        assert status == "proved", (prop, info)


def test_strengthening_is_needed():
    """Without the strengthening, committed-offset safety has a counterexample to induction: the
    property alone is not inductive (so the proof is not vacuous)."""
    enc = G.Enc(3, 1)
    s, t = enc.state("s"), enc.state("t")
    sol = z3.Solver()
    dom = enc.strengthening(s)["domains"]
    bad = [z3.And(g, enc.same(t, nxt), z3.Not(enc.commit_safe(s, t, extra))) for _, _, g, nxt, _, extra in enc.actions(s)]
    sol.add(dom, enc.maxgen >= 0, z3.Or(bad))
    assert sol.check() == z3.sat


@pytest.mark.parametrize("behaviour,prop", [("no-generation-bump", "generation-monotonicity"),
                                            ("unclean-election", "generation-monotonicity"),
                                            ("stale-generation-commit", "committed-offset-safety"),
                                            ("unclean-election", "committed-offset-safety")])
def test_behaviour_gives_counterexample_to_induction(behaviour, prop):
    status, info = G.check_inductive(prop, 3, 2, frozenset({behaviour}))
    assert status == "falsified" and "property" in info["broken"], info
    pre, post = info["trace"][0]["state"], info["trace"][1]["state"]
    if prop == "generation-monotonicity" and behaviour == "no-generation-bump":
        assert post["coordinator"]["generation"] == pre["coordinator"]["generation"]
        assert post["coordinator"]["state"] in ("CompletingRebalance", "Empty")
    elif prop == "generation-monotonicity":
        assert info["action"] == "unclean_failover"
        assert post["coordinator"]["generation"] < pre["max_delivered_generation"]
    elif behaviour == "stale-generation-commit":
        assert info["action"].startswith("commit_arrives")
        m = info["action"].split()[1]
        assert pre["clients"][m]["commit_in_flight"]["generation"] < pre["coordinator"]["generation"]
    else:
        assert info["action"] == "unclean_failover"
        assert any(post["offsets"][q] < pre["offsets"][q] for q in pre["offsets"])


def test_obligation_record_renders_the_reachable_trace():
    """A falsified obligation's record is the BMC trace from the initial state, step by step."""
    ob = next(o for o in G.obligations() if o.name == "group-committed-offset-safety")
    res = ob.check(frozenset({"unclean-election"}))
    assert res.status == "falsified"
    assert "reachable from the initial state in 6 steps" in res.detail, res.detail
    cx = to_record(ob, res, frozenset({"unclean-election"}))
    assert len(cx.trace) == 7 and cx.violation_step == 6
    assert cx.trace[0].action is None and cx.trace[0].label == "initial state"
    assert cx.trace[0].state["coordinator"]["state"] == "Empty"
    assert [s.action[0] for s in cx.trace[1:]] == ["start", "join_timeout", "sync", "commit", "commit_arrives",
                                                    "unclean_failover"]
    assert cx.trace[5].state["offsets"]["p0"] == 1 and cx.trace[6].state["offsets"]["p0"] == 0


def test_cti_record_renders_pre_and_post_state():
    status, info = G.check_inductive("committed-offset-safety", 3, 1, frozenset({"stale-generation-commit"}))
    assert status == "falsified"
    from kverify.model.proofs import Result
    ob = next(o for o in G.obligations() if o.name == "group-committed-offset-safety")
    cx = to_record(ob, Result("falsified", "cti", info), frozenset({"stale-generation-commit"}))
    assert len(cx.trace) == 2 and cx.trace[0].action is None and cx.trace[1].action[0] == "commit_arrives"


@pytest.mark.parametrize("behaviour", ["no-generation-bump", "unclean-election"])
def test_exclusive_ownership_proved_under_behaviours_with_the_ownership_strengthening(behaviour):
    """Generations do not grow (no-bump) or go back (unclean): the correct model's strengthening is
    not inductive there, the generation-agnostic ownership strengthening is."""
    b = frozenset({behaviour})
    assert G.check_inductive("exclusive-ownership", 3, 2, b)[0] == "falsified"
    status, info = G.check_inductive("exclusive-ownership", 3, 2, b, ownership=True)
    assert status == "proved", info


@pytest.mark.parametrize("params,behaviour", [(PARAMS, ""), (PARAMS, "no-generation-bump"), (PARAMS3, "unclean-election")],
                         ids=["2m", "2m-no-generation-bump", "3m-unclean-election"])
def test_reachable_states_satisfy_the_ownership_strengthening(params, behaviour):
    model = GroupModel(params, frozenset({behaviour} - {""}))
    enc = G.Enc(model.n, model.p, model.behaviours)
    s = enc.state("s")
    conj = enc.ownership_strengthening(s)
    for state, _ in _sample(model, 331, 20_000):
        sol = z3.Solver()
        sol.add(enc.equals(s, G.values_of(state, model.n, model.p, enc.unclean)))
        assert sol.check() == z3.sat
        m = sol.model()
        for name, c in conj.items():
            assert z3.is_true(m.eval(c, model_completion=True)), (name, model.describe(state))


# --- reachability (BMC, model/proofs/bmc.py) ---------------------------------------------------------
@pytest.mark.parametrize("behaviour,prop,rung,depth", [("no-generation-bump", "generation-monotonicity", 0, 2),
                                                       ("unclean-election", "generation-monotonicity", 0, 4),
                                                       ("unclean-election", "committed-offset-safety", 0, 6),
                                                       ("no-generation-bump", "committed-offset-safety", 1, 8),
                                                       ("stale-generation-commit", "committed-offset-safety", 1, 8)])
def test_bmc_trace_replays_in_the_explicit_model(behaviour, prop, rung, depth):
    """The BMC trace is a path of model/group.py: every state equals the Python successor and the
    property's invariant fails at the last step (and only there)."""
    b = frozenset({behaviour})
    cx, detail = G.hunt(prop, b, configs=G.HUNTS[rung:rung + 1])     # the rung `hunt` finds it in
    assert cx is not None and cx["depth"] == depth, detail
    model = GroupModel(cx["params"], b)
    inv = next(i for i in model.invariants() if i.name == prop)
    s = model.init_states()[0]
    assert G.describe_values(G.values_of(s, model.n, model.p, model.unclean), model.n, model.p) == cx["trace"][0]["state"]
    for k, step in enumerate(cx["trace"][1:], 1):
        a = tuple(step["action"])
        assert a in model.actions(s)
        t = model.step(s, a)
        assert G.describe_values(G.values_of(t, model.n, model.p, model.unclean), model.n, model.p) == step["state"]
        msg = inv.check(s, a, t) if inv.kind == "step" else inv.check(t)
        assert (msg is not None) == (k == depth), (k, msg)
        s = t


def test_breaking_sets_are_the_models_behaviours():
    from kverify.model.group import SUPPORTS

    for ob in G.obligations():
        assert ob.breaking <= SUPPORTS, ob.name
    assert G.BREAKING["exclusive-ownership"] == frozenset()
    assert G.BREAKING["committed-offset-safety"] == {"stale-generation-commit", "unclean-election", "no-generation-bump"}


def test_failed_proof_falls_back_to_bmc():
    """With a breaking set that leaves the behaviour out, the proof fails (CTI) and BMC still
    reports the reachable violation (so `kverify prove` flags the wrong expectation)."""
    res = G._run("generation-monotonicity", frozenset())(frozenset({"no-generation-bump"}))
    assert res.status == "falsified" and res.counterexample["kind"] == "bmc"
    assert [step["action"][0] for step in res.counterexample["trace"][1:]] == ["start", "join_timeout"]


def test_explorer_agrees_no_generation_bump_breaks_committed_offset_safety():
    """The explicit explorer, shown only committed-offset-safety (it does not expand violating
    states, and generation-monotonicity fails at the first join), finds the same violation. Without
    symmetry reduction: GroupModel.canonical merges slot permutations, but the assignment (p0 to the
    lowest slot) depends on slot order, so with these bounds the reduced search misses this trace."""
    from kverify.model.explore import explore

    class Only(GroupModel):
        def invariants(self):
            return tuple(i for i in super().invariants() if i.name == "committed-offset-safety")

    params = {"members": 2, "partitions": 1, "events": 2, "faults": 0, "commits": 1}
    res = explore(Only(params, frozenset({"no-generation-bump"})), symmetry=False, stop_on_first=True, graph=False)
    assert [f.violation.invariant for f in res.violations] == ["committed-offset-safety"]
    assert explore(Only(params), symmetry=False, graph=False).violations == []


def test_cti_without_reachable_violation_is_unknown(monkeypatch):
    """A CTI alone never falsifies: when BMC finds nothing within its bound the answer is unknown,
    naming the CTI and the bound searched."""
    real = G.hunt
    monkeypatch.setattr(G, "hunt", lambda prop, b: real(prop, b, configs=(dict(G.HUNTS[0], depth=1),)))
    res = G._run("generation-monotonicity", frozenset())(frozenset({"no-generation-bump"}))
    assert res.status == "unknown", res.detail
    assert "counterexample to induction" in res.detail and "BMC clean to depth 1" in res.detail


def test_bmc_finds_no_ownership_violation_under_no_generation_bump():
    cfg = G.HUNTS[0]
    enc = G.Enc(cfg["members"], cfg["partitions"], frozenset({"no-generation-bump"}))
    bad_state, _ = G.bad_predicates(enc, "exclusive-ownership")
    assert bmc(G.Bounded(enc, cfg), 4, bad_state=bad_state).status == "clean"


# --- sticky optimum (model/proofs/sticky_optimum.py) ------------------------------------------------
def test_sticky_problems_are_the_certifications_and_not_trivial():
    from kverify.certify.check import identical_subscriptions
    from kverify.model.proofs import sticky_optimum as SO

    scs = SO.certification_scenarios()
    assert len(scs) == SO.SCENARIOS and scs == SO.certification_scenarios()   # derandomized: same list
    rounds = SO.problems()
    assert len(rounds) >= SO.SCENARIOS and all(identical_subscriptions(p) for p, _ in rounds)
    # many rounds have claims to keep, some with members of more than one generation (stale claims)
    claims = [p for p, _ in rounds if any(m.get("owned") for m in p["members"])]
    assert len(claims) > len(rounds) // 4
    assert any(len({m.get("generation") for m in p["members"] if m.get("owned")}) > 1 for p in claims)


def test_sticky_z3_optimum_agrees_with_certify_formula():
    """certify's Z3 Optimize model and its closed formula for identical subscriptions agree."""
    from kverify.certify.optimum import _identical_optimum
    from kverify.certify.properties import effective_owners, subscribed_partitions
    from kverify.model.proofs import sticky_optimum as SO

    positive = 0
    for problem, answer in SO.problems(count=15):
        kept, best = SO.kept_and_optimum(problem, answer)
        parts = subscribed_partitions(problem)
        live = {tp: w for tp, w in effective_owners(problem).items() if tp in set(parts)}
        assert best == _identical_optimum(problem, live, parts)
        assert kept == best
        positive += best > 0
    assert positive > 5


def test_sticky_optimum_falsified_by_stale_owner_ignored():
    from kverify.model.proofs import sticky_optimum as SO

    ob = SO.obligations()[0]
    res = ob.check(frozenset({"kafka-14639-stale-owner-ignored"}))
    assert res.status == "falsified"
    c = res.counterexample
    assert c["kept"] < c["optimum"]
    kept, best = SO.kept_and_optimum(c["problem"], c["answer"])     # re-judged independently
    assert (kept, best) == (c["kept"], c["optimum"])


@pytest.mark.parametrize("behaviour", ["leader-not-reelected", "kafka-12890-no-sync-barrier"])
def test_behaviours_that_break_other_properties_keep_these_proved(behaviour):
    for prop in G.PROPERTIES:
        status, info = G.check_inductive(prop, 3, 2, frozenset({behaviour}))
        assert status == "proved", (prop, info)


def test_encoding_has_one_transition_per_model_action_and_back():
    """The Z3 encoding walks model/group.py's ActionTable: every action name there has an encoding
    and every encoding names an action, under the settings where each can happen."""
    from kverify.model.group import ACTIONS

    enc = G.Enc(2, 2, frozenset({"unclean-election"}))
    assert enc.check_actions() == []
    names = {action[0] for _, action, _, _, _, _ in enc.actions(enc.state("s"))}
    assert names == set(ACTIONS.names())
    # settings that switch an action off drop exactly that one
    plain = G.Enc(2, 1, frozenset({"kafka-12890-no-sync-barrier"}))
    assert {a[0] for _, a, *_ in plain.actions(plain.state("s"))} == set(ACTIONS.names()) - {"sync_timeout",
                                                                                             "unclean_failover"}


def test_encoding_missing_an_action_or_encoding_a_stray_one_is_refused(monkeypatch):
    from kverify.model.group import ACTIONS

    monkeypatch.delattr(G.Enc, "enc_stall")
    with pytest.raises(ValueError, match="action 'stall' has no encoding enc_stall"):
        G.Enc(2, 1)
    monkeypatch.undo()
    monkeypatch.setattr(G.Enc, "enc_teleport", lambda self, s: None, raising=False)
    with pytest.raises(ValueError, match="encoding enc_teleport is no action of model/group.py"):
        G.Enc(2, 1)
    assert "teleport" not in ACTIONS.names()
