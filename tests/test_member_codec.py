"""The member's subscription/assignment encoding and the leader's translation to assignor problems."""
import pytest

from kverify.impl.coordinator.messages import JoinGroupMember, TopicPartition as TP
from kverify.impl.member.codec import (CodecError, decode_assignment, decode_subscription,
                                       encode_assignment, encode_subscription)
from kverify.impl.member.leader import LeaderError, build_problem, perform_assignment


def test_subscription_round_trip_is_sorted_and_deterministic():
    a = encode_subscription(("t1", "t0"), [TP("t1", 2), TP("t0", 1)], 7, ((TP("t0", 1),), 6))
    b = encode_subscription(("t1", "t0"), [TP("t0", 1), TP("t1", 2)], 7, ((TP("t0", 1),), 6))
    assert a == b == b"S2|t1,t0|t0:1,t1:2|7|t0:1@6"
    sub = decode_subscription(a)
    assert sub.topics == ("t1", "t0")
    assert sub.owned == (TP("t0", 1), TP("t1", 2))
    assert sub.generation == 7
    assert sub.user_data == ((TP("t0", 1),), 6)


def test_subscription_of_a_new_member():
    sub = decode_subscription(encode_subscription(("t",), (), -1))
    assert sub == (("t",), (), -1, None)


def test_topic_names_with_dashes_and_dots_survive():
    sub = decode_subscription(encode_subscription(("my-topic.v2",), [TP("my-topic.v2", 10)], 3))
    assert sub.owned == (TP("my-topic.v2", 10),)


def test_assignment_round_trip_and_minimum_length():
    data = encode_assignment([TP("b", 0), TP("a", 3)])
    assert data == b"A0|a:3,b:0"
    assert decode_assignment(data) == (TP("a", 3), TP("b", 0))
    assert decode_assignment(encode_assignment(())) == ()
    assert len(encode_assignment(())) >= 2          # Kafka's client rejects shorter buffers


@pytest.mark.parametrize("bad", [b"", b"A1|a:0", b"A0|a", b"A0|a:x", b"\xff\xfe"])
def test_bad_assignments_are_rejected(bad):
    with pytest.raises(CodecError):
        decode_assignment(bad)


@pytest.mark.parametrize("bad", [b"", b"S2|t||x|", b"S1|t||1|", b"S2|t|t:0|1|t:0"])
def test_bad_subscriptions_are_rejected(bad):
    with pytest.raises(CodecError):
        decode_subscription(bad)


def _jm(mid, topics, owned=(), gen=-1, ud=None, inst=None):
    return JoinGroupMember(mid, inst, encode_subscription(topics, owned, gen, ud))


def test_problem_uses_v2_owned_and_generation_for_cooperative():
    members = [_jm("a", ("t",), [TP("t", 0)], 4), _jm("b", ("t", "gone"), inst="i-b")]
    p = build_problem("x", "cooperative-sticky", members, {"t": 2, "other": 5})
    assert p["topics"] == {"t": 2}                   # only subscribed topics that exist
    assert p["members"][0] == {"id": "a", "topics": ["t"], "owned": [["t", 0]], "generation": 4,
                               "instance_id": None}
    assert p["members"][1]["owned"] is None and p["members"][1]["generation"] is None
    assert p["members"][1]["instance_id"] == "i-b"


def test_problem_for_eager_sticky_reads_the_user_data():
    members = [_jm("a", ("t",), (), 5, ((TP("t", 1),), 5)), _jm("b", ("t",), (), 5)]
    p = build_problem("x", "sticky", members, {"t": 2})
    assert p["members"][0]["owned"] == [["t", 1]] and p["members"][0]["generation"] == 5
    assert p["members"][1]["owned"] is None


def test_leader_runs_the_selected_assignor():
    members = [_jm("c0", ("t1",)), _jm("c1", ("t1",)), _jm("c2", ("t1",))]
    out = dict(perform_assignment("g", 1, "c0", "range", members, {"t1": 4}))
    # Kafka's RangeAssignor seed example: c0:[p0,p1], c1:[p2], c2:[p3]
    assert decode_assignment(out["c0"]) == (TP("t1", 0), TP("t1", 1))
    assert decode_assignment(out["c1"]) == (TP("t1", 2),)
    assert decode_assignment(out["c2"]) == (TP("t1", 3),)


def test_leader_reports_an_unknown_assignor_and_garbage_metadata():
    with pytest.raises(LeaderError):
        perform_assignment("g", 1, "c0", "no-such", [_jm("c0", ("t",))], {"t": 1})
    with pytest.raises(LeaderError):
        perform_assignment("g", 1, "c0", "range", [JoinGroupMember("c0", None, b"junk")], {"t": 1})
