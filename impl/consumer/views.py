"""Read-only, hashable views of a consumer group, for invariants, worlds and refinement.

Why it exists: K3's model and the invariants must read the coordinator without reaching into
its mutable objects; a view is a NamedTuple of plain values, equal views <=> equal groups.
"""
from __future__ import annotations

from typing import NamedTuple


class ConsumerGroupView(NamedTuple):
    group_id: str
    state: str                      # Empty | Assigning | Reconciling | Stable
    group_epoch: int
    assignment_epoch: int
    members: tuple                  # (ConsumerGroupMember, ...) in the group's insertion order
    target: tuple                   # ((member_id, frozenset((topic_id, p))), ...) sorted by member id
    partition_epochs: tuple         # (((topic_id, p), epoch), ...) sorted
    static_members: tuple           # ((instance_id, member_id), ...) sorted
    subscription_metadata: tuple    # ((name, topic_id, partitions), ...) sorted
    resolved_regexes: tuple = ()    # ((regex, frozenset(topic names)), ...) sorted

    def member(self, member_id):
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None

    def target_of(self, member_id) -> frozenset:
        return dict(self.target).get(member_id, frozenset())


def view_of(group) -> ConsumerGroupView:
    return ConsumerGroupView(
        group.group_id, group.state, group.group_epoch, group.assignment_epoch,
        tuple(group.members.values()),
        tuple(sorted(group.target.items())),
        tuple(sorted(group.partition_epochs.items())),
        tuple(sorted(group.static_members.items())),
        group.subscription_metadata,
        tuple(sorted(group.resolved_regexes.items())))
