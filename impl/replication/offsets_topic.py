"""`__consumer_offsets` as a replicated topic, with one group coordinator hosted on every broker.

Glue between the replication cluster and the group coordinator (impl/coordinator): the coordinator
of a group is the broker leading partition `partition_for(group_id)`; its offsets-log appends become
produce requests on that partition with `offsets.commit.required.acks` (default -1 = all), so an
OffsetCommit is answered only once its record is acknowledged; when leadership of a partition moves,
the old coordinator unloads it (parked requests get NOT_COORDINATOR) and the new one loads groups and
offsets from its own replica's log up to the LEO (Kafka loads with FetchIsolation.LOG_END), answering
COORDINATOR_LOAD_IN_PROGRESS until `complete_loads` runs. Each log record of the partition holds
one append's batch of coordinator records.

Every method returns the coordinator replies it caused as (broker, Reply) pairs.
"""
from __future__ import annotations

from dataclasses import replace

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, partition_for
from kverify.impl.replication.cluster import Cluster
from kverify.impl.replication.config import ReplicationConfig
from kverify.impl.replication.replica import LEADER

OFFSETS_TOPIC = "__consumer_offsets"


class _ReplicatedOffsetsLog:
    """The OffsetsLog a broker's coordinator writes through: a produce to the local leader replica."""

    __slots__ = ("world", "broker")

    def __init__(self, world: "OffsetsTopicWorld", broker: int):
        self.world = world
        self.broker = broker

    def append(self, partition: int, records: tuple):
        w = self.world
        pid = w.cluster.produce((OFFSETS_TOPIC, partition), tuple(records), acks=w.required_acks,
                                broker=self.broker)
        err = w.cluster.results[pid].error
        if err is None:
            w._unmatched[self.broker].append(pid)
        return err


class OffsetsTopicWorld:
    def __init__(self, brokers=(0, 1, 2, 3), partitions: int = 1, replication_factor: int = 3,
                 required_acks: int = -1, behaviours=frozenset(), replication_config: ReplicationConfig | None = None,
                 coordinator_config: CoordinatorConfig | None = None, assignment=None, controller: int | None = None):
        if required_acks not in (-1, 1):
            raise ValueError("offsets.commit.required.acks must be -1 or 1")
        self.behaviours = frozenset(behaviours)
        self.cluster = Cluster(brokers, replication_config, self.behaviours, controller)
        self.partitions = partitions
        self.required_acks = required_acks
        base = coordinator_config or CoordinatorConfig()
        self._coord_config = replace(base, offsets_partitions=partitions, owned_partitions=(), loading_partitions=())
        self.coordinators: dict[int, GroupCoordinator] = {b: self._fresh(b) for b in sorted(self.cluster.brokers)}
        self._unmatched: dict[int, list] = {b: [] for b in self.coordinators}
        self._pending: dict[tuple, int] = {}          # (broker, append id) -> produce id
        self._loads: set = set()                      # (broker, partition) elected, not yet loaded
        self._events: list = []
        self.cluster.listeners.append(self._on_event)
        self.cluster.create_topic(OFFSETS_TOPIC, partitions, replication_factor, assignment=assignment)
        self.cluster.deliver_all()
        self.sync()

    # ---------------------------------------------------------------- construction / value
    def _fresh(self, b: int) -> GroupCoordinator:
        return GroupCoordinator(replace(self._coord_config, member_id_seed=b), self.behaviours,
                                log=_ReplicatedOffsetsLog(self, b))

    def copy(self) -> "OffsetsTopicWorld":
        w = OffsetsTopicWorld.__new__(OffsetsTopicWorld)
        w.behaviours = self.behaviours
        w.cluster = self.cluster.copy()
        w.partitions = self.partitions
        w.required_acks = self.required_acks
        w._coord_config = self._coord_config
        w.coordinators = {b: c.copy(log=_ReplicatedOffsetsLog(w, b)) for b, c in self.coordinators.items()}
        w._unmatched = {b: list(v) for b, v in self._unmatched.items()}
        w._pending = dict(self._pending)
        w._loads = set(self._loads)
        w._events = []
        w.cluster.listeners.append(w._on_event)
        return w

    def snapshot(self) -> tuple:
        return (self.cluster.snapshot(), tuple((b, c.snapshot()) for b, c in sorted(self.coordinators.items())),
                tuple(sorted(self._pending.items())), tuple(sorted(self._loads)))

    # ---------------------------------------------------------------- routing
    def partition_of(self, group_id: str) -> int:
        return partition_for(group_id, self.partitions, self.behaviours)

    def coordinator_for(self, group_id: str) -> int:
        """The broker leading the group's offsets partition (-1 if it has no leader)."""
        return self.cluster.leader_of((OFFSETS_TOPIC, self.partition_of(group_id)))

    def handle(self, broker: int, request) -> list:
        """A client sends `request` to `broker`'s coordinator (a down broker answers nothing)."""
        if not self.cluster.brokers[broker].alive:
            return []
        coord = self.coordinators[broker]
        out = [(broker, r) for r in coord.handle(request)]
        self._match(broker)
        return out + self.sync()

    def advance(self, ms: int) -> list:
        self.cluster.advance(ms)
        out = []
        for b, coord in sorted(self.coordinators.items()):
            if self.cluster.brokers[b].alive:
                out += [(b, r) for r in coord.advance(ms)]
                self._match(b)
        return out + self.sync()

    def run(self, method: str, *args, **kwargs) -> list:
        """Call a cluster step by name (replicate, deliver_all, crash, handle_broker_changes, ...)."""
        getattr(self.cluster, method)(*args, **kwargs)
        return self.sync()

    def replicate_all(self, rounds: int = 3) -> list:
        out = []
        for _ in range(rounds):
            for p in range(self.partitions):
                tp = (OFFSETS_TOPIC, p)
                for b in self.cluster.store.assignments[tp]:
                    self.cluster.replicate(b, tp)
            self.cluster.deliver_all()
            out += self.sync()
        return out

    def complete_loads(self) -> list:
        """Finish every pending load: each new leader's coordinator reads its replica's log to the LEO."""
        out = []
        for b, p in sorted(self._loads):
            r = self.cluster.replica(b, (OFFSETS_TOPIC, p))
            if r is None or r.role != LEADER or not self.cluster.brokers[b].alive:
                continue
            records = tuple(rec for _off, _epoch, batch in r.log.records for rec in batch)
            out += [(b, x) for x in self.coordinators[b].on_election(p, r.leader_epoch, records)]
            self._match(b)
        self._loads.clear()
        return out + self.sync()

    def loading(self) -> list:
        return sorted(self._loads)

    # ---------------------------------------------------------------- glue
    def _on_event(self, event: str, broker: int, tp) -> None:
        self._events.append((event, broker, tp))

    def _match(self, broker: int) -> None:
        """Pair the coordinator's new pending appends with the produce ids, in append order."""
        queue = self._unmatched[broker]
        if not queue:
            return
        known = {aid for (b, aid) in self._pending if b == broker}
        for aid, _p, _recs in self.coordinators[broker].pending_appends():
            if aid not in known and queue:
                self._pending[(broker, aid)] = queue.pop(0)

    def sync(self) -> list:
        """Apply leadership events and finished appends to the coordinators until nothing changes."""
        out = []
        progress = True
        while progress:
            progress = False
            for key in sorted(self._pending):
                b, aid = key
                err = self.cluster.results[self._pending[key]].error
                if err is None:
                    continue
                del self._pending[key]
                progress = True
                if self.cluster.brokers[b].alive:
                    out += [(b, r) for r in self.coordinators[b].complete_append(aid, err)]
                    self._match(b)
            events, self._events[:] = list(self._events), []
            for event, b, tp in events:
                progress = True
                if event == "crashed":
                    # in-memory coordinator state is gone, but not the member-id counter: it stands for
                    # Kafka's random UUIDs, so a restarted broker must not hand out its old ids again
                    fresh = self._fresh(b)
                    fresh._member_counter = self.coordinators[b]._member_counter
                    self.coordinators[b] = fresh
                    self._unmatched[b] = []
                    for key in [k for k in self._pending if k[0] == b]:
                        del self._pending[key]
                    self._loads = {x for x in self._loads if x[0] != b}
                    continue
                if tp is None or tp[0] != OFFSETS_TOPIC or not self.cluster.brokers[b].alive:
                    continue
                p = tp[1]
                coord = self.coordinators[b]
                r = self.cluster.replica(b, tp)
                epoch = r.leader_epoch if r is not None else None
                if event == "leader":
                    coord.internal.set_partition_loading(p)
                    self._loads.add((b, p))
                elif event == "resigned":
                    self._loads.discard((b, p))
                    if p in coord.owned_partitions() or p in coord.loading_partitions():
                        out += [(b, x) for x in coord.on_resignation(p, epoch)]
        return out
