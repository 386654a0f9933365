"""Reference assignors: issue 3's seed examples and expectations taken from Kafka's own unit tests
(RangeAssignorTest, RoundRobinAssignorTest, AbstractStickyAssignorTest, StickyAssignorTest,
CooperativeStickyAssignorTest; test names cited per case)."""
import pytest

from kverify.impl.assignors import assign, names, parse_problem, solve
from kverify.impl.assignors.java_order import hashmap_order, string_hash, topic_partition_hash
from kverify.impl.assignors.problem import ProblemError, java_sorted


def member(mid, topics, owned=None, generation=None, instance_id=None):
    return {"id": mid, "topics": topics, "owned": owned, "generation": generation, "instance_id": instance_id}


def run(assignor, topics, members):
    answer = assign({"id": "x", "assignor": assignor, "topics": topics, "members": members})
    assert "error" not in answer, answer
    return {m: sorted(tuple(tp) for tp in tps) for m, tps in answer["assignment"].items()}


def tps(*pairs):
    return sorted(pairs)


# ---------------------------------------------------------------- issue 3 seed examples

def test_seed_range_one_topic_three_consumers():
    got = run("range", {"t1": 4}, [member(c, ["t1"]) for c in ("c0", "c1", "c2")])
    assert got == {"c0": tps(("t1", 0), ("t1", 1)), "c1": tps(("t1", 2)), "c2": tps(("t1", 3))}


def test_seed_roundrobin_two_consumers_two_topics():
    got = run("roundrobin", {"t0": 3, "t1": 3}, [member(c, ["t0", "t1"]) for c in ("C0", "C1")])
    assert got == {"C0": tps(("t0", 0), ("t0", 2), ("t1", 1)), "C1": tps(("t0", 1), ("t1", 0), ("t1", 2))}


HETERO_TOPICS = {"t0": 1, "t1": 2, "t2": 3}
HETERO = [member("C0", ["t0"]), member("C1", ["t0", "t1"]), member("C2", ["t0", "t1", "t2"])]


def test_seed_roundrobin_heterogeneous():
    got = run("roundrobin", HETERO_TOPICS, HETERO)
    assert got == {"C0": tps(("t0", 0)), "C1": tps(("t1", 0)),
                   "C2": tps(("t1", 1), ("t2", 0), ("t2", 1), ("t2", 2))}


def _kept_after_c0_leaves(assignor):
    first = run(assignor, HETERO_TOPICS, HETERO)
    rest = [member(m["id"], m["topics"], [list(tp) for tp in first[m["id"]]], 1) for m in HETERO[1:]]
    second = run(assignor, HETERO_TOPICS, rest)
    assert sorted(tp for v in second.values() for tp in v) == sorted(
        (t, p) for t, n in HETERO_TOPICS.items() for p in range(n))
    return first, sum(len(set(second[m]) & set(first[m])) for m in ("C1", "C2"))


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_seed_sticky_heterogeneous_and_c0_leaves(assignor):
    first, kept = _kept_after_c0_leaves(assignor)
    assert first == {"C0": tps(("t0", 0)), "C1": tps(("t1", 0), ("t1", 1)),
                     "C2": tps(("t2", 0), ("t2", 1), ("t2", 2))}
    assert kept == 5


def test_seed_roundrobin_keeps_three_after_c0_leaves():
    assert _kept_after_c0_leaves("roundrobin")[1] == 3


# ---------------------------------------------------------------- member order

def test_java_string_order_is_utf16():
    assert java_sorted(["c2", "a", "c10", "C3"]) == ["C3", "a", "c10", "c2"]
    # a supplementary character (surrogates 0xD83D...) sorts before U+FFFD in Java, after it in Python
    assert java_sorted(["\ufffd", "\U0001F600"]) == ["\U0001F600", "\ufffd"]


def test_range_orders_members_like_java_compare_to():
    got = run("range", {"t": 4}, [member(c, ["t"]) for c in ("c2", "a", "c10", "C3")])
    assert got["C3"] == [("t", 0)] and got["a"] == [("t", 1)] and got["c10"] == [("t", 2)] and got["c2"] == [("t", 3)]


# ---------------------------------------------------------------- RangeAssignorTest

def test_range_testOneConsumerNonexistentTopic():
    assert run("range", {}, [member("consumer", ["topic"])]) == {"consumer": []}


def test_range_testOnlyAssignsPartitionsFromSubscribedTopics():
    got = run("range", {"topic": 3, "other": 3}, [member("consumer", ["topic"])])
    assert got == {"consumer": tps(("topic", 0), ("topic", 1), ("topic", 2))}


def test_range_testMultipleConsumersMixedTopics():
    got = run("range", {"topic1": 3, "topic2": 2},
              [member("consumer1", ["topic1"]), member("consumer2", ["topic1", "topic2"]), member("consumer3", ["topic1"])])
    assert got == {"consumer1": tps(("topic1", 0)), "consumer2": tps(("topic1", 1), ("topic2", 0), ("topic2", 1)),
                   "consumer3": tps(("topic1", 2))}


def test_range_testTwoConsumersTwoTopicsSixPartitions():
    got = run("range", {"topic1": 3, "topic2": 3},
              [member("consumer1", ["topic1", "topic2"]), member("consumer2", ["topic1", "topic2"])])
    assert got == {"consumer1": tps(("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)),
                   "consumer2": tps(("topic1", 2), ("topic2", 2))}


def test_range_testTwoStaticConsumersTwoTopicsSixPartitions():
    got = run("range", {"topic1": 3, "topic2": 3},
              [member("consumer-b", ["topic1", "topic2"], instance_id="instance1"),
               member("consumer-a", ["topic1", "topic2"], instance_id="instance2")])
    assert got["consumer-b"] == tps(("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1))
    assert got["consumer-a"] == tps(("topic1", 2), ("topic2", 2))


def test_range_testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions():
    got = run("range", {"topic1": 3, "topic2": 3},
              [member("consumer-b", ["topic1", "topic2"], instance_id="instance1"),
               member("consumer-a", ["topic1", "topic2"])])
    assert got["consumer-b"] == tps(("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1))


def test_range_testStaticMemberRangeAssignmentPersistent():
    statics = [member(f"consumer{i}", ["topic1", "topic2"], instance_id=f"instance{i}") for i in (1, 2, 3)]
    for dynamic in ("consumer4", "consumer5"):
        got = run("range", {"topic1": 5, "topic2": 4}, statics + [member(dynamic, ["topic1", "topic2"])])
        assert got["consumer1"] == tps(("topic1", 0), ("topic1", 1), ("topic2", 0))
        assert got["consumer2"] == tps(("topic1", 2), ("topic2", 1))
        assert got["consumer3"] == tps(("topic1", 3), ("topic2", 2))
        assert got[dynamic] == tps(("topic1", 4), ("topic2", 3))


def test_range_across_topics_is_unbalanced_by_contract():
    # assignors.md item 2: a{x,y}, b{x}, c{y}, 3 partitions each -> 4, 1, 1
    got = run("range", {"x": 3, "y": 3}, [member("a", ["x", "y"]), member("b", ["x"]), member("c", ["y"])])
    assert [len(got[m]) for m in ("a", "b", "c")] == [4, 1, 1]


# ---------------------------------------------------------------- RoundRobinAssignorTest

def test_roundrobin_testMultipleConsumersMixedTopics():
    got = run("roundrobin", {"topic1": 3, "topic2": 2},
              [member("consumer1", ["topic1"]), member("consumer2", ["topic1", "topic2"]), member("consumer3", ["topic1"])])
    assert got == {"consumer1": tps(("topic1", 0)), "consumer2": tps(("topic1", 1), ("topic2", 0), ("topic2", 1)),
                   "consumer3": tps(("topic1", 2))}


def test_roundrobin_testTwoStaticConsumersTwoTopicsSixPartitions():
    got = run("roundrobin", {"topic1": 3, "topic2": 3},
              [member("consumer-b", ["topic1", "topic2"], instance_id="instance1"),
               member("consumer-a", ["topic1", "topic2"], instance_id="instance2")])
    assert got["consumer-b"] == tps(("topic1", 0), ("topic1", 2), ("topic2", 1))
    assert got["consumer-a"] == tps(("topic1", 1), ("topic2", 0), ("topic2", 2))


def test_roundrobin_testStaticMemberRoundRobinAssignmentPersistent():
    statics = [member(f"consumer{i}", ["topic1", "topic2"], instance_id=f"instance{i}") for i in (1, 2, 3)]
    for dynamic in ("consumer4", "consumer5"):
        got = run("roundrobin", {"topic1": 3, "topic2": 3}, statics + [member(dynamic, ["topic1", "topic2"])])
        assert got == {"consumer1": tps(("topic1", 0), ("topic2", 1)), "consumer2": tps(("topic1", 1), ("topic2", 2)),
                       "consumer3": tps(("topic1", 2)), dynamic: tps(("topic2", 0))}


# ---------------------------------------------------------------- AbstractStickyAssignorTest (StickyAssignor)

def test_sticky_testConsumerOwningMinQuotaExpectedMaxQuota():
    topics = ["topic1", "topic2"]
    got = run("sticky", {"topic1": 2, "topic2": 3},
              [member("consumer1", topics, [["topic1", 0], ["topic2", 1]], 1),
               member("consumer2", topics, [["topic1", 1], ["topic2", 2]], 1)])
    assert got == {"consumer1": tps(("topic1", 0), ("topic2", 0), ("topic2", 1)),
                   "consumer2": tps(("topic1", 1), ("topic2", 2))}


def test_sticky_testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers():
    topics = ["topic1", "topic2"]
    members = [member("consumer1", topics, [["topic1", 0], ["topic2", 0]], 1),
               member("consumer2", topics, [["topic1", 1], ["topic2", 1]], 1),
               member("consumer3", topics, [], 1)]
    got = run("sticky", {"topic1": 2, "topic2": 2}, members)
    assert got == {"consumer1": tps(("topic1", 0)), "consumer2": tps(("topic1", 1), ("topic2", 1)),
                   "consumer3": tps(("topic2", 0))}
    # cooperative: topic2-0 changes owner, so it is withheld this round
    coop = run("cooperative-sticky", {"topic1": 2, "topic2": 2}, members)
    assert coop["consumer3"] == [] and coop["consumer1"] == tps(("topic1", 0))


def test_sticky_testAllConsumersAreUnderMinQuota():
    topics = ["topic1", "topic2"]
    got = run("sticky", {"topic1": 2, "topic2": 3},
              [member("consumer1", topics, [["topic1", 0]], 1), member("consumer2", topics, [["topic1", 1]], 1),
               member("consumer3", topics, [], 1)])
    assert got == {"consumer1": tps(("topic1", 0), ("topic2", 1)), "consumer2": tps(("topic1", 1), ("topic2", 2)),
                   "consumer3": tps(("topic2", 0))}


def test_sticky_testAllConsumersReachExpectedQuotaAndAreConsideredFilled():
    got = run("sticky", {"topic": 4},
              [member("consumer1", ["topic"], [["topic", 0], ["topic", 1]], 1),
               member("consumer2", ["topic"], [["topic", 2]], 1), member("consumer3", ["topic"], [], 1)])
    assert got == {"consumer1": tps(("topic", 0), ("topic", 1)), "consumer2": tps(("topic", 2)),
                   "consumer3": tps(("topic", 3))}


@pytest.mark.parametrize("stale", [9, None])  # ...WithStaleGeneration / ...WithNoGeneration
def test_sticky_testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration(stale):
    owned = [["topic", 0], ["topic", 2], ["topic2", 1]]
    got = run("sticky", {"topic": 3, "topic2": 3},
              [member("consumer1", ["topic", "topic2"], owned, 10),
               member("consumer2", ["topic", "topic2"], owned, stale)])
    assert got == {"consumer1": tps(("topic", 0), ("topic", 2), ("topic2", 1)),
                   "consumer2": tps(("topic", 1), ("topic2", 0), ("topic2", 2))}


def test_sticky_testEnsurePartitionsAssignedToHighestGeneration():
    topics = ["topic", "topic2", "topic3"]
    got = run("sticky", {t: 3 for t in topics},
              [member("consumer1", topics, [["topic", 0], ["topic2", 0], ["topic3", 0]], 10),
               member("consumer2", topics, [["topic", 1], ["topic2", 1], ["topic3", 1]], 9),
               member("consumer3", topics, [["topic2", 1], ["topic3", 0], ["topic3", 2]], 8)])
    assert got == {"consumer1": tps(("topic", 0), ("topic2", 0), ("topic3", 0)),
                   "consumer2": tps(("topic", 1), ("topic2", 1), ("topic3", 1)),
                   "consumer3": tps(("topic", 2), ("topic2", 2), ("topic3", 2))}


def test_sticky_testNoReassignmentOnCurrentMembers():
    topics = ["topic", "topic2", "topic3", "topic1"]
    got = run("sticky", {t: 3 for t in topics},
              [member("consumer1", topics, [], -1),
               member("consumer2", topics, [["topic", 0], ["topic2", 0], ["topic1", 0]], 9),
               member("consumer3", topics, [["topic3", 2], ["topic2", 2], ["topic1", 1]], 8),
               member("consumer4", topics, [["topic3", 1], ["topic", 1], ["topic", 2]], 7)])
    assert got["consumer1"] == tps(("topic1", 2), ("topic2", 1), ("topic3", 0))


def test_sticky_testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration():
    got = run("sticky", {"topic": 3, "topic2": 3},
              [member("consumer1", ["topic", "topic2"], [["topic", 0], ["topic2", 1], ["topic", 1]], 10),
               member("consumer2", ["topic", "topic2"], [["topic", 0], ["topic2", 1], ["topic2", 2]], 8)])
    assert got == {"consumer1": tps(("topic", 0), ("topic", 1), ("topic2", 1)),
                   "consumer2": tps(("topic", 2), ("topic2", 0), ("topic2", 2))}


def test_sticky_testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration():
    # StickyAssignorTest and CooperativeStickyAssignorTest ...WithEqualPartitionsPerConsumer
    members = [member("consumer1", ["topic"], [["topic", 0], ["topic", 1]], 1),
               member("consumer2", ["topic"], [["topic", 0], ["topic", 2]], 1), member("consumer3", ["topic"], [], 1)]
    assert run("sticky", {"topic": 3}, members) == {"consumer1": tps(("topic", 1)), "consumer2": tps(("topic", 2)),
                                                    "consumer3": tps(("topic", 0))}
    coop = run("cooperative-sticky", {"topic": 3}, members)
    assert coop == {"consumer1": tps(("topic", 1)), "consumer2": tps(("topic", 2)), "consumer3": []}


def test_sticky_testSubscriptionNotEqualAndAssignSamePartitionWith3Generation():
    for g in ([1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1]):
        got = run("sticky", {"topic": 6, "topic1": 1},
                  [member("consumer1", ["topic"], [["topic", 0], ["topic", 2]], g[0]),
                   member("consumer2", ["topic"], [["topic", 1], ["topic", 2], ["topic", 3]], g[1]),
                   member("consumer3", ["topic"], [["topic", 2], ["topic", 4], ["topic", 5]], g[2]),
                   member("consumer4", ["topic1"], [["topic1", 0]], 2)])
        flat = [tp for v in got.values() for tp in v]
        assert len(flat) == len(set(flat)) == 7
        assert all(1 <= len(v) <= 2 for v in got.values())


# ---------------------------------------------------------------- Kafka's weaknesses, reproduced

def test_sticky_ghost_partition_beyond_topic_count_is_kept_and_doubles_an_assignment():
    # assignors.md item 8: owned partition numbers beyond the current count (topic re-created
    # smaller): the ghost is kept, and getUnassignedPartitions' merge walk loses its place
    got = run("sticky", {"t0": 2, "t1": 2},
              [member("a", ["t0", "t1"], [["t0", 5]], 2), member("b", ["t0", "t1"], [["t1", 0]], 2)])
    assert ("t0", 5) in got["a"]
    assert ("t1", 0) in got["a"] and ("t1", 0) in got["b"]


def test_sticky_member_subscribed_to_nothing_first_in_hash_order_gets_partitions():
    # allSubscriptionsEqual re-initialises its topic set while it is empty
    assert hashmap_order(["c0", "C3"]) == ["C3", "c0"]
    got = run("sticky", {"t0": 1}, [member("c0", ["t0"], [], 1), member("C3", [], [], 1)])
    assert got["C3"] == [("t0", 0)]


def test_sticky_crash_is_an_error_answer_not_an_exception():
    answer = assign({"id": 7, "assignor": "sticky", "topics": {"t0": 2},
                     "members": [member("a", ["t0"], [["t0", 5], ["t0", 6]], 1), member("b", ["t0"], [["t0", 4]], 1)]})
    assert answer == {"id": 7, "error": "IllegalStateException: No more unfilled consumers to be assigned."}


# ---------------------------------------------------------------- Java hashing

def test_java_string_hash_matches_known_values():
    assert string_hash("") == 0
    assert string_hash("a") == 97
    assert string_hash("hello") == 99162322
    assert string_hash("polygenelubricants") == -2147483648  # the famous Integer.MIN_VALUE hash
    assert topic_partition_hash(("a", 0)) == 31 * 31 + 97


def test_hashmap_order_follows_buckets_then_insertion():
    assert hashmap_order(["b", "a", "c"]) == ["a", "b", "c"]      # buckets 1, 2, 3 of 16
    assert hashmap_order(["consumer2", "consumer1"]) == hashmap_order(["consumer1", "consumer2"])


# ---------------------------------------------------------------- format

def test_every_member_appears_and_answer_keeps_input_order():
    answer = assign({"id": "p1", "assignor": "range", "topics": {"t0": 3, "t1": 2},
                     "members": [member("c1", ["t0"]), member("c0", ["t0", "t1"], [["t0", 0]], 5), member("z", [])]})
    assert list(answer["assignment"]) == ["c1", "c0", "z"]
    assert answer["assignment"]["z"] == []


@pytest.mark.parametrize("bad, fragment", [
    ({"id": 1, "assignor": "range", "topics": {"t": -1}, "members": []}, "non-negative"),
    ({"id": 1, "assignor": "range", "topics": {}, "members": [{"id": "a"}, {"id": "a"}]}, "duplicate member"),
    ({"id": 1, "assignor": "range", "topics": {}, "members": [{"id": "a", "owned": [["t"]]}]}, "[topic, number]"),
    ({"id": 1, "assignor": "nope", "topics": {}, "members": []}, "unknown assignor"),
    ({"id": 1, "topics": {}, "members": []}, "no assignor"),
    ([1, 2], "JSON object"),
])
def test_malformed_problems_get_one_line_errors(bad, fragment):
    answer = assign(bad)
    assert fragment in answer["error"] and "\n" not in answer["error"]


def test_parse_problem_raises_problem_error():
    with pytest.raises(ProblemError):
        parse_problem({"members": "x"})


def test_builtin_names_and_solve():
    assert names() == ["range", "roundrobin", "sticky", "cooperative-sticky", "legacy-range"]
    p = parse_problem({"id": 1, "topics": {"t": 5}, "members": [member("a", ["t"]), member("b", ["t"])]})
    assert solve(p, "legacy-range") == {"a": [("t", 0), ("t", 1), ("t", 2)], "b": [("t", 3), ("t", 4)]}


def test_sticky_javadoc_example_1_and_what_the_code_does_after_c1_leaves():
    # StickyAssignor javadoc example 1 (3 consumers, t0..t3 of 2 partitions): the initial answer is
    # the javadoc's; after C1 leaves the code moves t0-1 to C0 and t2-0 to C2 (assignors.md item 9),
    # the opposite of the javadoc, equally balanced and sticky
    topics = {f"t{i}": 2 for i in range(4)}
    first = run("sticky", topics, [member(c, list(topics)) for c in ("C0", "C1", "C2")])
    assert first == {"C0": tps(("t0", 0), ("t1", 1), ("t3", 0)), "C1": tps(("t0", 1), ("t2", 0), ("t3", 1)),
                     "C2": tps(("t1", 0), ("t2", 1))}
    second = run("sticky", topics, [member(c, list(topics), [list(tp) for tp in first[c]], 1) for c in ("C0", "C2")])
    assert second == {"C0": tps(("t0", 0), ("t0", 1), ("t1", 1), ("t3", 0)),
                      "C2": tps(("t1", 0), ("t2", 0), ("t2", 1), ("t3", 1))}
