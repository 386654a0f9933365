"""replication-world: the reference replicated cluster (impl/replication) as a Protocol.

Why it exists: the abstract replication model (model/replication.py) states the protocol's rules;
this world runs the *implementation* — brokers with real logs, epoch caches, follower fetch state,
the ZooKeeper-era controller and its store, every message on an explicit network — under the
interleavings the engines choose, and judges it with the very invariant objects of
`invariants/replication.py`, through repl's mapping `impl/replication/invariant_view.py`.

The world (defaults in PARAMS): data brokers 1..N host topic `t` (RF min(3, N)); broker 0 is a
dedicated controller node that hosts no replica (it can crash: a controller failover). Actions,
listed in this order:
  produce(t, p, record, acks, broker)     a producer writes the next record id to a broker that
                                          believes it leads (a deposed leader included)
  replicate(b, t, p, leader)              follower b's next request (OffsetsForLeaderEpoch while it
                                          truncates, else Fetch) delivered and answered in one step
                                          (`fetch="split"`: send_fetch + separate deliveries;
                                          `fetch="mixed"`: also fetch_request(b, t, p, leader), the
                                          request answered but the answer left in flight)
  isr_check(b, t, p)                      the leader's ISR task (offered only when it would act)
  deliver(id, kind, src, dst) / drop(...) one controller-plane message (LeaderAndIsr, AlterPartition,
                                          its response, StopReplica) delivered or lost
  advance(ms)                             time jumps by tick_ms (default: past replica.lag.time.max.ms)
  flush(b)                                a broker's logs and HW checkpoint reach the disk
  crash(b, lossy) / restart(b)            a broker process dies (lossy: its unflushed suffix is gone)
  elect_controller(b) / handle_broker_changes / elect_preferred(t, p) / reassign(t, p, target) /
  reassignment_step(t, p)                 the controller's decisions (reassign also offers targets Kafka refuses:
                                          empty, a broker twice, an unknown broker)
  expire_controller(b)                    the controller's session expires; its process runs on as a
  zombie_broker_changes(b)                zombie that may still process broker failures on its stale view
  controlled_shutdown(b) / stop(b)        a broker asks to shut down (its leaderships move, it leaves the
                                          ISRs), then stops cleanly (flush, then the process ends)
Budgets bound it: records, crashes, lossy crashes, drops, ticks, preferred elections, reassignments,
controller failovers, controlled shutdowns; and no new fault or elective election once a leader epoch reaches `epochs`
(recovery — restarts, broker-change handling, controller election — stays enabled).

Environment assumption for lossy crashes (why they are guarded): the invariants assume a committed
record survives on some ISR member (the reference states them "while lossy restarts < MinISR"; the
abstract model enforces it with KIP-966's ELR and unclean-shutdown detection). This ZK-era cluster
has neither, so a lossy crash of a partition's only in-sync copy makes even today's Kafka lose data
(KIP-966's motivation), and a broker that lost data is, until the controller processes its failure,
an ISR member (even an electable one) missing committed records. A lossy crash of broker b is
therefore offered only when the active controller is up to date and not on b, b is the stored leader of none of
its partitions and, for each of them, another stored-ISR member holds the whole committed prefix;
and the controller processes it in the same step (handle_broker_changes: the loss is detected at
once, as the abstract model's ZK watch does).

Bounds: the defaults are a bound the explorer finishes with no violation (issue #5): 2 data brokers
(RF 2, min ISR 2), one partition, one acks=all record, one broker crash, one controller failover
(crash or session expiry): 35,636 distinct states, 106,091 transitions, recoverability included
(28,570 states before a new controller took the brokers that died before its election out of
the ISRs: docs/FINDINGS.md, fifth session). `WALK_BOUNDS` (3 brokers, 2 partitions, every acks setting, a preferred election)
are the richer bounds seeded walks hunt in (stale-controller-accepted within seconds); the explorer
does not finish them. `HUNT` holds each behaviour's bounds (the zoo builds the world with them).

Behaviours (SUPPORTS), each caught on this world by an engine in seconds (tests/test_replication_world.py):
truncate-to-hw, no-maximal-isr, preferred-election-outside-isr (the explorer at partitions=1
failovers=0 init_isr=0), unclean-election (the same with crashes=2 init_isr=2), no-broker-epoch-check
(init_isr=2 lossy=1: an AlterPartition proposed before a follower's lossy restart is accepted with its
old broker epoch), expand-without-epoch-start (init_isr=2 fetch=mixed: one fetch whose answer is
still in flight when the expansion lands); stale-controller-accepted (walks at WALK_BOUNDS: a
LeaderAndIsr of the deposed controller's epoch, still in flight, is applied after the new
controller's) and no-fetch-epoch-fencing (walks with fetch=mixed records=2 acks=1: the deposed
leader's fetch answer is applied in the new epoch; the explorer needs depth 10, ~40,000 states with
crashes alone, 23,319 with a preferred election and min_isr=1: kverify/suite/providers.py
`explore:replication-world/stale-fetch`, in every profile). The
others are left to the abstract model `replication`, because:
- ofle-offset-only and skip-truncate-same-leader need 15-22 precise impl steps (leader changes
  and back, a dropped LeaderAndIsr, restarts and rejoins): beyond BFS at ~1,000-3,000 states/s and
  beyond random walks;
- hw-ignores-min-isr, reassignment-drops-old-replicas-early and isr-shrinks-to-leader-min-isr-1 (alone)
  only lose data when the last in-sync copy is lost on disk, which the lossy-crash guard above
  excludes because today's ZK-era Kafka loses data there too.

States are `RWState` values: the cluster inside is never mutated after the state is built (a step
copies it, copy-on-write per broker). Equality and hash use a canonical key in which message ids are
abstracted (in-flight messages form a multiset of (src, dst, body)) and finished produce results are
dropped: states that differ only in those behave identically. After every step the in-flight messages
are renumbered in that canonical order (`Cluster.renumber_messages`), so equal states also offer the
very same actions (message ids included): the walker may memoise by state (`memo_safe`).
"""
from __future__ import annotations

import pickle

from kverify.impl.replication import Cluster, ReplicationConfig, assign_replicas
from kverify.impl.replication.controller_ops import ControllerError
from kverify.impl.replication import behaviours as B
from kverify.impl.replication import elections
from kverify.impl.replication import steps
from kverify.impl.replication import messages as M
from kverify.impl.replication.invariant_view import epoch_view, repl_view
from kverify.impl.replication.replica import FOLLOWER, LEADER, OFFLINE
from kverify.invariants import replication as RI
from kverify.invariants.core import Invariant, Sometimes
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param
from kverify.model.worlds import KeyedState
from kverify.model.worlds import replication_checks as RC

PARAMS = {
    "brokers": Param(2, "data brokers 1..N (2-5); broker 0 is a dedicated controller node", lo=2, hi=5),
    "partitions": Param(1, "partitions of topic t (1-3)", lo=1, hi=3),
    "rf": Param(0, "replication factor (0 = min(3, brokers))", lo=0),
    "min_isr": Param(2, "min.insync.replicas"),
    "init_isr": Param(0, "replicas of each AR in the initial ISR (0 = all); the others were down at creation and "
                    "start as followers outside the ISR", lo=0),
    "records": Param(1, "records producers may write in total", lo=0),
    "acks": Param("-1", "acks settings a producer may use (comma separated, from -1, 0, 1)"),
    "crashes": Param(1, "data-broker crashes allowed", lo=0),
    "lossy": Param(0, "of which lossy (the unflushed suffix is lost); guarded, see the module docstring", lo=0),
    "drops": Param(0, "controller-plane messages that may be lost", lo=0),
    "ticks": Param(0, "time jumps of tick_ms (by default past replica.lag.time.max.ms)", lo=0),
    "preferred": Param(0, "preferred replica elections", lo=0),
    "reassignments": Param(0, "partition reassignments started", lo=0),
    "failovers": Param(1, "controller failovers: the controller node crashes, or its session expires (a zombie)", lo=0),
    "shutdowns": Param(0, "controlled shutdowns: a data broker asks the controller to move its leaderships away and "
                          "leave the ISRs, then stops cleanly (flush, stop) and may restart", lo=0),
    "epochs": Param(3, "no new fault or elective election once a leader epoch reaches this"),
    "fetch": Param("atomic", "atomic: a follower's request and its answer are one step; split: separate steps; "
                        "mixed: atomic, or the answer left in flight (one per follower)", choices=("atomic", "split", "mixed")),
    "lag_ms": Param(1000, "replica.lag.time.max.ms"),
    "tick_ms": Param(0, "how far one time jump moves the clock (0 = lag_ms + 1); a jump below lag_ms lets a follower "
                        "that caught up lately stay in the ISR while time passes", lo=0),
    "epoch_base": Param(0, "leader epochs start here, not at 0 (a partition with a long history: a real cluster's "
                           "epochs pass 256, where CPython's small-int cache ends); then every message is delivered "
                           "decoded, a copy as off the wire, so no two brokers share an epoch's int object; "
                           "`epochs` counts from the base", lo=0),
}

SUPPORTS = frozenset({
    B.TRUNCATE_TO_HW, B.NO_MAXIMAL_ISR, B.UNCLEAN_ELECTION, B.PREFERRED_OUTSIDE_ISR, B.STALE_CONTROLLER_ACCEPTED,
    B.NO_BROKER_EPOCH_CHECK, B.EXPAND_WITHOUT_EPOCH_START, B.NO_FETCH_EPOCH_FENCING, B.REASSIGNMENT_DROPS_EARLY,
})

# The bounds tuned for bug hunts by seeded walks (the defaults until the defaults became a bound the
# explorer finishes): 3 brokers, 2 partitions, every acks setting, a preferred election.
WALK_BOUNDS = {"brokers": 3, "partitions": 2, "acks": "-1,1,0", "preferred": 1}
# random walks in kverify verify: the richer bound (walks are cheap), with enough records, crashes and
# elections that a follower holds several leader epochs (a leader-epoch cache answering its first epoch
# makes one truncate committed records: caught by 80-step walks here, never at WALK_BOUNDS)
WALK_PARAMS = dict(WALK_BOUNDS, records=4, crashes=3, preferred=2)
# Bounds at which an engine reaches each supported behaviour on this world in seconds (the explorer,
# except stale-controller-accepted and no-fetch-epoch-fencing: seeded walks); `kverify zoo` builds the
# world with them (tests/test_replication_world.py).
_SINGLE = dict(WALK_BOUNDS, partitions=1, failovers=0, init_isr=0)
HUNT = {
    B.REASSIGNMENT_DROPS_EARLY: dict(_SINGLE, rf=2, reassignments=1, crashes=0, lossy=0, drops=0, preferred=0,
                                     records=1),
    B.TRUNCATE_TO_HW: dict(_SINGLE),
    B.NO_MAXIMAL_ISR: dict(_SINGLE),
    B.PREFERRED_OUTSIDE_ISR: dict(_SINGLE),
    B.UNCLEAN_ELECTION: dict(_SINGLE, crashes=2, init_isr=2),
    B.NO_BROKER_EPOCH_CHECK: dict(_SINGLE, init_isr=2, acks="-1", preferred=0, lossy=1),
    B.EXPAND_WITHOUT_EPOCH_START: dict(_SINGLE, init_isr=2, acks="-1", preferred=0, fetch="mixed"),
    B.STALE_CONTROLLER_ACCEPTED: dict(WALK_BOUNDS),
    # a fetch answer of the deposed leader, delivered after the new epoch began (seeded 40-step walks)
    B.NO_FETCH_EPOCH_FENCING: dict(_SINGLE, fetch="mixed", acks="1", records=2, preferred=0),
}

TOPIC = "t"
CTRL = 0                          # the dedicated controller node
FAULTS = frozenset({"crash", "drop", "expire_controller"})
CONTROLLER_PLANE = (M.LeaderAndIsr, M.StopReplica, M.AlterPartition, M.AlterPartitionResponse)
_KIND = {M.LeaderAndIsr: "LeaderAndIsr", M.StopReplica: "StopReplica", M.AlterPartition: "AlterPartition",
         M.AlterPartitionResponse: "AlterPartitionResponse", M.Fetch: "Fetch", M.FetchResponse: "FetchResponse",
         M.OffsetsForLeaderEpoch: "OffsetsForLeaderEpoch",
         M.OffsetsForLeaderEpochResponse: "OffsetsForLeaderEpochResponse"}
FROM_CONTROLLER = frozenset({"LeaderAndIsr", "StopReplica", "AlterPartitionResponse"})
FETCH_PLANE = frozenset({"Fetch", "FetchResponse", "OffsetsForLeaderEpoch", "OffsetsForLeaderEpochResponse"})

# budget tuple fields
RECORDS, CRASHES, LOSSY, DROPS, TICKS, PREFERRED, REASSIGNS, FAILOVERS, SHUTDOWNS = range(9)
BUDGET_NAMES = ("records", "crashes", "lossy", "drops", "ticks", "preferred", "reassignments", "failovers",
                "shutdowns")


def make(params: dict, behaviours: frozenset = frozenset()) -> "ReplicationWorld":
    return ReplicationWorld(params, behaviours)


def parse_acks(text) -> tuple:
    """`"-1,1"` -> (-1, 1); () when it is not a non-empty comma-separated list of -1, 0, 1."""
    try:
        acks = tuple(int(a) for a in str(text).split(",") if a.strip())
    except ValueError:
        return ()
    return acks if acks and all(a in (-1, 0, 1) for a in acks) else ()


def check_params(p: dict):
    """The rules across parameters (the registry reports the message as a one-line ModelError)."""
    rf = p["rf"] or min(3, p["brokers"])
    if rf > p["brokers"]:
        return "rf must be between 1 and brokers"
    if p["init_isr"] > rf:
        return "init_isr must be between 0 and rf"
    if not parse_acks(p["acks"]):
        return "acks must be a comma-separated list of -1, 0, 1"
    return None


SPEC = ModelSpec(name="replication-world", make=make, params=PARAMS, supports=SUPPORTS, check=check_params,
                 walk_params=WALK_PARAMS, hunt_params=HUNT)


def _rebase_epochs(c: Cluster, base: int) -> None:
    """`epoch_base`: the topic just created (leader epoch 0, its LeaderAndIsr still in flight) starts at leader epoch
    `base` instead: the stored partition states, the controller's copies and the announcements are rewritten, each
    epoch a fresh int object (as a decoded one would be)."""
    def up(epoch):
        return int(str(epoch + base))
    st = c.store
    st.states = {tp: ps._replace(leader_epoch=up(ps.leader_epoch)) for tp, ps in st.states.items()}
    for ctrl in c.controllers.values():
        ctrl.states = {tp: ps._replace(leader_epoch=up(ps.leader_epoch)) for tp, ps in ctrl.states.items()}
    c.net = {i: e._replace(body=e.body._replace(leader_epoch=up(e.body.leader_epoch)))
             if type(e.body) is M.LeaderAndIsr else e for i, e in c.net.items()}


def _key_of(c: Cluster) -> tuple:
    """Canonical form of a cluster: the snapshot with message ids abstracted and finished produce
    results dropped (neither influences any later step)."""
    return (c.now, c.store.snapshot(),
            tuple(b.key() for _, b in sorted(c.brokers.items())),
            tuple(x.snapshot() for _, x in sorted(c.controllers.items())),
            tuple(sorted((e.src, e.dst, _KIND[type(e.body)], e.body) for e in c.net.values())),
            tuple(sorted((pid, r) for pid, r in c.results.items() if r.error is None)),
            tuple(c.acked), tuple(c.acked_epochs),
            tuple(sorted((tp, tuple(v)) for tp, v in c.committed.items())))


def deleted_epochs(before: Cluster, after: Cluster, ghost: tuple) -> tuple:
    """`ghost` plus the last epochs of every replica a step deleted (StopReplica with delete)."""
    gone = []
    for b, br in before.brokers.items():
        now = after.brokers[b].replicas
        for tp, r in br.replicas.items():
            if tp not in now:
                gone.append((b, tp, r.epochs_applied))
    if not gone:
        return ghost
    keep = {(b, tp): e for b, tp, e in ghost}
    for b, tp, e in gone:
        keep[(b, tp)] = max(keep.get((b, tp), e), e)
    return tuple(sorted((b, tp, e) for (b, tp), e in keep.items()))


def epochs_with_ghosts(c: Cluster, tp, ghost: tuple):
    """repl's `epoch_view`, where a replica deleted by a reassignment keeps its last epochs (a
    re-created one counts from them): its epochs end with it, they do not go back to -1.
    (impl/replication/invariant_view.py's mapping does not do this; the world's stand-in until it does.)"""
    v = epoch_view(c, tp)
    if not ghost:
        return v
    order = sorted(c.brokers)
    reps = list(v.replicas)
    for b, gtp, (le, pe) in ghost:
        if gtp == tp:
            i = order.index(b)
            cur = reps[i]
            reps[i] = (max(cur[0], le), max(cur[1], pe), cur[2])
    return v._replace(replicas=tuple(reps))


def view_of(c: Cluster, tp):
    """repl's `repl_view`, except that a running replica stopped by StopReplica (role offline, it
    keeps its last `leader` field) believes in no leader: it neither leads nor follows.
    (impl/replication/invariant_view.py's mapping does not do this; the world's stand-in until it does.)"""
    v = repl_view(c, tp, cached=True)
    order = sorted(c.brokers)
    fix = None
    for i, b in enumerate(order):
        br = c.brokers[b]
        r = br.replicas.get(tp)
        if br.alive and r is not None and r.role == OFFLINE and v.replicas[i].leader != -1:
            fix = fix or list(v.replicas)
            fix[i] = fix[i]._replace(leader=-1)
    return v if fix is None else v._replace(replicas=tuple(fix))


def failover_view(c: Cluster, tp):
    """invariants/liveness.py `FailoverView` of partition tp: the stored leader, whether its process runs
    and acts as leader in the stored epoch, and the stored ISR members whose process runs."""
    from kverify.invariants.liveness import FailoverView

    st = c.store.states.get(tp)
    if st is None:
        return FailoverView(f"{tp[0]}-{tp[1]}", -1, False, False, ())
    br = c.brokers.get(st.leader)
    alive = br is not None and br.alive
    r = br.replicas.get(tp) if alive else None
    leading = r is not None and r.role == LEADER and r.leader_epoch == st.leader_epoch
    live_isr = tuple(b for b in st.isr if b in c.brokers and c.brokers[b].alive)
    return FailoverView(f"{tp[0]}-{tp[1]}", st.leader, alive, leading, live_isr)


def rejoin_view(c: Cluster, tp):
    """invariants/liveness.py `RejoinView` of partition tp: the stored decision, whether its leader acts on it, and
    what each running replica of the stored assignment (not shutting down) acts on (an offline one: nothing, -1)."""
    from kverify.invariants.liveness import RejoinView

    st = c.store.states.get(tp)
    if st is None:
        return RejoinView(f"{tp[0]}-{tp[1]}", False, -1, -1, (), ())
    led = failover_view(c, tp)
    reps = []
    for b in c.store.assignments.get(tp, ()):
        br = c.brokers.get(b)
        if br is None or not br.alive or br.shutting_down:
            continue
        r = br.replicas.get(tp)
        if r is None or r.role == OFFLINE:
            reps.append((b, -1, -1))
        else:
            reps.append((b, r.leader, r.leader_epoch))
    return RejoinView(f"{tp[0]}-{tp[1]}", led.leader >= 0 and led.leader_alive and led.leading, st.leader,
                      st.leader_epoch, tuple(st.isr), tuple(reps))


def reassign_view(c: Cluster, tp):
    """invariants/liveness.py `ReassignView` of partition tp (the store's record of its reassignment)."""
    from kverify.invariants.liveness import ReassignView

    entry = c.store.reassignments.get(tp)
    target = None if entry is None else tuple(entry[1])
    live = () if target is None else tuple(b for b in target if b in c.brokers and c.brokers[b].alive)
    return ReassignView(f"{tp[0]}-{tp[1]}", target, live)


class RWState(KeyedState):
    """One world state: a cluster never mutated after construction, plus the remaining budgets."""

    __slots__ = ("cluster", "budget", "ghost", "_key", "_hash", "_views", "_epochs")

    def __init__(self, cluster: Cluster, budget: tuple, ghost: tuple = ()):
        self.cluster = cluster
        self.budget = budget
        self.ghost = ghost          # ((broker, tp, (leader epoch, partition epoch)), ...) of deleted replicas
        self._key = None
        self._hash = None
        self._views = None
        self._epochs = None

    def _compute_key(self):
        return (_key_of(self.cluster), self.budget, self.ghost)

    def __repr__(self):
        return f"RWState(now={self.cluster.now}, budget={self.budget}, in_flight={len(self.cluster.net)})"


class ReplicationWorld(Protocol):
    name = "replication-world"
    memo_safe = True      # equal states: same actions, equal successors, same verdicts (model/walk.py)

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        full = params                      # complete and validated by the registry (SPEC)
        self.params = dict(full)
        self.behaviours = frozenset(behaviours)
        self.n = int(full["brokers"])
        self.np = int(full["partitions"])
        self.rf = int(full["rf"]) or min(3, self.n)
        self.min_isr = int(full["min_isr"])
        self.init_isr = int(full["init_isr"])
        self.acks = parse_acks(full["acks"])
        self.mode = full["fetch"]
        self.max_epoch = int(full["epochs"])
        self.epoch_base = int(full["epoch_base"])
        self.lag = int(full["lag_ms"])
        self.tick = int(full["tick_ms"]) or self.lag + 1
        self.data_brokers = tuple(range(1, self.n + 1))
        self.tps = tuple((TOPIC, p) for p in range(self.np))
        # partition p's AR: Kafka's rack-unaware placement with start index 0 and shift 0 (impl/replication/placement.py):
        # over the world's parameter range, rf consecutive data brokers starting at broker p+1
        self.assignment = assign_replicas(self.data_brokers, self.np, self.rf)
        self.config = ReplicationConfig(min_insync_replicas=self.min_isr, replica_lag_time_max_ms=self.lag)
        self._invs = self._bind_invariants()
        self._init = None

    # --- the transition system --------------------------------------------------------------------------------
    def init_states(self):
        if self._init is None:
            c = Cluster((CTRL,) + self.data_brokers, self.config, self.behaviours, controller=CTRL)
            late = sorted({b for ar in self.assignment.values() for b in ar[self.init_isr:]}) if self.init_isr else []
            for b in late:
                c.crash(b)
            if late:
                c.handle_broker_changes()
            c.create_topic(TOPIC, self.np, self.rf, assignment=self.assignment)
            if self.epoch_base:
                _rebase_epochs(c, self.epoch_base)
            c.deliver_all()
            for b in late:
                c.restart(b)
            if late:
                c.handle_broker_changes()
                c.deliver_all()
            c.renumber_messages()
            p = self.params
            budget = tuple(int(p[k]) for k in BUDGET_NAMES)
            self._init = [RWState(c, budget)]
        return self._init

    def actions(self, s: RWState):
        return self.cluster_actions(s.cluster, s.budget, producers=True)

    def cluster_actions(self, c: Cluster, bud: tuple, producers: bool = True) -> list:
        """Every enabled action of cluster `c` under budgets `bud`, in a fixed order (shared with
        offsets-world, whose producer is the group coordinator itself: `producers=False`)."""
        out = []
        brokers = c.brokers
        alive = [b for b in sorted(brokers) if brokers[b].alive]
        top_epoch = max((st.leader_epoch for st in c.store.states.values()), default=0)
        may_fault = top_epoch - self.epoch_base < self.max_epoch
        # producers
        if producers and bud[RECORDS]:
            value = int(self.params["records"]) - bud[RECORDS]
            for b in alive:
                for tp, r in sorted(brokers[b].replicas.items()):
                    if r.role == LEADER:
                        for a in self.acks:
                            out.append(("produce", tp[0], tp[1], value, a, b))
        # followers
        for b in alive:
            for tp, r in sorted(brokers[b].replicas.items()):
                if r.role == FOLLOWER and r.leader >= 0:
                    if self.mode == "split":
                        out.append(("send_fetch", b, tp[0], tp[1], r.leader))
                        continue
                    if r.leader in brokers and brokers[r.leader].alive:
                        out.append(("replicate", b, tp[0], tp[1], r.leader))
                    if self.mode == "mixed" and r.leader in brokers and brokers[r.leader].alive and not any(
                            e.body.tp == tp and e.dst == b and _KIND[type(e.body)] in FETCH_PLANE for e in c.net.values()):
                        out.append(("fetch_request", b, tp[0], tp[1], r.leader))
        # leaders' ISR task
        for b in alive:
            for tp, r in sorted(brokers[b].replicas.items()):
                if r.role == LEADER and self._isr_check_acts(c, b, r):
                    out.append(("isr_check", b, tp[0], tp[1]))
        # the network
        for mid, e in sorted(c.net.items()):
            kind = _KIND[type(e.body)]
            if self.mode == "atomic" and kind in FETCH_PLANE:
                continue
            out.append(("deliver", mid, kind, e.src, e.dst))
            if bud[DROPS]:
                out.append(("drop", mid, kind, e.src, e.dst))
        if bud[TICKS]:
            out.append(("advance", self.tick))
        # disks and processes
        if bud[LOSSY]:
            for b in alive:
                if any(r.log.flushed < r.log.leo or r.hw_checkpoint != r.hw for r in brokers[b].replicas.values()):
                    out.append(("flush", b))
        for b in sorted(brokers):
            if brokers[b].alive:
                if b == CTRL:
                    if bud[FAILOVERS] and may_fault:
                        out.append(("crash", b, False))
                elif bud[CRASHES] and may_fault:
                    out.append(("crash", b, False))
                    if bud[LOSSY] and self._lossy_allowed(c, b):
                        out.append(("crash", b, True))
            else:
                out.append(("restart", b))
        # a broker whose controlled shutdown was accepted stops cleanly (Kafka's KafkaServer.shutdown after
        # controlledShutdown; it stops even when leaderships remain: controlled.shutdown.max.retries spent)
        for b in alive:
            if brokers[b].shutting_down:
                out.append(("stop", b))
        # the controller
        ctrl = c.active_controller()
        out.extend(steps.controller_upkeep(c, ctrl, alive))
        if ctrl is not None and ctrl.active:
            if bud[FAILOVERS] and may_fault:
                out.append(("expire_controller", ctrl.broker))
            live = ctrl.live_set()
            for tp in sorted(ctrl.assignments):
                st = ctrl.states.get(tp)
                if st is None:
                    continue
                if bud[PREFERRED] and may_fault:
                    pick = elections.preferred(ctrl.assignments[tp], st.isr, live, c.settings.preferred_outside_isr)
                    if pick is not None and pick[0] != st.leader:
                        out.append(("elect_preferred", tp[0], tp[1]))
                if tp in ctrl.reassignments or tp in c.store.reassignments:
                    out.append(("reassignment_step", tp[0], tp[1]))
                elif bud[REASSIGNS] and may_fault and not c.store.reassignments:
                    for target in self._targets(ctrl.assignments[tp]) + self._invalid_targets(ctrl.assignments[tp]):
                        out.append(("reassign", tp[0], tp[1], target))
            if bud[SHUTDOWNS] and may_fault:
                for b in alive:
                    if b != CTRL and b in live and not brokers[b].shutting_down:
                        out.append(("controlled_shutdown", b))
        # zombie controllers: session expired, the process runs on and finishes processing broker
        # failures it learnt of (never registrations: its ZooKeeper watches died with its session)
        reg = c.store.brokers
        for b, z in sorted(c.controllers.items()):
            if z.active and b != c.store.controller_id and brokers[b].alive:
                failed = [x for x in z.live if x not in reg]
                if failed and all(x in z.live and z.live[x] == e for x, e in reg.items()):
                    out.append(("zombie_broker_changes", b))
        return out

    def _isr_check_acts(self, c, b, r) -> bool:
        """Would `Cluster.isr_check(b, tp)` do anything? (decided on a copy of the replica only)"""
        if r.pending_isr is not None:
            if r.alter_blocked:
                return False
            tp = r.tp
            return not any(type(e.body) is M.AlterPartition and e.src == b and e.body.tp == tp
                           or type(e.body) is M.AlterPartitionResponse and e.dst == b and e.body.tp == tp
                           for e in c.net.values())
        return r.role == LEADER and r.pending_isr is None and bool(r.lagging_isr_members(c.now, c.settings))

    def _lossy_allowed(self, c, b) -> bool:
        """See the module docstring: the controller is up to date (it will process this crash at
        once), b is the stored leader of none of its partitions, and each committed prefix b holds is
        also held by another stored-ISR member."""
        ctrl = c.active_controller()
        if ctrl is None or not ctrl.active or ctrl.broker == b or dict(ctrl.live) != c.store.brokers:
            return False
        for tp in sorted(c.brokers[b].replicas):
            st = c.store.states.get(tp)
            if st is None:
                continue
            if st.leader == b:
                return False
            committed = c.committed.get(tp, [])
            n = len(committed)
            if not n:
                continue
            ok = False
            for o in st.isr:
                if o == b:
                    continue
                r = c.replica(o, tp)
                if r is not None and [(e, v) for _off, e, v in r.log.records[:n]] == list(committed):
                    ok = True
                    break
            if not ok:
                return False
        return True

    def _targets(self, ar: tuple) -> list:
        """Reassignment targets offered: AR rotated (another preferred leader), and AR with its last
        or first replica replaced by a data broker outside it."""
        out = [ar[1:] + ar[:1]] if len(ar) > 1 else []
        for x in self.data_brokers:
            if x not in ar:
                out.append(ar[:-1] + (x,))
                if len(ar) > 1:
                    out.append((x,) + ar[1:])
        seen, uniq = set(), []
        for t in out:
            if t != ar and t not in seen:
                seen.add(t)
                uniq.append(t)
        return uniq

    def _invalid_targets(self, ar: tuple) -> list:
        """Reassignment targets Kafka refuses (INVALID_REPLICA_ASSIGNMENT; invariants/replication.py
        reassignment_target_error): an empty list, AR with its first replica listed again, and AR plus a broker id
        the cluster does not have (next to known ones, so a check of only some brokers misses it). A refused request
        changes nothing, not even the budget (which counts reassignments started): the step loops on its state."""
        return [(), ar + ar[:1], ar + (self.data_brokers[-1] + 1,)]

    def step(self, s: RWState, a: tuple) -> RWState:
        c = s.cluster.copy()
        budget = self.apply_to(c, s.budget, a)
        c.renumber_messages()
        return RWState(c, budget, deleted_epochs(s.cluster, c, s.ghost) if a[0] == "deliver" else s.ghost)

    def apply_to(self, c: Cluster, budget: tuple, a: tuple) -> tuple:
        """Take action `a` on cluster `c` (mutated); returns the remaining budgets. Every partition-state write the
        controller's decisions make meanwhile is recorded, in order, in `c.controller_writes` ((tp, state before,
        state after), ...): a fact for leaderless-write-drops-only-leader, which judges each write on its own (one
        step may hold several, e.g. a batch of broker failures)."""
        writes = []
        c._write = lambda ctrl, tp, decide: RC.recorded_write(c, writes, ctrl, tp, decide)
        if self.epoch_base:
            c._send = lambda src, dst, body: Cluster._send(c, src, dst, pickle.loads(pickle.dumps(body)))
        try:
            return self._apply(c, budget, a)
        finally:
            del c._write
            if self.epoch_base:
                del c._send
            c.controller_writes = tuple(writes)

    def _apply(self, c: Cluster, budget: tuple, a: tuple) -> tuple:
        bud = list(budget)
        name = a[0]
        if name == "produce":
            _n, topic, part, value, acks, broker = a
            c.produce((topic, part), value, acks=acks, broker=broker)
            bud[RECORDS] -= 1
        elif name == "replicate":
            c.replicate(a[1], (a[2], a[3]))
        elif name == "fetch_request":
            mid = c.send_fetch(a[1], (a[2], a[3]))
            if mid is not None:
                c.deliver(mid)
        elif name == "send_fetch":
            c.send_fetch(a[1], (a[2], a[3]))
        elif name == "isr_check":
            c.isr_check(a[1], (a[2], a[3]))
        elif name == "deliver":
            c.deliver(a[1])
        elif name == "drop":
            c.drop(a[1])
            bud[DROPS] -= 1
        elif name == "advance":
            c.advance(a[1])
            bud[TICKS] -= 1
        elif name == "flush":
            c.flush(a[1])
        elif name == "crash":
            c.crash(a[1], lossy=a[2])
            if a[1] == CTRL:
                bud[FAILOVERS] -= 1
            else:
                bud[CRASHES] -= 1
                if a[2]:
                    bud[LOSSY] -= 1
                    c.handle_broker_changes()   # detected at once (see the module docstring)
        elif name == "restart":
            c.restart(a[1])
        elif name == "controlled_shutdown":
            c.controlled_shutdown(a[1])
            bud[SHUTDOWNS] -= 1
        elif name == "stop":
            c.stop(a[1])
        elif name == "expire_controller":
            c.expire_controller_session(a[1])
            bud[FAILOVERS] -= 1
        elif name == "zombie_broker_changes":
            c.handle_broker_changes(controller=a[1])
        elif name == "elect_controller":
            c.elect_controller(a[1])
        elif name == "handle_broker_changes":
            c.handle_broker_changes()
        elif name == "elect_preferred":
            c.elect_preferred((a[1], a[2]))
            bud[PREFERRED] -= 1
        elif name == "reassign":
            try:
                c.reassign((a[1], a[2]), a[3])
                bud[REASSIGNS] -= 1
            except ControllerError:
                # an invalid target is answered INVALID_REPLICA_ASSIGNMENT (reassignment-request-validated judges
                # that nothing changed); any other refusal stays a finding of the step
                if RI.reassignment_target_error(tuple(a[3]), c.brokers) is None:
                    raise
        elif name == "reassignment_step":
            c.reassignment_step((a[1], a[2]))
        else:
            raise ValueError(f"replication-world: unknown action {name!r}")
        return tuple(bud)

    # --- properties -------------------------------------------------------------------------------------------
    def views(self, s: RWState) -> tuple:
        v = s._views
        if v is None:
            v = s._views = tuple(view_of(s.cluster, tp) for tp in self.tps)
        return v

    def epoch_views(self, s: RWState) -> tuple:
        v = s._epochs
        if v is None:
            v = s._epochs = tuple(epochs_with_ghosts(s.cluster, tp, s.ghost) for tp in self.tps)
        return v

    def _bind_invariants(self) -> tuple:
        """The shared objects of invariants/replication.py, each checked on every partition."""
        out = []
        for inv in RI.ALL:
            if inv.kind == "step":
                def check(s, a, t, f=inv.check):
                    for tp, pv, tv in zip(self.tps, self.epoch_views(s), self.epoch_views(t)):
                        msg = f(pv, a, tv)
                        if msg is not None:
                            return f"{tp[0]}-{tp[1]}: {msg}"
                    return None
            else:
                def check(s, f=inv.check):
                    for tp, v in zip(self.tps, self.views(s)):
                        msg = f(v)
                        if msg is not None:
                            return f"{tp[0]}-{tp[1]}: {msg}"
                    return None
            out.append(Invariant(inv.name, inv.statement, check, inv.kind, inv.broken_by))

        def reassign(s, a, t, f=RI.I_REASSIGN.check):
            # a step property over the metadata store's record of each partition (the controller's view
            # of reassignments); it holds trivially for a partition with no reassignment in progress
            st, nt = s.cluster.store, t.cluster.store
            if not st.reassignments:
                return None
            for tp in sorted(st.reassignments):
                ps, ns = st.states.get(tp), nt.states.get(tp)
                if ps is None or ns is None:
                    continue
                msg = f(RI.ReassignView(st.assignments[tp], ps.isr, st.reassignments[tp]), a,
                        RI.ReassignView(nt.assignments[tp], ns.isr, nt.reassignments.get(tp)))
                if msg is not None:
                    return f"{tp[0]}-{tp[1]}: {msg}"
            return None
        out.append(Invariant(RI.I_REASSIGN.name, RI.I_REASSIGN.statement, reassign, "step", RI.I_REASSIGN.broken_by))

        def distinct(s, f=RI.DISTINCT_REPLICAS.check):
            # the store's replica sets (placement at creation, reassignment targets)
            return f((f"{tp[0]}-{tp[1]}", ar) for tp, ar in sorted(s.cluster.store.assignments.items()))
        d = RI.DISTINCT_REPLICAS
        out.append(Invariant(d.name, d.statement, distinct, d.kind, d.broken_by))
        # properties of the cluster's clock, controller writes and acks=all answers (model/worlds/replication_checks.py)
        out.extend(RC.cluster_invariants(lambda s: s.cluster, lambda s, tp: self.views(s)[self.tps.index(tp)].min_isr))
        return tuple(out)

    def invariants(self):
        return self._invs

    def sometimes(self):
        props = []
        if int(self.params["records"]) and -1 in self.acks:
            props.append(Sometimes("acked-all", "a record is acknowledged to an acks=all producer",
                                   lambda s: bool(s.cluster.acked)))
        if int(self.params["records"]):
            props.append(Sometimes("committed", "a record is committed (below some leader's HW)",
                                   lambda s: any(s.cluster.committed.values())))
        if int(self.params["crashes"]) and self.rf > 1:
            props.append(Sometimes("leader-moved", "some partition is led in a leader epoch above 0 by a live broker",
                                   lambda s: self._leader_moved(s, self.epoch_base)))
        return tuple(props)

    @staticmethod
    def _leader_moved(s, base: int = 0) -> bool:
        c = s.cluster
        for tp, st in c.store.states.items():
            if st.leader_epoch > base and st.leader >= 0 and c.brokers[st.leader].alive:
                r = c.replica(st.leader, tp)
                if r is not None and r.role == LEADER and r.leader_epoch == st.leader_epoch:
                    return True
        return False

    def is_fault(self, action) -> bool:
        return action[0] in FAULTS

    def liveness(self):
        """Eventually properties (invariants/liveness.py), checked by model/search/liveness.py: a partition
        whose leader failed is led again by a live in-sync replica without any broker restarting; every running
        replica of a led partition follows its leader and rejoins the ISR (a restarted broker is told its leaders,
        the controller accepts the expansions); a started reassignment completes."""
        from kverify.invariants import liveness as L

        tps = self.tps

        def pending(s: RWState):
            return L.first_pending(L.failover_pending(failover_view(s.cluster, tp)) for tp in tps)
        def reassigning(s: RWState):
            c = s.cluster
            return L.first_pending(L.reassignment_pending(reassign_view(c, tp)) for tp in sorted(c.store.reassignments))
        def rejoining(s: RWState):
            return L.first_pending(L.rejoin_pending(rejoin_view(s.cluster, tp)) for tp in tps)
        restart = lambda a: a[0] == "restart"        # noqa: E731  (the failed node's return is not a fair move)
        def answering(s: RWState):
            c = s.cluster
            waiting = []
            for pid, res in sorted(c.results.items()):
                r = c.replica(res.broker, res.tp) if res.error is None and c.brokers[res.broker].alive else None
                if r is not None and r.role == LEADER:
                    waiting.append((f"{res.tp[0]}-{res.tp[1]}", pid, res.broker, res.offset, len(r.isr),
                                    self.views(s)[self.tps.index(res.tp)].min_isr))
            return L.acks_pending(waiting)
        props = [L.Eventually(L.LEADER_FAILOVER, L.LEADER_FAILOVER_STATEMENT, pending, excluded=restart),
                 L.Eventually(L.REPLICA_REJOINS, L.REPLICA_REJOINS_STATEMENT, rejoining, excluded=restart)]
        if int(self.params["records"]) and -1 in self.acks:
            props.append(L.Eventually(L.ACKS_ANSWERED, L.ACKS_ANSWERED_STATEMENT, answering, excluded=restart))
        if int(self.params["reassignments"]):
            props.append(L.Eventually(L.REASSIGNMENT_COMPLETES, L.REASSIGNMENT_COMPLETES_STATEMENT, reassigning,
                                      excluded=restart))
        return tuple(props)

    def is_quiescent_good(self, s: RWState) -> bool:
        """Every partition has a live stored leader, or no live ISR member could lead it (offline
        by design: a clean election has no candidate)."""
        return self.cluster_good(s.cluster, self.tps)

    @staticmethod
    def cluster_good(c: Cluster, tps) -> bool:
        for tp in tps:
            st = c.store.states.get(tp)
            if st is None:
                return False
            if st.leader >= 0 and c.brokers[st.leader].alive:
                continue
            if any(c.brokers[b].alive for b in st.isr):
                return False
        return True

    # --- reports ----------------------------------------------------------------------------------------------
    def participants(self):
        return ("producer",) + tuple(f"broker {b}" for b in self.data_brokers) + ("controller",)

    @staticmethod
    def _who(b: int) -> str:
        return "controller" if b == CTRL else f"broker {b}"

    def arrow(self, action):
        name = action[0]
        if name == "produce":
            return ("producer", self._who(action[5]))
        if name in ("replicate", "send_fetch", "fetch_request"):
            return (self._who(action[1]), self._who(action[4]))
        if name in ("deliver", "drop"):
            kind, src, dst = action[2], action[3], action[4]
            s = "controller" if kind in FROM_CONTROLLER else self._who(src)
            d = "controller" if kind == "AlterPartition" else self._who(dst)
            return (s, d)
        if name in ("isr_check", "flush", "crash", "restart", "stop"):
            who = self._who(action[1])
            return (who, who)
        if name in ("elect_controller", "expire_controller", "zombie_broker_changes"):
            return ("controller", "controller")
        if name in ("handle_broker_changes", "elect_preferred", "reassign", "reassignment_step", "advance",
                    "controlled_shutdown"):
            return ("controller", "controller")
        return None

    def describe(self, s: RWState, label=str) -> dict:
        """Brokers with their replicas (log as value@epoch, HW, leader, epochs, ISR when leading), the
        stored partition states, acked records, in-flight messages and budgets. `label` renders a
        record's value (offsets-world's values are coordinator record batches)."""
        c = s.cluster
        st = c.store
        brokers = {}
        for b, br in sorted(c.brokers.items()):
            reps = {}
            for tp, r in sorted(br.replicas.items()):
                reps[f"{tp[0]}-{tp[1]}"] = {
                    "role": r.role if br.alive else "down", "leader": r.leader, "leader_epoch": r.leader_epoch,
                    "partition_epoch": r.partition_epoch,
                    "log": [f"{label(v)}@e{e}" for _o, e, v in r.log.records], "hw": r.hw, "flushed": r.log.flushed,
                    **({"isr": list(r.isr), "pending_isr": None if r.pending_isr is None else list(r.pending_isr)}
                       if r.role == LEADER else {})}
            brokers[self._who(b)] = {"alive": br.alive, "broker_epoch": br.epoch, "replicas": reps}
        partitions = {}
        for tp in sorted(st.assignments):
            ps = st.states.get(tp)
            partitions[f"{tp[0]}-{tp[1]}"] = {
                "replicas": list(st.assignments[tp]), "leader": None if ps is None else ps.leader,
                "leader_epoch": None if ps is None else ps.leader_epoch, "isr": None if ps is None else list(ps.isr),
                "partition_epoch": None if ps is None else ps.version,
                "reassignment": None if tp not in st.reassignments else [list(x) for x in st.reassignments[tp]],
                "acked": [f"{label(v)}@{o}" for atp, o, v in c.acked if atp == tp],
                "true_hw": c.true_hw.get(tp, 0)}
        net = [f"{self._who(e.src)}->{self._who(e.dst)} {_KIND[type(e.body)]}#{mid}" for mid, e in sorted(c.net.items())]
        names = BUDGET_NAMES
        return {"now_ms": c.now, "controller": st.controller_id, "controller_epoch": st.controller_epoch,
                "partitions": partitions, "brokers": brokers, "in_flight": net,
                "budget": dict(zip(names, s.budget))}
