"""Safety predicates over a consumer group's coordinator view and its clients.

Why it exists: tests, the fuzz driver in tests/test_consumer_member_integration.py and the world
model (K3) need the same one-line verdicts; each function returns None when the property holds,
else a message naming the values that break it (the convention of invariants/core.py). They read
only `ConsumerGroupView` values and client attributes (`alive`, `member_id`, `owned`), so they
apply to any state an engine reaches.
"""
from __future__ import annotations

from typing import Iterable, Optional


def coordinator_single_owner(view) -> Optional[str]:
    """No partition is in two members' assigned/pending-revocation sets (ConsumerGroup's partition
    epochs guarantee it: a partition goes to a new owner only once released)."""
    seen: dict = {}
    for m in view.members:
        for tp in m.assigned | m.pending_revocation:
            if tp in seen:
                return f"partition {tp[0]}-{tp[1]} held by {seen[tp]} and {m.member_id}"
            seen[tp] = m.member_id
    return None


def partition_epochs_name_owners(view) -> Optional[str]:
    """Every held partition has its owner's member epoch as partition epoch, and only held ones have one."""
    epochs = dict(view.partition_epochs)
    held = {}
    for m in view.members:
        for tp in m.assigned | m.pending_revocation:
            held[tp] = m
            if epochs.get(tp) != m.member_epoch:
                return (f"partition {tp[0]}-{tp[1]} owned by {m.member_id} at epoch {m.member_epoch} "
                        f"has partition epoch {epochs.get(tp)}")
    stray = sorted(set(epochs) - set(held))
    if stray:
        return f"partition epochs without an owner: {stray}"
    return None


def target_is_legal(view, topics) -> Optional[str]:
    """The target assignment gives each partition to at most one member and only partitions that
    exist (`topics`: a TopicsImage). Kafka recomputes the target at the group's next heartbeat after
    a metadata change, so right after a topic is deleted or shrunk (`set_topics`) the old target may
    still name it until then: check at heartbeat boundaries."""
    seen: dict = {}
    for mid, assignment in view.target:
        for tid, p in assignment:
            if (owner := seen.get((tid, p))) is not None:
                return f"target gives {tid}-{p} to {owner} and {mid}"
            seen[(tid, p)] = mid
            t = topics.by_id(tid)
            if t is None or p >= t.partitions:
                return f"target gives {mid} the missing partition {tid}-{p}"
    return None


def target_within_subscriptions(view, topics) -> Optional[str]:
    """Each member's target only holds topics it subscribes to (names plus resolved regex). True when
    a target is computed; afterwards a subscription may change without a new target (a regex not yet
    resolved, KAFKA-19431), so evaluate it on the steps that computed a target (assignment epoch moved)."""
    resolved = dict(view.resolved_regexes)
    for mid, assignment in view.target:
        m = view.member(mid)
        if m is None:
            continue
        names = set(m.subscribed_topic_names) | set(resolved.get(m.subscribed_topic_regex, ()))
        subscribed = topics.ids_of(names)
        for tid, p in assignment:
            if tid not in subscribed:
                return f"target gives {mid} {tid}-{p} of a topic it does not subscribe to"
    return None


def epochs_bounded(view) -> Optional[str]:
    """Member epochs never exceed the group epoch; the assignment epoch never exceeds it either."""
    if view.assignment_epoch > view.group_epoch:
        return f"assignment epoch {view.assignment_epoch} > group epoch {view.group_epoch}"
    for m in view.members:
        if m.member_epoch > view.group_epoch:
            return f"member {m.member_id} epoch {m.member_epoch} > group epoch {view.group_epoch}"
    return None


def stable_members_hold_target(view) -> Optional[str]:
    """In a Stable group every member holds exactly its target at the assignment epoch -- except
    while some member's regex awaits its asynchronous resolution: Kafka then leaves the target as it
    was (no epoch bump, REGEX_UPDATED) and the member, subscribed to nothing new, holds less than its
    target until the resolution bumps the epoch (a Kafka fact, found by the seeded walk)."""
    if view.state != "Stable":
        return None
    resolved = dict(view.resolved_regexes)
    if any(m.subscribed_topic_regex and m.subscribed_topic_regex not in resolved for m in view.members):
        return None
    for m in view.members:
        if m.assigned != view.target_of(m.member_id) or m.pending_revocation or m.member_epoch != view.assignment_epoch:
            return f"Stable group but {m.member_id} holds {sorted(m.assigned)} at {m.member_epoch}"
    return None


def clients_own_only_what_they_hold(view, clients: Iterable) -> Optional[str]:
    """A live client whose member the coordinator still knows owns only partitions the coordinator
    has it holding (assigned or pending revocation). With coordinator_single_owner this gives: no
    two such clients own a partition at once. (A client the coordinator fenced by a timeout may
    still think it owns partitions: commits fence it, see STALE_MEMBER_EPOCH / UNKNOWN_MEMBER_ID.)"""
    if view is None:
        return None
    for c in clients:
        if not c.alive or not c.owned:
            continue
        m = view.member(c.member_id)
        if m is None:
            continue
        extra = c.owned - m.assigned - m.pending_revocation
        if extra:
            return f"client {c.member_id} owns {sorted(extra)} that its member does not hold"
    return None


ALL = (coordinator_single_owner, partition_epochs_name_owners, epochs_bounded, stable_members_hold_target)
