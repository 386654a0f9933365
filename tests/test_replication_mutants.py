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
  impl/replication/placement.py): a replica placement that lists a broker twice.
- `isr-shrink-only-lagging` (a step property, on `explore:replication-world/lag`: time passing in jumps below
  replica.lag.time.max.ms): a leader's ISR task that drops a follower which reached its log end lately; and
  `isr-shrink-drops-lagging` (a state property there): a task that keeps a follower out of sync for longer.
- `leaderless-write-drops-only-leader` (a step property, on `explore:replication-world/double-crash`): a controller
  write leaving a partition without a leader that keeps the failed leader in the ISR and drops the others.
- `min-isr-refusal` (a step property of acks=all produce steps, reading the shared view's min_isr): kills the
  mapping impl/replication/invariant_view.py giving every partition min ISR 1 (`or 1` -> `and 1`), and a leader
  refusing writes at the minimum; `min-isr-completion`: a waiting write answered NOT_ENOUGH_REPLICAS_AFTER_APPEND
  although the maximal ISR meets the minimum. (Before these two, such mutants only left the `acked-all` sometimes
  unreached: INCONCLUSIVE, which does not fail the quick gate.)
- `reassignment-request-validated` (a step property, on `liveness:replication-world/reassign`, whose world now also
  sends the targets Kafka refuses: empty, a broker twice, an unknown broker): a controller that accepts one.
- `conformance:replica-placement` (tests/scenarios/replica_placement.json, every profile): a placement whose
  follower shift never grows once partition ids wrap around the broker list (the worlds never get that far)."""
import inspect

import pytest

from kverify.impl.replication import controller_ops, invariant_view, placement, replica
from kverify.invariants.liveness import RejoinView, rejoin_pending
from kverify.invariants.replication import check_distinct_replicas
from kverify.model.worlds import replication_world as RW
from kverify.suite import Context, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

FAILOVER = "liveness:replication-world/failover"
LAG = "explore:replication-world/lag"
DOUBLE_CRASH = "explore:replication-world/double-crash"
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
    # replica.py lagging_isr_members, ReplaceBinaryOperator_Sub_BitXor (quick sample seed 1729): `now ^ caught_up`
    # for `now - caught_up`; with jumps of lag + 1 ms both are above the limit together, with 600 ms jumps not
    "isr-lag-xor": (replica, "Replica", "lagging_isr_members", "now - f[_LCU] > lag", "now ^ f[_LCU] > lag",
                    "a follower that reached the leader's log end 500 ms ago counts as lagging at 1000 ms"),
    # controller_ops.py _offline_election, ReplaceComparisonOperator_NotEq_Eq (quick sample seed 1729)
    "leaderless-keeps-leader": _OPS + ("_offline_election", "if r != cur.leader) or cur.isr",
                                       "if r == cur.leader) or cur.isr",
                                       "a partition left without a leader keeps only the failed leader in its ISR"),
}

# mutant -> (check that kills it, the property or invariant it breaks)
KILLED_BY = {
    "startup-tells-others": (FAILOVER, "replica-rejoins-isr"),
    "alter-current-not-controller": (FAILOVER, "replica-rejoins-isr"),
    "alter-current-version-not-controller": (FAILOVER, "replica-rejoins-isr"),
    "broker-epoch-refuses-all": (FAILOVER, "replica-rejoins-isr"),
    "broker-epoch-unchecked": (LATE_LOSSY, "i-lcc"),
    "broker-epoch-only-newer": (LATE_LOSSY, "i-lcc"),
    "isr-lag-xor": (LAG, "isr-shrink-only-lagging"),
    "leaderless-keeps-leader": (DOUBLE_CRASH, "leaderless-write-drops-only-leader"),
}


def plant(monkeypatch, name):
    monkeypatch.setitem(planted_mutants.MUTANTS, name, SURVIVORS[name])
    planted_mutants.plant(monkeypatch, name)


def _run(check, tmp_path):
    run = P._liveness_check(check) if check in P.LIVENESS_CHECKS else P._variant_check(check)
    return run(Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False))


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


@pytest.mark.parametrize("check", [LAG, DOUBLE_CRASH])
def test_variant_checks_pass_on_the_correct_cluster(check, tmp_path):
    ok = _run(check, tmp_path)
    assert ok.verdict == PASS, ok.summary


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


def test_view_min_isr_of_one_is_caught(tmp_path, monkeypatch):
    """invariant_view.py repl_view, ReplaceOrWithAnd (quick sample seed 1729): `rf = len(...) and 1` makes every
    partition's effective min ISR 1 in the invariants' view; at the quick bounds of the failover check (a follower
    outside the ISR, min ISR 2) the leader's correct NOT_ENOUGH_REPLICAS then looks like a spurious refusal."""
    table = {"view-rf-and": (invariant_view, "repl_view", "rf = len(c.store.assignments.get(tp, ())) or 1",
                             "rf = len(c.store.assignments.get(tp, ())) and 1", "min ISR 1 for every partition")}
    planted_mutants.plant_function(monkeypatch, "view-rf-and", table)
    monkeypatch.setattr(RW, "repl_view", invariant_view.repl_view)     # the world imported the function by name
    bad = _run(FAILOVER, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert "min-isr-refusal" in [v["invariant"] for v in bad.violations], bad.summary


# cosmic-ray-style mutants of the min.insync.replicas rules (not in the sampled survivors): name -> (the planted
# mutant as in SURVIVORS, the property that catches it on the quick failover check)
_REP = (replica, "Replica")
MIN_ISR_MUTANTS = {
    "refuses-at-min-isr": (_REP + ("under_min_isr", "len(self.isr) < settings", "len(self.isr) <= settings",
                                   "an acks=all write is refused with exactly min.insync.replicas in the ISR"),
                           "min-isr-refusal"),
    "after-append-at-min-isr": (_REP + ("complete_waiting", "len(self.maximal_isr(settings)) >= settings",
                                        "len(self.maximal_isr(settings)) > settings",
                                        "a waiting write fails NOT_ENOUGH_REPLICAS_AFTER_APPEND at the minimum"),
                                "min-isr-completion"),
}


@pytest.mark.parametrize("name", sorted(MIN_ISR_MUTANTS))
def test_min_isr_mutants_are_caught(name, tmp_path, monkeypatch):
    entry, prop = MIN_ISR_MUTANTS[name]
    monkeypatch.setitem(planted_mutants.MUTANTS, name, entry)
    planted_mutants.plant(monkeypatch, name)
    bad = _run(FAILOVER, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert prop in [v["invariant"] for v in bad.violations], bad.summary


# mutants of Replica.lagging_isr_members that keep lagging followers in the ISR (found by an in-process scan of
# its cosmic-ray mutants, 05:10): the ISR task never acts on them
LAG_KEEPS = {
    "lag-compares-equal-leo": ("if f is None or (f[_LEO] != leo and", "if f is None or (f[_LEO] == leo and"),
    "lag-loop-never-runs": ("for r in self.isr:", "for r in []:"),
    "lag-limit-identity": ("now - f[_LCU] > lag", "now - f[_LCU] is lag"),
}


@pytest.mark.parametrize("name", sorted(LAG_KEEPS))
def test_lagging_follower_kept_is_caught(name, tmp_path, monkeypatch):
    old, new = LAG_KEEPS[name]
    monkeypatch.setitem(planted_mutants.MUTANTS, name, (replica, "Replica", "lagging_isr_members", old, new, name))
    planted_mutants.plant(monkeypatch, name)
    bad = _run(LAG, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert "isr-shrink-drops-lagging" in [v["invariant"] for v in bad.violations], bad.summary


def test_leader_taking_a_new_epoch_without_caching_it_is_caught(tmp_path, monkeypatch):
    """replica.py become_leader, ReplaceComparisonOperator_NotEq_Eq (found by the in-process scan, 05:13): a replica
    that leads already and is told a higher leader epoch (the controller dropped a failed follower from its ISR)
    keeps its old epoch cache and follower states; leader-epoch-cached catches it on the double-crash bound."""
    name = "leader-new-epoch-not-cached"
    old = "new_epoch = msg.leader_epoch != self.leader_epoch or"
    monkeypatch.setitem(planted_mutants.MUTANTS, name, (replica, "Replica", "become_leader", old,
                                                        old.replace("!=", "=="), name))
    planted_mutants.plant(monkeypatch, name)
    bad = _run(DOUBLE_CRASH, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert "leader-epoch-cached" in [v["invariant"] for v in bad.violations], bad.summary


def test_acks_pending_on_views():
    from kverify.invariants.liveness import acks_pending
    assert acks_pending([]) is None
    assert acks_pending([("t-0", 3, 1, 2, 1, 2)]) is None          # below min ISR: the HW is frozen, not owed
    assert acks_pending([("t-0", 3, 1, 2, 1, 2), ("t-1", 4, 2, 0, 2, 2)]) == \
        "t-1: acks=all write 4 at offset 0 still waits at broker 2"


# Replica.complete_waiting mutants that leave an acks=all write waiting forever (in-process scan, 05:16); before
# acks-all-answered they only left the `acked-all` sometimes unreached (INCONCLUSIVE: not a quick failure)
ACKS_NEVER = {"hw-above-required": (FAILOVER, "self.hw > required"),
              "hw-exactly-required": ("liveness:walk/replication-world", "self.hw == required")}


@pytest.mark.parametrize("name", sorted(ACKS_NEVER))
def test_write_never_answered_is_caught(name, tmp_path, monkeypatch):
    from kverify.suite import liveness_walks

    check, new = ACKS_NEVER[name]
    monkeypatch.setitem(planted_mutants.MUTANTS, name, (replica, "Replica", "complete_waiting", "self.hw >= required",
                                                        new, name))
    planted_mutants.plant(monkeypatch, name)
    ctx = Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False)
    bad = (liveness_walks._check(check) if check.startswith("liveness:walk/") else P._liveness_check(check))(ctx)
    assert bad.verdict == FAIL, bad.summary
    assert "acks-all-answered" in bad.summary, bad.summary


# --- reassignment targets Kafka refuses (quick sample seed 1729: controller_ops.py reassign,
# ReplaceComparisonOperator_NotEq_Gt `len(set(target)) > len(target)`, never true: a duplicate target is accepted) ---
REASSIGN = "liveness:replication-world/reassign"
_TARGET_CHECK = "if not target or len(set(target)) != len(target) or any(b not in self.brokers for b in target):"
REASSIGN_TARGETS = {
    "reassign-accepts-duplicates": ("len(set(target)) != len(target)", "len(set(target)) > len(target)"),
    "reassign-accepts-empty": ("if not target or", "if False or"),
    "reassign-checks-one-broker": ("any(b not in self.brokers", "all(b not in self.brokers"),
}


def test_reassignment_request_on_views():
    from kverify.invariants.replication import ReassignRequestView as V, check_reassignment_request as check

    before = V((0, 1, 2, 3), (1, 2, 3), (1, 2), None, "held")
    assert check(before, ("reassign", "t", 0, [1, 1]), before) is None                  # refused, nothing changed
    assert check(before, ("reassign", "t", 0, [2, 3]), before._replace(reassignment=((1, 2), (2, 3)))) is None
    assert check(before, ("produce", "t", 0, 1, -1, 1), before._replace(state="other")) is None
    assert check(before, ("reassign", "t", 0, []), before._replace(reassignment=((1, 2), ()))) == \
        "a reassignment to [] (empty replica list) was not refused: the reassignment recorded is [1, 2] -> [], " \
        "replicas [1, 2]"
    assert "(brokers [9] are not in the cluster) was not refused" in \
        check(before, ("reassign", "t", 0, [1, 9]), before._replace(state="other"))
    assert check(before, ("reassign", "t", 0, [2, 3]), before) == \
        "a valid reassignment of replicas [1, 2] to [2, 3] was not recorded: the reassignment recorded is none"
    dead = before._replace(live=(1, 2))                 # a known broker that is down: judged neither way
    assert check(dead, ("reassign", "t", 0, [2, 3]), dead) is None


def test_world_offers_refused_targets(tmp_path):
    world = RW.make(RW.SPEC.resolve({"brokers": 2, "rf": 1, "min_isr": 1, "reassignments": 1, "crashes": 0,
                                     "records": 0, "failovers": 0, "preferred": 0}))
    s = world.init_states()[0]
    offered = [a[3] for a in world.actions(s) if a[0] == "reassign"]
    assert offered == [(2,), (), (1, 1), (1, 3)]
    for target in offered[1:]:                          # each refused: nothing changes, budgets included
        assert world.step(s, ("reassign", "t", 0, target)) == s


@pytest.mark.parametrize("name", sorted(REASSIGN_TARGETS))
def test_accepting_an_invalid_reassignment_target_is_caught(name, tmp_path, monkeypatch):
    old, new = REASSIGN_TARGETS[name]
    assert inspect.getsource(controller_ops.ControllerOps.reassign).count(_TARGET_CHECK) == 1
    monkeypatch.setitem(planted_mutants.MUTANTS, name, _OPS + ("reassign", old, new, name))
    planted_mutants.plant(monkeypatch, name)
    from kverify.reports.record import Counterexample
    from kverify.reports.replayer import replay_record

    bad = _run(REASSIGN, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["reassignment-request-validated"], bad.summary
    cx = Counterexample.load(bad.reports[0])
    assert cx.trace[-1].action[0] == "reassign" and replay_record(cx).reproduced
    monkeypatch.undo()
    assert not replay_record(cx).reproduced             # the correct controller refuses the target


# --- Kafka's replica placement past the first round of partitions (quick sample seed 1729: placement.py
# assign_replicas, `current % n == 0` -> `current | n == 0`, never true: the follower shift never grows) ------------
_SHIFT = ("if current > 0 and current % n == 0:", "if current > 0 and current | n == 0:")


def test_placement_table_agrees_with_the_reference(tmp_path):
    ok = P._replica_placement(planted_mutants.quick_ctx(tmp_path))
    assert ok.verdict == PASS and ok.covered == {"vectors": 7}, ok.summary
    assert "conformance:replica-placement" in [c.name for c in P.conformance("quick")]


def test_placement_shift_never_growing_is_caught(tmp_path, monkeypatch):
    table = {"shift-never-grows": (placement, "assign_replicas", *_SHIFT, "the follower shift never grows")}
    planted_mutants.plant_function(monkeypatch, "shift-never-grows", table)
    bad = P._replica_placement(planted_mutants.quick_ctx(tmp_path))
    assert bad.verdict == FAIL, bad.summary
    assert {v["invariant"] for v in bad.violations} == {"replica-placement"}
    # every placement vector of the table has partition ids past the first round of brokers
    assert [v["message"].split(":")[0] for v in bad.violations] == [
        "kafka-test-5-brokers-10-partitions-rf3", "3-brokers-7-partitions-rf2-shift-wraps",
        "4-sparse-brokers-6-partitions-rf3-fixed-start-1", "3-brokers-add-4-partitions-from-2-rf3",
        "4-brokers-5-partitions-rf2-random-start-2-shift-0"], bad.summary
    assert "partition 5 on [0, 1, 2] here, on [0, 2, 3] in Kafka" in bad.violations[0]["message"]


def test_placement_table_catches_a_wrong_refusal(tmp_path, monkeypatch):
    """The refusal rows: a placement accepting replication factor 0 answers them instead of throwing."""
    table = {"rf0-accepted": (placement, "assign_replicas", "if replication_factor <= 0:",
                              "if replication_factor < 0:", "replication factor 0 accepted")}
    planted_mutants.plant_function(monkeypatch, "rf0-accepted", table)
    bad = P._replica_placement(planted_mutants.quick_ctx(tmp_path))
    assert bad.verdict == FAIL and [v["message"].split(":")[0] for v in bad.violations] == ["kafka-test-rf0-refused"]


# --- KIP-320 fetch-response fencing (quick sample seed 2718: replica.py handle_fetch_response,
# ReplaceUnaryOperator_Delete_Not: the check runs only when the historical behaviour no-fetch-epoch-fencing is on) ---
STALE_FETCH = "explore:replication-world/stale-fetch"
_FENCE = "if not settings.no_fetch_epoch_fencing and resp.request_leader_epoch != self.leader_epoch:"


def test_stale_fetch_answer_applied_is_caught(tmp_path, monkeypatch):
    """A follower applying the answer to a fetch it sent in an earlier leader epoch: the quick profile's other
    replication-world bounds never reach one that matters; the stale-fetch bound does (i-lcc, 17 steps)."""
    assert STALE_FETCH in {c.name for c in P.variants("quick")}
    ok = _run(STALE_FETCH, tmp_path / "ok")
    assert ok.verdict == PASS and "recoverable" in ok.summary, ok.summary
    name = "fetch-fencing-inverted"
    monkeypatch.setitem(planted_mutants.MUTANTS, name, _REP + ("handle_fetch_response", _FENCE,
                                                               _FENCE.replace("if not settings", "if settings"),
                                                               "a follower applies a fetch answer of an earlier epoch"))
    planted_mutants.plant(monkeypatch, name)
    bad = _run(STALE_FETCH, tmp_path / "bad")
    assert bad.verdict == FAIL, bad.summary
    assert "i-lcc" in [v["invariant"] for v in bad.violations], bad.summary
