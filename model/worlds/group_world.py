"""group-world: the reference group coordinator + N consumer members + a lossy network, as a Protocol.

Why it exists: the abstract group model (model/group.py) states Kafka's rules; this world runs the
*implementation* (kverify.impl.coordinator.GroupCoordinator and kverify.impl.member.Member) under
every interleaving the engines choose, and checks it with the very same invariant objects
(invariants/group.py) through a `GroupView` of its state. model/refine.py maps it onto the model.

What is nondeterministic (one action each, listed in this order per slot):
  start / restart / poll / commit / leave / crash / pause / resume    the member processes
  deliver (request -> coordinator), receive (response -> member), lose  the network
  tick(T) / settle(T)                                                 time jumps to a deadline
Time: the world's clock is the coordinator's. `tick(T)` jumps to one of the next few deadlines
(a coordinator task, or a member's heartbeat/session/poll/request timer), firing the coordinator's
tasks on the way (MockTimer semantics) and then ticking every running member once at T (a member
whose heartbeat fell due earlier simply sends it late, like after a GC pause).
Network: one connection per member; FIFO per connection by default (`fifo=True`), messages of
different members interleave freely; a message may stay in flight across any number of steps
(delay) or be lost (budget `losses`). Responses the member would ignore (stale correlation id,
crashed process) are dropped as soon as they become unwanted: delivering them changes nothing.
A paused process (zombie) neither polls nor ticks nor reads responses; its sent requests still
arrive. A crashed process's requests already sent may still arrive (the broker may have read them).
Restarts: a static member restarts any time after its crash/leave (that is what static membership
is for; in synchronous mode only after the coordinator removed its old member, as the abstract model
restarts a process); a dynamic one only after the coordinator removed its old member (the view
numbers members by slot, one live member id per slot).
Budgets bound the exploration: events (start, restart, leave), faults (crash, pause), losses,
ticks, commits; no events, faults or losses once the group generation reaches `max_generation`.
Once `ticks` is spent, `settle(T)` (budget `settle_ticks`) still lets time pass when nothing else
can happen and the group is not settled, so that a started rebalance can finish: this is what makes
the explorer's recoverability analysis meaningful on a world whose time is bounded. Every fault,
and the end of a pause (resume), refills that budget (recoverability asks what happens once faults
stop: the time to recover is counted from the last one, else a fault late in a run would find no
time left to recover in).
The application commits with commitSync (one commit in flight at a time); responses are handled
inside its poll(), and it polls again after every input (response, time passing). With
`auto_commit_ms` the members auto-commit (periodically in poll, in onJoinPrepare before revoking,
and on close); with `expiration` the coordinator's offset expiry task runs every `retention_check_ms`.
Besides the group view, steps report to the consumer invariants (invariants/group.py
`consumer_invariants`): retention expiries with the group state they happened in (from the offset
tombstones the expiry writes), hand-overs (a revocation right after an acknowledged hand-over
commit, with what the member had consumed) and abandoned generations (a member owning partitions
whose generation was reset, with the coordinator error that caused it, or "left").
`synchronous=True` narrows the world to the abstract model's assumptions (see PARAMS; used by
refinement, model/refine.py); the engines then also get `check_refinement`.

States are `WorldState` values: the coordinator and member objects are never mutated after a state
is built (a step copies what it changes), and equality/hash use their snapshots plus the network
and ghost fields (delivered assignments, last persisted group record, group epoch).

Default bound: 2 members, one crash or pause, time passing only by `settle` (ticks=0): exhaustive
with no violation and every state recoverable (kverify explore group-world: ~64k states). The
fault-free bound the historical behaviours were hunted at is `FAULT_FREE` (with ticks=2).
Explorer reductions (both sound, both off with --no-symmetry): `canonical` renumbers correlation
ids (a bisimulation, see there), `subsumption` skips a state already seen with more fault/loss budget.
Members are not interchangeable (no symmetry reduction): member ids start with the client id (Kafka:
clientId-UUID), so the range assignor, which sorts member ids, serves slot 0 first; swapping two
slots changes which member gets which partition.
"""
from __future__ import annotations

import re
from typing import Optional

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from kverify.impl.coordinator import behaviours as CB
from kverify.impl.coordinator.messages import (
    Errors as E, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
    OffsetAndMetadata, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse)
from kverify.impl.coordinator.records import GroupMetadataRecord, OffsetTombstone
from kverify.impl.member import Member, MemberConfig
from kverify.impl.member import behaviours as MB
from kverify.impl.member.codec import CodecError, decode_assignment
from kverify.invariants.core import Invariant, Sometimes, Violation
from kverify.invariants.group import (COMPLETING, DEAD, EMPTY, PREPARING, STABLE,
                                      FENCING_ERRORS, Abandon, ClientView, CommitEvent, Fence, GroupView, Handover,
                                      consumer_invariants, group_invariants, group_sometimes)
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param
from kverify.model.worlds import KeyedState
from kverify.model.worlds.network import REQ, RESP, Net

# java.util.UUID.randomUUID().toString(): version nibble 4, variant nibble 8-b
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")

PARAMS = {
    "members": Param(2, "consumer processes (slots m0..)", lo=1, hi=8),
    "partitions": Param(1, "partitions of the one subscribed topic", lo=1, hi=6),
    "protocol": Param("eager", "rebalance protocol: eager (range assignor) or cooperative (cooperative-sticky)",
                      choices=("eager", "cooperative")),
    "static": Param(False, "members set group.instance.id (static membership)"),
    "group": Param("group", "group id (its hash picks the coordinator's offsets partition)"),
    "events": Param(2, "budget of process starts, restarts and leaves", lo=0),
    "faults": Param(1, "budget of crashes and pauses", lo=0),
    "losses": Param(0, "budget of lost messages", lo=0),
    "ticks": Param(0, "budget of time jumps at any moment (0: time passes only by `settle`, when nothing else can happen)", lo=0),
    "settle_ticks": Param(8, "extra time jumps once `ticks` is spent, only when nothing else can happen and the group is not settled (lets a rebalance finish: recoverability); every fault (crash, pause, lost message) and every resume refills them", lo=0),
    "commits": Param(1, "budget of offset commits sent", lo=0),
    "max_generation": Param(3, "no events, faults or losses once the group generation reaches this", lo=0),
    "max_offset": Param(1, "log end offset of every partition (bounds consumer positions)", lo=0),
    "fifo": Param(True, "FIFO per connection (TCP); False = any in-flight message may overtake"),
    "tick_choices": Param(1, "how many of the next distinct deadlines a tick may jump to", lo=1),
    "request_timeouts": Param(False, "request timeouts are tick targets too (time may also pass them on other ticks)"),
    "request_ms": Param(30_000, "request.timeout.ms of the members (a JoinGroup waits max(this, rebalance timeout + 5 s))",
                        lo=1),
    "synchronous": Param(False, "the abstract model's assumptions (used by refinement, model/refine.py): timers fire only while no message to or from a running member is in flight except stragglers, and only stragglers are lost (JoinGroup, SyncGroup and LeaveGroup messages but a JoinGroup without member id and a SyncGroup answer with an assignment; none with static members); no MEMBER_ID_REQUIRED interleaving (nor a pause or crash during that round trip); no leave while the coordinator holds the process's JoinGroup/SyncGroup parked; a crash, leave or restart loses the requests not yet delivered"),
    "expiration": Param(False, "coordinator offset expiry task on (retention below, checked every `retention_check_ms`)"),
    "retention_ms": Param(1000, "offsets retention when expiration is on"),
    "retention_check_ms": Param(5000, "interval of the coordinator's offset expiry task (offsets.retention.check.interval.ms)", lo=1),
    "auto_commit_ms": Param(0, "enable.auto.commit with this auto.commit.interval.ms (0 = off: the application commits with `commit`)", lo=0),
    "commit_on_revoke": Param(False, "the application commits synchronously in onPartitionsRevoked"),
}

# Behaviours the world can exercise (each goes to the component it belongs to). Not here: kafka-12890
# (a member that heartbeats but never syncs: the world's members always sync; a lost SyncGroup makes
# them rejoin after the request timeout).
SUPPORTS = frozenset({
    CB.STALE_GENERATION_COMMIT, CB.NO_GENERATION_BUMP, CB.MATH_ABS_COORDINATOR, CB.LEADER_NOT_REELECTED,
    CB.STATIC_REPLACE_IN_COMPLETING, CB.DUPLICATE_STATIC_MEMBER, CB.EXPIRE_WHILE_REBALANCING,
    MB.SYNC_REBALANCE_RESETS_GENERATION, MB.JOIN_PREPARE_ONCE, MB.COMMIT_UNOWNED, MB.NO_PENDING_REVOCATION,
})
# World parameters under which each supported behaviour is exercised, and the engine that catches it
# (tests/test_group_world.py and tests/test_group_world_zoo.py prove each row; the bug zoo uses them).
# 13636: one member commits, leaves (the group is Empty, subscribed topics = {}) and restarts at once;
# the expiry task (every 4 s, retention 1 s) runs while the new join waits out the initial delay.
# 14196: EAGER + auto-commit, m0 consumes p0 (log end 2) when m1's join makes it rejoin.
# 13891: COOPERATIVE; the leader's SyncGroup is answered REBALANCE_IN_PROGRESS because another member left
# meanwhile (with one slot: the late requests of its own previous incarnation, which joined and then left).
# the fault-free bound the rows below were found at (the defaults before faults became the default):
# every row starts from it, so that a hunt stays as small and as fast as it was
FAULT_FREE = {"faults": 0, "losses": 0, "ticks": 2, "request_timeouts": False, "settle_ticks": 8}
# random walks (kverify verify's walk checks): the default bound lets time pass only by `settle`, which a
# walker, always offered some other action, almost never takes; with free time jumps short walks reach every
# `sometimes` property (zombie-fenced needs a paused process to outlive its session)
WALK_PARAMS = {"ticks": 12, "tick_choices": 1}   # zombie-fenced in about 1 walk of 60 steps in 20
HUNT_PARAMS = {
    CB.EXPIRE_WHILE_REBALANCING: ({"members": 1, "expiration": True, "retention_ms": 1000, "retention_check_ms": 4000,
                                   "events": 3, "ticks": 3, "tick_choices": 1, "settle_ticks": 0}, "explorer"),
    MB.NO_PENDING_REVOCATION: ({"auto_commit_ms": 60000, "max_offset": 2, "commits": 0, "events": 2, "ticks": 2,
                                "tick_choices": 1, "settle_ticks": 0}, "explorer"),
    MB.SYNC_REBALANCE_RESETS_GENERATION: ({"members": 1, "protocol": "cooperative", "events": 3, "ticks": 2,
                                           "tick_choices": 1, "settle_ticks": 0, "commits": 1}, "explorer"),
    CB.NO_GENERATION_BUMP: ({}, "explorer"),
    CB.LEADER_NOT_REELECTED: ({}, "explorer"),
    CB.MATH_ABS_COORDINATOR: ({"group": "polygenelubricants"}, "explorer"),
    MB.COMMIT_UNOWNED: ({"partitions": 2}, "explorer"),
    CB.STALE_GENERATION_COMMIT: ({"fifo": False, "faults": 2, "ticks": 6, "commits": 3, "events": 4, "losses": 1,
                                  "tick_choices": 3}, "walk"),
    CB.DUPLICATE_STATIC_MEMBER: ({"static": True, "faults": 2, "ticks": 6, "commits": 3, "events": 4, "losses": 1,
                                  "tick_choices": 3}, "walk"),
    CB.STATIC_REPLACE_IN_COMPLETING: ({"static": True, "faults": 2, "ticks": 6, "commits": 3, "events": 4,
                                       "losses": 1, "tick_choices": 3}, "walk"),
    MB.JOIN_PREPARE_ONCE: ({"protocol": "cooperative", "faults": 0, "events": 2, "ticks": 6, "commits": 0,
                            "tick_choices": 3}, "walk"),
}
HUNT_PARAMS = {b: (dict(FAULT_FREE, **params), engine) for b, (params, engine) in HUNT_PARAMS.items()}
COORDINATOR_BEHAVIOURS = frozenset({CB.STALE_GENERATION_COMMIT, CB.NO_GENERATION_BUMP, CB.MATH_ABS_COORDINATOR,
                                    CB.LEADER_NOT_REELECTED, CB.NO_SYNC_BARRIER, CB.STATIC_REPLACE_IN_COMPLETING,
                                    CB.DUPLICATE_STATIC_MEMBER, CB.EXPIRE_WHILE_REBALANCING})

TOPIC = "t"
CID_STRIDE = 1_000_000          # slot m uses correlation ids (m+1)*CID_STRIDE + 1, + 2, ...
SESSION_MS, HEARTBEAT_MS, POLL_MS = 10_000, 3_000, 20_000
STATE_CODES = {"Empty": EMPTY, "PreparingRebalance": PREPARING, "CompletingRebalance": COMPLETING,
               "Stable": STABLE, "Dead": DEAD}
FAULT_ACTIONS = frozenset({"crash", "pause", "lose"})
_STRAGGLERS = (JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, LeaveGroupRequest, LeaveGroupResponse)
_FENCING_ERRORS = frozenset({E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION})     # refinement ghost `answers`
MEMBER_ACTIONS = ("start", "restart", "poll", "commit", "leave", "crash", "pause", "resume")


def make(params: dict, behaviours: frozenset) -> "GroupWorld":
    return GroupWorld(params, behaviours)


SPEC = ModelSpec(name="group-world", make=make, params=PARAMS, supports=SUPPORTS, walk_params=WALK_PARAMS,
                 hunt_params=HUNT_PARAMS)


_UNSET = object()


class _RecordingLog:
    """The coordinator's __consumer_offsets log for one step: appends succeed at once; the last
    group metadata record is kept (the world's ghost of what a reload would bring back), and, when
    `coord` is set, the offset tombstones written with the group's state at that moment (the expiry
    task writes them right after deleting the offsets: that is the state the deletion happened in)."""
    __slots__ = ("last", "coord", "tombstones")

    def __init__(self, coord=None):
        self.last = None
        self.coord = coord
        self.tombstones = ()        # ((group_id, TopicPartition, group state name), ...)

    def append(self, partition, records):
        for r in records:
            if isinstance(r, GroupMetadataRecord):
                self.last = r
            elif isinstance(r, OffsetTombstone) and self.coord is not None:
                g = self.coord.group(r.group_id)
                # cleanupGroupMetadata turns only an Empty group left without offsets Dead and drops
                # it from the cache before writing its tombstones: a missing group was Empty
                self.tombstones += ((r.group_id, r.partition, "Empty" if g is None else g.state),)
        return E.NONE


class WorldState(KeyedState):
    """One state of the world. Never mutated once built; equality and hash use snapshots."""
    __slots__ = ("coord", "_csnap", "members", "msnaps", "net", "started", "paused", "budget",
                 "delivered", "persisted", "gepoch", "conns", "answers", "counts", "last", "hbfail", "_key", "_hash", "_view", "_g", "_cpart",
                 "_cviews", "_polls", "_good")

    def __init__(self, coord, csnap, members, msnaps, net, started, paused, budget, delivered, persisted,
                 gepoch, conns, answers, counts, last=None, hbfail=None):
        self.coord = coord
        self._csnap = csnap             # None until asked: engines that never compare states skip it
        self.members = members
        self.msnaps = msnaps
        self.net = net
        self.started = started
        self.paused = paused
        self.budget = budget            # (events, faults, losses, ticks, commits)
        self.delivered = delivered      # ((generation, per-slot partition masks), ...) answered to SyncGroup
        self.persisted = persisted      # (generation, members mask, leader slot, assignment) of the last group record
        self.gepoch = gepoch            # +1 each time the group disappears from the coordinator (deleted)
        self.conns = conns              # per slot: number of the member's current connection
        self.answers = answers          # per slot: last group answer to this incarnation (see `_answers`)
        self.counts = counts            # per partition: number of acknowledged member commits (refinement)
        self.last = last                # what the step that built this state did (not part of equality)
        # per slot: (time, incarnation, generation) of the member's last failed Heartbeat while it stays in that
        # generation and retry.backoff.ms has not passed since (GroupWorld._hb_failures); None: no slot has one
        self.hbfail = hbfail
        self._key = None
        self._hash = None
        self._view = None
        self._g = _UNSET          # caches, inherited by successors that share the coordinator
        self._cpart = None
        self._cviews = None
        self._polls = None        # per slot: what poll() would do now (see GroupWorld._poll_trial)
        self._good = None         # is_quiescent_good, once asked

    def __reduce__(self):
        """Pickle the fields only: the caches (`_g` may be the `_UNSET` identity sentinel, views hold
        MappingProxyTypes) and `_hash` (str hashes differ between processes) are rebuilt when asked."""
        return (WorldState, (self.coord, None, self.members, self.msnaps, self.net, self.started, self.paused,
                             self.budget, self.delivered, self.persisted, self.gepoch, self.conns, self.answers,
                             self.counts, self.last, self.hbfail))

    def group(self, group_id):
        g = self._g
        if g is _UNSET:
            g = self._g = self.coord.group(group_id)
        return g

    @property
    def now(self) -> int:
        return self.coord.now

    @property
    def csnap(self):
        c = self._csnap
        if c is None:
            c = self._csnap = self.coord.snapshot()
        return c

    def _compute_key(self):
        return (self.csnap, self.msnaps, self.net, self.started, self.paused, self.budget,
                self.delivered, self.persisted, self.gepoch, self.conns, self.answers, self.counts, self.hbfail)

    def __repr__(self):
        return f"WorldState(now={self.now}, budget={self.budget}, in_flight={self.net.size()})"


class StepInfo:
    """What one step did, for the step invariants: accepted commits (and retention expiries),
    states passed, replies, hand-overs (revocations after an acknowledged hand-over commit)."""
    __slots__ = ("accepted", "passed", "replies", "handovers", "abandoned", "fenced")

    def __init__(self, accepted=(), passed=(), replies=(), handovers=(), abandoned=(), fenced=()):
        self.accepted = accepted
        self.passed = passed
        self.replies = replies
        self.handovers = handovers
        self.abandoned = abandoned
        self.fenced = fenced


_NO_STEP = StepInfo()


class GroupWorld(Protocol):
    name = "group-world"

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        full = params                      # complete and validated by the registry (SPEC)
        self.params = dict(full)
        self.behaviours = frozenset(behaviours)
        self.n = int(full["members"])
        self.p = int(full["partitions"])
        self.group_id = str(full["group"])
        self.fifo = bool(full["fifo"])
        self.max_gen = int(full["max_generation"])
        self.tick_choices = int(full["tick_choices"])
        self.settle = int(full["settle_ticks"])     # refilled by every fault: time to recover from it
        self.request_timeouts = bool(full["request_timeouts"])
        self.synchronous = bool(full["synchronous"])
        self.coord_behaviours = self.behaviours & COORDINATOR_BEHAVIOURS
        self.member_behaviours = self.behaviours - COORDINATOR_BEHAVIOURS
        self.coord_config = CoordinatorConfig(
            group_initial_rebalance_delay_ms=3000, group_min_session_timeout_ms=6000,
            offsets_expiration_enabled=bool(full["expiration"]), offsets_retention_ms=int(full["retention_ms"]),
            offsets_retention_check_interval_ms=int(full["retention_check_ms"]))
        assignors = ("range",) if full["protocol"] == "eager" else ("cooperative-sticky",)
        self.member_configs = tuple(
            MemberConfig(self.group_id, topics=(TOPIC,), assignors=assignors,
                         instance_id=f"i{m}" if full["static"] else None, client_id=f"m{m}",
                         session_timeout_ms=SESSION_MS, rebalance_timeout_ms=POLL_MS,
                         heartbeat_interval_ms=HEARTBEAT_MS, request_timeout_ms=int(full["request_ms"]),
                         cluster={TOPIC: self.p}, commit_on_revoke=bool(full["commit_on_revoke"]),
                         fetch_per_poll=1, max_offset=int(full["max_offset"]), record_events=False,
                         auto_commit_interval_ms=int(full["auto_commit_ms"]) or None,
                         correlation_base=(m + 1) * CID_STRIDE)
            for m in range(self.n))
        self.static = bool(full["static"])
        self.all_parts = (1 << self.p) - 1
        self._invs = group_invariants(self.view, self.step_views) + consumer_invariants(self.step_views) + (
            Invariant("coordinator-partition-in-range",
                      "the group's coordinator is an existing __consumer_offsets partition (0 <= p < n)",
                      self._check_partition, "state", (CB.MATH_ABS_COORDINATOR,)),
            Invariant("one-member-per-instance",
                      "the coordinator holds at most one member per group.instance.id",
                      self._check_static_unique, "state", (CB.DUPLICATE_STATIC_MEMBER,)),
            Invariant("reset-member-owns-nothing",
                      "a running consumer whose generation was reset owns no partitions once its poll ran (onPartitionsLost)",
                      self._check_reset_owns_nothing, "state", (MB.JOIN_PREPARE_ONCE,)),
            Invariant("owners-have-assignments",
                      "in a Stable group every member of the generation owns a non-empty assignment when there are at least as many partitions as members",
                      self._check_assigned, "state", (CB.STATIC_REPLACE_IN_COMPLETING,)),
            Invariant("member-ids-kafka-shaped",
                      "every member id the coordinator generated is its client id (or group.instance.id) + '-' + "
                      "a version-4 UUID, as Kafka's GroupMetadata.generateMemberId makes it",
                      self._check_member_id_shape, "state", ()),
            Invariant("offset-fetch-reads-committed",
                      "an OffsetFetch answer gives, for each partition it answers without error, the offset the group has committed (-1: none)",
                      self._check_fetch_reads_committed, "step", ()),
            Invariant("heartbeat-backoff",
                      "a member sends no Heartbeat earlier than retry.backoff.ms after its previous heartbeat failed "
                      "(it stays in its generation)",
                      self._check_heartbeat_backoff, "step", ()),
            Invariant("offset-fetch-not-repeated",
                      "a member never sends an OffsetFetch while its own OffsetFetch of the same partitions under the "
                      "same generation is in flight (it waits for that answer)",
                      self._check_fetch_not_repeated, "state", ()),
        )
        # zombie-fenced needs a process that stops (pause/crash budget): without faults it is not required
        self._some = tuple(x for x in group_sometimes(self.view, self.n, failover=False)
                           if x.name != "zombie-fenced" or int(full["faults"]) > 0)
        # a consumer waits request.timeout.ms for an answer, and its poll fetches the committed offsets of newly
        # assigned partitions without waiting for its pending commits (ConsumerCoordinator.refreshCommittedOffsetsIfNeeded):
        # with a lost answer, an OffsetCommit can still be awaited when a rebalance hands the member partitions to fetch
        if full["request_timeouts"] and int(full["losses"]) > 0:
            self._some += (Sometimes("fetch-beside-pending-commit",
                                     "a member sends an OffsetFetch while an OffsetCommit it sent earlier (commitAsync, "
                                     "auto-commit) is still awaited within its request timeout",
                                     self._fetch_beside_pending_commit),)
        # the consumer invariants are vacuous unless their events happen: require them when configured
        if int(full["auto_commit_ms"]) or full["commit_on_revoke"]:
            self._some += (Sometimes("handover", "a member revokes partitions right after an acknowledged hand-over commit",
                                     lambda s: bool(s.last.handovers)),)
        if full["expiration"]:
            self._some += (Sometimes("offsets-expired", "the coordinator's expiry task deletes committed offsets",
                                     lambda s: any(e.expired_in >= 0 for e in s.last.accepted)),)
        self._init = None
        self._last_step_views = None
        self._refinement = None
        from kverify.model import refine as _refine
        if _refine.refinable(self):
            # the hook engines call after every step (stateful_tests/machine.py); only offered for
            # configurations the abstract model describes (see model/refine.py REQUIRED)
            self.check_refinement = self._check_refinement

    def _check_refinement(self, prev, action, nxt, step_index: int):
        from kverify.model import refine as _refine
        if self._refinement is None:
            self._refinement = _refine.GroupRefinement(self)
        msg = self._refinement.check(prev, action, nxt)
        return None if msg is None else Violation("refines-group-model", msg, step_index)

    # --- Protocol: the transition system ------------------------------------------------------
    def init_states(self):
        if self._init is None:
            coord = GroupCoordinator(self.coord_config, self.coord_behaviours, log=_RecordingLog())
            members = tuple(Member(c, self.member_behaviours, now=0) for c in self.member_configs)
            p = self.params
            budget = (int(p["events"]), int(p["faults"]), int(p["losses"]), int(p["ticks"]), int(p["commits"]),
                      int(p["settle_ticks"]))
            self._init = [WorldState(coord, coord.snapshot(), members, tuple(m.snapshot() for m in members),
                                     Net.empty(self.n), (False,) * self.n, (False,) * self.n, budget, (),
                                     (0, 0, -1, None), 0, (0,) * self.n, (None,) * self.n, (0,) * self.p,
                                     StepInfo())]
        return self._init

    def invariants(self):
        return self._invs

    def sometimes(self):
        return self._some

    def is_fault(self, action) -> bool:
        return action[0] in FAULT_ACTIONS

    def subsumption(self, s):
        """(the canonical key without the fault and loss budgets, (faults, losses)). Those two budgets
        only gate crash/pause and lose (fault actions, which only decrease them), nothing else reads
        them, so a state with more of them can do all the same and more (model/protocol.py): e.g. the
        state after pause + resume is the state before with one fault fewer, and is not explored again."""
        k = self.canonical(s)
        ev, fa, lo, ti, co, se = k[5]
        return k[:5] + ((ev, ti, co, se),) + k[6:], (fa, lo)

    def canonical(self, s):
        """The state's key with each slot's correlation ids renumbered base+1, base+2, ... in their
        order, the member's next id right after them (`_renumber_cids`). Sound: cids are only ever
        compared for equality and order and mapped to their slot (cid // CID_STRIDE), all of which an
        order-preserving renaming inside the slot's range keeps, and every id a member issues later is
        above all of them in both states; so two states with equal canonical keys have the same
        futures up to that renaming (the explorer rebuilds traces from the concrete states)."""
        k = s._key          # neither is kept: the explorer asks once per state, and its frontier holds states
        return _renumber_cids(k if k is not None else s._compute_key(), self.n)

    def abstract(self, s):
        """What the group invariants see (coverage counting): the group and the clients, without the
        coordinator's timers, correlation ids, clocks and the network."""
        v = self.view(s)
        return (v.state, v.generation, v.leader, v.members, v.assignment, v.offsets, v.clients)

    def actions(self, s: WorldState):
        events, faults, losses, ticks, commits, settle = s.budget
        g = s.group(self.group_id)
        env_ok = g is None or g.generation_id < self.max_gen
        if self.synchronous:
            focus = [m for m in range(self.n) if s.members[m].alive and self._pending(g, m)
                     and (s.net.requests[m] or s.net.responses[m])]
            if focus:       # the MEMBER_ID_REQUIRED round trip completes before anything else happens
                m = focus[0]
                return ([("deliver", m, cid) for cid in s.net.deliverable(REQ, m, self.fifo)]
                        + [("receive", m, cid) for cid in s.net.deliverable(RESP, m, self.fifo) if not s.paused[m]]
                        + ([("resume", m)] if s.paused[m] else []))   # (paused before the round trip began)
        out = []
        for m in range(self.n):
            mem = s.members[m]
            paused = s.paused[m]
            if not s.started[m]:
                if events and env_ok:
                    out.append(("start", m))
            elif mem.alive and not paused:
                stoppable = not self.synchronous or not self._pending(g, m)
                if self._poll_trial(s, m)[2]:
                    out.append(("poll", m))
                if commits and self._would_commit(mem):
                    out.append(("commit", m))
                if events and env_ok and (not self.synchronous or not self._parked(g, mem)):
                    out.append(("leave", m))
                if faults and env_ok and stoppable:
                    out.append(("pause", m))
                    out.append(("crash", m))
            elif mem.alive:
                out.append(("resume", m))
                if faults and env_ok and (not self.synchronous or not self._pending(g, m)):
                    out.append(("crash", m))
            elif events and env_ok and self._may_restart(g, m):
                out.append(("restart", m))
            to_deliver = s.net.deliverable(REQ, m, self.fifo)
            to_receive = s.net.deliverable(RESP, m, self.fifo)
            for cid in to_deliver:
                out.append(("deliver", m, cid))
            if not paused:
                for cid in to_receive:
                    out.append(("receive", m, cid))
            if losses and env_ok:
                for cid in to_deliver:
                    if not self.synchronous or self._losable(s.net.requests[m], cid):
                        out.append(("lose", REQ, m, cid))
                for cid in to_receive:
                    if not self.synchronous or self._losable(s.net.responses[m], cid):
                        out.append(("lose", RESP, m, cid))
        if ticks and (not self.synchronous or self._network_idle(s)):
            for t in self.tick_targets(s):
                out.append(("tick", t))
        elif (not ticks and settle and s.net.idle() and not any(a[0] == "poll" for a in out)
              and not self.is_quiescent_good(s)):
            for t in self.tick_targets(s)[:1]:
                out.append(("settle", t))
        return out

    def _would_commit(self, mem) -> bool:
        """commit() would send a request (otherwise it is a local no-op, not worth a step). The
        application uses commitSync: no second commit while one is in flight."""
        if mem.blocked is not None or mem.generation_if_stable() is None:
            return False
        if any(f.kind == "commit" for f in mem.inflight.values()):
            return False
        return bool(mem.consuming) or bool(mem.stale_positions)

    @staticmethod
    def _pending(g, m) -> bool:
        """The coordinator holds this process as a pending member (MEMBER_ID_REQUIRED answered, its
        second JoinGroup not handled yet): a pending member blocks the join phase until it expires,
        which the abstract model (no MEMBER_ID_REQUIRED) does not have, so synchronous mode does
        not stop a process right then."""
        prefix = f"m{m}-"
        return g is not None and any(pid.startswith(prefix) for pid in g.pending_members)

    def _losable(self, queue, cid) -> bool:
        """Whether synchronous mode may lose the message `cid` of this queue (see `_straggles`)."""
        return any(e[0] == cid and self._straggles(e[1]) for e in queue)

    def _straggles(self, msg) -> bool:
        """Synchronous mode: `msg` may be lost or stay in flight while timers fire (`_straggler`).
        Nothing does with static members: a static member that misses the join window stays in the
        group (Kafka's onCompleteJoin removes only dynamic members), the model drops it."""
        return not self.static and _straggler(msg)

    @staticmethod
    def _parked(g, mem) -> bool:
        """The coordinator holds this process's JoinGroup or SyncGroup parked (answered later). Its
        LeaveGroup then has no model counterpart (the model removes parked members only through a
        rebalance), so synchronous mode does not leave then; refinement reads it too."""
        if mem.join_cid is None:
            return False
        me = _held(g, mem)
        return me is not None and (me.awaiting_join or me.awaiting_sync)

    def _network_idle(self, s) -> bool:
        """Synchronous mode: no message to or from a running member is in flight, except stragglers
        (`_straggler`: the ones that may also be lost)."""
        for m in range(self.n):
            if s.started[m] and s.members[m].alive and not s.paused[m]:
                for q in (s.net.requests[m], s.net.responses[m]):
                    for e in q:
                        if not self._straggles(e[1]):
                            return False
        return True

    def _poll_trial(self, s, m) -> tuple:
        """(requests, member after the call, useful, its snapshot) of poll() by slot m in state s;
        `useful`: poll() would send something or change the member (else it is a stutter, not a
        step). Computed once per state: `actions` asks, the poll step reuses it, and successors
        that keep the same member object at the same time inherit it (see `_build`)."""
        polls = s._polls
        if polls is None:
            polls = s._polls = [None] * self.n
        t = polls[m]
        if t is None:
            trial = s.members[m].copy()
            reqs = tuple(trial.poll(s.now))
            snap = trial.snapshot()
            t = polls[m] = (reqs, trial, bool(reqs) or snap != s.msnaps[m], snap)
        return t

    def _may_restart(self, g, m) -> bool:
        if g is None or (self.static and not self.synchronous):
            return True
        cid = f"m{m}"
        return all(v.client_id != cid for v in g.members.values())

    def tick_targets(self, s: WorldState) -> list:
        """The next `tick_choices` distinct times at which something is due: coordinator tasks, member
        heartbeat/session/poll timers (and request timeouts when `request_timeouts`)."""
        now = s.now
        cands = set()
        for deadline, _key, _payload in s.coord.internal.timers():
            cands.add(deadline + 1)       # MockTimer fires tasks whose deadline is < now
        for m in range(self.n):
            mem = s.members[m]
            if not s.started[m] or s.paused[m] or not mem.alive:
                continue
            c = mem.config
            if mem.state in ("COMPLETING_REBALANCE", "STABLE"):
                # an overdue heartbeat goes out at the heartbeat thread's next round (it may have
                # spent the last one rediscovering the coordinator)
                cands.add(max(mem.hb_deadline, now + c.retry_backoff_ms))
                cands.add(mem.session_deadline)
                cands.add(mem.poll_deadline)
            if self.request_timeouts:
                for f in mem.inflight.values():
                    cands.add(f.sent_at + (c.join_timeout_ms if f.kind == "join" else c.request_timeout_ms))
        return sorted(t for t in cands if t > now)[:self.tick_choices]

    def step(self, s: WorldState, a: tuple) -> WorldState:
        kind = a[0]
        if kind in MEMBER_ACTIONS:
            return self._member_step(s, kind, a[1])
        if kind == "deliver":
            return self._deliver(s, a[1], a[2])
        if kind == "receive":
            return self._receive(s, a[1], a[2])
        if kind == "lose":
            _msg, net = s.net.take(a[1], a[2], a[3])
            ev, fa, lo, ti, co, se = s.budget
            return self._build(s, net=net, budget=(ev, fa, lo - 1, ti, co, self.settle))
        if kind in ("tick", "settle"):
            return self._tick(s, a[1], kind == "settle")
        raise ValueError(f"group-world: unknown action {a!r}")

    # --- steps ------------------------------------------------------------------------------------
    def _member_step(self, s, kind, m):
        ev, fa, lo, ti, co, se = s.budget
        now = s.now
        started, paused = s.started, s.paused
        if kind == "pause":
            return self._build(s, paused=_set(paused, m, True), budget=(ev, fa - 1, lo, ti, co, self.settle))
        if kind == "resume":        # the pause is over: the time to recover from it counts from here
            return self._build(s, paused=_set(paused, m, False), budget=(ev, fa, lo, ti, co, self.settle))
        known = None
        if kind == "poll":
            reqs, mem, _useful, snap = self._poll_trial(s, m)   # never mutated: shared with the memo
            known = {m: snap}
        else:
            mem = s.members[m].copy()
        if kind == "start":
            reqs = mem.start(now)
            started = _set(started, m, True)
            ev -= 1
        elif kind == "restart":
            reqs = mem.restart(now)
            paused = _set(paused, m, False)
            ev -= 1
        elif kind == "poll":
            pass
        elif kind == "commit":
            reqs = mem.commit(None, now)
            co -= 1
        elif kind == "leave":
            reqs = mem.leave(now)
            ev -= 1
        else:   # crash
            reqs = mem.crash(now)
            paused = _set(paused, m, False)
            fa -= 1
            se = self.settle
        members = _set(s.members, m, mem)
        handed = self._handover(m, s.members[m], mem)
        dropped = self._abandon(m, s.members[m], mem, None)
        net = s.net
        if self.synchronous and kind in ("crash", "leave", "restart"):
            net = net.drop_requests(m)      # the closed connection loses what it had not delivered
        conns = _reconnect(s.conns, m, s.members[m], mem, None)
        # close() sends its last requests (auto-commit, LeaveGroup) before closing the connection: they
        # follow what is already in flight on it; only a later incarnation uses a new connection
        conn = s.conns[m] if kind == "leave" else conns[m]
        answers = s.answers if mem.alive else _set(s.answers, m, None)
        if kind in ("start", "restart"):
            answers = _set(answers, m, None)
        return self._build(s, members=members, changed=(m,), snaps=known, net=net.send(m, reqs, conn), started=started,
                           paused=paused, budget=(ev, fa, lo, ti, co, se), conns=conns, answers=answers,
                           last=StepInfo(handovers=handed, abandoned=dropped) if handed or dropped else None)

    def _deliver(self, s, m, cid):
        req, net = s.net.take(REQ, m, cid)
        log = _RecordingLog()
        coord = s.coord.copy(log=log)
        before = s.group(self.group_id)
        replies = coord.handle(req)
        net = self._route(net, replies)
        accepted = ()
        if isinstance(req, OffsetCommitRequest):
            accepted = self._accepted(req, m, replies)
        return self._after_coordinator(s, coord, log, before, net, replies, accepted)

    def _tick(self, s, t, settle=False):
        log = _RecordingLog()
        coord = s.coord.copy(log=log)
        log.coord = coord
        before = s.group(self.group_id)
        replies = coord.advance(t - s.now)
        net = self._route(s.net, replies)
        members = list(s.members)
        changed = []
        handed = dropped = ()
        conns = s.conns
        for m in range(self.n):
            mem = members[m]
            if not s.started[m] or s.paused[m] or not mem.alive:
                continue
            mem = mem.copy()
            reqs = mem.tick(t)
            reqs = reqs + mem.poll(t)        # the application keeps polling while time passes
            members[m] = mem
            changed.append(m)
            handed += self._handover(m, s.members[m], mem)
            dropped += self._abandon(m, s.members[m], mem, None)
            conns = _reconnect(conns, m, s.members[m], mem, None)
            net = net.send(m, reqs, conns[m])
        ev, fa, lo, ti, co, se = s.budget
        budget = (ev, fa, lo, ti, co, se - 1) if settle else (ev, fa, lo, ti - 1, co, se)
        s2 = self._build(s, members=tuple(members), changed=tuple(changed), net=net,
                         budget=budget, conns=conns, defer=True)
        # retention expiry: a configured deletion (explicit_reset), with the group state it happened in;
        # an offset that vanishes without a tombstone gets no event (committed-offset-safety sees it)
        by_state = {}
        for gid, tp, state in log.tombstones:
            if gid == self.group_id and tp.topic == TOPIC and 0 <= tp.partition < self.p:
                by_state[state] = by_state.get(state, 0) | (1 << tp.partition)
        expired = tuple(CommitEvent(-1, -1, mask, True, STATE_CODES[state]) for state, mask in sorted(by_state.items()))
        return self._after_coordinator(s2, coord, log, before, s2.net, replies, expired, handed, dropped)

    def _receive(self, s, m, cid):
        resp, net = s.net.take(RESP, m, cid)
        mem = s.members[m].copy()
        reqs = mem.on_response(cid, resp, s.now)
        reqs = reqs + mem.poll(s.now)        # responses are handled inside the application's poll()
        conns = _reconnect(s.conns, m, s.members[m], mem, cid)
        answers = s.answers if mem.alive else _set(s.answers, m, None)
        handed = self._handover(m, s.members[m], mem)
        dropped = self._abandon(m, s.members[m], mem, resp)
        fenced = self._fenced(m, s.members[m], mem, cid, resp)
        f = s.members[m].inflight.get(cid)
        hb_ok = cid if isinstance(resp, HeartbeatResponse) and f is not None and (
            resp.error in (E.NONE, E.REBALANCE_IN_PROGRESS)
            or (resp.error in FENCING_ERRORS and f.sent != s.members[m].generation)) else None
        return self._build(s, members=_set(s.members, m, mem), changed=(m,), net=net.send(m, reqs, conns[m]),
                           conns=conns, answers=answers, hb_ok=hb_ok,
                           last=StepInfo(handovers=handed, abandoned=dropped, fenced=fenced)
                           if handed or dropped or fenced else None)

    @staticmethod
    def _fenced(m, old, new, cid, resp) -> tuple:
        """The answer handled in this step says the coordinator fenced the process out of the generation it
        still holds (the request was sent under it): a Fence event, with whether the process kept it."""
        f = old.inflight.get(cid)
        err = getattr(resp, "error", None)
        if isinstance(resp, OffsetCommitResponse):
            err = next((e for _tp, e in resp.partition_errors if e != E.NONE), E.NONE)
        if (f is None or err not in FENCING_ERRORS or not old.alive or f.sent != old.generation
                or old.generation.generation_id < 0):
            return ()
        kept = new.alive and new.incarnation == old.incarnation and new.generation == old.generation   # alive: not fatal
        return (Fence(m, old.generation.generation_id, f.kind, str(err), kept),)

    def _abandon(self, m, old, new, resp) -> tuple:
        """The process gave up the generation it held in this step while owning partitions, and why:
        the error of the response it handled (`resp`), "left" when it dropped its member id itself
        (close, poll timeout) without an answer telling it to, else "none"."""
        if (not old.alive or not new.alive or new.incarnation != old.incarnation or not old.owned
                or old.generation.generation_id < 0 or new.generation.generation_id >= 0):
            return ()
        cause = None
        if resp is not None:
            cause = getattr(resp, "error", None)
            if isinstance(resp, OffsetCommitResponse):
                cause = next((err for _tp, err in resp.partition_errors if err != E.NONE), E.NONE)
        if cause is None or cause == E.NONE:
            cause = "left" if (old.generation.member_id and not new.generation.member_id) else "none"
        return (Abandon(m, old.generation.generation_id, self._masks(old.owned), str(cause)),)

    def _handover(self, m, old, new) -> tuple:
        """A revocation (not a loss) in this step that follows the acknowledgement of the commit the
        member sent to hand the partitions over: onJoinPrepare's auto-commit, or the commitSync of
        its revocation callback. Outcomes are read from the results recorded in this very step
        (plus the prepare commit's outcome already in the member's state)."""
        revoked = old.owned - new.owned
        if not revoked or not new.alive or new.generation.generation_id < 0 or not new.generation.member_id:
            return ()
        fresh = new.commit_results[len(old.commit_results):]
        acked = False
        if old.prepare_commit is not None and new.prepare_commit is None:
            cid, outcome = old.prepare_commit
            outcomes = [o for c, _purpose, o in fresh if c == cid]
            acked = (outcomes[-1] if outcomes else outcome) == "ok"
        if not acked and old.blocked is not None and new.blocked is None and old.blocked.cid is not None:
            acked = any(c == old.blocked.cid and o == "ok" for c, _purpose, o in fresh)
        if not acked:
            return ()
        consumed = [-1] * self.p
        for tp, pos in old.positions.items():
            if tp in revoked and tp.topic == TOPIC and 0 <= tp.partition < self.p:
                consumed[tp.partition] = pos
        return (Handover(m, self._masks(revoked), tuple(consumed)),)

    def _route(self, net, replies):
        for r in replies:
            slot = r.correlation_id // CID_STRIDE - 1
            if 0 <= slot < self.n:
                net = net.reply(slot, r.correlation_id, r.response)
        return net

    def _accepted(self, req, m, replies):
        mask = 0
        for r in replies:
            if r.correlation_id == req.correlation_id and isinstance(r.response, OffsetCommitResponse):
                for tp, err in r.response.partition_errors:
                    if err == E.NONE and tp.topic == TOPIC:
                        mask |= 1 << tp.partition
        if not mask:
            return ()
        if req.generation_id < 0 and not req.member_id:
            return (CommitEvent(-1, -1, mask),)
        return (CommitEvent(m, req.generation_id, mask),)

    def _after_coordinator(self, s, coord, log, before, net, replies, accepted, handovers=(), abandoned=()):
        """Common tail of steps that ran the coordinator: ghosts (delivered, persisted, epoch)."""
        after = coord.group(self.group_id)
        delivered = s.delivered
        gepoch = s.gepoch
        if before is not None and after is None:      # the group was deleted: a new group may start at 0
            gepoch += 1
            delivered = ()
        if after is not None and any(isinstance(r.response, SyncGroupResponse) and r.response.error == E.NONE
                                     for r in replies):
            asg = self._assignment(after)
            entry = (after.generation_id, asg)
            if entry not in delivered:
                delivered = delivered + (entry,)
        persisted = s.persisted
        if log.last is not None and log.last.group_id == self.group_id:
            persisted = self._persisted(log.last)
        passed = _passed(coord.last_transitions, self.group_id, before, after)
        coord._log = None   # the recording log belongs to this step only
        answers, counts = s.answers, s.counts
        if self.synchronous:    # ghosts only refinement reads: elsewhere they would only split equal states
            answers = self._answers(s, after, replies)
            for ev in accepted:
                if ev.member >= 0:
                    counts = tuple(c + ((ev.partitions >> q) & 1) for q, c in enumerate(counts))
        return self._build(s, coord=coord, group=after, net=net, delivered=delivered, persisted=persisted,
                           gepoch=gepoch, answers=answers, counts=counts,
                           last=StepInfo(accepted, passed, tuple(replies), handovers, abandoned))

    def _answers(self, s, g, replies) -> tuple:
        """Ghost for refinement: per slot, the coordinator's last group-protocol answer to the current
        process incarnation, as (kind, generation, owned mask, acted generation) with kind "idle"
        (an error: it must rejoin), "join" (JoinGroup answered), "sync" (SyncGroup answered with an
        assignment); None until the coordinator first holds this incarnation as a member. Derived
        only from the replies the coordinator produced (responses the process would ignore do not
        count) and from its membership."""
        answers = list(s.answers)
        for m in range(self.n):
            if answers[m] is None and g is not None and s.started[m] and s.members[m].alive:
                if _held(g, s.members[m]) is not None:
                    answers[m] = ("idle", -1, 0, -1)
        for r in replies:
            m = r.correlation_id // CID_STRIDE - 1
            if not 0 <= m < self.n or answers[m] is None or not s.members[m].wants(r.correlation_id):
                continue
            kind, gen, _owned, acted = answers[m]
            resp = r.response
            if isinstance(resp, JoinGroupResponse):
                if resp.error == E.NONE:
                    answers[m] = ("join", resp.generation_id, 0, acted)
                elif resp.error != E.MEMBER_ID_REQUIRED and kind != "sync":
                    # (a stable member's failed rejoin stays stable: the model's rejoin is the JoinGroup
                    # the coordinator accepts, after a heartbeat error or a lost message)
                    answers[m] = ("idle", gen, 0, acted)
            elif isinstance(resp, SyncGroupResponse):
                if resp.error == E.NONE and g is not None:
                    try:
                        mask = self._masks(decode_assignment(resp.assignment)) if resp.assignment else 0
                    except CodecError:
                        mask = 0
                    answers[m] = ("sync", g.generation_id, mask, g.generation_id)
                else:
                    answers[m] = ("idle", gen, 0, acted)
            elif isinstance(resp, OffsetCommitResponse):
                if any(err != E.NONE for _tp, err in resp.partition_errors):
                    answers[m] = ("idle", gen, 0, acted)
            elif kind == "join" and isinstance(resp, HeartbeatResponse) and resp.error in _FENCING_ERRORS:
                # a member waiting for its SyncGroup answer learns it is out (its SyncGroup was lost)
                answers[m] = ("idle", gen, 0, acted)
        return tuple(answers)

    def _build(self, s, *, coord=None, group=_UNSET, members=None, changed=(), snaps=None, net=None, started=None, paused=None,
               budget=None, delivered=None, persisted=None, gepoch=None, conns=None, answers=None, counts=None,
               last=None, defer=False, hb_ok=None):
        coord = s.coord if coord is None else coord
        csnap = s._csnap if coord is s.coord else None      # the new coordinator's: computed when asked
        members = s.members if members is None else members
        msnaps = s.msnaps
        if changed:
            ms = list(msnaps)
            for m in changed:
                ms[m] = snaps[m] if snaps is not None and m in snaps else members[m].snapshot()
            msnaps = tuple(ms)
        net = s.net if net is None else net
        if conns is not None and conns != s.conns:
            net, conns = _renumber(net, conns)
        if not defer:
            for m in range(self.n):
                if net.responses[m]:
                    net = net.drop_responses(m, members[m].wants)
        out = WorldState(coord, csnap, members, msnaps, net,
                         s.started if started is None else started,
                         s.paused if paused is None else paused,
                         s.budget if budget is None else budget,
                         s.delivered if delivered is None else delivered,
                         s.persisted if persisted is None else persisted,
                         s.gepoch if gepoch is None else gepoch,
                         s.conns if conns is None else conns,
                         s.answers if answers is None else answers,
                         s.counts if counts is None else counts,
                         last if last is not None else _NO_STEP,
                         self._hb_failures(s, members, changed, coord.now, hb_ok))
        if coord is not s.coord:
            out._g = group          # the view the step already took of the new coordinator (or _UNSET)
        else:
            out._g = s._g
            out._cpart = s._cpart
            if s._cviews is not None:
                cv = s._cviews
                if changed:
                    cv = list(cv)
                    for m in changed:
                        cv[m] = None
                    cv = tuple(cv)
                out._cviews = cv
        polls = s._polls
        if polls is not None and coord.now == s.coord.now:
            old = s.members
            out._polls = [t if t is not None and members[m] is old[m] else None for m, t in enumerate(polls)]
        return out

    def _hb_failures(self, s, members, changed, now, hb_ok):
        """WorldState.hbfail after a step: a member whose Heartbeat in flight (all but `hb_ok`, answered without
        error, REBALANCE_IN_PROGRESS or a stale fencing error) is gone from its in-flight table while it keeps its
        incarnation and generation had that heartbeat fail (error answer, request or session timeout, disconnect);
        kept only while it matters: same generation and retry.backoff.ms not passed."""
        old = s.hbfail
        if old is None and not changed:
            return None
        recs = list(old) if old is not None else [None] * self.n
        for m in changed:
            pm, mem = s.members[m], members[m]
            if pm is mem:
                continue
            if not mem.alive or mem.incarnation != pm.incarnation or mem.generation != pm.generation:
                recs[m] = None
            elif mem.state in ("COMPLETING_REBALANCE", "STABLE") and any(
                    f.kind == "heartbeat" and cid != hb_ok and cid not in mem.inflight for cid, f in pm.inflight.items()):
                recs[m] = (mem.now, mem.incarnation, mem.generation)   # (a tick builds twice: first at the old time)
        for m, r in enumerate(recs):
            if r is not None and now >= r[0] + members[m].config.retry_backoff_ms:
                recs[m] = None
        return None if all(r is None for r in recs) else tuple(recs)

    def _check_heartbeat_backoff(self, prev, action, nxt) -> Optional[str]:
        """AbstractCoordinator.HeartbeatThread: after a failed heartbeat (Heartbeat.failHeartbeat) the next one waits
        retry.backoff.ms; the member stays in its generation. Reads the failure the world recorded (WorldState.hbfail)
        and the send times of the heartbeats sent in this step."""
        recs = prev.hbfail
        if recs is None:
            return None
        for m, r in enumerate(recs):
            if r is None:
                continue
            pm, mem = prev.members[m], nxt.members[m]
            if pm is mem or mem.incarnation != r[1] or mem.generation != r[2]:
                continue
            backoff = mem.config.retry_backoff_ms
            for cid, f in mem.inflight.items():
                if f.kind == "heartbeat" and cid not in pm.inflight and f.sent_at < r[0] + backoff:
                    return (f"m{m} sent a Heartbeat at {f.sent_at}, {f.sent_at - r[0]} ms after its previous heartbeat "
                            f"failed at {r[0]} (retry.backoff.ms {backoff})")
        return None

    # --- reading the coordinator --------------------------------------------------------------------
    @staticmethod
    def slot_of(client_id: str) -> int:
        return int(client_id[1:]) if client_id[:1] == "m" and client_id[1:].isdigit() else -1

    def _masks(self, partitions) -> int:
        mask = 0
        for tp in partitions:
            if tp.topic == TOPIC and 0 <= tp.partition < self.p:
                mask |= 1 << tp.partition
        return mask

    def _assignment(self, g) -> Optional[tuple]:
        """The stored assignment of the group's generation, per slot (None when nothing is stored)."""
        out = [0] * self.n
        stored = False
        for mv in g.members.values():
            if not mv.assignment:
                continue
            stored = True
            slot = self.slot_of(mv.client_id)
            try:
                parts = decode_assignment(mv.assignment)
            except CodecError:
                continue
            if 0 <= slot < self.n:
                out[slot] |= self._masks(parts)
        return tuple(out) if stored else None

    def _persisted(self, rec: GroupMetadataRecord) -> tuple:
        mask, leader, asg, stored = 0, -1, [0] * self.n, False
        for mr in rec.members:
            slot = self.slot_of(mr.client_id)
            if not 0 <= slot < self.n:
                continue
            mask |= 1 << slot
            if mr.member_id == rec.leader_id:
                leader = slot
            if mr.assignment:
                stored = True
                try:
                    asg[slot] |= self._masks(decode_assignment(mr.assignment))
                except CodecError:
                    pass
        return (rec.generation_id, mask, leader, tuple(asg) if stored else None)

    # --- views for the invariants -------------------------------------------------------------------
    def view(self, s: WorldState) -> GroupView:
        v = s._view
        if v is not None:
            return v
        cp = s._cpart
        if cp is None:
            cp = s._cpart = self._coord_part(s.group(self.group_id))
        cv = s._cviews
        if cv is None or None in cv:
            cv = tuple(c if c is not None else self._client_view(s, m)
                       for m, c in enumerate(cv or (None,) * self.n))
            s._cviews = cv
        state, gen, leader, members, asg, offsets = cp
        v = s._view = GroupView(s.gepoch, state, gen, leader, members, asg, offsets, cv, s.delivered)
        return v

    def _coord_part(self, g) -> tuple:
        if g is None:
            return (EMPTY, 0, -1, 0, None, (0,) * self.p)
        leader = -1
        members = 0
        for mid, mv in g.members.items():
            slot = self.slot_of(mv.client_id)
            if 0 <= slot < self.n:
                members |= 1 << slot
                if mid == g.leader_id:
                    leader = slot
        if g.leader_id is not None and leader < 0:
            leader = self.n          # a leader id that is no member: a slot outside every mask
        asg = self._assignment(g) if g.state in ("Stable", "PreparingRebalance") else None
        offsets = tuple(_offset(g, (TOPIC, q)) for q in range(self.p))
        return (STATE_CODES[g.state], g.generation_id, leader, members, asg, offsets)

    def _client_view(self, s, m) -> ClientView:
        mem = s.members[m]
        alive = s.started[m] and mem.alive
        owned = self._masks(mem.owned) if alive else 0
        acted = mem.sticky_memory[1] if (alive and mem.sticky_memory is not None) else -1
        can = alive and bool(owned) and self._coordinator_accepts(s, mem)
        return ClientView(alive, mem.generation.generation_id if alive else -1, acted, owned, can)

    def _coordinator_accepts(self, s, mem) -> bool:
        """Would the coordinator accept an offset commit this member could send right now? (asked
        of a throw-away copy of the coordinator, so every behaviour is taken into account)"""
        g = mem.generation_if_stable()
        if g is None:
            return False
        grp = s.group(self.group_id)
        if (grp is not None and g.generation_id == grp.generation_id and g.member_id in grp.members
                and grp.state in ("Stable", "PreparingRebalance")):
            return True      # Kafka's rule for a member of the current generation (shortcut)
        trial = s.coord.copy(log=_RecordingLog())
        parts = tuple(sorted(mem.owned))
        req = OffsetCommitRequest(self.group_id, g.generation_id, g.member_id, mem.config.instance_id,
                                  tuple((tp, OffsetAndMetadata(0)) for tp in parts), correlation_id=0)
        replies = trial.handle(req)
        return bool(replies) and all(err == E.NONE for r in replies
                                     if isinstance(r.response, OffsetCommitResponse)
                                     for _tp, err in r.response.partition_errors)

    def step_views(self, prev: WorldState, action, nxt: WorldState):
        """(view before, view after with the step's events); the engines check every step invariant
        on the same step in a row, so the last answer is kept (one pair: no state is kept alive)."""
        last = self._last_step_views
        if last is not None and last[0] is prev and last[1] is nxt:
            return last[2]
        out = self._last_step_views = (prev, nxt, self._step_views(prev, nxt))
        return out[2]

    def _step_views(self, prev: WorldState, nxt: WorldState):
        a = self.view(prev)
        b = self.view(nxt)
        info = nxt.last
        if info is not None and (info.accepted or info.passed or info.handovers or info.abandoned or info.fenced):
            b = b._replace(accepted=info.accepted, passed=info.passed, handovers=info.handovers,
                           abandoned=info.abandoned, fenced=info.fenced)
        if nxt.gepoch != prev.gepoch:
            # the group was deleted (offset expiry of an Empty group): what the old group delivered
            # does not constrain the new one, which starts again at generation 0
            a = a._replace(delivered=())
        return a, b

    # --- world-specific invariants -----------------------------------------------------------------
    def _check_partition(self, s) -> Optional[str]:
        n = self.coord_config.offsets_partitions
        p = s.coord.internal.partition_of(self.group_id)
        if not 0 <= p < n:
            return f"group {self.group_id!r} is coordinated by partition {p}, outside 0..{n - 1}"
        return None

    def _check_fetch_reads_committed(self, prev, action, nxt) -> Optional[str]:
        """Read your commits: the coordinator answers an OffsetFetch from the group's committed offsets, as
        they stand when it handles the request (GroupMetadataManager.getOffsets; a partition with a commit
        still pending is answered UNSTABLE_OFFSET_COMMIT under require_stable, an error, so not judged)."""
        info = nxt.last
        if action[0] != "deliver" or info is None:
            return None
        g = nxt.group(self.group_id)
        committed = {} if g is None else g.offsets
        for r in info.replies:
            resp = r.response
            if not isinstance(resp, OffsetFetchResponse) or resp.error != E.NONE:
                continue
            for part in resp.partitions:
                if part.error != E.NONE:
                    continue
                co = committed.get(part.partition)
                want = -1 if co is None else co.offset
                if part.offset != want:
                    return f"OffsetFetch answered {part.partition} at {part.offset}, the group's committed offset is {want}"
        return None

    def _fetch_beside_pending_commit(self, s) -> bool:
        """Some member has an OffsetFetch in flight that it sent after an OffsetCommit still in flight (correlation
        ids grow with each request a member sends)."""
        for m in range(self.n):
            inflight = s.members[m].inflight
            commits = [cid for cid, f in inflight.items() if f.kind == "commit"]
            if commits and any(f.kind == "fetch" and cid > min(commits) for cid, f in inflight.items()):
                return True
        return False

    def _check_fetch_not_repeated(self, s) -> Optional[str]:
        """Kafka's ConsumerCoordinator.fetchCommittedOffsets keeps the OffsetFetch it sent as
        `pendingCommittedOffsetRequest` and, while it is unanswered, polls that future again whenever
        `sameRequest(partitions, generation)` holds instead of sending a new one: a member never has two
        OffsetFetch requests of the same partitions and generation in flight. Reads each member's in-flight
        requests (kind "fetch": sent generation, partitions)."""
        for m in range(self.n):
            seen = set()
            for cid, f in sorted(s.members[m].inflight.items()):
                if f.kind != "fetch":
                    continue
                key = (f.sent, tuple(sorted(f.payload)))
                if key in seen:
                    return (f"m{m} sent OffsetFetch {cid} of {[str(tp) for tp in key[1]]} under generation "
                            f"{f.sent.generation_id} while an identical one was still in flight")
                seen.add(key)
        return None

    def _check_static_unique(self, s) -> Optional[str]:
        g = s.group(self.group_id)
        if g is None:
            return None
        seen = {}
        for mid, mv in g.members.items():
            if mv.group_instance_id is None:
                continue
            other = seen.setdefault(mv.group_instance_id, mid)
            if other != mid:
                return f"instance {mv.group_instance_id} held by two members: {other} and {mid}"
        return None

    def _check_member_id_shape(self, s) -> Optional[str]:
        """Reads the coordinator's members (id, client id, group.instance.id). Clients treat ids as opaque,
        but a user comparing brokers reads them, and Kafka always makes them `prefix-UUID` (v4)."""
        g = s.group(self.group_id)
        if g is None:
            return None
        for mid, mv in g.members.items():
            prefix = mv.group_instance_id if mv.group_instance_id is not None else mv.client_id
            if not (mid.startswith(prefix + "-") and _UUID4.fullmatch(mid[len(prefix) + 1:])):
                return f"member id {mid!r} is not {prefix!r} + '-' + a version-4 UUID"
        return None

    def _check_reset_owns_nothing(self, s) -> Optional[str]:
        """Every world step ends with the running members' poll() (responses and ticks are handled
        inside it), and onJoinPrepare declares all partitions lost when the generation is reset."""
        for m in range(self.n):
            mem = s.members[m]
            if (s.started[m] and mem.alive and not s.paused[m] and mem.owned
                    and mem.generation.generation_id < 0 and mem.blocked is None):
                return (f"m{m} has no generation (member id {mem.generation.member_id!r}) but still owns "
                        f"{_parts(self._masks(mem.owned))}")
        return None

    def _check_assigned(self, s) -> Optional[str]:
        g = s.group(self.group_id)
        if g is None or g.state != "Stable" or len(g.members) > self.p or self.params["protocol"] != "eager":
            return None
        for mid, mv in sorted(g.members.items()):
            parts = ()
            try:
                parts = decode_assignment(mv.assignment) if mv.assignment else ()
            except CodecError:
                pass
            if not parts:
                return f"member {mv.client_id} ({mid}) is in Stable generation {g.generation_id} with an empty assignment"
        return None

    # --- reports ------------------------------------------------------------------------------------
    def participants(self):
        return tuple(f"member m{m}" for m in range(self.n)) + ("coordinator",)

    def arrow(self, action):
        kind = action[0]
        if kind == "deliver":
            return (f"member m{action[1]}", "coordinator")
        if kind == "receive":
            return ("coordinator", f"member m{action[1]}")
        if kind == "lose":
            src, dst = (f"member m{action[2]}", "coordinator")
            return (src, dst) if action[1] == REQ else (dst, src)
        if kind in MEMBER_ACTIONS:
            return (f"member m{action[1]}", f"member m{action[1]}")
        if kind in ("tick", "settle"):
            return ("coordinator", "coordinator")
        return None

    def describe(self, s: WorldState) -> dict:
        g = s.group(self.group_id)
        group = None
        if g is not None:
            asg = self._assignment(g)
            group = {
                "state": g.state, "generation": g.generation_id,
                "leader": self._name_of(g, g.leader_id),
                "members": {f"{mv.client_id}": {"member_id": mid, "instance": mv.group_instance_id,
                                                "awaiting_join": mv.awaiting_join, "awaiting_sync": mv.awaiting_sync}
                            for mid, mv in sorted(g.members.items())},
                "assignment": None if asg is None else {f"m{i}": _parts(x) for i, x in enumerate(asg) if x},
                "committed": {f"p{q}": _offset(g, (TOPIC, q)) for q in range(self.p)},
            }
        members = {}
        for m in range(self.n):
            mem = s.members[m]
            members[f"m{m}"] = {
                "process": ("not started" if not s.started[m] else "paused" if s.paused[m] and mem.alive
                            else "running" if mem.alive else ("fatal: " + mem.fatal if mem.fatal else "down")),
                "state": mem.state, "generation": mem.generation.generation_id, "member_id": mem.generation.member_id,
                "owned": _parts(self._masks(mem.owned)), "consuming": _parts(self._masks(mem.consuming)),
                "positions": {f"p{tp.partition}": o for tp, o in sorted(mem.positions.items())},
                "in_flight": sorted(f"{f.kind}#{cid}" for cid, f in mem.inflight.items()),
            }
        net = [f"m{m}->coordinator {type(e[1]).__name__}#{e[0]}" for m in range(self.n) for e in s.net.requests[m]]
        net += [f"coordinator->m{m} {type(e[1]).__name__}#{e[0]}" for m in range(self.n) for e in s.net.responses[m]]
        ev, fa, lo, ti, co, se = s.budget
        return {"now_ms": s.now, "group": group, "members": members, "in_flight": net,
                "delivered": [{"generation": gen,
                               "assignment": None if a is None else {f"m{i}": _parts(x) for i, x in enumerate(a) if x}}
                              for gen, a in s.delivered],
                "budget": {"events": ev, "faults": fa, "losses": lo, "ticks": ti, "commits": co, "settle_ticks": se}}

    @staticmethod
    def _name_of(g, member_id):
        if member_id is None:
            return None
        mv = g.members.get(member_id)
        return mv.client_id if mv is not None else f"{member_id} (not a member)"

    # --- liveness (invariants/liveness.py; checked by model/search/liveness.py) ------------------------------
    def liveness(self):
        """The group reaches Stable with exactly its running members once perturbations stop: faults (crash,
        pause, lose) and a crashed process's return (restart) are not fair moves; a pause ends (resume is
        fair: time passes here only when nothing else can happen, so a pause that never ended would stop
        the clock that expires its session)."""
        from kverify.invariants import liveness as L

        def pending(s: WorldState):
            return L.group_pending(self.group_live_view(s))
        return (L.Eventually(L.GROUP_STABLE, L.GROUP_STABLE_STATEMENT, pending,
                             excluded=lambda a: a[0] == "restart"),)

    def group_live_view(self, s: WorldState):
        """invariants/liveness.py `GroupLiveView`: the coordinator's group state, the running member slots
        (paused ones included), and the slots that are members of the group."""
        from kverify.invariants.liveness import GroupLiveView

        g = s.group(self.group_id)
        live = tuple(m for m in range(self.n) if s.started[m] and s.members[m].alive)
        members = () if g is None else tuple(sorted(self.slot_of(mv.client_id) for mv in g.members.values()))
        return GroupLiveView("Dead" if g is None else g.state, live, members)

    # --- settled, healthy states --------------------------------------------------------------------
    def is_quiescent_good(self, s: WorldState) -> bool:
        good = s._good
        if good is None:
            good = s._good = self._quiescent_good(s)     # asked by `actions` (settle) and the explorer
        return good

    def _quiescent_good(self, s: WorldState) -> bool:
        live = [m for m in range(self.n) if s.started[m] and s.members[m].alive]
        if any(s.paused[m] for m in live):
            return False
        g = s.group(self.group_id)
        if not live:
            return g is None or g.state in ("Empty", "Dead")
        if g is None or g.state != "Stable":
            return False
        asg = self._assignment(g)
        if asg is None:
            return False
        members = {self.slot_of(mv.client_id) for mv in g.members.values()}
        if members != set(live):
            return False
        covered = 0
        for m in live:
            mem = s.members[m]
            if mem.state != "STABLE" or mem.generation.generation_id != g.generation_id:
                return False
            if self._masks(mem.owned) != asg[m]:
                return False
            covered |= asg[m]
        return covered == self.all_parts


# --- helpers ------------------------------------------------------------------------------------------
def _held(g, mem):
    """The coordinator's member (MemberView) for this process, or None: by its member id, or, for a
    static member that has no member id yet (its first JoinGroup is not answered), by its instance."""
    if g is None:
        return None
    mid = mem.generation.member_id
    if not mid and mem.config.instance_id is not None:
        mid = g.static_members.get(mem.config.instance_id)
    return g.members.get(mid) if mid else None


def _straggler(msg) -> bool:
    """Synchronous mode: a message that may be lost or stay in flight while timers fire. JoinGroup,
    SyncGroup and LeaveGroup messages, except a SyncGroup answer with an assignment: the model hands
    that over atomically, and a member that never gets it rejoins unprompted after its request
    timeout, which the model's stable members never do. Not an OffsetCommit request: the model's
    commits always arrive (no step drops a commit in flight while its process lives on). Nothing
    else: a member waiting in vain for a heartbeat, fetch or commit answer disconnects when its
    timer gives up, abandoning a SyncGroup parked at the coordinator, and its rejoin (new metadata:
    its generation) rebalances a CompletingRebalance group, which the model's rejoin never does."""
    if isinstance(msg, SyncGroupResponse):
        return msg.error != E.NONE
    if isinstance(msg, JoinGroupRequest) and not msg.member_id:
        # one that arrives after its member gave up on it leaves a pending member behind (its
        # MEMBER_ID_REQUIRED answer is unwanted), blocking the join phase until it expires
        return False
    return isinstance(msg, _STRAGGLERS)


def _renumber_cids(key: tuple, n: int) -> tuple:
    """`key` (WorldState._compute_key) with the correlation ids of each slot renamed in order (see
    GroupWorld.canonical). Where they live: the member snapshot (next id, join_cid, in-flight table,
    blocked commit, onJoinPrepare commit), the slot's network queues (requests also carry it as
    their last field, dropped here), and the coordinator's parked JoinGroup/SyncGroup per member."""
    csnap, msnaps, (requests, responses) = key[0], key[1], key[2]
    groups = csnap[1]
    parked = [cid for g in groups for cm in g[7] for cid in (cm[10], cm[11]) if cid is not None]
    ren = {}
    new_msnaps = []
    for m in range(n):
        ms = msnaps[m]
        ids = [cid for cid, _f in ms[24]]
        ids += [e[0] for e in requests[m]]
        ids += [e[0] for e in responses[m]]
        b, pc = ms[25], ms[27]
        if ms[10] is not None:
            ids.append(ms[10])
        if b is not None and b.cid is not None:
            ids.append(b.cid)
        if pc is not None and pc[0] is not None:
            ids.append(pc[0])
        base = (m + 1) * CID_STRIDE
        if parked:
            ids += [cid for cid in parked if base < cid < base + CID_STRIDE]
        ids = sorted(set(ids)) if len(ids) > 1 else ids
        for i, cid in enumerate(ids, 1):
            ren[cid] = base + i
        new_msnaps.append(
            (ms[0], base + len(ids) + 1) + ms[2:10] + (ren.get(ms[10]),) + ms[11:24]
            + (tuple([(ren[cid], f) for cid, f in ms[24]]),
               None if b is None else b[:-1] + (ren.get(b.cid),), ms[26],
               None if pc is None else (ren.get(pc[0]), pc[1])) + ms[28:])
    reqs = tuple([tuple([(ren[e[0]], e[1][:-1], e[2]) for e in q]) if q else q for q in requests])
    resps = tuple([tuple([(ren[e[0]], e[1]) for e in q]) if q else q for q in responses])
    if parked:
        groups = tuple([g[:7] + (tuple([cm[:10] + (ren.get(cm[10]), ren.get(cm[11])) + cm[12:] for cm in g[7]]),)
                        + g[8:] for g in groups])
        csnap = (csnap[0], groups) + csnap[2:]
    return (csnap, tuple(new_msnaps), (reqs, resps)) + key[3:]


def _renumber(net: Net, conns: tuple):
    """Connection numbers only tell connections with requests in flight apart: number them 0.. in
    order of age, the current one last (equal situations give equal states)."""
    reqs = list(net.requests)
    out = list(conns)
    for m, q in enumerate(reqs):
        order = []
        for e in q:
            if e[2] not in order:
                order.append(e[2])
        if conns[m] not in order:
            order.append(conns[m])
        if order == list(range(len(order))):
            continue
        ren = {c: i for i, c in enumerate(order)}
        reqs[m] = tuple((e[0], e[1], ren[e[2]]) for e in q)
        out[m] = ren[conns[m]]
    return Net(tuple(reqs), net.responses), tuple(out)


def _reconnect(conns: tuple, m: int, old, new, answered) -> tuple:
    """A member whose in-flight requests vanished without an answer lost its connection (request
    timeout, disconnect, crash, close): what it sends next goes on a new connection, which the old
    connection's requests still in flight do not have to precede."""
    if old.inflight and any(cid not in new.inflight and cid != answered for cid in old.inflight):
        return _set(conns, m, conns[m] + 1)
    return conns


def _set(t: tuple, i: int, value) -> tuple:
    return t[:i] + (value,) + t[i + 1:]


def _parts(mask: int) -> list:
    return [f"p{q}" for q in range(mask.bit_length()) if (mask >> q) & 1]


def _offset(g, tp) -> int:
    for k, co in g.offsets.items():
        if k.topic == tp[0] and k.partition == tp[1]:
            return co.offset
    return 0


def _passed(transitions, group_id, before, after) -> tuple:
    """The group states one step passed through strictly between its start and its end, read from the
    coordinator's journal of the transitions it really made (`GroupCoordinator.last_transitions`), not
    inferred: valid-state-transition and generation-monotonicity judge facts. A journal that does not
    start where the step started (or end where it ended) keeps its own ends, so the invariant sees them."""
    states = []
    for gid, src, dst in transitions:
        if gid != group_id:
            continue
        src, dst = STATE_CODES[src], STATE_CODES[dst]
        if not states or states[-1] != src:
            states.append(src)
        states.append(dst)
    start = STATE_CODES[before.state] if before is not None else EMPTY
    if states and states[0] == start:
        states = states[1:]
    if states and after is not None and states[-1] == STATE_CODES[after.state]:
        states = states[:-1]
    return tuple(states)
