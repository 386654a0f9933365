"""Refinement: every step of the implementation world is a step (or a stutter) of the abstract model.

Why it exists: the abstract group model (model/group.py) is what the explorer checks exhaustively;
that is worth something only if the implementation behaves like it. `GroupRefinement` maps a
group-world state onto a `GroupModel` state (`abstract`) and checks each world step
(`check(prev, action, nxt)`): abstract(nxt) must equal abstract(prev) (stutter) or be one of
model.step(abstract(prev), a) for a in model.actions(abstract(prev)).

The abstraction (world -> model), per part of the model state:
* coordinator: the group's state (PreparingRebalance with the initial-delay task pending is the
  model's initial-delay state), generation, leader, members, awaiting JoinGroup / SyncGroup,
  pending-sync set and stored assignment, members numbered by slot (client id "m<slot>");
* clients: derived from the coordinator's side, because the model handles a request and its
  response atomically: a response in flight counts as received, and what a member does locally
  before its next request reaches the coordinator is invisible. A process is down until the
  coordinator first holds its incarnation as a member; then it is joining / waiting for sync while
  parked there, else what the coordinator last answered it (group-world's `answers` ghost:
  JoinGroup answered -> syncing, SyncGroup answered -> stable with that assignment, an error ->
  idle; a heartbeat error to a process waiting for its SyncGroup answer -> idle; a failed JoinGroup
  of a stable process leaves it stable: the model's rejoin is the JoinGroup that succeeds);
* the paused flag: a paused process, and a running one that waits (a request of it in flight, an
  answer it waits for in flight or lost; a JoinGroup/SyncGroup parked at the coordinator does not
  count): until the message arrives, or its timer gives up on a lost one, the process is to the
  coordinator as unresponsive as a paused one. That is how timers firing while messages are in
  flight, and lost messages, map onto the model, whose rebalance timers fire only while some awaited
  member is unresponsive;
* commits in flight: the process's OffsetCommit not yet handled (the model's commit / commit_arrives);
* offsets: the number of acknowledged commits per partition (the model's offsets are counters);
* persisted: the last group record appended to __consumer_offsets; delivered: the assignments
  answered to SyncGroup, pruned as the model prunes them.
One world step maps to one model step, except a time jump (`tick`/`settle`), which fires every coordinator
task due on the way and may map to up to MAX_TICK_STEPS model steps (e.g. two sessions expiring).
Besides, a world step may take process-local model steps (`_free_steps`, each at most once): resume
and/or pause of processes whose flag is paused before/after (a waiting process acts when its message
arrives), and the `sync` of a syncing process that moves on (one that gave up a lost SyncGroup gets the
error answer the model's SyncGroup would give it).
Exploration bounds are not protocol: both sides' budgets are normalised away, the model's
`max_generation` is lifted, and assignment entries of slots that are not members are ignored.

What the model abstracts, hence the world configuration refinement is checked for (`REQUIRED`):
at most 2 members (with 3, a departing leader's successor is the first member in join order in the
coordinator but the lowest slot in the model), the eager protocol (range assignor; equal to the
model's "p mod k" for up to 2 partitions), FIFO connections (with reordering, an OffsetCommit answered
ILLEGAL_GENERATION after the member's next JoinGroup resets the member, the model's late commit answer
is ignored), and group-world's `synchronous` mode (see its PARAMS), which keeps:
- only stragglers may be lost or stay in flight while timers fire: JoinGroup, SyncGroup and LeaveGroup
  messages, but not a JoinGroup without member id (arriving after its member gave up on it, it leaves
  a pending member behind, see MEMBER_ID_REQUIRED below), nor a SyncGroup answer carrying an assignment (the model hands it over atomically; a
  member that never gets it rejoins unprompted after its request timeout, which the model's stable
  members never do); no OffsetCommit request (the model has no step that drops a commit in flight
  while its process lives on); no heartbeat, fetch or commit answer (a member waiting in vain for one
  disconnects when its timer gives up, abandoning a SyncGroup parked at the coordinator, and its
  rejoin carries new metadata (its generation), which rebalances a CompletingRebalance group; the
  model's member rejoining there gets the current generation back);
- no MEMBER_ID_REQUIRED interleaving, nor a pause or crash during that round trip (a pending member
  blocks the join phase; the model has no pending members);
- no leave while the coordinator holds the process's JoinGroup/SyncGroup parked (the model removes
  a parked member only through a rebalance, and its session expiry skips parked members);
- a crash, leave or restart loses the process's requests not yet delivered (the model's crash drops
  the commit in flight);
- static members (group.instance.id) with no losses and no stragglers at all (a static member that
  misses the join window stays in the group, Kafka's onCompleteJoin removes only dynamic members; the
  model drops it), restarting only after the coordinator removed the old member.
No coordinator failover (group-world has none). A world leave maps to the model's crash followed by
expire (the LeaveGroup arriving), never to the model's atomic leave.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Optional

from kverify.impl.coordinator.messages import OffsetCommitRequest
from kverify.invariants.core import Invariant, Violation
from kverify.model import group as G
from kverify.model.protocol import action_label
from kverify.model.search import ExactStore, Goal, search

BIG = 1 << 20
MAX_TICK_STEPS = 3      # one time jump may fire several coordinator tasks: up to this many model steps
REQUIRED = {"protocol": "eager", "synchronous": True, "fifo": True}
MAX_PARTITIONS = 2
MAX_MEMBERS = 2     # with 3+, a departing leader's successor differs: the coordinator takes the first
                    # member in join order, the model the lowest slot (Kafka: GroupMetadata.remove takes
                    # members.keys.headOption of a mutable.HashMap keyed by random member ids: arbitrary)
# budgets `kverify refine` uses unless --param overrides them: richer than the explorer's defaults,
# since walks are cheap and longer walks exercise more rebalances; request timeouts are tick targets,
# else a process waiting on a lost message may wait forever (the walk ends there)
WALK_DEFAULTS = {"events": 4, "faults": 2, "ticks": 6, "commits": 3, "max_generation": 6, "partitions": 2,
                 "losses": 2, "request_timeouts": True}


class RefinementError(ValueError):
    """The world configuration is outside what the abstract model describes (one line)."""


def refinable(world) -> bool:
    """Whether a group-world configuration is inside what the abstract model describes."""
    p = world.params
    return (all(_coerce(p.get(k), v) == v for k, v in REQUIRED.items())
            and int(p.get("partitions", 1)) <= MAX_PARTITIONS and int(p.get("members", 2)) <= MAX_MEMBERS
            and not _static_with_losses(p))


def refinement_params(world_params: dict, defaults: Optional[dict] = None) -> dict:
    """The world parameters refinement runs with: defaults, then the given ones, plus REQUIRED
    (a given value that clashes with REQUIRED is an error)."""
    out = dict(defaults or {})
    out.update(world_params or {})
    for key, value in REQUIRED.items():
        if key in out and _coerce(out[key], value) != value:
            raise RefinementError(f"refinement needs {key}={value} (the abstract model has no {key}={out[key]})")
        out[key] = value
    if int(out.get("partitions", 1)) > MAX_PARTITIONS:
        raise RefinementError(f"refinement needs partitions <= {MAX_PARTITIONS} (range = the model's assignor only there)")
    if int(out.get("members", 2)) > MAX_MEMBERS:
        raise RefinementError(f"refinement needs members <= {MAX_MEMBERS} (leader succession differs beyond)")
    if _static_with_losses(out):
        if "losses" in (world_params or {}):
            raise RefinementError("refinement with static members needs losses=0 (a static member that misses "
                                  "the join window stays in the group; the model drops it)")
        out["losses"] = 0
    return out


def _static_with_losses(p) -> bool:
    """Static members with a loss budget: synchronous mode loses nothing then (see group-world's
    `_straggles`), so refinement asks for losses=0 rather than silently ignoring the budget."""
    return _coerce(p.get("static", False), True) is True and int(p.get("losses", 0)) > 0


def _coerce(raw, like):
    if isinstance(like, bool) and isinstance(raw, str):
        return raw.lower() in ("1", "true", "yes", "on")
    if isinstance(like, int) and isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            return raw
    return raw


class GroupRefinement:
    """Abstraction function group-world -> group model, and the per-step refinement check."""

    def __init__(self, world):
        self.world = world
        self.n, self.p = world.n, world.p
        self.model = G.GroupModel({"members": self.n, "partitions": self.p, "events": BIG, "faults": BIG,
                                   "commits": BIG, "max_generation": BIG, "failover": False, "admin": False})
        self._cache = (None, None)
        self.last_path = ()
        init = self.model.init_states()[0]
        self._client_len = len(init[1][0])      # 6 when the model tracks a commit in flight per client
        self._budget = tuple(BIG for _ in init[4])

    # --- the abstraction function -----------------------------------------------------------------
    def abstract(self, s) -> tuple:
        c = self._cache
        if c[0] is s:
            return c[1]
        out = self._abstract(s)
        self._cache = (s, out)
        return out

    def _abstract(self, s) -> tuple:
        w, n = self.world, self.n
        g = s.group(w.group_id)
        slot = w.slot_of
        if g is None:
            coord = (G.EMPTY, 0, -1, 0, 0, 0, 0, None, 0)
            members_mask = 0
        else:
            members_mask = awaiting = syncwait = pending = 0
            leader = -1
            for mid, mv in g.members.items():
                k = slot(mv.client_id)
                if not 0 <= k < n:
                    continue
                bit = 1 << k
                members_mask |= bit
                if mv.awaiting_join:
                    awaiting |= bit
                if mv.awaiting_sync:
                    syncwait |= bit
                if mid in g.pending_sync_members:
                    pending |= bit
                if mid == g.leader_id:
                    leader = k
            state = _STATE[g.state]
            if state == G.PREPARING and any(key[0] == "ijoin" and key[1] == w.group_id
                                            for _d, key, _p in s.coord.internal.timers()):
                state = G.PREP_INITIAL
            asg = w._assignment(g) if g.state in ("Stable", "PreparingRebalance") else None
            coord = (state, g.generation_id, leader, members_mask, awaiting, syncwait, pending,
                     _only(asg, members_mask), 0)
        clients = tuple(self._client(s, m, coord) for m in range(n))
        offsets = s.counts
        pgen, pmem, plead, pasg = s.persisted
        persisted = (pgen, pmem, plead, _only(pasg, pmem))
        delivered = tuple((gen, _only(a, _members_of(a))) for gen, a in s.delivered if gen >= pgen)
        return (coord, clients, offsets, persisted, self._budget, delivered, None)

    def _client(self, s, m, coord) -> tuple:
        c = self._client5(s, m, coord)
        if self._client_len == 6:
            c = c + (self._commit_in_flight(s, m),)
        return c

    def _commit_in_flight(self, s, m) -> tuple:
        """(generation, partitions) of this process's OffsetCommit not yet handled, or ()."""
        mem = s.members[m]
        for cid, req, *_ in s.net.requests[m]:
            if isinstance(req, OffsetCommitRequest) and mem.wants(cid):
                return (req.generation_id, self.world._masks(tp for tp, _o in req.offsets))
        return ()

    def _client5(self, s, m, coord) -> tuple:
        mem = s.members[m]
        ans = s.answers[m]
        if not s.started[m] or not mem.alive or ans is None:
            return (G.DOWN, -1, 0, G.RUN, -1)
        flag = G.PAUSED if s.paused[m] or self._waiting(s, m) else G.RUN
        kind, gen, owned, acted = ans
        bit = 1 << m
        if coord[4] & bit:
            return (G.JOINING, gen, 0, flag, acted)
        if coord[5] & bit:
            return (G.SYNC_WAIT, gen, 0, flag, acted)
        if kind == "join":
            return (G.SYNCING, gen, 0, flag, acted)
        if kind == "sync":
            return (G.CSTABLE, gen, owned, flag, acted)
        return (G.IDLE, gen, 0, flag, acted)

    def _waiting(self, s, m) -> bool:
        """The running process waits for an answer (its request or the answer is in flight, or was
        lost) or has a request in flight: until it arrives (or its timer gives up on a lost one) the
        process is, to the coordinator, as unresponsive as a paused one (the model's paused flag). A
        JoinGroup or SyncGroup parked at the coordinator does not count: there the model knows it."""
        mem = s.members[m]
        if s.net.requests[m]:
            return True
        if not mem.inflight:
            return False
        parked = mem.join_cid if self.world._parked(s.group(self.world.group_id), mem) else None
        return any(cid != parked for cid in mem.inflight)

    # --- the check ----------------------------------------------------------------------------------
    def successors(self, a_prev) -> dict:
        """Normalised model successors of an abstract state: {normalised state: action}."""
        model = self.model
        out = {}
        for act in model.actions(a_prev):
            out.setdefault(_norm(model.step(a_prev, act)), act)
        return out

    def check(self, prev, action, nxt) -> Optional[str]:
        """None when the step refines (then `last_path` holds the model actions it maps to, () for a
        stutter), else a one-line explanation."""
        ap = self.abstract(prev)
        a = _norm(ap)
        b = _norm(self.abstract(nxt))
        self.last_path = ()
        if a == b:
            return None
        path = self._path(ap, b, MAX_TICK_STEPS if action[0] in ("tick", "settle") else 1)
        if path is not None:
            self.last_path = path
            return None
        succ = self.successors(ap)
        return (f"{action_label(action)} maps to no model step: abstract {self.show(a)} -> {self.show(b)}; "
                f"model steps: {', '.join(action_label(x) for x in succ.values()) or 'none'}")

    def _path(self, ap, b, depth: int):
        """Model actions leading from abstract state `ap` to normalised `b`: at most `depth` of them,
        plus `_free_steps` (each at most once). A breadth-first search (the one loop, model/search/)
        over `_PathSpace`: shortest paths first."""
        space = _PathSpace(self.model, ap, _free_steps(ap, b), depth)
        goal = Goal(lambda x: x[3] == b)
        search(space, ExactStore(_path_key), [goal])
        return goal.state[4] if goal.found >= 0 else None

    def matching_actions(self, prev, action, nxt):
        """The model actions a world step maps to (() for a stutter, None for a mismatch)."""
        ap = self.abstract(prev)
        b = _norm(self.abstract(nxt))
        if _norm(ap) == b:
            return ()
        return self._path(ap, b, MAX_TICK_STEPS if action[0] in ("tick", "settle") else 1)

    def show(self, a) -> str:
        coord, clients, offsets, persisted, _b, delivered, _p = a
        st, gen, leader, members, awaiting, syncwait, pending, asg, _e = coord
        cs = " ".join(f"m{i}:{G.STATUS_NAMES[c[0]]}/g{c[1]}/o{c[2]}/{G.FLAG_NAMES[c[3]]}/a{c[4]}"
                      + (f"/c{c[5]}" if len(c) > 5 else "") for i, c in enumerate(clients))
        name = "PreparingRebalance(initial)" if st == G.PREP_INITIAL else G.STATE_NAMES[st]
        return (f"[{name} gen={gen} leader={leader} members={members:b} awaiting={awaiting:b} syncwait={syncwait:b} "
                f"pending={pending:b} asg={asg} | {cs} | offsets={offsets} persisted={persisted} delivered={delivered}]")


_FLAG_ACTIONS = frozenset({"pause", "resume"})


class _PathSpace:
    """The model seen from one abstract state, for `GroupRefinement._path`: a node is (model state,
    free steps left, counted steps used, normalised state, model actions so far); a free step
    (`_free_steps`) is taken at most once and costs nothing, a pause/resume is only free, any other
    step counts against `depth`. Nodes are told apart by (normalised state, free steps left)."""

    def __init__(self, model, ap, free: frozenset, depth: int):
        self.model, self.depth = model, depth
        self.start = (ap, free, 0, _norm(ap), ())

    def init_states(self):
        return [self.start]

    def actions(self, node):
        st, left, used, _n, _p = node
        depth = self.depth
        return [act for act in self.model.actions(st)
                if act[:2] in left or (act[0] not in _FLAG_ACTIONS and used < depth)]

    def step(self, node, act):
        st, left, used, _n, path = node
        key = act[:2]
        rest, cost = (left - {key}, used) if key in left else (left, used + 1)
        t = self.model.step(st, act)
        return (t, rest, cost, _norm(t), path + (act,))


def _path_key(node):
    return (node[3], node[1])


def _free_steps(ap, b) -> frozenset:
    """Process-local model steps a world step may take besides its own (each at most once): the
    pause or resume of a process whose flag differs (a process waiting on a lost message is
    paused, and may act in the same world step), and the `sync` of a `syncing` process that moves on
    (a process that gave up its lost SyncGroup gets the error answer the model's SyncGroup gives)."""
    out = set()
    for m, (x, y) in enumerate(zip(ap[1], b[1])):
        if x[3] == G.PAUSED:
            out.add(("resume", m))
        if y[3] == G.PAUSED:
            out.add(("pause", m))
        if x[0] == G.SYNCING and y[:3] != x[:3]:
            out.add(("sync", m))
    return frozenset(out)
_STATE = {"Empty": G.EMPTY, "PreparingRebalance": G.PREPARING, "CompletingRebalance": G.COMPLETING,
          "Stable": G.STABLE, "Dead": 4}


def _members_of(asg) -> int:
    return 0 if asg is None else sum(1 << i for i, x in enumerate(asg) if x)


def _only(asg, mask):
    """Assignment entries of slots in `mask` (others are meaningless leftovers), None stays None."""
    if asg is None:
        return None
    return tuple(x if (mask >> i) & 1 else 0 for i, x in enumerate(asg))


def _norm(a) -> tuple:
    """Drop what is exploration bookkeeping, not protocol: budgets; stored-assignment entries of
    non-members; delivered entries as a set."""
    coord, clients, offsets, persisted, _budget, delivered, _prev = a
    st, gen, leader, members, awaiting, syncwait, pending, asg, epoch = coord
    coord = (st, gen, leader, members, awaiting, syncwait, pending, _only(asg, members), epoch)
    pgen, pmem, plead, pasg = persisted
    persisted = (pgen, pmem, plead, _only(pasg, pmem))
    delivered = tuple(sorted({(g, _only(x, _members_of(x)) if x is not None else None) for g, x in delivered},
                             key=repr))
    return (coord, clients, offsets, persisted, (), delivered, None)


# --- the engine: seeded random walks checked step by step ----------------------------------------------
@dataclass
class RefineResult:
    seed: int
    steps: int = 0
    walks: int = 0
    seconds: float = 0.0
    mismatch: Optional[Violation] = None
    trace: list = field(default_factory=list)       # actions of the failing walk, up to the mismatch
    walk_seed: Optional[int] = None
    model_actions: dict = field(default_factory=dict)   # model action name -> times matched
    stutters: int = 0

    def to_json(self) -> dict:
        return {"seed": self.seed, "steps": self.steps, "walks": self.walks, "seconds": round(self.seconds, 3),
                "mismatches": 0 if self.mismatch is None else 1, "stutters": self.stutters,
                "model_actions": dict(sorted(self.model_actions.items())),
                "mismatch": None if self.mismatch is None else {
                    **self.mismatch.to_json(), "walk_seed": self.walk_seed,
                    "trace": [list(a) for a in self.trace]}}


def refinement_invariant(refinement: GroupRefinement) -> Invariant:
    """The refinement check as a step invariant (so any engine that checks step invariants runs it)."""
    return Invariant("refines-group-model", "every world step is a step or a stutter of the abstract group model",
                     refinement.check, "step")


def run(world, steps: int, seed: int, *, walk_length: int = 200, stats: bool = True,
        refinement: Optional[GroupRefinement] = None, observe=None) -> RefineResult:
    """Random walks of at most `walk_length` steps (walk i uses seed `seed + i`, chooses uniformly among
    enabled actions like model/walk.py) until `steps` world steps in total; stop at the first mismatch.
    `observe(prev, action, next, model_actions)` is called for every step that refines."""
    ref = refinement or GroupRefinement(world)
    res = RefineResult(seed=seed)
    t0 = time.monotonic()
    init = world.init_states()
    while res.steps < steps:
        wseed = seed + res.walks
        rng = random.Random(wseed)
        state = init[rng.randrange(len(init))] if len(init) > 1 else init[0]
        res.walks += 1
        trace = []
        for _ in range(min(walk_length, steps - res.steps)):
            acts = list(world.actions(state))
            if not acts:
                break
            a = acts[rng.randrange(len(acts))]
            nxt = world.step(state, a)
            res.steps += 1
            trace.append(a)
            msg = ref.check(state, a, nxt)
            if msg is not None:
                res.mismatch = Violation("refines-group-model", msg, len(trace))
                res.trace = trace
                res.walk_seed = wseed
                res.seconds = time.monotonic() - t0
                return res
            if observe is not None:
                observe(state, a, nxt, ref.last_path)
            if stats:
                path = ref.last_path
                if not path:
                    res.stutters += 1
                for ma in path:
                    res.model_actions[ma[0]] = res.model_actions.get(ma[0], 0) + 1
            state = nxt
        if not trace:
            break
    res.seconds = time.monotonic() - t0
    return res
