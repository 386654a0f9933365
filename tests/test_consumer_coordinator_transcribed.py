"""GroupMetadataManagerTest.testReconciliationProcess (Kafka 1eb7644349cb), step by step: a group at
epoch 10 with two members, a third joins with a prepared assignment (MockPartitionAssignor), and the
partitions move only as their owners acknowledge the revocations."""
from kverify.impl.consumer.assignor_port import PreparedAssignor
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from kverify.impl.consumer.group_member import ConsumerGroupMember, MemberState as S
from kverify.impl.consumer.messages import ConsumerGroupHeartbeatRequest as HB, TopicPartitions as TPs
from kverify.impl.consumer.topics import topic_id_for

FOO, BAR = topic_id_for("foo"), topic_id_for("bar")


def mk(foo=(), bar=()):
    return frozenset([(FOO, p) for p in foo] + [(BAR, p) for p in bar])


def tps(foo=(), bar=()):
    return tuple(t for t in (TPs(FOO, tuple(foo)) if foo else None, TPs(BAR, tuple(bar)) if bar else None) if t)


def stable_member(mid, assigned):
    return ConsumerGroupMember(mid, client_id="client", client_host="/127.0.0.1", rebalance_timeout_ms=5000,
                               subscribed_topic_names=("bar", "foo"), server_assignor_name="range",
                               state=S.STABLE, member_epoch=10, previous_member_epoch=9, assigned=assigned)


def context():
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(assignors={"range": a}, topics={"foo": 6, "bar": 3})
    c.seed_group("fooup", 10, [stable_member("m1", mk((0, 1, 2), (0, 1))), stable_member("m2", mk((3, 4, 5), (2,)))],
                 targets={"m1": mk((0, 1, 2), (0, 1)), "m2": mk((3, 4, 5), (2,))}, assignment_epoch=10)
    a.prepare({"m1": {FOO: {0, 1}, BAR: {0}}, "m2": {FOO: {2, 3}, BAR: {2}}, "m3": {FOO: {4, 5}, BAR: {1}}})
    return c


def hb(c, mid, epoch, owned=None, **kw):
    r = c.handle(HB("fooup", mid, epoch, topic_partitions=owned, **kw))[0].response
    return (r.error, r.member_id, r.member_epoch, r.heartbeat_interval_ms, r.assignment)


def state(c, mid):
    m = c.group("fooup").member(mid)
    return (m.state, m.member_epoch, m.previous_member_epoch, m.assigned, m.pending_revocation)


def test_reconciliation_process():
    c = context()
    assert c.group("fooup").state == "Stable"
    # Member 3 joins: new target at epoch 11; nothing free yet -> UNRELEASED_PARTITIONS at 11.
    assert hb(c, "m3", 0, owned=(), rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"),
              server_assignor="range") == ("NONE", "m3", 11, 5000, ())
    assert state(c, "m3") == (S.UNRELEASED_PARTITIONS, 11, 0, mk(), mk())
    assert c.group("fooup").state == "Reconciling"
    # Member 1 stays at 10, must revoke foo-2 and bar-1.
    assert hb(c, "m1", 10) == ("NONE", "m1", 10, 5000, tps((0, 1), (0,)))
    assert state(c, "m1") == (S.UNREVOKED_PARTITIONS, 10, 10, mk((0, 1), (0,)), mk((2,), (1,)))
    # Member 2 stays at 10, must revoke foo-4 and foo-5.
    assert hb(c, "m2", 10) == ("NONE", "m2", 10, 5000, tps((3,), (2,)))
    assert state(c, "m2") == (S.UNREVOKED_PARTITIONS, 10, 10, mk((3,), (2,)), mk((4, 5)))
    # Member 3 still waits: no assignment in the answer.
    assert hb(c, "m3", 11) == ("NONE", "m3", 11, 5000, None)
    assert state(c, "m3") == (S.UNRELEASED_PARTITIONS, 11, 11, mk(), mk())
    # Member 1 acknowledges: epoch 11, Stable (no assignment in the answer: unchanged).
    assert hb(c, "m1", 10, owned=tps((0, 1), (0,))) == ("NONE", "m1", 11, 5000, None)
    assert state(c, "m1") == (S.STABLE, 11, 10, mk((0, 1), (0,)), mk())
    assert c.group("fooup").state == "Reconciling"
    # Member 2 heartbeats without acknowledging: nothing changes.
    before = c.group("fooup")
    assert hb(c, "m2", 10) == ("NONE", "m2", 10, 5000, None)
    assert c.group("fooup") == before
    # Member 3 gets bar-1 (released by member 1), still waits for foo-4/5.
    assert hb(c, "m3", 11) == ("NONE", "m3", 11, 5000, tps((), (1,)))
    assert state(c, "m3") == (S.UNRELEASED_PARTITIONS, 11, 11, mk((), (1,)), mk())
    before = c.group("fooup")
    assert hb(c, "m3", 11) == ("NONE", "m3", 11, 5000, None)
    assert c.group("fooup") == before
    # Member 2 acknowledges: epoch 11 and gets foo-2 (released by member 1).
    assert hb(c, "m2", 10, owned=tps((3,), (2,))) == ("NONE", "m2", 11, 5000, tps((2, 3), (2,)))
    assert state(c, "m2") == (S.STABLE, 11, 10, mk((2, 3), (2,)), mk())
    # Member 3 acknowledges bar-1 and gets foo-4/5: the group is Stable.
    assert hb(c, "m3", 11, owned=tps((), (1,))) == ("NONE", "m3", 11, 5000, tps((4, 5), (1,)))
    assert state(c, "m3") == (S.STABLE, 11, 11, mk((4, 5), (1,)), mk())
    assert c.group("fooup").state == "Stable"


def test_new_member_is_rejected_when_maximum_members_is_reached():
    from kverify.impl.consumer.config import ConsumerCoordinatorConfig
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(ConsumerCoordinatorConfig(max_size=2), assignors={"range": a},
                                 topics={"foo": 6, "bar": 3})
    c.seed_group("fooup", 10, [stable_member("m1", mk((0, 1, 2), (0, 1))), stable_member("m2", mk((3, 4, 5), (2,)))],
                 targets={"m1": mk((0, 1, 2), (0, 1)), "m2": mk((3, 4, 5), (2,))})
    assert hb(c, "m3", 0, owned=(), rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"),
              server_assignor="range")[0] == "GROUP_MAX_SIZE_REACHED"


def test_static_member_gets_back_assignment_upon_rejoin():
    """GroupMetadataManagerTest.testStaticMemberGetsBackAssignmentUponRejoin."""
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(assignors={"range": a}, topics={"foo": 6, "bar": 3})
    m1 = stable_member("m1", mk((0, 1, 2), (0, 1)))._replace(instance_id="m1")
    m2 = stable_member("m2", mk((3, 4, 5), (2,)))._replace(instance_id="m2")
    c.seed_group("fooup", 10, [m1, m2], targets={"m1": m1.assigned, "m2": m2.assigned})
    # Member 2 leaves temporarily: epoch -2, nothing else changes.
    assert hb(c, "m2", -2, owned=(), instance_id="m2", subscribed_topic_names=("foo", "bar")) == (
        "NONE", "m2", -2, 0, None)
    assert c.group("fooup").member("m2") == m2._replace(member_epoch=-2)
    assert c.group("fooup").group_epoch == 10
    # It rejoins with a new member id and the same instance id: same partitions, epoch 10.
    assert hb(c, "m2-rejoin", 0, owned=(), instance_id="m2", server_assignor="range",
              subscribed_topic_names=("foo", "bar"), rebalance_timeout_ms=5000) == (
        "NONE", "m2-rejoin", 10, 5000, tps((3, 4, 5), (2,)))
    g = c.group("fooup")
    assert g.member("m2") is None and dict(g.static_members)["m2"] == "m2-rejoin"
    assert state(c, "m2-rejoin") == (S.STABLE, 10, 0, mk((3, 4, 5), (2,)), mk())
    assert g.target_of("m2-rejoin") == mk((3, 4, 5), (2,)) and g.group_epoch == 10
    assert dict(g.partition_epochs)[(FOO, 3)] == 10


def test_consumer_group_states():
    """GroupMetadataManagerTest.testConsumerGroupStates, replaying the records onto ConsumerGroup."""
    from kverify.impl.consumer.group import ConsumerGroup
    g = ConsumerGroup("fooup")
    g.group_epoch = g.assignment_epoch = 10
    assert g.state == "Empty"
    g.update_member(ConsumerGroupMember("m1", subscribed_topic_names=("foo",)))
    g.group_epoch = 11
    assert g.state == "Assigning"
    g.set_target("m1", mk((1, 2, 3)))
    g.assignment_epoch = 11
    assert g.state == "Reconciling"
    g.update_member(ConsumerGroupMember("m1", subscribed_topic_names=("foo",), state=S.UNREVOKED_PARTITIONS,
                                        member_epoch=11, previous_member_epoch=10, assigned=mk((1, 2, 3))))
    assert g.state == "Reconciling"
    g.update_member(ConsumerGroupMember("m1", subscribed_topic_names=("foo",), state=S.STABLE,
                                        member_epoch=11, previous_member_epoch=10, assigned=mk((1, 2, 3))))
    assert g.state == "Stable"


def test_consumer_group_member_epoch_validation_for_static_member():
    """GroupMetadataManagerTest.testConsumerGroupMemberEpochValidationForStaticMember."""
    c = ConsumerGroupCoordinator(assignors={"range": PreparedAssignor("range")}, topics={"foo": 6, "bar": 3})
    m = ConsumerGroupMember("m", instance_id="m", rebalance_timeout_ms=5000, subscribed_topic_names=("bar", "foo"),
                            server_assignor_name="range", state=S.STABLE, member_epoch=100,
                            previous_member_epoch=99, assigned=mk((1, 2, 3)))
    c.seed_group("fooup", 100, [m], targets={"m": mk((1, 2, 3))})
    common = dict(instance_id="m", rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"))
    assert hb(c, "m", 200, **common)[0] == "FENCED_MEMBER_EPOCH"
    assert hb(c, "m", 50, **common)[0] == "FENCED_MEMBER_EPOCH"
    assert hb(c, "m", 99, **common)[0] == "FENCED_MEMBER_EPOCH"            # previous epoch, no partitions
    assert hb(c, "m", 99, owned=tps((1, 2)), **common)[:3] == ("NONE", "m", 100)


def test_unknown_static_member_leaving_is_unknown_member_id():
    """GroupMetadataManagerTest.testShouldThrowUnknownMemberIdExceptionWhenUnknownStaticMemberLeaves and
    ...FencedInstanceIdExceptionWhenStaticMemberWithDifferentMemberIdLeaves."""
    c = ConsumerGroupCoordinator(assignors={"range": PreparedAssignor("range")}, topics={"foo": 6})
    m = stable_member("m1", mk((0, 1, 2)))._replace(instance_id="m1")
    c.seed_group("fooup", 10, [m], targets={"m1": mk((0, 1, 2))})
    assert hb(c, "m1", -2, owned=(), instance_id="unknown-m1")[0] == "UNKNOWN_MEMBER_ID"
    assert hb(c, "other", -2, owned=(), instance_id="m1")[0] == "FENCED_INSTANCE_ID"
    assert c.group("fooup").member("m1") == m
