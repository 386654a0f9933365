"""Refinement of consumer-group-world (impl/consumer) to the abstract consumer-group model (K3):
seeded walks map every world step to a stutter or a short model path; a wrong abstraction and an
implementation mutant the model does not share are both caught."""
import pytest

from kverify.impl.consumer import behaviours as CB
from kverify.model import consumer_group as CG
from kverify.model import registry
from kverify.model.worlds import consumer_group_refine as R


def world(params=None, behaviours=()):
    return registry.build("consumer-group-world", R.refinement_params(params or {}, R.WALK_DEFAULTS), behaviours)


def test_seeded_walks_refine_the_model():
    res = R.run(world(), 20_000, seed=0)
    assert res.mismatch is None, (res.mismatch, res.trace)
    assert res.steps == 20_000
    matched = set(res.model_actions)
    assert matched == set(CG.ACTION_NAMES), set(CG.ACTION_NAMES) - matched      # every model action is matched


def test_leave_and_resubscribe_map_onto_the_model():
    w = world({"members": 1, "topics": 1, "perturbations": 2, "losses": 0, "grow": False})
    ref = R.ConsumerGroupRefinement(w)
    s = w.init_states()[0]
    path = []

    def do(a):
        nonlocal s
        assert a in w.actions(s), (a, w.actions(s))
        nxt = w.step(s, a)
        assert ref.check(s, a, nxt) is None, ref.check(s, a, nxt)
        path.extend(x[0] for x in ref.last_path)
        s = nxt

    def settle():
        while s.net.requests[0] or s.net.responses[0]:
            do(("deliver", 0) if s.net.requests[0] else ("receive", 0))

    do(("start", 0))
    settle()
    do(("leave", 0))                      # the leave commit and the leave heartbeat go out
    settle()
    assert s.clients[0].state == "UNSUBSCRIBED" and w.view(s).members == ()
    do(("resubscribe", 0))
    settle()
    assert "leave" in path and "resubscribe" in path and path.count("heartbeat") >= 3
    assert s.clients[0].state == "STABLE" and w.view(s).group_epoch == 3 and w.view(s).clients[0].owned == 1


def test_the_world_offers_the_hook_only_inside_the_model():
    assert world().check_refinement is not None
    assert registry.build("consumer-group-world", {}).check_refinement is None


def test_refinement_params_refuse_a_real_assignor():
    with pytest.raises(R.RefinementError):
        R.refinement_params({"assignor": "uniform"})
    assert R.refinement_params({})["synchronous"] is True


class _ForgetsRevocations(R.ConsumerGroupRefinement):
    """A deliberately wrong abstraction: pending revocations are dropped from the members."""

    def abstract(self, s):
        a = super().abstract(s)
        members = tuple(m._replace(pending_revocation=0) for m in a.group.members)
        return a._replace(group=a.group._replace(members=members))


def test_a_wrong_mapping_is_caught():
    w = world()
    res = R.run(w, 20_000, seed=0, refinement=_ForgetsRevocations(w))
    assert res.mismatch is not None and "maps to no model step" in res.mismatch.message


@pytest.mark.parametrize("behaviour", [CB.LOST_PARTITION_EPOCH, CB.OWN_REVOCATION_UNRELEASED])
def test_an_impl_mutant_is_caught(behaviour):
    """The coordinator runs a historical bug, the model does not: some step maps to no model step."""
    w = world(behaviours=[behaviour])
    p = w.params
    fixed = CG.ConsumerGroupModel({"members": w.n, "topics": w.t, "partitions": p["partitions"], "grow": p["grow"],
                                   "perturbations": R.BIG, "losses": R.BIG, "commits": R.BIG}, frozenset())
    res = R.run(w, 20_000, seed=0, refinement=R.ConsumerGroupRefinement(w, model=fixed))
    assert res.mismatch is not None, behaviour
    same = R.run(w, max(res.steps, 2_000), seed=0)      # the model with the same bug: the same walks refine
    assert same.mismatch is None, (same.mismatch, same.trace)


def test_hypothesis_machine_checks_the_refinement_hook():
    from kverify.stateful_tests.machine import run_machine
    assert run_machine("consumer-group-world", R.refinement_params({}, R.WALK_DEFAULTS), seed=1, database=False,
                       max_examples=20) is None
