"""Z3 obligations of the KIP-848 model (model/proofs/consumer_group_inductive.py): the encoding is the
model's ActionTable, it agrees with the Python model transition by transition, the correct model's
properties are proved inductive, and each breaking behaviour is falsified by a trace the model replays."""
import pytest
import z3

from kverify.invariants import consumer_group as I
from kverify.model import consumer_group as CG
from kverify.model import registry
from kverify.model.proofs import all_obligations, by_name
from kverify.model.proofs import consumer_group_inductive as E
from kverify.model.search import ExactStore, Visitor, search

ALL_BEHAVIOURS = frozenset(CG.SUPPORTS)


def test_encoding_names_every_action_of_the_table_and_nothing_else(monkeypatch):
    enc = E.Enc()                                      # constructs: names agree
    assert {a[1][0] for a in enc.actions(enc.state("x"))} == CG.ACTIONS.names()
    extra = type("Extra", (E.Enc,), {"enc_gossip": lambda self, s, i: None})
    with pytest.raises(ValueError, match="not actions"):
        extra()
    monkeypatch.delattr(E.Enc, "enc_lose")
    with pytest.raises(ValueError, match="not encoded"):
        E.Enc()


def _value(term):
    t = z3.simplify(term)
    return z3.is_true(t) if z3.is_bool(t) else t.as_long()


@pytest.mark.parametrize("behaviours", [frozenset(), ALL_BEHAVIOURS], ids=["correct", "all-behaviours"])
def test_encoding_agrees_with_the_model_on_every_transition_of_reachable_states(behaviours):
    proto = registry.build("consumer-group", {"perturbations": 1, "losses": 1, "commits": 1, "grow": False}, behaviours)
    states = []

    class Collect(Visitor):
        def on_new(self, idx, state, depth, src, action):
            states.append(state)
    search(proto, ExactStore(), [Collect()], max_states=70)
    enc = E.Enc(behaviours)
    checked = 0
    for st in states:
        enabled = set(proto.actions(st))
        for label, action, guard, nxt in enc.actions(E.as_terms(E.values_of(st))):
            assert _value(guard) == (action in enabled), (label, proto.describe(st))
            if action in enabled:
                want = E.values_of(proto.step(st, action))
                got = {k: _value(v) for k, v in nxt.items()}
                assert got == want, (label, {k: (got[k], want[k]) for k in got if got[k] != want[k]})
                checked += 1
    assert checked > 100


PROPS = list(E.STATE_PROPS) + list(E.STEP_PROPS)


@pytest.mark.parametrize("name", [f"consumer-group-{p}" for p in PROPS])
def test_correct_model_properties_are_proved_inductive(name):
    ob = by_name(name)
    res = ob.check(frozenset())
    assert (res.status, ob.expected(frozenset())) == ("proved", "proved"), res.detail


# every obligation with a breaking behaviour (tests/test_proofs.py leaves them to this file), with the BMC depth
FALSIFIED = [("consumer-group-empty-group-epochs-agree", I.B20442, 2),
             ("consumer-group-partition-epochs-name-owners", I.B16147, 5),
             ("consumer-group-client-epochs-valid", I.B19335, 7),
             ("consumer-group-epoch-follows-target", I.B19974, 9)]


@pytest.mark.parametrize("name,behaviour,depth", FALSIFIED)
def test_breaking_behaviour_is_falsified_by_a_replayed_trace(name, behaviour, depth):
    ob = by_name(name)
    assert ob.breaking == frozenset({behaviour})            # the whole breaking set: `kverify prove`'s own check
    res = ob.check(ob.breaking)
    assert res.status == "falsified" == ob.expected(frozenset({behaviour})), res.detail
    assert res.counterexample["depth"] == depth and "model/consumer_group.py" in res.detail
    actions = [tuple(step["action"]) for step in res.counterexample["trace"][1:]]
    ok, msg = E.replay_in_model(name.replace("consumer-group-", ""), frozenset({behaviour}), actions)
    assert ok, msg


def test_obligations_are_listed_and_cover_every_behaviour_of_the_model():
    names = [ob.name for ob in all_obligations()]
    ours = [n for n in names if n.startswith("consumer-group-")]
    assert len(ours) == 6
    breaking = set().union(*(by_name(n).breaking for n in ours))
    assert breaking == {I.B16147, I.B19974, I.B20442, I.B19335}
    assert all(by_name(n).encodes == ALL_BEHAVIOURS for n in ours)
