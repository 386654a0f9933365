"""A replicated Kafka cluster as one deterministic value: brokers, the metadata store, controllers,
replicas, the network of in-flight messages, and the history needed to judge durability.

Every step is an explicit method call (produce, send a follower's next request, deliver or drop one
message, run a leader's ISR check, advance time, crash/restart a broker, a controller action), so a
model checker can interleave and drop anything. `copy()` is hand-written and fast; `snapshot()` and
`describe()` are plain hashable values.
"""
from __future__ import annotations

from typing import NamedTuple

from kverify.impl.replication import messages as M
from kverify.impl.replication.config import ReplicationConfig, Settings
from kverify.impl.replication.controller import Store
from kverify.impl.replication.controller_ops import ControllerError, ControllerOps
from kverify.impl.replication.replica import FOLLOWER, LEADER, Replica


def _message_order(e: M.Envelope) -> tuple:
    return (e.src, e.dst, type(e.body).__name__, e.body)


class Broker:
    __slots__ = ("id", "alive", "epoch", "shutting_down", "controller_epoch_seen", "ctrl_epoch_applied", "replicas",
                 "cache")

    def __init__(self, bid: int, epoch: int):
        self.id = bid
        self.alive = True
        self.epoch = epoch
        self.shutting_down = False
        self.controller_epoch_seen = 0   # in memory: the fence against older controllers
        self.ctrl_epoch_applied = 0      # controller epoch of the last request applied (kept across restarts)
        self.replicas: dict[tuple, Replica] = {}
        # values derived from this broker (its key, invariant views), emptied whenever the cluster
        # writes to it (`Cluster._own`); only for readers that never write behind the cluster's back
        self.cache: dict = {}

    def key(self) -> tuple:
        """The broker's snapshot, replicas in partition order (cached)."""
        k = self.cache.get("key")
        if k is None:
            k = self.cache["key"] = (self.id, self.alive, self.epoch, self.shutting_down, self.controller_epoch_seen,
                                     self.ctrl_epoch_applied,
                                     tuple(r.snapshot() for _, r in sorted(self.replicas.items())))
        return k

    def copy(self) -> "Broker":
        b = Broker.__new__(Broker)
        b.id, b.alive, b.epoch = self.id, self.alive, self.epoch
        b.shutting_down, b.controller_epoch_seen = self.shutting_down, self.controller_epoch_seen
        b.ctrl_epoch_applied = self.ctrl_epoch_applied
        b.replicas = {tp: r.copy() for tp, r in self.replicas.items()}
        b.cache = {}
        return b


class ProduceResult(NamedTuple):
    tp: tuple
    value: object
    acks: int
    broker: int
    offset: int
    error: str | None   # None while an acks=all request waits for the high watermark


class ReplicaView(NamedTuple):
    broker: int
    tp: tuple
    role: str
    leader: int
    leader_epoch: int
    partition_epoch: int
    isr: tuple
    maximal_isr: tuple
    records: tuple          # ((offset, epoch, value), ...)
    epoch_cache: tuple      # ((epoch, start offset), ...)
    leo: int
    hw: int
    flushed: int
    leso: int


class PartitionView(NamedTuple):
    tp: tuple
    replicas: tuple
    leader: int
    leader_epoch: int
    isr: tuple
    partition_epoch: int
    controller_epoch: int
    reassignment: tuple | None   # (original, target) while one is in progress


class BrokerView(NamedTuple):
    broker: int
    alive: bool
    registered: bool
    fenced: bool            # registered but not yet processed by the active controller
    shutting_down: bool
    broker_epoch: int
    controller_epoch_seen: int


class ClusterView(NamedTuple):
    now: int
    controller: int
    controller_epoch: int
    brokers: tuple
    partitions: tuple
    replicas: tuple
    acked: tuple            # ((tp, offset, value), ...) acks=all successes
    true_hw: tuple          # ((tp, highest HW any leader exposed), ...)
    consumed: tuple         # ((tp, offset, value), ...) records a consumer read below a leader's HW
    in_flight: int


class Cluster(ControllerOps):
    def __init__(self, brokers=(1, 2, 3), config: ReplicationConfig | None = None, behaviours=frozenset(),
                 controller: int | None = None):
        self.settings = Settings(config or ReplicationConfig(), behaviours)
        self.now = 0
        self.store = Store()
        self.store.stale_writes_accepted = self.settings.stale_controller_accepted
        self._next_epoch = 1
        self.brokers: dict[int, Broker] = {}
        self._shared: set = set()   # brokers whose object another cluster (a copy) also holds
        for bid in sorted(brokers):
            self.brokers[bid] = Broker(bid, self._next_epoch)
            self.store.brokers[bid] = self._next_epoch
            self._next_epoch += 1
        self.controllers = {}
        self.net: dict[int, M.Envelope] = {}
        self._next_msg = 1
        self._next_pid = 1
        self.results: dict[int, ProduceResult] = {}
        self.acked: list[tuple] = []
        self.acked_epochs: list[int] = []        # leader epoch of each acked record, aligned with `acked`
        self.true_hw: dict[tuple, int] = {}
        self.committed: dict[tuple, list] = {}   # tp -> [(epoch, value)] the longest prefix a leader exposed
        self.consumed: dict[tuple, dict[int, object]] = {}
        self.listeners = []        # callables(event, broker, tp) for leadership changes (offsets topic)
        if brokers:
            self.elect_controller(sorted(brokers)[0] if controller is None else controller)

    # ================================================================ value semantics
    def copy(self) -> "Cluster":
        """An independent copy. Brokers (with their replicas) are copied on write: both clusters hold
        the same Broker objects until one of them writes to a broker, which `_own` copies first."""
        c = Cluster.__new__(Cluster)
        c.settings = self.settings
        c.now = self.now
        c.store = self.store.copy()
        c._next_epoch = self._next_epoch
        c.brokers = dict(self.brokers)
        self._shared = set(self.brokers)
        c._shared = set(self.brokers)
        c.controllers = {k: v.copy() for k, v in self.controllers.items()}
        c.net = dict(self.net)
        c._next_msg = self._next_msg
        c._next_pid = self._next_pid
        c.results = dict(self.results)
        c.acked = list(self.acked)
        c.acked_epochs = list(self.acked_epochs)
        c.true_hw = dict(self.true_hw)
        c.committed = {k: list(v) for k, v in self.committed.items()}
        c.consumed = {k: dict(v) for k, v in self.consumed.items()}
        c.listeners = []
        return c

    def snapshot(self) -> tuple:
        """Equal snapshots <=> equal observable state (message ids included)."""
        return (self.now, self.store.snapshot(),
                tuple((b.id, b.alive, b.epoch, b.shutting_down, b.controller_epoch_seen, b.ctrl_epoch_applied,
                       tuple(r.snapshot() for _, r in sorted(b.replicas.items())))
                      for _, b in sorted(self.brokers.items())),
                tuple(c.snapshot() for _, c in sorted(self.controllers.items())),
                tuple(sorted(self.net.items())),
                tuple(self.results.items()), tuple(self.acked),   # results: ids ascend in insertion order
                tuple(self.acked_epochs), tuple(sorted(self.true_hw.items())),
                tuple(sorted((tp, tuple(v)) for tp, v in self.committed.items())),
                tuple(sorted((tp, tuple(sorted(d.items()))) for tp, d in self.consumed.items())))

    def describe(self) -> ClusterView:
        """Read-only, plain, hashable description of every replica and of the controller state."""
        st = self.store
        active = self.controllers.get(st.controller_id)
        brokers = tuple(
            BrokerView(b.id, b.alive, b.id in st.brokers,
                       b.id in st.brokers and (active is None or active.live.get(b.id) != st.brokers[b.id]),
                       b.shutting_down, b.epoch, b.controller_epoch_seen)
            for _, b in sorted(self.brokers.items()))
        parts = []
        for tp in sorted(st.assignments):
            s = st.states.get(tp)
            if s is None:
                continue
            parts.append(PartitionView(tp, st.assignments[tp], s.leader, s.leader_epoch, s.isr, s.version,
                                       s.controller_epoch, st.reassignments.get(tp)))
        reps = []
        for _, b in sorted(self.brokers.items()):
            for tp, r in sorted(b.replicas.items()):
                reps.append(ReplicaView(b.id, tp, r.role if b.alive else "down", r.leader, r.leader_epoch,
                                        r.partition_epoch, r.isr, r.maximal_isr(self.settings),
                                        tuple(r.log.records), tuple(r.log.epochs), r.log.leo, r.hw,
                                        r.log.flushed, r.leso))
        consumed = tuple((tp, off, v) for tp in sorted(self.consumed) for off, v in sorted(self.consumed[tp].items()))
        return ClusterView(self.now, st.controller_id, st.controller_epoch, brokers, tuple(parts), tuple(reps),
                           tuple(self.acked), tuple(sorted(self.true_hw.items())), consumed, len(self.net))

    def _own(self, broker: int) -> Broker:
        """The broker, ready to be written to: copied first if another cluster holds it too. Every
        write to a broker or its replicas goes through here (it empties `Broker.cache`)."""
        b = self.brokers[broker]
        if broker in self._shared:
            self._shared.discard(broker)
            b = self.brokers[broker] = b.copy()
        elif b.cache:
            b.cache = {}
        return b

    # ================================================================ lookups
    def replica(self, broker: int, tp) -> Replica | None:
        b = self.brokers.get(broker)
        return None if b is None else b.replicas.get(tp)

    def state(self, tp):
        return self.store.states.get(tp)

    def leader_of(self, tp) -> int:
        s = self.store.states.get(tp)
        return -1 if s is None else s.leader

    def active_controller(self):
        return self.controllers.get(self.store.controller_id)

    # ================================================================ network
    def _send(self, src: int, dst: int, body) -> int:
        mid = self._next_msg
        self._next_msg += 1
        self.net[mid] = M.Envelope(mid, src, dst, body)
        return mid

    def renumber_messages(self) -> None:
        """Give the in-flight messages ids 1..k in a canonical order (source, destination, kind, body)
        and continue numbering from k+1. Two clusters that differ only in message ids then become
        identical, ids included (a model checker's state is then its snapshot); the messages, their
        contents and what each delivery does are unchanged."""
        net = self.net
        if not net:
            self._next_msg = 1
            return
        order = sorted(net.values(), key=_message_order)
        self.net = {i: M.Envelope(i, e.src, e.dst, e.body) for i, e in enumerate(order, 1)}
        self._next_msg = len(order) + 1

    def pending(self, dst: int | None = None, kind: type | None = None) -> list:
        """In-flight messages in id order, optionally filtered by destination and body type."""
        return [e for _, e in sorted(self.net.items())
                if (dst is None or e.dst == dst) and (kind is None or type(e.body) is kind)]

    def drop(self, msg_id: int) -> None:
        if msg_id not in self.net:
            raise KeyError(f"no in-flight message {msg_id}")
        del self.net[msg_id]

    def deliver(self, msg_id: int) -> None:
        env = self.net.pop(msg_id, None)
        if env is None:
            raise KeyError(f"no in-flight message {msg_id}")
        b = self.brokers.get(env.dst)
        if b is None or not b.alive:
            return
        b = self._own(env.dst)
        body = env.body
        t = type(body)
        if t is M.Fetch:
            self._on_fetch(b, env.src, body)
        elif t is M.FetchResponse:
            r = b.replicas.get(body.tp)
            if r is not None:
                r.handle_fetch_response(body, self.settings)
        elif t is M.LeaderAndIsr:
            self._on_leader_and_isr(b, body)
        elif t is M.OffsetsForLeaderEpoch:
            r = b.replicas.get(body.tp)
            if r is None:
                resp = M.OffsetsForLeaderEpochResponse(body.tp, M.NOT_LEADER_OR_FOLLOWER,
                                                       body.current_leader_epoch, -1, -1)
            else:
                resp = r.handle_offsets_for_leader_epoch(body, self.settings)
            self._send(b.id, env.src, resp)
        elif t is M.OffsetsForLeaderEpochResponse:
            r = b.replicas.get(body.tp)
            if r is not None:
                r.handle_offsets_response(body, self.settings)
        elif t is M.AlterPartition:
            self._on_alter_partition(b.id, env.src, body)
        elif t is M.AlterPartitionResponse:
            r = b.replicas.get(body.tp)
            if r is not None:
                self._complete(b.id, r.handle_alter_response(body, self.settings))
                self._note_hw(r)
        elif t is M.StopReplica:
            self._on_stop_replica(b, body)
        else:  # pragma: no cover - every body type is listed above
            raise TypeError(f"unknown message {t.__name__}")

    def deliver_all(self, max_messages: int = 10000) -> int:
        """Deliver in id order until nothing is in flight (messages created meanwhile included)."""
        n = 0
        while self.net and n < max_messages:
            self.deliver(min(self.net))
            n += 1
        return n

    # ================================================================ broker-side handlers
    def _on_leader_and_isr(self, b: Broker, msg: M.LeaderAndIsr) -> None:
        if not self._accept_controller(b, msg.controller_epoch):
            return  # STALE_CONTROLLER_EPOCH
        if b.id not in msg.replicas:
            return
        r = b.replicas.get(msg.tp)
        if r is None:
            r = b.replicas[msg.tp] = Replica(b.id, msg.tp, b.epoch)
        if msg.leader_epoch <= r.leader_epoch:
            return  # stale or duplicate leader epoch
        b.ctrl_epoch_applied = msg.controller_epoch
        was_leader = r.role == LEADER
        if msg.leader == b.id:
            self._complete(b.id, r.become_leader(msg, self.now, self.settings))
            self._note_hw(r)
            if not was_leader:   # Kafka reports only partitions that newly became leader
                self._notify("leader", b.id, msg.tp)
        else:
            self._complete(b.id, r.become_follower(msg, self.settings))
            if was_leader:
                self._notify("resigned", b.id, msg.tp)
            self._notify("follower", b.id, msg.tp)

    def _accept_controller(self, b: Broker, controller_epoch: int) -> bool:
        """KAFKA-1188: refuse requests of a controller older than the newest one seen. With
        stale-controller-accepted the broker just adopts the request's epoch, as before the fix."""
        if self.settings.stale_controller_accepted:
            b.controller_epoch_seen = controller_epoch
            return True
        if controller_epoch < b.controller_epoch_seen:
            return False
        b.controller_epoch_seen = controller_epoch
        return True

    def _on_stop_replica(self, b: Broker, msg: M.StopReplica) -> None:
        if not self._accept_controller(b, msg.controller_epoch):
            return
        r = b.replicas.get(msg.tp)
        if r is None:
            return
        b.ctrl_epoch_applied = msg.controller_epoch
        was_leader = r.role == LEADER
        self._complete(b.id, r.become_offline())
        if was_leader:
            self._notify("resigned", b.id, msg.tp)
        if msg.delete:
            del b.replicas[msg.tp]

    def _eligible(self, rid: int) -> bool:
        """ISR eligibility as the leader sees it: alive, registered, not fenced (its registration
        processed by the active controller), not in controlled shutdown (KIP-841)."""
        b = self.brokers.get(rid)
        if b is None or not b.alive or b.shutting_down or rid not in self.store.brokers:
            return False
        active = self.controllers.get(self.store.controller_id)
        return active is None or active.live.get(rid) == self.store.brokers[rid]

    def _on_fetch(self, b: Broker, src: int, req: M.Fetch) -> None:
        r = b.replicas.get(req.tp)
        if r is None:
            self._send(b.id, src, M.FetchResponse(req.tp, M.NOT_LEADER_OR_FOLLOWER, req.fetch_offset,
                                                  req.current_leader_epoch, (), 0))
            return
        resp, proposal, done = r.handle_fetch(req, self.now, self.settings, self._eligible)
        self._send(b.id, src, resp)
        if proposal is not None:
            self._propose_isr(b, r, proposal)
        self._complete(b.id, done)
        self._note_hw(r)

    def _propose_isr(self, b: Broker, r: Replica, proposal) -> None:
        if self.settings.config.isr_writes_by_leader:
            res, st = self.store.leader_write_isr(r.tp, b.id, r.leader_epoch, proposal, r.partition_epoch)
            done = r.apply_isr_write(st if res == "OK" else None, self.settings)
            self._complete(b.id, done)
            self._note_hw(r)
            return
        ctrl_id = self.store.controller_id
        if ctrl_id < 0:
            # No controller to ask: keep the proposal pending (the maximal ISR still counts for the
            # HW and acks, as Kafka's AlterPartitionManager keeps retrying until a controller answers);
            # the leader's ISR task re-sends it once a controller exists.
            return
        body = M.AlterPartition(b.id, r.tp, r.leader_epoch, r.partition_epoch,
                                tuple((m, r.follower_broker_epoch(m)) for m in proposal))
        self._send(b.id, ctrl_id, body)

    # ================================================================ producer / consumer
    def produce(self, tp, value, acks: int = -1, broker: int | None = None) -> int:
        """Send a produce request to `broker` (default: the leader the store names). Returns its id;
        the outcome is in `results[id]` (error None while an acks=all request waits)."""
        pid = self._next_pid
        self._next_pid += 1
        target = self.leader_of(tp) if broker is None else broker
        if acks not in (-1, 0, 1):
            self.results[pid] = ProduceResult(tp, value, acks, target, -1, M.INVALID_REQUIRED_ACKS)
            return pid
        b = self.brokers.get(target)
        r = None if b is None or not b.alive else b.replicas.get(tp)
        if r is None:
            self.results[pid] = ProduceResult(tp, value, acks, target, -1, M.NOT_LEADER_OR_FOLLOWER)
            return pid
        r = self._own(target).replicas[tp]
        err, off, done = r.append_as_leader(value, acks, pid, self.settings)
        self.results[pid] = ProduceResult(tp, value, acks, target, off, err)
        self._complete(target, done)
        self._note_hw(r)
        return pid

    def _complete(self, broker: int, done) -> None:
        for pid, err in done:
            old = self.results.get(pid)
            if old is None or old.error is not None:
                continue
            self.results[pid] = old._replace(error=err)
            if err == M.NONE and old.acks == -1:
                self.acked.append((old.tp, old.offset, old.value))
                r = self.replica(broker, old.tp)
                recs = r.log.records if r is not None else ()
                self.acked_epochs.append(recs[old.offset][1] if old.offset < len(recs) else -1)

    def _note_hw(self, r: Replica) -> None:
        if r.role == LEADER and r.hw > self.true_hw.get(r.tp, 0):
            self.true_hw[r.tp] = r.hw
            seen = self.committed.setdefault(r.tp, [])
            seen.extend((e, v) for _off, e, v in r.log.records[len(seen):r.hw])

    def consume(self, tp, broker: int | None = None) -> tuple:
        """A consumer reads every record below the HW of `broker` (default: the stored leader)."""
        target = self.leader_of(tp) if broker is None else broker
        r = self.replica(target, tp)
        if r is None or r.role != LEADER or not self.brokers[target].alive:
            return ()
        recs = r.log.read(0, r.hw)
        seen = self.consumed.setdefault(tp, {})
        for off, _epoch, value in recs:
            seen.setdefault(off, value)
        return recs

    # ================================================================ follower and leader steps
    def send_fetch(self, broker: int, tp) -> int | None:
        """The follower sends its next request (OffsetsForLeaderEpoch while truncating, else Fetch)."""
        b = self.brokers.get(broker)
        if b is None or not b.alive:
            return None
        r = b.replicas.get(tp)
        if r is None:
            return None
        r = self._own(broker).replicas[tp]
        body = r.next_request()
        if body is None:
            return None
        return self._send(broker, r.leader, body)

    def replicate(self, broker: int, tp) -> bool:
        """send_fetch, deliver the request, deliver the response. True if a round trip happened."""
        mid = self.send_fetch(broker, tp)
        if mid is None:
            return False
        before = self._next_msg
        self.deliver(mid)
        replies = [m for m in self.net if m >= before and self.net[m].dst == broker]
        for m in replies:
            self.deliver(m)
        return bool(replies)

    def isr_check(self, broker: int, tp) -> bool:
        """The leader's periodic ISR task: retry a lost AlterPartition, or propose a shrink."""
        b = self.brokers.get(broker)
        r = None if b is None or not b.alive else b.replicas.get(tp)
        if r is None or r.role != LEADER:
            return False
        b = self._own(broker)
        r = b.replicas[tp]
        if r.pending_isr is not None:
            if r.alter_blocked:
                return False
            if any(type(e.body) is M.AlterPartition and e.src == broker and e.body.tp == tp
                   or type(e.body) is M.AlterPartitionResponse and e.dst == broker and e.body.tp == tp
                   for e in self.net.values()):
                return False
            proposal = r.pending_isr
        else:
            proposal = r.maybe_shrink(self.now, self.settings)
            if proposal is None:
                return False
        self._propose_isr(b, r, proposal)
        return True

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("time cannot go backwards")
        self.now += ms

    def flush(self, broker: int) -> None:
        for r in self._own(broker).replicas.values():
            r.flush()

    # ================================================================ broker lifecycle
    def crash(self, broker: int, lossy: bool = False) -> None:
        """The broker process dies (a lossy crash also loses every unflushed log suffix)."""
        if not self.brokers[broker].alive:
            raise ControllerError(f"broker {broker} is already down")
        b = self._own(broker)
        b.alive = False
        b.shutting_down = False
        self.store.brokers.pop(broker, None)
        if self.store.controller_id == broker:
            self.store.controller_id = -1
        self.controllers.pop(broker, None)
        for mid in [m for m, e in self.net.items() if e.dst == broker]:
            del self.net[mid]
        for tp, r in sorted(b.replicas.items()):
            was_leader = r.role == LEADER
            self._complete(broker, r.restart(lossy, -1))
            if was_leader:
                self._notify("resigned", broker, tp)
        self._notify("crashed", broker, None)

    def stop(self, broker: int) -> None:
        """Clean shutdown: flush everything, then stop."""
        self.flush(broker)
        self.crash(broker, lossy=False)

    def restart(self, broker: int) -> int:
        """Start a stopped broker; it registers with a new broker epoch (returned)."""
        if self.brokers[broker].alive:
            raise ControllerError(f"broker {broker} is already running")
        b = self._own(broker)
        b.alive = True
        b.epoch = self._next_epoch
        self._next_epoch += 1
        b.controller_epoch_seen = 0
        for r in b.replicas.values():
            r.broker_epoch = b.epoch
        self.store.brokers[broker] = b.epoch
        return b.epoch

    # ================================================================ offsets-topic hook
    def _notify(self, event: str, broker: int, tp) -> None:
        for fn in self.listeners:
            fn(event, broker, tp)

    # ================================================================ durability helpers (tests, worlds)
    def missing_acked(self, tp=None) -> list[tuple]:
        """acks=all-acked records absent at their offset from the current leader's log (I-DUR);
        empty when the partition has no leader."""
        out = []
        for atp, off, value in self.acked:
            if tp is not None and atp != tp:
                continue
            leader = self.leader_of(atp)
            r = self.replica(leader, atp)
            if leader < 0 or r is None or not self.brokers[leader].alive or r.role != LEADER:
                continue
            recs = r.log.records
            if off >= len(recs) or recs[off][2] != value:
                out.append((atp, off, value))
        return out

    def inconsistent_reads(self, tp=None) -> list[tuple]:
        """(tp, offset, value read) where the current leader no longer holds the record a consumer
        read below a HW (ConsistentRead, part of I-HWM); empty when there is no leader."""
        out = []
        for ctp in sorted(self.consumed):
            if tp is not None and ctp != tp:
                continue
            leader = self.leader_of(ctp)
            r = self.replica(leader, ctp)
            if leader < 0 or r is None or not self.brokers[leader].alive or r.role != LEADER:
                continue
            recs = r.log.records
            for off, value in sorted(self.consumed[ctp].items()):
                if off >= len(recs) or recs[off][2] != value:
                    out.append((ctp, off, value))
        return out

    def epoch_cache_faults(self) -> list[tuple]:
        """(broker, tp, why) for a replica whose epoch cache is not strictly increasing or disagrees
        with the epochs of its records (I-EPOCH)."""
        out = []
        for bid, b in sorted(self.brokers.items()):
            for tp, r in sorted(b.replicas.items()):
                ep = r.log.epochs
                if any(e2 <= e1 or s2 <= s1 for (e1, s1), (e2, s2) in zip(ep, ep[1:])):
                    out.append((bid, tp, "cache not strictly increasing"))
                    continue
                for off, epoch, _v in r.log.records:
                    owner = None
                    for e, start in ep:
                        if start <= off:
                            owner = e
                    if owner != epoch:
                        out.append((bid, tp, f"record {off} of epoch {epoch} under cache epoch {owner}"))
                        break
        return out

    def log_mismatches(self, tp) -> list[tuple]:
        """(offset, broker a, broker b) where two replicas differ below both their HWs (I-LM)."""
        reps = sorted((b.id, b.replicas[tp]) for b in self.brokers.values() if tp in b.replicas)
        out = []
        for i, (ba, ra) in enumerate(reps):
            for bb, rb in reps[i + 1:]:
                upto = min(ra.hw, rb.hw, ra.log.leo, rb.log.leo)
                for off in range(upto):
                    if ra.log.records[off] != rb.log.records[off]:
                        out.append((off, ba, bb))
                        break
        return out


__all__ = ["Cluster", "ClusterView", "ReplicaView", "PartitionView", "BrokerView", "ProduceResult",
           "ControllerError", "FOLLOWER", "LEADER"]
