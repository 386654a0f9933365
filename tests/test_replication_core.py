"""Replication building blocks: the log and its epoch cache, placement, produce with acks and
min.insync.replicas, ISR shrink/expand rules, fetch fencing, and the value semantics of the cluster."""
import pytest

from kverify.impl.replication import Cluster, InvalidReplicationFactor, ReplicationConfig, assign_replicas
from kverify.impl.replication import messages as M
from kverify.impl.replication.log import UNDEFINED, ReplicaLog

TP = ("t", 0)


def make(assignment=(1, 2, 3), behaviours=(), min_isr=1, lag=30000, down=()):
    c = Cluster((0, 1, 2, 3), ReplicationConfig(min_insync_replicas=min_isr, replica_lag_time_max_ms=lag),
                frozenset(behaviours), controller=0)
    for b in down:
        c.crash(b)
    if down:
        c.handle_broker_changes()
    c.create_topic("t", 1, len(assignment), assignment={0: tuple(assignment)})
    c.deliver_all()
    return c


# ------------------------------------------------------------------------------- log and epoch cache
def epoch_log():
    log = ReplicaLog()
    for epoch, n in ((0, 2), (2, 3), (5, 1)):
        for i in range(n):
            log.append(epoch, f"e{epoch}-{i}")
    return log      # epochs (0,0) (2,2) (5,5), LEO 6


def test_end_offset_for_follows_kip_279():
    log = epoch_log()
    assert log.epochs == [(0, 0), (2, 2), (5, 5)]
    assert log.end_offset_for(5) == (5, 6)          # latest epoch ends at the LEO
    assert log.end_offset_for(2) == (2, 5)
    assert log.end_offset_for(3) == (2, 5)          # floor epoch, start of the next one
    assert log.end_offset_for(9) == (UNDEFINED, UNDEFINED)
    log2 = ReplicaLog()
    log2.assign_epoch_start(4, 0)
    log2.append(4, "a")
    assert log2.end_offset_for(1) == (1, 0)         # below every entry: (epoch, first start)


def test_legacy_end_offset_is_offset_only():
    log = epoch_log()
    assert log.legacy_end_offset_for(5) == 6
    assert log.legacy_end_offset_for(3) == 5
    assert log.legacy_end_offset_for(9) == UNDEFINED


def test_truncation_keeps_cache_consistent_and_lossy_restart_drops_unflushed():
    log = epoch_log()
    log.truncate_to(3)
    assert log.leo == 3 and log.epochs == [(0, 0), (2, 2)]
    log.flush()
    log.append(7, "z")
    log.lose_unflushed()
    assert log.leo == 3 and log.epochs == [(0, 0), (2, 2)]


def test_epoch_assignment_removes_non_monotonic_entries():
    log = ReplicaLog()
    log.assign_epoch_start(2, 0)            # a leader of epoch 2 that never appended
    log.append_records(((0, 1, "a"),))      # then copies epoch-1 records from a new leader
    assert log.epochs == [(1, 0)]
    log.append(3, "b")
    log.assign_epoch_start(3, 5)            # same epoch, later start: kept as it is
    assert log.epochs == [(1, 0), (3, 1)]


# ------------------------------------------------------------------------------- placement
def test_placement_worked_example_and_shift():
    a = assign_replicas(range(5), 10, 3)
    assert [a[p] for p in range(10)] == [(0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0), (4, 0, 1),
                                         (0, 2, 3), (1, 3, 4), (2, 4, 0), (3, 0, 1), (4, 1, 2)]
    b = assign_replicas(range(3), 4, 3, start_index=1, shift=2)
    assert b[0] == (1, 2, 0) and b[3] == (1, 0, 2)


def test_placement_reduces_to_i_plus_j_mod_n_for_zero_random_values():
    n = 4
    a = assign_replicas(range(n), n, 3)
    assert all(a[i] == tuple((i + j) % n for j in range(3)) for i in range(n))


def test_placement_rejects_rf_above_brokers():
    with pytest.raises(InvalidReplicationFactor):
        assign_replicas(range(2), 1, 3)


def test_topic_creation_uses_placement():
    c = Cluster((0, 1, 2), controller=0)
    assert c.create_topic("p", 4, 2, start_index=1, shift=0) == assign_replicas((0, 1, 2), 4, 2, 1, 0)
    assert c.store.assignments[("p", 0)] == (1, 2)


# ------------------------------------------------------------------------------- produce and acks
def test_acks_levels():
    c = make()
    p0 = c.produce(TP, "a", acks=0)
    p1 = c.produce(TP, "b", acks=1)
    pall = c.produce(TP, "c", acks=-1)
    bad = c.produce(TP, "d", acks=2)
    assert c.results[p0].error == M.NONE and c.results[p1].error == M.NONE
    assert c.results[pall].error is None                      # waits for the HW
    assert c.results[bad].error == M.INVALID_REQUIRED_ACKS
    for _ in range(2):
        c.replicate(2, TP), c.replicate(3, TP)
    assert c.results[pall].error == M.NONE and c.acked == [(TP, 2, "c")]


def test_not_enough_replicas_rejects_before_append():
    c = make((1, 2), min_isr=2, down=(2,))
    p = c.produce(TP, "a")
    assert c.results[p].error == M.NOT_ENOUGH_REPLICAS and c.replica(1, TP).log.leo == 0
    ok = c.produce(TP, "b", acks=1)
    assert c.results[ok].error == M.NONE


def after_append_setup(behaviours):
    c = make((1, 2), min_isr=2, lag=100, behaviours=behaviours)
    p = c.produce(TP, "a")                                     # ISR {1,2}: appended, waiting
    c.advance(101)
    c.isr_check(1, TP)
    c.deliver_all()                                            # 2 never fetched: ISR {1}
    assert c.state(TP).isr == (1,)
    c.produce(TP, "b", acks=1)                                 # a leader append recomputes the HW
    return c, p


def test_not_enough_replicas_after_append_needs_hw_past_min_isr_gate():
    c, p = after_append_setup({"hw-ignores-min-isr"})
    assert c.results[p].error == M.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert c.replica(1, TP).hw == 2                            # the record stays and is committed


def test_hw_gate_keeps_request_waiting_under_min_isr():
    c, p = after_append_setup(())
    assert c.results[p].error is None and c.replica(1, TP).hw == 0


def test_leader_step_down_fails_waiting_requests():
    c = make()
    p = c.produce(TP, "a")
    c.controlled_shutdown(1)
    c.deliver_all()
    assert c.results[p].error == M.NOT_LEADER_OR_FOLLOWER


# ------------------------------------------------------------------------------- ISR shrink / expand
def test_shrink_only_after_lag_time_and_only_when_behind():
    c = make(lag=1000)
    c.replicate(2, TP), c.replicate(3, TP)
    c.advance(5000)
    assert not c.isr_check(1, TP)                              # caught up (LEO equal): stays
    c.replicate(2, TP), c.replicate(3, TP)                     # caught up at t=5000
    c.produce(TP, "a", acks=1)
    c.advance(1000)
    assert not c.isr_check(1, TP)                              # exactly the lag: still in sync
    c.replicate(2, TP), c.replicate(2, TP)
    c.advance(1)
    assert c.isr_check(1, TP)
    c.deliver_all()
    assert c.state(TP).isr == (1, 2)                           # 3 dropped, 2 kept
    assert c.state(TP).leader_epoch == 0 and c.state(TP).version == 1   # ISR change: partition epoch only


def test_expand_requires_leader_epoch_start():
    c = make((1, 2, 3), down=(3,))
    c.produce(TP, "a")
    c.replicate(2, TP), c.replicate(2, TP)
    c.restart(3)
    c.handle_broker_changes()
    c.deliver_all()
    c.replicate(3, TP)                                         # fetch at 0
    c.deliver_all()
    assert 3 not in c.state(TP).isr                            # LEO 0 < HW 1
    c.replicate(3, TP)
    c.deliver_all()
    assert c.state(TP).isr == (1, 2, 3)


def test_fetch_fencing_by_current_leader_epoch():
    c = make()
    r = c.replica(1, TP)
    settings = c.settings
    stale = M.Fetch(TP, 2, 0, -1, -1, 0)
    ahead = M.Fetch(TP, 2, 0, -1, 5, 0)
    assert r.handle_fetch(stale, 0, settings, lambda _: True)[0].error == M.FENCED_LEADER_EPOCH
    assert r.handle_fetch(ahead, 0, settings, lambda _: True)[0].error == M.UNKNOWN_LEADER_EPOCH
    ofle = r.handle_offsets_for_leader_epoch(M.OffsetsForLeaderEpoch(TP, 2, 0, -1), settings)
    assert ofle.error == M.FENCED_LEADER_EPOCH
    loose = make(behaviours={"no-fetch-epoch-fencing"})
    assert loose.replica(1, TP).handle_fetch(stale, 0, loose.settings, lambda _: True)[0].error == M.NONE


def test_offsets_for_leader_epoch_returns_epoch_and_end_offset():
    c = make()
    c.produce(TP, "a", acks=1)
    c.crash(1)
    c.handle_broker_changes()
    c.deliver_all()                                            # 2 leads epoch 1 at LEO 0
    c.produce(TP, "b", acks=1)
    r = c.replica(2, TP)
    resp = r.handle_offsets_for_leader_epoch(M.OffsetsForLeaderEpoch(TP, 3, 0, 1), c.settings)
    assert (resp.error, resp.leader_epoch, resp.end_offset) == (M.NONE, 0, 0)
    resp = r.handle_offsets_for_leader_epoch(M.OffsetsForLeaderEpoch(TP, 3, 1, 1), c.settings)
    assert (resp.leader_epoch, resp.end_offset) == (1, 1)


# ------------------------------------------------------------------------------- value semantics
def test_copy_is_independent_and_snapshot_is_value():
    c = make()
    c.produce(TP, "a")
    d = c.copy()
    assert d.snapshot() == c.snapshot() and d.describe() == c.describe()
    d.replicate(2, TP)
    assert d.snapshot() != c.snapshot()
    assert c.replica(2, TP).log.leo == 0 and d.replica(2, TP).log.leo == 1
    hash(c.snapshot()), hash(c.describe())


def test_same_steps_same_state():
    def run():
        c = make()
        for i in range(5):
            c.produce(TP, i)
            c.replicate(2 + i % 2, TP)
        c.crash(1)
        c.handle_broker_changes()
        c.deliver_all()
        return c.snapshot()
    assert run() == run()


def test_describe_reports_replicas_and_controller():
    c = make()
    c.produce(TP, "a")
    v = c.describe()
    assert v.controller == 0 and v.controller_epoch == 1
    assert [p.tp for p in v.partitions] == [TP]
    leader = [r for r in v.replicas if r.role == "leader"]
    assert len(leader) == 1 and leader[0].records == ((0, 0, "a"),) and leader[0].maximal_isr == (1, 2, 3)


def test_unknown_behaviour_rejected():
    from kverify.behaviours import UnknownBehaviour
    with pytest.raises(UnknownBehaviour):
        Cluster((0, 1), behaviours=frozenset({"truncate-to-hw-typo"}))
