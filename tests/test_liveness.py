"""Liveness under fairness (issue 17): `Eventually` properties on the whole state graph, lassos in the
reports, and the gate failing on a controller that never fails a partition over."""
import json

import pytest

from kverify.invariants.liveness import Eventually
from kverify.model.protocol import Protocol
from kverify.model.search.liveness import bounded_response, check_liveness

from planted_mutants import plant

SMALL_RW = {"failovers": "0", "records": "0"}          # one data-broker crash, no controller failover: ~50 states


class Toy(Protocol):
    """0 -fail-> 1 <-spin-> 2; `heal` (1 -> 3) only when `heals`; `restart` (2 -> 3) is the failed
    node's return, excluded from the fair moves."""

    name = "toy"

    def __init__(self, heals: bool):
        self.heals = heals

    def init_states(self):
        return [0]

    def actions(self, s):
        return {0: [("fail",)], 1: [("spin",)] + ([("heal",)] if self.heals else []), 2: [("spin",), ("restart",)],
                3: []}[s]

    def step(self, s, a):
        return {("fail",): 1, ("heal",): 3, ("restart",): 3}.get(a, 3 - s if s in (1, 2) else s)

    def is_fault(self, a):
        return a[0] == "fail"

    def liveness(self):
        return (Eventually("healed", "the toy heals", lambda s: None if s in (0, 3) else f"in {s}",
                           excluded=lambda a: a[0] == "restart"),)


def test_a_fair_cycle_that_never_discharges_is_a_lasso_with_its_loop():
    res = check_liveness(Toy(heals=False))
    assert res.complete and res.analysed and res.triggered == {"healed": True}
    [lasso] = res.lassos
    assert lasso.prefix == [("fail",)] and lasso.loop == [("spin",), ("spin",)] and lasso.loop_step == 1
    assert lasso.violation.invariant == "healed" and "a loop of 2 fair moves" in lasso.violation.message


def test_a_fair_exit_discharges_it_and_the_excluded_return_does_not_count():
    assert check_liveness(Toy(heals=True)).lassos == []
    # restart (2 -> 3) would discharge it, but it is the failed node's return: not a fair move
    assert len(check_liveness(Toy(heals=False)).lassos) == 1


def test_bounded_response_on_one_trace():
    toy = Toy(heals=False)
    prop = toy.liveness()[0]
    assert bounded_response(toy, prop, 0, [("fail",), ("spin",), ("spin",), ("spin",)], 3).step_index == 4
    assert bounded_response(toy, prop, 0, [("fail",), ("spin",), ("restart",)], 3) is None
    assert bounded_response(toy, prop, 0, [("fail",), ("spin",), ("spin",)], 3) is None


def _rw(params):
    from kverify.model import registry

    return registry.build("replication-world", params, frozenset())


def test_replication_world_fails_over_without_the_failed_broker():
    res = check_liveness(_rw(SMALL_RW))
    assert res.complete and res.analysed and res.triggered == {"leader-failover": True, "replica-rejoins-isr": True}
    assert res.lassos == []


def test_a_controller_that_never_fails_over_is_a_liveness_counterexample(monkeypatch):
    plant(monkeypatch, "never-fails-over")
    res = check_liveness(_rw(SMALL_RW))
    [lasso] = res.lassos
    assert lasso.violation.invariant == "leader-failover"
    assert ("crash", 1, False) in lasso.prefix
    assert "no live leader" in lasso.violation.message and "in-sync replicas [2]" in lasso.violation.message
    # and `recoverable` (a restart allowed) does not notice: that is why this property exists
    from kverify.model.explore import explore

    assert explore(_rw(SMALL_RW)).ok


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """`kverify verify --profile quick --only liveness:replication-world/failover` in-process, at the quick
    profile's own bound (a data-broker crash, a follower starting outside the ISR: ~800 states)."""
    from kverify import cli

    def run(name):
        out = tmp_path / name
        rc = cli.main(["verify", "--profile", "quick", "--only", "liveness:replication-world/failover",
                       "--out", str(out)])
        return rc, json.loads((out / "summary.json").read_text())
    return run


def test_gate_passes_the_correct_controller(gate):
    rc, summary = gate("ok")
    [check] = summary["checks"]
    assert rc == 0 and check["verdict"] == "PASS", check["summary"]


def test_gate_fails_a_controller_that_never_fails_over_with_a_lasso_report(gate, monkeypatch):
    from kverify.reports.record import Counterexample
    from kverify.reports.replayer import replay_record

    plant(monkeypatch, "never-fails-over")
    rc, summary = gate("bad")
    [check] = summary["checks"]
    assert rc == 1 and check["verdict"] == "FAIL"
    assert [v["invariant"] for v in summary["new_violations"]] == ["leader-failover"]
    path = check["reports"][0]
    cx = Counterexample.load(path)
    assert cx.is_lasso and 0 < cx.loop_start <= len(cx.trace) - 1 and cx.statement
    md = open(path[:-len("json")] + "md", encoding="utf-8").read()
    html = open(path[:-len("json")] + "html", encoding="utf-8").read()
    assert "**Lasso:**" in md and "↻" in md
    assert 'id="lasso"' in html and 'loop"><td>' in html
    assert replay_record(cx).reproduced
    monkeypatch.undo()
    assert not replay_record(cx).reproduced


def test_an_acknowledged_commit_is_served_again_after_the_offsets_leader_fails(tmp_path, monkeypatch):
    """(c) on offsets-world (2,497 states): PASS; with the controller that never fails over, the acknowledged
    commit stays unserved forever once the offsets partition's leader crashed."""
    from kverify.suite import Context, providers

    def run(out):
        return providers._liveness_check("liveness:offsets-world")(Context("quick", str(out), seed=1, progress=False))
    ok = run(tmp_path / "ok")
    assert ok.verdict == "PASS", ok.summary
    plant(monkeypatch, "never-fails-over")
    bad = run(tmp_path / "bad")
    assert bad.verdict == "FAIL" and [v["invariant"] for v in bad.violations] == ["commit-readable"]
    assert "not served by any loaded coordinator" in bad.violations[0]["message"]


@pytest.mark.slow
def test_a_group_reaches_stable_unless_the_coordinator_never_expires_a_session(monkeypatch):
    """(b) on group-world with two members, one crash or pause (~10,000 states): the correct coordinator
    removes the crashed member when its session expires and the group settles; one whose session timer
    never removes anyone leaves the group waiting for the dead member forever."""
    from kverify.model import registry

    def run():
        return check_liveness(registry.build("group-world", {"members": 2, "commits": 0}, frozenset()))
    ok = run()
    assert ok.complete and ok.analysed and ok.triggered == {"group-stabilises": True} and ok.lassos == []
    plant(monkeypatch, "coordinator-never-expires-sessions")
    [lasso] = run().lassos
    assert lasso.violation.invariant == "group-stabilises" and ("crash", 0) in lasso.prefix
