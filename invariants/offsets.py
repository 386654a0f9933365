"""Offsets invariants: the group coordinator's state on the replicated __consumer_offsets partition.

Why it exists: an offset commit is acknowledged once the offsets partition's HW passes it
(acks=all, coordinator.md §8, replication.md facts 64-67); a coordinator failover (clean or unclean
election of that partition) reloads the group and its offsets from the new leader's log. What must
survive is what was *acknowledged* (commits) or *delivered* (assignments).

What lives where (no duplicates):
- generation rules across a reload (a reload never returns below a generation whose assignment was
  delivered; no generation number delivered with two assignments; +1 per completed join while
  loaded) are `generation-monotonicity` of `invariants/group.py`; the offsets model maps its state
  onto `GroupView` (with `group_view`) and reuses that invariant as is;
- what `GroupView` cannot say is the relation between what the coordinator *serves* and what was
  *acknowledged* (GroupView has one offsets field): that is `acked-commit-durable` below, over
  `OffsetsView`, a view that an impl world (coordinator + impl/replication cluster) can map onto too;
- that a coordinator taking a group over does not hand out a member id already handed out (its
  predecessor's) is `member-id-never-reused` below, over the member ids handed out, in order.
"""
from __future__ import annotations

from typing import NamedTuple

from kverify.invariants.core import Invariant


class OffsetsView(NamedTuple):
    coordinator: int      # replica (broker index) whose loaded coordinator serves the group, -1 none
    current: bool         # that replica leads the offsets partition in the controller's current epoch
    served: tuple         # per data partition: the offset the coordinator would return (0: none)
    acked: tuple          # per data partition: the highest offset ever acknowledged to a committer (0: none)


def check_acked_commit_durable(v: OffsetsView):
    """An acknowledged commit is never lost or moved backwards by a failover.

    Allows: no coordinator (offline offsets partition or load in progress); a zombie coordinator
    (deposed, not yet told) serving older data for a while; the coordinator serving an offset
    *higher* than any acknowledged one (an appended commit whose ack failed survives a clean
    election, replication.md fact 66); an unacknowledged commit lost by a failover.
    Forbids: the current coordinator serving, for some partition, an offset lower than one that was
    acknowledged (the acked commit record is missing from the new leader's log, e.g. after an
    unclean election of the offsets partition).
    """
    if v.coordinator < 0 or not v.current:
        return None
    for p, (have, acked) in enumerate(zip(v.served, v.acked)):
        if have < acked:
            return (f"coordinator on broker {v.coordinator} serves offset {have} for p{p} but {acked} "
                    "was acknowledged")
    return None


ACKED_COMMIT_DURABLE = Invariant(
    "acked-commit-durable",
    "the current coordinator never serves an offset below one acknowledged to a committer",
    check_acked_commit_durable,
    broken_by=("unclean-election", "isr-shrinks-to-leader-min-isr-1", "truncate-to-hw"))


def check_member_id_never_reused(handed_out: tuple):
    """A member id a group coordinator hands out is never handed out again, by it or by any other.

    Reads: the member ids that coordinators handed out to new members of one group, in order (in
    offsets-world, the member id of each MEMBER_ID_REQUIRED answer to a JoinGroup without member id,
    whichever broker led the offsets partition then). Kafka's fact: a new member's id is
    `clientId + "-" + UUID.randomUUID()` (GroupMetadata.generateMemberId, ConsumerGroupMember ids
    likewise), so ids never repeat, not across coordinator moves either. A repeated id gives two
    clients one member id: a new client takes over the entry of a member that the loaded group (or
    another broker's pending set) still holds, and a stale client's requests act for the new member.
    Allows anything else (ids of one client id share their prefix).
    """
    seen = set()
    for i, m in enumerate(handed_out):
        if m in seen:
            return f"member id {m} handed out again (hand-out #{i + 1}, first at #{handed_out.index(m) + 1})"
        seen.add(m)
    return None


MEMBER_ID_NEVER_REUSED = Invariant(
    "member-id-never-reused",
    "a member id handed out to a new member of a group is never handed out again, even by another coordinator",
    check_member_id_never_reused)


def check_coordinator_follows_leadership(owners: tuple):
    """A broker's group coordinator owns (or is loading) an __consumer_offsets partition only while that
    broker's own replica of it is the leader.

    Reads: per live broker, (broker, its coordinator owns or loads the partition, its replica leads it).
    Kafka's fact: ReplicaManager.becomeLeaderOrFollower hands every offsets partition that became a follower
    to GroupCoordinator.onResignation (GroupMetadataManager.removeGroupsForPartition), which drops it from
    the owned partitions and unloads its groups, so the former leader answers NOT_COORDINATOR; a resignation
    is ignored only when its coordinator epoch is *older* than the last one the broker saw for the partition.
    A coordinator that keeps owning a partition it follows serves the group from a stale copy (offsets,
    members) beside the new leader's coordinator. Allows a deposed leader not yet told (its replica still
    leads in its old epoch).
    """
    for b, owns, leads in owners:
        if owns and not leads:
            return f"broker {b}'s coordinator still owns the offsets partition its replica no longer leads"
    return None


COORDINATOR_FOLLOWS_LEADERSHIP = Invariant(
    "coordinator-follows-leadership",
    "a broker's group coordinator owns or loads an offsets partition only while its own replica leads it",
    check_coordinator_follows_leadership)


def bind_ownership(owners):
    """`coordinator-follows-leadership` over an engine's own states: `owners(state) -> ((broker, owns, leads), ...)`."""
    inv = COORDINATOR_FOLLOWS_LEADERSHIP
    return Invariant(inv.name, inv.statement, lambda s: inv.check(owners(s)), inv.kind, inv.broken_by)


def bind_member_ids(handed_out):
    """`member-id-never-reused` over an engine's own states: `handed_out(state) -> (member id, ...)` in order."""
    inv = MEMBER_ID_NEVER_REUSED
    return Invariant(inv.name, inv.statement, lambda s: inv.check(handed_out(s)), inv.kind, inv.broken_by)


def bind(view):
    """`acked-commit-durable` over an engine's own states: `view(state) -> OffsetsView`."""
    inv = ACKED_COMMIT_DURABLE
    return Invariant(inv.name, inv.statement, lambda s: inv.check(view(s)), inv.kind, inv.broken_by)
