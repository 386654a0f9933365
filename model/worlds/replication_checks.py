"""The impl cluster's facts for the replication properties that the abstract model cannot state (no clock, no
controller writes, no produce answers), and their binding to a world's states.

Why a module of its own: replication-world and offsets-world run the same Cluster and judge it with the same
objects of invariants/replication.py (isr-shrink-only-lagging, isr-shrink-drops-lagging, leaderless-write-drops-
only-leader, leader-epoch-cached, follower-epoch-known, min-isr-refusal, min-isr-completion,
reassignment-request-validated); each is mapped here once.
"""
from __future__ import annotations

from kverify.impl.replication import Cluster
from kverify.impl.replication import replica as RP
from kverify.impl.replication.controller_ops import ControllerOps
from kverify.impl.replication.replica import LEADER
from kverify.invariants import replication as RI
from kverify.invariants.core import Invariant


def lag_view(c: Cluster, r) -> RI.LagView:
    """invariants/replication.py `LagView` of replica r, which believes it leads: the clock, its ISR and proposal,
    and each follower's last fetch in this leadership (the leader's fetch bookkeeping, Kafka's Replica state)."""
    fs = tuple((rid, f[RP._LEO], f[RP._LAST_LEADER_LEO], f[RP._LAST_FETCH]) for rid, f in sorted(r.followers.items()))
    return RI.LagView(c.now, c.settings.config.replica_lag_time_max_ms, r.leader_epoch, r.isr, r.pending_isr, fs,
                      r.log.leo)


def check_lagging_dropped(c: Cluster, f=RI.LAGGING_DROPPED.check):
    """RI.LAGGING_DROPPED over every running replica that leads without a proposal in flight, in a state where time
    has passed the limit: the ISR its task would propose now is computed on a copy (read-only, as
    ReplicationWorld._isr_check_acts decides whether to offer the task)."""
    lag = c.settings.config.replica_lag_time_max_ms
    if c.now <= lag:
        return None
    for b, br in sorted(c.brokers.items()):
        if not br.alive:
            continue
        for tp, r in sorted(br.replicas.items()):
            if r.role != LEADER or r.pending_isr is not None:
                continue
            v = lag_view(c, r)
            if not RI.out_of_sync(v):
                continue
            msg = f(v, r.copy().maybe_shrink(c.now, c.settings))
            if msg is not None:
                return f"{tp[0]}-{tp[1]} (leader {b}): {msg}"
    return None


def check_lag_shrinks(s_cluster: Cluster, a, t_cluster: Cluster, f=RI.LAG_SHRINK.check):
    """RI.LAG_SHRINK over every replica that leads before and after a step without a proposal before it (only the
    brokers the step wrote to: the others are the very same objects)."""
    for b, bt in t_cluster.brokers.items():
        bs = s_cluster.brokers.get(b)
        if bs is bt or bs is None or not (bs.alive and bt.alive):
            continue
        for tp, rt in bt.replicas.items():
            rs = bs.replicas.get(tp)
            if rs is None or rs.role != LEADER or rt.role != LEADER or rs.pending_isr is not None:
                continue
            msg = f(lag_view(s_cluster, rs), a, lag_view(t_cluster, rt))
            if msg is not None:
                return f"{tp[0]}-{tp[1]} (leader {b}): {msg}"
    return None


def leaders_epoch_cache(c: Cluster) -> list:
    """RI.LEADER_EPOCH_CACHED's facts: (partition, broker, leader epoch, last epoch of its cache entries) of each
    running leader (read from the entries themselves, not through ReplicaLog.latest_epoch, the followers' query)."""
    return [(f"{tp[0]}-{tp[1]}", b, r.leader_epoch, r.log.epochs[-1][0] if r.log.epochs else -1)
            for b, br in sorted(c.brokers.items()) if br.alive
            for tp, r in sorted(br.replicas.items()) if r.role == LEADER]


def followers_epoch_cache(c: Cluster) -> list:
    """RI.FOLLOWER_EPOCH_KNOWN's facts: (partition, broker, its leader, the leader epoch it follows, last epoch of its
    cache entries) of each running follower."""
    return [(f"{tp[0]}-{tp[1]}", b, r.leader, r.leader_epoch, r.log.epochs[-1][0] if r.log.epochs else -1)
            for b, br in sorted(c.brokers.items()) if br.alive
            for tp, r in sorted(br.replicas.items()) if r.role == RP.FOLLOWER]


def recorded_write(c: Cluster, writes: list, ctrl, tp, decide):
    """ControllerOps._write (the controller's conditional write of a decision), noting the stored state before and
    after a write that happened."""
    before = c.store.states.get(tp)
    st = ControllerOps._write(c, ctrl, tp, decide)
    after = c.store.states.get(tp)
    if before is not None and after is not before:
        writes.append((tp, before, after))
    return st


def check_leaderless_writes(s_cluster: Cluster, a, t_cluster: Cluster, f=RI.LEADERLESS_WRITE.check):
    """RI.LEADERLESS_WRITE over each controller write the step made (`controller_writes`, recorded by
    ReplicationWorld.apply_to; the store's PartitionState has the view's fields: leader, isr, version)."""
    for tp, p, n in getattr(t_cluster, "controller_writes", ()):
        msg = f(p, a, n)
        if msg is not None:
            return f"{tp[0]}-{tp[1]}: {msg}"
    return None


def check_min_isr_refusals(s_cluster: Cluster, a, t_cluster: Cluster, min_isr, f=RI.MIN_ISR_REFUSAL.check):
    """RI.MIN_ISR_REFUSAL on a produce step ("produce", topic, partition, value, acks, broker) with acks=all to a
    replica that believes it leads with the stored replica set (during a reassignment the leader's set differs and
    its minimum is another question); `min_isr(tp)`: the partition's ReplView.min_isr."""
    if a[0] != "produce" or a[4] != -1:
        return None
    tp = (a[1], a[2])
    r = s_cluster.replica(a[5], tp)
    if r is None or r.role != LEADER or tuple(r.replicas) != s_cluster.store.assignments.get(tp):
        return None
    new = [res for pid, res in t_cluster.results.items() if pid not in s_cluster.results]
    if len(new) != 1:
        return None
    msg = f(RI.AppendView(len(r.isr), min_isr(tp)), a, new[0].error)
    return None if msg is None else f"{tp[0]}-{tp[1]} (leader {a[5]}): {msg}"


def check_min_isr_completions(s_cluster: Cluster, a, t_cluster: Cluster, min_isr, f=RI.MIN_ISR_COMPLETION.check):
    """RI.MIN_ISR_COMPLETION on every acks=all request answered NONE or NOT_ENOUGH_REPLICAS_AFTER_APPEND in the step
    (new, or waiting before it) by a replica that still leads with the stored replica set; `min_isr(tp)`: the
    partition's ReplView.min_isr after the step."""
    before = s_cluster.results
    for pid, res in t_cluster.results.items():
        if res.acks != -1 or res.error not in ("NONE", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"):
            continue
        old = before.get(pid)
        if old is not None and old.error is not None:
            continue
        r = t_cluster.replica(res.broker, res.tp)
        if r is None or r.role != LEADER or tuple(r.replicas) != t_cluster.store.assignments.get(res.tp):
            continue
        msg = f(RI.AppendView(len(r.maximal_isr(t_cluster.settings)), min_isr(res.tp)), a, res.error)
        if msg is not None:
            return f"{res.tp[0]}-{res.tp[1]} (leader {res.broker}): {msg}"
    return None


def reassign_request_view(c: Cluster, tp) -> RI.ReassignRequestView:
    """RI.ReassignRequestView of partition tp: the cluster's brokers, the active controller's live brokers, the stored
    replica set and reassignment, and what the metadata store and every controller hold (compared whole)."""
    ctrl = c.active_controller()
    live = () if ctrl is None else tuple(sorted(ctrl.live_set()))
    held = (c.store.snapshot(), tuple(x.snapshot() for _, x in sorted(c.controllers.items())))
    return RI.ReassignRequestView(tuple(sorted(c.brokers)), live, tuple(c.store.assignments.get(tp, ())),
                                  c.store.reassignments.get(tp), held)


def check_reassign_requests(s_cluster: Cluster, a, t_cluster: Cluster, f=RI.REASSIGN_REQUEST.check):
    """RI.REASSIGN_REQUEST on a ("reassign", topic, partition, target) step."""
    if a[0] != "reassign":
        return None
    tp = (a[1], a[2])
    msg = f(reassign_request_view(s_cluster, tp), a, reassign_request_view(t_cluster, tp))
    return None if msg is None else f"{tp[0]}-{tp[1]}: {msg}"


def cluster_invariants(cluster_of, min_isr_of) -> list:
    """The properties above as Invariant objects over a world's states: `cluster_of(state)` -> its Cluster,
    `min_isr_of(state, tp)` -> the partition's ReplView.min_isr (the shared view's effective min.insync.replicas).
    The world records `controller_writes` on the cluster of each step (ReplicationWorld.apply_to)."""
    def state(inv, fn):
        return Invariant(inv.name, inv.statement, fn, "state", inv.broken_by)

    def step(inv, fn):
        return Invariant(inv.name, inv.statement, fn, "step", inv.broken_by)

    return [
        state(RI.LAGGING_DROPPED, lambda s: check_lagging_dropped(cluster_of(s))),
        state(RI.LEADER_EPOCH_CACHED, lambda s: RI.check_leader_epoch_cached(leaders_epoch_cache(cluster_of(s)))),
        state(RI.FOLLOWER_EPOCH_KNOWN, lambda s: RI.check_follower_epoch_known(followers_epoch_cache(cluster_of(s)))),
        step(RI.LAG_SHRINK, lambda s, a, t: check_lag_shrinks(cluster_of(s), a, cluster_of(t))),
        step(RI.LEADERLESS_WRITE, lambda s, a, t: check_leaderless_writes(cluster_of(s), a, cluster_of(t))),
        step(RI.MIN_ISR_REFUSAL, lambda s, a, t: check_min_isr_refusals(cluster_of(s), a, cluster_of(t),
                                                                         lambda tp: min_isr_of(s, tp))),
        step(RI.MIN_ISR_COMPLETION, lambda s, a, t: check_min_isr_completions(cluster_of(s), a, cluster_of(t),
                                                                               lambda tp: min_isr_of(t, tp))),
        step(RI.REASSIGN_REQUEST, lambda s, a, t: check_reassign_requests(cluster_of(s), a, cluster_of(t))),
    ]
