"""Surviving cosmic-ray mutants of the replication controller (impl/replication/controller_ops.py), each now
killed by a check of `kverify verify --profile quick` (issue 17), which also passes on the correct code.

Every mutant is planted in process the way tests/planted_mutants.py does it (the reference method recompiled
from its own source with exactly the one change cosmic-ray makes) and judged by the very check the benchmark
runs on it, at the quick profile's bounds:
- `replica-rejoins-isr` (invariants/liveness.py, replication-world): a running replica of a partition with an
  acting leader eventually follows that leader in the stored epoch and is in the stored ISR. It kills a controller
  that never tells a restarted broker its partitions' leaders, and every AlterPartition check that refuses the
  ISR expansions a correct controller accepts.
- `liveness:replication-world/late-lossy` (kverify/suite/providers.py): the bound at which an AlterPartition
  carrying a follower's broker epoch from before its lossy restart reaches the controller (KIP-903).
- `replicas-distinct` (invariants/replication.py, bound by replication-world, which now places its replicas with
  impl/replication/placement.py): a replica placement that lists a broker twice."""
import inspect

import pytest

from kverify.impl.replication import controller_ops, placement
from kverify.invariants.liveness import RejoinView, rejoin_pending
from kverify.invariants.replication import check_distinct_replicas
from kverify.model.worlds import replication_world as RW
from kverify.suite import Context, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

FAILOVER = "liveness:replication-world/failover"
LATE_LOSSY = "liveness:replication-world/late-lossy"
_OPS = (controller_ops, "ControllerOps")
_BROKER_EPOCH = "if not self.settings.no_broker_epoch_check and epoch != -1 and epoch != ctrl.live[r]:"

# name -> planted_mutants.MUTANTS entry: (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    # controller_ops.py _on_broker_startup, AddNot: LeaderAndIsr goes to the brokers NOT hosting the partition
    "startup-tells-others": _OPS + ("_on_broker_startup", "if b in ctrl.assignments[tp] and tp in ctrl.states:",
                                    "if not b in ctrl.assignments[tp] and tp in ctrl.states:",
                                    "a restarted broker is never told its partitions' leader and epoch"),
    # controller_ops.py _on_alter_partition, ReplaceComparisonOperator_Gt_GtE: a current request looks stale
    "alter-current-not-controller": _OPS + ("_on_alter_partition", "if req.leader_epoch > st.leader_epoch or",
                                            "if req.leader_epoch >= st.leader_epoch or",
                                            "an AlterPartition of the current leader epoch is answered NOT_CONTROLLER"),
    # the same line, partition epoch (ReplaceComparisonOperator_Gt_GtE, the second comparison)
    "alter-current-version-not-controller": _OPS + ("_on_alter_partition", "or req.partition_epoch > st.version:",
                                                    "or req.partition_epoch >= st.version:",
                                                    "an AlterPartition of the current partition epoch is answered "
                                                    "NOT_CONTROLLER"),
    # KIP-903 check, ReplaceAndWithOr (first `and`): every proposal is refused INELIGIBLE_REPLICA
    "broker-epoch-refuses-all": _OPS + ("_on_alter_partition", _BROKER_EPOCH,
                                        _BROKER_EPOCH.replace("check and epoch", "check or epoch"),
                                        "the controller refuses every ISR change as ineligible"),
    # KIP-903 check, ReplaceUnaryOperator_Delete_Not: the check runs only when the historical behaviour is on
    "broker-epoch-unchecked": _OPS + ("_on_alter_partition", _BROKER_EPOCH, _BROKER_EPOCH.replace("if not self", "if self"),
                                      "the controller accepts an ISR member's stale broker epoch"),
    # KIP-903 check, ReplaceComparisonOperator_NotEq_Gt (second comparison): only epochs above the registered one
    "broker-epoch-only-newer": _OPS + ("_on_alter_partition", _BROKER_EPOCH,
                                       _BROKER_EPOCH.replace("epoch != ctrl.live[r]", "epoch > ctrl.live[r]"),
                                       "the controller accepts a broker epoch older than the registered one"),
}

# mutant -> (check that kills it, the property or invariant it breaks)
KILLED_BY = {
    "startup-tells-others": (FAILOVER, "replica-rejoins-isr"),
    "alter-current-not-controller": (FAILOVER, "replica-rejoins-isr"),
    "alter-current-version-not-controller": (FAILOVER, "replica-rejoins-isr"),
    "broker-epoch-refuses-all": (FAILOVER, "replica-rejoins-isr"),
    "broker-epoch-unchecked": (LATE_LOSSY, "i-lcc"),
    "broker-epoch-only-newer": (LATE_LOSSY, "i-lcc"),
}


def plant(monkeypatch, name):
    monkeypatch.setitem(planted_mutants.MUTANTS, name, SURVIVORS[name])
    planted_mutants.plant(monkeypatch, name)


def _run(check, tmp_path):
    return P._liveness_check(check)(Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False))


def test_rejoin_pending_on_views():
    # leader 1 in epoch 2 acting; replica 2 follows it in that epoch and is in the ISR: discharged
    assert rejoin_pending(RejoinView("t-0", True, 1, 2, (1, 2), ((1, 1, 2), (2, 1, 2)))) is None
    # no acting leader: leader-failover's business, nothing owed here
    assert rejoin_pending(RejoinView("t-0", False, 1, 2, (1,), ((2, -1, -1),))) is None
    msg = rejoin_pending(RejoinView("t-0", True, 1, 2, (1,), ((1, 1, 2), (2, -1, -1))))
    assert msg == "t-0: running replica 2 acts on leader -1 in epoch -1, the controller stored leader 1 in epoch 2"
    assert "acts on leader 1 in epoch 1" in rejoin_pending(RejoinView("t-0", True, 1, 2, (1, 2), ((2, 1, 1),)))
    assert rejoin_pending(RejoinView("t-0", True, 1, 2, (1,), ((2, 1, 2),))) == \
        "t-0: running replica 2 follows leader 1 but is not in the stored ISR [1]"


@pytest.mark.parametrize("check", [FAILOVER, LATE_LOSSY, "liveness:replication-world/reassign"])
def test_checks_pass_on_the_correct_controller(check, tmp_path):
    ok = _run(check, tmp_path)
    assert ok.verdict == PASS, ok.summary
    assert "replica-rejoins-isr" in ok.summary


@pytest.mark.parametrize("name", sorted(SURVIVORS))
def test_each_survivor_is_killed_by_its_check(name, tmp_path, monkeypatch):
    check, prop = KILLED_BY[name]
    plant(monkeypatch, name)
    bad = _run(check, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert prop in [v["invariant"] for v in bad.violations], bad.summary


@pytest.mark.parametrize("name", sorted(SURVIVORS))
def test_each_planted_survivor_changes_its_method(name):
    module, cls, method, old, new, _what = SURVIVORS[name]
    src = inspect.getsource(getattr(getattr(module, cls), method))
    assert src.count(old) == 1 and old != new


# placement.py assign_replicas (a function, not a method): cosmic-ray's ReplaceBinaryOperator_Mod_RShift on the
# follower index; at 3 brokers and replication factor 2 partition 0 is placed on brokers (1, 1)
_PLACEMENT = ("brokers[(first + 1 + (next_shift + j) % (n - 1)) % n]",
              "brokers[(first + 1 + (next_shift + j) % (n - 1)) >> n]")


def test_distinct_replicas_on_views():
    assert check_distinct_replicas([("t-0", (1, 2)), ("t-1", (2, 3, 1))]) is None
    assert check_distinct_replicas([("t-0", (1, 2)), ("t-1", (2, 2))]) == \
        "partition t-1: replica set [2, 2] lists a broker more than once"


def test_world_places_replicas_with_kafkas_rule():
    # the world's replica sets are impl/replication/placement.py's (start index 0, no shift) over its whole range
    for n in range(2, 6):
        for parts in range(1, 4):
            for rf in range(1, n + 1):
                world = RW.make(RW.SPEC.resolve({"brokers": n, "partitions": parts, "rf": rf}))
                assert world.assignment == {p: tuple(1 + (p + i) % n for i in range(rf)) for p in range(parts)}


def test_placement_listing_a_broker_twice_is_caught(tmp_path, monkeypatch):
    check = "explore:replication-world/shutdown"        # 3 brokers, replication factor 2 (quick)
    ctx = Context("quick", str(tmp_path / "ok"), seed=profiles.DEFAULT_SEED, progress=False)
    assert P._variant_check(check)(ctx).verdict == PASS
    src = inspect.getsource(placement.assign_replicas)
    assert src.count(_PLACEMENT[0]) == 1
    namespace = dict(vars(placement))
    exec(compile(src.replace(*_PLACEMENT), "<mutant placement>", "exec"), namespace)
    monkeypatch.setattr(RW, "assign_replicas", namespace["assign_replicas"])
    bad = P._variant_check(check)(Context("quick", str(tmp_path / "bad"), seed=profiles.DEFAULT_SEED, progress=False))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["replicas-distinct"], bad.summary


def test_placement_refusing_a_valid_replication_factor_fails_the_gate(tmp_path, monkeypatch):
    """placement.py `if replication_factor > n:` ReplaceComparisonOperator_Gt_IsNot (sample #27 of the quick run, seed
    1729): replication factor 2 on 3 brokers is refused; the world cannot be built, so the check raises, which
    `kverify verify` reports as a FAIL (kverify.suite.run_isolated)."""
    from kverify.suite import Check, run_isolated

    check = "explore:replication-world/shutdown"
    src = inspect.getsource(placement.assign_replicas)
    old, new = "if replication_factor > n:", "if replication_factor is not n:"
    assert src.count(old) == 1
    namespace = dict(vars(placement))
    exec(compile(src.replace(old, new), "<mutant placement>", "exec"), namespace)
    monkeypatch.setattr(RW, "assign_replicas", namespace["assign_replicas"])
    res = run_isolated(Check(check, "explore", P._variant_check(check)),
                       Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False))
    assert res.verdict == FAIL and "InvalidReplicationFactor" in res.summary, res.summary
