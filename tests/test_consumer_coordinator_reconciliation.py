"""Transcriptions of Kafka's CurrentAssignmentBuilderTest (group-coordinator, modern/consumer) onto
kverify.impl.consumer.reconciliation.reconcile: same member, target, partition epochs and owned
partitions; the same expected member. Topic ids are two opaque strings (the builder never decodes them)."""
import pytest

from kverify.impl.consumer.group_member import ConsumerGroupMember, MemberState as S
from kverify.impl.consumer.reconciliation import FencedMemberEpoch, reconcile

T1, T2 = "topic1-id", "topic2-id"
SUBSCRIBED = frozenset({T1, T2})


def mk(**parts):
    """mk(t1=(1, 2), t2=(4,)) -> frozenset of (topic_id, partition)."""
    ids = {"t1": T1, "t2": T2}
    return frozenset((ids[k], p) for k, ps in parts.items() for p in ps)


def member(state, epoch, prev, assigned, pending=frozenset()):
    return ConsumerGroupMember("member", subscribed_topic_names=("topic1", "topic2"), state=state,
                               member_epoch=epoch, previous_member_epoch=prev, assigned=assigned,
                               pending_revocation=pending)


def epochs(value):
    return lambda tp: value


def test_stable_to_stable():
    m = member(S.STABLE, 10, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))
    got = reconcile(m, 11, mk(t1=(1, 2, 3), t2=(4, 5, 6)), epochs(10), None, SUBSCRIBED)
    assert got == member(S.STABLE, 11, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))


def test_stable_to_stable_with_new_partitions():
    m = member(S.STABLE, 10, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))
    got = reconcile(m, 11, mk(t1=(1, 2, 3, 4), t2=(4, 5, 6, 7)), epochs(-1), None, SUBSCRIBED)
    assert got == member(S.STABLE, 11, 10, mk(t1=(1, 2, 3, 4), t2=(4, 5, 6, 7)))


def test_stable_to_unrevoked_partitions():
    m = member(S.STABLE, 10, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))
    got = reconcile(m, 11, mk(t1=(2, 3, 4), t2=(5, 6, 7)), epochs(-1), None, SUBSCRIBED)
    assert got == member(S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(2, 3), t2=(5, 6)), mk(t1=(1,), t2=(4,)))


def test_stable_to_unreleased_partitions():
    m = member(S.STABLE, 10, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))
    got = reconcile(m, 11, mk(t1=(1, 2, 3, 4), t2=(4, 5, 6, 7)), epochs(10), None, SUBSCRIBED)
    assert got == member(S.UNRELEASED_PARTITIONS, 11, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))


def test_stable_to_unreleased_with_owned_partitions_not_having_revoked_partitions():
    m = member(S.STABLE, 10, 10, mk(t1=(1, 2, 3), t2=(4, 5, 6)))
    got = reconcile(m, 11, mk(t1=(1, 2, 3), t2=(4, 5, 7)),
                    lambda tp: 10 if tp[0] == T2 else -1, frozenset(), SUBSCRIBED)
    assert got == member(S.UNRELEASED_PARTITIONS, 11, 10, mk(t1=(1, 2, 3), t2=(4, 5)))


def test_unrevoked_partitions_to_stable():
    m = member(S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(2, 3), t2=(5, 6)), mk(t1=(1,), t2=(4,)))
    got = reconcile(m, 11, mk(t1=(2, 3), t2=(5, 6)), epochs(-1), mk(t1=(2, 3), t2=(5, 6)), SUBSCRIBED)
    assert got == member(S.STABLE, 11, 10, mk(t1=(2, 3), t2=(5, 6)))


@pytest.mark.parametrize("owned", [None, mk(t1=(1, 2, 3), t2=(5, 6)), mk(t1=(2, 3), t2=(4, 5, 6))])
def test_remains_in_unrevoked_partitions(owned):
    m = member(S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(2, 3), t2=(5, 6)), mk(t1=(1,), t2=(4,)))
    assert reconcile(m, 12, mk(t1=(3,), t2=(6,)), epochs(-1), owned, SUBSCRIBED) == m


def test_unrevoked_partitions_to_unrevoked_partitions():
    """After KAFKA-19974: the epoch stays 10 (it was bumped to 11 before)."""
    m = member(S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(2, 3), t2=(5, 6)), mk(t1=(1,), t2=(4,)))
    got = reconcile(m, 12, mk(t1=(3,), t2=(6,)), epochs(-1), mk(t1=(2, 3), t2=(5, 6)), SUBSCRIBED)
    assert got == member(S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(3,), t2=(6,)), mk(t1=(2,), t2=(5,)))


def test_unrevoked_partitions_to_unreleased_partitions():
    m = member(S.UNREVOKED_PARTITIONS, 11, 10, mk(t1=(2, 3), t2=(5, 6)))
    got = reconcile(m, 11, mk(t1=(2, 3, 4), t2=(5, 6, 7)), epochs(10), mk(t1=(2, 3), t2=(5, 6)), SUBSCRIBED)
    assert got == member(S.UNRELEASED_PARTITIONS, 11, 11, mk(t1=(2, 3), t2=(5, 6)))


def test_unrevoked_to_stable_with_returned_partitions_pending_revocation():
    """After KAFKA-19449: partition 4 pending revocation by this member is not 'unreleased'."""
    m = member(S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(2, 3), t2=(5, 6)), mk(t1=(4,)))
    owners = {(T1, 2): 10, (T1, 3): 10, (T1, 4): 10, (T2, 5): 10, (T2, 6): 10}
    got = reconcile(m, 12, mk(t1=(2, 3, 4), t2=(5, 6, 7)), lambda tp: owners.get(tp, -1),
                    mk(t1=(2, 3), t2=(5, 6)), SUBSCRIBED)
    assert got == member(S.STABLE, 12, 10, mk(t1=(2, 3, 4), t2=(5, 6, 7)))


def test_unreleased_partitions_to_stable():
    m = member(S.UNRELEASED_PARTITIONS, 11, 11, mk(t1=(2, 3), t2=(5, 6)))
    got = reconcile(m, 12, mk(t1=(2, 3), t2=(5, 6)), epochs(10), None, SUBSCRIBED)
    assert got == member(S.STABLE, 12, 11, mk(t1=(2, 3), t2=(5, 6)))


def test_unreleased_partitions_to_stable_with_new_partitions():
    m = member(S.UNRELEASED_PARTITIONS, 11, 11, mk(t1=(2, 3), t2=(5, 6)))
    got = reconcile(m, 11, mk(t1=(2, 3, 4), t2=(5, 6, 7)), epochs(-1), None, SUBSCRIBED)
    assert got == member(S.STABLE, 11, 11, mk(t1=(2, 3, 4), t2=(5, 6, 7)))


def test_unreleased_partitions_to_unreleased_partitions():
    m = member(S.UNRELEASED_PARTITIONS, 11, 11, mk(t1=(2, 3), t2=(5, 6)))
    assert reconcile(m, 11, mk(t1=(2, 3, 4), t2=(5, 6, 7)), epochs(10), None, SUBSCRIBED) == m


def test_unreleased_partitions_to_unrevoked_partitions():
    m = member(S.UNRELEASED_PARTITIONS, 11, 11, mk(t1=(2, 3), t2=(5, 6)))
    got = reconcile(m, 12, mk(t1=(3,), t2=(6,)), epochs(10), None, SUBSCRIBED)
    assert got == member(S.UNREVOKED_PARTITIONS, 11, 11, mk(t1=(3,), t2=(6,)), mk(t1=(2,), t2=(5,)))


def test_unknown_state_fences_unless_the_member_owns_nothing():
    m = member(S.UNKNOWN, 11, 11, mk(t1=(3,), t2=(6,)), mk(t1=(2,), t2=(5,)))
    with pytest.raises(FencedMemberEpoch):
        reconcile(m, 11, mk(t1=(3,), t2=(6,)), epochs(10), None, SUBSCRIBED)
    with pytest.raises(FencedMemberEpoch):
        reconcile(m, 11, mk(t1=(3,), t2=(6,)), epochs(10), mk(t1=(3,)), SUBSCRIBED)
    got = reconcile(m, 11, mk(t1=(3,), t2=(6,)), epochs(-1), frozenset(), SUBSCRIBED)
    assert got == member(S.STABLE, 11, 11, mk(t1=(3,), t2=(6,)))


def test_unsubscribed_topic_is_revoked_even_if_still_in_the_target():
    """KAFKA-19431: a topic the member no longer subscribes to counts as an empty target."""
    m = ConsumerGroupMember("member", subscribed_topic_names=("topic1",), member_epoch=10,
                            previous_member_epoch=10, assigned=mk(t1=(1,), t2=(4,)))
    got = reconcile(m, 11, mk(t1=(1,), t2=(4,)), epochs(-1), None, frozenset({T1}))
    assert (got.state, got.member_epoch, got.assigned, got.pending_revocation) == (
        S.UNREVOKED_PARTITIONS, 10, mk(t1=(1,)), mk(t2=(4,)))


def test_stable_member_strips_unsubscribed_topics_at_its_epoch_when_enforced():
    m = ConsumerGroupMember("member", subscribed_topic_names=("topic1",), member_epoch=10,
                            previous_member_epoch=9, assigned=mk(t1=(1,), t2=(4,)))
    got = reconcile(m, 10, mk(t1=(1,), t2=(4,)), epochs(10), mk(t1=(1,), t2=(4,)), frozenset({T1}),
                    enforce_consistency=True)
    assert (got.state, got.member_epoch, got.previous_member_epoch, got.assigned, got.pending_revocation) == (
        S.UNREVOKED_PARTITIONS, 10, 10, mk(t1=(1,)), mk(t2=(4,)))
    # Without enforcement a member reconciled to the target is returned as is.
    assert reconcile(m, 10, mk(t1=(1,), t2=(4,)), epochs(10), None, frozenset({T1})) == m
