"""offsets-world: a group committing offsets through the replicated __consumer_offsets partition of
the reference implementation, while brokers fail and leadership of that partition moves.

Why it exists: the abstract offsets model (model/offsets.py) states what a coordinator failover may
and may not lose; this world runs the real thing — `impl/replication/offsets_topic.py`
`OffsetsTopicWorld`: one `GroupCoordinator` per broker, appends that are acks=all produce requests on
the offsets partition, unload on resignation and load from the new leader's log — under the
interleavings the engines choose, judged by `acked-commit-durable` (invariants/offsets.py) and by the
replication invariants (invariants/replication.py) on the offsets partition itself.

The world: data brokers 1..N host `__consumer_offsets` partition 0 (RF min(3, N)); broker 0 is the
dedicated controller node (it hosts a coordinator that never leads). One consumer of group `g`
commits offsets of data partitions `d-0..` as a simple consumer (generation -1, Kafka's manual
assignment), like `commitSync`: at most one commit in flight, each commit of a partition one offset
higher than the previous. Actions:
  commit(p, offset, broker)   the client sends an OffsetCommit to the broker that leads the offsets
                              partition (as its FindCoordinator would answer); with `txn`, a
                              TxnOffsetCommit of its transaction (staged until the marker)
  end_txn(broker)             with `txn`: the transaction commits; its marker is written to the
                              offsets partition's leader (retried while it fails)
                              with `txn` and `mixed`: while the transaction's offset is staged, the client
                              may also commit a later offset outside it (a plain OffsetCommit): when the
                              marker settles the transaction, the later log append must stay the committed one
  join(broker)                with `joins`: a new consumer process (client.id consumer-g-1) sends its first JoinGroup
                              (no member id) to the offsets partition's leader; the MEMBER_ID_REQUIRED answer's
                              member id is recorded (the ghost `joins`), whichever broker handed it out
  load                        every newly elected leader finishes loading the partition
  ...and every cluster action of replication-world except `produce` (the coordinator is the only
  producer): replicate, isr_check, deliver/drop, advance, flush, crash/restart, controller steps.
Replies reach the client in the step that produces them; an answer with error NONE for a partition
is an *acknowledged* commit (the ghost `acked` of the view); a commit whose broker dies fails on the
client side (the connection is gone). One commit at a time is not only commitSync's shape: with two
in flight, Kafka itself answers NONE to a commit it then does not serve until the next reload
(docs/FINDINGS.md, coordinator), which is not what `acked-commit-durable` is about.

Invariants: `acked-commit-durable` over an `OffsetsView` (the stored leader's loaded coordinator,
whether it leads in the controller's current epoch, what it serves, what was acknowledged) and the
replication invariants of the offsets partition; with `joins`, `member-id-never-reused` (invariants/offsets.py)
over the member ids handed out: a coordinator that takes the group over must not hand out its predecessor's ids
(Kafka's are clientId-UUID). The reference numbers each broker's ids from a per-broker seed that a broker restart
does not change, so a bound with `joins`, a crash and a later election back onto the restarted broker finds it
repeating its own earlier ids (not in the gate: explore:offsets-world/member-ids has no preferred election). The
group invariants (generation monotonicity, state transitions) have nothing to judge here: the committing consumer
never joins and a joining process never gets past MEMBER_ID_REQUIRED, so no generation exists.

Behaviours (SUPPORTS): unclean-election and truncate-to-hw, both caught by the explorer (see
tests/test_offsets_world.py for the bounds). Defaults are the smallest bounds where the explorer is
exhaustive (~2,500 states). With `commits=2` the explorer found a coordinator bug in the then correct
implementation (an acknowledged commit not served after a reload: offsets loaded from the log were
numbered as if newer); fixed in impl/coordinator/loading.py, held by tests/test_coordinator_state.py
test_commit_after_a_reload_is_newer_than_every_loaded_offset.
"""
from __future__ import annotations

from kverify.impl.coordinator import CoordinatorConfig
from kverify.impl.coordinator.messages import (JoinGroupRequest, OffsetAndMetadata, OffsetCommitRequest,
                                               OffsetCommitResponse, TopicPartition, TxnOffsetCommitRequest,
                                               TxnOffsetCommitResponse)
from kverify.impl.coordinator.records import OffsetCommitRecord, TxnMarkerRecord
from kverify.impl.replication.messages import NONE as PRODUCE_OK
from kverify.impl.replication import behaviours as B
from kverify.impl.replication.invariant_view import epoch_view
from kverify.impl.replication.offsets_topic import OFFSETS_TOPIC, OffsetsTopicWorld
from kverify.impl.replication.replica import LEADER
from kverify.invariants import offsets as OI
from kverify.invariants import replication as RI
from kverify.invariants.core import Sometimes
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param
from kverify.model.worlds import KeyedState
from kverify.model.worlds import replication_checks as RC
from kverify.model.worlds import replication_world as RW

PARAMS = {
    "brokers": Param(3, "data brokers 1..N hosting __consumer_offsets-0 (2-5); broker 0 is the controller node", lo=2, hi=5),
    "rf": Param(0, "replication factor of the offsets partition (0 = min(3, brokers))", lo=0),
    "min_isr": Param(2, "min.insync.replicas of __consumer_offsets"),
    "init_isr": Param(0, "replicas in the initial ISR (0 = all); the others start down and come back as followers", lo=0),
    "partitions": Param(1, "data partitions d-0.. whose offsets the group commits (1-2)", lo=1, hi=2),
    "commits": Param(1, "offset commits the client may send", lo=0),
    "crashes": Param(1, "data-broker crashes allowed", lo=0),
    "lossy": Param(0, "of which lossy (guarded as in replication-world)", lo=0),
    "drops": Param(0, "controller-plane messages that may be lost", lo=0),
    "ticks": Param(0, "time jumps past replica.lag.time.max.ms", lo=0),
    "preferred": Param(0, "preferred replica elections of the offsets partition", lo=0),
    "failovers": Param(0, "crashes of the dedicated controller node", lo=0),
    "epochs": Param(3, "no new fault or elective election once the leader epoch reaches this"),
    "lag_ms": Param(1000, "replica.lag.time.max.ms"),
    "txn": Param(False, "the client commits in a transaction: TxnOffsetCommit (staged), then `end_txn` has the transaction "
                        "coordinator write the commit marker to the offsets partition (acks=all, retried until it "
                        "succeeds); the marker's acknowledgement settles the staged offset (complete_transaction) and "
                        "only then does the offset count as acknowledged"),
    "mixed": Param(False, "with txn: while the transaction's offset is staged, the client may also commit outside it "
                          "(a plain OffsetCommit of a later offset)"),
    "joins": Param(0, "new consumer processes of group g (all with client.id consumer-g-1, as each JVM's first "
                      "consumer names itself) that send their first JoinGroup (no member id) to the offsets "
                      "partition's leader; its MEMBER_ID_REQUIRED answer hands out a member id "
                      "(member-id-never-reused)", lo=0),
}

SUPPORTS = frozenset({B.UNCLEAN_ELECTION, B.TRUNCATE_TO_HW})

# Bounds at which the explorer reaches each supported behaviour on this world in seconds
# (tests/test_offsets_world.py; proposed to the zoo, which otherwise builds worlds with their defaults).
HUNT = {
    B.UNCLEAN_ELECTION: {"init_isr": 2, "crashes": 2},
    B.TRUNCATE_TO_HW: {"commits": 2},
}

GROUP = "g"
DATA_TOPIC = "d"
OTP = (OFFSETS_TOPIC, 0)
PRODUCER_ID = 1                   # the transactional producer's id (txn=true)
JOIN_CLIENT = f"consumer-{GROUP}-1"   # client.id of every joining process (joins > 0)
JOIN_CID = 1_000_000              # correlation ids of JoinGroups: JOIN_CID + joins left


def make(params: dict, behaviours: frozenset = frozenset()) -> "OffsetsWorld":
    return OffsetsWorld(params, behaviours)


# the cluster's parameters are replication-world's: its rules across them apply here too
SPEC = ModelSpec(name="offsets-world", make=make, params=PARAMS, supports=SUPPORTS,
                 check=lambda p: RW.check_params(dict(p, acks="-1")), hunt_params=HUNT)


class OWState(KeyedState):
    """One world state: an OffsetsTopicWorld never mutated once built, the client's ghost and budgets.

    client = (in-flight commit (cid, partition, offset, broker) or None, next offset per partition,
              highest acknowledged offset per partition).
    txn (with `txn`) = the open transaction: None, ("staged", partition, offset) once its TxnOffsetCommit was
              answered NONE, or ("marker", produce id, partition, offset, broker) while its marker is written.
    joins (with `joins`) = (JoinGroups left to send, ((broker, member id), ...) handed out to them so far, in order)."""

    __slots__ = ("world", "client", "budget", "txn", "joins", "_key", "_hash", "_view", "_rview", "_eview")

    def __init__(self, world: OffsetsTopicWorld, client: tuple, budget: tuple, txn=None, joins=(0, ())):
        self.world = world
        self.client = client
        self.budget = budget
        self.txn = txn
        self.joins = joins
        self._key = None
        self._hash = None
        self._view = None
        self._rview = None
        self._eview = None

    def _compute_key(self):
        w = self.world
        return (RW._key_of(w.cluster), tuple((b, c.snapshot()) for b, c in sorted(w.coordinators.items())),
                tuple(sorted(w._pending.items())), tuple(sorted(w._loads)), self.client[0], self.client[1:],
                self.budget, self.txn, self.joins)

    def __repr__(self):
        return f"OWState(client={self.client}, budget={self.budget})"


class OffsetsWorld(Protocol):
    name = "offsets-world"
    memo_safe = True      # equal states: same actions, equal successors, same verdicts (model/walk.py)

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        full = params                      # complete and validated by the registry (SPEC)
        self.params = dict(full)
        self.behaviours = frozenset(behaviours)
        self.np = int(full["partitions"])
        self.txn = bool(full["txn"])
        self.mixed = self.txn and bool(full["mixed"])
        self.njoins = int(full["joins"])
        # the cluster rules are replication-world's (same actions, budgets and guards)
        rparams = {k: full[k] for k in ("brokers", "rf", "min_isr", "init_isr", "crashes", "lossy", "drops", "ticks",
                                        "preferred", "failovers", "epochs", "lag_ms")}
        rparams.update(records=0, partitions=1, reassignments=0)
        self.rules = RW.ReplicationWorld(RW.SPEC.resolve(rparams), self.behaviours)
        self.n = self.rules.n
        self.data = tuple(TopicPartition(DATA_TOPIC, p) for p in range(self.np))
        self._invs = self._bind_invariants()
        self._init = None

    # --- the transition system --------------------------------------------------------------------------------
    def init_states(self):
        if self._init is None:
            r = self.rules
            ar = r.assignment[0]
            w = OffsetsTopicWorld(brokers=(RW.CTRL,) + r.data_brokers, partitions=1, replication_factor=r.rf,
                                  behaviours=self.behaviours, replication_config=r.config,
                                  coordinator_config=CoordinatorConfig(offsets_expiration_enabled=False),
                                  assignment={0: ar}, controller=RW.CTRL)
            late = ar[r.init_isr:] if r.init_isr else ()
            for b in late:
                w.run("crash", b)
            if late:
                w.run("handle_broker_changes")
                w.run("deliver_all")
                for b in late:
                    w.run("restart", b)
                w.run("handle_broker_changes")
                w.run("deliver_all")
            w.complete_loads()
            w.cluster.renumber_messages()
            budget = r.init_states()[0].budget[:RW.RECORDS] + (int(self.params["commits"]),) + \
                r.init_states()[0].budget[RW.RECORDS + 1:]
            self._init = [OWState(w, (None, (1,) * self.np, (0,) * self.np), budget, joins=(self.njoins, ()))]
        return self._init

    def actions(self, s: OWState):
        w = s.world
        out = []
        if s.client[0] is None and (s.txn is None or self.mixed and s.txn[0] == "staged") and s.budget[RW.RECORDS]:
            coord = w.coordinator_for(GROUP)
            if coord >= 0 and w.cluster.brokers[coord].alive:
                for p in range(self.np):
                    out.append(("commit", p, s.client[1][p], coord))
        if s.txn is not None and s.txn[0] == "staged":
            leader = w.coordinator_for(GROUP)
            if leader >= 0 and w.cluster.brokers[leader].alive:
                out.append(("end_txn", leader))
        if s.joins[0]:
            leader = w.coordinator_for(GROUP)
            if leader >= 0 and w.cluster.brokers[leader].alive:
                out.append(("join", leader))
        if w.loading():
            out.append(("load",))
        out.extend(self.rules.cluster_actions(w.cluster, s.budget, producers=False))
        return out

    def step(self, s: OWState, a: tuple) -> OWState:
        w = s.world.copy()
        inflight, nxt, acked = s.client
        txn = s.txn
        budget = s.budget
        joins = s.joins
        if a[0] == "join":
            # a new consumer process's first JoinGroup (v4+: no member id); MEMBER_ID_REQUIRED hands one out
            left, ids = joins
            cid = JOIN_CID + left
            req = JoinGroupRequest(GROUP, protocols=(("range", b""),), client_id=JOIN_CLIENT, correlation_id=cid)
            replies = w.handle(a[1], req)
            got = [(b, r.response.member_id) for b, r in replies if r.correlation_id == cid and r.response.member_id]
            joins = (left - 1, ids + tuple(got))
            replies = [(b, r) for b, r in replies if r.correlation_id != cid]
        elif a[0] == "commit":
            _n, p, offset, broker = a
            cid = s.budget[RW.RECORDS]            # distinct per commit: the budget counts down
            offsets = ((self.data[p], OffsetAndMetadata(offset)),)
            req = (TxnOffsetCommitRequest(f"txn-{PRODUCER_ID}", GROUP, PRODUCER_ID, offsets=offsets, correlation_id=cid)
                   if self.txn and txn is None else OffsetCommitRequest(GROUP, offsets=offsets, correlation_id=cid))
            inflight = (cid, p, offset, broker)
            nxt = nxt[:p] + (offset + 1,) + nxt[p + 1:]
            budget = budget[:RW.RECORDS] + (budget[RW.RECORDS] - 1,) + budget[RW.RECORDS + 1:]
            replies = w.handle(broker, req)
        elif a[0] == "load":
            replies = w.complete_loads()
        elif a[0] == "end_txn":
            # the transaction coordinator's WriteTxnMarkers to the offsets partition's leader (acks=all)
            _s, p, offset = txn
            pid = w.cluster.produce(OTP, (TxnMarkerRecord(PRODUCER_ID, True),), acks=-1, broker=a[1])
            txn = ("marker", pid, p, offset, a[1])
            replies = w.sync()
        else:
            budget = self.rules.apply_to(w.cluster, budget, a)
            replies = w.sync()
        for _b, reply in replies:
            if inflight is None or reply.correlation_id != inflight[0]:
                continue
            resp = reply.response
            if isinstance(resp, OffsetCommitResponse):
                _cid, p, offset, _broker = inflight
                if dict(resp.partition_errors).get(self.data[p]) == "NONE" and offset > acked[p]:
                    acked = acked[:p] + (offset,) + acked[p + 1:]
            elif isinstance(resp, TxnOffsetCommitResponse):
                _cid, p, offset, _broker = inflight
                if dict(resp.partition_errors).get(self.data[p]) == "NONE":
                    txn = ("staged", p, offset)
            inflight = None
        if txn is not None and txn[0] == "marker":
            txn, acked = self._marker_outcome(w, txn, acked)
        if inflight is not None and not w.cluster.brokers[inflight[3]].alive:
            inflight = None     # the connection died with the broker: the client sees the commit fail
        w.cluster.renumber_messages()
        return OWState(w, (inflight, nxt, acked), budget, txn, joins)

    @staticmethod
    def _marker_outcome(w: OffsetsTopicWorld, txn: tuple, acked: tuple):
        """The commit marker's produce finished? Written: the leader that wrote it settles the staged
        offsets (Kafka's onTransactionCompleted after the marker append) and the offset is acknowledged
        (EndTxn succeeded); refused or lost with its leader: back to staged (markers are retried)."""
        _m, pid, p, offset, broker = txn
        res = w.cluster.results[pid]
        if res.error is None:
            return txn, acked
        if res.error != PRODUCE_OK:
            return ("staged", p, offset), acked
        if w.cluster.brokers[broker].alive:
            w.coordinators[broker].complete_transaction(PRODUCER_ID, True, partitions=(OTP[1],))
        return None, acked[:p] + (max(offset, acked[p]),) + acked[p + 1:]

    # --- properties -------------------------------------------------------------------------------------------
    def offsets_view(self, s: OWState):
        v = s._view
        if v is None:
            w = s.world
            c = w.cluster
            st = c.store.states.get(OTP)
            coordinator, current, served = -1, False, (0,) * self.np
            if st is not None and st.leader >= 0 and c.brokers[st.leader].alive:
                coord = w.coordinators[st.leader]
                if 0 in coord.owned_partitions() and (st.leader, 0) not in w.loading():
                    coordinator = st.leader
                    r = c.replica(st.leader, OTP)
                    current = r is not None and r.role == LEADER and r.leader_epoch == st.leader_epoch
                    g = coord.group(GROUP)
                    if g is not None:
                        served = tuple(g.offsets[tp].offset if tp in g.offsets else 0 for tp in self.data)
            v = s._view = OI.OffsetsView(coordinator, current, served, s.client[2])
        return v

    def _bind_invariants(self) -> tuple:
        out = [OI.bind(self.offsets_view), OI.bind_ownership(self.owners_view)]
        if self.njoins:
            out.append(OI.bind_member_ids(lambda s: tuple(m for _b, m in s.joins[1])))
        out.extend(RI.bind(RI.ALL, self._repl_view, self._epoch_view))
        # the cluster's own properties (clock, controller writes, acks=all answers): model/worlds/replication_checks.py
        out.extend(RC.cluster_invariants(lambda s: s.world.cluster, lambda s, tp: self._repl_view(s).min_isr))
        return tuple(out)

    def owners_view(self, s: OWState) -> tuple:
        """Per live broker: (broker, its coordinator owns or loads the offsets partition, its replica leads it)."""
        w = s.world
        c = w.cluster
        out = []
        for b, coord in sorted(w.coordinators.items()):
            if c.brokers[b].alive:
                r = c.replica(b, OTP)
                owns = 0 in coord.owned_partitions() or 0 in coord.loading_partitions()
                out.append((b, owns, r is not None and r.role == LEADER))
        return tuple(out)

    def _repl_view(self, s: OWState):
        v = s._rview
        if v is None:
            v = s._rview = RW.view_of(s.world.cluster, OTP)
        return v

    def _epoch_view(self, s: OWState):
        v = s._eview
        if v is None:
            v = s._eview = epoch_view(s.world.cluster, OTP)
        return v

    def invariants(self):
        return self._invs

    def sometimes(self):
        props = [Sometimes("commit-acked", "an offset commit is acknowledged", lambda s: any(s.client[2]))]
        if int(self.params["crashes"]) and self.rules.rf > 1:
            props.append(Sometimes("acked-served-after-failover",
                                   "after the offsets partition moved, the new coordinator serves an acknowledged offset",
                                   self._served_after_move))
        if self.njoins > 1 and (int(self.params["preferred"]) or int(self.params["crashes"])) and self.rules.rf > 1:
            props.append(Sometimes("member-id-after-move",
                                   "two coordinators (the offsets partition moved between them) each hand out a "
                                   "member id",
                                   lambda s: len({b for b, _m in s.joins[1]}) > 1))
        return tuple(props)

    def _served_after_move(self, s: OWState) -> bool:
        v = self.offsets_view(s)
        st = s.world.cluster.store.states.get(OTP)
        return (v.current and st is not None and st.leader_epoch > 0
                and any(a and h >= a for h, a in zip(v.served, v.acked)))

    def is_fault(self, action) -> bool:
        return self.rules.is_fault(action)

    def liveness(self):
        """Eventually properties (invariants/liveness.py; model/search/liveness.py): an acknowledged commit is
        served again by a current, loaded coordinator while a live in-sync replica of the offsets partition
        exists, without a broker coming back."""
        from kverify.invariants import liveness as L

        def pending(s: OWState):
            return L.commit_pending(self.commit_view(s))
        return (L.Eventually(L.COMMIT_READABLE, L.COMMIT_READABLE_STATEMENT, pending,
                             excluded=lambda a: a[0] == "restart"),)

    def commit_view(self, s: OWState):
        """invariants/liveness.py `CommitView`: acknowledged offsets per data partition, what the current
        loaded coordinator serves (None: no current one), and whether a live in-sync replica exists."""
        from kverify.invariants.liveness import CommitView

        v = self.offsets_view(s)
        c = s.world.cluster
        st = c.store.states.get(OTP)
        can = st is not None and any(c.brokers[b].alive for b in st.isr)
        acked = tuple((p, a) for p, a in enumerate(v.acked) if a)
        readable = tuple(enumerate(v.served)) if v.current else None
        return CommitView(acked, readable, can)

    def is_quiescent_good(self, s: OWState) -> bool:
        """The offsets partition has a live leader (or no live ISR member) and no load is pending."""
        return RW.ReplicationWorld.cluster_good(s.world.cluster, (OTP,)) and not s.world.loading()

    # --- reports ----------------------------------------------------------------------------------------------
    def participants(self):
        return ("consumer",) + tuple(f"broker {b}" for b in self.rules.data_brokers) + ("controller",)

    def arrow(self, action):
        if action[0] == "commit":
            return ("consumer", RW.ReplicationWorld._who(action[3]))
        if action[0] == "end_txn":      # the transaction coordinator writes the marker on the consumer's behalf
            return ("consumer", RW.ReplicationWorld._who(action[1]))
        if action[0] == "join":
            return ("consumer", RW.ReplicationWorld._who(action[1]))
        if action[0] == "load":
            return None
        return self.rules.arrow(action)

    def describe(self, s: OWState) -> dict:
        out = self.rules.describe(RW.RWState(s.world.cluster, s.budget), label=_batch_label)
        v = self.offsets_view(s)
        inflight, nxt, acked = s.client
        txn = s.txn
        out["coordinator"] = {"broker": v.coordinator, "current": v.current,
                              "serves": {str(tp): o for tp, o in zip(self.data, v.served)},
                              "loading": [b for b, _p in s.world.loading()]}
        out["client"] = {"in_flight": None if inflight is None else {"partition": str(self.data[inflight[1]]),
                                                                     "offset": inflight[2]},
                         "acked": {str(tp): o for tp, o in zip(self.data, acked)},
                         **({"transaction": list(txn[:1] + txn[-3 if txn[0] == "marker" else 1:])} if txn else {}),
                         **({"joins_left": s.joins[0], "member_ids": [f"{m} (broker {b})" for b, m in s.joins[1]]}
                            if self.njoins else {})}
        budget = out.pop("budget")
        budget["commits"] = budget.pop("records")
        out["budget"] = budget
        return out


def _batch_label(batch) -> str:
    """One offsets-topic record (a coordinator append) in a few characters: `commit d-0=3`."""
    parts = []
    for rec in batch:
        if isinstance(rec, OffsetCommitRecord):
            parts.append(f"commit {rec.partition}={rec.offset}")
        else:
            parts.append(type(rec).__name__)
    return "[" + ", ".join(parts) + "]"
