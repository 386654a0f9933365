"""KIP-848 consumer group safety properties, written once over a small shared view.

Why it exists: the abstract `consumer-group` model (model/consumer_group.py), its Z3 obligations
(model/proofs/consumer_group_inductive.py) and any future world over impl/consumer must be judged
by the same property code. Each maps its state onto `CGView` (ints, bitmasks, tuples) and builds
the invariants with `consumer_group_invariants(view_of, step_view_of)`.

Numbering: member ids are small ints (a client slot plus `members` times its incarnation), a
partition is the bit `t * pmax + p` of a bitmask (topic t, partition p), a topic set is a bitmask
of topics. The properties follow the KIP-848 text and Kafka's group-coordinator module
(ConsumerGroup partition epochs, CurrentAssignmentBuilder, validateOffsetCommit); the public TLA+
spec of KIP-848 (Vanlightly/kafka-tlaplus) states several of them too (LegalTargetAssignment,
NoDoubleClientAssignment, ValidPartitionEpoch, ValidStableGroupState, the epoch monotonicity
properties).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from kverify.invariants.core import Invariant, Sometimes, bits

# coordinator-side member states (group-coordinator modern/MemberState.java)
M_STABLE, UNREVOKED, UNRELEASED = 0, 1, 2
MEMBER_STATE_NAMES = ("STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS")
# group states (ConsumerGroup.ConsumerGroupState)
G_EMPTY, G_ASSIGNING, G_RECONCILING, G_STABLE = 0, 1, 2, 3
GROUP_STATE_NAMES = ("Empty", "Assigning", "Reconciling", "Stable")
FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"


class MemberView(NamedTuple):
    """ConsumerGroupMember as the coordinator holds it."""

    member_id: int
    state: int                 # M_STABLE, UNREVOKED, UNRELEASED
    member_epoch: int
    previous_member_epoch: int
    assigned: int              # partition bitmask
    pending_revocation: int    # partition bitmask
    subscribed: int            # topic bitmask


class ClientView(NamedTuple):
    """One consumer, as it sees itself."""

    member_id: int
    live: bool                 # the process runs and is subscribed (not crashed, not unsubscribed)
    member_epoch: int
    owned: int                 # partitions it consumes


class Commit(NamedTuple):
    """An OffsetCommit the coordinator accepted during a step."""

    member_id: int
    member_epoch: int          # the epoch it carried
    partitions: int


class Answer(NamedTuple):
    """A ConsumerGroupHeartbeat handled during a step."""

    member_id: int
    sent_epoch: int            # the member epoch the request carried (0 = join, -1 = leave)
    error: str                 # "NONE", FENCED_MEMBER_EPOCH, "UNKNOWN_MEMBER_ID"


class Leave(NamedTuple):
    """A client's unsubscribe()/close() with enable.auto.commit on, as the step that left sent it."""

    member_id: int
    consumed: int              # partitions it had a consumed position for
    commits: tuple             # partition mask of each OffsetCommit sent before its leave heartbeat


class Ignored(NamedTuple):
    """A client received the answer to the leave heartbeat it sent on poll-timer expiry, during a step."""

    member_id: int
    rejoining: bool            # the application had polled again (STALE -> JOINING) before the answer came
    error: str                 # the answer's error ("NONE", "UNKNOWN_MEMBER_ID": the member was gone already)
    changed: tuple             # what the answer changed in the client (attribute names; "requests": what it sent),
                               # against the client with that request forgotten; () when it was ignored


class Reconciling(NamedTuple):
    """A live client in RECONCILING, as the world sees it between steps."""

    member_id: int
    reconciled: bool           # its current assignment (partitions, local epoch) equals its target
    in_progress: bool          # a reconciliation is under way (an OffsetCommit before revoking in flight)


class CGView(NamedTuple):
    group_epoch: int
    assignment_epoch: int
    state: int                 # G_EMPTY .. G_STABLE (ConsumerGroup.maybeUpdateGroupState)
    members: tuple             # MemberView, by member id
    target: tuple              # (member_id, partition bitmask), by member id
    partition_epochs: tuple    # per partition bit: the owner's epoch, -1 when free
    topics: tuple              # partitions per topic (the metadata image)
    pmax: int                  # partition bits per topic
    clients: tuple             # ClientView per slot
    perturbed: bool = False    # some perturbation happened (for `sometimes`)
    # facts of one step (filled by step views only)
    accepted: tuple = ()       # Commit
    answered: tuple = ()       # Answer
    reconciled: tuple = ()     # member ids whose record the step recomputed (their own heartbeat)
    left: tuple = ()           # Leave: clients that left with auto-commit on
    # client-side state facts (a world running real clients fills them; the abstract model leaves them empty)
    assignors: tuple = ()      # (member id, server assignor its client asks for, the one its member records)
    reconciling: tuple = ()    # Reconciling: each live client in RECONCILING
    patterns: tuple = ()       # (pattern, members subscribed to it, resolved in the group): each pattern a member
                               # subscribes to or the group holds a resolution of (a world with regex subscriptions)
    ignored: tuple = ()        # Ignored: answers to poll-expiry leaves received (step views of a world with poll stalls)
    left_after_poll: tuple = ()  # member ids of clients that left on poll-timer expiry in a step in which their
                                 # application called poll() (step views of a world that drives the polls)

    def member(self, mid: int) -> Optional[MemberView]:
        for m in self.members:
            if m.member_id == mid:
                return m
        return None

    def target_of(self, mid: int) -> int:
        for t, mask in self.target:
            if t == mid:
                return mask
        return 0


def topic_partitions(topics: tuple, pmax: int, topic_mask: int) -> int:
    """Bitmask of the existing partitions of the topics in `topic_mask`."""
    out = 0
    for t, n in enumerate(topics):
        if topic_mask >> t & 1:
            out |= ((1 << n) - 1) << (t * pmax)
    return out


def fmt_parts(mask: int, pmax: int) -> str:
    return "{" + ", ".join(f"t{q // pmax}p{q % pmax}" for q in bits(mask)) + "}"


# --- state invariants -----------------------------------------------------------------------------
def target_legal(v: CGView) -> Optional[str]:
    """Each partition in at most one member's target; only existing partitions of subscribed topics;
    targets only for members."""
    seen = 0
    for mid, mask in v.target:
        m = v.member(mid)
        if m is None:
            return f"target names m{mid}, which is not a member"
        if mask & seen:
            return f"target gives {fmt_parts(mask & seen, v.pmax)} to m{mid} and another member"
        seen |= mask
        allowed = topic_partitions(v.topics, v.pmax, m.subscribed)
        if mask & ~allowed:
            return f"target gives m{mid} {fmt_parts(mask & ~allowed, v.pmax)} outside its subscription"
    return None


def clients_single_owner(v: CGView) -> Optional[str]:
    """No partition is owned by two live clients whose members the coordinator knows, and such a
    client owns only what its member holds (assigned or pending revocation)."""
    seen = 0
    for c in v.clients:
        if not c.live or not c.owned:
            continue
        m = v.member(c.member_id)
        if m is None:
            continue                       # a zombie: the coordinator fenced it (commits are refused)
        if c.owned & seen:
            return f"client m{c.member_id} owns {fmt_parts(c.owned & seen, v.pmax)}, owned by another client too"
        seen |= c.owned
        extra = c.owned & ~(m.assigned | m.pending_revocation)
        if extra:
            return f"client m{c.member_id} owns {fmt_parts(extra, v.pmax)} that its member does not hold"
    return None


def partition_epochs_name_owners(v: CGView) -> Optional[str]:
    """A held partition's epoch is its holder's member epoch; a partition nobody holds has none."""
    held = 0
    for m in v.members:
        for q in bits(m.assigned | m.pending_revocation):
            if held >> q & 1:
                return f"partition {fmt_parts(1 << q, v.pmax)} held by two members"
            held |= 1 << q
            if v.partition_epochs[q] != m.member_epoch:
                return (f"partition {fmt_parts(1 << q, v.pmax)} held by m{m.member_id} at epoch {m.member_epoch} "
                        f"has partition epoch {v.partition_epochs[q]}")
    for q, e in enumerate(v.partition_epochs):
        if e != -1 and not held >> q & 1:
            return f"partition {fmt_parts(1 << q, v.pmax)} has epoch {e} but no member holds it"
    return None


def stable_group_holds_target(v: CGView) -> Optional[str]:
    """A Stable group's members hold exactly their target at the assignment epoch."""
    if v.state != G_STABLE:
        return None
    for m in v.members:
        if (m.state != M_STABLE or m.member_epoch != v.assignment_epoch or m.pending_revocation
                or m.assigned != v.target_of(m.member_id)):
            return (f"Stable group but m{m.member_id} holds {fmt_parts(m.assigned, v.pmax)} at epoch "
                    f"{m.member_epoch} ({MEMBER_STATE_NAMES[m.state]}), target {fmt_parts(v.target_of(m.member_id), v.pmax)}")
    return None


def epochs_bounded(v: CGView) -> Optional[str]:
    """Member epochs (coordinator and client side) and the assignment epoch never exceed the group epoch."""
    if v.assignment_epoch > v.group_epoch:
        return f"assignment epoch {v.assignment_epoch} > group epoch {v.group_epoch}"
    for m in v.members:
        if m.member_epoch > v.group_epoch:
            return f"member m{m.member_id} epoch {m.member_epoch} > group epoch {v.group_epoch}"
    for c in v.clients:
        if c.member_epoch > v.group_epoch:
            return f"client m{c.member_id} epoch {c.member_epoch} > group epoch {v.group_epoch}"
    return None


def client_epochs_valid(v: CGView) -> Optional[str]:
    """A client that is in the group (joining, reconciling, acknowledging or stable) has a member
    epoch >= 0: -1 and -2 are the leave epochs, which turn its heartbeats into leave requests."""
    for c in v.clients:
        if c.live and c.member_epoch < 0:
            return f"client m{c.member_id} is active with member epoch {c.member_epoch}"
    return None


def empty_group_epochs_agree(v: CGView) -> Optional[str]:
    """An Empty group has its assignment epoch at its group epoch (KAFKA-20442's fix): a joiner then
    gets a target computed for its own epoch."""
    if not v.members and v.assignment_epoch != v.group_epoch:
        return f"Empty group with group epoch {v.group_epoch} but assignment epoch {v.assignment_epoch}"
    return None


# --- step invariants ------------------------------------------------------------------------------
def epochs_monotonic(a: CGView, b: CGView) -> Optional[str]:
    """A member's epoch never decreases at the coordinator; a client's only drops to 0 (rejoin after
    fencing) or -1 (leave)."""
    for m in b.members:
        old = a.member(m.member_id)
        if old is not None and m.member_epoch < old.member_epoch:
            return f"member m{m.member_id} epoch went from {old.member_epoch} down to {m.member_epoch}"
    for ca, cb in zip(a.clients, b.clients):
        if ca.member_id == cb.member_id and 0 < cb.member_epoch < ca.member_epoch:
            return f"client m{cb.member_id} epoch went from {ca.member_epoch} down to {cb.member_epoch}"
    return None


def epoch_follows_target(a: CGView, b: CGView) -> Optional[str]:
    """A member's epoch only moves to the target (assignment) epoch, and only once it revoked what it
    must (never into UNREVOKED_PARTITIONS)."""
    for m in b.members:
        old = a.member(m.member_id)
        if old is None or old.member_epoch == m.member_epoch:
            continue
        if m.member_epoch != b.assignment_epoch:
            return (f"member m{m.member_id} moved from epoch {old.member_epoch} to {m.member_epoch}, "
                    f"not the target epoch {b.assignment_epoch}")
        if m.state == UNREVOKED:
            return f"member m{m.member_id} moved to epoch {m.member_epoch} with partitions still to revoke"
    return None


def unreleased_waits_for_another(a: CGView, b: CGView) -> Optional[str]:
    """A member the step left in UNRELEASED_PARTITIONS waits for a partition of its target that
    another member still holds (never for one it held itself)."""
    for mid in b.reconciled:
        m = b.member(mid)
        if m is None or m.state != UNRELEASED:
            continue
        missing = b.target_of(mid) & ~m.assigned
        others = 0
        for o in b.members:
            if o.member_id != mid:
                others |= o.assigned | o.pending_revocation
        if not missing & others:
            return (f"member m{mid} is UNRELEASED_PARTITIONS but no other member holds any of "
                    f"{fmt_parts(missing, b.pmax)}")
    return None


def rejoin_accepted(a: CGView, b: CGView) -> Optional[str]:
    """A member re-joining with member epoch 0 (after being fenced) is not fenced again."""
    for ans in b.answered:
        if ans.sent_epoch == 0 and ans.error == FENCED_MEMBER_EPOCH:
            return f"m{ans.member_id} re-joined with epoch 0 and was answered FENCED_MEMBER_EPOCH"
    return None


def commits_at_current_epoch(a: CGView, b: CGView) -> Optional[str]:
    """An accepted OffsetCommit comes from a known member at its current epoch
    (ConsumerGroup.validateOffsetCommit: UNKNOWN_MEMBER_ID / STALE_MEMBER_EPOCH otherwise).

    Deliberately not stated: "only for partitions the member still holds". Kafka 4.0-4.2 validate
    the member epoch only, and a member that goes UNREVOKED_PARTITIONS -> UNREVOKED_PARTITIONS keeps
    its epoch after releasing a partition, so its commit sent before the release and arriving after
    it (commitAsync, TxnOffsetCommit) is accepted (the
    explorer finds it in 11 steps at the default bound with that clause added); the per-partition
    assignment epochs added to Kafka's trunk later close that gap and are not modelled."""
    for c in b.accepted:
        m = a.member(c.member_id)
        if m is None:
            return f"commit of unknown member m{c.member_id} accepted"
        if m.member_epoch != c.member_epoch:
            return f"commit of m{c.member_id} at epoch {c.member_epoch} accepted at member epoch {m.member_epoch}"
    return None


def leave_commits_consumed(a: CGView, b: CGView) -> Optional[str]:
    """A client leaving with auto-commit on commits exactly the positions it consumed, before its leave
    heartbeat, in non-empty OffsetCommits (AsyncKafkaConsumer: the auto-commit on unsubscribe/close runs
    before the leave; CommitRequestManager skips a commit of no offsets). Else the next owner of those
    partitions re-reads what this client already consumed."""
    for lv in b.left:
        done = 0
        for mask in lv.commits:
            if not mask:
                return f"m{lv.member_id} left sending an OffsetCommit of no partition"
            done |= mask
        if done != lv.consumed:
            return (f"m{lv.member_id} left with auto-commit having consumed {fmt_parts(lv.consumed, b.pmax)} "
                    f"but committed {fmt_parts(done, b.pmax)} before its leave heartbeat")
    return None


def stale_leave_answer_ignored(a: CGView, b: CGView) -> Optional[str]:
    """The answer to the leave heartbeat a client sends when its poll timer (max.poll.interval.ms) expires changes
    nothing in the client: AbstractHeartbeatRequestManager.poll sends it with makeHeartbeatRequest(currentTimeMs,
    true), ignoreResponse ("we can ignore the leave response because we can join before or after receiving the
    response"), then goes STALE until the application polls again. Handled as a heartbeat answer instead, an
    UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH fences a client that already rejoins (onPartitionsLost, epoch reset), a
    success or another error moves its heartbeat timer and resets its sent fields. Compared with the client that
    never received it (`Ignored.changed`)."""
    for ig in b.ignored:
        if ig.changed:
            what = (f"fenced it ({ig.error}) while it rejoined" if "fenced_count" in ig.changed
                    else f"changed its {', '.join(ig.changed)} ({ig.error})")
            return f"client m{ig.member_id} handled the answer to the leave it sent on poll-timer expiry: {what}"
    return None


def poll_timer_reset_by_poll(a: CGView, b: CGView) -> Optional[str]:
    """A poll resets the poll timer: max.poll.interval.ms counts from the application's last call to poll()
    (AsyncKafkaConsumer.poll -> ApplicationEventHandler PollEvent -> resetPollTimer; AbstractHeartbeatRequestManager
    leaves only once pollTimer.isExpired()), so a client whose application polled during a step never leaves the
    group on poll-timer expiry in that step. Reads which clients the world made poll (its own fact) and whether the
    client sent its poll-timeout leave in the step."""
    for mid in b.left_after_poll:
        return f"client m{mid} left the group on poll-timer expiry in a step in which its application polled"
    return None


def server_assignor_recorded(v: CGView) -> Optional[str]:
    """A member the coordinator knows records the server assignor its live client asks for (group.remote.assignor):
    the client sends ServerAssignor in its joining heartbeat and whenever it changed since the last one it sent
    (ConsumerHeartbeatRequestManager.HeartbeatState), the coordinator keeps the last one received
    (ConsumerGroupMember.Builder.maybeUpdateServerAssignorName) and the group runs the members' most used one.
    Else the group silently runs another assignor than its clients configured."""
    for mid, asked, recorded in v.assignors:
        if asked != recorded:
            return f"m{mid}'s client asks for server assignor {asked!r}, its member records {recorded!r}"
    return None


def reconciliation_under_way(v: CGView) -> Optional[str]:
    """A live client in RECONCILING whose current assignment is not its target has a reconciliation under way
    (AbstractMembershipManager.poll calls maybeReconcile whenever the member is RECONCILING, and maybeReconcile
    starts one unless the target is reconciled or one is in progress). Else the client never takes its target:
    it keeps heartbeating while its member waits in UNREVOKED_PARTITIONS until the rebalance timeout."""
    for r in v.reconciling:
        if not r.reconciled and not r.in_progress:
            return f"client m{r.member_id} is RECONCILING toward a new target with no reconciliation under way"
    return None


def resolved_pattern_kept(a: CGView, b: CGView) -> Optional[str]:
    """A pattern the group holds a resolution of stays resolved while some member still subscribes to it: Kafka
    deletes a resolved regular expression (a ConsumerGroupRegularExpression tombstone) only with its last subscriber,
    when the member changing its regex (GroupMetadataManager.maybeUpdateRegularExpressions) or being removed
    (removeMember) is the only one subscribed to it (ConsumerGroup.numSubscribedMembers == 1), and a resolution result
    (handleRegularExpressionsResult) replaces resolutions, never deletes one. Else the other subscribers resolve to
    nothing until a later refresh: the target takes their partitions away."""
    before = {p: resolved for p, _n, resolved in a.patterns}
    for p, n, resolved in b.patterns:
        if n and before.get(p) and not resolved:
            return f"pattern {p!r} was resolved and {n} member(s) still subscribe to it, but its resolution is gone"
    return None


B16147 = "kafka-16147-lost-partition-epoch"
B19974 = "kafka-19974-unrevoked-epoch-bump"
B19449 = "kafka-19449-own-revocation-unreleased"
B19233 = "kafka-19233-no-epoch-zero-rejoin"
B20442 = "kafka-20442-empty-group-assignment-epoch"
B19335 = "kafka-19335-negative-epoch-joining"
B19899 = "kafka-19899-regex-removal-no-bump"     # caught by consumer-group-world (regex subscriptions)

STATE_CHECKS = (
    ("target-legal", "the target assignment gives each partition to at most one member, only of topics it subscribes to",
     target_legal, (B19899,)),
    ("clients-single-owner", "no partition is owned by two clients the coordinator knows; each owns only what its member holds",
     clients_single_owner, ()),
    ("partition-epochs-name-owners", "a partition epoch names the member holding the partition, and only held ones have one",
     partition_epochs_name_owners, (B16147,)),
    ("stable-group-holds-target", "a Stable group's members hold exactly their target at the assignment epoch",
     stable_group_holds_target, ()),
    ("epochs-bounded", "member epochs and the assignment epoch never exceed the group epoch", epochs_bounded, ()),
    ("empty-group-epochs-agree", "an Empty group has its assignment epoch equal to its group epoch",
     empty_group_epochs_agree, (B20442,)),
    ("client-epochs-valid", "a client in the group never has a negative member epoch", client_epochs_valid, (B19335,)),
)
STEP_CHECKS = (
    ("epochs-monotonic", "member epochs never decrease (coordinator side; client side except rejoin/leave)",
     epochs_monotonic, ()),
    ("epoch-follows-target", "a member's epoch moves only to the target epoch, and only after revoking",
     epoch_follows_target, (B19974,)),
    ("unreleased-waits-for-another", "a member is UNRELEASED_PARTITIONS only while another member holds a partition of its target",
     unreleased_waits_for_another, (B19449,)),
    ("rejoin-accepted", "a member re-joining at epoch 0 is not fenced", rejoin_accepted, (B19233,)),
    ("commits-at-current-epoch", "an accepted commit comes from a known member at its current epoch",
     commits_at_current_epoch, ()),
)
NAMES = tuple(n for n, *_ in STATE_CHECKS) + tuple(n for n, *_ in STEP_CHECKS)


def consumer_group_invariants(view_of: Callable, step_view_of: Callable) -> tuple:
    """The invariants over a model: `view_of(state) -> CGView`, `step_view_of(prev, action, next)
    -> (CGView, CGView)` with the step facts filled in the second."""
    out = []
    for name, statement, fn, broken in STATE_CHECKS:
        out.append(Invariant(name, statement, (lambda f: lambda s: f(view_of(s)))(fn), "state", broken))
    for name, statement, fn, broken in STEP_CHECKS:
        out.append(Invariant(name, statement,
                             (lambda f: lambda p, a, n: f(*step_view_of(p, a, n)))(fn), "step", broken))
    return tuple(out)


# Client-side properties: only a world running real clients (their consumed positions, the requests one input
# sends) can state them; the abstract model has no consumed positions, so they are not in NAMES (nor in
# ConsumerGroup.tla).
CLIENT_STEP_CHECKS = (
    ("leave-commits-consumed", "a client leaving with auto-commit commits exactly its consumed positions "
     "before its leave heartbeat, in non-empty OffsetCommits", leave_commits_consumed, ()),
    ("stale-leave-answer-ignored", "the answer to the leave a client sends on poll-timer expiry changes nothing in "
     "the client (ignoreResponse)", stale_leave_answer_ignored, ()),
    ("poll-timer-reset-by-poll", "a client whose application polled during a step does not leave on poll-timer "
     "expiry in it", poll_timer_reset_by_poll, ()),
    # a coordinator-side property too, but the abstract model has no patterns (consumer-group-world states it)
    ("resolved-pattern-kept", "a pattern the group holds a resolution of stays resolved while a member subscribes "
     "to it", resolved_pattern_kept, ()),
)
CLIENT_STATE_CHECKS = (
    ("server-assignor-recorded", "a member the coordinator knows records the server assignor its live client asks "
     "for", server_assignor_recorded, ()),
    ("reconciliation-under-way", "a live client RECONCILING toward a target it does not hold has a reconciliation "
     "under way", reconciliation_under_way, ()),
)
CLIENT_NAMES = tuple(n for n, *_ in CLIENT_STATE_CHECKS) + tuple(n for n, *_ in CLIENT_STEP_CHECKS)


def client_invariants(step_view_of: Callable, view_of: Optional[Callable] = None) -> tuple:
    """The client-side invariants, over the same `view_of` / `step_view_of` as `consumer_group_invariants`
    (the state ones only when `view_of` is given)."""
    states = () if view_of is None else tuple(
        Invariant(name, statement, (lambda f: lambda s: f(view_of(s)))(fn), "state", broken)
        for name, statement, fn, broken in CLIENT_STATE_CHECKS)
    return states + tuple(
        Invariant(name, statement, (lambda f: lambda p, a, n: f(*step_view_of(p, a, n)))(fn), "step", broken)
        for name, statement, fn, broken in CLIENT_STEP_CHECKS)


def is_stable_with_all(v: CGView) -> bool:
    """Stable group in which every live client is a member holding its target, all partitions of
    the subscribed topics assigned."""
    if v.state != G_STABLE:
        return False
    live = [c for c in v.clients if c.live]
    if not live or len(live) != len(v.members):
        return False
    subscribed = 0
    covered = 0
    for c in live:
        m = v.member(c.member_id)
        if m is None or c.owned != m.assigned or c.member_epoch != m.member_epoch:
            return False
        subscribed |= m.subscribed
        covered |= m.assigned
    return covered == topic_partitions(v.topics, v.pmax, subscribed)


def consumer_group_sometimes(view_of: Callable) -> tuple:
    return (
        Sometimes("group-stable", "the group is Stable with every live client holding its target",
                  lambda s: is_stable_with_all(view_of(s))),
        Sometimes("revocation", "a member is in UNREVOKED_PARTITIONS",
                  lambda s: any(m.state == UNREVOKED for m in view_of(s).members)),
        Sometimes("unreleased", "a member is in UNRELEASED_PARTITIONS",
                  lambda s: any(m.state == UNRELEASED for m in view_of(s).members)),
        Sometimes("stable-after-perturbation", "after a perturbation the group is Stable again with every live client",
                  lambda s: (lambda v: v.perturbed and is_stable_with_all(v))(view_of(s))),
    )
