"""Partition reassignment by the OAR/RAR steps: completes only after the new replicas joined the
ISR, can be resumed by a new controller after a crash between any two steps, and the historical
switch that drops the old replicas early loses acked data."""
import pytest

from kverify.impl.replication import Cluster, ControllerError, ReplicationConfig
from kverify.impl.replication import messages as M

TP = ("t", 0)
BROKERS = (0, 1, 2, 3, 4, 5, 9)     # 0 and 9 host no replicas: controller candidates


def make(behaviours=()):
    c = Cluster(BROKERS, ReplicationConfig(min_insync_replicas=2), frozenset(behaviours), controller=0)
    c.create_topic("t", 1, 3, assignment={0: (1, 2, 3)})
    c.deliver_all()
    pids = [c.produce(TP, v) for v in ("x0", "x1")]
    for _ in range(3):
        c.replicate(2, TP), c.replicate(3, TP)
    c.deliver_all()
    assert [c.results[p].error for p in pids] == [M.NONE, M.NONE]
    return c


def catch_up(c, brokers):
    for _ in range(4):
        for b in brokers:
            c.replicate(b, TP)
    c.deliver_all()


def run(c, replicate=True, limit=30, controller=None):
    steps = []
    for _ in range(limit):
        s = c.reassignment_step(TP, controller=controller)
        c.deliver_all()
        steps.append(s)
        if s in ("complete", "none"):
            break
        if s == "wait":
            if not replicate:
                break
            catch_up(c, (4, 5))
    return steps


def check_done(c):
    st = c.state(TP)
    assert c.store.assignments[TP] == (1, 4, 5)
    assert set(st.isr) <= {1, 4, 5} and st.leader in (1, 4, 5)   # R2, R3
    assert TP not in c.store.reassignments
    for b in (1, 4, 5):
        assert [v for _, _, v in c.replica(b, TP).log.records] == ["x0", "x1"]
    for b in (2, 3):
        assert c.replica(b, TP) is None                        # deleted
    assert c.missing_acked(TP) == []


def test_reassignment_waits_for_new_replicas_then_completes():
    c = make()
    c.reassign(TP, (1, 4, 5))
    steps = run(c, replicate=False)
    assert steps == ["expand-replicas", "wait"]
    assert c.store.assignments[TP] == (1, 4, 5, 2, 3)          # AR = RAR + (OAR - RAR)
    steps = run(c)
    assert steps[-1] == "complete" and "remove-old-from-isr" in steps and "shrink-replicas" in steps
    check_done(c)


def test_reassignment_moving_the_leader_elects_from_target():
    c = make()
    c.reassign(TP, (4, 5, 2))
    steps = run(c)
    assert "elect-leader" in steps and steps[-1] == "complete"
    st = c.state(TP)
    assert st.leader == 4 and set(st.isr) == {2, 4, 5} and c.store.assignments[TP] == (4, 5, 2)
    assert c.missing_acked(TP) == []


@pytest.mark.parametrize("crash_after", range(0, 6))
def test_reassignment_resumes_after_controller_crash_at_any_step(crash_after):
    c = make()
    c.reassign(TP, (1, 4, 5))
    for _ in range(crash_after):
        s = c.reassignment_step(TP)
        c.deliver_all()
        if s == "wait":
            catch_up(c, (4, 5))
        if s == "complete":
            break
    c.crash(0)                                  # the controller dies between two steps
    c.elect_controller(9)
    c.deliver_all()
    c.handle_broker_changes()
    c.deliver_all()
    steps = run(c)
    assert steps[-1] in ("complete", "none")
    check_done(c)


def test_dropping_old_replicas_early_loses_acked_records():
    c = make({"reassignment-drops-old-replicas-early"})
    c.reassign(TP, (1, 4, 5))
    steps = run(c, replicate=False)
    assert steps[-1] == "complete" and "wait" not in steps
    assert c.state(TP).isr == (1,)              # the only in-sync copy: 4 and 5 never fetched
    assert c.replica(2, TP) is None and c.replica(3, TP) is None
    c.crash(1, lossy=True)                      # the one remaining copy was never flushed
    holders = [b for b in (1, 2, 3, 4, 5) if c.replica(b, TP) is not None and c.replica(b, TP).log.leo > 0]
    assert holders == []                        # x0, x1 were acked with acks=all and exist nowhere


def test_reassign_rejects_bad_targets():
    c = make()
    with pytest.raises(ControllerError):
        c.reassign(TP, (1, 1, 4))
    with pytest.raises(ControllerError):
        c.reassign(TP, (1, 4, 77))
    assert c.reassignment_step(TP) == "none"
