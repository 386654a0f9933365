"""Liveness properties: what must eventually happen once perturbations stop (issue 17).

Why it exists: the `always` invariants (invariants/replication.py, group.py, offsets.py) only say
nothing bad happens; a controller that never elects a new leader breaks none of them. An
`Eventually` property says something good must come: while its premise holds, its goal must be
reached under fair moves. Fair moves are every action except faults (`Protocol.is_fault`) and the
property's own `excluded` actions (the failed node's return: the property must hold without it).

Each property is written once, over a small view of the state, and every engine reads the same
object: the explorer checks it on the whole state graph (model/search/liveness.py: a reachable
state from which no fair path discharges it is a counterexample, rendered as a lasso), walks and
Spark as a bounded response (model/response.py: from every step where an obligation starts, a fair
tail must discharge it within N fair steps).

`pending(state)` returns None when the obligation is discharged (the premise is false or the goal
holds) and otherwise one line naming what is still awaited.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional


@dataclass(frozen=True)
class Eventually:
    """`name`: kverify name; `statement`: one line; `pending(state) -> None | str` (see the module
    docstring); `excluded(action) -> bool`: non-fault actions that do not count as fair moves."""

    name: str
    statement: str
    pending: Callable[[object], Optional[str]]
    excluded: Callable[[tuple], bool] = lambda action: False


# --- (a) leader failover ----------------------------------------------------------------------------
LEADER_FAILOVER = "leader-failover"
LEADER_FAILOVER_STATEMENT = ("while a live in-sync replica exists, a partition whose leader failed gets a live leader "
                             "acting in the stored leader epoch, without the failed broker coming back")


class FailoverView(NamedTuple):
    """One partition as the failover property reads it (facts from the controller's store and the brokers).
    - `leader`: the stored leader (-1: none); `leader_alive`: its broker process is running;
    - `leading`: that broker's replica acts as leader in the stored leader epoch (LeaderAndIsr applied);
    - `live_isr`: stored ISR members whose broker process is running."""

    partition: str
    leader: int
    leader_alive: bool
    leading: bool
    live_isr: tuple


def failover_pending(v: FailoverView) -> Optional[str]:
    if v.leader >= 0 and v.leader_alive and v.leading:
        return None
    if not v.live_isr:
        return None                     # no live in-sync replica: the premise does not hold (offline by design)
    if v.leader >= 0 and v.leader_alive:
        return f"{v.partition}: stored leader {v.leader} is live but does not act as leader yet"
    return (f"{v.partition}: no live leader (stored leader {v.leader}) while in-sync replicas "
            f"{list(v.live_isr)} are live")


# --- (a') reassignment progress ---------------------------------------------------------------------
REASSIGNMENT_COMPLETES = "reassignment-completes"
REASSIGNMENT_COMPLETES_STATEMENT = ("a started partition reassignment completes (the target replica set becomes the "
                                    "assignment) while every target replica is live, without a broker coming back")


class ReassignView(NamedTuple):
    """A partition's reassignment as the progress property reads it: `target` (None: none in
    progress) and the target replicas whose broker process is running."""

    partition: str
    target: Optional[tuple]
    live_targets: tuple


def reassignment_pending(v: ReassignView) -> Optional[str]:
    if v.target is None or len(v.live_targets) < len(v.target):
        return None
    return f"{v.partition}: the reassignment to {list(v.target)} has not completed"


# --- (b) group stabilisation ------------------------------------------------------------------------
GROUP_STABLE = "group-stabilises"
GROUP_STABLE_STATEMENT = ("a group whose members stay alive reaches Stable with exactly its live members once "
                         "perturbations stop")


class GroupLiveView(NamedTuple):
    """A group as the stabilisation property reads it: `state` the coordinator's group state,
    `live` the members whose process runs and that want to be in the group, `members` the group's
    member slots, `coordinator_up` whether a coordinator serves the group."""

    state: str
    live: tuple
    members: tuple
    coordinator_up: bool = True


def group_pending(v: GroupLiveView) -> Optional[str]:
    if not v.live or not v.coordinator_up:
        return None                     # nobody wants in, or no coordinator: nothing is owed
    if v.state == "Stable" and set(v.live) == set(v.members):
        return None
    return f"group is {v.state} with members {list(v.members)} while {list(v.live)} are live"


# --- (c) committed offsets readable again -------------------------------------------------------------
COMMIT_READABLE = "commit-readable"
COMMIT_READABLE_STATEMENT = ("an acknowledged offset commit is readable again (a loaded coordinator answers it, or a "
                             "later commit) once a coordinator can be back")


class CommitView(NamedTuple):
    """`acked`: the last acknowledged commit per key ((key, value), ...); `readable`: what a loaded
    coordinator would answer per key now ((key, value), ...) or None when no coordinator serves;
    `can_serve`: some broker that could host the coordinator is live (the premise)."""

    acked: tuple
    readable: Optional[tuple]
    can_serve: bool


def commit_pending(v: CommitView) -> Optional[str]:
    if not v.acked or not v.can_serve:
        return None
    if v.readable is None:
        return f"acknowledged commits {list(v.acked)} are not served by any loaded coordinator"
    have = dict(v.readable)
    missing = [(k, val) for k, val in v.acked if have.get(k, -1) < val]
    if not missing:
        return None
    return f"acknowledged commits {missing} are not readable (coordinator answers {dict(have)})"


def first_pending(checks) -> Optional[str]:
    """The first message of an iterable of `pending` results, None when all are discharged."""
    for msg in checks:
        if msg is not None:
            return msg
    return None


# --- (d) every running replica rejoins: follows the stored leader and joins the stored ISR ---------------
REPLICA_REJOINS = "replica-rejoins-isr"
REPLICA_REJOINS_STATEMENT = ("while a partition's stored leader acts as leader in the stored leader epoch, every running "
                             "replica of its stored assignment that is not shutting down eventually follows that leader "
                             "in that epoch and is in the stored ISR, without a broker coming back")


class RejoinView(NamedTuple):
    """One partition as the rejoin property reads it (the controller's store and the brokers).
    - `led`: the stored leader's process runs and acts as leader in the stored leader epoch (the premise);
    - `leader`, `leader_epoch`, `isr`: the stored decision;
    - `replicas`: ((broker, leader it names, leader epoch it knows), ...) for the running replicas of the
      stored assignment that are not shutting down; a replica that acts on no LeaderAndIsr names -1.
    A stored ISR member whose process is down does not excuse anything: the controller takes a dead broker out of
    the ISRs (on its failure, and on a controller failover for brokers that died before it: Kafka's
    ReplicaStateMachine.startup, OfflineReplica), after which the expansion that lets a replica rejoin is eligible."""

    partition: str
    led: bool
    leader: int
    leader_epoch: int
    isr: tuple
    replicas: tuple


def rejoin_pending(v: RejoinView) -> Optional[str]:
    if not v.led:
        return None                     # no acting leader: leader-failover owes that first
    for b, names, epoch in v.replicas:
        if names != v.leader or epoch != v.leader_epoch:
            return (f"{v.partition}: running replica {b} acts on leader {names} in epoch {epoch}, the controller "
                    f"stored leader {v.leader} in epoch {v.leader_epoch}")
        if b not in v.isr:
            return f"{v.partition}: running replica {b} follows leader {v.leader} but is not in the stored ISR {list(v.isr)}"
    return None


# --- (e) a waiting acks=all write is answered ------------------------------------------------------------------
ACKS_ANSWERED = "acks-all-answered"
ACKS_ANSWERED_STATEMENT = ("an acks=all write waiting at a running leader whose ISR meets min.insync.replicas is "
                           "eventually answered (or the leader falls below the minimum, or stops leading), without a "
                           "broker coming back")


def acks_pending(waiting) -> Optional[str]:
    """`waiting`: ((partition, produce id, broker, offset, members of that leader's committed ISR, min ISR), ...) for
    the acks=all writes still waiting for the high watermark at a running broker that leads. Kafka: DelayedProduce
    completes once the leader's HW reaches the write (Partition.checkEnoughReplicasReachOffset) or the replica stops
    leading; the followers' fetches, the ISR task and the controller's handling of failures are fair moves, so the
    HW gets there, except while the ISR is below min.insync.replicas: the HW does not advance then (KAFKA-15583)
    and only request.timeout.ms (not modelled) would answer, so that premise is left out."""
    for partition, pid, broker, offset, isr_size, min_isr in waiting:
        if isr_size >= min_isr:
            return f"{partition}: acks=all write {pid} at offset {offset} still waits at broker {broker}"
    return None
