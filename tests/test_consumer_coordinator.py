"""KIP-848 coordinator: ConsumerGroupHeartbeat, timers, static members, metadata changes,
ConsumerGroupDescribe, OffsetCommit/OffsetFetch. Cases follow GroupMetadataManagerTest /
OffsetMetadataManagerTest (consumer group parts) with a prepared assignor (MockPartitionAssignor)."""
import pytest

from kverify.impl.consumer.assignor_port import PreparedAssignor
from kverify.impl.consumer.config import ConsumerCoordinatorConfig
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from kverify.impl.consumer.group_member import MemberState as S
from kverify.impl.consumer.messages import (
    ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest as HB, Errors as E, OffsetAndMetadata,
    OffsetCommitRequest, OffsetFetchRequest, TopicPartition, TopicPartitions as TPs)
from kverify.impl.consumer.topics import topic_id_for

FOO, BAR = topic_id_for("foo"), topic_id_for("bar")


def coordinator(topics=None, **cfg):
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(ConsumerCoordinatorConfig(**cfg), assignors={"range": a},
                                 topics=topics or {"foo": 6, "bar": 3})
    return c, a


def join(c, mid, topics=("foo", "bar"), instance_id=None, rebalance_timeout_ms=5000, group="g"):
    return c.handle(HB(group, mid, 0, instance_id=instance_id, rebalance_timeout_ms=rebalance_timeout_ms,
                       subscribed_topic_names=tuple(topics), topic_partitions=()))[0].response


def beat(c, mid, epoch, owned=None, group="g", **kw):
    tps = None if owned is None else tuple(TPs(t, tuple(sorted(ps))) for t, ps in owned.items())
    return c.handle(HB(group, mid, epoch, topic_partitions=tps, **kw))[0].response


def parts(resp):
    return None if resp.assignment is None else {tp.topic_id: set(tp.partitions) for tp in resp.assignment}


def member(c, mid, group="g"):
    return c.group(group).member(mid)


# ---- request validation (testConsumerHeartbeatRequestValidation) ------------------------------------
@pytest.mark.parametrize("req, message", [
    (HB("", "m", 0), "GroupId can't be empty."),
    (HB("g", "m", 0, instance_id=""), "InstanceId can't be empty."),
    (HB("g", "m", 0, rack_id=""), "RackId can't be empty."),
    (HB("g", "", 1), "MemberId can't be empty."),
    (HB("g", "m", 0, subscribed_topic_names=("foo",), topic_partitions=()),
     "RebalanceTimeoutMs must be provided in first request."),
    (HB("g", "m", 0, rebalance_timeout_ms=5000, subscribed_topic_names=("foo",)),
     "TopicPartitions must be empty when (re-)joining."),
    (HB("g", "m", 0, rebalance_timeout_ms=5000, topic_partitions=()),
     "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."),
    (HB("g", "m", -2), "InstanceId can't be null."),
    (HB("g", "m", -3), "MemberEpoch is invalid."),
])
def test_invalid_heartbeats_are_invalid_request(req, message):
    c, _ = coordinator()
    resp = c.handle(req)[0].response
    assert (resp.error, resp.error_message) == (E.INVALID_REQUEST, message)
    assert c.group_ids() == []


def test_unsupported_assignor():
    c, _ = coordinator()
    resp = c.handle(HB("g", "m", 0, rebalance_timeout_ms=5000, subscribed_topic_names=("foo",),
                       topic_partitions=(), server_assignor="bar"))[0].response
    assert resp.error == E.UNSUPPORTED_ASSIGNOR


def test_unknown_group_and_unknown_member():
    c, a = coordinator()
    assert beat(c, "m", 100).error == E.GROUP_ID_NOT_FOUND
    a.prepare({"m1": {FOO: range(6)}})
    join(c, "m1")
    assert beat(c, "unknown", 1).error == E.UNKNOWN_MEMBER_ID


def test_member_joins_empty_group():
    """testMemberJoinsEmptyConsumerGroup: epoch 1, the whole target at once, group Stable."""
    c, a = coordinator()
    a.prepare({"m1": {FOO: range(6), BAR: range(3)}})
    resp = join(c, "m1")
    assert (resp.error, resp.member_id, resp.member_epoch, resp.heartbeat_interval_ms) == (E.NONE, "m1", 1, 5000)
    assert parts(resp) == {FOO: set(range(6)), BAR: set(range(3))}
    g = c.group("g")
    assert (g.state, g.group_epoch, g.assignment_epoch) == ("Stable", 1, 1)
    assert dict(g.partition_epochs) == {(t, p): 1 for t, n in ((FOO, 6), (BAR, 3)) for p in range(n)}


def test_member_id_is_generated_when_empty():
    c, a = coordinator()
    resp = join(c, "")
    assert resp.error == E.NONE and resp.member_id == "member-1"


def test_member_epoch_validation():
    """testConsumerGroupMemberEpochValidation: greater -> fenced; smaller -> fenced unless it is the
    previous epoch with owned partitions a subset of the assignment (a lost response)."""
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1, 2}}})
    join(c, "m1")                                         # epoch 1, previous 0
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {}})
    join(c, "m2")                                         # epoch 2
    assert beat(c, "m1", 1, owned={FOO: {0, 1, 2}}).member_epoch == 2     # m1: epoch 2, previous 1
    assert beat(c, "m1", 3).error == E.FENCED_MEMBER_EPOCH
    assert beat(c, "m1", 1, owned={FOO: {0, 1, 2}}).error == E.NONE     # previous epoch, subset
    assert beat(c, "m1", 1, owned={FOO: {0, 1, 2, 3}}).error == E.FENCED_MEMBER_EPOCH
    assert beat(c, "m1", 1).error == E.FENCED_MEMBER_EPOCH                 # owned not sent: not a subset
    assert member(c, "m1").member_epoch == 2                               # failed heartbeats change nothing


def test_new_member_triggers_revocation_then_assignment():
    """testNewJoiningMemberTriggersNewTargetAssignment, in two members: the new member waits
    (UNRELEASED_PARTITIONS) until the old owner acknowledges the revocation."""
    c, a = coordinator()
    a.prepare({"m1": {FOO: range(6), BAR: range(3)}})
    join(c, "m1")
    a.prepare({"m1": {FOO: {0, 1, 2}, BAR: {0, 1}}, "m2": {FOO: {3, 4, 5}, BAR: {2}}})
    resp = join(c, "m2")
    assert (resp.member_epoch, parts(resp)) == (2, {})
    assert member(c, "m2").state == S.UNRELEASED_PARTITIONS
    assert c.group("g").state == "Reconciling"
    # m1 still owns everything: revocation requested at its current epoch.
    resp = beat(c, "m1", 1, owned={FOO: range(6), BAR: range(3)})
    assert (resp.member_epoch, parts(resp)) == (1, {FOO: {0, 1, 2}, BAR: {0, 1}})
    m1 = member(c, "m1")
    assert (m1.state, m1.pending_revocation) == (S.UNREVOKED_PARTITIONS, frozenset(
        {(FOO, 3), (FOO, 4), (FOO, 5), (BAR, 2)}))
    # m2 heartbeats: still unreleased, nothing new (no assignment in the response).
    assert parts(beat(c, "m2", 2)) is None
    # m1 acknowledges the revocation: moves to the target epoch.
    resp = beat(c, "m1", 1, owned={FOO: {0, 1, 2}, BAR: {0, 1}})
    assert (resp.member_epoch, member(c, "m1").state) == (2, S.STABLE)
    # Now m2 gets the released partitions.
    resp = beat(c, "m2", 2)
    assert parts(resp) == {FOO: {3, 4, 5}, BAR: {2}}
    assert c.group("g").state == "Stable"
    assert dict(c.group("g").partition_epochs)[(FOO, 3)] == 2


def test_updating_subscription_triggers_new_target_assignment():
    c, a = coordinator()
    a.prepare({"m1": {FOO: range(6)}})
    join(c, "m1", topics=("foo",))
    a.prepare({"m1": {FOO: range(6), BAR: range(3)}})
    resp = beat(c, "m1", 1, subscribed_topic_names=("foo", "bar"))
    assert (resp.member_epoch, parts(resp)) == (2, {FOO: set(range(6)), BAR: set(range(3))})
    assert c.group("g").group_epoch == 2 and a.calls == 2
    # The same subscription again does not bump the epoch.
    beat(c, "m1", 2, subscribed_topic_names=("bar", "foo"))
    assert c.group("g").group_epoch == 2 and a.calls == 2


def test_leaving_member_bumps_group_epoch_and_frees_partitions():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m1")
    join(c, "m2")
    resp = beat(c, "m2", -1)
    assert (resp.error, resp.member_id, resp.member_epoch) == (E.NONE, "m2", -1)
    g = c.group("g")
    assert g.member("m2") is None and g.group_epoch == 3
    assert all(tp[1] < 3 for tp, _ in g.partition_epochs)
    assert ("session", "g", "m2") not in [k for _, k, _ in c.timers()]
    assert beat(c, "m2", -1).error == E.UNKNOWN_MEMBER_ID


def test_last_member_leaving_aligns_assignment_epoch():
    """KAFKA-20442's fix: an Empty group has groupEpoch == assignmentEpoch."""
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1")
    beat(c, "m1", -1)
    g = c.group("g")
    assert (g.state, g.group_epoch, g.assignment_epoch) == ("Empty", 2, 2)


def test_session_timeout_fences_member():
    """testSessionTimeoutLifecycle: a member that stops heartbeating is removed after the session timeout."""
    c, a = coordinator(session_timeout_ms=45000)
    a.prepare({"m1": {FOO: range(6)}})
    join(c, "m1")
    c.advance(44000)
    beat(c, "m1", 1)                      # reschedules
    c.advance(44000)
    assert c.group("g").member("m1") is not None
    c.advance(1001)
    g = c.group("g")
    assert g.members == () and g.group_epoch == 2 and g.partition_epochs == ()


def test_rebalance_timeout_fences_member_that_does_not_revoke():
    """testRebalanceTimeoutLifecycle: UNREVOKED_PARTITIONS for longer than the rebalance timeout."""
    c, a = coordinator(session_timeout_ms=45000)
    a.prepare({"m1": {FOO: range(6)}})
    join(c, "m1", rebalance_timeout_ms=12000)
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m2")
    beat(c, "m1", 1, owned={FOO: range(6)})
    assert member(c, "m1").state == S.UNREVOKED_PARTITIONS
    assert ("rebalance", "g", "m1") in [k for _, k, _ in c.timers()]
    for _ in range(3):                    # keeps heartbeating (session alive) without revoking
        c.advance(4000)
        beat(c, "m1", 1, owned={FOO: range(6)})
    c.advance(1)
    assert c.group("g").member("m1") is None
    resp = beat(c, "m2", 2)
    assert parts(resp) == {FOO: {3, 4, 5}}


def test_rebalance_timeout_cancelled_once_revoked():
    c, a = coordinator(session_timeout_ms=45000)
    a.prepare({"m1": {FOO: range(6)}})
    join(c, "m1", rebalance_timeout_ms=12000)
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m2")
    beat(c, "m1", 1, owned={FOO: range(6)})
    beat(c, "m1", 1, owned={FOO: {0, 1, 2}})
    assert ("rebalance", "g", "m1") not in [k for _, k, _ in c.timers()]
    c.advance(13000)
    assert member(c, "m1").member_epoch == 2


def test_static_member_leaves_temporarily_and_is_replaced():
    """testStaticMemberGetsBackAssignmentUponRejoin: epoch -2 keeps the partitions; a new member id
    with the same instance id takes them over at once."""
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m1", instance_id="i1")
    join(c, "m2", instance_id="i2")
    beat(c, "m1", 2, owned={FOO: {0, 1, 2}}, instance_id="i1")
    resp = beat(c, "m1", -2, instance_id="i1")
    assert (resp.error, resp.member_epoch) == (E.NONE, -2)
    g = c.group("g")
    assert g.member("m1").member_epoch == -2 and g.group_epoch == 2
    assert dict(g.partition_epochs)[(FOO, 0)] == -2          # still held
    resp = join(c, "m1b", instance_id="i1")
    assert (resp.error, resp.member_epoch, parts(resp)) == (E.NONE, 2, {FOO: {0, 1, 2}})
    g = c.group("g")
    assert g.member("m1") is None and dict(g.static_members)["i1"] == "m1b"
    assert g.group_epoch == 2 and g.target_of("m1b") == frozenset((FOO, p) for p in (0, 1, 2))


def test_static_member_errors():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1", instance_id="i1")
    assert join(c, "other", instance_id="i1").error == E.UNRELEASED_INSTANCE_ID
    assert beat(c, "other", 1, instance_id="i1").error == E.FENCED_INSTANCE_ID
    assert beat(c, "other", 1, instance_id="nope").error == E.UNKNOWN_MEMBER_ID
    assert beat(c, "other", -2, instance_id="i1").error == E.FENCED_INSTANCE_ID


def test_static_member_session_timeout_after_temporary_leave():
    c, a = coordinator(session_timeout_ms=10000)
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1", instance_id="i1")
    beat(c, "m1", -2, instance_id="i1")
    c.advance(10001)
    g = c.group("g")
    assert g.members == () and g.static_members == ()


def test_max_size():
    c, a = coordinator(max_size=1)
    join(c, "m1")
    assert join(c, "m2").error == E.GROUP_MAX_SIZE_REACHED
    assert beat(c, "m1", 1).error == E.NONE


def test_partitions_added_bump_the_epoch_at_next_heartbeat():
    c, a = coordinator(topics={"foo": 3})
    a.prepare({"m1": {FOO: {0, 1, 2}}})
    join(c, "m1", topics=("foo",))
    c.set_topics({"foo": 4})
    assert c.group("g").group_epoch == 1
    a.prepare({"m1": {FOO: {0, 1, 2, 3}}})
    resp = beat(c, "m1", 1)
    assert (resp.member_epoch, parts(resp)) == (2, {FOO: {0, 1, 2, 3}})
    assert c.group("g").subscription_metadata == (("foo", FOO, 4),)


def test_deleted_topic_is_revoked_and_its_offsets_removed():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1}, BAR: {0}}})
    join(c, "m1")
    c.handle(OffsetCommitRequest("g", 1, "m1", offsets=((TopicPartition("bar", 0), OffsetAndMetadata(5)),
                                                         (TopicPartition("foo", 0), OffsetAndMetadata(7)))))
    c.set_topics({"foo": 6})
    assert set(c.offsets("g")) == {TopicPartition("foo", 0)}
    a.prepare({"m1": {FOO: {0, 1}}})
    resp = beat(c, "m1", 1, owned={FOO: {0, 1}, BAR: {0}})
    m1 = member(c, "m1")
    assert (m1.state, m1.pending_revocation, parts(resp)) == (
        S.UNREVOKED_PARTITIONS, frozenset({(BAR, 0)}), {FOO: {0, 1}})
    resp = beat(c, "m1", 1, owned={FOO: {0, 1}})
    assert (resp.member_epoch, member(c, "m1").state) == (2, S.STABLE)


def test_describe():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m1")
    join(c, "m2")
    resp = c.handle(ConsumerGroupDescribeRequest(("g", "nope"), correlation_id=7))[0]
    assert resp.correlation_id == 7
    g, missing = resp.response.groups
    assert (g.error, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name) == (
        E.NONE, "Reconciling", 2, 2, "range")
    d1 = g.members[0]
    assert (d1.member_id, d1.member_epoch, d1.subscribed_topic_names) == ("m1", 1, ("bar", "foo"))
    assert [(t.topic_name, t.partitions) for t in d1.assignment] == [("foo", (0, 1, 2))]
    assert [(t.topic_name, t.partitions) for t in d1.target_assignment] == [("foo", (0, 1, 2))]
    assert (missing.error, missing.group_id) == (E.GROUP_ID_NOT_FOUND, "nope")


# ---- offsets (KIP-848 validation: OffsetMetadataManagerTest / ConsumerGroupTest) ---------------------
def commit(c, epoch, member_id="m1", group="g", api_version=9):
    r = c.handle(OffsetCommitRequest(group, epoch, member_id, offsets=((TopicPartition("foo", 0),
                                                                        OffsetAndMetadata(10)),),
                                     api_version=api_version))
    return r[0].response.partition_errors[0][1]


def test_commit_requires_the_current_member_epoch():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1")
    assert commit(c, 1) == E.NONE
    assert commit(c, 0) == E.STALE_MEMBER_EPOCH
    assert commit(c, 2) == E.STALE_MEMBER_EPOCH
    assert commit(c, 1, member_id="zz") == E.UNKNOWN_MEMBER_ID
    assert commit(c, 1, api_version=8) == E.UNSUPPORTED_VERSION
    assert commit(c, -1, member_id="") == E.UNKNOWN_MEMBER_ID   # the group has members: no admin commit
    assert commit(c, -1) == E.STALE_MEMBER_EPOCH
    assert c.offsets("g")[TopicPartition("foo", 0)].offset == 10


def test_commit_to_unknown_or_empty_group():
    c, a = coordinator()
    assert commit(c, 3, group="x") == E.GROUP_ID_NOT_FOUND
    assert commit(c, 3, group="x", api_version=8) == E.ILLEGAL_GENERATION
    assert commit(c, -1, member_id="", group="x") == E.NONE     # simple/admin commit creates the group
    assert c.group("x").state == "Empty"
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1")
    beat(c, "m1", -1)
    assert commit(c, -1, member_id="") == E.NONE                # empty again: admin commit accepted


def test_offset_fetch_validation():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1")
    commit(c, 1)
    tp = TopicPartition("foo", 0)
    ok = c.handle(OffsetFetchRequest("g", "m1", 1, (tp, TopicPartition("foo", 1))))[0].response
    assert ok.error == E.NONE and [(p.partition, p.offset) for p in ok.partitions] == [(tp, 10), (TopicPartition("foo", 1), -1)]
    assert c.handle(OffsetFetchRequest("g", "m1", 0, (tp,)))[0].response.error == E.STALE_MEMBER_EPOCH
    assert c.handle(OffsetFetchRequest("g", "zz", 1, (tp,)))[0].response.error == E.UNKNOWN_MEMBER_ID
    assert c.handle(OffsetFetchRequest("g", None, -1))[0].response.partitions[0].offset == 10
    assert c.handle(OffsetFetchRequest("nope", "m1", 1, (tp,)))[0].response.partitions[0].offset == -1


# ---- purity -----------------------------------------------------------------------------------------
def test_copy_is_independent_and_snapshot_deterministic():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m1")
    d = c.copy()
    assert d.snapshot() == c.snapshot() and hash(d.snapshot()) == hash(c.snapshot())
    join(d, "m2")
    assert c.group("g").member("m2") is None and d.group("g").member("m2") is not None
    assert d.snapshot() != c.snapshot()
    join(c, "m2")
    assert d.snapshot() == c.snapshot()


def test_assignment_sent_only_on_full_requests_or_changes():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1}}})
    join(c, "m1")
    assert beat(c, "m1", 1).assignment is None                         # nothing changed
    full = c.handle(HB("g", "m1", 1, rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"),
                       topic_partitions=(TPs(FOO, (0, 1)),)))[0].response
    assert parts(full) == {FOO: {0, 1}}                                 # a full request gets it again


def test_static_member_rejoining_with_its_own_id_while_active_is_unreleased():
    """Kafka (through 2026) answers UNRELEASED_INSTANCE_ID, fatal for the Java client, when a static member
    rejoins at epoch 0 while the coordinator still has it active (e.g. after FENCED_MEMBER_EPOCH);
    apache/kafka#23542 (open) proposes to treat it like a dynamic member. kverify follows Kafka."""
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0}}})
    join(c, "m1", instance_id="i1")
    assert join(c, "m1", instance_id="i1").error == E.UNRELEASED_INSTANCE_ID


def test_dynamic_member_rejoining_at_epoch_zero_gets_its_state_back():
    c, a = coordinator()
    a.prepare({"m1": {FOO: {0, 1}}})
    join(c, "m1")
    resp = join(c, "m1")
    assert (resp.error, resp.member_epoch, parts(resp)) == (E.NONE, 1, {FOO: {0, 1}})
    assert c.group("g").group_epoch == 1                               # same subscription: no new epoch


def test_assignor_failure_is_unknown_server_error_and_changes_nothing():
    from kverify.impl.consumer.assignor_port import PartitionAssignorError

    class Failing:
        def assign(self, spec, describer):
            raise PartitionAssignorError("boom")

    c = ConsumerGroupCoordinator(assignors={"range": Failing()}, topics={"foo": 2})
    resp = join(c, "m1")
    assert (resp.error, resp.error_message) == (
        E.UNKNOWN_SERVER_ERROR, "Failed to compute a new target assignment for epoch 1: boom.")
    assert c.group("g") is None and c.timers() == []


def test_kafka_exact_uniform_assignor_is_the_default():
    c = ConsumerGroupCoordinator(topics={"foo": 6})
    assert list(c.assignors) == ["uniform", "range"] and c.default_assignor == "uniform"
    join(c, "m1", topics=("foo",))
    resp = join(c, "m2", topics=("foo",))
    assert resp.error == E.NONE
    g = c.group("g")
    assert sorted(len(a) for _, a in g.target) == [3, 3]
    assert frozenset().union(*(a for _, a in g.target)) == frozenset((FOO, p) for p in range(6))


def test_unload_answers_not_coordinator_and_load_reschedules_timers():
    c, a = coordinator(session_timeout_ms=10000)
    a.prepare({"m1": {FOO: range(6)}})
    join(c, "m1", rebalance_timeout_ms=3000)
    a.prepare({"m1": {FOO: {0, 1, 2}}, "m2": {FOO: {3, 4, 5}}})
    join(c, "m2")
    beat(c, "m1", 1, owned={FOO: range(6)})                    # m1 UNREVOKED_PARTITIONS
    c.unload()
    assert c.timers() == [] and not c.active
    assert beat(c, "m1", 1).error == E.NOT_COORDINATOR
    assert commit(c, 1) == E.NOT_COORDINATOR
    assert c.handle(OffsetFetchRequest("g"))[0].response.error == E.NOT_COORDINATOR
    c.advance(60000)
    assert len(c.group("g").members) == 2                       # no timers while unloaded
    c.load()
    keys = sorted(k for _, k, _ in c.timers())
    assert keys == [("rebalance", "g", "m1"), ("session", "g", "m1"), ("session", "g", "m2")]
    c.advance(3001)
    assert c.group("g").member("m1") is None                    # rebalance timeout from the load
