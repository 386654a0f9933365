"""Refinement of consumer-group-world (impl/consumer) to the abstract `consumer-group` model.

Why it exists: the abstract model (model/consumer_group.py, K3) is what the explorer checks
exhaustively and what the TLA+ spec and the Z3 proofs state; that is worth something only if the
implementation behaves like it. `ConsumerGroupRefinement` maps a world state onto a model state
(`abstract`) and checks every world step: the abstract states before and after are equal (a
stutter) or joined by 1..MAX_STEPS steps of the model's `ACTIONS` (`check`); `run` drives seeded
random walks (as model/refine.py `run` does for group-world) and counts the model actions matched.

The abstraction function (world -> model), part by part:
* group: `coord.group("g")` numbered as the invariants number it (member id = slot + members *
  incarnation, partition bit = topic * pmax + partition): epochs, members (state, epochs, assigned,
  pending revocation, subscribed topics), target, partition epochs (-1 = free), subscription
  metadata as partitions per subscribed topic;
* topics: the coordinator's metadata image;
* clients: a not started process is the model's initial JOINING client; a crashed one is DOWN.
  The model handles a heartbeat in the step that sends it, so a heartbeat REQUEST still in flight
  is "not sent yet", and the client's state is the one it had before sending (the Java client
  enters STABLE / UNSUBSCRIBED when it builds the ACKNOWLEDGING / leave heartbeat: a leave
  heartbeat request in flight is the model's LEAVING; once handled, the model's client is
  UNSUBSCRIBED too). A heartbeat ANSWER in flight is the model's `answer` (its assignment read
  from a ghost the world keeps, since Kafka omits an unchanged one). An OffsetCommit the client
  sent before revoking, not yet handled, is the model's `commit`.
Normalisation (both sides, `norm`): budgets dropped (bounds, not protocol); ACKNOWLEDGING is STABLE
(they differ only in whether a no-op heartbeat is a step, and a client that just reconciled always
reports); `reported` is not compared (the model resends the owned list after an answer that
changed only the member epoch, the Java client's HeartbeatState does not: its LocalAssignment is
unchanged; where the coordinator's answer depends on it, the group part of the next state
differs); a STABLE client whose answer in flight repeats what it knows has none (the model takes
no no-op heartbeat); clients that left or crashed keep no subscription or assignment; a commit in
flight is compared by its epoch (the impl commits its known positions, a subset of the owned
partitions while an OffsetFetch is out).
One world step may be several model steps (MAX_STEPS): the Java client reconciles (or sends its
auto-commit) in the same input that handles the answer (receive + reconcile | commit), and one
time jump may expire two sessions (tick: expire, expire; stall: expire_live, expire_live).

What the world must assume (`REQUIRED`): the model's assignor (`assignor=round-robin`,
`RoundRobinAssignor` below: the real assignors are certified separately), `synchronous` (leave only
with no heartbeat in flight, no resubscribe, no failover).
"""
from __future__ import annotations

import random
from typing import Optional

from kverify.impl.consumer.messages import (ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
                                            OffsetCommitRequest)
from kverify.model import consumer_group as CG
from kverify.model.protocol import action_label
from kverify.model.refine import RefineResult          # one result shape for every refinement
from kverify.model.refine import run as refine_walks
from kverify.model.search import ExactStore, Goal, search

BIG = 1 << 20
MAX_STEPS = 3            # a world step may be several model steps (receive + reconcile + commit)
REQUIRED = {"assignor": "round-robin", "synchronous": True}
WALK_DEFAULTS = {"topics": 2, "perturbations": 3, "losses": 2, "failover": False}
NAME = "refines-consumer-group-model"
CALM = 0.8               # walks draw among non-fault actions this often: budgets last until groups have formed


class RoundRobinAssignor:
    """The abstract model's assignor (model/consumer_group.py `assign`) as an impl server assignor:
    partitions in topic order, each to the next subscriber of its topic in member-id order (the
    invariants' numbering), one counter over all topics."""

    name = "round-robin"

    def __init__(self, world):
        self.world = world

    def assign(self, spec, describer) -> dict:
        w = self.world
        ids = sorted(spec.members, key=w.mid)
        ids_of = {t.name: t.topic_id for t in w.init_states()[0].coord.topics.topics}
        keys = {str(t): t for m in ids for t in spec.members[m].subscribed}     # the describer's id objects
        out = {m: {} for m in ids}
        k = 0
        for t in range(w.t):
            name = f"t{t}"
            subs = [m for m in ids if name in _names(spec.members[m], ids_of)]
            n = describer.num_partitions(keys.get(ids_of[name], ids_of[name])) if subs else 0
            for p in range(max(n, 0)):
                out[subs[k % len(subs)]].setdefault(ids_of[name], set()).add(p)
                k += 1
        return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in out.items()}


def _names(member_spec, ids_of) -> frozenset:
    if getattr(member_spec, "names", None) is not None:       # K1's MemberSpec.from_names
        return frozenset(member_spec.names)
    subscribed = {str(t) for t in member_spec.subscribed}
    return frozenset(n for n, tid in ids_of.items() if tid in subscribed)


class RefinementError(ValueError):
    """The world configuration is outside what the abstract model describes (one line)."""


def refinement_params(given: Optional[dict] = None, defaults: Optional[dict] = None) -> dict:
    out = dict(defaults or {})
    out.update(given or {})
    for key, value in REQUIRED.items():
        if key in out and out[key] != value and str(out[key]).lower() != str(value).lower():
            raise RefinementError(f"refinement needs {key}={value} (the abstract model has no {key}={out[key]})")
        out[key] = value
    return out


class ConsumerGroupRefinement:
    """Abstraction function consumer-group-world -> consumer-group model, and the per-step check."""

    def __init__(self, world, model=None):
        self.world = world
        p = world.params
        self.model = model or CG.ConsumerGroupModel(
            {"members": world.n, "topics": world.t, "partitions": p["partitions"], "grow": p["grow"],
             "perturbations": BIG, "losses": BIG, "commits": BIG}, world.behaviours & CG.SUPPORTS)
        self.last_path = ()

    # --- the abstraction function ------------------------------------------------------------
    def abstract(self, s) -> CG.ConsumerGroupState:
        w = self.world
        v = w.view(s)
        g = s.coord.group("g")
        meta = [0] * w.t
        if g is not None:
            for name, _tid, n in g.subscription_metadata:
                meta[int(name[1:])] = n
        members = tuple(CG.Member(*m) for m in v.members)
        target = tuple(CG.Target(mid, mask) for mid, mask in v.target)
        group = CG.Group(v.group_epoch, v.assignment_epoch, members, target, v.partition_epochs, tuple(meta))
        clients = tuple(self._client(s, m) for m in range(w.n))
        return CG.ConsumerGroupState(group, clients, tuple(v.topics), CG.Budget(BIG, BIG, BIG))

    def _client(self, s, m) -> CG.Client:
        w = self.world
        c = s.clients[m]
        everything = w.all_topics
        if not s.started[m]:
            return CG.Client(CG.JOINING, m, 0, 0, 0, everything, CG.NOT_SENT, None, False, None)
        mid = w.mid(c.member_id)
        if not c.alive:
            return CG.Client(CG.DOWN, mid, 0, 0, 0, w.topic_mask(c.subscription), CG.NOT_SENT, None, False, None)
        hb_req = answer = commit = unsent = None
        for cid, req, _conn in s.net.requests[m]:
            if isinstance(req, ConsumerGroupHeartbeatRequest) and c.wants(cid):
                hb_req, unsent = c.inflight[cid], req
            elif isinstance(req, OffsetCommitRequest) and c.wants(cid) and c.inflight[cid].purpose == "reconcile":
                commit = CG.Commit(req.generation_id_or_member_epoch, 0)
        for cid, resp in s.net.responses[m]:
            if isinstance(resp, ConsumerGroupHeartbeatResponse) and c.wants(cid):
                hb_req = c.inflight[cid]
                answer = CG.Answer(resp.error if resp.error in (CG.FENCED, CG.UNKNOWN) else CG.NONE,
                                   resp.member_epoch, s.ghosts[m].get(cid, 0))
        state = _STATES.get(c.state, CG.JOINING)
        if unsent is not None and c.inflight[unsent.correlation_id].purpose == "leave":
            state = CG.LEAVING                  # its leave heartbeat is not handled yet
        would_send = c.state == "JOINING" or c.sent is None or c.sent[3] != (c.local_epoch, c.owned)
        if unsent is not None:
            # sent, not yet handled: the model has not sent it yet, so what it will carry is still to send
            would_send = unsent.topic_partitions is not None
        return CG.Client(state, mid, c.member_epoch, w.mask(c.owned), w.mask(c.target or ()),
                         w.topic_mask(c.subscription), CG.NOT_SENT if would_send else w.mask(c.owned),
                         answer, answer is not None, commit)

    # --- the check ----------------------------------------------------------------------------
    def check(self, prev, action, nxt) -> Optional[str]:
        ap = self.abstract(prev)
        a, b = norm(ap), norm(self.abstract(nxt))
        self.last_path = ()
        if a == b:
            return None
        path = self._path(ap, b)
        if path is not None:
            self.last_path = path
            return None
        succ = sorted({action_label(x) for x in self.model.actions(ap)})
        return (f"{action_label(action)} maps to no model step: abstract {show(a)} -> {show(b)}; "
                f"model steps: {', '.join(succ) or 'none'}")

    def _path(self, ap, b):
        """The shortest model path (1..MAX_STEPS actions) from `ap` to a state normalising to `b`
        (a breadth-first search on the one loop, model/search/)."""
        space = _PathSpace(self.model, ap)
        goal = Goal(lambda node: node[1] == b and node[2])
        search(space, ExactStore(lambda node: node[1]), [goal])
        return goal.state[2] if goal.found >= 0 else None


class _PathSpace:
    """The model seen from one abstract state: a node is (model state, its normal form, actions so far)."""

    def __init__(self, model, ap):
        self.model = model
        self.start = (ap, norm(ap), ())

    def init_states(self):
        return [self.start]

    def actions(self, node):
        return self.model.actions(node[0]) if len(node[2]) < MAX_STEPS else []

    def step(self, node, act):
        t = self.model.step(node[0], act)
        return (t, norm(t), node[2] + (act,))


_STATES = {"UNSUBSCRIBED": CG.UNSUBSCRIBED, "JOINING": CG.JOINING, "FENCED": CG.JOINING, "RECONCILING": CG.RECONCILING,
           "ACKNOWLEDGING": CG.ACKNOWLEDGING, "STABLE": CG.STABLE, "PREPARE_LEAVING": CG.LEAVING,
           "LEAVING": CG.LEAVING}


def norm(s: CG.ConsumerGroupState) -> tuple:
    """What refinement compares (see the module docstring): budgets dropped, clients normalised."""
    return (s.group, tuple(_norm_client(c) for c in s.clients), s.topics)


def _norm_client(c: CG.Client) -> tuple:
    state = CG.STABLE if c.state == CG.ACKNOWLEDGING else c.state
    # whether the next heartbeat carries the owned list is NOT compared: the model resends it after an
    # answer that changed only the epoch, the Java client (HeartbeatState: LocalAssignment unchanged)
    # does not; where the coordinator's answer depends on it, the group part of the state differs
    reports = None
    answer = c.answer
    if (state == CG.STABLE and answer is not None and answer.error == CG.NONE
            and (answer.member_epoch, answer.assignment) == (c.member_epoch, c.assignment)):
        answer = None                           # a no-op heartbeat in flight: the model takes none
    gone = state in (CG.UNSUBSCRIBED, CG.LEAVING, CG.DOWN)
    return (state, c.member_id, c.member_epoch, c.owned, 0 if gone else c.assignment, 0 if gone else c.subscribed,
            reports, answer, None if c.commit is None else c.commit.member_epoch)


def show(n: tuple) -> str:
    group, clients, topics = n
    ms = " ".join(f"m{m.member_id}:{CG.MEMBER_STATE_NAMES[m.state]}/e{m.member_epoch}/p{m.previous_member_epoch}"
                  f"/a{m.assigned:b}/r{m.pending_revocation:b}/s{m.subscribed:b}" for m in group.members)
    cs = " ".join(f"[{CG.CLIENT_STATE_NAMES[c[0]]} m{c[1]} e{c[2]} o{c[3]:b} a{c[4]:b} s{c[5]:b} "
                  f"ans={tuple(c[7]) if c[7] else None} commit={c[8]}]" for c in clients)
    target = [(t.member_id, bin(t.partitions)) for t in group.target]
    return (f"<g{group.group_epoch}/a{group.assignment_epoch} {ms} target={target} "
            f"pe={group.partition_epochs} meta={group.subscription_metadata} | {cs} | topics={topics}>")


# --- the engine: seeded random walks checked step by step -------------------------------------------------
def calm_choice(rng: random.Random, world, acts: list):
    """With probability CALM uniform among the enabled non-fault actions, else among all: drawing faults
    less often lets perturbations (leave, resubscribe...) happen to formed groups instead of being spent
    before the first join."""
    calm = [x for x in acts if not world.is_fault(x)]
    pool = calm if calm and rng.random() < CALM else acts
    return pool[rng.randrange(len(pool))]


def run(world, steps: int, seed: int, *, walk_length: int = 200,
        refinement: Optional[ConsumerGroupRefinement] = None) -> RefineResult:
    """Seeded random walks (model/refine.py's one walk loop, with `calm_choice`) until `steps` world
    steps in total; stop at the first step that maps to no model path."""
    return refine_walks(world, steps, seed, walk_length=walk_length,
                        refinement=refinement or ConsumerGroupRefinement(world), choose=calm_choice, name=NAME)
