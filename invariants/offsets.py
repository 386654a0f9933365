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
  `OffsetsView`, a view that an impl world (coordinator + impl/replication cluster) can map onto too.
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


def bind(view):
    """`acked-commit-durable` over an engine's own states: `view(state) -> OffsetsView`."""
    inv = ACKED_COMMIT_DURABLE
    return Invariant(inv.name, inv.statement, lambda s: inv.check(view(s)), inv.kind, inv.broken_by)
