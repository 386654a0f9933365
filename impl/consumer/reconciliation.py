"""The reconciliation engine: one member's current assignment moved toward its target.

Why it exists: this is the heart of KIP-848's safety (a partition reaches a new owner only after
the previous owner revoked it). It follows CurrentAssignmentBuilder.build / computeNextAssignment /
updateCurrentAssignment / ownsRevokedPartitions of
group-coordinator/.../modern/consumer/CurrentAssignmentBuilder.java as of Kafka 4.2 (KAFKA-19431:
unsubscribed topics are stripped from the current assignment; KAFKA-19449: the member's own
pending revocations are not "unreleased"; KAFKA-19974: no epoch bump when leaving
UNREVOKED_PARTITIONS). The per-partition assignment epochs added to trunk in 2026 are not
modelled. Pure: a member value in, a member value out (or FencedMemberEpoch raised).

`partition_epoch(tp)` is the group's current partition epoch (-1 = free), as
ConsumerGroup.currentPartitionEpoch; `owned` is the member's reported owned partitions (None = the
field was not sent); `subscribed` the topic ids the member subscribes to that exist.
"""
from __future__ import annotations

from typing import Callable, Optional

from kverify.impl.consumer.group_member import ConsumerGroupMember, MemberState

S = MemberState


class FencedMemberEpoch(Exception):
    """FencedMemberEpochException: the member must abandon its partitions and rejoin."""


def owns_revoked(owned: Optional[frozenset], pending: frozenset) -> bool:
    """ownsRevokedPartitions: an absent owned list counts as still owning everything."""
    if owned is None:
        return True
    return not owned.isdisjoint(pending)


def reconcile(member: ConsumerGroupMember, target_epoch: int, target: frozenset,
              partition_epoch: Callable[[tuple], int], owned: Optional[frozenset],
              subscribed: frozenset, enforce_consistency: bool = False,
              bump_on_unrevoked_exit: bool = False,
              own_revocation_unreleased: bool = False) -> ConsumerGroupMember:
    """CurrentAssignmentBuilder.build. The two flags re-create KAFKA-19974 and KAFKA-19449."""
    st = member.state
    if st == S.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned,
                         subscribed, own_revocation_unreleased)
        if enforce_consistency:
            return _strip_unsubscribed(member, member.member_epoch, owned, subscribed)
        return member
    if st == S.UNREVOKED_PARTITIONS:
        if owns_revoked(owned, member.pending_revocation):
            if enforce_consistency:
                return _strip_unsubscribed(member, member.member_epoch, owned, subscribed)
            return member
        epoch = member.member_epoch + 1 if bump_on_unrevoked_exit else member.member_epoch
        return _next(member, epoch, target_epoch, target, partition_epoch, owned, subscribed,
                     own_revocation_unreleased)
    if st == S.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned,
                     subscribed, own_revocation_unreleased)
    # UNKNOWN: only a downgraded coordinator sees it; fence unless the member owns nothing.
    if owned is None or owned:
        raise FencedMemberEpoch("The consumer group member is in a unknown state. "
                                "The member must abandon all its partitions and rejoin.")
    return _next(member, target_epoch, target_epoch, target, partition_epoch, owned, subscribed,
                 own_revocation_unreleased)


def _strip_unsubscribed(member, epoch, owned, subscribed):
    """updateCurrentAssignment: move partitions of unsubscribed topics to pending revocation."""
    if not subscribed and not member.pending_revocation:
        new_assigned = frozenset()
        new_pending = member.assigned
    else:
        drop = frozenset(tp for tp in member.assigned if tp[0] not in subscribed)
        new_assigned = member.assigned - drop
        new_pending = member.pending_revocation | drop
    if new_assigned == member.assigned:
        return member
    if new_pending and owns_revoked(owned, new_pending):
        return member.update_member_epoch(epoch)._replace(
            state=S.UNREVOKED_PARTITIONS, assigned=new_assigned, pending_revocation=new_pending)
    return member.update_member_epoch(epoch)._replace(assigned=new_assigned)


def _next(member, epoch, target_epoch, target, partition_epoch, owned, subscribed,
          own_revocation_unreleased):
    """computeNextAssignment."""
    effective_target = frozenset(tp for tp in target if tp[0] in subscribed)
    current = member.assigned
    kept = current & effective_target
    to_revoke = current - kept
    candidates = effective_target - kept
    own_pending = member.pending_revocation
    unreleased = frozenset(
        tp for tp in candidates
        if partition_epoch(tp) != -1 and (own_revocation_unreleased or tp not in own_pending))
    to_assign = candidates - unreleased
    if to_revoke and owns_revoked(owned, to_revoke):
        return member.update_member_epoch(epoch)._replace(
            state=S.UNREVOKED_PARTITIONS, assigned=kept, pending_revocation=to_revoke)
    if to_assign:
        state = S.UNRELEASED_PARTITIONS if unreleased else S.STABLE
        return member.update_member_epoch(target_epoch)._replace(
            state=state, assigned=kept | to_assign, pending_revocation=frozenset())
    state = S.UNRELEASED_PARTITIONS if unreleased else S.STABLE
    return member.update_member_epoch(target_epoch)._replace(
        state=state, assigned=kept, pending_revocation=frozenset())
