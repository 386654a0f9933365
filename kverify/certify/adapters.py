"""Adapters from issue 3's problem format to the assignors of Python Kafka clients.

`kafka-python:range|roundrobin|sticky|cooperative-sticky` and `aiokafka:range|roundrobin|sticky`
run the libraries' own assignor classes: the problem becomes the cluster metadata
(`topics()`, `partitions_for_topic()`) and the members' join metadata the library expects
(plain subscriptions; the sticky user data carrying the previous assignment and generation;
the cooperative subscription's owned partitions and generation), and the library's assignment
comes back as an answer. The libraries are an optional extra (`pip install 'kverify[clients]'`);
a missing one is a one-line `TargetError`.
"""
from __future__ import annotations

import importlib
import logging

from kverify.certify.properties import ORDER
from kverify.certify.claims import BUILTIN_CLAIMS, ORDER_NOTE, STICKY_SCOPE
from kverify.certify.failures import TargetError, TargetFailure

SUPPORTED = {
    "kafka-python": ("range", "roundrobin", "sticky", "cooperative-sticky"),
    "aiokafka": ("range", "roundrobin", "sticky"),
}
MODULE = {"kafka-python": "kafka", "aiokafka": "aiokafka"}


class _Cluster:
    """The two calls the libraries' assignors make on cluster metadata."""

    def __init__(self, topics: dict):
        self._topics = {t: n for t, n in topics.items() if n > 0}

    def topics(self, exclude_internal_topics=True):
        return set(self._topics)

    def partitions_for_topic(self, topic):
        n = self._topics.get(topic)
        return None if n is None else set(range(n))


def _owned_by_topic(owned):
    by_topic = {}
    for t, p in owned:
        by_topic.setdefault(t, []).append(p)
    return by_topic


class _KafkaPython:
    def __init__(self, kind: str):
        from kafka.protocol.consumer.group import JoinGroupResponse
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
        from kafka.structs import TopicPartition

        self.kind = kind
        self.Member = JoinGroupResponse.JoinGroupResponseMember
        self.Sub = ConsumerProtocolSubscription
        self.TP = TopicPartition
        mod = {"range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
               "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
               "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
               "cooperative-sticky": ("kafka.coordinator.assignors.cooperative_sticky",
                                      "CooperativeStickyAssignor")}[kind]
        self.cls = getattr(importlib.import_module(mod[0]), mod[1])

    def _metadata(self, m):
        topics = list(m["topics"])
        owned = m.get("owned")
        gen = m.get("generation")
        if self.kind == "sticky":
            tps = None if owned is None else [self.TP(t, p) for t, p in owned]
            return self.cls._metadata(topics, tps, -1 if gen is None else gen)
        if self.kind == "cooperative-sticky":
            sub_tp = self.Sub.TopicPartition
            owned_field = [sub_tp(topic=t, partitions=ps) for t, ps in _owned_by_topic(owned or []).items()]
            return self.Sub(version=2, topics=topics, user_data=b"", owned_partitions=owned_field,
                            generation_id=-1 if gen is None else gen)
        return self.Sub(version=0, topics=topics, user_data=b"")

    def assign(self, problem: dict) -> dict:
        members = [self.Member(member_id=m["id"], group_instance_id=m.get("instance_id"),
                               metadata=self._metadata(m), version=5) for m in problem["members"]]
        assignor = self.cls() if self.kind in ("sticky", "cooperative-sticky") else self.cls
        result = assignor.assign(_Cluster(problem["topics"]), members)
        return {mid: [[tp.topic, tp.partition] for tp in a.partitions()] for mid, a in result.items()}


class _AioKafka:
    def __init__(self, kind: str):
        from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata
        from aiokafka.structs import TopicPartition

        self.kind = kind
        self.Meta = ConsumerProtocolMemberMetadata
        self.TP = TopicPartition
        mod = {"range": ("aiokafka.coordinator.assignors.range", "RangePartitionAssignor"),
               "roundrobin": ("aiokafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
               "sticky": ("aiokafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor")}[kind]
        self.cls = getattr(importlib.import_module(mod[0]), mod[1])

    def assign(self, problem: dict) -> dict:
        members = {}
        for m in problem["members"]:
            if self.kind == "sticky":
                owned = m.get("owned")
                tps = None if owned is None else [self.TP(t, p) for t, p in owned]
                gen = m.get("generation")
                members[m["id"]] = self.cls._metadata(list(m["topics"]), tps, -1 if gen is None else gen)
            else:
                members[m["id"]] = self.Meta(0, list(m["topics"]), b"")
        result = self.cls.assign(_Cluster(problem["topics"]), members)
        return {mid: [[tp.topic, tp.partition] for tp in a.partitions()] for mid, a in result.items()}


class AdapterTarget:
    protocol = "classic"

    def __init__(self, library: str, kind: str):
        self.name = f"{library}:{kind}"
        try:
            importlib.import_module(MODULE[library])
        except ImportError:
            raise TargetError(f"{library} is not installed (pip install 'kverify[clients]')") from None
        self.impl = _KafkaPython(kind) if library == "kafka-python" else _AioKafka(kind)
        self.cooperative = kind == "cooperative-sticky"
        self.member_order_free = kind in ("range", "roundrobin")
        self.note = None if self.member_order_free else ORDER_NOTE.replace("Kafka's sticky assignors", "sticky assignors")
        # held to exactly what Kafka's assignor of the same name claims, with the same scopes
        self.claims = {p: BUILTIN_CLAIMS.get(kind, {}).get(p) for p in ORDER}
        self.scopes = {"sticky": STICKY_SCOPE} if kind in ("sticky", "cooperative-sticky") else {}
        for name in ("kafka", "aiokafka"):  # their "no metadata for topic" warnings are not ours to print
            logging.getLogger(name).setLevel(logging.CRITICAL)

    def solve(self, problem: dict) -> dict:
        try:
            assignment = self.impl.assign(problem)
        except Exception as exc:  # the library's failure is a finding
            raise TargetFailure("crash", f"{type(exc).__name__}: {exc}"[:300]) from None
        return {"id": problem.get("id"), "assignment": assignment}

    def close(self) -> None:
        pass


def adapter_target(spec: str) -> AdapterTarget:
    library, _, kind = spec.partition(":")
    if library not in SUPPORTED or kind not in SUPPORTED[library]:
        known = ", ".join(f"{lib}:{k}" for lib, ks in SUPPORTED.items() for k in ks)
        raise TargetError(f"unknown client assignor {spec!r} (known: {known})")
    return AdapterTarget(library, kind)
