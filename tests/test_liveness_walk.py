"""Liveness in walks (issue 17): the `Eventually` properties judged as bounded responses along seeded walks
and their fair tails (model/response.py, model/walk.py), the `liveness:walk/*` checks of `kverify verify` at
the quick profile's own budgets catching a deliberately broken controller or coordinator, and
`kverify simulate --engine inline` reporting a replayable record."""
import json

import pytest

from kverify.invariants.liveness import Eventually
from kverify.model import registry
from kverify.model.protocol import Protocol
from kverify.model.response import DEFAULT_BOUND, bounded_response, replay_response, response_record
from kverify.model.walk import walk
from kverify.suite import Context, profiles
from kverify.suite import liveness_walks as LW
from kverify.suite.verdicts import FAIL, PASS

from planted_mutants import plant


class Toy(Protocol):
    """0 -fail-> 1 <-spin-> 2; `heal` (1 -> 3) only when `heals`; `restart` (2 -> 3) is the failed node's
    return, excluded from the fair moves; 3 -fail-> 1 while `fails` allows another fault."""

    name = "toy"

    def __init__(self, heals: bool):
        self.heals = heals

    def init_states(self):
        return [(0, 2)]

    def actions(self, s):
        st, faults = s
        fail = [("fail",)] if faults else []
        return {0: fail, 1: [("spin",)] + ([("heal",)] if self.heals else []), 2: [("spin",), ("restart",)],
                3: fail}[st]

    def step(self, s, a):
        st, faults = s
        if a == ("fail",):
            return (1, faults - 1)
        return ({("heal",): 3, ("restart",): 3}.get(a, 3 - st), faults)

    def is_fault(self, a):
        return a[0] == "fail"

    def liveness(self):
        return (Eventually("healed", "the toy heals", lambda s: None if s[0] in (0, 3) else f"in {s[0]}",
                           excluded=lambda a: a[0] == "restart"),)


def test_a_run_that_never_responds_fails_where_the_bound_runs_out():
    toy = Toy(heals=False)
    res = walk(toy, 0, 30, record_trace=True, response_bound=5)
    # the fault at step 1 starts the obligation; its fair tail can only spin
    assert res.violation.invariant == "healed" and res.violation.step_index == 6
    assert res.trace == [("fail",)] + [("spin",)] * 5 and res.responses == {"healed": [1, 0]}
    assert "still pending 5 fair steps after step 1" in res.violation.message
    assert bounded_response(toy, toy.liveness()[0], 0, res.trace, 5) == res.violation


def test_a_run_that_responds_passes_and_tails_leave_the_walk_unchanged():
    toy = Toy(heals=True)
    for seed in range(50):
        judged = walk(toy, seed, 30, record_trace=True, response_bound=60)
        plain = walk(toy, seed, 30, record_trace=True)
        assert judged.violation is None and judged.trace == plain.trace and judged.steps == plain.steps
        tails, longest = judged.responses["healed"]
        assert tails >= 1 and 1 <= longest <= 60 and judged.tail_steps >= tails
    # the same seed gives the same verdict, tails and all
    assert walk(toy, 7, 30, response_bound=60) == walk(toy, 7, 30, response_bound=60)


def test_a_state_without_a_fair_move_fails_at_once():
    """No heal, and from state 2 only the excluded restart would help: with `spin` gone the tail stands still."""
    class Stuck(Toy):
        def actions(self, s):
            return [a for a in super().actions(s) if a != ("spin",)] if s[0] == 1 else super().actions(s)
    stuck = Stuck(heals=False)
    res = walk(stuck, 0, 30, record_trace=True, response_bound=5)
    assert res.violation.step_index == 1 and "no fair move is enabled" in res.violation.message
    assert bounded_response(stuck, stuck.liveness()[0], 0, res.trace, 5) == res.violation


def _rw():
    params = dict(registry.spec_for("replication-world").walk_params)
    return registry.build("replication-world", params, frozenset())


@pytest.mark.parametrize("planted", [False, True], ids=["correct", "never-fails-over"])
def test_the_memoised_walker_gives_the_same_verdicts(planted, monkeypatch):
    if planted:
        plant(monkeypatch, "never-fails-over")
    proto = _rw()
    assert proto.memo_safe
    for seed in range(4):
        a = walk(proto, seed, 60, record_trace=True, response_bound=400, memo=False)
        b = walk(proto, seed, 60, record_trace=True, response_bound=400)
        assert (a.violation, a.trace, a.responses, a.tail_steps) == (b.violation, b.trace, b.responses, b.tail_steps)
        assert (a.violation is not None) == planted


# --- the verify checks, at the quick profile's budgets -----------------------------------------------------
def _run(tmp_path, check):
    return LW._check(check)(Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False))


@pytest.fixture(scope="module")
def correct(tmp_path_factory):
    return {c: _run(tmp_path_factory.mktemp("ok"), c) for c in LW.WALK_CHECKS}


@pytest.mark.parametrize("check", list(LW.WALK_CHECKS))
def test_the_correct_build_passes_each_quick_check(correct, check):
    res = correct[check]
    assert res.verdict == PASS, res.summary
    figures = res.figures["responses"]
    assert figures and all(f["tails"] > 0 and f["longest"] < LW.response_bound("quick") for f in figures.values())
    print(check, res.summary)


CAUGHT = [("liveness:walk/replication-world", "never-fails-over", "leader-failover", "no live leader"),
          ("liveness:walk/offsets-world", "never-fails-over", "commit-readable", "not served by any loaded"),
          ("liveness:walk/group-world", "coordinator-never-expires-sessions", "group-stabilises", "while [")]


@pytest.mark.parametrize("check,mutant,prop,says", CAUGHT, ids=[c[2] for c in CAUGHT])
def test_each_property_catches_its_broken_controller_or_coordinator(tmp_path, monkeypatch, check, mutant, prop, says):
    from kverify.reports.record import Counterexample
    from kverify.reports.replayer import replay_record

    plant(monkeypatch, mutant)
    res = _run(tmp_path, check)
    assert res.verdict == FAIL and [v["invariant"] for v in res.violations] == [prop], res.summary
    assert says in res.violations[0]["message"]
    cx = Counterexample.load(res.reports[0])
    assert cx.engine == "walk" and cx.violation_step == len(cx.trace) - 1 and "bounded response" in cx.statement
    assert replay_record(cx).reproduced
    monkeypatch.undo()
    assert not replay_record(cx).reproduced        # the correct code answers within the bound


def test_a_reassignment_that_never_converges_fails_the_bounded_response(monkeypatch):
    """The explorer can only call this INCONCLUSIVE (the state space has no end, tests/test_planted_bugs.py);
    a walk's fair tail runs out of its bound. One replica moved between two brokers (the explorer's quick bound)."""
    plant(monkeypatch, "reassign-expands-forever")
    proto = registry.build("replication-world", {"brokers": 2, "rf": 1, "min_isr": 1, "reassignments": 1,
                                                 "crashes": 0, "records": 0, "failovers": 0, "preferred": 0},
                           frozenset())
    res = walk(proto, 0, 60, record_trace=True, response_bound=100)
    assert res.violation.invariant == "reassignment-completes"
    assert "has not completed" in res.violation.message
    cx = response_record(proto, res.violation, res.trace, 100, engine="walk", seed=0)
    assert replay_response(cx)[0]


# --- kverify simulate --engine inline -----------------------------------------------------------------------
def test_simulate_reports_a_replayable_liveness_record(tmp_path, monkeypatch, capsys):
    from kverify.cli import main

    plant(monkeypatch, "never-fails-over")
    out = tmp_path / "sim"
    rc = main(["simulate", "replication-world", "--engine", "inline", "--runs", "6", "--steps", "60", "--seed", "3",
               "--out", str(out), "--json", "--no-progress"])
    s = json.loads(capsys.readouterr().out)
    assert rc == 1 and list(s["violations"]) == ["leader-failover"]
    [rep] = s["reports"]
    assert main(["replay", rep["path"]]) == 1 and "reproduced" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    live = summary["liveness"]
    assert live["response_bound"] == DEFAULT_BOUND and live["properties"]["leader-failover"]["tails"] > 0
    # without the bounded response the same walks see nothing wrong: no invariant breaks
    rc = main(["simulate", "replication-world", "--engine", "inline", "--runs", "6", "--steps", "60", "--seed", "3",
               "--out", str(tmp_path / "off"), "--json", "--no-progress", "--response-bound", "0"])
    assert json.loads(capsys.readouterr().out)["violations"] == {}
