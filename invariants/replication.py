"""Replication invariants (reference `replication.md` table 86), written once over a small view.

Why it exists: the abstract model (`model/replication.py`), the offsets model built on it, and the
reference implementation's cluster (impl/replication, through its own mapping function) all check
the SAME predicates. Each engine maps its state onto `ReplView` and wraps these objects with `bind`.

View conventions:
- replicas are numbered 0..n-1; a set of replicas is a bitmask (bit i = replica i);
- a record is a pair `(leader_epoch, record_id)`, record ids being unique per write; a log is a
  tuple of records, offset = index; HW and LEO are exclusive;
- `committed` is the history of what consumers could read: the longest prefix any leader ever
  exposed below its HW (so `len(committed)` is the *true HW*); `acked` lists the (offset, record)
  pairs acknowledged to an acks=all producer.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.invariants.core import Invariant, Sometimes, bits

NO_LEADER = -1


class ReplicaView(NamedTuple):
    alive: bool
    log: tuple                 # ((epoch, id), ...)
    hw: int
    leader_epoch: int          # the leader epoch this replica knows
    partition_epoch: int
    controller_epoch: int      # largest controller epoch it has seen
    leader: int                # the leader it believes in (itself when it believes it leads), -1 none
    isr: int                   # its committed ISR (meaningful when it believes it leads), bitmask
    quorum: int                # the replicas it waits for to advance the HW (leader only), bitmask


class ControllerView(NamedTuple):
    leader: int
    leader_epoch: int
    isr: int
    elr: int
    partition_epoch: int
    controller_epoch: int


class ReplView(NamedTuple):
    replicas: tuple            # (ReplicaView, ...)
    controller: ControllerView
    acked: tuple               # ((offset, record), ...)
    committed: tuple           # records below the true HW, as consumers saw them
    min_isr: int               # effective min.insync.replicas


_bits = bits   # set bits of a bitmask (invariants/core.py)


def _fmt_rec(rec) -> str:
    return "none" if rec is None else f"{rec[1]}@e{rec[0]}"


def _at(log, o):
    return log[o] if o < len(log) else None


def _prefix_mismatch(log, committed, upto: int):
    """First offset < upto where `log` lacks or differs from `committed`, else None."""
    if log[:upto] == committed[:upto]:
        return None
    for o in range(upto):
        if _at(log, o) != committed[o]:
            return o
    return None


# --- I-DUR ------------------------------------------------------------------------------------------
def check_dur(v: ReplView):
    """Allows: an acked record unavailable while no leader exists (offline partition), and acked
    records missing from some replicas. Forbids: the controller's current leader lacking an acked
    record at its offset (or holding another record there), and an acked record that no replica,
    running or crashed, still holds (lost globally; holds while lossy restarts < MinISR)."""
    if not v.acked:
        return None
    ldr = v.controller.leader
    logs = [r.log for r in v.replicas]
    for o, rec in v.acked:
        if ldr != NO_LEADER and _at(logs[ldr], o) != rec:
            return (f"acked record {_fmt_rec(rec)} at offset {o} is not in leader {ldr}'s log "
                    f"(has {_fmt_rec(_at(logs[ldr], o))})")
        if not any(_at(lg, o) == rec for lg in logs):
            return f"acked record {_fmt_rec(rec)} at offset {o} is on no replica"
    return None


# --- I-LC -------------------------------------------------------------------------------------------
def check_lc(v: ReplView):
    """Allows: a leader with records beyond the true HW. Forbids: the controller's current leader
    missing, or holding a different record at, any offset below the true HW."""
    ldr = v.controller.leader
    if ldr == NO_LEADER or not v.committed:
        return None
    o = _prefix_mismatch(v.replicas[ldr].log, v.committed, len(v.committed))
    if o is None:
        return None
    return (f"leader {ldr} (epoch {v.controller.leader_epoch}) has {_fmt_rec(_at(v.replicas[ldr].log, o))} "
            f"at offset {o} below true HW {len(v.committed)}, consumers read {_fmt_rec(v.committed[o])}")


# --- I-LCC ------------------------------------------------------------------------------------------
def check_lcc(v: ReplView):
    """Allows: crashed ISR/ELR members and non-members lacking committed records. Forbids: a running
    member of the controller's ISR or ELR (i.e. an electable replica) that lacks, or differs on, a
    record below the true HW."""
    t = len(v.committed)
    if not t:
        return None
    c = v.controller
    for i in _bits(c.isr | c.elr):
        r = v.replicas[i]
        if not r.alive:
            continue
        o = _prefix_mismatch(r.log, v.committed, t)
        if o is not None:
            where = "ISR" if c.isr >> i & 1 else "ELR"
            return (f"{where} member {i} has {_fmt_rec(_at(r.log, o))} at offset {o} below true HW {t}, "
                    f"committed is {_fmt_rec(v.committed[o])}")
    return None


# --- I-LM -------------------------------------------------------------------------------------------
def check_lm(v: ReplView):
    """Allows: replicas differing at or above the lower of their two HWs (uncommitted tails).
    Forbids: two replicas whose logs differ at an offset below both HWs."""
    reps = v.replicas
    for i in range(len(reps)):
        for j in range(i + 1, len(reps)):
            m = min(reps[i].hw, reps[j].hw)
            if m and reps[i].log[:m] != reps[j].log[:m]:
                o = next(o for o in range(m) if _at(reps[i].log, o) != _at(reps[j].log, o))
                return (f"replicas {i} and {j} differ at offset {o} below both HWs ({reps[i].hw}, {reps[j].hw}): "
                        f"{_fmt_rec(_at(reps[i].log, o))} vs {_fmt_rec(_at(reps[j].log, o))}")
    return None


# --- I-HWM ------------------------------------------------------------------------------------------
def check_hwm(v: ReplView):
    """Consistent read. Allows: a new leader whose HW is below the true HW for a while (KIP-101
    lag). Forbids: any running replica that believes it leads exposing, below its HW, a record that
    differs from the one consumers already read at that offset (the visible HW went back and forward
    over different data)."""
    t = len(v.committed)
    for i, r in enumerate(v.replicas):
        if r.leader != i or not r.alive:
            continue
        upto = min(r.hw, t)
        o = _prefix_mismatch(r.log, v.committed, upto)
        if o is not None:
            return (f"leader {i} exposes {_fmt_rec(_at(r.log, o))} at offset {o} below its HW {r.hw}, "
                    f"consumers read {_fmt_rec(v.committed[o])}")
    return None


# --- I-RQS ------------------------------------------------------------------------------------------
def check_rqs(v: ReplView):
    """Replication quorum superset. Allows: a leader below MinISR waiting for fewer replicas than the
    controller could elect (its HW is frozen then), and stale leaders. Forbids: the current leader
    (in the controller's epoch), with at least MinISR members in its ISR, advancing its HW without
    waiting for some member of the controller's ISR or ELR."""
    c = v.controller
    ldr = c.leader
    if ldr == NO_LEADER:
        return None
    r = v.replicas[ldr]
    if r.leader != ldr or r.leader_epoch != c.leader_epoch or bin(r.isr).count("1") < v.min_isr:
        return None
    missing = (c.isr | c.elr) & ~r.quorum
    if missing:
        return (f"leader {ldr} waits for {_bits(r.quorum)} but the controller can elect "
                f"{_bits(c.isr | c.elr)} (missing {_bits(missing)})")
    return None


# --- I-EPOCH (step) ---------------------------------------------------------------------------------
class EpochView(NamedTuple):
    """The epochs only (cheap to map on every transition): per replica (leader epoch, partition
    epoch, controller epoch), and the controller's (leader epoch, partition epoch, controller epoch)."""
    replicas: tuple
    controller: tuple


_EPOCH_NAMES = ("leader epoch", "partition epoch", "controller epoch")


def check_epoch(prev: EpochView, action, nxt: EpochView):
    """Allows: epochs staying equal or growing. Forbids: any replica's leader epoch, partition epoch
    or controller epoch decreasing, and the controller's own leader/partition/controller epochs
    decreasing (a restart keeps them: they are on disk / re-learnt from the controller)."""
    if prev == nxt:
        return None
    for i, (a, b) in enumerate(zip(prev.replicas, nxt.replicas)):
        if a != b:
            for k in range(3):
                if b[k] < a[k]:
                    return f"replica {i}'s {_EPOCH_NAMES[k]} went from {a[k]} to {b[k]}"
    a, b = prev.controller, nxt.controller
    for k in range(3):
        if b[k] < a[k]:
            return f"the controller's {_EPOCH_NAMES[k]} went from {a[k]} to {b[k]}"
    return None


def check_log_epochs(v: ReplView):
    """Allows: several records per epoch, epochs skipped. Forbids: a log where a record's leader
    epoch is lower than the one before it (the epoch cache must increase)."""
    for i, r in enumerate(v.replicas):
        last = -1
        for o, rec in enumerate(r.log):
            if rec[0] < last:
                return f"replica {i}'s log has epoch {rec[0]} at offset {o} after epoch {last}"
            last = rec[0]
    return None


# --- leader in ISR, HW bounds ----------------------------------------------------------------------
def check_leader_in_isr(v: ReplView):
    """Allows: no leader (offline). Forbids: a controller leader outside the controller's ISR, and a
    replica that believes it leads without being in its own ISR."""
    c = v.controller
    if c.leader != NO_LEADER and not c.isr >> c.leader & 1:
        return f"controller leader {c.leader} is not in the ISR {_bits(c.isr)}"
    for i, r in enumerate(v.replicas):
        if r.leader == i and not r.isr >> i & 1:
            return f"replica {i} leads epoch {r.leader_epoch} outside its own ISR {_bits(r.isr)}"
    return None


def check_hw_bounds(v: ReplView):
    """Allows: follower HWs below the leader's; a replica's uncommitted tail above its HW.
    Forbids: a replica whose HW exceeds its own LEO or the true HW (what any leader ever
    exposed), and a replica whose log below its HW differs from what consumers read there (its HW
    covers uncommitted records, e.g. a follower that takes the leader's HW before truncating its
    diverged tail, KAFKA-14704)."""
    t = len(v.committed)
    for i, r in enumerate(v.replicas):
        if r.hw > len(r.log):
            return f"replica {i}'s HW {r.hw} is above its LEO {len(r.log)}"
        if r.hw > t:
            return f"replica {i}'s HW {r.hw} is above the true HW {t}"
        o = _prefix_mismatch(r.log, v.committed, r.hw)
        if o is not None:
            return (f"replica {i}'s HW {r.hw} covers {_fmt_rec(r.log[o])} at offset {o}, "
                    f"consumers read {_fmt_rec(v.committed[o])} there")
    return None


# broken_by: behaviours whose shortest counterexample (or a test trace) in model/replication.py breaks it
I_DUR = Invariant("i-dur", "every acks=all-acked record is in the current leader's log at its offset, and on some replica",
                  check_dur, broken_by=("unclean-election", "isr-shrinks-to-leader-min-isr-1", "truncate-to-hw"))
I_LC = Invariant("i-lc", "the controller's leader holds every record below the true HW", check_lc,
                 broken_by=("unclean-election",))
I_LCC = Invariant("i-lcc", "every running ISR/ELR member holds every record below the true HW", check_lcc,
                  broken_by=("truncate-to-hw", "expand-without-epoch-start", "hw-ignores-min-isr", "no-broker-epoch-check",
                             "ofle-offset-only", "skip-truncate-same-leader", "unclean-election", "no-fetch-epoch-fencing"))
I_LM = Invariant("i-lm", "any two replicas agree on every offset below both HWs", check_lm,
                 broken_by=("ofle-offset-only", "skip-truncate-same-leader", "kafka-14704-hw-before-truncate"))
I_HWM = Invariant("i-hwm", "no leader exposes, below its HW, a record other than the one consumers read there",
                  check_hwm, broken_by=("unclean-election",))
I_RQS = Invariant("i-rqs", "a current leader at MinISR waits for every replica the controller may elect",
                  check_rqs, broken_by=("no-maximal-isr", "stale-controller-accepted"))
I_EPOCH = Invariant("i-epoch", "leader, partition and controller epochs never decrease on any replica",
                    check_epoch, kind="step", broken_by=("stale-controller-accepted",))
LOG_EPOCHS = Invariant("log-epochs-ordered", "leader epochs never decrease along a log", check_log_epochs,
                       broken_by=("no-fetch-epoch-fencing",))
LEADER_IN_ISR = Invariant("leader-in-isr", "a leader is a member of its ISR", check_leader_in_isr)
HW_BOUNDS = Invariant("hw-bounds", "every HW is at most its replica's LEO and covers only committed records "
                      "(its log agrees with what consumers read below it)", check_hw_bounds,
                      broken_by=("kafka-14704-hw-before-truncate", "ofle-offset-only", "skip-truncate-same-leader",
                                 "no-fetch-epoch-fencing", "truncate-to-hw", "unclean-election"))

ALL = (I_DUR, I_LC, I_LCC, I_LM, I_HWM, I_RQS, LEADER_IN_ISR, HW_BOUNDS, LOG_EPOCHS, I_EPOCH)


class ReassignView(NamedTuple):
    """The controller's record of one partition's reassignment (the abstract model has none; the impl
    cluster maps its metadata store onto this)."""
    replicas: tuple          # current assigned replicas (AR)
    isr: tuple
    reassignment: Optional[tuple]   # (original replicas, target replicas) while one is in progress


def check_reassignment_keeps_old_replicas(prev: ReassignView, action, nxt: ReassignView) -> Optional[str]:
    """I-REASSIGN (replication.md fact 55, R1), a STEP property: the step that takes an original replica
    out of the replica set of a partition under reassignment is taken only while every target replica
    is in the ISR (the ISR before that step). Allows: any step of a partition with no reassignment in
    progress; the ISR shrinking (a target replica failing) AFTER the original replicas were dropped.
    Forbids: an original replica leaving the replica set while some target replica is not yet in sync
    (the only in-sync copies could then be deleted).

    Why a step and not a state: Kafka judges completion once, on the ISR of the moment, and the ISR
    may shrink afterwards while the old record of the reassignment is still around. ZK controller
    (apache/kafka@1eb7644, core/src/main/scala/kafka/controller/KafkaController.scala):
    onPartitionReassignment (l.778) completes only if isReassignmentComplete (l.787, l.1038:
    TRS subsetOf the ISR read from ZK), then writes RS=TRS (B6, l.805) and only later removes the
    partition from /admin/reassign_partitions (B7, l.807), a second ZK write; an ISR shrink landing
    between the two (a controller failover between them, or a leader writing its ISR to ZK itself
    before AlterIsr) leaves RS=TRS, the reassignment still recorded, and an ISR without every target
    replica: nothing was dropped early. KRaft (metadata/.../PartitionReassignmentReplicas.java
    maybeCompleteReassignment, l.97-129; PartitionChangeBuilder.completeReassignmentIfNeeded) checks
    ISR-minus-removing contains every target replica on the ISR of the very change that completes.
    The former state form (`target <= ISR now` or no original replica missing) flagged the correct
    cluster: docs/FINDINGS.md, "I-REASSIGN judged the ISR after completion"."""
    if prev.reassignment is None:
        return None
    original, target = prev.reassignment
    dropped = [r for r in original if r in prev.replicas and r not in nxt.replicas]
    if not dropped:
        return None
    waiting = sorted(set(target) - set(prev.isr))
    if waiting:
        return (f"replicas {sorted(dropped)} of the original set {list(original)} were dropped while target "
                f"replicas {waiting} were not in the ISR {list(prev.isr)}")
    return None


I_REASSIGN = Invariant("i-reassign", "during a reassignment no original replica is dropped before every target "
                       "replica is in the ISR", check_reassignment_keeps_old_replicas, kind="step",
                       broken_by=("reassignment-drops-old-replicas-early",))

ELR_USED = Sometimes("elr-used", "some replica is an eligible leader replica (ISR below MinISR)",
                     lambda v: v.controller.elr != 0)


def bind(invariants, view, epoch_view):
    """The same invariants over an engine's own states: `view(state) -> ReplView` for state
    invariants, `epoch_view(state) -> EpochView` for the step invariant. The checks of one state
    (of one source state, for the step invariant) run one after the other, so each bound check first
    looks at the last state mapped: a state is mapped once, not once per check."""
    last, last_prev = [None, None], [None, None]      # [state, its view]

    def mapped(s):
        v = view(s)
        last[0], last[1] = s, v
        return v

    def prev_mapped(s):
        v = epoch_view(s)
        last_prev[0], last_prev[1] = s, v
        return v

    out = []
    for inv in invariants:
        if inv.kind == "step":
            chk = (lambda f: lambda s, a, t: f(last_prev[1] if last_prev[0] is s else prev_mapped(s), a,
                                               epoch_view(t)))(inv.check)
        else:
            chk = (lambda f: lambda s: f(last[1] if last[0] is s else mapped(s)))(inv.check)
        out.append(Invariant(inv.name, inv.statement, chk, inv.kind, inv.broken_by))
    return tuple(out)


def bind_sometimes(props, view):
    return tuple(Sometimes(p.name, p.statement, (lambda f: lambda s: f(view(s)))(p.predicate)) for p in props)


# --- one leader per leader epoch (added for issue 17's detection power) ------------------------------
def check_one_leader_per_epoch(v: ReplView):
    """A leader epoch names one leadership term: the controller bumps it with every change of the stored
    leader, a move to no leader (-1) included, and replicas fence on it. Forbids: a running replica that
    follows (or is) leader L at leader epoch e while the controller stores another leader at that same
    epoch e, or two running replicas that name different leaders at the same epoch. Allows: replicas at
    older epochs (not yet told), replicas that know no leader, ISR changes within one epoch."""
    named = {}          # leader epoch -> (the leader named at it, who named it first: a replica, or -1 the controller)
    c = v.controller
    if c.leader_epoch >= 0:
        named[c.leader_epoch] = (c.leader, -1)
    for i, r in enumerate(v.replicas):
        if not r.alive or r.leader == NO_LEADER or r.leader_epoch < 0:
            continue
        leader, by = named.setdefault(r.leader_epoch, (r.leader, i))
        if leader != r.leader:
            who = "the controller" if by < 0 else f"replica {by}"
            return f"leader epoch {r.leader_epoch}: replica {i} follows leader {r.leader}, {who} names leader {leader}"
    return None


ONE_LEADER_PER_EPOCH = Invariant("leader-epoch-names-one-leader",
                                 "no two running replicas, nor a running replica and the controller, name different "
                                 "leaders at the same leader epoch", check_one_leader_per_epoch)
ALL = ALL + (ONE_LEADER_PER_EPOCH,)


# --- a replica set names each broker once (added for issue 17's detection power) ----------------------------
def check_distinct_replicas(assignments) -> Optional[str]:
    """`assignments`: ((partition name, replica set), ...) as the controller stores them. Kafka's replica
    placement, and every reassignment target, lists rf different brokers: a broker listed twice would hold
    one copy counted as two (an ISR of one broker meeting min.insync.replicas 2). Forbids a repeated broker."""
    for name, ar in assignments:
        if len(set(ar)) != len(ar):
            return f"partition {name}: replica set {list(ar)} lists a broker more than once"
    return None


DISTINCT_REPLICAS = Invariant("replicas-distinct", "every stored replica set lists each broker at most once",
                              check_distinct_replicas)


# --- when a follower may leave the ISR for lag (added for issue 17's detection power) -------------------------
class LagView(NamedTuple):
    """One replica that believes it leads, as its ISR task sees it (the abstract model has no clock: the impl
    cluster maps each leading replica onto this). `followers`: ((follower, offset of its last fetch, the leader's
    log end when that fetch arrived, when it arrived in ms), ...) in this leadership, -1 for a follower that has
    not fetched since."""
    now: int
    lag_ms: int                # replica.lag.time.max.ms
    leader_epoch: int
    isr: tuple                 # the committed ISR it leads with
    pending: Optional[tuple]   # the ISR it proposed and has not yet seen committed (AlterPartition in flight)
    followers: tuple
    leo: int = 0               # its log end offset now


def check_lag_shrink(prev: LagView, action, nxt: LagView) -> Optional[str]:
    """A STEP property over one leading replica (same leader epoch before and after): when it decides a new ISR
    that leaves out a member of its committed ISR, no member it leaves out fetched up to the leader's log end
    within the last replica.lag.time.max.ms. Kafka (core/src/main/scala/kafka/cluster/Replica.scala,
    updateFetchState and isCaughtUp; Partition.getOutOfSyncReplicas): a fetch at or beyond the leader's log end
    sets the follower's last caught-up time to that fetch's time, and a follower stays caught up while now minus
    that time is at most the limit, and anyway while its log end equals the leader's. Allows: dropping a follower
    that never fetched in this leadership, or whose last fetch stayed below the leader's log end of then and of now,
    or came more than the limit ago (a necessary condition only: Kafka also counts a fetch that reached the log end
    of the previous fetch). Forbids: shrinking out a follower that was at the leader's log end less than the limit
    ago, or whose last fetch asked for the leader's current log end (nothing to catch up)."""
    if prev.pending is not None or prev.leader_epoch != nxt.leader_epoch:
        return None
    decided = nxt.pending if nxt.pending is not None else nxt.isr
    dropped = [r for r in prev.isr if r not in decided]
    if not dropped:
        return None
    fetched = {f[0]: f[1:] for f in prev.followers}
    for r in dropped:
        offset, leader_leo, at = fetched.get(r, (-1, -1, -1))
        if at >= 0 and offset >= leader_leo and nxt.now - at <= prev.lag_ms:
            return (f"follower {r} left the ISR {list(prev.isr)} -> {list(decided)} at {nxt.now} ms although it "
                    f"fetched up to the leader's log end ({offset}) at {at} ms, within replica.lag.time.max.ms "
                    f"{prev.lag_ms}")
        if at >= 0 and offset == prev.leo:
            return (f"follower {r} left the ISR {list(prev.isr)} -> {list(decided)} at {nxt.now} ms although its log "
                    f"end {offset} equals the leader's")
    return None


LAG_SHRINK = Invariant("isr-shrink-only-lagging", "a leader drops a follower from its ISR only if the follower has "
                       "not been at the leader's log end for more than replica.lag.time.max.ms", check_lag_shrink,
                       kind="step")


# --- a leaderless write removes the failed leader, nothing else (added for issue 17's detection power) ----------
class StoredState(NamedTuple):
    """One partition's state as the controller stores it."""
    leader: int
    isr: tuple
    version: int               # the partition epoch: one more per write


def check_leaderless_write(prev: StoredState, action, nxt: StoredState) -> Optional[str]:
    """A property of ONE controller write of a partition's stored state (the engines' step may hold several: a
    world records each write and passes its state before and after; a write is version + 1), judged when that
    write took the leadership from L to none: the write changed the ISR only by removing L, and kept L only as
    the ISR's last member. Kafka's ZK controller has exactly one write that leaves a partition
    leaderless, the OfflineReplica transition of the leader's replica (ReplicaStateMachine
    doRemoveReplicasFromIsr, tag 3.9: the new leader is NoLeader when the replica is the leader; the ISR loses
    that replica unless it is its only member); KRaft fences one broker per partition change. Allows: the other
    writes of a batch of failures (each broker's in turn, in any order), elections (they name a leader).
    Forbids: a leaderless write that drops other members, adds one, or keeps the failed leader while others remain
    (the partition then waits for the failed broker instead of a surviving in-sync replica)."""
    if nxt.version != prev.version + 1 or prev.leader < 0 or nxt.leader >= 0:
        return None
    before, after = set(prev.isr), set(nxt.isr)
    other = (after - before) | (before - after - {prev.leader})
    if other:
        return (f"the write leaving the partition leaderless (leader {prev.leader} failed) changed the ISR "
                f"{list(prev.isr)} -> {list(nxt.isr)}: it may only remove {prev.leader}")
    if prev.leader in after and len(before) > 1:
        return (f"the write leaving the partition leaderless kept the failed leader {prev.leader} in the ISR "
                f"{list(nxt.isr)} while other members remain")
    return None


def out_of_sync(v: LagView) -> list:
    """Followers of v's ISR that are out of sync by Kafka's rule, judged on facts that only make the answer certain:
    their last fetch in this leadership stopped below the leader's log end of now (Replica.isCaughtUp's first test
    fails) and arrived more than replica.lag.time.max.ms ago (their last caught-up time is never later than their
    last fetch, so the second test fails too). Followers that have not fetched in this leadership are left out
    (their caught-up time is when the leadership began, which the view does not hold)."""
    fetched = {f[0]: f[1:] for f in v.followers}
    out = []
    for r in v.isr:
        offset, _leader_leo, at = fetched.get(r, (-1, -1, -1))
        if at >= 0 and offset != v.leo and v.now - at > v.lag_ms:
            out.append(r)
    return out


def check_lagging_dropped(v: LagView, proposal: Optional[tuple]) -> Optional[str]:
    """A leader's ISR task, run now (`proposal`: the ISR it would propose, None if it would do nothing), drops every
    follower that is certainly out of sync (`out_of_sync`). Kafka: Partition.maybeShrinkIsr proposes the ISR
    without getOutOfSyncReplicas. Allows: a leader with a proposal in flight (its task only retries that one; the
    caller does not ask then), followers not certainly out of sync. Forbids: a follower behind the log end that has
    not fetched for more than the limit kept in the ISR by the task."""
    late = out_of_sync(v)
    if not late:
        return None
    kept = [r for r in late if proposal is None or r in proposal]
    if kept:
        return (f"followers {kept} are behind the leader's log end {v.leo} and last fetched more than "
                f"replica.lag.time.max.ms {v.lag_ms} ago (now {v.now} ms), yet the ISR task would "
                f"{'do nothing' if proposal is None else f'propose {list(proposal)}'}")
    return None


LAGGING_DROPPED = Invariant("isr-shrink-drops-lagging", "a leader's ISR task drops every follower that is behind its "
                            "log end and has not fetched for more than replica.lag.time.max.ms", check_lagging_dropped)


LEADERLESS_WRITE = Invariant("leaderless-write-drops-only-leader", "a controller write that leaves a partition "
                             "without a leader removes the failed leader from the ISR (unless it is the last member) "
                             "and no one else", check_leaderless_write, kind="step")


# --- an acks=all write is refused exactly below min.insync.replicas (added for issue 17's detection power) -------
class AppendView(NamedTuple):
    """A replica that believes it leads, as an acks=all produce request finds it."""
    isr_size: int              # members of its committed ISR
    min_isr: int               # effective min.insync.replicas of the partition (ReplView.min_isr)


NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"


def check_min_isr_refusal(prev: AppendView, action, error: Optional[str]) -> Optional[str]:
    """A STEP property of one acks=all produce answered by a replica that believes it leads: it is refused with
    NOT_ENOUGH_REPLICAS if and only if the leader's committed ISR has fewer members than min.insync.replicas. Kafka
    (core/src/main/scala/kafka/cluster/Partition.scala appendRecordsToLeader): the ISR's size (partitionState.isr)
    against the effective minimum, checked before the append, for requiredAcks == -1 only. `error`: the request's
    outcome (None while it waits for the high watermark). Allows: a later NOT_ENOUGH_REPLICAS_AFTER_APPEND (the ISR
    shrank while it waited), any other error. Forbids: a refusal at or above the minimum (a write the partition can
    take is turned away), and an append below it (a write acknowledged by fewer copies than promised)."""
    refused = error == NOT_ENOUGH_REPLICAS
    below = prev.isr_size < prev.min_isr
    if refused and not below:
        return (f"an acks=all write was refused NOT_ENOUGH_REPLICAS with {prev.isr_size} ISR members, "
                f"min ISR {prev.min_isr}")
    if below and not refused:
        return (f"an acks=all write was taken ({error or 'waiting'}) with {prev.isr_size} ISR members, below min ISR "
                f"{prev.min_isr}")
    return None


MIN_ISR_REFUSAL = Invariant("min-isr-refusal", "a leader refuses an acks=all write (NOT_ENOUGH_REPLICAS) exactly when "
                            "its ISR is below min.insync.replicas", check_min_isr_refusal, kind="step")


def check_min_isr_completion(prev: AppendView, action, error: Optional[str]) -> Optional[str]:
    """A STEP property of one acks=all request that waited for the high watermark and was answered in this step by
    the replica that still leads (`prev.isr_size`: its MAXIMAL ISR, the committed one plus a proposal in flight, as
    the step leaves it): NONE if and only if that ISR has at least min.insync.replicas members, else
    NOT_ENOUGH_REPLICAS_AFTER_APPEND. Kafka (Partition.checkEnoughReplicasReachOffset): once the HW passes the
    request's offset, `minIsr <= maximalIsr.size` decides between the two. Allows: any other answer (the leader
    resigned, the broker restarted). Forbids: a success with too small an ISR, or a failure with a large enough one."""
    if error not in ("NONE", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"):
        return None
    enough = prev.isr_size >= prev.min_isr
    if (error == "NONE") != enough:
        return (f"an acks=all write completed {error} with {prev.isr_size} members in the leader's maximal ISR, "
                f"min ISR {prev.min_isr}")
    return None


MIN_ISR_COMPLETION = Invariant("min-isr-completion", "a waiting acks=all write succeeds exactly when the leader's "
                               "maximal ISR has min.insync.replicas members, else NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                               check_min_isr_completion, kind="step")


# --- a leader's epoch cache ends with its own epoch (added for issue 17's detection power) ----------------------
def check_leader_epoch_cached(leaders) -> Optional[str]:
    """`leaders`: ((partition name, broker, its leader epoch, the latest epoch of its leader-epoch cache), ...) for
    every running replica that believes it leads. Kafka (Partition.makeLeader): on every new leader epoch, the
    leader assigns that epoch's start offset, its log end, in its cache (maybeAssignEpochStartOffset), before any
    append: a follower that asks OffsetsForLeaderEpoch about a later epoch of a deposed leader is then answered
    with this epoch's start (KAFKA-7415), and the leader's own appends are stamped with it. Forbids: a leader whose
    cache ends with another epoch (it took a new epoch without recording where it starts). Allows: followers and
    stopped replicas, whatever their cache."""
    for name, broker, epoch, cached in leaders:
        if cached != epoch:
            return f"{name}: leader {broker} in leader epoch {epoch} has epoch {cached} last in its leader-epoch cache"
    return None


LEADER_EPOCH_CACHED = Invariant("leader-epoch-cached", "a leader's leader-epoch cache ends with its own leader epoch "
                                "(recorded where it started)", check_leader_epoch_cached)


# --- a follower holds no record of a leader epoch newer than the one it follows (issue 17's detection power) -----
def check_follower_epoch_known(followers) -> Optional[str]:
    """`followers`: ((partition name, broker, its leader, the leader epoch it follows, the latest epoch of its
    leader-epoch cache), ...) for every running follower. Kafka (KIP-320, 2.1): a follower's Fetch carries its
    current leader epoch and the leader serves it only in that very epoch (Partition.fetchRecords ->
    localLogWithEpochOrThrow: an older epoch is answered FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, both
    without records); a leader stamps its appends with its own epoch. So every record a follower holds was written
    in the epoch it follows or an earlier one. Forbids: a follower holding a record of a newer epoch (it was served
    by a leader that had moved on, i.e. a fenced fetch served). Allows: leaders and stopped replicas (a restarted
    broker forgets its epoch until a LeaderAndIsr tells it again)."""
    for name, broker, leader, epoch, cached in followers:
        if cached > epoch:
            return (f"{name}: follower {broker} of leader {leader} in leader epoch {epoch} holds records of leader "
                    f"epoch {cached}")
    return None


FOLLOWER_EPOCH_KNOWN = Invariant("follower-epoch-known", "a follower holds no record of a leader epoch newer than the "
                                 "one it follows (KIP-320: a fetch of an older epoch is fenced)",
                                 check_follower_epoch_known, broken_by=("no-fetch-epoch-fencing",))


# --- an invalid reassignment target is refused (added for issue 17's detection power) ----------------------------
def reassignment_target_error(target, brokers) -> Optional[str]:
    """Why a reassignment `target` (a replica list) is invalid in a cluster whose broker ids are `brokers`, or None.
    Kafka's ZK controller (core/src/main/scala/kafka/controller/KafkaController.scala, validateReplicas, run by
    processApiPartitionReassignment for every partition of an AlterPartitionReassignments request) answers
    INVALID_REPLICA_ASSIGNMENT for an empty replica list, duplicate replica ids, a negative broker id, and new
    replicas that are not live brokers; a broker id the cluster does not have is never live. (Only these are stated
    here: a known broker that is down is refused by Kafka but accepted by the reference controller, which checks
    that target brokers exist; that case is judged neither way.)"""
    if not target:
        return "empty replica list"
    if len(set(target)) != len(target):
        return "duplicate replica ids"
    unknown = sorted(b for b in set(target) if b not in brokers)
    if unknown:
        return f"brokers {unknown} are not in the cluster"
    return None


class ReassignRequestView(NamedTuple):
    """One partition as a reassignment request finds it or leaves it (the impl cluster maps its controller and
    metadata store onto this; the abstract model has no admin requests)."""
    brokers: tuple                  # every broker id of the cluster
    live: tuple                     # the brokers the active controller counts live
    replicas: tuple                 # the partition's stored replica set
    reassignment: Optional[tuple]   # (original replicas, target replicas) the store records for it
    state: object                   # what the metadata store and the controllers hold, compared whole


def check_reassignment_request(prev: ReassignRequestView, action, nxt: ReassignRequestView) -> Optional[str]:
    """A STEP property of ("reassign", topic, partition, target) steps (an AlterPartitionReassignments request for
    one partition). Forbids: a target that `reassignment_target_error` names invalid changing anything (Kafka
    answers INVALID_REPLICA_ASSIGNMENT and records nothing: KafkaController.processApiPartitionReassignment puts
    the error in the results and never passes the partition to maybeTriggerPartitionReassignment); a valid target
    whose brokers are all live, for a partition with no reassignment in progress, not being recorded as (current
    replicas, target) (Kafka records it: maybeTriggerPartitionReassignment -> onPartitionReassignment, which writes
    the target and the original replicas as adding/removing replicas). Allows: every other step."""
    if action[0] != "reassign":
        return None
    target = tuple(action[3])
    why = reassignment_target_error(target, prev.brokers)
    if why is not None:
        if nxt != prev:
            return (f"a reassignment to {list(target)} ({why}) was not refused: the reassignment recorded is "
                    f"{_fmt_reassignment(nxt.reassignment)}, replicas {list(nxt.replicas)}"
                    + ("" if nxt[:4] != prev[:4] else ", but the controller's state changed"))
        return None
    if prev.reassignment is None and all(b in prev.live for b in target):
        want = (tuple(prev.replicas), target)
        if nxt.reassignment != want:
            return (f"a valid reassignment of replicas {list(prev.replicas)} to {list(target)} was not recorded: the "
                    f"reassignment recorded is {_fmt_reassignment(nxt.reassignment)}")
    return None


def _fmt_reassignment(r) -> str:
    return "none" if r is None else f"{list(r[0])} -> {list(r[1])}"


REASSIGN_REQUEST = Invariant("reassignment-request-validated", "a reassignment to an empty, duplicate or unknown "
                             "replica list is refused and changes nothing; a valid one to live brokers is recorded",
                             check_reassignment_request, kind="step")
