"""Scenarios (a)-(j) of reference/replication.md §3.B replayed step by step through the public API
of the replicated cluster: with the historical behaviour switched on the run ends in the violation
the reference names; with it off the very same steps end safely.

Broker 0 is a controller-only broker in every scenario, so crashing data brokers never moves the
controller. Broker ids stand for the reference's names where it uses letters (noted per test).
"""

from kverify.impl.replication import Cluster, ReplicationConfig
from kverify.impl.replication import messages as M

TP = ("t", 0)
LAG = 30000


def make(assignment, behaviours=(), brokers=(0, 1, 2, 3), min_isr=1, down=()):
    c = Cluster(brokers, ReplicationConfig(min_insync_replicas=min_isr, replica_lag_time_max_ms=LAG),
                frozenset(behaviours), controller=0)
    for b in down:
        c.crash(b)
    if down:
        c.handle_broker_changes()
    c.create_topic("t", 1, len(assignment), assignment={0: tuple(assignment)})
    c.deliver_all()
    return c


def bring_back(c, b, lossy_restart=False):
    c.restart(b)
    c.handle_broker_changes()
    c.deliver_all()


def rep(c, b, times=1):
    for _ in range(times):
        c.replicate(b, TP)


def lai_to(c, dst, epoch=None):
    return [e.msg_id for e in c.pending(dst=dst, kind=M.LeaderAndIsr)
            if epoch is None or e.body.leader_epoch == epoch]


def values(c, b):
    return [v for _, _, v in c.replica(b, TP).log.records]


# --------------------------------------------------------------------------------------------- (a)
def scenario_a(behaviours):
    """KIP-101 scenario 1. B=1 leads, A=2 follows; C=3 is a third replica whose failure makes the
    controller bump the leader epoch (as in the TLA+ trace of reference §3.B(a)): A receives a
    LeaderAndIsr of a higher epoch while staying in the ISR. (The reference's A restart would, since
    KIP-380, be processed as a failure that drops A from the ISR, so the epoch bump comes from C.)"""
    c = make((1, 2, 3), behaviours)
    p1 = c.produce(TP, "m1")
    rep(c, 2), rep(c, 3), rep(c, 2), rep(c, 3)
    assert c.results[p1].error == M.NONE
    p2 = c.produce(TP, "m2")
    rep(c, 2), rep(c, 3)       # both copy m2; A learns HW 1
    rep(c, 2), rep(c, 3)       # the leader's HW reaches 2: m2 committed and acked
    assert c.results[p2].error == M.NONE
    a = c.replica(2, TP)
    assert (a.log.leo, a.hw, c.replica(1, TP).hw) == (2, 1, 2)
    c.crash(3)
    c.handle_broker_changes()  # ISR {1,2}, leader epoch 1, LeaderAndIsr to 1 and 2
    c.deliver_all()
    c.send_fetch(2, TP)        # A's next request to B is still in flight when ...
    c.crash(1)                 # ... B dies
    c.handle_broker_changes()
    c.deliver_all()
    assert c.leader_of(TP) == 2
    return c


def test_a_truncate_to_hw_loses_acked_record():
    c = scenario_a({"truncate-to-hw"})
    assert c.missing_acked(TP) == [(TP, 1, "m2")]
    assert values(c, 2) == ["m1"]


def test_a_epoch_truncation_keeps_acked_record():
    c = scenario_a(())
    assert c.missing_acked(TP) == []
    assert values(c, 2) == ["m1", "m2"]


# --------------------------------------------------------------------------------------------- (b)
def scenario_b(behaviours):
    """KIP-101 scenario 2 (offsets reconstructed by the reference; kept as it gives them).
    A=1 leads, B=2 follows, RF 2."""
    c = make((1, 2), behaviours)
    c.produce(TP, "m1")
    rep(c, 2, 2)
    c.flush(2)                 # B's copy of m1 reaches disk, m2 will not
    c.produce(TP, "m2", acks=1)
    rep(c, 2, 2)               # B fetched m2 (page cache); A's HW = 2
    assert c.replica(1, TP).hw == 2
    c.flush(1)                 # A's log and HW 2 are checkpointed
    c.crash(1)                 # power fails: A first ...
    c.handle_broker_changes()  # B takes over with ISR {B}
    c.deliver_all()
    c.crash(2, lossy=True)     # ... then B, which loses the unflushed m2
    c.handle_broker_changes()  # no leader, ISR stays {B}
    bring_back(c, 2)           # B restarts first and, sole ISR member, leads again
    assert c.leader_of(TP) == 2
    c.produce(TP, "m3", acks=1)
    assert values(c, 2) == ["m1", "m3"] and c.replica(2, TP).hw == 2
    bring_back(c, 1)           # A restarts as follower
    rep(c, 1, 4)
    return c


def test_b_truncate_to_hw_diverges_below_both_hws():
    c = scenario_b({"truncate-to-hw"})
    assert values(c, 1) == ["m1", "m2"] and values(c, 2) == ["m1", "m3"]
    assert c.replica(1, TP).hw == 2 and c.replica(2, TP).hw == 2
    assert c.log_mismatches(TP) == [(1, 1, 2)]


def test_b_epoch_truncation_converges():
    c = scenario_b(())
    assert values(c, 1) == values(c, 2) == ["m1", "m3"]
    assert c.log_mismatches(TP) == []


# --------------------------------------------------------------------------------------------- (c)
def scenario_c(behaviours):
    """KIP-279 / KAFKA-6361 (reconstructed by the reference). A=1, B=2, AR [B, A]; batches shrink
    to single records: A writes x0, x1 in epoch 0 and B copies only x0; B leads in epoch 1 (a
    preferred election) and writes y1 before A hears of it; B fails, A leads in epoch 2 and writes
    z2; B's epoch-1 range ends exactly where A's epoch-0 range ends (the reference's n == 20 case).
    The reference moves leadership by session expiries; with a controller that drops a failed
    replica from the ISR, A could then only come back through an unclean election, so the first move
    here is a preferred election (A stays in the ISR) and the second a failure of B."""
    c = make((2, 1), behaviours, down=(2,))      # B down at creation: A leads epoch 0
    bring_back(c, 2)
    c.produce(TP, "x0", acks=1)
    rep(c, 2, 3)                                 # B copies x0 and joins the ISR
    c.deliver_all()
    assert c.state(TP).isr == (1, 2)
    c.produce(TP, "x1", acks=1)                  # only A has x1
    st = c.elect_preferred(TP)                   # B leads in epoch 1
    assert st.leader == 2 and st.leader_epoch == 1
    for mid in lai_to(c, 2):
        c.deliver(mid)                           # A's copy of the epoch-1 LeaderAndIsr is delayed
    c.produce(TP, "y1", acks=1)
    c.crash(2)
    c.handle_broker_changes()                    # A leads in epoch 2
    for mid in lai_to(c, 1, epoch=2) + lai_to(c, 1, epoch=1):
        c.deliver(mid)                           # the stale epoch-1 request is ignored
    c.produce(TP, "z2", acks=1)
    assert values(c, 1) == ["x0", "x1", "z2"]
    bring_back(c, 2)
    rep(c, 2, 6)
    c.deliver_all()
    rep(c, 2, 2)
    return c


def test_c_offset_only_lookup_diverges_silently():
    c = scenario_c({"ofle-offset-only"})
    assert values(c, 2) == ["x0", "y1", "z2"]
    assert c.replica(1, TP).hw == 3 and c.replica(2, TP).hw == 3
    assert c.log_mismatches(TP) == [(1, 1, 2)]


def test_c_epoch_and_offset_lookup_truncates_the_divergent_record():
    c = scenario_c(())
    assert values(c, 2) == values(c, 1) == ["x0", "x1", "z2"]
    assert c.log_mismatches(TP) == []


# --------------------------------------------------------------------------------------------- (d)
def scenario_d(behaviours):
    """Jepsen 2013: the ISR shrinks to the leader, which keeps acking alone; then it fails and a
    stale follower is elected. min.insync.replicas is configured to 2."""
    c = make((1, 2, 3), behaviours, min_isr=2)
    w0 = c.produce(TP, "w0")
    rep(c, 2, 2), rep(c, 3, 2)
    assert c.results[w0].error == M.NONE
    c.produce(TP, "p", acks=1)                   # followers partitioned away: they stop fetching
    c.advance(LAG + 1)
    assert c.isr_check(1, TP)
    c.deliver_all()
    assert c.state(TP).isr == (1,)
    w1 = c.produce(TP, "w1")
    c.crash(1)
    c.handle_broker_changes()
    c.deliver_all()
    return c, w1


def test_d_min_isr_1_and_unclean_election_lose_acked_writes():
    c, w1 = scenario_d({"isr-shrinks-to-leader-min-isr-1", "unclean-election"})
    assert c.results[w1].error == M.NONE         # acked by the leader alone
    assert c.leader_of(TP) == 2                  # a replica outside the ISR was elected
    assert c.missing_acked(TP) == [(TP, 2, "w1")]
    bring_back(c, 1)
    rep(c, 1, 3)                                 # the old leader truncates to the new leader's log
    assert all("w1" not in values(c, b) for b in (1, 2, 3))


def test_d_min_isr_and_clean_election_refuse_instead():
    c, w1 = scenario_d(())
    assert c.results[w1].error == M.NOT_ENOUGH_REPLICAS
    assert values(c, 1) == ["w0", "p"]           # rejected before the append
    assert c.leader_of(TP) == -1                 # no clean candidate: offline, nothing lost
    assert c.missing_acked(TP) == []
    bring_back(c, 1)
    assert c.leader_of(TP) == 1 and c.missing_acked(TP) == []


def test_d_each_seed_alone_loses_nothing_acked():
    for beh in ({"unclean-election"}, {"isr-shrinks-to-leader-min-isr-1"}):
        c, _ = scenario_d(beh)
        assert c.missing_acked(TP) == []


# --------------------------------------------------------------------------------------------- (e)
def scenario_e(behaviours):
    """KIP-966 motivation, the HW-gate half: broker 3 leads RF 3, MinISR 2; brokers 1 and 2 are
    partitioned out of the ISR; a record written while ISR = {3} must not become consumable.
    (The other half of (e), an uncleanly restarted last ISR member losing records committed with a
    full ISR, is fixed by KIP-966's ELR, which this ZK-era model does not switch; here the earlier
    records are flushed.)"""
    c = make((3, 1, 2), behaviours, min_isr=2)
    c.produce(TP, "r0")
    rep(c, 1, 2), rep(c, 2, 2)
    for b in (1, 2, 3):
        c.flush(b)
    c.produce(TP, "r1", acks=1)                  # written after the followers are cut off
    c.advance(LAG + 1)
    c.isr_check(3, TP)
    c.deliver_all()
    assert c.state(TP).isr == (3,)
    pid = c.produce(TP, "w", acks=1)
    assert c.results[pid].error == M.NONE
    c.consume(TP)
    c.crash(3, lossy=True)                       # w was never flushed
    c.handle_broker_changes()
    bring_back(c, 3)                             # sole ISR member: re-elected
    assert c.leader_of(TP) == 3
    c.produce(TP, "v", acks=1)
    rep(c, 1, 3), rep(c, 2, 3)
    return c


def test_e_hw_ignoring_min_isr_exposes_a_record_that_is_then_lost():
    c = scenario_e({"hw-ignores-min-isr"})
    view = c.describe()
    # a consumer read r1 and w below the HW (ISR {3} < MinISR 2) ...
    assert {(TP, 1, "r1"), (TP, 2, "w")} <= set(view.consumed)
    # ... the lossy restart took them, and offset 1 now holds another record: consistent reads broken
    assert values(c, 3) == ["r0", "v"]
    assert dict(view.true_hw)[TP] == 3 and c.replica(3, TP).log.leo == 2


def test_e_hw_gate_keeps_unreplicated_record_invisible():
    c = scenario_e(())
    view = c.describe()
    assert [off for tp, off, _ in view.consumed] == [0]
    assert dict(view.true_hw)[TP] == 1
    assert values(c, 3) == ["r0", "v"]


# --------------------------------------------------------------------------------------------- (f)
def scenario_f(behaviours):
    """KAFKA-7164: r1=1, r2=2, r3=3. r3 misses epoch 1 (r2 leads) and sees epoch 2 with the same
    leader r1 as in epoch 0."""
    c = make((1, 2, 3), behaviours)
    c.produce(TP, "id0", acks=1)
    rep(c, 3)                                    # r3 copies id0, r2 does not
    c.crash(1)
    c.handle_broker_changes()                    # epoch 1: r2 leads, ISR {2,3}
    for mid in lai_to(c, 3):
        c.drop(mid)                              # r3 misses this change
    c.deliver_all()
    bring_back(c, 1)                             # r1 follows r2 and truncates to empty
    rep(c, 1, 3)
    c.deliver_all()
    assert values(c, 1) == [] and 1 in c.state(TP).isr
    c.crash(2)
    c.handle_broker_changes()                    # epoch 2: r1 leads again
    c.deliver_all()
    assert c.leader_of(TP) == 1 and c.state(TP).leader_epoch == 2
    c.produce(TP, "id1", acks=1)
    rep(c, 3, 4)
    return c


def test_f_skipping_truncation_for_same_leader_diverges():
    c = scenario_f({"skip-truncate-same-leader"})
    assert values(c, 1) == ["id1"] and values(c, 3) == ["id0"]
    assert c.replica(1, TP).hw == 1 and c.replica(3, TP).hw == 1
    assert c.log_mismatches(TP) == [(0, 1, 3)]


def test_f_truncating_on_every_epoch_converges():
    c = scenario_f(())
    assert values(c, 1) == values(c, 3) == ["id1"]
    assert c.log_mismatches(TP) == []


# --------------------------------------------------------------------------------------------- (g)
def scenario_g(behaviours):
    """KAFKA-7128: AR (1,2,3,4), ISR {1,2,4}, 3 lags with an empty log. 1 fails; 2 leads with a
    local HW (0) below the true HW (2); 3 fetches at 0 >= that HW and is added to the ISR."""
    c = make((1, 2, 3, 4), behaviours, brokers=(0, 1, 2, 3, 4), down=(3,))
    bring_back(c, 3)
    p = [c.produce(TP, v) for v in ("x0", "x1")]
    rep(c, 2, 2), rep(c, 4, 2)
    assert [c.results[i].error for i in p] == [M.NONE, M.NONE]
    assert c.replica(2, TP).hw == 0
    c.crash(1)
    c.handle_broker_changes()                    # 2 leads epoch 1: LESO 2, HW 0
    c.deliver_all()
    assert c.replica(2, TP).leso == 2 and c.replica(2, TP).hw == 0
    mid = c.send_fetch(3, TP)
    c.deliver(mid)                               # the leader sees 3 at offset 0 ...
    for e in c.pending(dst=3, kind=M.FetchResponse):
        c.drop(e.msg_id)                         # ... and 3 never gets the records
    c.deliver_all()
    c.crash(2), c.crash(4)
    c.handle_broker_changes()
    c.deliver_all()
    return c


def test_g_expansion_without_epoch_start_elects_an_empty_replica():
    c = scenario_g({"expand-without-epoch-start"})
    assert c.leader_of(TP) == 3
    assert c.missing_acked(TP) == [(TP, 0, "x0"), (TP, 1, "x1")]


def test_g_expansion_waits_for_epoch_start():
    c = scenario_g(())
    assert 3 not in c.state(TP).isr
    assert c.leader_of(TP) == -1 and c.missing_acked(TP) == []


# --------------------------------------------------------------------------------------------- (h)
def scenario_h(behaviours):
    """Maximal ISR: leader 1, ISR {1,2}; 3 has caught up (empty log) and an AlterPartition adding it
    is in flight while 1 writes x0, x1 and 2 copies them."""
    c = make((1, 2, 3), behaviours, down=(3,))
    bring_back(c, 3)
    c.deliver(c.send_fetch(3, TP))               # 3 fetches at 0 = LESO = HW: expansion proposed
    alter = c.pending(kind=M.AlterPartition)
    assert len(alter) == 1
    for e in c.pending(dst=3):
        c.deliver(e.msg_id)
    p = [c.produce(TP, v) for v in ("x0", "x1")]
    rep(c, 2, 2)
    c.deliver_all()                              # the controller applies ISR {1,2,3}
    assert c.state(TP).isr == (1, 2, 3)
    hw_then = c.replica(1, TP).hw
    c.crash(1), c.crash(2)
    c.handle_broker_changes()
    c.deliver_all()
    return c, p, hw_then


def test_h_hw_over_committed_isr_only_breaks_the_quorum_superset():
    c, p, hw_then = scenario_h({"no-maximal-isr"})
    assert hw_then == 2 and [c.results[i].error for i in p] == [M.NONE, M.NONE]
    assert c.leader_of(TP) == 3 and values(c, 3) == []
    assert c.missing_acked(TP) == [(TP, 0, "x0"), (TP, 1, "x1")]


def test_h_maximal_isr_holds_the_hw_back():
    c, p, hw_then = scenario_h(())
    assert hw_then == 0
    assert all(c.results[i].error != M.NONE for i in p)
    assert c.leader_of(TP) == 3 and c.missing_acked(TP) == []


# --------------------------------------------------------------------------------------------- (i)
def scenario_i(behaviours):
    """KIP-903: follower 3 (out of the ISR) sends a fetch at the log end, restarts uncleanly with an
    empty log, and the old fetch then reaches the leader."""
    c = make((1, 2, 3), behaviours, down=(3,))
    bring_back(c, 3)
    p = [c.produce(TP, v) for v in ("x0", "x1")]
    rep(c, 2, 2)
    assert [c.results[i].error for i in p] == [M.NONE, M.NONE]
    rep(c, 3)                                    # 3 copies x0, x1 (unflushed), still out of the ISR
    old_fetch = c.send_fetch(3, TP)              # fetch at offset 2, old broker epoch
    c.crash(3, lossy=True)
    c.restart(3)                                 # bounce: new broker epoch, empty log
    c.handle_broker_changes()
    for mid in lai_to(c, 3):
        c.deliver(mid)
    assert values(c, 3) == []
    c.deliver(old_fetch)                         # the leader judges 3 caught up
    c.deliver_all()
    c.crash(1), c.crash(2)
    c.handle_broker_changes()
    c.deliver_all()
    return c


def test_i_stale_broker_epoch_accepted_elects_an_empty_replica():
    c = scenario_i({"no-broker-epoch-check"})
    assert c.leader_of(TP) == 3
    assert c.missing_acked(TP) == [(TP, 0, "x0"), (TP, 1, "x1")]


def test_i_broker_epoch_check_rejects_the_stale_replica():
    c = scenario_i(())
    assert 3 not in c.state(TP).isr
    assert c.leader_of(TP) == -1 and c.missing_acked(TP) == []


# --------------------------------------------------------------------------------------------- (j)
def scenario_j(behaviours):
    """Pre-KIP-320 (the TLA+ trace of reference §3.B(j)): r1=1, r2=2, r3=3. r2 leads epoch 0; r1
    leads epoch 1 (preferred election) but r3 never hears; r2 leads epoch 2 with ISR {2,3} (r1's
    controlled shutdown) while r1 keeps running as a zombie leader of epoch 1. r3, still in epoch 0,
    fetches from r2; then it handles the stale epoch-1 request and truncates against r1."""
    c = make((1, 2, 3), behaviours, down=(1,))
    bring_back(c, 1)
    rep(c, 1, 2)
    c.deliver_all()
    assert c.state(TP).isr == (2, 3, 1)
    c.elect_preferred(TP)                        # epoch 1: r1 leads
    held_e1 = lai_to(c, 3)
    for mid in lai_to(c, 1) + lai_to(c, 2):
        c.deliver(mid)
    assert c.controlled_shutdown(1) == []        # epoch 2: r2 leads, ISR {2,3}
    assert c.state(TP).leader == 2 and c.state(TP).isr == (2, 3)
    for mid in lai_to(c, 2, epoch=2):
        c.deliver(mid)
    x = c.produce(TP, "X")
    assert c.replica(3, TP).leader_epoch == 0
    rep(c, 3, 2)                                 # r3 fetches in epoch 0 from the epoch-2 leader
    for mid in held_e1:
        c.deliver(mid)                           # the stale epoch-1 LeaderAndIsr reaches r3
    rep(c, 3)                                    # r3 asks r1 (epoch 1 zombie) where to truncate
    c.crash(2)
    c.handle_broker_changes()
    c.deliver_all()
    return c, x


def test_j_unfenced_fetch_and_truncation_lose_acked_record():
    c, x = scenario_j({"no-fetch-epoch-fencing"})
    assert c.results[x].error == M.NONE
    assert c.leader_of(TP) == 3
    assert c.missing_acked(TP) == [(TP, 0, "X")]


def test_j_fenced_fetch_never_counts_a_stale_follower():
    c, x = scenario_j(())
    assert c.results[x].error != M.NONE          # r3 was fenced, X never committed
    assert c.leader_of(TP) == 3 and c.missing_acked(TP) == []
