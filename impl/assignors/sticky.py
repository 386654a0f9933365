"""Kafka's `sticky` and `cooperative-sticky` assignors (AbstractStickyAssignor, 3.9 line, no racks).

The code follows Kafka's algorithm step by step, including its orders (Java string order, the
HashMap order of member ids, the first element of a HashSet) and its failures (it raises
`AssignorCrash` where Kafka throws), so that answers match Kafka's, weaknesses included:
- claim resolution (`_resolve_claims`): highest generation wins, equal generations invalidate;
- all subscriptions equal -> the "constrained" builder (`sticky_constrained.py`);
- otherwise the "general" builder (`sticky_general.py`);
- cooperative-sticky then withholds every partition that changes owner (assigned next round).
Rack-aware assignment is not modelled (the problem format has no racks).
"""
from __future__ import annotations

from kverify.impl.assignors import behaviours as B
from kverify.impl.assignors.java_order import hashmap_order
from kverify.impl.assignors.sticky_constrained import ConstrainedBuilder
from kverify.impl.assignors.sticky_general import GeneralBuilder
from kverify.impl.assignors.sticky_support import DEFAULT_GENERATION, remove_first


class _Sub:
    """One member's Subscription as the assignor sees it."""

    __slots__ = ("id", "topics", "owned", "generation_id", "data_partitions", "data_generation")

    def __init__(self, member, cooperative: bool):
        self.id = member.id
        self.topics = list(member.topics)
        self.owned = list(member.owned or ())            # Subscription.ownedPartitions()
        self.generation_id = member.generation            # Subscription.generationId() (None = absent)
        if cooperative:                                   # CooperativeStickyAssignor.memberData
            self.data_partitions = list(member.owned or ())
            self.data_generation = member.generation
        elif member.owned is None:                        # StickyAssignor: no user data
            self.data_partitions, self.data_generation = [], None
        else:                                             # StickyAssignor: user data v1 (v0 has no generation)
            self.data_partitions, self.data_generation = list(member.owned), member.generation


class _StickyCore:
    def __init__(self, cooperative: bool, behaviours=frozenset()):
        self.cooperative = cooperative
        self.behaviours = frozenset(behaviours)
        self.double_claim = B.DOUBLE_CLAIM in self.behaviours
        self.stale_owner_ignored = B.STALE_OWNER_IGNORED in self.behaviours
        self.max_generation = DEFAULT_GENERATION
        self.transferring = None

    # ---------------------------------------------------------------- entry point
    def assign(self, problem) -> dict:
        if not problem.members:
            return {}
        subscribed = {t for m in problem.members for t in m.topics}
        # AbstractPartitionAssignor: subscribed topics that exist with at least one partition
        per_topic = {t: problem.topics[t] for t in subscribed if problem.topics.get(t, 0) > 0}
        order = hashmap_order([m.id for m in problem.members])
        by_id = {m.id: m for m in problem.members}
        subs = {c: _Sub(by_id[c], self.cooperative) for c in order}   # insertion = iteration order
        owned_map = {}
        multi = set()
        equal = self._resolve_claims(set(per_topic), subs, owned_map, multi)
        if equal:
            self.transferring = {}
            result = ConstrainedBuilder(self, per_topic, owned_map, multi).build()
        else:
            self.transferring = None
            result = GeneralBuilder(self, per_topic, owned_map, subs).build()
        if self.cooperative:
            moving = self.transferring if self.transferring is not None else _transferring(subs, result)
            for tp, consumer in moving.items():
                remove_first(result[consumer], tp)
        return result

    # ---------------------------------------------------------------- claims
    def _resolve_claims(self, all_topics, subs, owned_map, multi) -> bool:
        if self.double_claim or self.stale_owner_ignored:
            return self._resolve_claims_before_3_5(all_topics, subs, owned_map, multi)
        equal = True
        first_topics = None
        previous_owner = {}
        for c, sub in subs.items():
            if not first_topics:            # Kafka re-initialises while the first sets are empty
                first_topics = set(sub.topics)
            elif equal and set(sub.topics) != first_topics:
                equal = False
            gen = DEFAULT_GENERATION if sub.data_generation is None else sub.data_generation
            self.max_generation = max(self.max_generation, gen)
            owned = []
            owned_map[c] = owned
            for tp in sub.data_partitions:
                if tp[0] not in all_topics:
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    owned.append(tp)
                    previous_owner[tp] = c
                    continue
                other_gen = subs[other].generation_id
                other_gen = DEFAULT_GENERATION if other_gen is None else other_gen
                if gen == other_gen:
                    multi.add(tp)
                    remove_first(owned_map[other], tp)
                    previous_owner[tp] = c
                elif gen > other_gen:
                    owned.append(tp)
                    remove_first(owned_map[other], tp)
                    previous_owner[tp] = c
        return equal

    def _resolve_claims_before_3_5(self, all_topics, subs, owned_map, multi) -> bool:
        """allSubscriptionsEqual before KAFKA-14639 (3.0-3.4) or before KAFKA-12984 (2.x, where the
        cooperative assignor carried no generation and claims were not cross-checked)."""
        equal = True
        first_topics = None
        previous_owner = {}
        highest = []
        for c, sub in subs.items():
            if not first_topics:
                first_topics = set(sub.topics)
            elif equal and set(sub.topics) != first_topics:
                equal = False
            owned = []
            owned_map[c] = owned
            g = None if self.double_claim else sub.data_generation  # before 3.0: no generation at all
            if (g is not None and g >= self.max_generation) or (g is None and self.max_generation == DEFAULT_GENERATION):
                if g is not None and g > self.max_generation:
                    previous_owner.clear()
                    multi.clear()
                    for dropped in highest:
                        owned_map[dropped].clear()
                    highest.clear()
                    self.max_generation = g
                highest.append(c)
                for tp in sub.data_partitions:
                    if tp[0] not in all_topics:
                        continue
                    if self.double_claim:
                        owned.append(tp)
                        continue
                    other = previous_owner.get(tp)
                    previous_owner[tp] = c
                    if other is None:
                        owned.append(tp)
                    else:
                        remove_first(owned_map[other], tp)
                        multi.add(tp)
        return equal


def _transferring(subs, assignment) -> dict:
    """CooperativeStickyAssignor.computePartitionsTransferringOwnership (general case)."""
    added = {}
    revoked = set()
    for c, assigned in assignment.items():
        owned = subs[c].owned
        owned_set = set(owned)
        for tp in assigned:
            if tp not in owned_set:
                added[tp] = c
        assigned_set = set(assigned)
        for tp in owned:
            if tp not in assigned_set:
                revoked.add(tp)
    return {tp: c for tp, c in added.items() if tp in revoked}


class StickyAssignor:
    """`sticky` (eager): previous assignment and generation come from the member's user data."""

    name = "sticky"
    cooperative = False

    def __init__(self, behaviours=frozenset()):
        self.behaviours = frozenset(behaviours)

    def assign(self, problem) -> dict:
        return _StickyCore(False, self.behaviours).assign(problem)


class CooperativeStickyAssignor:
    """`cooperative-sticky`: like sticky, but a partition changing owner is given to no one this round."""

    name = "cooperative-sticky"
    cooperative = True

    def __init__(self, behaviours=frozenset()):
        self.behaviours = frozenset(behaviours)

    def assign(self, problem) -> dict:
        return _StickyCore(True, self.behaviours).assign(problem)
