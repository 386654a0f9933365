"""consumer-group-world: the KIP-848 reference coordinator + consumer clients + a lossy network.

Why it exists: the abstract `consumer-group` model (model/consumer_group.py) states KIP-848's rules;
this world runs the *implementation* (kverify.impl.consumer: `ConsumerGroupCoordinator` and the
Java-like client `ConsumerMember`) under every interleaving the engines choose, and judges it with
the very same invariant objects (invariants/consumer_group.py) through a `CGView` of its state.
model/worlds/consumer_group_refine.py maps it onto the abstract model (refinement).

Actions (one `Action` each, guard + update, in `ACTIONS`; faults marked):
  start / restart                     a client process subscribes and polls (restart: after its old
                                      member left the coordinator, with the next member id)
  subscribe, leave, crash,            perturbations (budget `perturbations`): a subscription change,
  resubscribe, add_partition,         unsubscribe (leave heartbeat, epoch -1), a crash (the session
  stall, unload, subscribe_regex      expires later), subscribing again after leaving, a topic gaining
                                      a partition (coordinator metadata), time passing with messages
                                      in flight (see tick), a coordinator failover (NOT_COORDINATOR
                                      until `load`), with `regex` a subscription to the pattern `t.*`
                                      alone (Java) or with topic names (librdkafka); `subscribe` goes
                                      back to names only
  deliver / receive                   the head request of a client reaches the coordinator / the
                                      head answer reaches its client (FIFO per client, TCP; clients
                                      interleave freely; a message may stay in flight any number of
                                      steps, across time jumps: late answers)
  lose                                a heartbeat answer is lost (budget `losses`): the client's
                                      request times out (`on_failure`) and it heartbeats again
  load                                the coordinator (re)loads the group after a failover
  tick                                time jumps to the next deadline: a coordinator timer (session or
                                      rebalance timeout; MockTimer fires deadlines < now, so deadline
                                      + 1) or a client's heartbeat; then every live client polls.
                                      Only while nothing is in flight (messages are faster than a
                                      heartbeat interval), except as the perturbation `stall`: time
                                      passes with messages in flight (late answers; a client whose
                                      heartbeat is late past its session timeout becomes a zombie)
Time is relative in the state key (`canonical`): the coordinator's timer deadlines and the clients'
heartbeat/poll times are stored minus `now`, correlation ids are renumbered per client, and offset
*values* are left out (positions and committed offsets are data: no rule compares them, only
whether a position is known). Two states with equal keys therefore have the same futures up to that
renaming (same argument as group-world's `canonical`); the explorer rebuilds traces from concrete
states. Exact while the world's clock stays below 2**30 ms (the metadata refresh deadline, 2**31-1
ms in Kafka, is "far" in the key).

Clients (ClientConfig): heartbeat interval and session timeout from the coordinator
(HEARTBEAT_MS, SESSION_MS), rebalance timeout / max.poll.interval huge (the application polls at
every tick; with `poll_stall` it is POLL_MS, see below), auto-commit before reconciling and leaving when
`auto_commit` (positions come from OffsetFetch), no periodic auto-commit; each asks for the world's
`assignor` as its server assignor (group.remote.assignor), which its member must record.

`synchronous=True` narrows the world to the abstract model's assumptions (refinement, see
model/worlds/consumer_group_refine.py): a client leaves only with no heartbeat in flight and changes
its subscription (or subscribes again after leaving) only while no heartbeat of it is on its way to
the coordinator; time does not pass while a client reconciles (its periodic heartbeat would go out
in RECONCILING, which the abstract model's client never does); no failover.
`regex=True` adds regular-expression subscriptions (off by default: the default bound is unchanged).
The coordinator resolves a new pattern asynchronously: a timer (regex_resolution_ms) that `tick`
fires like any other deadline; a changed resolution bumps the group epoch. The refresh interval
(group.consumer.regex.refresh.interval.ms) is set "far", so the key keeps the last resolution's age
only within the 10 s batch interval (older is "old"). Java's subscribe(SubscriptionPattern) sends no
topic names, so dropping a pattern always changes the names and bumps the epoch: KAFKA-19899 shows
only with a mixed subscription (names + pattern, librdkafka's way), which the world builds on
ConsumerMember (see subscribe_regex). A member's subscribed topics (the invariants' `subscribed`) are
its names plus its pattern's current resolution; a settled state (`is_quiescent_good`, recoverability)
also needs every subscribed pattern resolved against the topics that exist.
`start_pattern=True` makes every client's application subscribe to PATTERN instead of the topic names
(start, restart, resubscribe), so two members share one pattern without spending perturbations; a
`subscribe` then leaves it for names, and the group must keep its resolution for the other member
(resolved-pattern-kept).
`poll_stall=True` (off by default: the default bound is unchanged) gives the clients a finite
max.poll.interval (= the rebalance timeout they send), POLL_MS = one heartbeat interval, and adds the
perturbation `miss_poll`: time jumps as in `tick` but the application of one client does not poll
(its background thread still heartbeats), past its poll deadline, so the client leaves the group
(AbstractHeartbeatRequestManager.poll: a leave heartbeat sent with ignoreResponse) and goes STALE;
`poll` is its application polling again at any moment (STALE -> JOINING; its next `tick` polls it
too), before or after the leave's answer arrives. The world keeps no extra state for it: whether a
client polled is its own poll timer (`last_poll_at`, relative in the key).
`assignor="round-robin"` plugs the abstract model's assignor into the coordinator (the real ones,
`uniform`/`range`, are certified separately by `kverify assignor check`).

Historical behaviours (`SUPPORTS`) go to the component that has them (coordinator or client);
tests/test_consumer_group_world.py shows each one found with it on and not with it off.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.consumer import behaviours as CB
from kverify.impl.consumer import regex as RX
from kverify.impl.consumer.client import ClientConfig, ConsumerMember
from kverify.impl.consumer.config import ConsumerCoordinatorConfig
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from kverify.impl.consumer.messages import (ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
                                            Errors as E, OffsetCommitRequest, OffsetFetchResponse)
from kverify.invariants.consumer_group import (G_ASSIGNING, G_EMPTY, G_RECONCILING, G_STABLE, M_STABLE,
                                               UNRELEASED, UNREVOKED, Answer, CGView, ClientView, Commit, Ignored, Leave,
                                               MemberView, Reconciling, client_invariants, consumer_group_invariants,
                                               consumer_group_sometimes)
from kverify.invariants.core import Sometimes
from kverify.model.actions import Action, ActionTable
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param
from kverify.model.worlds import KeyedState
from kverify.model.worlds.network import REQ, RESP, Net

PARAMS = {
    "members": Param(2, "consumer clients (slots m0..)", lo=1, hi=3),
    "topics": Param(1, "topics t0..; every client subscribes to all of them at first", lo=1, hi=3),
    "partitions": Param(1, "partitions per topic at first", lo=1, hi=3),
    "grow": Param(True, "metadata changes: a topic may gain one partition (a perturbation)"),
    "perturbations": Param(1, "budget of perturbations: subscription change, leave, crash, resubscribe, "
                              "partition added, coordinator failover", lo=0),
    "losses": Param(0, "budget of lost heartbeat answers", lo=0),
    "failover": Param(True, "coordinator failover (unload/load) is a perturbation"),
    "auto_commit": Param(True, "clients commit their positions before revoking and before leaving"),
    "assignor": Param("uniform", "server assignor: Kafka's uniform or range, or round-robin (the abstract "
                                 "model's, for refinement)", choices=("uniform", "range", "round-robin")),
    "regex": Param(False, "regular-expression subscriptions: a member may switch to the pattern `t.*`, alone "
                          "(Java's subscribe(SubscriptionPattern)) or with topic names (librdkafka), a "
                          "perturbation, and back to names (`subscribe`); the coordinator resolves it "
                          "asynchronously (a timer)"),
    "patterns": Param(1, "with regex: how many of the patterns t.*, t0 a member may subscribe to", lo=1, hi=2),
    "start_pattern": Param(False, "every client's application subscribes to the pattern `t.*` (Java's "
                                  "subscribe(SubscriptionPattern)) at start, restart and resubscribe instead of every "
                                  "topic name: members share a pattern from the start (`subscribe` leaves it)"),
    "poll_stall": Param(False, "poll stalls: max.poll.interval = one heartbeat interval and the perturbation "
                               "`miss_poll` (a time jump in which one client's application does not poll: its poll "
                               "timer expires, it leaves and goes STALE); `poll`: its application polls again"),
    "synchronous": Param(False, "the abstract model's assumptions (refinement): leave only with no heartbeat "
                                "in flight, (re)subscribe only with no heartbeat request in flight, no time "
                                "passing while a client reconciles, no failover"),
}

COORDINATOR_BEHAVIOURS = CB.ALL
CLIENT_BEHAVIOURS = CB.CLIENT_ALL
SUPPORTS = COORDINATOR_BEHAVIOURS | CLIENT_BEHAVIOURS

GROUP = "g"
HEARTBEAT_MS, SESSION_MS, BACKOFF_MS = 1000, 3000, 100
REBALANCE_MS = 10 ** 9          # max.poll.interval / rebalance timeout: never reached here
POLL_MS = HEARTBEAT_MS          # max.poll.interval / rebalance timeout with `poll_stall`: one missed poll expires it
CID_STRIDE = 1_000_000          # client m issues correlation ids (m+1)*CID_STRIDE + 1, + 2, ...
FAR = 1 << 30                   # time distances beyond this are "far" in the key
PATTERNS = ("t.*", "t0")        # the patterns a member may subscribe to (`regex`; the first `patterns`)
PATTERN = PATTERNS[0]           # every topic
ACTIVE = frozenset({"JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE"})
LIVE = ACTIVE                    # FENCED and PREPARE_LEAVING only pass within one input
MEMBER_STATES = {"STABLE": M_STABLE, "UNREVOKED_PARTITIONS": UNREVOKED, "UNRELEASED_PARTITIONS": UNRELEASED}
GROUP_STATES = {"Empty": G_EMPTY, "Assigning": G_ASSIGNING, "Reconciling": G_RECONCILING, "Stable": G_STABLE}


class Budget(NamedTuple):
    perturbations: int
    losses: int


class Facts(NamedTuple):
    """What one step did (not part of state equality): for step invariants and `sometimes`."""

    accepted: tuple = ()       # invariants.consumer_group.Commit
    answered: tuple = ()       # invariants.consumer_group.Answer
    reconciled: tuple = ()     # member ids whose heartbeat the coordinator handled without error
    revoked: bool = False      # a member left UNREVOKED_PARTITIONS (its revocation completed)
    left: tuple = ()           # invariants.consumer_group.Leave (a `leave` with auto-commit on)
    ignored: tuple = ()        # invariants.consumer_group.Ignored (the answer to a poll-expiry leave received)
    polled: tuple = ()         # slots of the clients whose application called poll() during the step


NO_FACTS = Facts()


_UNSET = object()


class WorldState(KeyedState):
    """One state: the coordinator and client objects are never mutated once the state is built (a
    step copies what it changes); equality and hash use the relative-time key (`world_key`)."""

    __slots__ = ("coord", "clients", "net", "started", "budget", "facts", "ghosts", "_key", "_hash", "_view", "_g")

    def __init__(self, coord, clients, net, started, budget, facts=NO_FACTS, ghosts=None):
        self.coord = coord
        self.clients = clients          # ConsumerMember per slot
        self.net = net                  # Net (requests and answers per slot)
        self.started = started          # per slot: the process was started once
        self.budget = budget
        self.facts = facts
        self.ghosts = ghosts            # per slot: {cid: assigned partitions (mask)} of heartbeat answers in
                                        # flight (refinement reads it: Kafka omits an unchanged assignment)
        self._key = None
        self._hash = None
        self._view = None
        self._g = _UNSET

    def group(self):
        """The coordinator's ConsumerGroupView of the world's group (None before the first join); cached."""
        g = self._g
        if g is _UNSET:
            g = self._g = self.coord.group(GROUP)
        return g

    @property
    def now(self) -> int:
        return self.coord.now

    def _compute_key(self):
        return world_key(self)

    def __repr__(self):
        return f"WorldState(now={self.now}, budget={tuple(self.budget)}, in_flight={self.net.size()})"


def make(params: dict, behaviours: frozenset) -> "ConsumerGroupWorld":
    return ConsumerGroupWorld(params, behaviours)


# --- the actions: guard + update, each once ------------------------------------------------------------
def _slots(w, s):
    return w.slot_args


def _topics(w, s):
    return w.topic_args


def _subscriptions(w, s):
    return w.subscription_args


def start_guard(w, s, m):
    return not s.started[m]


def start(w, s, m):
    """The process subscribes to every topic (`start_pattern`: to PATTERN) and polls: its join heartbeat
    (epoch 0) goes out."""
    c = s.clients[m].copy()
    return w.build(s, clients=_set(s.clients, m, c), started=_set(s.started, m, True),
                   net=s.net.send(m, c.start(s.now) + _pattern_join(w, c, s.now)), facts=Facts(polled=(m,)))


def _pattern_join(w, c, now) -> list:
    """With `start_pattern` the clients' configs list no topic (start() then subscribes to nothing and sends
    nothing): the application subscribes to PATTERN and polls, sending the join heartbeat."""
    if not w.start_pattern:
        return []
    c.subscribe_regex(PATTERN, now)
    return c.poll(now)


def restart_guard(w, s, m):
    c = s.clients[m]
    return s.started[m] and not c.alive and w.member_of(s, c.member_id) is None


def restart(w, s, m):
    """The crashed process starts again once its old member left the coordinator (new member id)."""
    c = s.clients[m].copy()
    out = c.restart(s.now) + _pattern_join(w, c, s.now)
    return w.build(s, clients=_set(s.clients, m, c), net=s.net.send(m, out), facts=Facts(polled=(m,)))


def subscribe_guard(w, s, m, mask):
    c = s.clients[m]
    if s.budget.perturbations <= 0 or not c.alive or c.state not in ACTIVE:
        return False
    if w.topic_mask(c.subscription) == mask and not c.subscription_regex:       # (names only again: drops a regex)
        return False
    return not (w.synchronous and w.heartbeat_unsent(s, m))


def subscribe(w, s, m, mask):
    """The application changes its subscription; the next heartbeat carries it."""
    c = s.clients[m].copy()
    out = c.subscribe(w.topic_names(mask), s.now)
    return w.build(s, clients=_set(s.clients, m, c), net=s.net.send(m, out), budget=w.perturb(s))


def _regex_subscriptions(w, s):
    return w.regex_args


def subscribe_regex_guard(w, s, m, mask, i=0):
    c = s.clients[m]
    if not w.regex or s.budget.perturbations <= 0 or not c.alive or c.state not in ACTIVE:
        return False
    if c.subscription_regex == PATTERNS[i] and w.topic_mask(c.subscription) == mask:
        return False
    return not (w.synchronous and w.heartbeat_unsent(s, m))


def subscribe_regex(w, s, m, mask, i=0):
    """The application subscribes to the pattern PATTERN (and the topics of `mask`): the next
    heartbeat carries the regex; the coordinator resolves it asynchronously (its regex timer, fired
    by tick). mask 0: the Java consumer's subscribe(SubscriptionPattern), no topic names; mask > 0: a
    mixed subscription (names + pattern: librdkafka's KIP-848 consumer splits a subscription list of
    literal names and `^` patterns into SubscribedTopicNames and SubscribedTopicRegex). ConsumerMember
    has no call for the mixed one: the world makes it as subscribe_regex, then the names (the next
    heartbeat sends each field that changed, as for any subscription). Back to names only is
    `subscribe`."""
    c = s.clients[m].copy()
    out = c.subscribe_regex(PATTERNS[i], s.now)
    if mask:
        c.subscription = w.topic_names(mask)
    return w.build(s, clients=_set(s.clients, m, c), net=s.net.send(m, out), budget=w.perturb(s))


def leave_guard(w, s, m):
    c = s.clients[m]
    if s.budget.perturbations <= 0 or not c.alive or c.state != "STABLE":
        return False
    return not (w.synchronous and (c.heartbeat_in_flight() or c.member_epoch <= 0))


def leave(w, s, m):
    """unsubscribe(): commit (auto), drop the partitions, heartbeat with epoch -1."""
    c = s.clients[m].copy()
    out = c.leave(s.now)
    facts = w.facts_of_leave(s.clients[m], out) if c.config.auto_commit else NO_FACTS
    return w.build(s, clients=_set(s.clients, m, c), net=s.net.send(m, out), budget=w.perturb(s), facts=facts)


def resubscribe_guard(w, s, m):
    c = s.clients[m]
    if s.budget.perturbations <= 0 or not s.started[m] or not c.alive or c.state != "UNSUBSCRIBED":
        return False
    return not (w.synchronous and w.heartbeat_unsent(s, m))


def resubscribe(w, s, m):
    """A client that left subscribes again and polls (its join waits for any leave answer in flight)."""
    c = s.clients[m].copy()
    if w.start_pattern:
        out = c.subscribe_regex(PATTERN, s.now)
    else:
        out = c.subscribe(c.config.topics, s.now)
    out += c.poll(s.now)
    return w.build(s, clients=_set(s.clients, m, c), net=s.net.send(m, out), budget=w.perturb(s),
                   facts=Facts(polled=(m,)))


def crash_guard(w, s, m):
    c = s.clients[m]
    return s.budget.perturbations > 0 and s.started[m] and c.alive and c.state in ACTIVE


def crash(w, s, m):
    """The process dies: what it had not sent yet is lost with it, answers to it are dropped."""
    c = s.clients[m].copy()
    c.crash(s.now)
    net = s.net.drop_requests(m).drop_responses(m, lambda cid: False)
    return w.build(s, clients=_set(s.clients, m, c), net=net, budget=w.perturb(s))


def add_partition_guard(w, s, t):
    return w.grow and s.budget.perturbations > 0 and w.partitions_of(s.coord)[t] < w.pmax


def add_partition(w, s, t):
    """Topic t gains a partition: the coordinator's next metadata image (groups see it at their next
    heartbeat)."""
    coord = s.coord.copy()
    parts = w.partitions_of(coord)
    coord.set_topics({f"t{i}": n + (1 if i == t else 0) for i, n in enumerate(parts)})
    return w.build(s, coord=coord, budget=w.perturb(s))


def unload_guard(w, s):
    return w.failover and not w.synchronous and s.budget.perturbations > 0 and s.coord.active


def unload(w, s):
    """The coordinator loses the group's __consumer_offsets partition: NOT_COORDINATOR to every
    request, timers dropped."""
    coord = s.coord.copy()
    coord.unload()
    return w.build(s, coord=coord, budget=w.perturb(s))


def load_guard(w, s):
    return not s.coord.active


def load(w, s):
    """The group is loaded again (onLoaded reschedules every member's session timeout)."""
    coord = s.coord.copy()
    coord.load()
    return w.build(s, coord=coord)


def deliver_guard(w, s, m):
    return bool(s.net.requests[m])


def deliver(w, s, m):
    """The head request of client m is handled; its answer travels back."""
    cid = s.net.requests[m][0][0]
    req, net = s.net.take(REQ, m, cid)
    coord = s.coord.copy()
    replies = coord.handle(req)
    for r in replies:
        net = net.reply(m, r.correlation_id, r.response)
    after = coord.group(GROUP)
    facts = w.facts_of_delivery(req, replies)
    ghosts = s.ghosts
    if isinstance(req, ConsumerGroupHeartbeatRequest):
        held = None if after is None else after.member(req.member_id)
        ghost = dict(ghosts[m])
        ok = replies and replies[0].response.error == E.NONE
        ghost[req.correlation_id] = w.mask(held.assigned) if ok and held is not None else 0
        ghosts = _set(ghosts, m, ghost)
    return w.build(s, coord=coord, net=net, facts=facts, ghosts=ghosts)


def receive_guard(w, s, m):
    return bool(s.net.responses[m])


def receive(w, s, m):
    """The head answer reaches client m (possibly late), which may send new requests."""
    cid = s.net.responses[m][0][0]
    resp, net = s.net.take(RESP, m, cid)
    c = s.clients[m].copy()
    out = c.on_response(cid, resp, s.now)
    inf = s.clients[m].inflight.get(cid)
    facts = NO_FACTS
    if inf is not None and inf.purpose == "leave-stale":          # the leave sent on poll-timer expiry (poll_stall)
        facts = w.facts_of_ignored(s.clients[m], cid, resp, c, out, s.now)
    return w.build(s, clients=_set(s.clients, m, c), net=net.send(m, out), facts=facts)


def lose_guard(w, s, m):
    q = s.net.responses[m]
    return s.budget.losses > 0 and bool(q) and isinstance(q[0][1], ConsumerGroupHeartbeatResponse)


def lose(w, s, m):
    """The heartbeat answer is lost: the client's request times out and it heartbeats again."""
    cid = s.net.responses[m][0][0]
    _resp, net = s.net.take(RESP, m, cid)
    c = s.clients[m].copy()
    out = c.on_failure(cid, s.now)
    b = s.budget
    return w.build(s, clients=_set(s.clients, m, c), net=net.send(m, out), budget=b._replace(losses=b.losses - 1))


def tick_guard(w, s):
    """Time passes while nothing is in flight: a message is never older than a heartbeat interval,
    so a live client's session only expires through `stall`."""
    return s.net.idle() and w.next_tick(s) is not None


def stall_guard(w, s):
    """A perturbation: time passes while messages are in flight (late answers, a zombie client). In
    synchronous mode not while a client reconciles (the abstract model's client sends no heartbeat
    then: reconciliation is shorter than a heartbeat interval; the Java client keeps heartbeating)."""
    if s.budget.perturbations <= 0 or s.net.idle() or w.next_tick(s) is None:
        return False
    return not (w.synchronous and any(c.alive and c.state == "RECONCILING" for c in s.clients))


def stall(w, s):
    return _pass_time(w, s, w.perturb(s))


def tick(w, s):
    return _pass_time(w, s, s.budget)


def miss_poll_guard(w, s, m):
    """poll_stall: a perturbation, only as the time jump `tick` would make, and only when the poll client m's
    application misses is the one that kept its poll timer (max.poll.interval) from expiring."""
    if not w.poll_stall or s.budget.perturbations <= 0 or not tick_guard(w, s):
        return False
    c = s.clients[m]
    return s.started[m] and c.alive and c.state in ACTIVE and w.next_tick(s) - c.last_poll_at >= w.poll_ms


def miss_poll(w, s, m):
    """Time jumps as in `tick`, but client m's application does not poll (a long record processing): its
    background thread finds the poll timer expired, sends a leave heartbeat whose answer it ignores and goes STALE
    (its partitions lost) until the application polls again (`poll`, or the next `tick`)."""
    return _pass_time(w, s, w.perturb(s), skip=m)


def poll_guard(w, s, m):
    c = s.clients[m]
    return c.alive and c.state == "STALE"


def poll(w, s, m):
    """The application of a client that left on poll-timer expiry polls again (maybeRejoinStaleMember: STALE ->
    JOINING), at once, whether the answer to its leave arrived or not; its join goes out at once too (that leave
    was sent with ignoreResponse: it is no heartbeat in flight)."""
    c = s.clients[m].copy()
    return w.build(s, clients=_set(s.clients, m, c), net=s.net.send(m, c.poll(s.now)), facts=Facts(polled=(m,)))


def _pass_time(w, s, budget, skip=None):
    """Time jumps to the next deadline: coordinator timers fire on the way, then every live client
    polls (heartbeats that fell due go out); client `skip` (miss_poll) only runs its background thread."""
    t = w.next_tick(s)
    coord = s.coord.copy()
    coord.advance(t - coord.now)
    clients = list(s.clients)
    net = s.net
    polled = []
    for m, c in enumerate(s.clients):
        if s.started[m] and c.alive:
            c = clients[m] = c.copy()
            net = net.send(m, c.tick(t) if m == skip else c.poll(t))
            if m != skip:
                polled.append(m)
    return w.build(s, coord=coord, clients=tuple(clients), net=net, budget=budget, facts=Facts(polled=tuple(polled)))


ACTIONS = ActionTable([
    Action("start", start_guard, start, _slots),
    Action("restart", restart_guard, restart, _slots),
    Action("deliver", deliver_guard, deliver, _slots),
    Action("receive", receive_guard, receive, _slots),
    Action("load", load_guard, load),
    Action("tick", tick_guard, tick),
    Action("lose", lose_guard, lose, _slots, fault=True),
    Action("subscribe", subscribe_guard, subscribe, _subscriptions, fault=True),
    Action("subscribe_regex", subscribe_regex_guard, subscribe_regex, _regex_subscriptions, fault=True),
    Action("leave", leave_guard, leave, _slots, fault=True),
    Action("resubscribe", resubscribe_guard, resubscribe, _slots, fault=True),
    Action("crash", crash_guard, crash, _slots, fault=True),
    Action("add_partition", add_partition_guard, add_partition, _topics, fault=True),
    Action("stall", stall_guard, stall, fault=True),
    Action("unload", unload_guard, unload, fault=True),
    Action("miss_poll", miss_poll_guard, miss_poll, _slots, fault=True),
    Action("poll", poll_guard, poll, _slots),
])
ACTION_NAMES = ACTIONS.names()


class ConsumerGroupWorld(Protocol):
    name = "consumer-group-world"
    action_table = ACTIONS

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        self.params = dict(params)                 # complete and validated by the registry (SPEC)
        self.behaviours = frozenset(behaviours)
        self.n = params["members"]
        self.t = params["topics"]
        self.grow = params["grow"]
        self.failover = params["failover"]
        self.synchronous = params["synchronous"]
        self.regex = params["regex"]
        self.poll_stall = params["poll_stall"]
        self.poll_ms = POLL_MS if self.poll_stall else REBALANCE_MS     # max.poll.interval = rebalance timeout
        self.start_pattern = params["start_pattern"]
        self.pmax = params["partitions"] + (1 if self.grow else 0)
        self.all_topics = (1 << self.t) - 1
        self.slot_args = tuple((m,) for m in range(self.n))
        self.topic_args = tuple((t,) for t in range(self.t))
        self.subscription_args = tuple((m, mask) for m in range(self.n) for mask in range(1, self.all_topics + 1))
        # (slot, names mask, pattern index); the pattern index is left out while only PATTERN is used
        self.regex_args = tuple((m, mask) + ((i,) if params["patterns"] > 1 else ())
                                for m in range(self.n) for mask in range(self.all_topics + 1)
                                for i in range(params["patterns"]))
        names = tuple(f"t{i}" for i in range(self.t))
        # regex.refresh.interval "far" (the key keeps a refresh's age only within the 10 s batch interval)
        self.coord_config = ConsumerCoordinatorConfig(session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
                                                      regex_refresh_interval_ms=FAR)
        self._topic_index = {}
        self.client_configs = ()
        self._names = names
        self._invs = consumer_group_invariants(self.view, self.step_views) + client_invariants(self.step_views, self.view)
        # UNRELEASED_PARTITIONS waits for another member to release a partition: a one-member group never has it
        self._some = tuple(x for x in consumer_group_sometimes(self.view) if x.name != "unreleased" or self.n > 1) + (
            Sometimes("revocation-completed", "a member leaves UNREVOKED_PARTITIONS having revoked its partitions",
                      lambda s: s.facts.revoked),
            Sometimes("commit-accepted", "the coordinator accepts an OffsetCommit from a member",
                      lambda s: bool(s.facts.accepted)),
        )
        if self.poll_stall:     # the path poll_stall exists for: the ignored answer to a poll-expiry leave
            self._some += (Sometimes("stale-leave-answered", "a client receives the answer to the leave it sent on "
                                     "poll-timer expiry", lambda s: bool(s.facts.ignored)),)
        if self.poll_stall and params["perturbations"] >= 2:
            # a `stall` as well: the leave is late past the session timeout, the member gone when it arrives
            self._some += (Sometimes("stale-leave-refused-after-rejoin", "a client that polled again receives an "
                                     "error answer (its member was gone) to the leave it sent on poll-timer expiry",
                                     lambda s: any(i.rejoining and i.error != E.NONE for i in s.facts.ignored)),)
        self._init = None
        self._step_views = (None, None, None)
        self._refinement = None
        if self.synchronous and params["assignor"] == "round-robin":
            # inside what the abstract model describes: engines that call the hook (Hypothesis
            # machines) check every step against it (model/worlds/consumer_group_refine.py)
            self.check_refinement = self._check_refinement

    def _check_refinement(self, prev, action, nxt, step_index: int):
        from kverify.invariants.core import Violation
        from kverify.model.worlds import consumer_group_refine as R
        if self._refinement is None:
            self._refinement = R.ConsumerGroupRefinement(self)
        msg = self._refinement.check(prev, action, nxt)
        return None if msg is None else Violation(R.NAME, msg, step_index)

    # --- construction helpers ------------------------------------------------------------------
    def _assignors(self):
        name = self.params["assignor"]
        if name == "round-robin":
            from kverify.model.worlds.consumer_group_refine import RoundRobinAssignor
            return {"round-robin": RoundRobinAssignor(self)}
        from kverify.impl.consumer.assignor_port import default_assignors
        return {name: default_assignors()[name]}

    def init_states(self):
        if self._init is None:
            p = self.params
            coord = ConsumerGroupCoordinator(self.coord_config, self.behaviours & COORDINATOR_BEHAVIOURS,
                                             assignors=self._assignors(),
                                             topics={n: p["partitions"] for n in self._names})
            self._topic_index = {t.topic_id: int(t.name[1:]) for t in coord.topics.topics}
            ids = {t.topic_id: t.name for t in coord.topics.topics}
            self.client_configs = tuple(
                ClientConfig(GROUP, f"m{m}", topics=() if self.start_pattern else self._names, topic_names=ids,
                             rebalance_timeout_ms=self.poll_ms,
                             auto_commit=p["auto_commit"], auto_commit_interval_ms=None, retry_backoff_ms=BACKOFF_MS,
                             server_assignor=p["assignor"], client_id=f"m{m}", correlation_base=(m + 1) * CID_STRIDE)
                for m in range(self.n))
            clients = tuple(ConsumerMember(c, self.behaviours & CLIENT_BEHAVIOURS, now=0) for c in self.client_configs)
            self._init = [WorldState(coord, clients, Net.empty(self.n), (False,) * self.n,
                                     Budget(p["perturbations"], p["losses"]), NO_FACTS, ({},) * self.n)]
        return self._init

    def actions(self, s):
        return ACTIONS.enabled(self, s)

    def step(self, s, a):
        return ACTIONS.step(self, s, a)

    def is_fault(self, action) -> bool:
        return ACTIONS.is_fault(action)

    def invariants(self):
        return self._invs

    def sometimes(self):
        return self._some

    def canonical(self, s):
        return s.key()

    def fingerprint(self, s) -> int:
        return hash(s)

    # --- shared by the actions -------------------------------------------------------------------
    def build(self, s, coord=None, clients=None, net=None, started=None, budget=None, facts=NO_FACTS, ghosts=None):
        clients = s.clients if clients is None else clients
        net = s.net if net is None else net
        for m, c in enumerate(clients):        # answers a client no longer wants change nothing: drop them
            if net.responses[m]:
                net = net.drop_responses(m, c.wants)
        ghosts = s.ghosts if ghosts is None else ghosts
        if any(len(g) > len(q) for g, q in zip(ghosts, net.responses)):     # answers gone: forget them
            ghosts = tuple({cid: x for cid, x in g.items() if any(e[0] == cid for e in q)} if len(g) > len(q) else g
                           for g, q in zip(ghosts, net.responses))
        nxt = WorldState(s.coord if coord is None else coord, clients, net,
                         s.started if started is None else started, s.budget if budget is None else budget, facts,
                         ghosts)
        if coord is None:
            nxt._g = s._g
        elif self._revoked(s, nxt):
            nxt.facts = nxt.facts._replace(revoked=True)
        return nxt

    def _revoked(self, s, nxt) -> bool:
        """Some member of `s` in UNREVOKED_PARTITIONS is still a member in `nxt`, no longer revoking."""
        a, b = s.group(), nxt.group()
        if a is None or b is None:
            return False
        for m in a.members:
            if m.state == "UNREVOKED_PARTITIONS":
                n = b.member(m.member_id)
                if n is not None and n.state != "UNREVOKED_PARTITIONS":
                    return True
        return False

    def heartbeat_unsent(self, s, m) -> bool:
        """A heartbeat of client m is on its way to the coordinator (the abstract model handles a
        heartbeat in the step that sends it: its fields are fixed then)."""
        return any(isinstance(e[1], ConsumerGroupHeartbeatRequest) for e in s.net.requests[m])

    def perturb(self, s) -> Budget:
        return s.budget._replace(perturbations=s.budget.perturbations - 1)

    def member_of(self, s, member_id):
        g = s.group()
        return None if g is None else g.member(member_id)

    def partitions_of(self, coord) -> list:
        parts = [0] * self.t
        for t in coord.topics.topics:
            parts[int(t.name[1:])] = t.partitions
        return parts

    def topic_mask(self, names) -> int:
        out = 0
        for n in names:
            out |= 1 << int(n[1:])
        return out

    def topic_names(self, mask: int) -> tuple:
        return tuple(f"t{i}" for i in range(self.t) if mask >> i & 1)

    def next_tick(self, s) -> Optional[int]:
        """The next time something is due: a coordinator timer (deadline + 1) or a client's wakeup
        (at most a session timeout ahead: a poll deadline is reached only through `miss_poll`, clients poll
        every tick)."""
        now = s.now
        best = None
        d = s.coord.next_deadline()
        if d is not None:
            best = d + 1
        for m, c in enumerate(s.clients):
            if s.started[m] and c.alive:
                w = c.next_wakeup()
                if w is not None and w <= now + SESSION_MS and (best is None or w < best):
                    best = w
        if best is None:
            return None
        return max(best, now + 1)

    # --- numbering: impl ids -> the invariants' ints ---------------------------------------------
    def mid(self, member_id: str) -> int:
        """"m<slot>" -> slot; "m<slot>-r<k>" (k-th restart) -> slot + members * k (K3's numbering)."""
        head, _, inc = member_id[1:].partition("-r")
        return int(head) + self.n * (int(inc) if inc else 0)

    def mask(self, partitions) -> int:
        out = 0
        for tid, p in partitions:
            out |= 1 << (self._topic_index[tid] * self.pmax + p)
        return out

    # --- the invariant view -------------------------------------------------------------------------
    def view(self, s) -> CGView:
        """The facts the invariants read: from the coordinator, `coord.group(g)` (group epoch,
        assignment epoch, state, members with state / epochs / assigned / pending revocation /
        subscribed topics, target assignment, partition epochs) and its topics image (partitions per
        topic); from each client (ConsumerMember), its member id, member epoch, owned partitions and
        whether it runs subscribed (alive, state not UNSUBSCRIBED / LEAVING / STALE / FATAL); for a live client in
        RECONCILING, whether it holds its target and whether a reconciliation is under way."""
        v = s._view
        if v is not None:
            return v
        g = s.group()
        topics = tuple(self.partitions_of(s.coord))
        if g is None:
            members, target, state, ge, ae = (), (), G_EMPTY, 0, 0
            pe = (-1,) * (self.t * self.pmax)
        else:
            members = tuple(sorted(
                (MemberView(self.mid(m.member_id), MEMBER_STATES[m.state], m.member_epoch, m.previous_member_epoch,
                            self.mask(m.assigned), self.mask(m.pending_revocation),
                            self.topic_mask(_subscribed(m, g))) for m in g.members)))
            target = tuple(sorted((self.mid(mid), self.mask(a)) for mid, a in g.target))
            pe = [-1] * (self.t * self.pmax)
            for tp, e in g.partition_epochs:
                pe[self._topic_index[tp[0]] * self.pmax + tp[1]] = e
            pe = tuple(pe)
            state, ge, ae = GROUP_STATES[g.state], g.group_epoch, g.assignment_epoch
        clients = tuple(ClientView(self.mid(c.member_id), c.alive and c.state in LIVE, c.member_epoch,
                                   self.mask(c.owned)) for c in s.clients)
        assignors = () if g is None else tuple(
            (self.mid(c.member_id), c.config.server_assignor, m.server_assignor_name)
            for c, m in ((c, g.member(c.member_id)) for c in s.clients if c.alive and c.state in LIVE) if m is not None)
        reconciling = tuple(Reconciling(self.mid(c.member_id), c._target_reconciled(), c.reconciling is not None)
                            for c in s.clients if c.alive and c.state == "RECONCILING")
        patterns = () if g is None else _patterns(g)
        v = s._view = CGView(ge, ae, state, members, target, pe, topics, self.pmax, clients,
                             s.budget.perturbations < self.params["perturbations"], assignors=assignors,
                             reconciling=reconciling, patterns=patterns)
        return v

    def step_views(self, prev, action, nxt):
        """(view before, view after with the step's facts: OffsetCommits accepted, heartbeats answered)."""
        c = self._step_views
        if c[0] is prev and c[1] is nxt:
            return c[2]
        a, b = self.view(prev), self.view(nxt)
        f = nxt.facts
        if f.accepted or f.answered or f.reconciled or f.left or f.ignored:
            b = b._replace(accepted=f.accepted, answered=f.answered, reconciled=f.reconciled, left=f.left,
                           ignored=f.ignored)
        if f.polled:
            left = tuple(m for m in f.polled if _sent_poll_timeout_leave(prev.clients[m], nxt.clients[m]))
            if left:
                b = b._replace(left_after_poll=tuple(self.mid(nxt.clients[m].member_id) for m in left))
        out = (a, b)
        self._step_views = (prev, nxt, out)
        return out

    def facts_of_delivery(self, req, replies) -> Facts:
        """Step facts read from the request handled and the coordinator's replies."""
        accepted, answered, reconciled = (), (), ()
        for r in replies:
            resp = r.response
            if isinstance(req, ConsumerGroupHeartbeatRequest):
                mid = self.mid(req.member_id)
                answered += (Answer(mid, req.member_epoch, resp.error),)
                if resp.error == E.NONE:
                    reconciled += (mid,)
            elif isinstance(req, OffsetCommitRequest):
                if resp.partition_errors and all(err == E.NONE for _tp, err in resp.partition_errors):
                    parts = 0
                    for tp, _om in req.offsets:
                        parts |= 1 << (int(tp.topic[1:]) * self.pmax + tp.partition)
                    accepted += (Commit(self.mid(req.member_id), req.generation_id_or_member_epoch, parts),)
        return Facts(accepted, answered, reconciled)

    def facts_of_ignored(self, before, cid, resp, after, out, now) -> Facts:
        """The Ignored fact of receiving the answer to a leave sent on poll-timer expiry: what the client
        (`after`, having sent `out`) differs in from the client as it was (`before`) with that request
        forgotten and its heartbeat manager's poll run at the same time (`tick`: what `on_response` runs after
        any answer), i.e. the answer never having come: client attributes by name (journals left out), and
        "requests" when it sent other requests."""
        ref = before.copy()
        del ref.inflight[cid]
        ref_out = ref.tick(now)
        changed = tuple(sorted(k for k, v in vars(after).items()
                               if k not in ("events", "commit_results") and getattr(ref, k) != v))
        if list(out) != list(ref_out):
            changed += ("requests",)
        return Facts(ignored=(Ignored(self.mid(before.member_id), before.state == "JOINING", resp.error, changed),))

    def facts_of_leave(self, before, out) -> Facts:
        """The Leave fact of a client's `leave` with auto-commit on: what it had consumed (`before`, the client
        as it was) and the partitions of each OffsetCommit it sent ahead of its leave heartbeat."""
        commits = []
        for req in out:
            if isinstance(req, ConsumerGroupHeartbeatRequest) and req.member_epoch == -1:
                break
            if isinstance(req, OffsetCommitRequest):
                parts = 0
                for tp, _om in req.offsets:
                    parts |= 1 << (int(tp.topic[1:]) * self.pmax + tp.partition)
                commits.append(parts)
        return Facts(left=(Leave(self.mid(before.member_id), self.mask(before.positions), tuple(commits)),))

    # --- settled, healthy states --------------------------------------------------------------------
    def is_quiescent_good(self, s) -> bool:
        """Nothing in flight, the coordinator loaded, every started live client STABLE and a member of
        a Stable group holding exactly its target, every partition of the subscribed topics assigned,
        every subscribed pattern resolved."""
        if not s.net.idle() or not s.coord.active:
            return False
        live = [c for m, c in enumerate(s.clients) if s.started[m] and c.alive and c.state != "UNSUBSCRIBED"]
        if any(c.state != "STABLE" for c in live):
            return False
        v = self.view(s)
        if not live:
            return not v.members
        from kverify.invariants.consumer_group import is_stable_with_all
        return is_stable_with_all(v) and self._patterns_resolved(s)

    def _patterns_resolved(self, s) -> bool:
        """Settled means the coordinator's asynchronous regex resolution has run: every pattern a member
        subscribes to is resolved to the topics it matches now (a pattern never resolved would leave its
        member subscribed to nothing while the group looks Stable)."""
        g = s.group()
        if g is None or not (self.regex or self.start_pattern):
            return True
        names = [t.name for t in s.coord.topics.topics]
        resolved = dict(g.resolved_regexes)
        return all(resolved.get(m.subscribed_topic_regex) == RX.resolve(m.subscribed_topic_regex, names)
                   for m in g.members if m.subscribed_topic_regex)

    def allows_terminal(self, s) -> bool:
        return True

    def abstract(self, s):
        v = self.view(s)
        return v[:9]

    # --- reports ----------------------------------------------------------------------------------
    def participants(self):
        return tuple(f"member m{m}" for m in range(self.n)) + ("coordinator",)

    def arrow(self, action):
        name = action[0]
        if name == "deliver":
            return (f"member m{action[1]}", "coordinator")
        if name in ("receive", "lose"):
            return ("coordinator", f"member m{action[1]}")
        if name in ("tick", "load", "unload", "add_partition"):
            return ("coordinator", "coordinator")
        return (f"member m{action[1]}", f"member m{action[1]}")

    def describe(self, s) -> dict:
        g = s.coord.group(GROUP)
        pm = self.pmax

        def parts(ps):
            return sorted(f"t{self._topic_index[t]}p{p}" for t, p in ps)

        group = None
        if g is not None:
            group = {"state": g.state, "group_epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch,
                     "members": {m.member_id: {"state": m.state, "member_epoch": m.member_epoch,
                                               "previous_member_epoch": m.previous_member_epoch,
                                               "assigned": parts(m.assigned),
                                               "pending_revocation": parts(m.pending_revocation),
                                               "subscribed": list(m.subscribed_topic_names),
                                               "regex": m.subscribed_topic_regex} for m in g.members},
                     "resolved_regexes": {rx: sorted(ts) for rx, ts in g.resolved_regexes},
                     "target": {mid: parts(a) for mid, a in g.target},
                     "partition_epochs": {f"t{self._topic_index[tp[0]]}p{tp[1]}": e for tp, e in g.partition_epochs}}
        clients = {}
        for m, c in enumerate(s.clients):
            clients[f"m{m}"] = {"process": "not started" if not s.started[m] else "running" if c.alive else "down",
                                "member_id": c.member_id, "state": c.state, "member_epoch": c.member_epoch,
                                "owned": parts(c.owned), "subscription": list(c.subscription),
                                "regex": c.subscription_regex,
                                "in_flight": sorted(f"{f.kind}/{f.purpose}#{cid}" for cid, f in c.inflight.items())}
        net = [f"m{m}->coordinator {type(e[1]).__name__}#{e[0]}" for m in range(self.n) for e in s.net.requests[m]]
        net += [f"coordinator->m{m} {type(e[1]).__name__}#{e[0]}" for m in range(self.n) for e in s.net.responses[m]]
        return {"now_ms": s.now, "coordinator": "loaded" if s.coord.active else "unloaded",
                "topics": {f"t{i}": n for i, n in enumerate(self.partitions_of(s.coord))}, "partition_bits": pm,
                "group": group, "clients": clients, "in_flight": net, "budget": s.budget._asdict()}


# --- the relative-time key ----------------------------------------------------------------------------
def world_key(s: WorldState) -> tuple:
    """The state's identity: coordinator and clients with times relative to now, correlation ids
    renumbered per client (in order, the next id right after them), offset values left out (see the
    module docstring for why each is sound)."""
    now = s.coord.now
    timer, groups, offsets, topics, counter, active, ntv = s.coord.snapshot()
    coord = (tuple((d - now, k, p) for d, k, p in timer[1]),
             tuple(_group_key(g, now) for g in groups),
             tuple((gid, tuple(tp for tp, _om in items)) for gid, items in offsets),
             topics, counter, active, ntv)
    clients, reqs, resps = [], [], []
    for m, c in enumerate(s.clients):
        base = (m + 1) * CID_STRIDE
        ids = sorted(set([cid for cid in c.inflight] + [e[0] for e in s.net.requests[m]]
                         + [e[0] for e in s.net.responses[m]]
                         + ([c.reconciling[2]] if c.reconciling is not None and c.reconciling[2] is not None else [])))
        ren = {cid: base + i for i, cid in enumerate(ids, 1)}
        if not s.started[m]:
            clients.append("not started")         # start() resets every field the key would show
        elif not c.alive:
            clients.append(("down", c.incarnation, c.member_id))    # restart() resets the rest
        else:
            clients.append(_client_key(c, now, ren, base + len(ids) + 1))
        reqs.append(tuple(_request_key(req, ren[cid]) for cid, req, _conn in s.net.requests[m]))
        resps.append(tuple((ren[cid], _response_key(resp)) for cid, resp in s.net.responses[m]))
    return (coord, tuple(clients), tuple(reqs), tuple(resps), s.started, s.budget)


def _rel(t: int, now: int):
    d = t - now
    return "far" if d > FAR else d


def _group_key(g: tuple, now: int) -> tuple:
    deadline, epoch = g[-1]
    meta = (deadline, epoch) if (deadline, epoch) == (0, 0) else (_rel(deadline, now), epoch)
    # the last regex resolution's age matters only within the batch interval (refresh interval: FAR)
    refresh = g[9] if g[9] < 0 else "old" if now - g[9] > RX.BATCH_REFRESH_MIN_INTERVAL_MS else g[9] - now
    return g[:9] + (refresh, g[10], meta)


def _client_key(c: ConsumerMember, now: int, ren: dict, next_cid: int) -> tuple:
    rec = c.reconciling
    if rec is not None and rec[2] is not None:
        rec = (rec[0], rec[1], ren[rec[2]])
    inflight = tuple(sorted((ren[cid], f.kind, f.sent_epoch, f.purpose,
                             tuple(e[0] for e in f.payload) if f.kind == "commit" else f.payload)
                            for cid, f in c.inflight.items()))
    # a client that skips heartbeats (UNSUBSCRIBED, STALE, FATAL) reads neither time before poll()
    # resets the poll timer and a join (sent at once) or an answer resets the heartbeat timer
    skip = c.should_skip_heartbeat()
    return (c.alive, c.incarnation, c.member_id, c.state, c.member_epoch, c.subscription, c.subscription_regex,
            c.subscription_updated, c.owned, c.local_epoch, c.target, c.target_epoch, rec,
            tuple(sorted(c.positions)), c.awaiting_positions, c.sent, inflight, next_cid, c.heartbeat_interval_ms,
            None if skip else _rel(c.next_heartbeat_at, now), c.fatal_error,
            None if skip else _rel(c.last_poll_at, now), c.poll_timer_expired)


def _request_key(req, cid: int):
    if isinstance(req, OffsetCommitRequest):
        return ("commit", cid, req.member_id, req.generation_id_or_member_epoch, tuple(tp for tp, _ in req.offsets))
    return req._replace(correlation_id=cid)


def _response_key(resp):
    if isinstance(resp, OffsetFetchResponse):
        return ("fetch", resp.error, tuple(p.partition for p in resp.partitions))
    return resp


def _subscribed(member, g) -> frozenset:
    """The topic names a coordinator member subscribes to: its names plus its regex's resolution
    (an unresolved regex: nothing yet)."""
    names = frozenset(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        names |= dict(g.resolved_regexes).get(member.subscribed_topic_regex, frozenset())
    return names


def _sent_poll_timeout_leave(before, after) -> bool:
    """The client sent, between `before` and `after`, the leave it sends when its poll timer expires."""
    return any(inf.purpose == "leave-stale" and cid not in before.inflight for cid, inf in after.inflight.items())


def _patterns(g) -> tuple:
    """(pattern, members subscribed to it, resolved in the group) per pattern subscribed to or resolved."""
    resolved = {rx for rx, _ts in g.resolved_regexes}
    subs = [m.subscribed_topic_regex for m in g.members if m.subscribed_topic_regex]
    return tuple((rx, subs.count(rx), rx in resolved) for rx in sorted(resolved.union(subs)))


def _set(t: tuple, i: int, value) -> tuple:
    return t[:i] + (value,) + t[i + 1:]


# The smallest bounds at which the explorer finds each historical behaviour (tests/test_consumer_group_world.py
# shows each found with it on and nothing found with it off within the same number of states).
HUNT_PARAMS = {
    CB.LOST_PARTITION_EPOCH: ({"perturbations": 0, "grow": False}, "explorer"),
    CB.OWN_REVOCATION_UNRELEASED: ({"grow": False, "failover": False}, "explorer"),
    CB.EMPTY_GROUP_ASSIGNMENT_EPOCH: ({"grow": False, "failover": False}, "explorer"),
    CB.NO_EPOCH_ZERO_REJOIN: ({"perturbations": 0, "losses": 2, "grow": False}, "explorer"),
    CB.UNREVOKED_EPOCH_BUMP: ({"topics": 2, "grow": False, "failover": False}, "explorer"),
    CB.NEGATIVE_EPOCH_JOINING: ({"perturbations": 2, "grow": False, "failover": False}, "explorer"),
    # names t0 + pattern t.* (resolved: t0, t1), then names t0 only: the target keeps t1p0 (target-legal)
    CB.REGEX_REMOVAL_NO_BUMP: ({"regex": True, "members": 1, "topics": 2, "perturbations": 2, "grow": False,
                                "failover": False}, "explorer"),
}

SPEC = ModelSpec(name="consumer-group-world", make=make, params=PARAMS, supports=SUPPORTS, action_names=ACTION_NAMES,
                 hunt_params=HUNT_PARAMS)
