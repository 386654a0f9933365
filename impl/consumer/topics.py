"""The coordinator's view of the cluster's topics (Kafka's TopicsImage, reduced to what matters).

Why it exists: KIP-848 speaks topic ids on the wire and names in subscriptions; the coordinator
maps between them, counts partitions, and notices topics created, grown or deleted
(GroupMetadataManager.onNewMetadataImage). An immutable value: replace it to change metadata.
Without explicit ids, `topic_id_for(name)` derives one deterministically: the assignor package's
derivation when it offers one (impl/consumer/assignors `topic_id_for`), else "<name>-id".
"""
from __future__ import annotations

from typing import NamedTuple, Optional


def topic_id_for(name: str) -> str:
    try:
        from kverify.impl.consumer.assignors import topic_id_for as derive  # K1's, when present
    except ImportError:
        return f"{name}-id"
    return derive(name)


class TopicMetadata(NamedTuple):
    topic_id: str
    name: str
    partitions: int


class TopicsImage(NamedTuple):
    topics: tuple = ()          # (TopicMetadata, ...) sorted by name

    @classmethod
    def of(cls, partitions: dict, topic_ids: Optional[dict] = None) -> "TopicsImage":
        """`partitions`: {name: number of partitions}; `topic_ids`: optional {name: id}."""
        ids = topic_ids or {}
        return cls(tuple(TopicMetadata(ids.get(n) or topic_id_for(n), n, int(k))
                         for n, k in sorted(partitions.items())))

    def by_name(self, name: str) -> Optional[TopicMetadata]:
        for t in self.topics:
            if t.name == name:
                return t
        return None

    def by_id(self, topic_id: str) -> Optional[TopicMetadata]:
        for t in self.topics:
            if t.topic_id == topic_id:
                return t
        return None

    def ids_of(self, names) -> frozenset:
        """TopicIds(names, image): the ids of the names that exist."""
        out = set()
        for n in names:
            t = self.by_name(n)
            if t is not None:
                out.add(t.topic_id)
        return frozenset(out)

    def name_of(self, topic_id: str) -> Optional[str]:
        t = self.by_id(topic_id)
        return None if t is None else t.name

    def subscription_metadata(self, names) -> tuple:
        """ModernGroup.computeSubscriptionMetadata: (name, id, partitions) of subscribed topics that exist."""
        out = []
        for n in sorted(set(names)):
            t = self.by_name(n)
            if t is not None:
                out.append((t.name, t.topic_id, t.partitions))
        return tuple(out)

    def changed_names(self, other: "TopicsImage") -> frozenset:
        """Names created, deleted or resized between two images (onNewMetadataImage's delta)."""
        a = {t.name: t for t in self.topics}
        b = {t.name: t for t in other.topics}
        return frozenset(n for n in set(a) | set(b) if a.get(n) != b.get(n))
