"""The abstract group model: classic-protocol membership, rebalancing and offset commits.

Why it exists: the coordinator in impl/ is too detailed to explore exhaustively; this model keeps
only what the group properties (invariants/group.py) talk about, with Kafka's rules
(/work/shared/reference/coordinator.md), so that 2-3 members and 1-2 partitions explore
exhaustively in seconds and every historical behaviour it carries yields a shortest trace.

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
  completed join (as impl/ does it) -> leader-in-members.
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

from kverify.invariants.core import Sometimes
from kverify.invariants.group import (COMPLETING, EMPTY, PREPARING, STABLE, STATE_NAMES, ClientView,
                                      CommitEvent, GroupView, group_invariants, group_sometimes, stable_with_all)
from kverify.model.protocol import Protocol

PARAMS = {
    "members": (2, "consumer processes (slots m0..; not symmetry-reduced: assignment and leader follow slot order)"),
    "partitions": (2, "partitions of the subscribed topic"),
    "events": (3, "budget of environment events: process starts and graceful leaves"),
    "faults": (1, "budget of faults: crash, pause, stall, coordinator failover"),
    "commits": (2, "budget of offset commit requests (member commits and admin resets)"),
    "max_generation": (4, "no new environment events or faults once the generation reaches this"),
    "failover": (True, "allow coordinator failover (reload from the persisted group record)"),
    "admin": (True, "allow admin offset resets (standalone commits, generation -1) on an Empty group"),
}

# client statuses and flags
DOWN, IDLE, JOINING, SYNCING, SYNC_WAIT, CSTABLE = range(6)
STATUS_NAMES = ("down", "idle", "joining", "syncing", "sync-wait", "stable")
RUN, PAUSED, STALLED = 0, 1, 2
FLAG_NAMES = ("running", "paused", "stalled")
# internal coordinator state: PreparingRebalance entered from Empty (initial delay; viewed as PREPARING)
PREP_INITIAL = 5

SUPPORTS = frozenset({"stale-generation-commit", "no-generation-bump", "leader-not-reelected",
                                 "kafka-12890-no-sync-barrier", "unclean-election"})
# names of a state's top-level fields (specs/GroupMembership.tla and kverify/tla rely on them)
STATE_FIELDS = ("coord", "clients", "offsets", "persisted", "budget", "delivered", "prev")
# every action name `actions()` can yield, under any bound and behaviour
ACTION_NAMES = frozenset({"start", "join", "rejoin", "sync", "commit", "commit_arrives", "leave", "expire",
                          "crash", "pause", "stall", "resume", "join_timeout", "sync_timeout", "admin_reset",
                          "failover", "unclean_failover"})
MEMBER_REQUESTS = frozenset({"start", "join", "rejoin", "sync", "commit_arrives", "leave"})
FAULTS = frozenset({"crash", "pause", "stall", "failover", "unclean_failover"})

# State layout (plain tuples, hashed as is):
#   (coord, clients, offsets, persisted, budget, delivered, prev)
#   coord     = (cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch)
#   clients   = ((status, gen, owned, flag, acted, inflight), ...)   per slot; acted = generation
#               of the last assignment it received (what it consumes/commits under), -1 none;
#               inflight = (generation, partitions) of a commit on its way, or ()
#   offsets   = (offset per partition)
#   persisted = (gen, members, leader, assign)                 last group record in the log
#   budget    = (events, faults, commits, commit_gen)   commit_gen: highest generation under which a
#               member commit was accepted (ghost for the `commit-after-rebalance` sometimes property)
#   delivered = ((gen, assign), ...)   assignments answered to SyncGroup, pruned to reloadable gens
#   prev      = (persisted, offsets) before the last append, or None (kept only for unclean-election)
# assign is a tuple of per-slot partition bitmasks, or None when no assignment is stored.


def make(params: dict, behaviours: frozenset) -> "GroupModel":
    return GroupModel(params, behaviours)


def _popcount(x: int) -> int:
    return bin(x).count("1")


class GroupModel(Protocol):
    name = "group"

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        full = {k: v[0] for k, v in PARAMS.items()}
        full.update(params or {})
        for key in ("members", "partitions"):
            if not 1 <= int(full[key]) <= 6:
                raise ValueError(f"group model: {key} must be between 1 and 6")
        for key in ("events", "faults", "commits", "max_generation"):
            if int(full[key]) < 0:
                raise ValueError(f"group model: {key} must be >= 0")
        self.params = full
        self.behaviours = frozenset(behaviours)
        self.n = int(full["members"])
        self.p = int(full["partitions"])
        self.max_gen = int(full["max_generation"])
        self.failover = bool(full["failover"])
        self.admin = bool(full["admin"])
        self.stale_commit = "stale-generation-commit" in self.behaviours
        self.no_bump = "no-generation-bump" in self.behaviours
        self.keep_leader = "leader-not-reelected" in self.behaviours
        self.no_barrier = "kafka-12890-no-sync-barrier" in self.behaviours
        self.unclean = "unclean-election" in self.behaviours and self.failover
        self.all_parts = (1 << self.p) - 1
        self._intern = {}              # state parts already seen (shared between frontier states)
        self._cv_cache = {}            # (id(coord), id(clients)) -> client views (parts are interned)
        self._view_cache = {}          # id(state) -> (state, view): the invariants share one view
        self._step_cache = (None, None, None, None)
        self._rec = None            # when a list: group states entered during one step (step_views)
        self._invs = group_invariants(self.view, self.step_views)
        self._some = group_sometimes(self.view, self.n, failover=self.failover) + (
            Sometimes("commit-after-rebalance", "a member commit is accepted under generation 2 or later, "
                      "with the group Stable with all its members", self._commit_after_rebalance),)

    # --- Protocol ------------------------------------------------------------------------------
    def init_states(self):
        n, p = self.n, self.p
        coord = (EMPTY, 0, -1, 0, 0, 0, 0, None, 0)
        clients = ((DOWN, -1, 0, RUN, -1, ()),) * n
        persisted = (0, 0, -1, None)
        offsets = (0,) * p
        budget = (int(self.params["events"]), int(self.params["faults"]), int(self.params["commits"]), 0)
        prev = (persisted, offsets) if self.unclean else None
        return [(coord, clients, offsets, persisted, budget, (), prev)]

    def invariants(self):
        return self._invs

    def _commit_after_rebalance(self, s) -> bool:
        return s[4][3] >= 2 and stable_with_all(self.n)(self.view(s))

    def sometimes(self):
        return self._some

    def is_fault(self, action) -> bool:
        return action[0] in FAULTS

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
        coord, clients, offsets, persisted, budget, delivered, prev = s
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        events, faults, commits, _ = budget
        env_ok = gen < self.max_gen
        out = []
        for m, (st, cg, owned, flag, _, inflight) in enumerate(clients):
            bit = 1 << m
            if inflight:
                out.append(("commit_arrives", m))
            if st == DOWN:
                if events and env_ok and not members & bit:
                    out.append(("start", m))
                if members & bit and not (awaiting | syncwait) & bit:
                    out.append(("expire", m))
                continue
            if flag == RUN:
                if st == IDLE:
                    out.append(("join", m))
                elif st == SYNCING:
                    out.append(("sync", m))
                elif st == CSTABLE:
                    if self._heartbeat_error(coord, m, cg):
                        out.append(("rejoin", m))
                    if owned and commits and not inflight:
                        out.append(("commit", m))
                    if events and env_ok and members & bit:
                        out.append(("leave", m))
                if faults and env_ok:
                    out.append(("pause", m))
                    if st == SYNCING:
                        out.append(("stall", m))
            elif flag == PAUSED:
                out.append(("resume", m))
                if members & bit and not (awaiting | syncwait) & bit:
                    out.append(("expire", m))
            if faults and env_ok:
                out.append(("crash", m))
        if cstate == PREP_INITIAL or (cstate == PREPARING and self._unresponsive(clients, members & ~awaiting)):
            out.append(("join_timeout",))
        if (not self.no_barrier and cstate in (COMPLETING, STABLE)
                and self._unresponsive(clients, pending)):
            out.append(("sync_timeout",))
        if self.admin and commits and cstate == EMPTY:
            for q in range(self.p):
                if offsets[q]:
                    out.append(("admin_reset", q))
        if self.failover and faults and env_ok:
            out.append(("failover",))
            if self.unclean and prev is not None and prev != (persisted, offsets):
                out.append(("unclean_failover",))
        return out

    def step(self, s, a):
        t = getattr(self, "_a_" + a[0])(s, *a[1:])
        # intern the parts: states in the BFS frontier then share them (memory per state)
        intern = self._intern
        if len(intern) > 20_000:
            intern.clear()
        return tuple([intern.setdefault(x, x) for x in t])

    # --- coordinator rules ---------------------------------------------------------------------
    @staticmethod
    def _unresponsive(clients, mask) -> bool:
        """Some member in `mask` will not answer by itself (crashed, paused or stalled). Rebalance
        timers are long next to a healthy member's latency, so the model fires them only then."""
        i = 0
        while mask:
            if mask & 1:
                c = clients[i]
                if c[0] == DOWN or c[3] != RUN:
                    return True
            mask >>= 1
            i += 1
        return False

    def _heartbeat_error(self, coord, m, cg) -> bool:
        """Would a heartbeat from a stable client get an error (-> it rejoins)? §5.1"""
        cstate, gen, _, members, *_ = coord
        if not (members >> m) & 1:
            return True                       # UNKNOWN_MEMBER_ID
        if cg != gen:
            return True                       # ILLEGAL_GENERATION
        return cstate in (PREPARING, PREP_INITIAL)   # REBALANCE_IN_PROGRESS

    def commit_verdict(self, coord, m, cg) -> str:
        """OffsetCommit from slot m carrying generation cg (coordinator.md §7.1.2)."""
        cstate, gen, _, members, *_ = coord
        if not (members >> m) & 1:
            return "UNKNOWN_MEMBER_ID"
        if cg != gen and not (self.stale_commit and 0 <= cg < gen):   # the bug: an older generation lands
            return "ILLEGAL_GENERATION"
        if cstate == COMPLETING:
            return "REBALANCE_IN_PROGRESS"
        return "NONE"

    def _remove(self, coord, m):
        """Remove member m (leave/expiry): leader moves to the lowest remaining member (§3.6.5)."""
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        bit = 1 << m
        members &= ~bit
        if leader == m and not self.keep_leader:
            leader = (members & -members).bit_length() - 1 if members else -1
        return (cstate, gen, leader, members, awaiting & ~bit, syncwait & ~bit, pending & ~bit, assign, epoch)

    def _prepare(self, coord, clients):
        """prepareRebalance (§3.5.1): parked SyncGroups get REBALANCE_IN_PROGRESS (client -> idle)."""
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        if cstate == COMPLETING:
            if syncwait:
                clients = tuple((IDLE, c[1], 0, c[3], c[4], c[5]) if (syncwait >> i) & 1 and c[0] == SYNC_WAIT else c
                                for i, c in enumerate(clients))
            assign = None
        new_state = PREP_INITIAL if cstate == EMPTY else PREPARING
        if self._rec is not None:
            self._rec.append(PREPARING)
        return (new_state, gen, leader, members, awaiting, 0, 0, assign, epoch), clients

    def _complete(self, s, coord, clients):
        """onCompleteJoin (§3.6.2): drop members that did not rejoin, bump the generation, answer
        every parked JoinGroup; an empty result lands in Empty and is persisted."""
        _, gen, leader, members, awaiting, _, _, assign, epoch = coord
        _, _, offsets, persisted, budget, delivered, prev = s
        members &= awaiting
        if self.keep_leader and leader >= 0 and members:
            pass                              # the bug: the departed leader keeps its id
        elif leader < 0 or not (members >> leader) & 1:
            if members:
                leader = (members & -members).bit_length() - 1
            elif not self.keep_leader:
                leader = -1
        ngen = gen if self.no_bump else gen + 1
        if self._rec is not None:
            self._rec.append(COMPLETING if members else EMPTY)
        if not members:
            coord = (EMPTY, ngen, leader, 0, 0, 0, 0, None, epoch)
            record = (ngen, 0, leader, None)
            if self.unclean:
                prev = (persisted, offsets)
            persisted = record
            delivered = self._prune(delivered, persisted, prev)
            return (coord, clients, offsets, persisted, budget, delivered, prev)
        coord = (COMPLETING, ngen, leader, members, 0, 0, members, None, epoch)
        clients = tuple((SYNCING, ngen, 0, c[3], c[4], c[5]) if (members >> i) & 1 and c[0] == JOINING else c
                        for i, c in enumerate(clients))
        return (coord, clients, offsets, persisted, budget, delivered, prev)

    def _maybe_complete(self, s):
        coord = s[0]
        if coord[0] == PREPARING and coord[3] & ~coord[4] == 0:
            return self._complete(s, coord, s[1])
        return s

    def _prune(self, delivered, persisted, prev):
        """Keep only delivered generations a reload could still come back to or reuse."""
        if not delivered:
            return delivered
        low = persisted[0] if prev is None else min(persisted[0], prev[0][0])
        return tuple(d for d in delivered if d[0] >= low)

    def _assign(self, members):
        order = [i for i in range(self.n) if (members >> i) & 1]
        out = [0] * self.n
        for q in range(self.p):
            out[order[q % len(order)]] |= 1 << q
        return tuple(out)

    def _join(self, s, m):
        """JoinGroup from slot m (known or new member), §3.2-3.3, then completion if all rejoined."""
        coord, clients, offsets, persisted, budget, delivered, prev = s
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        bit = 1 << m
        c = clients[m]
        if members & bit:
            if cstate in (PREPARING, PREP_INITIAL):
                coord = (cstate, gen, leader, members, awaiting | bit, syncwait, pending, assign, epoch)
                clients = _set(clients, m, (JOINING, c[1], 0, c[3], c[4], c[5]))
            elif cstate == STABLE and leader == m:
                coord, clients = self._prepare(coord, clients)
                coord = coord[:4] + (coord[4] | bit,) + coord[5:]
                clients = _set(clients, m, (JOINING, c[1], 0, c[3], c[4], c[5]))
            else:   # follower (or unchanged member in CompletingRebalance): current generation at once
                clients = _set(clients, m, (SYNCING, gen, 0, c[3], c[4], c[5]))
        else:
            if leader < 0:
                leader = m
            coord = (cstate, gen, leader, members | bit, awaiting | bit, syncwait, pending, assign, epoch)
            clients = _set(clients, m, (JOINING, c[1], 0, c[3], c[4], c[5]))
            if cstate in (EMPTY, STABLE, COMPLETING):
                coord, clients = self._prepare(coord, clients)
        return self._maybe_complete((coord, clients, offsets, persisted, budget, delivered, prev))

    # --- actions -------------------------------------------------------------------------------
    def _a_start(self, s, m):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        s = (coord, _set(clients, m, (IDLE, -1, 0, RUN, -1, ())), offsets, persisted, (ev - 1, fa, co, cg), delivered, prev)
        return self._join(s, m)

    def _a_join(self, s, m):
        return self._join(s, m)

    def _a_rejoin(self, s, m):
        """A stable client's heartbeat got an error; it drops its partitions and rejoins."""
        return self._join(s, m)

    def _a_sync(self, s, m):
        coord, clients, offsets, persisted, budget, delivered, prev = s
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        bit = 1 << m
        c = clients[m]
        if not members & bit or c[1] != gen or cstate in (PREPARING, PREP_INITIAL):
            return (coord, _set(clients, m, (IDLE, c[1], 0, c[3], c[4], c[5])), offsets, persisted, budget, delivered, prev)
        if cstate == STABLE:
            coord = (cstate, gen, leader, members, awaiting, syncwait, pending & ~bit, assign, epoch)
            return (coord, _set(clients, m, (CSTABLE, gen, assign[m], c[3], gen, c[5])), offsets, persisted, budget, delivered, prev)
        # CompletingRebalance: park; the leader's SyncGroup persists and answers everyone parked
        syncwait |= bit
        pending &= ~bit
        clients = _set(clients, m, (SYNC_WAIT, c[1], 0, c[3], c[4], c[5]))
        if m != leader:
            coord = (cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch)
            return (coord, clients, offsets, persisted, budget, delivered, prev)
        assign = self._assign(members)
        if self.unclean:
            prev = (persisted, offsets)
        persisted = (gen, members, leader, assign)
        clients = tuple((CSTABLE, gen, assign[i], cl[3], gen, cl[5]) if (syncwait >> i) & 1 and cl[0] == SYNC_WAIT else cl
                        for i, cl in enumerate(clients))
        delivered = self._prune(delivered + ((gen, assign),), persisted, prev)
        coord = (STABLE, gen, leader, members, awaiting, 0, pending, assign, epoch)
        return (coord, clients, offsets, persisted, budget, delivered, prev)

    def _a_commit(self, s, m):
        """The application sends its positions (OffsetCommit, or TxnOffsetCommit through a
        transactional producer holding the consumer's group metadata) under its generation. The
        request travels on its own; `commit_arrives` is when the coordinator handles it."""
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        c = clients[m]
        c = (c[0], c[1], c[2], c[3], c[4], (c[1], c[2]))
        return (coord, _set(clients, m, c), offsets, persisted, (ev, fa, co - 1, cg), delivered, prev)

    def _a_commit_arrives(self, s, m):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        c = clients[m]
        sent_gen, parts = c[5]
        verdict = self.commit_verdict(coord, m, sent_gen)
        if verdict != "NONE":
            # CommitFailed / RebalanceInProgress: a client still stable in that generation drops
            # its partitions and rejoins; one that already moved on ignores the late answer
            if c[0] == CSTABLE and c[1] == sent_gen:
                c = (IDLE, c[1], 0, c[3], c[4], ())
            else:
                c = c[:5] + ((),)
            return (coord, _set(clients, m, c), offsets, persisted, (ev, fa, co, cg), delivered, prev)
        new_offsets = tuple(o + 1 if (parts >> q) & 1 else o for q, o in enumerate(offsets))
        if self.unclean:
            prev = (persisted, offsets)
        return (coord, _set(clients, m, c[:5] + ((),)), new_offsets, persisted, (ev, fa, co, max(cg, sent_gen)),
                delivered, prev)

    def _a_admin_reset(self, s, q):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        if self.unclean:
            prev = (persisted, offsets)
        return (coord, clients, _set(offsets, q, 0), persisted, (ev, fa, co - 1, cg), delivered, prev)

    def _a_leave(self, s, m):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        clients = _set(clients, m, (DOWN, -1, 0, RUN, -1, ()))
        return self._after_removal((self._remove(coord, m), clients, offsets, persisted, (ev - 1, fa, co, cg), delivered, prev))

    def _a_expire(self, s, m):
        coord, clients, offsets, persisted, budget, delivered, prev = s
        return self._after_removal((self._remove(coord, m), clients, offsets, persisted, budget, delivered, prev))

    def _after_removal(self, s):
        """§5.4: Stable/CompletingRebalance -> rebalance; PreparingRebalance -> try to complete."""
        coord, clients = s[0], s[1]
        if coord[0] in (STABLE, COMPLETING):
            coord, clients = self._prepare(coord, clients)
            s = (coord, clients) + s[2:]
        return self._maybe_complete(s)

    def _a_crash(self, s, m):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        return (coord, _set(clients, m, (DOWN, -1, 0, RUN, -1, ())), offsets, persisted, (ev, fa - 1, co, cg), delivered, prev)

    def _a_pause(self, s, m):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        c = clients[m]
        return (coord, _set(clients, m, (c[0], c[1], c[2], PAUSED, c[4], c[5])), offsets, persisted, (ev, fa - 1, co, cg), delivered, prev)

    def _a_stall(self, s, m):
        coord, clients, offsets, persisted, (ev, fa, co, cg), delivered, prev = s
        c = clients[m]
        return (coord, _set(clients, m, (c[0], c[1], c[2], STALLED, c[4], c[5])), offsets, persisted, (ev, fa - 1, co, cg), delivered, prev)

    def _a_resume(self, s, m):
        coord, clients = s[0], s[1]
        c = clients[m]
        return (coord, _set(clients, m, (c[0], c[1], c[2], RUN, c[4], c[5]))) + s[2:]

    def _a_join_timeout(self, s):
        """The (initial) join window ends: complete with whoever rejoined (§3.6.1, §3.7)."""
        coord = s[0]
        return self._complete(s, coord, s[1])

    def _a_sync_timeout(self, s):
        """Pending-sync barrier expiry (§4.5): remove members that never synced, rebalance."""
        coord, clients = s[0], s[1]
        for m in range(self.n):
            if (coord[6] >> m) & 1:
                coord = self._remove(coord, m)
        coord, clients = self._prepare(coord, clients)
        return self._maybe_complete((coord, clients) + s[2:])

    def _load(self, s, persisted, offsets):
        coord, clients, _, _, (ev, fa, co, cg), delivered, prev = s
        pgen, pmembers, pleader, passign = persisted
        epoch = coord[8] + 1
        state = STABLE if pmembers else EMPTY
        coord = (state, pgen, pleader if pmembers else -1, pmembers, 0, 0, 0, passign if pmembers else None, epoch)
        # parked JoinGroup/SyncGroup requests are answered NOT_COORDINATOR: those clients rejoin
        clients = tuple((IDLE, c[1], 0, c[3], c[4], c[5]) if c[0] in (JOINING, SYNC_WAIT) else c for c in clients)
        if self.unclean:
            prev = (persisted, offsets)
        delivered = self._prune(delivered, persisted, prev)
        return (coord, clients, offsets, persisted, (ev, fa - 1, co, cg), delivered, prev)

    def _a_failover(self, s):
        return self._load(s, s[3], s[2])

    def _a_unclean_failover(self, s):
        """Unclean election of the offsets partition: the last append is lost."""
        persisted, offsets = s[6]
        return self._load(s, persisted, offsets)

    # --- symmetry ------------------------------------------------------------------------------
    def canonical(self, s):
        """No symmetry reduction: member slots are NOT interchangeable here. The assignment gives
        partitions by slot order (`_assign`) and a new leader is the lowest member slot, so swapping
        two slots can turn a reachable state's future into another one's. An earlier reduction that
        sorted slots by signature hid real violations (no-generation-bump's committed-offset-safety
        trace: 2 members, 1 partition, 213 reduced states without it, 414 unreduced states with it;
        tests/test_group_model.py keeps that case)."""
        return s

    def fingerprint(self, s) -> int:
        return hash(s)

    # --- views for the invariants --------------------------------------------------------------
    def view(self, s) -> GroupView:
        hit = self._view_cache.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1]
        coord, clients, offsets, persisted, budget, delivered, prev = s
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        key = (id(coord), id(clients))
        hit = self._cv_cache.get(key)
        if hit is not None and hit[0] is coord and hit[1] is clients:
            cv = hit[2]
        else:
            cv = tuple(ClientView(c[0] != DOWN, c[1], c[4], c[2],
                                  c[0] == CSTABLE and self.commit_verdict(coord, i, c[1]) == "NONE")
                       for i, c in enumerate(clients))
            if len(self._cv_cache) > 128:
                self._cv_cache.clear()
            self._cv_cache[key] = (coord, clients, cv)
        v = GroupView(epoch, PREPARING if cstate == PREP_INITIAL else cstate, gen, leader, members, assign,
                      offsets, cv, delivered)
        cache = self._view_cache
        if len(cache) > 64:
            cache.clear()
        cache[id(s)] = (s, v)
        return v

    def step_views(self, prev_s, action, next_s):
        c = self._step_cache
        if c[0] is prev_s and c[1] is action and c[2] is next_s:
            return c[3]
        out = self._step_views(prev_s, action, next_s)
        self._step_cache = (prev_s, action, next_s, out)
        return out

    def _step_views(self, prev_s, action, next_s):
        a = self.view(prev_s)
        b = self.view(next_s)
        name = action[0]
        pc, nc = prev_s[0], next_s[0]
        if (pc[0] != nc[0] or pc[1] != nc[1]) and pc[8] == nc[8]:
            # re-run the step recording the states it entered, to expose the intermediate ones
            self._rec = []
            try:
                self.step(prev_s, action)
                passed = tuple(self._rec[:-1])
            finally:
                self._rec = None
            if passed:
                b = b._replace(passed=passed)
        if name == "commit_arrives" and next_s[2] != prev_s[2]:
            m = action[1]
            sent_gen, parts = prev_s[1][m][5]
            b = b._replace(accepted=(CommitEvent(m, sent_gen, parts),))
        elif name == "admin_reset":
            b = b._replace(accepted=(CommitEvent(-1, -1, 1 << action[1], True),))
        return a, b

    # --- settled, healthy states ---------------------------------------------------------------
    def is_quiescent_good(self, s) -> bool:
        coord, clients = s[0], s[1]
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
        live = 0
        for i, c in enumerate(clients):
            if c[0] == DOWN or c[3] == STALLED:
                continue
            if c[3] == PAUSED:
                return False
            live |= 1 << i
        if members != live:
            return False
        if not live:
            return cstate == EMPTY
        if cstate != STABLE or pending or assign is None:
            return False
        covered = 0
        for i, c in enumerate(clients):
            if (live >> i) & 1:
                if c[0] != CSTABLE or c[1] != gen or c[2] != assign[i]:
                    return False
                covered |= assign[i]
        return covered == self.all_parts

    def allows_terminal(self, s) -> bool:
        """A state without actions must be settled and healthy; anything else is a deadlock."""
        return self.is_quiescent_good(s)

    def describe(self, s) -> dict:
        coord, clients, offsets, persisted, budget, delivered, prev = s
        cstate, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord

        def slots(mask):
            return [f"m{i}" for i in range(self.n) if (mask >> i) & 1]

        def asg(t):
            if t is None:
                return None
            return {f"m{i}": [f"p{q}" for q in range(self.p) if (t[i] >> q) & 1] for i in range(self.n) if t[i]}

        out = {
            "coordinator": {
                "state": "PreparingRebalance" if cstate == PREP_INITIAL else STATE_NAMES[cstate],
                "generation": gen, "leader": f"m{leader}" if leader >= 0 else None, "members": slots(members),
                "awaiting_join": slots(awaiting), "awaiting_sync": slots(syncwait), "pending_sync": slots(pending),
                "assignment": asg(assign), "epoch": epoch,
            },
            "clients": {f"m{i}": {"status": STATUS_NAMES[c[0]], "generation": c[1],
                                  "owned": [f"p{q}" for q in range(self.p) if (c[2] >> q) & 1],
                                  "flag": FLAG_NAMES[c[3]],
                                  "commit_in_flight": None if not c[5] else
                                  {"generation": c[5][0], "partitions": [f"p{q}" for q in range(self.p) if (c[5][1] >> q) & 1]}}
                     for i, c in enumerate(clients)},
            "offsets": {f"p{q}": o for q, o in enumerate(offsets)},
            "persisted": {"generation": persisted[0], "members": slots(persisted[1]), "assignment": asg(persisted[3])},
            "delivered": [{"generation": g, "assignment": asg(a)} for g, a in delivered],
            "budget": {"events": budget[0], "faults": budget[1], "commits": budget[2]},
            "last_commit_generation": budget[3],
        }
        return out


def _set(t: tuple, i: int, value) -> tuple:
    return t[:i] + (value,) + t[i + 1:]
