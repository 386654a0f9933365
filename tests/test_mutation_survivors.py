"""Mutants of impl/ that survived bench/mutation.py's samples, each now killed by a new property, which also
holds on the correct code. Every mutant is planted in process the way tests/planted_mutants.py does it (the
reference method recompiled from its own source with exactly the one change cosmic-ray made), and judged by
the very check of `kverify verify` that the benchmark ran on it, at the quick profile's bounds."""
import pytest

from kverify.impl.replication import controller_ops
from kverify.invariants.replication import (ControllerView, ReplicaView, ReplView,
                                            check_one_leader_per_epoch)
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

FAILOVER = "liveness:replication-world/failover"

# name -> planted_mutants.MUTANTS entry: (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    # bench/mutation.py quick sample seed 1729: impl/replication/controller_ops.py ReplaceBinaryOperator_Add_FloorDiv
    "offline-keeps-leader-epoch": (controller_ops, "ControllerOps", "_offline_election",
                                   "return -1, cur.leader_epoch + 1, isr", "return -1, cur.leader_epoch // 1, isr",
                                   "a partition left without a leader keeps the leader epoch of the failed leader"),
}


_ctx = planted_mutants.quick_ctx


def _replica(leader_epoch, leader, alive=True):
    return ReplicaView(alive, (), 0, leader_epoch, 0, 0, leader, 0, 0)


def _view(ctrl_leader, ctrl_epoch, *replicas):
    return ReplView(tuple(replicas), ControllerView(ctrl_leader, ctrl_epoch, 0, 0, 0, 0), (), (), 1)


def test_one_leader_per_epoch_on_views():
    # followers told of leader 1 at epoch 3; the controller moved on to epoch 4 (or stays at 3 with leader 1)
    assert check_one_leader_per_epoch(_view(1, 3, _replica(3, 1), _replica(3, 1), _replica(2, 0))) is None
    assert check_one_leader_per_epoch(_view(-1, 4, _replica(3, 1), _replica(3, 1))) is None
    # a dead replica, or one that knows no leader, names nobody
    assert check_one_leader_per_epoch(_view(-1, 3, _replica(3, 1, alive=False), _replica(3, -1))) is None
    msg = check_one_leader_per_epoch(_view(-1, 3, _replica(3, 1)))
    assert msg == "leader epoch 3: replica 0 follows leader 1, the controller names leader -1"
    assert "replica 1 follows leader 2, replica 0 names leader 1" in check_one_leader_per_epoch(
        _view(1, 4, _replica(3, 1), _replica(3, 2)))


def test_offline_election_keeping_the_epoch_is_caught_by_one_leader_per_epoch(tmp_path, monkeypatch):
    """The controller writes "no leader" at the failed leader's own epoch: the surviving followers, fenced on
    that epoch, still follow the dead leader at the epoch the controller now says has none."""
    ok = P._liveness_check(FAILOVER)(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    planted_mutants.plant(monkeypatch, "offline-keeps-leader-epoch", SURVIVORS)
    bad = P._liveness_check(FAILOVER)(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["leader-epoch-names-one-leader"], bad.summary


@pytest.mark.parametrize("name", sorted(SURVIVORS))
def test_each_planted_survivor_changes_its_method(name):
    module, cls, method, old, new, _what = SURVIVORS[name]
    import inspect
    src = inspect.getsource(getattr(getattr(module, cls), method))
    assert src.count(old) == 1 and old != new

