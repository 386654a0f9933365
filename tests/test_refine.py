"""Refinement of the abstract group model by group-world, and `kverify refine`.

The correct implementation refines the model over seeded random walks; a world whose coordinator
skips the generation bump, and a test double that corrupts one step, are both caught at the step
that does not refine.
"""
import json
import re

import pytest

from kverify.cli import main
from kverify.model import refine, registry


def world(behaviours=(), **params):
    return registry.build("group-world", refine.refinement_params(params, refine.WALK_DEFAULTS), behaviours)


def test_correct_world_refines_the_model_over_random_walks():
    res = refine.run(world(), 4000, seed=11)
    assert res.mismatch is None, (res.mismatch, res.trace)
    assert res.steps == 4000 and res.walks > 1
    # the walks exercise the model's membership, timer, commit and fault steps, not only stutters
    assert {"start", "sync", "join_timeout", "commit", "commit_arrives", "crash", "expire"} <= set(res.model_actions)
    assert 0 < res.stutters < res.steps


def test_skipped_generation_bump_does_not_refine():
    res = refine.run(world(["no-generation-bump"]), 4000, seed=0)
    assert res.mismatch is not None
    assert "maps to no model step" in res.mismatch.message
    assert "gen=0" in res.mismatch.message
    assert res.mismatch.step_index == len(res.trace)


class CorruptOneStep:
    """Test double: a group-world whose `corrupt_at`-th step acknowledges a commit nobody sent
    (the committed-offset counter of p0 grows) — a wrong implementation step."""

    def __init__(self, inner, corrupt_at):
        self.inner, self.corrupt_at, self.count = inner, corrupt_at, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def step(self, s, a):
        t = self.inner.step(s, a)
        self.count += 1
        if self.count == self.corrupt_at:
            t = self.inner._build(t, counts=(t.counts[0] + 1,) + t.counts[1:])
        return t


def test_a_corrupted_step_is_reported_at_that_step():
    inner = world()
    double = CorruptOneStep(inner, corrupt_at=9)
    res = refine.run(double, 500, seed=5, refinement=refine.GroupRefinement(inner))
    assert res.mismatch is not None and res.steps == 9
    before, after = re.findall(r"offsets=\((\d+), (\d+)\)", res.mismatch.message)
    assert int(after[0]) == int(before[0]) + 1 and after[1] == before[1]
    # the same walk without the corruption refines
    assert refine.run(inner, 9, seed=5).mismatch is None


def test_the_world_offers_the_refinement_hook_only_where_the_model_applies():
    w = world()
    assert hasattr(w, "check_refinement")
    s = w.init_states()[0]
    a = list(w.actions(s))[0]
    assert w.check_refinement(s, a, w.step(s, a), 1) is None
    assert not hasattr(registry.build("group-world", {}), "check_refinement")           # asynchronous timers
    assert not hasattr(registry.build("group-world", {"synchronous": True, "losses": 1}), "check_refinement")


def test_refinement_params_refuse_what_the_model_does_not_describe():
    with pytest.raises(refine.RefinementError, match="losses"):
        refine.refinement_params({"losses": "1"})
    with pytest.raises(refine.RefinementError, match="partitions"):
        refine.refinement_params({"partitions": 3})
    with pytest.raises(refine.RefinementError, match="members"):
        refine.refinement_params({"members": 3})
    assert refine.refinement_params({"commits": "2"})["synchronous"] is True


def test_hypothesis_machine_checks_refinement_after_every_step():
    from kverify.stateful_tests.machine import run_machine
    params = refine.refinement_params({}, refine.WALK_DEFAULTS)
    assert run_machine("group-world", params, frozenset(), seed=3, database=False, max_examples=15) is None


def test_cli_reports_steps_and_no_mismatch(capsys):
    assert main(["refine", "--steps", "600", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "600 steps, 0 mismatches" in out and "seed=2" in out


def test_cli_exit_1_and_the_trace_on_a_mismatch(capsys):
    assert main(["refine", "--steps", "2000", "--behaviour", "no-generation-bump", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["mismatches"] == 1 and data["mismatch"]["invariant"] == "refines-group-model"
    assert data["mismatch"]["trace"] and data["behaviours"] == ["no-generation-bump"]


@pytest.mark.parametrize("argv", [
    ["refine", "--world", "group"],
    ["refine", "--steps", "0"],
    ["refine", "--param", "losses=1"],
    ["refine", "--param", "nope=1"],
    ["refine", "--behaviour", "no-such-behaviour"],
])
def test_cli_bad_input_is_a_one_line_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kverify: error:") and "\n" not in err
