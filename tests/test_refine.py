"""Refinement of the abstract group model by group-world, and `kverify refine`.

The correct implementation refines the model over seeded random walks, with and without lost
messages and with static members; a world whose coordinator skips the generation bump, and test
doubles that corrupt one step (also a lost message's step), are caught at the step that does not
refine.
"""
import json
import re

import pytest

from kverify.cli import main
from kverify.model import refine, registry


def world(behaviours=(), **params):
    return registry.build("group-world", refine.refinement_params(params, refine.WALK_DEFAULTS), behaviours)


@pytest.mark.parametrize("losses", [0, 2])
def test_correct_world_refines_the_model_over_random_walks(losses):
    res = refine.run(world(losses=losses), 4000, seed=11)
    assert res.mismatch is None, (res.mismatch, res.trace)
    assert res.steps == 4000 and res.walks > 1
    # the walks exercise the model's membership, timer, commit and fault steps, not only stutters
    assert {"start", "sync", "join_timeout", "commit", "commit_arrives", "crash", "expire"} <= set(res.model_actions)
    assert 0 < res.stutters < res.steps


def walk_steps(w, steps, seed):
    """(prev, action, next, model actions) of every step of refine.run's walks (all refining)."""
    ref = refine.GroupRefinement(w)
    out = []
    res = refine.run(w, steps, seed, refinement=ref, observe=lambda *step: out.append(step))
    assert res.mismatch is None, (res.mismatch, res.trace)
    assert len(out) == steps
    return ref, out


def test_lost_messages_and_late_timers_map_onto_the_model():
    w = world(losses=3)
    ref, steps = walk_steps(w, 3000, seed=4)

    def waiting(s, m):          # the model's paused flag while the world's process is not paused
        return ref.abstract(s)[1][m][3] == refine.G.PAUSED and not s.paused[m] and s.members[m].alive

    def member(s, m):
        return bool(ref.abstract(s)[0][3] >> m & 1)

    lost = [(a, t, path) for _s, a, t, path in steps if a[0] == "lose"]
    # a lost message is a stutter that leaves its process waiting until its timer gives up
    assert lost and all(path == () for _a, _t, path in lost)
    assert any(waiting(t, a[2]) for a, t, _p in lost)
    # a timer removes a process that only waits (on a lost message, or a straggler in flight): the
    # model's rebalance timers and session expiry fire for it as for a paused process
    assert any(waiting(s, m) and member(s, m) and not member(t, m)
               for s, a, t, path in steps if a[0] in ("tick", "settle") and path for m in range(w.n))
    # synchronous mode now also leaves outside Stable and pauses with requests in flight
    assert any(a[0] == "leave" and s.members[a[1]].state != "STABLE" for s, a, _t, _p in steps)
    assert any(a[0] == "pause" and s.net.requests[a[1]] for s, a, _t, _p in steps)


def test_static_members_refine_the_model():
    w = world(static=True)
    assert w.params["losses"] == 0 and w.static
    res = refine.run(w, 3000, seed=6)
    assert res.mismatch is None, (res.mismatch, res.trace)
    assert {"start", "sync", "expire", "commit_arrives"} <= set(res.model_actions)


@pytest.mark.parametrize("params", [{}, {"static": True}])
def test_skipped_generation_bump_does_not_refine(params):
    res = refine.run(world(["no-generation-bump"], **params), 4000, seed=0)
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


class PhantomAnswer:
    """Test double: a group-world whose first lost JoinGroup request is answered all the same in the
    process's eyes (it believes it joined a generation the coordinator never formed) — a wrong
    implementation step in the lossy setting."""

    def __init__(self, inner):
        self.inner, self.corrupted = inner, None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def step(self, s, a):
        t = self.inner.step(s, a)
        if self.corrupted is None and a[0] == "lose" and a[1] == "req" and s.answers[a[2]] is not None:
            req = next(e[1] for e in s.net.requests[a[2]] if e[0] == a[3])
            if type(req).__name__ == "JoinGroupRequest":
                g = t.group(self.inner.group_id)
                answers = list(t.answers)
                answers[a[2]] = ("join", g.generation_id + 1, 0, answers[a[2]][3])
                self.corrupted = a
                t = self.inner._build(t, answers=tuple(answers))
        return t


def test_a_wrong_step_on_a_lost_message_is_caught():
    inner = world(losses=3)
    double = PhantomAnswer(inner)
    res = refine.run(double, 20000, seed=1, refinement=refine.GroupRefinement(inner))
    assert double.corrupted is not None and res.mismatch is not None
    assert res.trace[-1] == double.corrupted
    assert "lose(req" in res.mismatch.message and "syncing" in res.mismatch.message


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
    assert w.check_refinement is not None
    s = w.init_states()[0]
    a = list(w.actions(s))[0]
    assert w.check_refinement(s, a, w.step(s, a), 1) is None
    assert registry.build("group-world", {}).check_refinement is None           # asynchronous timers
    assert registry.build("group-world", {"synchronous": True, "losses": 1}).check_refinement is not None
    assert registry.build("group-world", {"synchronous": True, "fifo": False}).check_refinement is None
    assert registry.build("group-world", {"synchronous": True, "static": True, "losses": 1}).check_refinement is None


def test_refinement_params_refuse_what_the_model_does_not_describe():
    with pytest.raises(refine.RefinementError, match="fifo"):
        refine.refinement_params({"fifo": "false"})
    with pytest.raises(refine.RefinementError, match="static members needs losses=0"):
        refine.refinement_params({"static": "true", "losses": "1"})
    assert refine.refinement_params({"static": "true"}, refine.WALK_DEFAULTS)["losses"] == 0
    assert refine.refinement_params({"losses": "1"})["losses"] == 1
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
    ["refine", "--param", "fifo=false"],
    ["refine", "--param", "static=true", "--param", "losses=1"],
    ["refine", "--param", "nope=1"],
    ["refine", "--behaviour", "no-such-behaviour"],
])
def test_cli_bad_input_is_a_one_line_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kverify: error:") and "\n" not in err
