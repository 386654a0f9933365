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
from typing import NamedTuple, Optional

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
    """Whether a group-world configuration (its complete, typed parameters) is inside what the
    abstract model describes."""
    p = world.params
    return (all(p[k] == v for k, v in REQUIRED.items()) and p["partitions"] <= MAX_PARTITIONS
            and p["members"] <= MAX_MEMBERS and not _static_with_losses(p))


def refinement_params(world_params: dict, defaults: Optional[dict] = None) -> dict:
    """The world parameters refinement runs with: group-world's defaults, then `defaults`, then the
    given ones (CLI strings or values), typed and range-checked by group-world's SPEC (the one
    parameter parser), plus REQUIRED (a given value that clashes with REQUIRED is an error)."""
    from kverify.model.worlds import group_world as GW

    given = dict(world_params or {})
    out = GW.SPEC.resolve({**(defaults or {}), **given})
    typed = GW.SPEC.resolve(given)
    for key, value in REQUIRED.items():
        if key in given and typed[key] != value:
            raise RefinementError(f"refinement needs {key}={value} (the abstract model has no {key}={typed[key]})")
        out[key] = value
    if out["partitions"] > MAX_PARTITIONS:
        raise RefinementError(f"refinement needs partitions <= {MAX_PARTITIONS} (range = the model's assignor only there)")
    if out["members"] > MAX_MEMBERS:
        raise RefinementError(f"refinement needs members <= {MAX_MEMBERS} (leader succession differs beyond)")
    if _static_with_losses(out):
        if "losses" in given:
            raise RefinementError("refinement with static members needs losses=0 (a static member that misses "
                                  "the join window stays in the group; the model drops it)")
        out["losses"] = 0
    return out


def _static_with_losses(p) -> bool:
    """Static members with a loss budget: synchronous mode loses nothing then (see group-world's
    `_straggles`), so refinement asks for losses=0 rather than silently ignoring the budget."""
    return p["static"] is True and p["losses"] > 0


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
        self._budget = G.Budget(*(BIG for _ in init.budget))

    # --- the abstraction function -----------------------------------------------------------------
    def abstract(self, s) -> G.GroupState:
        c = self._cache
        if c[0] is s:
            return c[1]
        out = self._abstract(s)
        self._cache = (s, out)
        return out

    def _abstract(self, s) -> G.GroupState:
        w, n = self.world, self.n
        g = s.group(w.group_id)
        slot = w.slot_of
        if g is None:
            coord = G.Coordinator(G.EMPTY, 0, G.NO_LEADER, 0, 0, 0, 0, G.NO_ASSIGNMENT, 0)
        else:
            members_mask = awaiting = syncwait = pending = 0
            leader = G.NO_LEADER
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
            asg = w._assignment(g) if g.state in ("Stable", "PreparingRebalance") else G.NO_ASSIGNMENT
            coord = G.Coordinator(state, g.generation_id, leader, members_mask, awaiting, syncwait, pending,
                                  _only(asg, members_mask), 0)
        clients = tuple(self._client(s, m, coord) for m in range(n))
        rec = G.GroupRecord(*s.persisted)
        persisted = rec._replace(assignment=_only(rec.assignment, rec.members))
        delivered = tuple(G.Delivered(gen, _only(a, _members_of(a))) for gen, a in s.delivered
                          if gen >= persisted.generation)
        return G.GroupState(coord, clients, tuple(s.counts), persisted, self._budget, delivered, None)

    def _commit_in_flight(self, s, m):
        """The process's OffsetCommit not yet handled (generation, partitions), or NO_COMMIT."""
        mem = s.members[m]
        for cid, req, *_ in s.net.requests[m]:
            if isinstance(req, OffsetCommitRequest) and mem.wants(cid):
                return G.InFlight(req.generation_id, self.world._masks(tp for tp, _o in req.offsets))
        return G.NO_COMMIT

    def _client(self, s, m, coord: G.Coordinator) -> G.Client:
        mem = s.members[m]
        ans = s.answers[m]
        if not s.started[m] or not mem.alive or ans is None:
            return G.Client(G.DOWN, -1, 0, G.RUN, -1, self._commit_in_flight(s, m))
        flag = G.PAUSED if s.paused[m] or self._waiting(s, m) else G.RUN
        kind, gen, owned, acted = ans
        bit = 1 << m
        if coord.awaiting_join & bit:
            status, owned = G.JOINING, 0
        elif coord.awaiting_sync & bit:
            status, owned = G.SYNC_WAIT, 0
        elif kind == "join":
            status, owned = G.SYNCING, 0
        elif kind == "sync":
            status = G.CSTABLE
        else:
            status, owned = G.IDLE, 0
        return G.Client(status, gen, owned, flag, acted, self._commit_in_flight(s, m))

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
        bp = self.abstract(nxt)
        b = _norm(bp)
        self.last_path = ()
        if _norm(ap) == b:
            return None
        path = self._path(ap, b, MAX_TICK_STEPS if action[0] in ("tick", "settle") else 1)
        if path is not None:
            self.last_path = path
            return None
        succ = self.successors(ap)
        return (f"{action_label(action)} maps to no model step: abstract {self.show(ap)} -> {self.show(bp)}; "
                f"model steps: {', '.join(action_label(x) for x in succ.values()) or 'none'}")

    def _path(self, ap, b, depth: int):
        """Model actions leading from abstract state `ap` to normalised `b`: at most `depth` of them,
        plus `_free_steps` (each at most once). A breadth-first search (the one loop, model/search/)
        over `_PathSpace`: shortest paths first."""
        space = _PathSpace(self.model, ap, _free_steps(ap, b), depth)
        goal = Goal(lambda node: node.norm == b)
        search(space, ExactStore(_path_key), [goal])
        return goal.state.path if goal.found >= 0 else None

    def matching_actions(self, prev, action, nxt):
        """The model actions a world step maps to (() for a stutter, None for a mismatch)."""
        ap = self.abstract(prev)
        b = _norm(self.abstract(nxt))
        if _norm(ap) == b:
            return ()
        return self._path(ap, b, MAX_TICK_STEPS if action[0] in ("tick", "settle") else 1)

    def show(self, a: G.GroupState) -> str:
        c = a.coord
        cs = " ".join(f"m{i}:{G.STATUS_NAMES[x.status]}/g{x.generation}/o{x.owned}/{G.FLAG_NAMES[x.flag]}/a{x.acted}"
                      + (f"/c{tuple(x.inflight)}" if x.inflight else "") for i, x in enumerate(a.clients))
        name = "PreparingRebalance(initial)" if c.state == G.PREP_INITIAL else G.STATE_NAMES[c.state]
        return (f"[{name} gen={c.generation} leader={c.leader} members={c.members:b} awaiting={c.awaiting_join:b} "
                f"syncwait={c.awaiting_sync:b} pending={c.pending_sync:b} asg={c.assignment} | {cs} | "
                f"offsets={a.offsets} persisted={tuple(a.persisted)} delivered={tuple(tuple(d) for d in a.delivered)}]")


_FLAG_ACTIONS = frozenset({"pause", "resume"})


class _PathSpace:
    """The model seen from one abstract state, for `GroupRefinement._path`: a node is (model state,
    free steps left, counted steps used, normalised state, model actions so far); a free step
    (`_free_steps`) is taken at most once and costs nothing, a pause/resume is only free, any other
    step counts against `depth`. Nodes are told apart by (normalised state, free steps left)."""

    def __init__(self, model, ap, free: frozenset, depth: int):
        self.model, self.depth = model, depth
        self.start = _Node(ap, free, 0, _norm(ap), ())

    def init_states(self):
        return [self.start]

    def actions(self, node: "_Node"):
        left, counted = node.free, node.used < self.depth
        return [act for act in self.model.actions(node.state)
                if act[:2] in left or (counted and act[0] not in _FLAG_ACTIONS)]

    def step(self, node: "_Node", act) -> "_Node":
        key = act[:2]
        left = node.free
        rest, used = (left - {key}, node.used) if key in left else (left, node.used + 1)
        t = self.model.step(node.state, act)
        return _Node(t, rest, used, _norm(t), node.path + (act,))


class _Node(NamedTuple):
    state: G.GroupState     # the model state
    free: frozenset         # free steps left
    used: int               # counted steps taken
    norm: "_Norm"           # _norm(state)
    path: tuple             # model actions from the start


def _path_key(node: _Node):
    return (node.norm, node.free)


def _free_steps(ap, b) -> frozenset:
    """Process-local model steps a world step may take besides its own (each at most once): the
    pause or resume of a process whose flag differs (a process waiting on a lost message is
    paused, and may act in the same world step), and the `sync` of a `syncing` process that moves on
    (a process that gave up its lost SyncGroup gets the error answer the model's SyncGroup gives)."""
    out = set()
    for m, (x, y) in enumerate(zip(ap.clients, b.clients)):
        if x.flag == G.PAUSED:
            out.add(("resume", m))
        if y.flag == G.PAUSED:
            out.add(("pause", m))
        if x.status == G.SYNCING and (y.status, y.generation, y.owned) != (x.status, x.generation, x.owned):
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


def _norm(a: G.GroupState) -> "_Norm":
    """The state's normal form (a comparison key, never stepped): what is exploration
    bookkeeping, not protocol, dropped: budgets; stored-assignment entries of non-members; delivered
    entries as a set."""
    c, p = a.coord, a.persisted
    coord = (c.state, c.generation, c.leader, c.members, c.awaiting_join, c.awaiting_sync, c.pending_sync,
             _only(c.assignment, c.members), c.epoch)
    persisted = (p.generation, p.members, p.leader, _only(p.assignment, p.members))
    delivered = tuple(sorted({(d.generation, _only(d.assignment, _members_of(d.assignment))) for d in a.delivered},
                             key=repr))
    return _Norm(coord, a.clients, a.offsets, persisted, delivered)


class _Norm(NamedTuple):
    """A group state's normal form (see `_norm`): coordinator and record as plain tuples."""

    coord: tuple
    clients: tuple
    offsets: tuple
    persisted: tuple
    delivered: tuple


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


def uniform_choice(rng: random.Random, world, acts: list):
    """Uniform among the enabled actions, like model/walk.py."""
    return acts[rng.randrange(len(acts))]


def run(world, steps: int, seed: int, *, walk_length: int = 200, stats: bool = True,
        refinement=None, observe=None, choose=uniform_choice,
        name: str = "refines-group-model") -> RefineResult:
    """Random walks of at most `walk_length` steps (walk i uses seed `seed + i`; `choose(rng, world,
    enabled)` picks each step, uniformly by default) until `steps` world steps in total; stop at the
    first step `refinement.check` maps to no model path (a mismatch named `name`). The one walk loop of
    every refinement (model/worlds/consumer_group_refine.py passes its own refinement and chooser).
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
            a = choose(rng, world, acts)
            nxt = world.step(state, a)
            res.steps += 1
            trace.append(a)
            msg = ref.check(state, a, nxt)
            if msg is not None:
                res.mismatch = Violation(name, msg, len(trace))
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
