"""The durable metadata store (ZooKeeper's role) and a controller's in-memory view of it.

The store is the single source of truth: broker registrations with broker epochs, the controller
znode and controller epoch, assignments, partition states with a version (the partition epoch), and
pending reassignments. Writes of partition state are conditional on the version and fenced by the
controller epoch (KAFKA-6082), which is what lets a zombie controller be stopped and what makes
every controller decision resumable by the next controller. The decisions themselves live in
`controller_ops.py`.
"""
from __future__ import annotations

from typing import NamedTuple

OK = "OK"
BADVERSION = "BADVERSION"
CONTROLLER_MOVED = "CONTROLLER_MOVED"


class PartitionState(NamedTuple):
    leader: int
    leader_epoch: int
    isr: tuple
    controller_epoch: int
    version: int          # the partition epoch (znode version)


class Store:
    __slots__ = ("controller_id", "controller_epoch", "brokers", "assignments", "states", "reassignments",
                 "stale_writes_accepted")

    def __init__(self):
        self.controller_id = -1
        self.controller_epoch = 0
        self.brokers: dict[int, int] = {}                 # registered broker -> broker epoch
        self.assignments: dict[tuple, tuple] = {}         # tp -> AR (ordered)
        self.states: dict[tuple, PartitionState] = {}
        self.reassignments: dict[tuple, tuple] = {}       # tp -> (original AR, target AR)
        self.stale_writes_accepted = False

    def copy(self) -> "Store":
        s = Store.__new__(Store)
        s.controller_id = self.controller_id
        s.controller_epoch = self.controller_epoch
        s.brokers = dict(self.brokers)
        s.assignments = dict(self.assignments)
        s.states = dict(self.states)
        s.reassignments = dict(self.reassignments)
        s.stale_writes_accepted = self.stale_writes_accepted
        return s

    def snapshot(self) -> tuple:
        return (self.controller_id, self.controller_epoch, tuple(sorted(self.brokers.items())),
                tuple(sorted(self.assignments.items())), tuple(sorted(self.states.items())),
                tuple(sorted(self.reassignments.items())))

    def _fenced(self, controller_epoch: int) -> bool:
        return controller_epoch != self.controller_epoch and not self.stale_writes_accepted

    def write_state(self, tp, leader, leader_epoch, isr, expected_version, controller_epoch) -> tuple[str, object]:
        """Conditional update: (OK, new state) | (BADVERSION, current) | (CONTROLLER_MOVED, None)."""
        if self._fenced(controller_epoch):
            return CONTROLLER_MOVED, None
        cur = self.states.get(tp)
        cur_version = cur.version if cur is not None else -1
        if cur_version != expected_version:
            return BADVERSION, cur
        new = PartitionState(leader, leader_epoch, tuple(isr), controller_epoch, cur_version + 1)
        self.states[tp] = new
        return OK, new

    def leader_write_isr(self, tp, leader, leader_epoch, isr, expected_version) -> tuple[str, object]:
        """Pre-2.7 ISR update by the partition leader: conditional on the version, refused when the
        stored leader or leader epoch is not the writer's (the leader re-reads and gives up)."""
        cur = self.states.get(tp)
        if cur is None or cur.leader != leader or cur.leader_epoch != leader_epoch:
            return BADVERSION, cur
        if cur.version != expected_version:
            return BADVERSION, cur
        new = PartitionState(leader, leader_epoch, tuple(isr), cur.controller_epoch, cur.version + 1)
        self.states[tp] = new
        return OK, new

    def write_assignment(self, tp, replicas, controller_epoch) -> str:
        if self._fenced(controller_epoch):
            return CONTROLLER_MOVED
        self.assignments[tp] = tuple(replicas)
        return OK

    def delete_reassignment(self, tp, controller_epoch) -> str:
        if self._fenced(controller_epoch):
            return CONTROLLER_MOVED
        self.reassignments.pop(tp, None)
        return OK


class Controller:
    """One broker's belief that it is the controller, with the state it read (possibly stale)."""

    __slots__ = ("broker", "epoch", "active", "live", "shutting_down", "assignments", "states",
                 "reassignments", "retries")

    def __init__(self, broker: int, epoch: int, store: Store):
        self.broker = broker
        self.epoch = epoch
        self.active = True
        self.live: dict[int, int] = dict(store.brokers)   # broker -> epoch as last processed
        self.shutting_down: set[int] = set()
        self.assignments = dict(store.assignments)
        self.states = dict(store.states)
        self.reassignments = dict(store.reassignments)
        self.retries = 0                                  # conditional writes retried after BADVERSION

    def copy(self) -> "Controller":
        c = Controller.__new__(Controller)
        c.broker = self.broker
        c.epoch = self.epoch
        c.active = self.active
        c.live = dict(self.live)
        c.shutting_down = set(self.shutting_down)
        c.assignments = dict(self.assignments)
        c.states = dict(self.states)
        c.reassignments = dict(self.reassignments)
        c.retries = self.retries
        return c

    def snapshot(self) -> tuple:
        return (self.broker, self.epoch, self.active, tuple(sorted(self.live.items())),
                tuple(sorted(self.shutting_down)), tuple(sorted(self.assignments.items())),
                tuple(sorted(self.states.items())), tuple(sorted(self.reassignments.items())), self.retries)

    def live_set(self) -> frozenset:
        return frozenset(b for b in self.live if b not in self.shutting_down)
