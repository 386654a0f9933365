"""The abstract group model: classic-protocol membership, rebalancing and offset commits.

Why it exists: the coordinator in impl/ is too detailed to explore exhaustively; this model keeps
only what the group properties (invariants/group.py) talk about, with Kafka's rules
(/work/shared/reference/coordinator.md), so that 2-3 members and 1-2 partitions explore
exhaustively in seconds and every historical behaviour it carries yields a shortest trace.
specs/GroupMembership.tla states the same rules in TLA+, action for action (one disjunct of `Next`
per entry of `ACTIONS` below, same name in CamelCase); kverify/tla compares the two state sets.

What is modelled. Each request is handled atomically together with the response that the
coordinator produces for it (the impl world explores the network separately). Members are slots
0..n-1 with a client status (down, idle = must (re)join, joining = JoinGroup parked, syncing = has
its JoinGroup answer, sync-wait = SyncGroup parked, stable = holds an assignment) and a flag
(running, paused = the whole process is frozen, stalled = it never sends SyncGroup although its
heartbeat thread keeps the session alive). The coordinator follows coordinator.md: new members
trigger a rebalance (§3.2.5), a rebalance from Empty only ends when the initial delay fires (§3.7),
otherwise as soon as every member rejoined (§3.6.1) or when the join window times out (dynamic
members that did not rejoin are dropped, §3.6.2a); the generation grows by one at every completed
join, also when it ends Empty (§3.6.2e); the leader is kept if it rejoined, else the lowest
rejoined slot (tie-break is unspecified in Kafka, §13.3); the leader's SyncGroup persists the
assignment and answers every parked SyncGroup (§4.3); the pending-sync barrier removes members
that never sent SyncGroup (§4.5); session expiry removes crashed/paused members that are not
parked in Join/Sync (§5.3); commits follow §7.1.2 (member and generation checked; accepted in
Stable and PreparingRebalance; REBALANCE_IN_PROGRESS in CompletingRebalance); standalone/admin
commits (generation -1) are accepted only on an Empty group. A coordinator failover reloads the
last persisted group record (§8.6): in-memory generations whose assignment was never persisted
are lost and their numbers reused. The leader assigns partition p to the (p mod k)-th member of
the sorted member list (any deterministic assignor would do; assignors are checked elsewhere).
Eager protocol: a member drops its partitions when it rejoins or is reset.

Commits: a stable member sends its positions under its generation (`commit`); the request travels
on its own and the coordinator handles it later (`commit_arrives`), as an OffsetCommit sent just
before a rebalance, or a TxnOffsetCommit sent through a transactional producer that captured the
consumer's group metadata (exactly-once pipelines), can arrive after the group moved on.

Abstractions (documented simplifications): rebalance timers (join window, pending-sync barrier)
fire only while some awaited member is unresponsive (crashed, paused or stalled): they are long
next to a healthy member's latency, and letting them race healthy members would only add unbounded
rebalance loops (the initial-delay timer always may fire); member ids are slots, and a crashed
process restarts in its slot only after its old session expired; static membership (group.instance.id) and
MEMBER_ID_REQUIRED are not modelled; appends to __consumer_offsets succeed; heartbeats that would
be answered NONE are not steps (they change nothing); offsets are counters (each accepted commit
advances every partition the committer owns by one); a crash or leave drops the process's commit
in flight (its member id dies with it; slots are reused by the next incarnation); the 5-minute
new-member join timeout is not modelled.

Historical behaviours the abstract model has (each yields a shortest counterexample):
- stale-generation-commit: a known member's commit carrying an older generation is accepted
  instead of ILLEGAL_GENERATION (as impl/ does it: member validation still applies), so a commit
  sent in generation g lands after generation g+1 moved the partition -> committed-offset-safety.
- no-generation-bump: a completed join keeps the generation -> generation-monotonicity.
- leader-not-reelected: removing the leader leaves leaderId on it, also through the next
  completed join, as impl/coordinator does it (group.py `maybe_elect_new_joined_leader` keeps a
  departed leader as long as some member rejoined; `remove` does not re-elect) -> leader-in-members.
- kafka-12890-no-sync-barrier: no pending-sync barrier, so a stalled member that heartbeats but
  never syncs leaves the group stuck -> the explorer's recoverability analysis ("recoverable").
- unclean-election (controller): a failover may load the previous record, losing the last append
  (unclean election of the offsets partition) -> committed-offset-safety / generation-monotonicity.
Behaviours that exist only in impl/, because this model abstracts away what they need:
math-abs-coordinator (group-id hashing to offsets partitions), kafka-9801-static-replace-in-
completing and kafka-8500-duplicate-static-member (static membership and member-id replacement),
kafka-13636-expire-while-rebalancing (retention time and offset expiry). `SUPPORTS` lists the
ones above, so the registry refuses the others for this model with one line.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.invariants.core import Sometimes
from kverify.invariants.group import (COMPLETING, EMPTY, PREPARING, STABLE, STATE_NAMES, ClientView,
                                      CommitEvent, GroupView, group_invariants, group_sometimes, stable_with_all,
                                      with_step_events)
from kverify.model.actions import NO_ARGS, Action, ActionTable
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param

PARAMS = {
    "members": Param(2, "consumer processes (slots m0..; not symmetry-reduced: assignment and leader follow slot order)",
                     lo=1, hi=6),
    "partitions": Param(2, "partitions of the subscribed topic", lo=1, hi=6),
    "events": Param(3, "budget of environment events: process starts and graceful leaves", lo=0),
    "faults": Param(1, "budget of faults: crash, pause, stall, coordinator failover", lo=0),
    "commits": Param(2, "budget of offset commit requests (member commits and admin resets)", lo=0),
    "max_generation": Param(4, "no new environment events or faults once the generation reaches this", lo=0),
    "failover": Param(True, "allow coordinator failover (reload from the persisted group record)"),
    "admin": Param(True, "allow admin offset resets (standalone commits, generation -1) on an Empty group"),
}

# client statuses and flags
DOWN, IDLE, JOINING, SYNCING, SYNC_WAIT, CSTABLE = range(6)
STATUS_NAMES = ("down", "idle", "joining", "syncing", "sync-wait", "stable")
RUN, PAUSED, STALLED = 0, 1, 2
FLAG_NAMES = ("running", "paused", "stalled")
# internal coordinator state: PreparingRebalance entered from Empty (initial delay; viewed as PREPARING)
PREP_INITIAL = 5
NO_LEADER = -1
NO_COMMIT = ()            # a client's `inflight` when no OffsetCommit is on its way
NO_ASSIGNMENT = None      # a coordinator's / record's `assignment` when none is stored
NO_EVENTS = ()            # a view's step events (accepted commits, states passed, ...) when there are none

SUPPORTS = frozenset({"stale-generation-commit", "no-generation-bump", "leader-not-reelected",
                      "kafka-12890-no-sync-barrier", "unclean-election"})


# --- the state, named as the protocol names it -------------------------------------------------------
class Coordinator(NamedTuple):
    """The group as the coordinator holds it in memory (GroupMetadata)."""

    state: int              # EMPTY, PREPARING, COMPLETING, STABLE, or PREP_INITIAL (initial delay running)
    generation: int         # generationId
    leader: int             # leaderId as a slot, NO_LEADER for none
    members: int            # bitmask of member slots
    awaiting_join: int      # members whose JoinGroup is parked (awaitingJoinCallback)
    awaiting_sync: int      # members whose SyncGroup is parked (awaitingSyncCallback)
    pending_sync: int       # members that must still send SyncGroup (pendingSyncMembers)
    assignment: Optional[tuple]   # per slot a partition bitmask, NO_ASSIGNMENT when none is stored
    epoch: int              # coordinator load epoch: +1 at every (re)load of the group


class InFlight(NamedTuple):
    """An OffsetCommit on its way to the coordinator."""

    generation: int         # the generation it carries
    partitions: int         # bitmask of the partitions it commits


class Client(NamedTuple):
    """One consumer process (a member slot)."""

    status: int             # DOWN .. CSTABLE
    generation: int         # the generation it would send now (-1: none yet)
    owned: int              # bitmask of the partitions it consumes
    flag: int               # RUN, PAUSED or STALLED
    acted: int              # generation of the last assignment it received (-1: none)
    inflight: tuple         # InFlight, or NO_COMMIT


class GroupRecord(NamedTuple):
    """The last group metadata record appended to __consumer_offsets (what a reload brings back)."""

    generation: int
    members: int
    leader: int
    assignment: Optional[tuple]


class Budget(NamedTuple):
    """What the environment may still do (the bound), plus one ghost."""

    events: int             # process starts and graceful leaves left
    faults: int             # crashes, pauses, stalls and failovers left
    commits: int            # offset commit requests left (member commits and admin resets)
    commit_generation: int  # ghost: highest generation under which a member commit was accepted
                            # (for the `commit-after-rebalance` sometimes property)


class Delivered(NamedTuple):
    """An assignment answered to SyncGroup (kept while a reload could come back to its generation)."""

    generation: int
    assignment: tuple


class LastAppend(NamedTuple):
    """The record and offsets before the last append (unclean-election only: what a failover to a
    replica that missed the append brings back)."""

    record: GroupRecord
    offsets: tuple


class GroupState(NamedTuple):
    coord: Coordinator
    clients: tuple          # Client per slot
    offsets: tuple          # committed offset per partition
    persisted: GroupRecord
    budget: Budget
    delivered: tuple        # Delivered, oldest first, pruned to reloadable generations
    prev: Optional[LastAppend]   # None unless unclean-election is on


# names of a state's top-level fields: the TLA+ variables of specs/GroupMembership.tla (modelVars)
STATE_FIELDS = GroupState._fields
DOWN_CLIENT = Client(DOWN, -1, 0, RUN, -1, NO_COMMIT)
FRESH_CLIENT = Client(IDLE, -1, 0, RUN, -1, NO_COMMIT)     # a process that just started


def make(params: dict, behaviours: frozenset) -> "GroupModel":
    return GroupModel(params, behaviours)


def _lowest(mask: int) -> int:
    """The lowest slot in a bitmask, NO_LEADER when empty."""
    return (mask & -mask).bit_length() - 1 if mask else NO_LEADER


# Hot updates build named tuples with `_new(Cls, (field, ...))`: every field, in declaration order,
# without the class call's Python-level `__new__` (three times cheaper; an exploration builds millions).
_new = tuple.__new__
_KEEP = object()


def _evolve(s: GroupState, coord=None, clients=None, offsets=None, persisted=None, budget=None, delivered=None,
            prev=_KEEP) -> GroupState:
    """`s` with the given fields replaced (GroupState._replace, without its per-call overhead)."""
    return _new(GroupState, (s.coord if coord is None else coord, s.clients if clients is None else clients,
                             s.offsets if offsets is None else offsets, s.persisted if persisted is None else persisted,
                             s.budget if budget is None else budget, s.delivered if delivered is None else delivered,
                             s.prev if prev is _KEEP else prev))


def _set(t: tuple, i: int, value) -> tuple:
    """`t` with item i replaced."""
    out = list(t)
    out[i] = value
    return tuple(out)


def _with(c: Client, status: int, owned: int = 0) -> Client:
    """The client with a new status (and owned partitions), everything else kept."""
    return _new(Client, (status, c.generation, owned, c.flag, c.acted, c.inflight))


def _flagged(c: Client, flag: int) -> Client:
    return _new(Client, (c.status, c.generation, c.owned, flag, c.acted, c.inflight))


def _answered(c: Client) -> Client:
    """The client once the answer to its commit in flight arrived (nothing on its way any more)."""
    return _new(Client, (c.status, c.generation, c.owned, c.flag, c.acted, NO_COMMIT))


def _spend_event(b: Budget) -> Budget:
    return _new(Budget, (b.events - 1, b.faults, b.commits, b.commit_generation))


def _spend_fault(b: Budget) -> Budget:
    return _new(Budget, (b.events, b.faults - 1, b.commits, b.commit_generation))


def _spend_commit(b: Budget) -> Budget:
    return _new(Budget, (b.events, b.faults, b.commits - 1, b.commit_generation))


def _bits_of(mask: int):
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


# --- the actions: one guard and one update each, named as specs/GroupMembership.tla names them ---
# Guards and updates take the model `g` (bounds and behaviours) and the state `s`. "env ok" in a guard
# (`s.coord.generation < g.max_gen`) is the bound: no new environment events or faults from then on.
# A guard is one expression over the state (model/enumerator.py inlines it into the table's enumeration).
def start_guard(g, s, m):
    """A process starts in a free slot."""
    return (s.budget.events > 0 and s.coord.generation < g.max_gen and s.clients[m].status == DOWN
            and not s.coord.members >> m & 1)


def start(g, s, m):
    return g.handle_join(_new(GroupState, (s.coord, _set(s.clients, m, FRESH_CLIENT), s.offsets, s.persisted,
                                           _spend_event(s.budget), s.delivered, s.prev)), m)


def join_guard(g, s, m):
    """An idle running client sends JoinGroup."""
    c = s.clients[m]
    return c.status == IDLE and c.flag == RUN


def join(g, s, m):
    return g.handle_join(s, m)


def rejoin_guard(g, s, m):
    """A stable client's heartbeat gets an error (§5.1): it drops its partitions and rejoins."""
    c = s.clients[m]
    return c.status == CSTABLE and c.flag == RUN and g.heartbeat_error(s.coord, m, c.generation)


def sync_guard(g, s, m):
    """A client holding its JoinGroup answer sends SyncGroup."""
    c = s.clients[m]
    return c.status == SYNCING and c.flag == RUN


def sync(g, s, m):
    return g.handle_sync(s, m)


def commit_guard(g, s, m):
    """The application of a stable client commits its positions (nothing else on its way)."""
    c = s.clients[m]
    return (c.status == CSTABLE and c.flag == RUN and c.owned != 0 and s.budget.commits > 0
            and not c.inflight)


def commit(g, s, m):
    """OffsetCommit (or TxnOffsetCommit through a transactional producer holding the consumer's
    group metadata) sent under the client's generation; `commit_arrives` is when it is handled."""
    c = s.clients[m]
    sending = _new(Client, (c.status, c.generation, c.owned, c.flag, c.acted, _new(InFlight, (c.generation, c.owned))))
    return _new(GroupState, (s.coord, _set(s.clients, m, sending), s.offsets, s.persisted, _spend_commit(s.budget),
                             s.delivered, s.prev))


def commit_arrives_guard(g, s, m):
    return bool(s.clients[m].inflight)


def commit_arrives(g, s, m):
    """The coordinator handles the OffsetCommit in flight (possibly after the group moved on)."""
    c = s.clients[m]
    sent = c.inflight
    if g.commit_verdict(s.coord, m, sent.generation) != "NONE":
        # CommitFailed / RebalanceInProgress: a client still stable in that generation drops
        # its partitions and rejoins; one that already moved on ignores the late answer
        if c.status == CSTABLE and c.generation == sent.generation:
            c = _new(Client, (IDLE, c.generation, 0, c.flag, c.acted, NO_COMMIT))
        else:
            c = _answered(c)
        return _new(GroupState, (s.coord, _set(s.clients, m, c), s.offsets, s.persisted, s.budget, s.delivered, s.prev))
    parts = sent.partitions
    offsets = tuple([o + 1 if parts >> q & 1 else o for q, o in enumerate(s.offsets)])
    b = s.budget
    budget = _new(Budget, (b.events, b.faults, b.commits, max(b.commit_generation, sent.generation)))
    return _new(GroupState, (s.coord, _set(s.clients, m, _answered(c)), offsets, s.persisted, budget, s.delivered,
                             g.before_append(s)))


def admin_reset_guard(g, s, q):
    """An admin resets a committed offset of an Empty group (a standalone commit, generation -1)."""
    return g.admin and s.budget.commits > 0 and s.coord.state == EMPTY and s.offsets[q] != 0


def admin_reset(g, s, q):
    return _new(GroupState, (s.coord, s.clients, _set(s.offsets, q, 0), s.persisted, _spend_commit(s.budget),
                             s.delivered, g.before_append(s)))


def leave_guard(g, s, m):
    """A stable member leaves the group (LeaveGroup) and its process stops."""
    c = s.clients[m]
    return (c.status == CSTABLE and c.flag == RUN and s.budget.events > 0 and s.coord.generation < g.max_gen
            and bool(s.coord.members >> m & 1))


def leave(g, s, m):
    return g.after_removal(_new(GroupState, (g.remove(s.coord, m), _set(s.clients, m, DOWN_CLIENT), s.offsets,
                                             s.persisted, _spend_event(s.budget), s.delivered, s.prev)))


def expire_guard(g, s, m):
    """The session of a crashed or paused member that is not parked in Join/Sync expires (§5.3)."""
    c = s.clients[m]
    coord = s.coord
    return ((c.status == DOWN or c.flag == PAUSED) and bool(coord.members >> m & 1)
            and not (coord.awaiting_join | coord.awaiting_sync) >> m & 1)


def expire(g, s, m):
    return g.after_removal(_new(GroupState, (g.remove(s.coord, m), s.clients, s.offsets, s.persisted, s.budget,
                                             s.delivered, s.prev)))


def crash_guard(g, s, m):
    return s.budget.faults > 0 and s.coord.generation < g.max_gen and s.clients[m].status != DOWN


def crash(g, s, m):
    return _new(GroupState, (s.coord, _set(s.clients, m, DOWN_CLIENT), s.offsets, s.persisted, _spend_fault(s.budget),
                             s.delivered, s.prev))


def pause_guard(g, s, m):
    c = s.clients[m]
    return s.budget.faults > 0 and s.coord.generation < g.max_gen and c.status != DOWN and c.flag == RUN


def pause(g, s, m):
    return _new(GroupState, (s.coord, _set(s.clients, m, _flagged(s.clients[m], PAUSED)), s.offsets, s.persisted,
                             _spend_fault(s.budget), s.delivered, s.prev))


def stall_guard(g, s, m):
    """The process keeps heartbeating but never sends SyncGroup."""
    c = s.clients[m]
    return s.budget.faults > 0 and s.coord.generation < g.max_gen and c.status == SYNCING and c.flag == RUN


def stall(g, s, m):
    return _new(GroupState, (s.coord, _set(s.clients, m, _flagged(s.clients[m], STALLED)), s.offsets, s.persisted,
                             _spend_fault(s.budget), s.delivered, s.prev))


def resume_guard(g, s, m):
    c = s.clients[m]
    return c.status != DOWN and c.flag == PAUSED


def resume(g, s, m):
    return _new(GroupState, (s.coord, _set(s.clients, m, _flagged(s.clients[m], RUN)), s.offsets, s.persisted,
                             s.budget, s.delivered, s.prev))


def join_timeout_guard(g, s):
    """The (initial) join window ends (§3.6.1, §3.7): the initial delay always may; a rebalance's
    window only while some member that did not rejoin is unresponsive."""
    c = s.coord
    return c.state == PREP_INITIAL or (c.state == PREPARING and g.unresponsive(s.clients, c.members & ~c.awaiting_join))


def join_timeout(g, s):
    return g.complete_join(s)


def sync_timeout_guard(g, s):
    """The pending-sync barrier expires (§4.5) while a member that never synced is unresponsive."""
    c = s.coord
    return (not g.no_barrier and (c.state == COMPLETING or c.state == STABLE)
            and g.unresponsive(s.clients, c.pending_sync))


def sync_timeout(g, s):
    """Remove the members that never sent SyncGroup, then rebalance."""
    coord = s.coord
    for m in _bits_of(coord.pending_sync):
        coord = g.remove(coord, m)
    return g.maybe_complete(g.prepare(_evolve(s, coord=coord)))


def failover_guard(g, s):
    """The coordinator moves (offsets partition leader change) and reloads the group."""
    return g.failover and s.budget.faults > 0 and s.coord.generation < g.max_gen


def failover(g, s):
    return g.load(s, s.persisted, s.offsets)


def unclean_failover_guard(g, s):
    """Unclean election of the offsets partition: the new leader misses the last append."""
    return (g.unclean and s.budget.faults > 0 and s.coord.generation < g.max_gen and s.prev is not None
            and s.prev != LastAppend(s.persisted, s.offsets))


def unclean_failover(g, s):
    return g.load(s, s.prev.record, s.prev.offsets)


def _slots(g, s):
    return g.slot_args


def _partitions(g, s):
    return g.part_args


def _none(g, s):
    return NO_ARGS


ACTIONS = ActionTable([
    Action("commit_arrives", commit_arrives_guard, commit_arrives, _slots),
    Action("start", start_guard, start, _slots),
    Action("expire", expire_guard, expire, _slots),
    Action("join", join_guard, join, _slots),
    Action("sync", sync_guard, sync, _slots),
    Action("rejoin", rejoin_guard, join, _slots),
    Action("commit", commit_guard, commit, _slots),
    Action("leave", leave_guard, leave, _slots),
    Action("pause", pause_guard, pause, _slots, fault=True),
    Action("stall", stall_guard, stall, _slots, fault=True),
    Action("resume", resume_guard, resume, _slots),
    Action("crash", crash_guard, crash, _slots, fault=True),
    Action("join_timeout", join_timeout_guard, join_timeout, _none),
    Action("sync_timeout", sync_timeout_guard, sync_timeout, _none),
    Action("admin_reset", admin_reset_guard, admin_reset, _partitions),
    Action("failover", failover_guard, failover, _none, fault=True),
    Action("unclean_failover", unclean_failover_guard, unclean_failover, _none, fault=True),
])
# every action name `actions()` can yield, under any bound and behaviour
ACTION_NAMES = ACTIONS.names()
MEMBER_REQUESTS = frozenset({"start", "join", "rejoin", "sync", "commit_arrives", "leave"})
FAULTS = ACTIONS.faults

SPEC = ModelSpec(name="group", make=make, params=PARAMS, supports=SUPPORTS, state_fields=STATE_FIELDS,
                 action_names=ACTION_NAMES)


class GroupModel(Protocol):
    name = "group"
    action_table = ACTIONS

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        full = SPEC.resolve(params or {})
        self.params = full
        self.behaviours = frozenset(behaviours)
        self.n = full["members"]
        self.p = full["partitions"]
        self.max_gen = full["max_generation"]
        self.failover = full["failover"]
        self.admin = full["admin"]
        self.stale_commit = "stale-generation-commit" in self.behaviours
        self.no_bump = "no-generation-bump" in self.behaviours
        self.keep_leader = "leader-not-reelected" in self.behaviours
        self.no_barrier = "kafka-12890-no-sync-barrier" in self.behaviours
        self.unclean = "unclean-election" in self.behaviours and self.failover
        self.all_parts = (1 << self.p) - 1
        self.slot_args = tuple((m,) for m in range(self.n))
        self.part_args = tuple((q,) for q in range(self.p))
        self._intern = {}              # state parts already seen (shared between frontier states)
        self._assignments = {}         # members bitmask -> the leader's assignment (`assign`)
        self._updates = ACTIONS.updates
        self._cv_cache = {}            # (id(coord), id(clients)) -> client views (parts are interned)
        self._view_cache = {}          # id(state) -> (state, view): the invariants share one view
        self._step_cache = (None, None, None, None)
        self._entered = None           # during a step: the group states it entered (prepare, complete_join)
        self._last_step = (None, ())   # (the state the last step returned, the states it entered)
        self._invs = group_invariants(self.view, self.step_views)
        self._some = group_sometimes(self.view, self.n, failover=self.failover) + (
            Sometimes("commit-after-rebalance", "a member commit is accepted under generation 2 or later, "
                      "with the group Stable with all its members", self._commit_after_rebalance),)

    # --- Protocol ------------------------------------------------------------------------------
    def init_states(self):
        record = GroupRecord(0, 0, NO_LEADER, NO_ASSIGNMENT)
        offsets = (0,) * self.p
        prm = self.params
        return [GroupState(coord=Coordinator(EMPTY, 0, NO_LEADER, 0, 0, 0, 0, NO_ASSIGNMENT, 0),
                           clients=(DOWN_CLIENT,) * self.n, offsets=offsets, persisted=record,
                           budget=Budget(prm["events"], prm["faults"], prm["commits"], 0), delivered=(),
                           prev=LastAppend(record, offsets) if self.unclean else None)]

    def invariants(self):
        return self._invs

    def _commit_after_rebalance(self, s) -> bool:
        return s.budget.commit_generation >= 2 and stable_with_all(self.n)(self.view(s))

    def sometimes(self):
        return self._some

    def is_fault(self, action) -> bool:
        return ACTIONS.is_fault(action)

    def participants(self):
        return tuple(f"member m{i}" for i in range(self.n)) + ("coordinator", "admin")

    def arrow(self, action):
        name = action[0]
        if name in MEMBER_REQUESTS:
            return (f"member m{action[1]}", "coordinator")
        if name == "admin_reset":
            return ("admin", "coordinator")
        if name in ("crash", "pause", "stall", "resume", "commit"):
            return (f"member m{action[1]}", f"member m{action[1]}")
        return ("coordinator", "coordinator")

    def actions(self, s):
        return ACTIONS.enabled(self, s if s.__class__ is GroupState else as_state(s))

    def step(self, s, a):
        if s.__class__ is not GroupState:
            s = as_state(s)
        entered = self._entered = []
        t = self._updates[a[0]](self, s, *a[1:])
        # intern the parts: states in the BFS frontier then share them (memory per state)
        intern = self._intern
        if len(intern) > 20_000:
            intern.clear()
        t = _new(GroupState, [intern.setdefault(x, x) for x in t])
        self._last_step = (t, entered)
        return t

    # --- coordinator rules ---------------------------------------------------------------------
    @staticmethod
    def unresponsive(clients, mask) -> bool:
        """Some member in `mask` will not answer by itself (crashed, paused or stalled). Rebalance
        timers are long next to a healthy member's latency, so the model fires them only then."""
        for i in _bits_of(mask):
            c = clients[i]
            if c.status == DOWN or c.flag != RUN:
                return True
        return False

    @staticmethod
    def heartbeat_error(coord: Coordinator, m: int, generation: int) -> bool:
        """Would a heartbeat from a stable client get an error (-> it rejoins)? §5.1"""
        if not coord.members >> m & 1:
            return True                       # UNKNOWN_MEMBER_ID
        if generation != coord.generation:
            return True                       # ILLEGAL_GENERATION
        return coord.state == PREPARING or coord.state == PREP_INITIAL   # REBALANCE_IN_PROGRESS

    def commit_verdict(self, coord: Coordinator, m: int, generation: int) -> str:
        """OffsetCommit from slot m carrying `generation` (coordinator.md §7.1.2)."""
        if not coord.members >> m & 1:
            return "UNKNOWN_MEMBER_ID"
        if generation != coord.generation and not (self.stale_commit and 0 <= generation < coord.generation):
            return "ILLEGAL_GENERATION"        # (the bug lets an older generation land)
        if coord.state == COMPLETING:
            return "REBALANCE_IN_PROGRESS"
        return "NONE"

    def remove(self, coord: Coordinator, m: int) -> Coordinator:
        """Remove member m (leave/expiry): the leader moves to the lowest remaining member (§3.6.5)."""
        keep = ~(1 << m)
        members = coord.members & keep
        leader = coord.leader
        if leader == m and not self.keep_leader:
            leader = _lowest(members)
        return _new(Coordinator, (coord.state, coord.generation, leader, members, coord.awaiting_join & keep,
                                  coord.awaiting_sync & keep, coord.pending_sync & keep, coord.assignment, coord.epoch))

    def prepare(self, s: GroupState) -> GroupState:
        """prepareRebalance (§3.5.1): parked SyncGroups get REBALANCE_IN_PROGRESS (client -> idle)."""
        coord, clients = s.coord, s.clients
        assignment = coord.assignment
        if coord.state == COMPLETING:
            parked = coord.awaiting_sync
            if parked:
                clients = tuple([_with(c, IDLE) if parked >> i & 1 and c.status == SYNC_WAIT else c
                                 for i, c in enumerate(clients)])
            assignment = NO_ASSIGNMENT
        if self._entered is not None:
            self._entered.append(PREPARING)
        coord = _new(Coordinator, (PREP_INITIAL if coord.state == EMPTY else PREPARING, coord.generation, coord.leader,
                                   coord.members, coord.awaiting_join, 0, 0, assignment, coord.epoch))
        return _new(GroupState, (coord, clients, s.offsets, s.persisted, s.budget, s.delivered, s.prev))

    def new_leader(self, coord: Coordinator, joined: int) -> int:
        """onCompleteJoin's leader: kept if it rejoined, else the lowest rejoined slot. With
        leader-not-reelected a departed leader keeps its id, as impl/coordinator does it
        (group.py `maybe_elect_new_joined_leader` keeps it while some member rejoined)."""
        leader = coord.leader
        if leader >= 0 and (joined >> leader & 1 or self.keep_leader):
            return leader
        return _lowest(joined)

    def complete_join(self, s: GroupState) -> GroupState:
        """onCompleteJoin (§3.6.2): drop members that did not rejoin, bump the generation, answer
        every parked JoinGroup; an empty result lands in Empty and is persisted."""
        coord = s.coord
        joined = coord.members & coord.awaiting_join
        leader = self.new_leader(coord, joined)
        generation = coord.generation if self.no_bump else coord.generation + 1
        if self._entered is not None:
            self._entered.append(COMPLETING if joined else EMPTY)
        if not joined:
            s = _evolve(s, coord=_new(Coordinator, (EMPTY, generation, leader, 0, 0, 0, 0, NO_ASSIGNMENT, coord.epoch)))
            return self.append_record(s, _new(GroupRecord, (generation, 0, leader, NO_ASSIGNMENT)))
        clients = tuple([_new(Client, (SYNCING, generation, 0, c.flag, c.acted, c.inflight))
                         if joined >> i & 1 and c.status == JOINING else c for i, c in enumerate(s.clients)])
        coord = _new(Coordinator, (COMPLETING, generation, leader, joined, 0, 0, joined, NO_ASSIGNMENT, coord.epoch))
        return _new(GroupState, (coord, clients, s.offsets, s.persisted, s.budget, s.delivered, s.prev))

    def maybe_complete(self, s: GroupState) -> GroupState:
        """The join completes at once when every member has rejoined (§3.6.1)."""
        coord = s.coord
        if coord.state == PREPARING and coord.members & ~coord.awaiting_join == 0:
            return self.complete_join(s)
        return s

    def after_removal(self, s: GroupState) -> GroupState:
        """§5.4: Stable/CompletingRebalance -> rebalance; PreparingRebalance -> try to complete."""
        if s.coord.state == STABLE or s.coord.state == COMPLETING:
            s = self.prepare(s)
        return self.maybe_complete(s)

    def before_append(self, s: GroupState) -> Optional[LastAppend]:
        """The `prev` of a state about to append to __consumer_offsets (unclean-election only)."""
        return _new(LastAppend, (s.persisted, s.offsets)) if self.unclean else s.prev

    def append_record(self, s: GroupState, record: GroupRecord) -> GroupState:
        prev = self.before_append(s)
        return _new(GroupState, (s.coord, s.clients, s.offsets, record, s.budget, self.prune(s.delivered, record, prev),
                                 prev))

    @staticmethod
    def prune(delivered: tuple, persisted: GroupRecord, prev: Optional[LastAppend]) -> tuple:
        """Keep only delivered generations a reload could still come back to or reuse."""
        if not delivered:
            return delivered
        low = persisted.generation if prev is None else min(persisted.generation, prev.record.generation)
        kept = [d for d in delivered if d.generation >= low]
        return delivered if len(kept) == len(delivered) else tuple(kept)

    def assign(self, members: int) -> tuple:
        """The leader's assignment: partition q to the (q mod k)-th member in slot order."""
        hit = self._assignments.get(members)
        if hit is None:
            order = list(_bits_of(members))
            out = [0] * self.n
            for q in range(self.p):
                out[order[q % len(order)]] |= 1 << q
            hit = self._assignments[members] = tuple(out)
        return hit

    def handle_join(self, s: GroupState, m: int) -> GroupState:
        """JoinGroup from slot m (known or new member), §3.2-3.3, then completion if all rejoined."""
        coord = s.coord
        bit = 1 << m
        c = s.clients[m]
        joining = _new(Client, (JOINING, c.generation, 0, c.flag, c.acted, c.inflight))
        if coord.members & bit:
            if coord.state == PREPARING or coord.state == PREP_INITIAL:
                coord = _new(Coordinator, (coord.state, coord.generation, coord.leader, coord.members,
                                           coord.awaiting_join | bit, coord.awaiting_sync, coord.pending_sync,
                                           coord.assignment, coord.epoch))
                s = _new(GroupState, (coord, _set(s.clients, m, joining), s.offsets, s.persisted, s.budget,
                                      s.delivered, s.prev))
            elif coord.state == STABLE and coord.leader == m:
                s = self.prepare(s)
                c2 = s.coord
                coord = _new(Coordinator, (c2.state, c2.generation, c2.leader, c2.members, c2.awaiting_join | bit,
                                           c2.awaiting_sync, c2.pending_sync, c2.assignment, c2.epoch))
                s = _new(GroupState, (coord, _set(s.clients, m, joining), s.offsets, s.persisted, s.budget,
                                      s.delivered, s.prev))
            else:   # follower (or unchanged member in CompletingRebalance): current generation at once
                syncing = _new(Client, (SYNCING, coord.generation, 0, c.flag, c.acted, c.inflight))
                s = _new(GroupState, (coord, _set(s.clients, m, syncing), s.offsets, s.persisted, s.budget,
                                      s.delivered, s.prev))
        else:
            leader = m if coord.leader < 0 else coord.leader
            coord = _new(Coordinator, (coord.state, coord.generation, leader, coord.members | bit,
                                       coord.awaiting_join | bit, coord.awaiting_sync, coord.pending_sync,
                                       coord.assignment, coord.epoch))
            s = _new(GroupState, (coord, _set(s.clients, m, joining), s.offsets, s.persisted, s.budget, s.delivered,
                                  s.prev))
            if coord.state == EMPTY or coord.state == STABLE or coord.state == COMPLETING:
                s = self.prepare(s)
        return self.maybe_complete(s)

    def handle_sync(self, s: GroupState, m: int) -> GroupState:
        """SyncGroup from slot m (§4): refused, answered at once (Stable), or parked until the
        leader's SyncGroup persists the assignment and answers everyone parked."""
        coord = s.coord
        bit = 1 << m
        c = s.clients[m]
        if (not coord.members & bit or c.generation != coord.generation
                or coord.state == PREPARING or coord.state == PREP_INITIAL):
            return _new(GroupState, (coord, _set(s.clients, m, _with(c, IDLE)), s.offsets, s.persisted, s.budget,
                                     s.delivered, s.prev))
        if coord.state == STABLE:
            synced = _new(Coordinator, (coord.state, coord.generation, coord.leader, coord.members, coord.awaiting_join,
                                        coord.awaiting_sync, coord.pending_sync & ~bit, coord.assignment, coord.epoch))
            answered = _new(Client, (CSTABLE, coord.generation, coord.assignment[m], c.flag, coord.generation,
                                     c.inflight))
            return _new(GroupState, (synced, _set(s.clients, m, answered), s.offsets, s.persisted, s.budget,
                                     s.delivered, s.prev))
        # CompletingRebalance: park
        parked = coord.awaiting_sync | bit
        pending = coord.pending_sync & ~bit
        clients = _set(s.clients, m, _with(c, SYNC_WAIT))
        if m != coord.leader:
            coord = _new(Coordinator, (coord.state, coord.generation, coord.leader, coord.members, coord.awaiting_join,
                                       parked, pending, coord.assignment, coord.epoch))
            return _new(GroupState, (coord, clients, s.offsets, s.persisted, s.budget, s.delivered, s.prev))
        # the leader: persist the assignment, answer every parked SyncGroup, become Stable
        gen = coord.generation
        assignment = self.assign(coord.members)
        clients = tuple([_new(Client, (CSTABLE, gen, assignment[i], x.flag, gen, x.inflight))
                         if parked >> i & 1 and x.status == SYNC_WAIT else x for i, x in enumerate(clients)])
        stable = _new(Coordinator, (STABLE, gen, coord.leader, coord.members, coord.awaiting_join, 0, pending,
                                    assignment, coord.epoch))
        s = _new(GroupState, (stable, clients, s.offsets, s.persisted, s.budget,
                              s.delivered + (_new(Delivered, (gen, assignment)),), s.prev))
        return self.append_record(s, _new(GroupRecord, (gen, coord.members, coord.leader, assignment)))

    def load(self, s: GroupState, record: GroupRecord, offsets: tuple) -> GroupState:
        """A coordinator (re)loads the group from a record and offsets (§8.6); parked JoinGroup and
        SyncGroup requests are answered NOT_COORDINATOR: those clients rejoin."""
        has = record.members != 0
        coord = _new(Coordinator, (STABLE if has else EMPTY, record.generation, record.leader if has else NO_LEADER,
                                   record.members, 0, 0, 0, record.assignment if has else NO_ASSIGNMENT,
                                   s.coord.epoch + 1))
        clients = tuple([_with(c, IDLE) if c.status == JOINING or c.status == SYNC_WAIT else c for c in s.clients])
        prev = _new(LastAppend, (record, offsets)) if self.unclean else s.prev
        return _new(GroupState, (coord, clients, offsets, record, _spend_fault(s.budget),
                                 self.prune(s.delivered, record, prev), prev))

    # --- symmetry ------------------------------------------------------------------------------
    def canonical(self, s):
        """No symmetry reduction: member slots are NOT interchangeable here. The assignment gives
        partitions by slot order (`assign`) and a new leader is the lowest member slot, so swapping
        two slots can turn a reachable state's future into another one's. An earlier reduction that
        sorted slots by signature hid real violations (no-generation-bump's committed-offset-safety
        trace: 2 members, 1 partition, 213 reduced states without it, 414 unreduced states with it;
        tests/test_group_model.py keeps that case)."""
        return s

    def fingerprint(self, s) -> int:
        return hash(s)

    # --- views for the invariants --------------------------------------------------------------
    def view(self, s) -> GroupView:
        cache = self._view_cache
        hit = cache.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1]
        named = s if s.__class__ is GroupState else as_state(s)
        coord = named.coord
        v = _new(GroupView, (coord.epoch, PREPARING if coord.state == PREP_INITIAL else coord.state, coord.generation,
                             coord.leader, coord.members, coord.assignment, named.offsets,
                             self.client_views(coord, named.clients),
                             named.delivered,      # Delivered(generation, assignment) pairs, as the view wants them
                             NO_EVENTS, NO_EVENTS, NO_EVENTS, NO_EVENTS))   # accepted, passed, handovers, abandoned
        if len(cache) > 64:
            cache.clear()
        cache[id(s)] = (s, v)
        return v

    def client_views(self, coord: Coordinator, clients: tuple) -> tuple:
        """The `ClientView`s of the clients (kept per coordinator and clients object: parts are interned)."""
        key = (id(coord), id(clients))
        hit = self._cv_cache.get(key)
        if hit is not None and hit[0] is coord and hit[1] is clients:
            return hit[2]
        cv = tuple([_new(ClientView, (c.status != DOWN, c.generation, c.acted, c.owned,
                                      c.status == CSTABLE and self.commit_verdict(coord, i, c.generation) == "NONE"))
                    for i, c in enumerate(clients)])
        if len(self._cv_cache) > 128:
            self._cv_cache.clear()
        self._cv_cache[key] = (coord, clients, cv)
        return cv

    def step_views(self, prev_s, action, next_s):
        c = self._step_cache
        if c[0] is prev_s and c[1] is action and c[2] is next_s:
            return c[3]
        out = self._step_views(prev_s if prev_s.__class__ is GroupState else as_state(prev_s), action,
                               next_s if next_s.__class__ is GroupState else as_state(next_s))
        self._step_cache = (prev_s, action, next_s, out)
        return out

    def _step_views(self, prev_s: GroupState, action, next_s: GroupState):
        a = self.view(prev_s)
        b = self.view(next_s)
        passed = accepted = NO_EVENTS
        pc, nc = prev_s.coord, next_s.coord
        if (pc.state != nc.state or pc.generation != nc.generation) and pc.epoch == nc.epoch:
            # the group states the step entered (recorded by `step`; re-run it when that was another step)
            last, entered = self._last_step
            if last is not next_s:
                self.step(prev_s, action)
                entered = self._last_step[1]
            passed = tuple(entered[:-1])
        name = action[0]
        if name == "commit_arrives" and next_s.offsets != prev_s.offsets:
            m = action[1]
            sent = prev_s.clients[m].inflight
            accepted = (CommitEvent(m, sent.generation, sent.partitions),)
        elif name == "admin_reset":
            accepted = (CommitEvent(-1, -1, 1 << action[1], True),)
        if passed or accepted:
            b = with_step_events(b, accepted=accepted, passed=passed)
        return a, b

    # --- settled, healthy states ---------------------------------------------------------------
    def is_quiescent_good(self, s) -> bool:
        s = _named(s)
        coord = s.coord
        live = 0
        for i, c in enumerate(s.clients):
            if c.status == DOWN or c.flag == STALLED:
                continue
            if c.flag == PAUSED:
                return False
            live |= 1 << i
        if coord.members != live:
            return False
        if not live:
            return coord.state == EMPTY
        if coord.state != STABLE or coord.pending_sync or coord.assignment is NO_ASSIGNMENT:
            return False
        covered = 0
        for i in _bits_of(live):
            c = s.clients[i]
            if c.status != CSTABLE or c.generation != coord.generation or c.owned != coord.assignment[i]:
                return False
            covered |= coord.assignment[i]
        return covered == self.all_parts

    def allows_terminal(self, s) -> bool:
        """A state without actions must be settled and healthy; anything else is a deadlock."""
        return self.is_quiescent_good(s)

    def describe(self, s) -> dict:
        s = _named(s)
        coord = s.coord

        def slots(mask):
            return [f"m{i}" for i in _bits_of(mask)]

        def parts(mask):
            return [f"p{q}" for q in _bits_of(mask)]

        def asg(t):
            if t is None:
                return None
            return {f"m{i}": parts(t[i]) for i in range(self.n) if t[i]}

        return {
            "coordinator": {
                "state": "PreparingRebalance" if coord.state == PREP_INITIAL else STATE_NAMES[coord.state],
                "generation": coord.generation, "leader": f"m{coord.leader}" if coord.leader >= 0 else None,
                "members": slots(coord.members), "awaiting_join": slots(coord.awaiting_join),
                "awaiting_sync": slots(coord.awaiting_sync), "pending_sync": slots(coord.pending_sync),
                "assignment": asg(coord.assignment), "epoch": coord.epoch,
            },
            "clients": {f"m{i}": {"status": STATUS_NAMES[c.status], "generation": c.generation,
                                  "owned": parts(c.owned), "flag": FLAG_NAMES[c.flag],
                                  "commit_in_flight": None if not c.inflight else
                                  {"generation": c.inflight.generation, "partitions": parts(c.inflight.partitions)}}
                        for i, c in enumerate(s.clients)},
            "offsets": {f"p{q}": o for q, o in enumerate(s.offsets)},
            "persisted": {"generation": s.persisted.generation, "members": slots(s.persisted.members),
                          "assignment": asg(s.persisted.assignment)},
            "delivered": [{"generation": d.generation, "assignment": asg(d.assignment)} for d in s.delivered],
            "budget": {"events": s.budget.events, "faults": s.budget.faults, "commits": s.budget.commits},
            "last_commit_generation": s.budget.commit_generation,
        }


def as_state(raw) -> GroupState:
    """A state given as plain nested tuples (same field order), as named tuples. TRANSITIONAL: for
    callers that still build abstract states positionally (model/refine.py); named states pass
    through `_named` unchanged at the cost of one type check."""
    s = GroupState._make(raw)
    clients = tuple(c._replace(inflight=InFlight._make(c.inflight) if c.inflight else NO_COMMIT)
                    for c in map(Client._make, s.clients))
    prev = None if s.prev is None else LastAppend._make(s.prev)
    return GroupState(Coordinator._make(s.coord), clients, tuple(s.offsets), GroupRecord._make(s.persisted),
                      Budget._make(s.budget), tuple(map(Delivered._make, s.delivered)),
                      prev if prev is None else LastAppend(GroupRecord._make(prev.record), tuple(prev.offsets)))


def _named(s) -> GroupState:
    return s if s.__class__ is GroupState else as_state(s)
