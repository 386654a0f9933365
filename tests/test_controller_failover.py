"""A newly elected controller takes the replicas of brokers that died before its election out of the ISRs
(impl/replication/controller_ops.py `elect_controller`, step 2; docs/FINDINGS.md, fifth session).

Kafka's ZK controller does it on failover: KafkaController.onControllerFailover -> ReplicaStateMachine.startup
-> handleStateChanges(offlineReplicas, OfflineReplica) -> removeReplicasFromIsr (a dead leader becomes NoLeader),
then PartitionStateMachine.startup -> triggerOnlinePartitionStateChange (tag 3.9). Before the fix, a broker that
died unprocessed (its controller died first) stayed in the stored ISR for good: the next controller never had it
in its live set, so it never saw it die, and every ISR expansion (which must carry it) was refused
INELIGIBLE_REPLICA, so a restarted follower never rejoined. `replica-rejoins-isr` (invariants/liveness.py) no
longer excuses a dead ISR member; the old controller (the fix planted away) fails it, the fixed one passes."""
import pytest

from kverify.impl.replication import Cluster, ReplicationConfig
from kverify.impl.replication import controller_ops
from kverify.impl.replication import messages as M
from kverify.impl.replication.replica import FOLLOWER, LEADER
from kverify.invariants.liveness import RejoinView, rejoin_pending
from kverify.model.walk import walk
from kverify.suite import Context
from kverify.suite import liveness_walks as LW

import planted_mutants

TP = ("t", 0)
WALK = "liveness:walk/replication-world"
SEED = 1735        # the quick profile's walk in which the finding showed (crash 3, processed; the controller node
                   # crashes; 3 restarts; crash 2, unprocessed; elect_controller 1): ISR [1, 2], 3 never rejoins

# the old elect_controller: the same method without step 2 (nothing taken offline), planted like tests/planted_mutants.py
OLD = "no-offline-replicas-on-failover"
OLD_MUTANT = (controller_ops, "ControllerOps", "elect_controller", "self._take_replicas_offline(ctrl, dead)", "pass",
              "a new controller leaves the brokers that died before its election in the ISRs")


def plant_old(monkeypatch):
    monkeypatch.setitem(planted_mutants.MUTANTS, OLD, OLD_MUTANT)
    planted_mutants.plant(monkeypatch, OLD)


def cluster():
    """Controller node 0, data brokers 1..3, partition t-0 on (1, 2, 3) led by 1 with ISR (1, 2, 3)."""
    c = Cluster((0, 1, 2, 3), ReplicationConfig(min_insync_replicas=1), frozenset(), controller=0)
    c.create_topic("t", 1, 3, assignment={0: (1, 2, 3)})
    c.deliver_all()
    return c


def catch_up(c, rounds=4):
    for _ in range(rounds):
        for b in (2, 3):
            if c.brokers[b].alive:
                c.replicate(b, TP)
        c.deliver_all()


def follower_died_unprocessed():
    """3 dies and is processed (leaves the ISR); the controller node dies; 3 restarts; 2 dies with no controller to
    see it; broker 1 becomes controller."""
    c = cluster()
    c.produce(TP, "a")
    catch_up(c)
    c.crash(3)
    c.handle_broker_changes()
    c.deliver_all()
    assert c.state(TP).isr == (1, 2)
    c.crash(0)
    c.restart(3)
    c.crash(2)
    c.elect_controller(1)
    c.deliver_all()
    return c


def test_new_controller_removes_a_follower_that_died_before_its_election():
    c = follower_died_unprocessed()
    st = c.state(TP)
    assert (st.leader, st.isr, st.controller_epoch) == (1, (1,), 2)
    catch_up(c)
    assert c.state(TP).isr == (1, 3)                 # the restarted follower rejoins


def test_old_controller_kept_the_dead_follower_and_refused_every_expansion(monkeypatch):
    plant_old(monkeypatch)
    c = follower_died_unprocessed()
    assert c.state(TP).isr == (1, 2)                 # 2 is down, yet in the stored ISR
    refused = []
    for _ in range(4):
        c.replicate(3, TP)
        while c.net:                                 # deliver one by one, reading the controller's answers
            e = c.pending()[0]
            if type(e.body) is M.AlterPartitionResponse:
                refused.append(e.body.error)
            c.deliver(e.msg_id)
    assert c.state(TP).isr == (1, 2)                 # 3 never rejoins
    assert refused and set(refused) == {M.INELIGIBLE_REPLICA}


def test_dead_leader_becomes_no_leader_then_is_replaced_in_kafkas_order():
    """Step 2 writes NoLeader with the dead leader out of the ISR (leader epoch + 1), step 3 elects (+ 1 again),
    each announced to the live replicas."""
    c = cluster()
    c.crash(0)
    c.crash(1)
    before = c.state(TP)
    c.elect_controller(2)
    st = c.state(TP)
    assert (st.leader, st.leader_epoch, st.isr) == (2, before.leader_epoch + 2, (2, 3))
    sent = [(e.dst, e.body.leader, e.body.leader_epoch, e.body.isr) for e in c.pending(kind=M.LeaderAndIsr)]
    e0 = before.leader_epoch
    assert sent == [(2, 1, e0, (1, 2, 3)), (3, 1, e0, (1, 2, 3)),       # 1. the stored state, resynced
                    (2, -1, e0 + 1, (2, 3)), (3, -1, e0 + 1, (2, 3)),   # 2. OfflineReplica: NoLeader
                    (2, 2, e0 + 2, (2, 3)), (3, 2, e0 + 2, (2, 3))]     # 3. the offline election
    c.deliver_all()
    r2, r3 = c.replica(2, TP), c.replica(3, TP)
    assert (r2.role, r2.leader_epoch) == (LEADER, e0 + 2) and (r3.role, r3.leader, r3.leader_epoch) == (FOLLOWER, 2, e0 + 2)


def test_a_dead_broker_in_the_isr_no_longer_excuses_a_replica_outside_it():
    # leader 1 acts in epoch 3; 2 (dead) is still in the stored ISR; 3 runs, follows 1, is outside: owed
    v = RejoinView("t-0", True, 1, 3, (1, 2), ((1, 1, 3), (3, 1, 3)))
    assert rejoin_pending(v) == "t-0: running replica 3 follows leader 1 but is not in the stored ISR [1, 2]"


def _walk(tmp_path):
    ctx = Context("quick", str(tmp_path), seed=SEED, progress=False)
    proto = LW.build(ctx, WALK)
    return walk(proto, SEED, 60, record_trace=True, response_bound=LW.response_bound("quick"))


def test_quick_walk_seed_1735_fails_replica_rejoins_with_the_old_controller(tmp_path, monkeypatch):
    plant_old(monkeypatch)
    res = _walk(tmp_path)
    assert res.violation is not None and res.violation.invariant == "replica-rejoins-isr", res.violation
    assert "running replica 3 follows leader 1 but is not in the stored ISR [1, 2]" in res.violation.message
    assert ("elect_controller", 1) in res.trace[:res.violation.step_index]


def test_quick_walk_seed_1735_passes_with_the_fixed_controller(tmp_path):
    res = _walk(tmp_path)
    assert res.violation is None and not res.deadlock, res.violation
    assert res.steps == 60
    assert res.responses["replica-rejoins-isr"][0] > 0        # the property was judged (obligations started)


def test_planting_the_old_controller_changes_only_step_2():
    import inspect

    src = inspect.getsource(controller_ops.ControllerOps.elect_controller)
    assert src.count(OLD_MUTANT[3]) == 1
