"""One KIP-848 consumer group's state (Kafka's ConsumerGroup / ModernGroup).

Why it exists: the coordinator's handlers read a group's epochs, members, target assignment and
partition epochs, and change them only through `update_member`, `remove_member`,
`set_target`, `set_group_epoch`, `set_assignment_epoch` (the effects of Kafka's record replay).
Follows group-coordinator/.../modern/consumer/ConsumerGroup.java: partition epochs
(addPartitionEpochs / removePartitionEpochs with the strict checks of the KAFKA-16147 fix, or the
buggy per-set bookkeeping when that behaviour is on), the group state (Empty, Assigning,
Reconciling, Stable: maybeUpdateGroupState), static members, and validateOffsetCommit /
validateOffsetFetch (validateMemberEpoch: STALE_MEMBER_EPOCH).
"""
from __future__ import annotations

from typing import Optional

from kverify.impl.consumer.group_member import ConsumerGroupMember
from kverify.impl.consumer.messages import Errors as E

EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = "Empty", "Assigning", "Reconciling", "Stable", "Dead"


class IllegalStateError(RuntimeError):
    """Kafka's IllegalStateException: an internal invariant broke (never expected)."""


class ConsumerGroup:
    __slots__ = ("group_id", "group_epoch", "assignment_epoch", "members", "static_members",
                 "target", "partition_epochs", "subscription_metadata", "lost_epoch_bug",
                 "resolved_regexes", "last_regex_refresh_ms", "regex_topics_version", "metadata_deadline")

    def __init__(self, group_id: str, lost_epoch_bug: bool = False):
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict = {}            # member_id -> ConsumerGroupMember (insertion order)
        self.static_members: dict = {}     # instance_id -> member_id
        self.target: dict = {}             # member_id -> frozenset((topic_id, partition))
        self.partition_epochs: dict = {}   # (topic_id, partition) -> epoch of its current owner
        self.subscription_metadata: tuple = ()
        self.lost_epoch_bug = lost_epoch_bug
        self.resolved_regexes: dict = {}   # regex -> frozenset(topic names) (ConsumerGroupRegularExpression records)
        self.last_regex_refresh_ms = -1    # lastResolvedRegularExpressionRefreshTimeMs
        self.regex_topics_version = -1     # lastResolvedRegularExpressionVersion (the topics image it saw)
        self.metadata_deadline = (0, 0)    # ModernGroup.metadataRefreshDeadline (ms, epoch); (0, 0) = EMPTY

    # ---- reads -------------------------------------------------------------------------------
    @property
    def state(self) -> str:
        """ConsumerGroup.maybeUpdateGroupState (computed, never stored)."""
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        for m in self.members.values():
            if not m.is_reconciled_to(self.assignment_epoch):
                return RECONCILING
        return STABLE

    def current_partition_epoch(self, tp) -> int:
        return self.partition_epochs.get(tp, -1)

    def static_member(self, instance_id) -> Optional[ConsumerGroupMember]:
        mid = self.static_members.get(instance_id)
        return None if mid is None else self.members.get(mid)

    def target_of(self, member_id: str, instance_id: Optional[str] = None) -> frozenset:
        """ConsumerGroup.targetAssignment(memberId, instanceId)."""
        if instance_id is None:
            return self.target.get(member_id, frozenset())
        prev = self.static_members.get(instance_id)
        if prev is not None:
            return self.target.get(prev, frozenset())
        return frozenset()

    def has_metadata_expired(self, now: int) -> bool:
        """ModernGroup.hasMetadataExpired."""
        deadline, epoch = self.metadata_deadline
        return now >= deadline or self.group_epoch < epoch

    def num_subscribed_members(self, regex: str) -> int:
        """ConsumerGroup.numSubscribedMembers(regex)."""
        return sum(1 for m in self.members.values() if m.subscribed_topic_regex == regex)

    def subscribed_regexes(self) -> frozenset:
        return frozenset(m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex)

    def subscribed_names_of(self, member) -> frozenset:
        """The names a member subscribes to: its names plus its regex's resolution (an unresolved regex
        matches nothing, as CurrentAssignmentBuilder.subscribedTopicIds)."""
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            names |= self.resolved_regexes.get(member.subscribed_topic_regex, frozenset())
        return frozenset(names)

    def preferred_server_assignor(self, replacing=None, replacement=None) -> Optional[str]:
        """ModernGroup.computePreferredServerAssignor: the most used name (ties: smallest name)."""
        counts: dict = {}
        for mid, m in self.members.items():
            if replacing is not None and mid == replacing.member_id:
                continue
            if m.server_assignor_name is not None:
                counts[m.server_assignor_name] = counts.get(m.server_assignor_name, 0) + 1
        if replacement is not None and replacement.server_assignor_name is not None:
            n = replacement.server_assignor_name
            counts[n] = counts.get(n, 0) + 1
        if not counts:
            return None
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]

    # ---- writes (record replay) --------------------------------------------------------------
    def update_member(self, new: ConsumerGroupMember) -> None:
        old = self.members.get(new.member_id)
        self.members[new.member_id] = new
        self._update_partition_epochs(old, new)
        if new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id

    def remove_member(self, member_id: str) -> None:
        old = self.members.pop(member_id, None)
        self.target.pop(member_id, None)
        if old is None:
            return
        self._remove_epochs(old.assigned, old.member_epoch)
        self._remove_epochs(old.pending_revocation, old.member_epoch)
        if old.instance_id is not None and self.static_members.get(old.instance_id) == member_id:
            del self.static_members[old.instance_id]

    def set_target(self, member_id: str, assignment: frozenset) -> None:
        self.target[member_id] = assignment

    # ---- partition epochs --------------------------------------------------------------------
    def _update_partition_epochs(self, old, new) -> None:
        if not self.lost_epoch_bug:
            # KAFKA-16147 fix: remove everything at the old epoch, then add everything at the new.
            if old is not None:
                self._remove_epochs(old.assigned, old.member_epoch)
                self._remove_epochs(old.pending_revocation, old.member_epoch)
            self._add_epochs(new.assigned, new.member_epoch)
            self._add_epochs(new.pending_revocation, new.member_epoch)
            return
        # Before the fix: each set is updated only if it changed, unchecked; a partition moving from
        # pending revocation back to assigned is added, then removed again.
        pe = self.partition_epochs
        if old is None:
            for tp in new.assigned | new.pending_revocation:
                pe[tp] = new.member_epoch
            return
        if old.assigned != new.assigned:
            for tp in old.assigned:
                pe.pop(tp, None)
            for tp in new.assigned:
                pe[tp] = new.member_epoch
        if old.pending_revocation != new.pending_revocation:
            for tp in old.pending_revocation:
                pe.pop(tp, None)
            for tp in new.pending_revocation:
                pe[tp] = new.member_epoch

    def _remove_epochs(self, assignment, expected_epoch) -> None:
        pe = self.partition_epochs
        for tp in assignment:
            prev = pe.pop(tp, None)
            if self.lost_epoch_bug:
                continue
            if prev != expected_epoch:
                raise IllegalStateError(
                    f"Cannot remove the epoch {expected_epoch} from {tp[0]}-{tp[1]} because the "
                    f"partition is still owned at a different epoch {prev}")

    def _add_epochs(self, assignment, epoch) -> None:
        pe = self.partition_epochs
        for tp in assignment:
            prev = pe.get(tp)
            if prev is not None and not self.lost_epoch_bug:
                raise IllegalStateError(
                    f"Cannot set the epoch of {tp[0]}-{tp[1]} to {epoch} because the partition is "
                    f"still owned at epoch {prev}")
            pe[tp] = epoch

    # ---- offsets validation ------------------------------------------------------------------
    def validate_offset_commit(self, member_id, instance_id, member_epoch, api_version) -> Optional[str]:
        """ConsumerGroup.validateOffsetCommit (non-transactional); returns an error name or None."""
        if member_epoch < 0 and not self.members:
            return None
        m = self.members.get(member_id)
        if m is None:
            return E.UNKNOWN_MEMBER_ID
        if api_version < 9:
            return E.UNSUPPORTED_VERSION
        if member_epoch != m.member_epoch:
            return E.STALE_MEMBER_EPOCH
        return None

    def validate_offset_fetch(self, member_id, member_epoch) -> Optional[str]:
        """ConsumerGroup.validateOffsetFetch."""
        if member_id is None and member_epoch < 0:
            return None
        m = self.members.get(member_id)
        if m is None:
            return E.UNKNOWN_MEMBER_ID
        if member_epoch != m.member_epoch:
            return E.STALE_MEMBER_EPOCH
        return None

    # ---- copy / compare ----------------------------------------------------------------------
    def copy(self) -> "ConsumerGroup":
        g = ConsumerGroup.__new__(ConsumerGroup)
        g.group_id = self.group_id
        g.group_epoch = self.group_epoch
        g.assignment_epoch = self.assignment_epoch
        g.members = dict(self.members)
        g.static_members = dict(self.static_members)
        g.target = dict(self.target)
        g.partition_epochs = dict(self.partition_epochs)
        g.subscription_metadata = self.subscription_metadata
        g.lost_epoch_bug = self.lost_epoch_bug
        g.resolved_regexes = dict(self.resolved_regexes)
        g.last_regex_refresh_ms = self.last_regex_refresh_ms
        g.regex_topics_version = self.regex_topics_version
        g.metadata_deadline = self.metadata_deadline
        return g

    def snapshot(self) -> tuple:
        return (self.group_id, self.group_epoch, self.assignment_epoch,
                tuple(self.members.values()),            # insertion order is observable (assignors)
                tuple(sorted(self.static_members.items())),
                tuple(sorted((m, tuple(sorted(a))) for m, a in self.target.items())),
                tuple(sorted(self.partition_epochs.items())), self.subscription_metadata,
                tuple(sorted(self.resolved_regexes.items())), self.last_regex_refresh_ms, self.regex_topics_version,
                self.metadata_deadline)
