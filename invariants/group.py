"""Group-coordination safety properties, written once over a small shared *view*.

Why a view: the abstract group model (model/group.py) and, later, the impl world (the real
coordinator + consumer members + network) must be checked by the very same property code. Each
of them maps its state onto `GroupView` (cheaply: plain ints, bitmasks and tuples) and builds the
`Invariant` objects with `group_invariants(view_of, step_view_of)`; the checks below never look at
a model's own state.

Numbering: members are slots 0..n-1 (an impl world numbers its consumer processes the same way;
a process restart is a new incarnation in the same slot and shows up as `alive=False` in between),
partitions are 0..p-1, member sets are bitmasks (bit i = slot i).

Coordinator failover: `epoch` counts (re)loads of the group by a coordinator. A reload may bring the
group back at an older generation than the one held in memory: a generation that completed its
join phase but whose assignment was never persisted is lost, and its number is reused by the next
join. Kafka does that correctly because nobody received an assignment under the lost generation,
so the properties below allow it; what they forbid is losing anything that was *delivered*
(an assignment answered to SyncGroup) or *acknowledged* (a committed offset).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from kverify.invariants.core import Invariant, Sometimes, bits

# group states (Kafka's names; codes are what views carry)
EMPTY, PREPARING, COMPLETING, STABLE, DEAD = 0, 1, 2, 3, 4
STATE_NAMES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")

# coordinator.md §1.1: target -> valid previous states
VALID_PREVIOUS = {
    EMPTY: frozenset({PREPARING}),
    PREPARING: frozenset({STABLE, COMPLETING, EMPTY}),
    COMPLETING: frozenset({PREPARING}),
    STABLE: frozenset({COMPLETING}),
    DEAD: frozenset({STABLE, PREPARING, COMPLETING, EMPTY, DEAD}),
}
LOADED_STATES = frozenset({EMPTY, STABLE})   # §8.6: a (re)loaded group is Stable if it has members, else Empty


class ClientView(NamedTuple):
    """One consumer process, as the member side sees itself."""

    alive: bool          # the process runs (a paused process is alive; a crashed one is not)
    generation: int      # the generation it would send now (last JoinGroup answer; -1: none yet)
    acted: int           # generation of the last assignment it received, i.e. what it consumes and
                         # commits under (-1: none yet)
    owned: int           # bitmask of partitions it believes it owns (consumes)
    can_commit: bool     # the coordinator would accept an offset commit from it right now


class CommitEvent(NamedTuple):
    """An offset commit the coordinator acknowledged during one step."""

    member: int          # slot, or -1 for a standalone consumer / admin reset (generation -1, member "")
    generation: int      # the generation the commit carried
    partitions: int      # bitmask of partitions it wrote
    explicit_reset: bool = False   # a user's deliberate reset (may move offsets backwards)
    expired_in: int = -1           # a retention expiry, not a commit (member -1, generation -1): the group
                                   # state (EMPTY..DEAD) in which the coordinator's expiry task deleted the
                                   # offsets of `partitions`; -1 = a commit or a reset


class Handover(NamedTuple):
    """A member revoked partitions (onPartitionsRevoked, not lost) right after the coordinator
    acknowledged the commit it sent to hand them over (the auto-commit of onJoinPrepare, or a
    commitSync in the revocation callback)."""

    member: int          # slot
    partitions: int      # bitmask of the partitions revoked
    consumed: tuple      # per partition: the position it had consumed up to when revoking (-1: none/not revoked)


class Abandon(NamedTuple):
    """A live member gave up the generation it held (its generation was reset) during one step,
    while it owned partitions: it will declare them lost (onPartitionsLost: no revocation callback,
    no commit of what it consumed)."""

    member: int          # slot
    generation: int      # the generation it abandoned
    partitions: int      # bitmask of the partitions it owned then
    cause: str           # the coordinator's error that made it reset ("ILLEGAL_GENERATION", ...), or
                         # "left" (it left the group itself: close, poll timeout), or "none"


class Fence(NamedTuple):
    """A running member handled an answer saying the coordinator put it out of its generation
    (FENCING_ERRORS) to a request it had sent under the generation it still held."""

    member: int          # slot
    generation: int      # the generation it held and sent the request under
    request: str         # "heartbeat", "sync", "join" or "commit"
    error: str           # ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID
    kept: bool           # after the step it still runs under that very generation (member id included)


FENCING_ERRORS = frozenset({"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"})

# causes after which a member rightly considers its partitions lost: the coordinator fenced it out of
# its generation (coordinator.md §9.5), or it left the group on its own
FENCING_CAUSES = FENCING_ERRORS | {"left"}


class GroupView(NamedTuple):
    epoch: int                   # coordinator load epoch of the group (+1 at every reload)
    state: int                   # EMPTY..DEAD
    generation: int
    leader: int                  # slot, -1 for none
    members: int                 # bitmask of slots the coordinator holds as members
    assignment: Optional[tuple]  # stored assignment of `generation`: per slot a partition bitmask; None if none stored
    offsets: tuple               # committed offset per partition
    clients: tuple               # ClientView per slot
    delivered: tuple             # ((generation, assignment), ...) assignments answered to SyncGroup, as far as kept
    accepted: tuple = ()         # CommitEvent acknowledged in the step that led here (step checks only)
    passed: tuple = ()           # group states passed through *inside* the step that led here, in order
                                 # (one request can do prepare + complete); () = a direct transition
    handovers: tuple = ()        # Handover events of the step that led here (step checks only)
    abandoned: tuple = ()        # Abandon events of the step that led here (step checks only)
    fenced: tuple = ()           # Fence events of the step that led here (step checks only)


_bits = bits   # set bits of a bitmask (invariants/core.py)


def with_step_events(v: GroupView, accepted: tuple, passed: tuple) -> GroupView:
    """`v` with the commits acknowledged and the states passed in the step that led to it (what
    `v._replace(accepted=..., passed=...)` gives, without its cost: models build a step view per transition)."""
    return tuple.__new__(GroupView, (v.epoch, v.state, v.generation, v.leader, v.members, v.assignment, v.offsets,
                                     v.clients, v.delivered, accepted, passed, v.handovers, v.abandoned))


def _path(prev: GroupView, nxt: GroupView) -> tuple:
    """The group states of a step, in order: before, the ones passed inside it, after."""
    return (prev.state,) + nxt.passed + (nxt.state,)


def _hops(prev: GroupView, nxt: GroupView):
    """The (from, to) pairs of the step's path; none for a step that stays in its state."""
    if not nxt.passed:
        return ((prev.state, nxt.state),) if nxt.state != prev.state else ()
    path = _path(prev, nxt)
    return zip(path, path[1:])


def _fmt_parts(mask: int) -> str:
    return "{" + ",".join(f"p{i}" for i in _bits(mask)) + "}"


# --- exclusive partition ownership ---------------------------------------------------------------
def check_exclusive_ownership(v: GroupView) -> Optional[str]:
    """In the stored assignment of the current generation no partition has two owners; and no two
    live members that can still commit offsets for a partition consume it at the same time.

    Allows: a paused or fenced process that still *believes* it owns a partition another member now
    owns, as long as the coordinator would refuse its commits (that zombie is harmless to offsets).
    Forbids: overlapping entries in a stored assignment (KAFKA-12984: a sticky assignor that did
    not cross-check claims gave a partition two members claimed to both); two live processes both
    owning p and both able to commit for it (e.g. a zombie whose stale-generation commit would be
    accepted).
    """
    if v.assignment is not None:
        seen = 0
        for slot, parts in enumerate(v.assignment):
            if parts & seen:
                return (f"generation {v.generation} assignment gives {_fmt_parts(parts & seen)} "
                        f"to m{slot} and to another member")
            seen |= parts
    seen, owner = 0, {}
    for slot, c in enumerate(v.clients):
        if c.alive and c.can_commit and c.owned:
            clash = c.owned & seen
            if clash:
                p = _bits(clash)[0]
                return (f"m{owner[p]} and m{slot} both consume p{p} and both can commit it "
                        f"(m{slot} at generation {c.generation}, group at {v.generation})")
            for p in _bits(c.owned):
                owner[p] = slot
            seen |= c.owned
    return None


# --- committed-offset safety ----------------------------------------------------------------------
def check_committed_offset_safety(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """Every accepted commit came from the owner of that partition in the group's current
    generation, or from a standalone consumer on an Empty group; an acknowledged commit is never
    lost or moved backwards (by a failover or anything else) unless the user explicitly resets it.

    Allows: commits by a member of the current generation for partitions its stored assignment
    gives it, in Stable and in PreparingRebalance (the old generation keeps committing until it
    rejoins, coordinator.md §7.1.2); standalone commits and explicit resets on an Empty group; a
    reload that brings back exactly the acknowledged offsets.
    Forbids: a commit accepted from a fenced/removed member, from an older generation, for a
    partition the committer does not own, or a standalone commit on a non-Empty group; any
    committed offset decreasing without an explicit reset of that partition in the same step.
    A retention expiry (`CommitEvent.expired_in >= 0`) is not a commit: the offsets it deletes are
    not counted here; `check_offsets_retention` decides whether Kafka's retention rules allowed it.
    """
    reset = 0
    for ev in nxt.accepted:
        if ev.expired_in >= 0:
            reset |= ev.partitions      # not a commit: `offsets-retention` judges whether it was allowed
            continue
        if ev.member < 0:
            if prev.state != EMPTY:
                return (f"standalone commit of {_fmt_parts(ev.partitions)} accepted while the group is "
                        f"{STATE_NAMES[prev.state]}")
            if ev.explicit_reset:
                reset |= ev.partitions
            continue
        if ev.generation != prev.generation:
            return (f"commit from m{ev.member} at generation {ev.generation} accepted while the group is at "
                    f"generation {prev.generation}")
        if not (prev.members >> ev.member) & 1:
            return f"commit from m{ev.member} accepted although it is not a member of generation {prev.generation}"
        mine = prev.assignment[ev.member] if prev.assignment is not None else 0
        if ev.partitions & ~mine:
            return (f"commit from m{ev.member} for {_fmt_parts(ev.partitions & ~mine)} accepted, which generation "
                    f"{prev.generation} does not assign to it")
    if nxt.offsets is prev.offsets:
        return None
    for p, (a, b) in enumerate(zip(prev.offsets, nxt.offsets)):
        if b < a and not (reset >> p) & 1:
            how = "a coordinator reload" if nxt.epoch != prev.epoch else "a step without an explicit reset"
            return f"acknowledged offset of p{p} moved back from {a} to {b} by {how}"
    return None


# --- generation monotonicity ----------------------------------------------------------------------
def check_generation_monotonicity(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """While a group stays loaded its generation only grows, by exactly one per completed join;
    the generation a member acts under never decreases; no generation number is ever delivered
    with two different assignments.

    "The generation a member acts under" is the generation of the last assignment it received
    (`ClientView.acted`): what it consumes and commits under. A JoinGroup answer alone does not
    count, since a member whose join landed in a generation that is then lost never acts under it.
    Allows: a reload (epoch change) that returns to the last *persisted* generation even though a
    later generation had completed its join in memory (that generation is lost and its number is
    reused by the next join, since nobody received an assignment under it); a member's generation
    restarting at -1 after a crash (a new process incarnation).
    Forbids: any change of generation other than +1 at a completed join (PreparingRebalance ->
    CompletingRebalance/Empty) while loaded, and a completed join that does not add exactly one; a
    reload below a generation whose assignment was already delivered; a live member's generation
    going down; one generation delivered with two different assignments.
    """
    if nxt.epoch == prev.epoch:
        completions = 0
        for a, b in _hops(prev, nxt):
            if a == PREPARING and (b == COMPLETING or b == EMPTY):
                completions += 1
        if nxt.generation != prev.generation + completions:
            if completions:
                return (f"join completed with generation {prev.generation} -> {nxt.generation} "
                        "(must grow by exactly one)")
            return (f"generation changed {prev.generation} -> {nxt.generation} without a completed join "
                    f"({' -> '.join(STATE_NAMES[x] for x in _path(prev, nxt))})")
    else:
        top = max((g for g, _ in prev.delivered), default=-1)
        if nxt.generation < top:
            return (f"reload brought the group back to generation {nxt.generation} although generation {top}'s "
                    "assignment was already delivered")
    if nxt.clients is not prev.clients:
        for slot, (a, b) in enumerate(zip(prev.clients, nxt.clients)):
            if a.alive and b.alive and a.acted >= 0 and b.acted < a.acted:
                return f"m{slot} went from acting under generation {a.acted} back to {b.acted}"
    if nxt.delivered is prev.delivered or nxt.delivered == prev.delivered:
        return None
    by_gen = {}
    for g, asg in nxt.delivered:
        old = by_gen.setdefault(g, asg)
        if old != asg:
            return f"generation {g} delivered with two different assignments: {_fmt_asg(old)} and {_fmt_asg(asg)}"
    return None


def _fmt_asg(asg) -> str:
    return "[" + " ".join(f"m{i}:{_fmt_parts(p)}" for i, p in enumerate(asg)) + "]"


# --- valid group state transitions ----------------------------------------------------------------
def check_valid_transition(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """Only the transitions of coordinator.md §1.1 occur while the group stays loaded.

    A step may pass through several states (`GroupView.passed`: e.g. the last member leaving a
    Stable group goes Stable -> PreparingRebalance -> Empty inside one request); every hop counts.
    Allows: staying in the same state; the table's transitions; after a reload (epoch change) the
    group reappears as Stable (members persisted) or Empty.
    Forbids: e.g. Stable -> Empty, CompletingRebalance -> Empty, Empty -> CompletingRebalance, or a
    reload into a rebalancing state.
    """
    if nxt.epoch != prev.epoch:
        if nxt.state not in LOADED_STATES:
            return f"group reloaded into {STATE_NAMES[nxt.state]} (only Empty or Stable)"
        return None
    for a, b in _hops(prev, nxt):
        if a != b and a not in VALID_PREVIOUS[b]:
            return f"illegal transition {STATE_NAMES[a]} -> {STATE_NAMES[b]}"
    return None


# --- leader in members ----------------------------------------------------------------------------
def check_leader_in_members(v: GroupView) -> Optional[str]:
    """The leader is a member of the group, and a group with members has a leader.

    Allows: no leader in a group without members.
    Forbids: a leader id that is not (any more) a member; members without a leader.
    """
    if v.leader >= 0 and not (v.members >> v.leader) & 1:
        return f"leader m{v.leader} is not a member (members {_fmt_members(v.members)})"
    if v.leader < 0 and v.members and v.state != DEAD:
        return f"group with members {_fmt_members(v.members)} has no leader"
    return None


def _fmt_members(mask: int) -> str:
    return "{" + ",".join(f"m{i}" for i in _bits(mask)) + "}"


# --- offset retention (coordinator.md §7.5, §10.8) ------------------------------------------------
def check_offsets_retention(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """Offsets of a Stable consumer group's subscribed topics and of any rebalancing group are never
    expired: an acknowledged commit is lost only by a user's reset or as Kafka's retention allows.

    The partitions of a view are those of the topics the group's members subscribe to, so the only
    state in which retention may delete them is Empty (a simple group, which never has members, is
    Empty too). Offsets of topics nobody subscribes to are outside every view.
    Allows: the expiry task deleting offsets of an Empty group (after the group became Empty and the
    retention passed: the view carries no clock, so the retention time itself is not checked here).
    Forbids: an expiry event (`CommitEvent.expired_in`) in PreparingRebalance or CompletingRebalance
    (any rebalancing group: its subscriptions are not known yet, KAFKA-13636) or in Stable (the
    partitions of subscribed topics).
    """
    for ev in nxt.accepted:
        if ev.expired_in < 0 or ev.expired_in in (EMPTY, DEAD):
            continue
        return (f"offsets of {_fmt_parts(ev.partitions)} expired while the group was "
                f"{STATE_NAMES[ev.expired_in]} (only an Empty group's offsets may expire)")
    return None


# --- handover without duplicates (coordinator.md §12.18) ------------------------------------------
def check_handover_committed(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """A partition handed over after an acknowledged commit is committed at least up to what its
    previous owner consumed: the next owner does not consume those records again.

    A handover (`GroupView.handovers`) is a revocation (onPartitionsRevoked, not lost) that follows
    the acknowledgement of the commit the member sent to hand those partitions over (EAGER
    auto-commit's commit in onJoinPrepare, or a commitSync in the revocation callback).
    Allows: duplicates after a failure (partitions lost, a commit that failed or timed out: no
    handover then); a committed offset beyond the consumed position.
    Forbids: a handover after which the group's committed offset of a revoked partition is below the
    position the member had consumed when it revoked it (records consumed between the commit and
    the revocation, KAFKA-14196: consumed again by the next owner).
    """
    for h in nxt.handovers:
        for p in _bits(h.partitions):
            consumed = h.consumed[p] if p < len(h.consumed) else -1
            committed = nxt.offsets[p] if p < len(nxt.offsets) else 0
            if consumed >= 0 and committed < consumed:
                return (f"m{h.member} handed p{p} over after its commit was acknowledged, having consumed up to "
                        f"{consumed}, but the committed offset is {committed}: records {committed}..{consumed - 1} "
                        "will be consumed again")
    return None


# --- the objects engines evaluate -----------------------------------------------------------------
STATEMENTS = {
    "exclusive-ownership": "no partition has two owners in a stored assignment, and no two live members that can commit a partition consume it at once",
    "committed-offset-safety": "every accepted commit comes from the partition's owner in the current generation (or a standalone consumer on an Empty group), and acknowledged offsets never go back without an explicit reset",
    "generation-monotonicity": "while loaded the generation grows by exactly one per completed join; member generations never decrease; no generation is delivered with two assignments; reloads never lose a delivered generation",
    "valid-state-transition": "the group only takes the state transitions of Kafka's table (reloads land in Empty or Stable)",
    "leader-in-members": "the leader is a member, and a group with members has a leader",
}
# behaviours shown to break each invariant: by the explorer on the abstract group model, or (behaviours the
# model does not implement) on the world that does (tests/test_invariants_group.py WORLD_BREAKS)
BROKEN_BY = {
    "exclusive-ownership": ("kafka-12984-double-claim",),
    "committed-offset-safety": ("stale-generation-commit", "unclean-election", "no-generation-bump"),
    "generation-monotonicity": ("no-generation-bump", "unclean-election"),
    "valid-state-transition": (),
    "leader-in-members": ("leader-not-reelected",),
}
# the invariants of `consumer_invariants` (worlds with real consumers and retention; not the abstract model's set)
CONSUMER_STATEMENTS = {
    "offsets-retention": "offsets of a Stable consumer group's subscribed topics and of any rebalancing group are never expired (only an Empty group's)",
    "handover-committed": "a partition revoked after an acknowledged hand-over commit is committed up to what its previous owner consumed",
    "lost-only-when-fenced": "a member owning partitions abandons its generation (declaring them lost) only when fenced by the coordinator or leaving",
    "fenced-gives-up-generation": "a member answered that it is fenced out of the generation it still holds gives it up at once (reset and rejoin, or stop on FENCED_INSTANCE_ID)",
}
CONSUMER_BROKEN_BY = {
    "offsets-retention": ("kafka-13636-expire-while-rebalancing",),
    "handover-committed": ("kafka-14196-no-pending-revocation",),
    "lost-only-when-fenced": ("kafka-13891-sync-rebalance-reset-generation",),
    "fenced-gives-up-generation": (),
}


def group_invariants(view_of: Callable, step_view_of: Callable) -> tuple:
    """The group invariants for a protocol: `view_of(state) -> GroupView` and
    `step_view_of(prev, action, nxt) -> (GroupView, GroupView)` (the second with `accepted` set)."""

    def state_inv(name, fn):
        return Invariant(name, STATEMENTS[name], lambda s: fn(view_of(s)), "state", BROKEN_BY[name])

    def step_inv(name, fn):
        return Invariant(name, STATEMENTS[name], lambda a, act, b: fn(*step_view_of(a, act, b)), "step", BROKEN_BY[name])

    return (
        state_inv("exclusive-ownership", check_exclusive_ownership),
        state_inv("leader-in-members", check_leader_in_members),
        step_inv("committed-offset-safety", check_committed_offset_safety),
        step_inv("generation-monotonicity", check_generation_monotonicity),
        step_inv("valid-state-transition", check_valid_transition),
    )


# --- partitions lost only when fenced (coordinator.md §9.5, §12.15) -------------------------------
def check_lost_only_when_fenced(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """A member that owns partitions abandons its generation (and so declares them lost) only when
    the coordinator fenced it out of that generation or it left the group itself.

    Losing partitions skips onPartitionsRevoked and its commit: what the member consumed since its
    last commit is consumed again by the next owner, and in COOPERATIVE mode its rejoin claims
    nothing, so every partition it had moves (KAFKA-14016). That is only justified when the
    member really is out of its generation.
    Allows: a reset on UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID (from JoinGroup,
    SyncGroup, Heartbeat or OffsetCommit), a member leaving (close, poll timeout), a reset of a
    member that owns nothing (EAGER members have revoked everything before they join).
    Forbids: a member owning partitions resetting its generation on any other answer, e.g. SyncGroup
    REBALANCE_IN_PROGRESS (KAFKA-13891: the group is only rebalancing, the member is still in it).
    """
    for ab in nxt.abandoned:
        if ab.partitions and ab.cause not in FENCING_CAUSES:
            return (f"m{ab.member} abandoned generation {ab.generation} on {ab.cause} while owning "
                    f"{_fmt_parts(ab.partitions)}: they are lost (no revocation, no commit) although it was not fenced")
    return None


# --- fenced out of a generation: given up at once (AbstractCoordinator.resetGenerationOnResponseError) ------
def check_fenced_gives_up_generation(prev: GroupView, nxt: GroupView) -> Optional[str]:
    """A member told that the coordinator fenced it out of the generation it still holds (ILLEGAL_GENERATION,
    UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID, answering a Heartbeat, JoinGroup, SyncGroup or OffsetCommit it sent
    under that generation) gives the generation up in the same step: it resets it and rejoins, or, on
    FENCED_INSTANCE_ID (another process took its group.instance.id), stops with a fatal error.

    Kafka's response handlers do this whenever the generation is unchanged since the request was sent (the
    answer is not stale). A member that keeps the generation acts under one the coordinator refused: it keeps
    consuming partitions the group may have given to another member, commits and rejoins claiming them with
    that generation, and a fenced static member keeps running beside the process that replaced it."""
    for f in nxt.fenced:
        if f.kept:
            return (f"m{f.member} was answered {f.error} to its {f.request} of generation {f.generation} "
                    f"and still acts under generation {f.generation}")
    return None


def consumer_invariants(step_view_of: Callable) -> tuple:
    """Invariants over facts only a world with real consumers and offset retention produces
    (`CommitEvent.expired_in`, `GroupView.handovers`); a model without them satisfies them vacuously.
    Kept apart from `group_invariants` so that the abstract model and its TLA+ spec keep their set."""

    def step_inv(name, fn):
        return Invariant(name, CONSUMER_STATEMENTS[name], lambda a, act, b: fn(*step_view_of(a, act, b)), "step",
                         CONSUMER_BROKEN_BY[name])

    return (
        step_inv("offsets-retention", check_offsets_retention),
        step_inv("handover-committed", check_handover_committed),
        step_inv("lost-only-when-fenced", check_lost_only_when_fenced),
        step_inv("fenced-gives-up-generation", check_fenced_gives_up_generation),
    )


# --- sometimes: proofs that a run was not vacuous -------------------------------------------------
def stable_with_all(n: int):
    def pred(v: GroupView) -> bool:
        full = (1 << n) - 1
        return (v.state == STABLE and v.members == full and all(
            c.alive and c.generation == v.generation and v.assignment is not None
            and c.owned == v.assignment[i] for i, c in enumerate(v.clients)))
    return pred


def rebalanced_after_stable(v: GroupView) -> bool:
    """Stable again after a rebalance: generation 2 or later, every live member acting under it."""
    live = [c for c in v.clients if c.alive]
    return (v.state == STABLE and v.generation >= 2 and v.assignment is not None and bool(live)
            and all(c.acted == v.generation for c in live))


def zombie_fenced(v: GroupView) -> bool:
    """A live process still believes it owns partitions but the coordinator would refuse its commits."""
    return any(c.alive and c.owned and not c.can_commit for c in v.clients)


def lost_generation_reused(v: GroupView) -> bool:
    """After a reload, some member holds a generation the coordinator no longer has (lost, to be reused)."""
    return v.epoch > 0 and any(c.alive and c.generation > v.generation for c in v.clients)


def group_sometimes(view_of: Callable, n_members: int, *, failover: bool) -> tuple:
    out = [
        Sometimes("stable-with-all-members", "the group reaches Stable with every member holding its assignment",
                  lambda s: stable_with_all(n_members)(view_of(s))),
        Sometimes("rebalanced-stable", "the group is Stable again at generation 2 or later, every live member acting under it",
                  lambda s: rebalanced_after_stable(view_of(s))),
        Sometimes("commit-accepted", "some offset commit is acknowledged",
                  lambda s: any(o > 0 for o in view_of(s).offsets)),
        Sometimes("zombie-fenced", "a process that still believes it owns partitions is fenced",
                  lambda s: zombie_fenced(view_of(s))),
    ]
    if failover:
        out.append(Sometimes("lost-generation-reused", "a reload loses an unpersisted generation that a member had joined",
                             lambda s: lost_generation_reused(view_of(s))))
    return tuple(out)
