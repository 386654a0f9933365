"""The abstract KIP-848 consumer group: ConsumerGroupHeartbeat reconciliation, small enough to explore.

Why it exists: impl/consumer is too detailed for exhaustive search; this model keeps what the
KIP-848 properties (invariants/consumer_group.py) talk about, with Kafka's rules, so that 2-3
members and topics of a few partitions explore exhaustively in seconds and each historical
behaviour it carries yields a shortest trace. specs/ConsumerGroup.tla states the same rules in
TLA+, one disjunct of `Next` per entry of `ACTIONS` (same name in CamelCase).

Rules followed (Kafka 4.x group-coordinator, as impl/consumer reads it; see its docstrings):
- GroupMetadataManager.consumerGroupHeartbeat: the group epoch bumps when a member joins, changes
  its subscription, or the subscribed topics' metadata changed (partitions added); then the target
  assignment is computed at the new epoch for every member (TargetAssignmentBuilder; the abstract
  assignor below is a deterministic round robin: the real assignors are certified separately);
  then the member is reconciled (CurrentAssignmentBuilder: `reconcile`), following
  impl/consumer/reconciliation.py rule for rule (KAFKA-19431's subscription consistency included).
- throwIfConsumerGroupMemberEpochIsInvalid: a greater epoch, or a smaller one that is not the
  previous epoch with owned partitions a subset of the assigned ones -> FENCED_MEMBER_EPOCH; epoch 0
  from a known member is a rejoin (KAFKA-19233's fix); an unknown member id -> UNKNOWN_MEMBER_ID.
- consumerGroupFenceMember (leave at epoch -1, session expiry): the member and its target are
  removed, its partition epochs dropped, the group epoch bumps (and the assignment epoch with it
  when the group became Empty: KAFKA-20442's fix).
- ConsumerGroup partition epochs (KAFKA-16147's fix: all of a member's epochs removed at its old
  epoch, then all added at its new one) and validateOffsetCommit (STALE_MEMBER_EPOCH).
- The client (Java consumer's MembershipManager states): JOINING sends epoch 0; an answer sets its
  epoch and target; RECONCILING revokes and assigns (`reconcile`), ACKNOWLEDGING reports its owned
  partitions, STABLE heartbeats; FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID -> it drops everything and
  rejoins with epoch 0 and the same member id; leaving sends epoch -1 and is UNSUBSCRIBED once it is
  sent (the answer is ignored; KAFKA-19335's fix: also by a client that subscribed again meanwhile).
- Behaviours (SUPPORTS, names of impl/consumer/behaviours.py; HUNT_PARAMS: the zoo's bounds): the
  rules before KAFKA-16147, -19974, -19449, -19233, -20442 and -19335, each caught by the explorer
  with a shortest trace (tests/test_consumer_group_model.py).

Abstractions (documented): a heartbeat request is handled by the coordinator in the step that sends
it (a lost request is indistinguishable, for the client, from a lost answer after a handled request
that changed nothing); its answer travels back on its own (`receive`, or `lose`: the client times out
and heartbeats again with all fields); one heartbeat in flight per client. TopicPartitions is sent
as the Java client sends it (ConsumerHeartbeatRequestManager.HeartbeatState): when joining, after a
reset (lost answer, fence) and when its target changed (new partitions; not for a new epoch alone), else
omitted, which the coordinator reads as "still owns everything" (ownsRevokedPartitions). A client
RECONCILING finishes its reconciliation (revocation and assignment in one `reconcile` step) before its
next heartbeat; allowing a heartbeat in between, with a lost answer making the client re-send its
pre-reconciliation owned list, lets a partition reach a second member before the first one's
reconciliation completes (7 steps; whether the Java client can do that is not settled here). A
periodic heartbeat that would change nothing is not a step (as model/group.py). The auto-commit
before revocation is the separate `commit` (sent while RECONCILING). A crashed process restarts
(`restart`) only after its old member's session expired (`expire`), with the next member id of its
slot (slot + members x incarnation). Static members, regular-expression subscriptions, topic
deletion and the rebalance timeout are not modelled (`expire_live`, the session expiry of a live
client, stands for them).

Finding (not a behaviour switch): Kafka 4.0-4.2 validate an OffsetCommit by member epoch only; a
member going UNREVOKED_PARTITIONS -> UNREVOKED_PARTITIONS keeps its epoch after releasing a
partition, so a commit it sent before the release and that arrives after it (commitAsync, or a
TxnOffsetCommit; the model does not make revocation wait for the commit's answer) is accepted for a
partition that may already belong to another member (11 steps at the default bound when commits-at-current-epoch also demands
that the member still hold the partition); see invariants/consumer_group.py.

Perturbations (one budget, `perturbations`): subscription changes, leaves, subscribing again after a
leave, crashes, live session expiries, partitions added to a topic. Lost heartbeat answers have their own budget (`losses`).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.invariants.consumer_group import (
    B16147, B19233, B19335, B19449, B19974, B20442, FENCED_MEMBER_EPOCH, G_ASSIGNING, G_EMPTY, G_RECONCILING,
    G_STABLE, GROUP_STATE_NAMES, M_STABLE, MEMBER_STATE_NAMES, UNRELEASED, UNREVOKED, Answer as AnswerFact,
    CGView, ClientView, Commit as CommitFact, consumer_group_invariants, consumer_group_sometimes,
    topic_partitions)
from kverify.model.actions import Action, ActionTable
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param

PARAMS = {
    "members": Param(2, "consumer clients (slots m0..; no symmetry reduction: the assignor follows member ids)",
                     lo=1, hi=3),
    "topics": Param(2, "topics, every client subscribes to all of them at first", lo=1, hi=3),
    "partitions": Param(1, "partitions per topic at first", lo=1, hi=3),
    "perturbations": Param(1, "budget of perturbations: subscription change, leave, crash, live session "
                              "expiry, partition added", lo=0),
    "losses": Param(1, "budget of lost heartbeat answers", lo=0),
    "commits": Param(1, "budget of OffsetCommit requests", lo=0),
    "grow": Param(True, "metadata changes: a topic may gain one partition (a perturbation)"),
}

SUPPORTS = frozenset({B16147, B19974, B19449, B19233, B20442, B19335})

# client states: the Java consumer's MemberState (FENCED and PREPARE_LEAVING pass within one step),
# plus DOWN for a crashed process
UNSUBSCRIBED, JOINING, RECONCILING, ACKNOWLEDGING, STABLE, LEAVING, DOWN = range(7)
CLIENT_STATE_NAMES = ("UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE", "LEAVING", "DOWN")
NONE, FENCED, UNKNOWN = "NONE", FENCED_MEMBER_EPOCH, "UNKNOWN_MEMBER_ID"
LEAVE_EPOCH = -1
FREE = -1                  # partition epoch of a partition nobody holds
NOT_SENT = -1              # a client's `reported` after a join, a fence or a lost answer (send all fields)


# --- the state, named as Kafka names it ---------------------------------------------------------------
class Member(NamedTuple):
    """ConsumerGroupMember (the coordinator's record of one member)."""

    member_id: int
    state: int                 # M_STABLE, UNREVOKED, UNRELEASED
    member_epoch: int
    previous_member_epoch: int
    assigned: int              # partitions it may own now (bitmask)
    pending_revocation: int    # partitions it must give up (bitmask)
    subscribed: int            # subscribed topics (bitmask)


class Target(NamedTuple):
    member_id: int
    partitions: int


class Group(NamedTuple):
    """ConsumerGroup: epochs, members, target assignment, partition epochs, subscription metadata."""

    group_epoch: int
    assignment_epoch: int
    members: tuple             # Member, sorted by member id
    target: tuple              # Target, sorted by member id
    partition_epochs: tuple    # per partition bit: holder's epoch or FREE
    subscription_metadata: tuple   # partitions per topic as the group last saw them (0: nobody subscribes)


class Answer(NamedTuple):
    """A ConsumerGroupHeartbeat answer on its way to the client."""

    error: str                 # NONE, FENCED, UNKNOWN
    member_epoch: int
    assignment: int


class Commit(NamedTuple):
    """An OffsetCommit on its way to the coordinator."""

    member_epoch: int
    partitions: int


class Client(NamedTuple):
    """One consumer (the Java client's membership manager)."""

    state: int                 # UNSUBSCRIBED .. DOWN
    member_id: int
    member_epoch: int
    owned: int                 # partitions it consumes
    assignment: int            # the target it was last given (reconciles toward it)
    subscribed: int            # topics (bitmask)
    reported: int              # owned partitions as last sent (NOT_SENT: send them with the next heartbeat)
    answer: Optional[Answer]   # heartbeat answer in flight (None: none / lost)
    inflight: bool             # a heartbeat is outstanding (its answer may be lost)
    commit: Optional[Commit]


class Budget(NamedTuple):
    perturbations: int
    losses: int
    commits: int


class ConsumerGroupState(NamedTuple):
    group: Group
    clients: tuple             # Client per slot
    topics: tuple              # the metadata image: partitions per topic
    budget: Budget


STATE_FIELDS = ConsumerGroupState._fields


def make(params: dict, behaviours: frozenset) -> "ConsumerGroupModel":
    return ConsumerGroupModel(params, behaviours)


def _set(t: tuple, i: int, value) -> tuple:
    return t[:i] + (value,) + t[i + 1:]


def _bits(mask: int):
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


def find(members: tuple, mid: int) -> Optional[Member]:
    for m in members:
        if m.member_id == mid:
            return m
    return None


def target_of(group: Group, mid: int) -> int:
    for t in group.target:
        if t.member_id == mid:
            return t.partitions
    return 0


# --- the coordinator's rules (pure functions of the model `g` and values) ---------------------------
def subscription_metadata(g, topics: tuple, members) -> tuple:
    """Partitions per topic for the topics some member subscribes to (0 for the others)."""
    union = 0
    for m in members:
        union |= m.subscribed
    return tuple(n if union >> t & 1 else 0 for t, n in enumerate(topics))


def assign(g, topics: tuple, members: tuple) -> tuple:
    """The abstract assignor: partitions in topic order, each to the next subscriber of its topic in
    member-id order (a round robin over one counter). Deterministic; not sticky."""
    out = {m.member_id: 0 for m in members}
    k = 0
    for t, n in enumerate(topics):
        subs = [m.member_id for m in members if m.subscribed >> t & 1]
        for p in range(n):
            if subs:
                out[subs[k % len(subs)]] |= 1 << (t * g.pmax + p)
                k += 1
    return tuple(Target(m.member_id, out[m.member_id]) for m in members)


def update_epoch(m: Member, epoch: int) -> Member:
    """Builder.updateMemberEpoch: the previous epoch becomes the current one."""
    return m._replace(previous_member_epoch=m.member_epoch, member_epoch=epoch)


def owns_revoked(owned: Optional[int], pending: int) -> bool:
    """ownsRevokedPartitions: a heartbeat without TopicPartitions counts as still owning everything."""
    return owned is None or bool(owned & pending)


def reconcile(g, m: Member, target_epoch: int, target: int, pe: tuple, owned: int, subscribed_parts: int,
              enforce: bool) -> Member:
    """CurrentAssignmentBuilder.build (impl/consumer/reconciliation.py `reconcile`); `subscribed_parts`:
    existing partitions of the topics the member subscribes to."""
    if m.state == M_STABLE:
        if m.member_epoch != target_epoch:
            return next_assignment(g, m, m.member_epoch, target_epoch, target, pe, owned, subscribed_parts)
        return strip_unsubscribed(m, m.member_epoch, owned, subscribed_parts) if enforce else m
    if m.state == UNREVOKED:
        if owns_revoked(owned, m.pending_revocation):
            return strip_unsubscribed(m, m.member_epoch, owned, subscribed_parts) if enforce else m
        epoch = m.member_epoch + 1 if g.unrevoked_bump else m.member_epoch
        return next_assignment(g, m, epoch, target_epoch, target, pe, owned, subscribed_parts)
    return next_assignment(g, m, m.member_epoch, target_epoch, target, pe, owned, subscribed_parts)


def strip_unsubscribed(m: Member, epoch: int, owned: int, subscribed_parts: int) -> Member:
    """updateCurrentAssignment (KAFKA-19431): partitions of unsubscribed topics go to pending revocation."""
    drop = m.assigned & ~subscribed_parts
    if not drop:
        return m
    assigned = m.assigned & ~drop
    pending = m.pending_revocation | drop
    if owns_revoked(owned, pending):
        return update_epoch(m, epoch)._replace(state=UNREVOKED, assigned=assigned, pending_revocation=pending)
    return update_epoch(m, epoch)._replace(assigned=assigned)


def next_assignment(g, m: Member, epoch: int, target_epoch: int, target: int, pe: tuple, owned: int,
                    subscribed_parts: int) -> Member:
    """computeNextAssignment: keep, revoke first, then assign what is free (others' partitions are
    unreleased until their partition epoch is gone)."""
    effective = target & subscribed_parts
    kept = m.assigned & effective
    to_revoke = m.assigned & ~kept
    candidates = effective & ~kept
    unreleased = 0
    for q in _bits(candidates):
        if pe[q] != FREE and (g.own_revocation_unreleased or not m.pending_revocation >> q & 1):
            unreleased |= 1 << q
    to_assign = candidates & ~unreleased
    if to_revoke and owns_revoked(owned, to_revoke):
        return update_epoch(m, epoch)._replace(state=UNREVOKED, assigned=kept, pending_revocation=to_revoke)
    state = UNRELEASED if unreleased else M_STABLE
    return update_epoch(m, target_epoch)._replace(state=state, assigned=kept | to_assign, pending_revocation=0)


def update_partition_epochs(g, pe: tuple, old: Optional[Member], new: Member) -> tuple:
    """ConsumerGroup.updateMember's partition epochs. Fixed (KAFKA-16147): remove all of the old
    member's at its old epoch, add all of the new one's. Before the fix, each set was redone only
    if it changed, so a partition moving from pending revocation back to assigned lost its epoch."""
    pe = list(pe)
    if not g.lost_epoch:
        if old is not None:
            for q in _bits(old.assigned | old.pending_revocation):
                pe[q] = FREE
        for q in _bits(new.assigned | new.pending_revocation):
            pe[q] = new.member_epoch
        return tuple(pe)
    if old is None:
        for q in _bits(new.assigned | new.pending_revocation):
            pe[q] = new.member_epoch
        return tuple(pe)
    if old.assigned != new.assigned:
        for q in _bits(old.assigned):
            pe[q] = FREE
        for q in _bits(new.assigned):
            pe[q] = new.member_epoch
    if old.pending_revocation != new.pending_revocation:
        for q in _bits(old.pending_revocation):
            pe[q] = FREE
        for q in _bits(new.pending_revocation):
            pe[q] = new.member_epoch
    return tuple(pe)


def put_member(members: tuple, new: Member) -> tuple:
    return tuple(sorted([m for m in members if m.member_id != new.member_id] + [new]))


def fence(g, group: Group, topics: tuple, m: Member) -> Group:
    """consumerGroupFenceMember: remove the member (its target and partition epochs), bump the epoch."""
    members = tuple(x for x in group.members if x.member_id != m.member_id)
    pe = list(group.partition_epochs)
    for q in _bits(m.assigned | m.pending_revocation):
        pe[q] = FREE
    epoch = group.group_epoch + 1
    assignment_epoch = epoch if not members and not g.empty_epoch_lag else group.assignment_epoch
    return Group(epoch, assignment_epoch, members, tuple(t for t in group.target if t.member_id != m.member_id),
                 tuple(pe), subscription_metadata(g, topics, members))


def validate_epoch(g, m: Member, received: int, owned: int) -> bool:
    """throwIfConsumerGroupMemberEpochIsInvalid; False = FENCED_MEMBER_EPOCH."""
    if received == 0 and not g.no_epoch_zero_rejoin:
        return True
    if received > m.member_epoch:
        return False
    if received < m.member_epoch:
        return received == m.previous_member_epoch and owned is not None and owned & ~m.assigned == 0
    return True


def reported_owned(c: Client) -> Optional[int]:
    """The TopicPartitions field of the client's next heartbeat (HeartbeatState.buildRequestData):
    sent when joining, after a reset (lost answer, fence) and when the owned set changed since last
    sent; None (the field omitted) otherwise."""
    return c.owned if c.member_epoch <= 0 or c.reported == NOT_SENT or c.owned != c.reported else None


def handle_heartbeat(g, s: ConsumerGroupState, c: Client):
    """consumerGroupHeartbeat / consumerGroupLeave for client `c`: (new group, Answer)."""
    group, topics = s.group, s.topics
    mid, epoch, owned = c.member_id, c.member_epoch, reported_owned(c)
    mem = find(group.members, mid)
    is_new = mem is None
    if epoch == LEAVE_EPOCH:
        if mem is None:
            return group, Answer(UNKNOWN, 0, 0)
        return fence(g, group, topics, mem), Answer(NONE, LEAVE_EPOCH, 0)
    if mem is None:
        if epoch != 0:
            return group, Answer(UNKNOWN, 0, 0)
        mem = Member(mid, M_STABLE, 0, 0, 0, 0, 0)
    elif not validate_epoch(g, mem, epoch, owned):
        return group, Answer(FENCED, 0, 0)
    updated = mem._replace(subscribed=c.subscribed)
    others = tuple(x for x in group.members if x.member_id != mid)
    bump = updated.subscribed != mem.subscribed
    sub_meta = subscription_metadata(g, topics, others + (updated,))
    if sub_meta != group.subscription_metadata:
        bump = True
    group_epoch = group.group_epoch + (1 if bump else 0)
    members = put_member(group.members, updated)
    targets = group.target
    assignment_epoch = group.assignment_epoch
    if group_epoch > assignment_epoch:
        targets = assign(g, topics, members)
        assignment_epoch = group_epoch
    target = target_of(Group(0, 0, (), targets, (), ()), mid)
    subscribed_parts = topic_partitions(topics, g.pmax, updated.subscribed)
    reconciled = updated
    if not (updated.state == M_STABLE and updated.member_epoch == assignment_epoch):
        enforce = bool(updated.assigned & ~subscribed_parts)
        reconciled = reconcile(g, updated, assignment_epoch, target, group.partition_epochs, owned,
                               subscribed_parts, enforce)
    pe = group.partition_epochs
    if reconciled != mem:
        pe = update_partition_epochs(g, pe, None if is_new else mem, reconciled)
    group = Group(group_epoch, assignment_epoch, put_member(members, reconciled), targets, pe, sub_meta)
    return group, Answer(NONE, reconciled.member_epoch, reconciled.assigned)


# --- the actions: a guard and an update each, named as specs/ConsumerGroup.tla names them ------------
def heartbeat_guard(g, s, m):
    """A client sends ConsumerGroupHeartbeat (one in flight); the coordinator handles it. A
    client RECONCILING finishes its reconciliation first (abstraction: reconciliation is shorter than
    the heartbeat interval). A periodic heartbeat (STABLE) that would change nothing (the group stays, the answer
    repeats what the client knows, the same fields are sent) is not a step: it only stutters."""
    c = s.clients[m]
    if c.inflight or not JOINING <= c.state <= LEAVING or c.state == RECONCILING:
        return False
    if c.state != STABLE:
        return True
    group, ans = g.handled(s, m)
    return (group != s.group or ans != (NONE, c.member_epoch, c.assignment)
            or reported_owned(c) is not None)


def heartbeat(g, s, m):
    """A LEAVING client is UNSUBSCRIBED as soon as its leave heartbeat is sent (the Java client does
    not wait for that answer)."""
    c = s.clients[m]
    group, ans = g.handled(s, m)
    owned = reported_owned(c)
    c = c._replace(state=UNSUBSCRIBED if c.state == LEAVING else c.state, answer=ans, inflight=True,
                   reported=c.reported if owned is None else owned)
    return s._replace(group=group, clients=_set(s.clients, m, c))


def receive_guard(g, s, m):
    return s.clients[m].answer is not None


def receive(g, s, m):
    """The client handles its heartbeat answer (possibly late: other steps happened meanwhile)."""
    c = s.clients[m]
    a = c.answer
    c = c._replace(answer=None, inflight=False)
    if c.state == UNSUBSCRIBED:
        pass                                   # the answer to its leave heartbeat: nothing to do
    elif a.error != NONE:
        # FENCED: onPartitionsLost, then JOINING with epoch 0 and the same member id
        c = c._replace(state=JOINING, member_epoch=0, owned=0, assignment=0, reported=NOT_SENT)
    elif a.member_epoch < 0:
        # the late answer to a leave heartbeat reaching a client that subscribed again: ignored
        # (KAFKA-19335's fix); before it, the client took epoch -1 and its join heartbeats were leaves
        if g.negative_epoch_joining:
            c = c._replace(member_epoch=a.member_epoch)
    else:
        state = STABLE if a.assignment == c.owned else RECONCILING
        fresh = a.assignment != c.assignment
        # a new target (LocalAssignment: its partitions, not the member epoch) makes the next heartbeat
        # carry the owned partitions again (HeartbeatState.buildRequestData)
        c = c._replace(state=state, member_epoch=a.member_epoch, assignment=a.assignment,
                       reported=NOT_SENT if fresh else c.reported)
    return s._replace(clients=_set(s.clients, m, c))


def lose_guard(g, s, m):
    return s.clients[m].answer is not None and s.budget.losses > 0


def lose(g, s, m):
    """The answer is lost: the request times out and the client will heartbeat again."""
    b = s.budget
    c = s.clients[m]._replace(answer=None, inflight=False, reported=NOT_SENT)
    return s._replace(clients=_set(s.clients, m, c), budget=b._replace(losses=b.losses - 1))


def reconcile_guard(g, s, m):
    return s.clients[m].state == RECONCILING


def reconcile_client(g, s, m):
    """The client revokes what is no longer assigned and takes what is new, then acknowledges."""
    c = s.clients[m]
    return s._replace(clients=_set(s.clients, m, c._replace(state=ACKNOWLEDGING, owned=c.assignment)))


def commit_guard(g, s, m):
    c = s.clients[m]
    return c.owned != 0 and c.commit is None and s.budget.commits > 0 and c.state == RECONCILING


def commit(g, s, m):
    """The auto-commit before revocation (onPartitionsRevoked): OffsetCommit of the owned partitions,
    carrying the client's member epoch; it travels on its own (`commit_arrives`). Commits from a
    STABLE client follow the same rule and are left out of the bound."""
    c = s.clients[m]
    b = s.budget
    return s._replace(clients=_set(s.clients, m, c._replace(commit=Commit(c.member_epoch, c.owned))),
                      budget=b._replace(commits=b.commits - 1))


def commit_arrives_guard(g, s, m):
    return s.clients[m].commit is not None


def commit_verdict(group: Group, mid: int, sent: Commit) -> str:
    """ConsumerGroup.validateOffsetCommit."""
    mem = find(group.members, mid)
    if mem is None:
        return UNKNOWN
    if mem.member_epoch != sent.member_epoch:
        return "STALE_MEMBER_EPOCH"
    return NONE


def commit_arrives(g, s, m):
    """The coordinator handles the OffsetCommit (the offsets themselves are not modelled)."""
    return s._replace(clients=_set(s.clients, m, s.clients[m]._replace(commit=None)))


def _perturb(s):
    b = s.budget
    return b._replace(perturbations=b.perturbations - 1)


def subscribe_guard(g, s, m, topics):
    c = s.clients[m]
    return s.budget.perturbations > 0 and JOINING <= c.state <= STABLE and c.subscribed != topics


def subscribe(g, s, m, topics):
    """The application changes the subscription; the next heartbeat carries it."""
    return s._replace(clients=_set(s.clients, m, s.clients[m]._replace(subscribed=topics)), budget=_perturb(s))


def leave_guard(g, s, m):
    c = s.clients[m]
    return s.budget.perturbations > 0 and c.state == STABLE and c.member_epoch > 0 and not c.inflight


def leave(g, s, m):
    """unsubscribe(): PREPARE_LEAVING drops the partitions, LEAVING sends epoch -1."""
    c = s.clients[m]
    return s._replace(clients=_set(s.clients, m, c._replace(state=LEAVING, member_epoch=LEAVE_EPOCH, owned=0,
                                                            assignment=0)), budget=_perturb(s))


def resubscribe_guard(g, s, m):
    """The application subscribes again after unsubscribing (the same member id, epoch 0)."""
    return s.budget.perturbations > 0 and s.clients[m].state == UNSUBSCRIBED


def resubscribe(g, s, m):
    c = s.clients[m]
    return s._replace(clients=_set(s.clients, m, c._replace(state=JOINING, member_epoch=0, owned=0, assignment=0,
                                                            reported=NOT_SENT)), budget=_perturb(s))


def crash_guard(g, s, m):
    c = s.clients[m]
    return s.budget.perturbations > 0 and JOINING <= c.state <= STABLE


def crash(g, s, m):
    c = s.clients[m]
    return s._replace(clients=_set(s.clients, m, c._replace(state=DOWN, member_epoch=0, owned=0, assignment=0,
                                                            reported=NOT_SENT, answer=None, inflight=False,
                                                            commit=None)),
                      budget=_perturb(s))


def expire_guard(g, s, m):
    """The session of a crashed client's member times out."""
    c = s.clients[m]
    return c.state == DOWN and find(s.group.members, c.member_id) is not None


def expire(g, s, m):
    mem = find(s.group.members, s.clients[m].member_id)
    return s._replace(group=fence(g, s.group, s.topics, mem))


def expire_live_guard(g, s, m):
    """The session of a live client times out (a long pause): it becomes a zombie until fenced."""
    c = s.clients[m]
    return (s.budget.perturbations > 0 and c.state != DOWN
            and find(s.group.members, c.member_id) is not None)


def expire_live(g, s, m):
    mem = find(s.group.members, s.clients[m].member_id)
    return s._replace(group=fence(g, s.group, s.topics, mem), budget=_perturb(s))


def restart_guard(g, s, m):
    c = s.clients[m]
    return c.state == DOWN and find(s.group.members, c.member_id) is None


def restart(g, s, m):
    """The crashed process starts again: a new member id, joining with epoch 0."""
    c = s.clients[m]
    return s._replace(clients=_set(s.clients, m, Client(JOINING, c.member_id + g.n, 0, 0, 0, g.all_topics,
                                                        NOT_SENT, None, False, None)))


def add_partition_guard(g, s, t):
    return g.grow and s.budget.perturbations > 0 and s.topics[t] < g.pmax


def add_partition(g, s, t):
    """A metadata change: topic t gains a partition (groups see it at their next heartbeat)."""
    return s._replace(topics=_set(s.topics, t, s.topics[t] + 1), budget=_perturb(s))


def _slots(g, s):
    return g.slot_args


def _subscriptions(g, s):
    return g.subscription_args


def _topic_args(g, s):
    return g.topic_args


ACTIONS = ActionTable([
    Action("heartbeat", heartbeat_guard, heartbeat, _slots),
    Action("receive", receive_guard, receive, _slots),
    Action("reconcile", reconcile_guard, reconcile_client, _slots),
    Action("commit", commit_guard, commit, _slots),
    Action("commit_arrives", commit_arrives_guard, commit_arrives, _slots),
    Action("expire", expire_guard, expire, _slots),
    Action("restart", restart_guard, restart, _slots),
    Action("lose", lose_guard, lose, _slots, fault=True),
    Action("subscribe", subscribe_guard, subscribe, _subscriptions, fault=True),
    Action("leave", leave_guard, leave, _slots, fault=True),
    Action("resubscribe", resubscribe_guard, resubscribe, _slots, fault=True),
    Action("crash", crash_guard, crash, _slots, fault=True),
    Action("expire_live", expire_live_guard, expire_live, _slots, fault=True),
    Action("add_partition", add_partition_guard, add_partition, _topic_args, fault=True),
])
ACTION_NAMES = ACTIONS.names()
FAULTS = ACTIONS.faults
CLIENT_REQUESTS = frozenset({"heartbeat", "commit_arrives"})


class ConsumerGroupModel(Protocol):
    name = "consumer-group"
    action_table = ACTIONS
    memo_safe = True

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        self.params = dict(params)
        self.behaviours = frozenset(behaviours)
        self.n = params["members"]
        self.t = params["topics"]
        self.grow = params["grow"]
        self.pmax = params["partitions"] + (1 if self.grow else 0)
        self.all_topics = (1 << self.t) - 1
        self.lost_epoch = B16147 in self.behaviours
        self.unrevoked_bump = B19974 in self.behaviours
        self.own_revocation_unreleased = B19449 in self.behaviours
        self.no_epoch_zero_rejoin = B19233 in self.behaviours
        self.empty_epoch_lag = B20442 in self.behaviours
        self.negative_epoch_joining = B19335 in self.behaviours
        self.slot_args = tuple((m,) for m in range(self.n))
        self.topic_args = tuple((t,) for t in range(self.t))
        self.subscription_args = tuple((m, ts) for m in range(self.n) for ts in range(1, self.all_topics + 1))
        self._invs = consumer_group_invariants(self.view, self.step_views)
        self._some = consumer_group_sometimes(self.view)
        self._views = {}
        self._step_cache = (None, None, None, None)
        self._handled = (None, None, None)

    def handled(self, s, m):
        """(group, answer) of client m's heartbeat in state s (guard and update share one computation)."""
        h = self._handled
        if h[0] is s and h[1] == m:
            return h[2]
        out = handle_heartbeat(self, s, s.clients[m])
        self._handled = (s, m, out)
        return out

    # --- Protocol ------------------------------------------------------------------------------
    def init_states(self):
        p = self.params
        topics = (p["partitions"],) * self.t
        clients = tuple(Client(JOINING, m, 0, 0, 0, self.all_topics, NOT_SENT, None, False, None)
                        for m in range(self.n))
        group = Group(0, 0, (), (), (FREE,) * (self.t * self.pmax), (0,) * self.t)
        return [ConsumerGroupState(group, clients, topics, Budget(p["perturbations"], p["losses"], p["commits"]))]

    def actions(self, s):
        return ACTIONS.enabled(self, s)

    def step(self, s, a):
        return ACTIONS.step(self, s, a)

    def is_fault(self, action) -> bool:
        return action[0] in FAULTS

    def invariants(self):
        return self._invs

    def sometimes(self):
        return self._some

    def fingerprint(self, s) -> int:
        return hash(s)

    def participants(self):
        return tuple(f"member m{i}" for i in range(self.n)) + ("coordinator", "metadata")

    def arrow(self, action):
        name = action[0]
        if name in CLIENT_REQUESTS:
            return (f"member m{action[1]}", "coordinator")
        if name in ("receive", "lose"):
            return ("coordinator", f"member m{action[1]}")
        if name in ("expire", "expire_live"):
            return ("coordinator", "coordinator")
        if name == "add_partition":
            return ("metadata", "coordinator")
        return (f"member m{action[1]}", f"member m{action[1]}")

    # --- views for the invariants --------------------------------------------------------------
    def group_state(self, group: Group) -> int:
        """ConsumerGroup.maybeUpdateGroupState."""
        if not group.members:
            return G_EMPTY
        if group.group_epoch > group.assignment_epoch:
            return G_ASSIGNING
        for m in group.members:
            if m.state != M_STABLE or m.member_epoch != group.assignment_epoch:
                return G_RECONCILING
        return G_STABLE

    def view(self, s) -> CGView:
        """The state as invariants/consumer_group.py reads it (Member has MemberView's fields)."""
        cache = self._views
        hit = cache.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1]
        g = s.group
        v = CGView(g.group_epoch, g.assignment_epoch, self.group_state(g), g.members, g.target,
                   g.partition_epochs, s.topics, self.pmax,
                   tuple(ClientView(c.member_id, JOINING <= c.state <= STABLE, c.member_epoch, c.owned)
                         for c in s.clients),
                   s.budget.perturbations < self.params["perturbations"])
        if len(cache) > 256:
            cache.clear()
        cache[id(s)] = (s, v)
        return v

    def step_views(self, prev, action, nxt):
        c = self._step_cache
        if c[0] is prev and c[1] is action and c[2] is nxt:
            return c[3]
        a = self.view(prev)
        b = self.view(nxt)
        name, *args = action
        if name == "heartbeat":
            cl = prev.clients[args[0]]
            ans = nxt.clients[args[0]].answer
            b = b._replace(answered=(AnswerFact(cl.member_id, cl.member_epoch, ans.error),),
                           reconciled=(cl.member_id,) if ans.error == NONE else ())
        elif name == "commit_arrives":
            cl = prev.clients[args[0]]
            if commit_verdict(prev.group, cl.member_id, cl.commit) == NONE:
                b = b._replace(accepted=(CommitFact(cl.member_id, cl.commit.member_epoch, cl.commit.partitions),))
        self._step_cache = (prev, action, nxt, (a, b))
        return a, b

    # --- settled, healthy states ---------------------------------------------------------------
    def is_quiescent_good(self, s) -> bool:
        """Nothing in flight; the group Stable with exactly the live clients as members, each holding
        its target; metadata seen."""
        g = s.group
        live = []
        for c in s.clients:
            if c.answer is not None or c.commit is not None or c.inflight:
                return False
            if c.state == DOWN:
                return False
            if c.state != UNSUBSCRIBED:
                if c.state != STABLE:
                    return False
                live.append(c)
        if len(live) != len(g.members):
            return False
        if not live:
            return True
        if self.group_state(g) != G_STABLE:
            return False
        if g.subscription_metadata != subscription_metadata(self, s.topics, g.members):
            return False
        for c in live:
            m = find(g.members, c.member_id)
            if m is None or c.owned != m.assigned or c.member_epoch != m.member_epoch or c.subscribed != m.subscribed:
                return False
        return True

    def allows_terminal(self, s) -> bool:
        return self.is_quiescent_good(s)

    def describe(self, s) -> dict:
        g = s.group
        pm = self.pmax

        def parts(mask):
            return [f"t{q // pm}p{q % pm}" for q in _bits(mask)]

        def topics(mask):
            return [f"t{t}" for t in _bits(mask)]

        return {
            "group": {
                "state": GROUP_STATE_NAMES[self.group_state(g)], "group_epoch": g.group_epoch,
                "assignment_epoch": g.assignment_epoch,
                "members": {f"m{m.member_id}": {"state": MEMBER_STATE_NAMES[m.state], "member_epoch": m.member_epoch,
                                                "previous_member_epoch": m.previous_member_epoch,
                                                "assigned": parts(m.assigned),
                                                "pending_revocation": parts(m.pending_revocation),
                                                "subscribed": topics(m.subscribed)} for m in g.members},
                "target": {f"m{t.member_id}": parts(t.partitions) for t in g.target},
                "partition_epochs": {f"t{q // pm}p{q % pm}": e for q, e in enumerate(g.partition_epochs) if e != FREE},
            },
            "clients": {f"slot{i}": {"member_id": f"m{c.member_id}", "state": CLIENT_STATE_NAMES[c.state],
                                     "member_epoch": c.member_epoch, "owned": parts(c.owned),
                                     "assignment": parts(c.assignment), "subscribed": topics(c.subscribed),
                                     "answer": None if c.answer is None else
                                     {"error": c.answer.error, "member_epoch": c.answer.member_epoch,
                                      "assignment": parts(c.answer.assignment)},
                                     "commit": None if c.commit is None else
                                     {"member_epoch": c.commit.member_epoch, "partitions": parts(c.commit.partitions)}}
                        for i, c in enumerate(s.clients)},
            "topics": {f"t{t}": n for t, n in enumerate(s.topics)},
            "budget": s.budget._asdict(),
        }


def tla_state(proto: ConsumerGroupModel, s: ConsumerGroupState) -> dict:
    """The state as specs/ConsumerGroup.tla's variables (kverify/tla/values.py forms): partitions and
    topics as sets of numbers, members and targets as sets of records (their ids need not start at
    0), "none" as the empty function <<>>, a reported owned set S as <<S>>."""
    from kverify.tla.values import bits, fun, rec

    def member(m):
        return rec(memberId=m.member_id, state=MEMBER_STATE_NAMES[m.state], memberEpoch=m.member_epoch,
                   previousMemberEpoch=m.previous_member_epoch, assigned=bits(m.assigned),
                   pendingRevocation=bits(m.pending_revocation), subscribed=bits(m.subscribed))

    def client(c):
        return rec(state=CLIENT_STATE_NAMES[c.state], memberId=c.member_id, memberEpoch=c.member_epoch,
                   owned=bits(c.owned), assignment=bits(c.assignment), subscribed=bits(c.subscribed),
                   reported=() if c.reported == NOT_SENT else (bits(c.reported),),
                   answer=() if c.answer is None else rec(error=c.answer.error, memberEpoch=c.answer.member_epoch,
                                                          assignment=bits(c.answer.assignment)),
                   inflight=c.inflight,
                   commit=() if c.commit is None else rec(memberEpoch=c.commit.member_epoch,
                                                          partitions=bits(c.commit.partitions)))

    g = s.group
    return {
        "group": rec(groupEpoch=g.group_epoch, assignmentEpoch=g.assignment_epoch,
                     members=frozenset(member(m) for m in g.members),
                     target=frozenset(rec(memberId=t.member_id, partitions=bits(t.partitions)) for t in g.target),
                     partitionEpochs=fun(dict(enumerate(g.partition_epochs))),
                     subscriptionMetadata=fun(dict(enumerate(g.subscription_metadata)))),
        "clients": fun(dict(enumerate(client(c) for c in s.clients))),
        "topics": fun(dict(enumerate(s.topics))),
        "budget": rec(perturbations=s.budget.perturbations, losses=s.budget.losses, commits=s.budget.commits),
    }


HUNT_PARAMS = {
    B16147: ({"perturbations": 1, "losses": 0, "commits": 0, "grow": False}, "explorer"),
    B19974: ({"perturbations": 1, "losses": 0, "commits": 0, "grow": False}, "explorer"),
    B19449: ({"perturbations": 1, "losses": 0, "commits": 0, "grow": False}, "explorer"),
    B19233: ({"perturbations": 0, "losses": 2, "commits": 0, "grow": False}, "explorer"),
    B20442: ({"perturbations": 1, "losses": 0, "commits": 0, "grow": False}, "explorer"),
    B19335: ({"members": 1, "perturbations": 2, "losses": 0, "commits": 0, "grow": False}, "explorer"),
}

SPEC = ModelSpec(name="consumer-group", make=make, params=PARAMS, supports=SUPPORTS, state_fields=STATE_FIELDS,
                 action_names=ACTION_NAMES, hunt_params=HUNT_PARAMS, tla_state=tla_state)
