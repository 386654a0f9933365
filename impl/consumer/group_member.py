"""The coordinator's record of one consumer group member (Kafka's ConsumerGroupMember).

Why it exists: reconciliation (reconciliation.py), the group (group.py) and the coordinator all
share this immutable value; `_replace` plays the role of ConsumerGroupMember.Builder. Follows
group-coordinator/.../modern/consumer/ConsumerGroupMember.java and modern/MemberState.java
(Kafka 4.x): member epoch, previous member epoch, reconciliation state, assigned partitions and
partitions pending revocation (both as frozensets of (topic_id, partition)).
"""
from __future__ import annotations

from typing import NamedTuple, Optional


class MemberState:
    """modern/MemberState.java (the coordinator side; the client has its own, see client.py)."""
    STABLE = "STABLE"
    UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
    UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"
    UNKNOWN = "UNKNOWN"


class ConsumerGroupMember(NamedTuple):
    member_id: str
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple = ()         # sorted names
    subscribed_topic_regex: str = ""           # "" = none (Kafka's default)
    server_assignor_name: Optional[str] = None
    state: str = MemberState.STABLE
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: frozenset = frozenset()          # (topic_id, partition) the member may own now
    pending_revocation: frozenset = frozenset()  # (topic_id, partition) it must give up

    def update_member_epoch(self, epoch: int) -> "ConsumerGroupMember":
        """Builder.updateMemberEpoch: the previous epoch becomes the current one first."""
        return self._replace(previous_member_epoch=self.member_epoch, member_epoch=epoch)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        """ModernGroupMember.isReconciledTo."""
        return self.state == MemberState.STABLE and self.member_epoch == target_epoch
