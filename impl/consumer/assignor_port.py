"""How the coordinator calls a server-side assignor (ConsumerGroupPartitionAssignor.assign).

Why it exists: the Kafka-exact assignors live in impl/consumer/assignors/ (another engineer's
package); the coordinator only needs its call shape (impl/consumer/assignors/__init__.py):
`assignor.assign(GroupSpec, TopicDescriber) -> {member_id: {topic_id: frozenset(partitions)}}`,
raising `PartitionAssignorError` where Kafka throws PartitionAssignorException. When that package
cannot be imported, structurally equal stand-ins below keep the coordinator usable.

Also here: `PreparedAssignor`, the analogue of Kafka's test MockPartitionAssignor
(prepareGroupAssignment), used to transcribe GroupMetadataManagerTest; and `BalancedAssignor`,
a small sticky balanced assignor used only when the Kafka-exact ones are not importable (it is
NOT Kafka's uniform assignor; it keeps a member's current target while under quota).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

try:  # the Kafka-exact package (K1); its names win when present
    from kverify.impl.consumer.assignors import (  # type: ignore
        GroupSpec, MemberSpec, PartitionAssignorError, TopicDescriber)
    HAVE_KAFKA_ASSIGNORS = True
except ImportError:  # pragma: no cover - depends on the other package's progress
    HAVE_KAFKA_ASSIGNORS = False

    class PartitionAssignorError(Exception):
        """PartitionAssignorException."""

    class MemberSpec(NamedTuple):
        rack: Optional[str] = None
        instance_id: Optional[str] = None
        subscribed: frozenset = frozenset()
        assigned: dict = {}

    class GroupSpec(NamedTuple):
        members: dict = {}
        member_order: Optional[tuple] = None

    class TopicDescriber:
        def __init__(self, partitions: dict, racks=None):
            self.partitions = dict(partitions)
            self.racks = racks

        def num_partitions(self, topic_id) -> int:
            return self.partitions.get(topic_id, -1)


class PreparedAssignor:
    """MockPartitionAssignor: returns the prepared assignment (members missing from it get nothing)."""

    def __init__(self, name: str = "range", prepared: Optional[dict] = None):
        self.name = name
        self.prepared = dict(prepared or {})
        self.calls = 0

    def prepare(self, assignment: dict) -> None:
        """{member_id: {topic_id: iterable of partitions}}"""
        self.prepared = {m: {t: frozenset(ps) for t, ps in tps.items()} for m, tps in assignment.items()}

    def assign(self, spec, describer) -> dict:
        self.calls += 1
        return {m: dict(self.prepared.get(m, {})) for m in spec.members}


class BalancedAssignor:
    """Deterministic, sticky, balanced per topic; a stand-in until Kafka's uniform is importable."""

    def __init__(self, name: str = "uniform"):
        self.name = name

    def assign(self, spec, describer) -> dict:
        order = list(spec.member_order or sorted(spec.members))
        out = {m: {} for m in order}
        topics = sorted({t for m in order for t in spec.members[m].subscribed})
        for t in topics:
            n = describer.num_partitions(t)
            if n is None or n < 0:
                continue
            subs = [m for m in order if t in spec.members[m].subscribed]
            if not subs:
                continue
            quota_lo, extra = divmod(n, len(subs))
            quota = {m: quota_lo + (1 if i < extra else 0) for i, m in enumerate(subs)}
            taken = set()
            got = {m: [] for m in subs}
            for m in subs:
                for p in sorted(spec.members[m].assigned.get(t, ())):
                    if p < n and p not in taken and len(got[m]) < quota[m]:
                        got[m].append(p)
                        taken.add(p)
            free = [p for p in range(n) if p not in taken]
            for m in subs:
                while len(got[m]) < quota[m] and free:
                    got[m].append(free.pop(0))
            for m in subs:
                if got[m]:
                    out[m][t] = frozenset(got[m])
        return out


def default_assignors() -> dict:
    """{name: assignor} in Kafka's default order (uniform first: the default server assignor)."""
    if HAVE_KAFKA_ASSIGNORS:
        from kverify.impl.consumer.assignors import get
        return {"uniform": get("uniform"), "range": get("range")}
    return {"uniform": BalancedAssignor("uniform")}
