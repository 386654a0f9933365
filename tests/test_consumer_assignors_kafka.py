"""KIP-848 server-side assignors against the examples of Kafka's own tests (Kafka 4.0).

Transcribed as data from apache/kafka group-coordinator/src/test/java/org/apache/kafka/coordinator/
group/assignor/: OptimizedUniformAssignmentBuilderTest (homogeneous uniform), UniformHeterogeneous-
AssignmentBuilderTest and RangeAssignorTest, at trunk 1eb7644349c (the closest commit before 4.0.0
available here). Kafka's tests iterate members in sorted order (TreeMap / TestGroupSpecImpl) and build
current assignments with mkOrderedAssignment (LinkedHashMap) or mkAssignment (HashMap): the problems
say so with "member_order": "input" (members listed sorted) and "assigned_order". Topic ids are
Kafka's (`T1-A4s3VTwiI5CTbEp6POw`, ...) where its tests fix them; RangeAssignorTest draws random ids,
and its answers do not depend on them (derived ids here).
"""
from __future__ import annotations

import pytest

from kverify.impl.consumer.assignors import (HETEROGENEOUS, GroupSpec, MemberSpec, TopicDescriber, assign,
                                             get)

IDS = {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe",
       "topic3": "T3-CU8fVTLCz5YMkLoDQsa", "topic4": "T4-Tw9fVTLCz5HbPp6YQsa"}


def problem(assignor, topics, members, ordered=False, ids=True, extra_ids=()):
    """members: [(id, [topics], {topic: [partitions]} or None, instance_id or None)], sorted by id."""
    p = {"id": "k", "protocol": "consumer", "assignor": assignor, "topics": dict(topics),
         "member_order": "input", "assigned_order": "input" if ordered else "hash",
         "members": [{"id": mid, "topics": subs, "rack": None, "instance_id": inst,
                      "assigned": [[t, q] for t, ps in (assigned or {}).items() for q in ps]}
                     for mid, subs, assigned, inst in members]}
    if ids:
        p["topic_ids"] = {t: IDS[t] for t in list(topics) + list(extra_ids)}
    elif extra_ids:
        p["topic_ids"] = {t: IDS[t] for t in extra_ids}
    return p


def expect(answer, expected):
    """Kafka's assertAssignment: the same partitions per member (members missing = nothing)."""
    assert "error" not in answer, answer
    got = {m: sorted(map(tuple, tps)) for m, tps in answer["assignment"].items()}
    want = {m: sorted((t, p) for t, ps in a.items() for p in ps) for m, a in expected.items()}
    for m in got:
        want.setdefault(m, [])
    assert got == want


def m(mid, topics, assigned=None, instance=None):
    return (mid, topics, assigned, instance)


T12 = ["topic1", "topic2"]
T13 = ["topic1", "topic3"]

# ---- OptimizedUniformAssignmentBuilderTest (UniformHomogeneousAssignmentBuilder) ----------------------
HOMOGENEOUS_CASES = {
    "testOneMemberNoTopicSubscription": (
        {"topic1": 3}, [m("A", [])], False, {"A": {}}),
    "testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks": (
        {"topic1": 3, "topic3": 2}, [m("A", T13), m("B", T13)], False,
        {"A": {"topic1": [0], "topic3": [0, 1]}, "B": {"topic1": [1, 2]}}),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        {"topic3": 2}, [m("A", ["topic3"]), m("B", ["topic3"]), m("C", ["topic3"])], False,
        {"A": {"topic3": [0]}, "B": {"topic3": [1]}, "C": {}}),
    "testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment": (
        {"topic1": 3, "topic2": 3},
        [m("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}), m("B", T12, {"topic1": [2], "topic2": [2]})], True,
        {"A": {"topic1": [0, 1], "topic2": [0]}, "B": {"topic1": [2], "topic2": [1, 2]}}),
    "testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics": (
        {"topic1": 6, "topic2": 5},
        [m("A", T12, {"topic1": [0, 2], "topic2": [0]}), m("B", T12, {"topic1": [1], "topic2": [1, 2]})], True,
        {"A": {"topic1": [0, 2, 3], "topic2": [0, 3, 4]}, "B": {"topic1": [1, 4, 5], "topic2": [1, 2]}}),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"topic1": 3, "topic2": 3},
        [m("A", T12, {"topic1": [0, 2], "topic2": [0]}), m("B", T12, {"topic1": [1], "topic2": [1, 2]}),
         m("C", T12)], True,
        {"A": {"topic1": [0, 2]}, "B": {"topic1": [1], "topic2": [1]}, "C": {"topic2": [0, 2]}}),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        {"topic1": 3, "topic2": 3},
        [m("A", T12, {"topic1": [0], "topic2": [0]}), m("B", T12, {"topic1": [1], "topic2": [1]})], False,
        {"A": {"topic1": [0], "topic2": [0, 2]}, "B": {"topic1": [1, 2], "topic2": [1]}}),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"topic1": 2, "topic2": 2},
        [m("A", ["topic2"], {"topic1": [0], "topic2": [0]}), m("B", ["topic2"], {"topic1": [1], "topic2": [1]})],
        False, {"A": {"topic2": [0]}, "B": {"topic2": [1]}}),
}

# ---- UniformHeterogeneousAssignmentBuilderTest ------------------------------------------------------
HETEROGENEOUS_CASES = {
    "testTwoMembersNoTopicSubscription": (
        {"topic1": 3}, [m("A", []), m("B", [])], {"A": {}, "B": {}}),
    "testFirstAssignmentTwoMembersTwoTopics": (
        {"topic1": 3, "topic3": 6}, [m("A", T13), m("B", ["topic3"])],
        {"A": {"topic1": [0, 1, 2], "topic3": [4]}, "B": {"topic3": [0, 1, 2, 3, 5]}}),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        {"topic3": 1, "topic1": 2}, [m("A", ["topic3"]), m("B", ["topic3"]), m("C", ["topic1"])],
        {"A": {"topic3": [0]}, "B": {}, "C": {"topic1": [0, 1]}}),
    "testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment": (
        {"topic1": 6, "topic2": 4, "topic3": 4},
        [m("A", ["topic1"], {"topic1": [0, 1, 2]}),
         m("B", T12, {"topic1": [3], "topic2": [0]}),
         m("C", ["topic1", "topic2", "topic3"], {"topic1": [4, 5], "topic2": [1, 2, 3], "topic3": [0, 1, 2, 3]})],
        {"A": {"topic1": [0, 1, 2, 5]}, "B": {"topic1": [3], "topic2": [0, 1, 2, 3]},
         "C": {"topic1": [4], "topic3": [0, 1, 2, 3]}}),
    "testReassignmentWhenPartitionsAreAddedForTwoMembers": (
        {"topic1": 6, "topic2": 5, "topic3": 3, "topic4": 3},
        [m("A", T13, {"topic1": [0, 1, 2, 3], "topic3": [0, 1]}),
         m("B", ["topic1", "topic2", "topic3", "topic4"], {"topic2": [0, 1, 2], "topic4": [0, 1, 2]})],
        {"A": {"topic1": [0, 1, 2, 3, 4, 5], "topic3": [0, 1, 2]},
         "B": {"topic2": [0, 1, 2, 3, 4], "topic4": [0, 1, 2]}}),
    "testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics": (
        {"topic1": 6, "topic2": 7},
        [m("A", ["topic1"], {"topic1": [0, 2], "topic2": [0]}), m("B", T12, {"topic1": [1], "topic2": [1, 2]}),
         m("C", T12)],
        {"A": {"topic1": [0, 2, 3, 4, 5]}, "B": {"topic1": [1], "topic2": [1, 2, 6]}, "C": {"topic2": [0, 3, 4, 5]}}),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics": (
        {"topic1": 3, "topic2": 8, "topic3": 3},
        [m("A", T13, {"topic1": [0, 1, 2], "topic3": [0, 1]}), m("B", ["topic2"], {"topic2": [3, 4, 5, 6]})],
        {"A": {"topic1": [0, 1, 2], "topic3": [0, 1, 2]}, "B": {"topic2": [0, 1, 2, 3, 4, 5, 6, 7]}}),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"topic1": 3, "topic2": 5},
        [m("A", ["topic1"], {"topic1": [0, 2], "topic2": [1, 3]}), m("B", T12, {"topic1": [1], "topic2": [0, 2, 4]})],
        {"A": {"topic1": [0, 1, 2]}, "B": {"topic2": [0, 1, 2, 3, 4]}}),
    "testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions": (
        {"topic1": 3}, [m("A", ["topic1"]), m("B", [])], {"A": {"topic1": [0, 1, 2]}, "B": {}}),
}

# ---- RangeAssignorTest --------------------------------------------------------------------------------
T123 = ["topic1", "topic2", "topic3"]
RANGE_CASES = {
    "testOneMemberNoTopic": ({"topic1": 3}, [m("A", [])], {"A": {}}),
    "testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions": (
        {"topic1": 3, "topic3": 2}, [m("A", T13), m("B", T13)],
        {"A": {"topic1": [0, 1], "topic3": [0]}, "B": {"topic1": [2], "topic3": [1]}}),
    "testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions": (
        {"topic1": 3, "topic2": 3, "topic3": 2}, [m("A", T12), m("B", ["topic3"]), m("C", ["topic2", "topic3"])],
        {"A": {"topic1": [0, 1, 2], "topic2": [0, 1]}, "B": {"topic3": [0]}, "C": {"topic2": [2], "topic3": [1]}}),
    "testFirstAssignmentNumMembersGreaterThanNumPartitions": (
        {"topic1": 3, "topic3": 2}, [m("A", T13), m("B", T13), m("C", T13)],
        {"A": {"topic1": [0], "topic3": [0]}, "B": {"topic1": [1], "topic3": [1]}, "C": {"topic1": [2]}}),
    "testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded": (
        {"topic1": 2, "topic2": 2},
        [m("A", T12, {"topic1": [0], "topic2": [0]}), m("B", T12, {"topic1": [1], "topic2": [1]}), m("C", T12)],
        {"A": {"topic1": [0], "topic2": [0]}, "B": {"topic1": [1], "topic2": [1]}, "C": {}}),
    "testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics": (
        {"topic1": 4, "topic2": 4},
        [m("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}), m("B", T12, {"topic1": [2], "topic2": [2]})],
        {"A": {"topic1": [0, 1], "topic2": [0, 1]}, "B": {"topic1": [2, 3], "topic2": [2, 3]}}),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"topic1": 3, "topic2": 3},
        [m("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}), m("B", T12, {"topic1": [2], "topic2": [2]}), m("C", T12)],
        {"A": {"topic1": [0], "topic2": [0]}, "B": {"topic1": [1], "topic2": [1]},
         "C": {"topic1": [2], "topic2": [2]}}),
    "testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"topic1": 4, "topic2": 3},
        [m("A", T12, {"topic1": [0, 1], "topic2": [0, 1]}), m("B", T12, {"topic1": [2], "topic2": [2]}),
         m("C", ["topic1"])],
        {"A": {"topic1": [0, 1], "topic2": [0, 1]}, "B": {"topic1": [2], "topic2": [2]}, "C": {"topic1": [3]}}),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        {"topic1": 3, "topic2": 3}, [m("B", T12, {"topic1": [2], "topic2": [2]})],
        {"B": {"topic1": [0, 1, 2], "topic2": [0, 1, 2]}}),
    "testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        {"topic1": 3, "topic2": 3, "topic3": 2},
        [m("A", ["topic1"], {"topic1": [0, 1, 2], "topic2": [0]}), m("B", T123, {"topic2": [1]}),
         m("C", ["topic2"], {"topic2": [2], "topic3": [0, 1]})],
        {"A": {"topic1": [0, 1]}, "B": {"topic1": [2], "topic2": [0, 1], "topic3": [0, 1]}, "C": {"topic2": [2]}}),
}


@pytest.mark.parametrize("name", sorted(HOMOGENEOUS_CASES))
def test_uniform_homogeneous_matches_kafka(name):
    topics, members, ordered, expected = HOMOGENEOUS_CASES[name]
    expect(assign(problem("uniform", topics, members, ordered)), expected)


@pytest.mark.parametrize("name", sorted(HETEROGENEOUS_CASES))
def test_uniform_heterogeneous_matches_kafka(name):
    topics, members, expected = HETEROGENEOUS_CASES[name]
    expect(assign(problem("uniform", topics, members)), expected)


@pytest.mark.parametrize("name", sorted(RANGE_CASES))
def test_range_matches_kafka(name):
    topics, members, expected = RANGE_CASES[name]
    expect(assign(problem("range", topics, members, ids=False)), expected)


def test_heterogeneous_builder_forced_on_identical_subscriptions():
    """testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions: Kafka forces HETEROGENEOUS on
    a group whose subscriptions are equal (its balancing loop must stop when a topic runs out of
    partitions to move), so this one goes through the GroupSpec API with the type given."""
    t1, t2, t3 = IDS["topic1"], IDS["topic2"], IDS["topic3"]
    spec = GroupSpec({"A": MemberSpec(subscribed=[t1, t2, t3], assigned={t1: {0, 1}, t2: {0, 1}, t3: {0, 1}}),
                      "B": MemberSpec(subscribed=[t1, t2, t3])},
                     member_ids=["A", "B"], subscription_type=HETEROGENEOUS)
    got = get("uniform").assign(spec, TopicDescriber({t1: 2, t2: 2, t3: 2}))
    assert got == {"A": {t2: frozenset({0}), t3: frozenset({0, 1})},
                   "B": {t1: frozenset({0, 1}), t2: frozenset({1})}}


@pytest.mark.parametrize("assignor, subscriptions, message", [
    # OptimizedUniformAssignmentBuilderTest.testOneMemberSubscribedToNonexistentTopic
    ("uniform", [["topic2"]],
     "Members are subscribed to topic T2-B4s3VTwiI5YHbPp6YUQ which doesn't exist in the topic metadata."),
    # UniformHeterogeneousAssignmentBuilderTest.testTwoMembersSubscribedToNonexistentTopics
    ("uniform", [["topic3"], ["topic2"]],
     "Members are subscribed to topic T3-CU8fVTLCz5YMkLoDQsQ which doesn't exist in the topic metadata."),
    # RangeAssignorTest.testOneMemberSubscribedToNonExistentTopic
    ("range", [["topic2"]], "Member is subscribed to a non-existent topic"),
])
def test_subscribed_topic_missing_from_metadata_is_kafkas_exception(assignor, subscriptions, message):
    members = [m(chr(ord("A") + i), subs) for i, subs in enumerate(subscriptions)]
    answer = assign(problem(assignor, {"topic1": 3}, members, extra_ids=("topic2", "topic3")))
    assert answer == {"id": "k", "error": message}


@pytest.mark.parametrize("instances, partitions, expected", [
    # testStaticMembership: A(instanceA), B(instanceB); A rejoins as memberA1 with the same instance id.
    ({"A": "instanceA", "B": "instanceB"}, 3, {"instanceA": [0, 1], "instanceB": [2]}),
    # testMixedStaticMembership: static A, C first (by instance id), dynamic B last.
    ({"A": "instanceA", "C": "instanceC", "B": None}, 5, {"instanceA": [0, 1], "instanceC": [2, 3], None: [4]}),
])
def test_range_static_members_keep_their_ranges_across_member_ids(instances, partitions, expected):
    def run(ids):
        members = [m(mid, ["topic1"], instance=instances[old]) for mid, old in ids]
        return assign(problem("range", {"topic1": partitions}, members, ids=False))["assignment"]
    before = run([(k, k) for k in sorted(instances)])
    after = run([("memberA1" if k == "A" else k, k) for k in sorted(instances)])
    for k, inst in instances.items():
        new_id = "memberA1" if k == "A" else k
        assert before[k] == after[new_id] == [["topic1", p] for p in expected[inst]]


def test_validity_and_balance_for_large_sample_set():
    """OptimizedUniformAssignmentBuilderTest.testValidityAndBalanceForLargeSampleSet: 99 topics of 3
    partitions, 49 members subscribed to all (random topic ids in Kafka: derived ones here)."""
    topics = {f"topic-{i}": 3 for i in range(1, 100)}
    members = [{"id": f"member{i}", "topics": list(topics)} for i in range(1, 50)]
    answer = assign({"id": 1, "protocol": "consumer", "assignor": "uniform", "topics": topics, "members": members})
    loads = [len(tps) for tps in answer["assignment"].values()]
    owned = [tuple(tp) for tps in answer["assignment"].values() for tp in tps]
    assert max(loads) - min(loads) <= 1 and len(owned) == len(set(owned)) == 297
