"""The controller: election rules, preferred and controlled-shutdown elections, controller failover,
zombie-controller fencing and the conditional partition-state write with retry."""
import pytest

from kverify.impl.replication import Cluster, ControllerError, ReplicationConfig
from kverify.impl.replication import elections
from kverify.impl.replication import messages as M
from kverify.impl.replication.controller import BADVERSION, CONTROLLER_MOVED, OK, Store

TP = ("t", 0)


def make(assignment=(1, 2, 3), behaviours=(), brokers=(0, 1, 2, 3), down=(), min_isr=1):
    c = Cluster(brokers, ReplicationConfig(min_insync_replicas=min_isr), frozenset(behaviours), controller=min(brokers))
    for b in down:
        c.crash(b)
    if down:
        c.handle_broker_changes()
    c.create_topic("t", 1, len(assignment), assignment={0: tuple(assignment)})
    c.deliver_all()
    return c


def fill(c, values, followers):
    pids = [c.produce(TP, v) for v in values]
    for _ in range(3):
        for b in followers:
            c.replicate(b, TP)
    c.deliver_all()
    return pids


# ------------------------------------------------------------------------------- pure election rules
def test_offline_election_walks_ar_order_not_isr_order():
    assert elections.offline((3, 1, 2), (1, 2, 3), {1, 2, 3}, False) == (3, (1, 2, 3))
    assert elections.offline((3, 1, 2), (1, 2), {2, 3}, False) == (2, (2,))
    assert elections.offline((1, 2), (1,), {2}, False) is None
    assert elections.offline((1, 2), (1,), {2}, True) == (2, (2,))
    assert elections.offline((1, 2), (1,), set(), True) is None


def test_preferred_and_shutdown_and_reassignment_rules():
    assert elections.preferred((1, 2, 3), (2, 3), {1, 2, 3}) is None
    assert elections.preferred((1, 2, 3), (2, 3), {1, 2, 3}, outside_isr=True) == (1, (1, 2, 3))
    assert elections.preferred((1, 2, 3), (1, 2), {2}) is None
    assert elections.controlled_shutdown((1, 2, 3), (1, 2, 3), {1, 2, 3}, {1}) == (2, (2, 3))
    assert elections.controlled_shutdown((1, 2), (1,), {1, 2}, {1}) is None
    assert elections.reassignment((4, 5, 1), (1, 2, 5), {1, 5}) == 5


# ------------------------------------------------------------------------------- offline elections
def test_clean_election_after_leader_failure_bumps_epoch_and_shrinks_isr():
    c = make()
    fill(c, ["a"], (2, 3))
    c.crash(1)
    c.handle_broker_changes()
    st = c.state(TP)
    assert (st.leader, st.leader_epoch, st.isr) == (2, 1, (2, 3))
    c.deliver_all()
    assert c.replica(2, TP).role == "leader" and c.replica(3, TP).leader == 2


def test_last_replica_standing_keeps_isr_nonempty():
    c = make((1, 2))
    c.crash(2)
    c.handle_broker_changes()
    assert c.state(TP).isr == (1,)
    c.crash(1)
    c.handle_broker_changes()
    st = c.state(TP)
    assert st.leader == -1 and st.isr == (1,)
    c.restart(2)
    c.handle_broker_changes()
    assert c.state(TP).leader == -1          # 2 is not in the ISR: stays offline (clean)
    c.restart(1)
    c.handle_broker_changes()
    assert c.state(TP).leader == 1


def test_unclean_election_when_enabled():
    c = make((1, 2), behaviours={"unclean-election"})
    c.crash(2)
    c.handle_broker_changes()
    c.crash(1)
    c.handle_broker_changes()
    c.restart(2)
    c.handle_broker_changes()
    st = c.state(TP)
    assert st.leader == 2 and st.isr == (2,)


# ------------------------------------------------------------------------------- preferred election
def preferred_setup(behaviours):
    c = make(behaviours=behaviours, down=(1,))         # 2 leads; 1 (preferred) is out of the ISR
    pids = fill(c, ["x0"], (3,))
    assert c.results[pids[0]].error == M.NONE
    c.restart(1)
    c.handle_broker_changes()
    for e in c.pending(dst=1):
        c.deliver(e.msg_id)
    return c


def test_preferred_election_refuses_replica_outside_isr():
    c = preferred_setup(())
    assert c.elect_preferred(TP) is None
    assert c.leader_of(TP) == 2


def test_preferred_election_outside_isr_loses_acked_record():
    c = preferred_setup({"preferred-election-outside-isr"})
    st = c.elect_preferred(TP)
    assert st.leader == 1
    c.deliver_all()
    assert c.missing_acked(TP) == [(TP, 0, "x0")]
    for _ in range(3):
        c.replicate(2, TP), c.replicate(3, TP)
    assert all(c.replica(b, TP).log.leo == 0 for b in (1, 2, 3))   # truncated everywhere


def test_preferred_election_moves_leader_back_when_in_sync():
    c = preferred_setup(())
    for _ in range(3):
        c.replicate(1, TP)
    c.deliver_all()
    assert 1 in c.state(TP).isr
    st = c.elect_preferred(TP)
    assert st.leader == 1 and st.leader_epoch == 1
    c.deliver_all()
    assert c.missing_acked(TP) == []


# ------------------------------------------------------------------------------- controlled shutdown
def test_controlled_shutdown_moves_leadership_then_stops_cleanly():
    c = make()
    fill(c, ["a", "b"], (2, 3))
    assert c.controlled_shutdown(1) == []
    st = c.state(TP)
    assert st.leader == 2 and st.isr == (2, 3) and st.leader_epoch == 1
    c.deliver_all()
    c.stop(1)
    c.handle_broker_changes()
    assert c.leader_of(TP) == 2 and c.missing_acked(TP) == []
    assert c.describe().brokers[1].alive is False


def test_controlled_shutdown_reports_partitions_without_candidate():
    c = make((1, 2), down=(2,))
    assert c.controlled_shutdown(1) == [TP]
    assert c.leader_of(TP) == 1


def test_shutting_down_broker_is_not_added_to_isr():
    c = make(down=(3,))
    c.restart(3)
    c.handle_broker_changes()
    c.deliver_all()
    c.controlled_shutdown(3)
    c.deliver_all()
    for _ in range(3):
        c.replicate(3, TP)
    c.deliver_all()
    assert 3 not in c.state(TP).isr


# ------------------------------------------------------------------------------- controller failover
def test_failover_bumps_epoch_reads_state_and_elects_offline_partitions():
    c = make((1, 2, 3), brokers=(1, 2, 3))          # controller on broker 1, which also leads
    assert c.active_controller().broker == 1
    c.crash(1)
    assert c.store.controller_id == -1
    with pytest.raises(ControllerError):
        c.handle_broker_changes()
    ctrl = c.elect_controller(2)
    assert ctrl.epoch == 2 and c.store.controller_epoch == 2
    st = c.state(TP)
    assert st.leader == 2 and st.controller_epoch == 2 and st.isr == (2, 3)
    c.deliver_all()
    assert all(c.brokers[b].controller_epoch_seen == 2 for b in (2, 3))
    # AlterPartition now goes to the new controller
    c.restart(1)
    c.handle_broker_changes()
    c.deliver_all()
    for _ in range(3):
        c.replicate(1, TP)
    c.deliver_all()
    assert c.state(TP).isr == (2, 3, 1)


def test_broker_rejects_leader_and_isr_from_older_controller_epoch():
    for behaviours, applied in (((), False), ({"stale-controller-accepted"}, True)):
        c = make(behaviours=behaviours)
        c.brokers[2].controller_epoch_seen = 5          # it has heard from controller epoch 5
        # a delayed request of controller epoch 1 announcing a newer leader epoch
        c._send(0, 2, M.LeaderAndIsr(0, 1, TP, 2, 7, (1, 2, 3), 3, (1, 2, 3)))
        c.deliver_all()
        assert (c.replica(2, TP).leader_epoch == 7) is applied


def zombie_setup(behaviours):
    """Controller 0's session expires but it keeps running; broker 4 becomes controller (epoch 2)."""
    c = make(behaviours=behaviours, brokers=(0, 1, 2, 3, 4))
    c.expire_controller_session(0)
    c.elect_controller(4)
    c.deliver_all()
    c.crash(1)                                          # leader dies; both controllers react
    c.handle_broker_changes(controller=0)               # the zombie first
    c.deliver_all()
    return c


def test_zombie_controller_is_fenced_and_resigns():
    c = zombie_setup(())
    assert c.controllers[0].active is False
    assert c.state(TP).leader == 1                      # the zombie wrote nothing
    c.handle_broker_changes()                           # the real controller (epoch 2) elects
    st = c.state(TP)
    assert (st.leader, st.controller_epoch) == (2, 2) and c.controllers[4].retries == 0


def test_stale_controller_accepted_lets_zombie_decide_and_forces_retry():
    c = zombie_setup({"stale-controller-accepted"})
    st = c.state(TP)
    # the zombie's write landed and brokers follow it, although they had seen controller epoch 2
    assert c.controllers[0].active is True
    assert (st.leader, st.leader_epoch, st.controller_epoch) == (2, 1, 1)
    assert c.brokers[2].controller_epoch_seen == 1 and c.replica(2, TP).leader_epoch == 1   # back from 2
    # the real controller's cache is stale: its conditional write fails, it re-reads and retries
    c.handle_broker_changes()
    assert c.controllers[4].retries == 1
    assert c.controllers[4].states[TP] == c.state(TP)


# ------------------------------------------------------------------------------- conditional write
def test_store_conditional_write_and_controller_fencing():
    s = Store()
    s.controller_epoch = 3
    assert s.write_state(TP, 1, 0, (1, 2), -1, 3)[0] == OK
    res, cur = s.write_state(TP, 2, 1, (2,), -1, 3)
    assert res == BADVERSION and cur.version == 0
    assert s.write_state(TP, 2, 1, (2,), 0, 2) == (CONTROLLER_MOVED, None)
    res, new = s.write_state(TP, 2, 1, (2,), 0, 3)
    assert res == OK and new.version == 1 and new.controller_epoch == 3


def test_alter_partition_checks_follow_the_zk_controller_order():
    c = make(down=(3,))
    c.restart(3)
    c.handle_broker_changes()
    c.deliver_all()
    v = c.state(TP).version

    def ask(leader_epoch, partition_epoch, isr):
        c._send(1, 0, M.AlterPartition(1, TP, leader_epoch, partition_epoch, tuple((r, -1) for r in isr)))
        c.deliver(c.pending(dst=0, kind=M.AlterPartition)[-1].msg_id)
        [resp] = c.pending(dst=1, kind=M.AlterPartitionResponse)
        c.drop(resp.msg_id)
        return resp.body.error

    assert ask(0, v + 5, (1, 2, 3)) == M.NOT_CONTROLLER           # newer than this controller knows
    assert ask(0, v - 1, (1, 2, 3)) == M.INVALID_UPDATE_VERSION   # stale partition epoch
    assert c.state(TP).isr == (1, 2)
    assert ask(0, v, (1, 2, 3)) == M.NONE
    assert c.state(TP).isr == (1, 2, 3) and c.state(TP).version == v + 1
    assert ask(0, v, (1, 2, 3)) == M.NONE                          # a retry of an applied change
    assert c.state(TP).version == v + 1


def test_leader_isr_writes_make_controller_retry_with_fresh_state():
    """Pre-2.7 (isr_writes_by_leader): the leader shrinks the ISR in the store itself, so the
    controller's cache is stale. On the leader's failure its conditional write fails (BADVERSION),
    it re-reads and elects from the fresh ISR; electing from its stale cache would have picked the
    lagging replica 2 and lost the acked record."""
    c = Cluster((0, 1, 2, 3), ReplicationConfig(min_insync_replicas=1, replica_lag_time_max_ms=100,
                                                isr_writes_by_leader=True), controller=0)
    c.create_topic("t", 1, 3, assignment={0: (1, 2, 3)})
    c.deliver_all()
    c.replicate(2, TP), c.replicate(3, TP)
    p = c.produce(TP, "x")
    c.replicate(3, TP)
    c.advance(101)
    c.replicate(3, TP)                               # 3 caught up; 2 lags
    assert c.isr_check(1, TP)                        # the leader writes ISR {1,3} itself
    assert c.state(TP).isr == (1, 3) and c.active_controller().states[TP].isr == (1, 2, 3)
    assert c.results[p].error == M.NONE
    c.crash(1)
    c.handle_broker_changes()
    ctrl = c.active_controller()
    assert ctrl.retries == 1
    assert c.state(TP).leader == 3 and c.state(TP).isr == (3,)
    c.deliver_all()
    assert c.missing_acked(TP) == []
