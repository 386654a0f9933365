"""KIP-848 client membership (impl/consumer/client.py): states named as the Java consumer's
MemberState, revocation before acknowledging, epochs on commits, rejoin at epoch 0 after fencing."""
import pytest

from kverify.impl.consumer.client import ClientConfig, ConsumerMember, IllegalTransition, MemberState as S
from kverify.impl.consumer.messages import (
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse as R, Errors as E, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchPartition, OffsetFetchRequest, OffsetFetchResponse, TopicPartition,
    TopicPartitions as TPs)

T = "topic-id"


def client(**kw):
    cfg = dict(group_id="g", member_id="m1", topics=("foo",), topic_names={T: "foo"}, rebalance_timeout_ms=1000)
    cfg.update(kw)
    return ConsumerMember(ClientConfig(**cfg))


def only(reqs, kind):
    out = [r for r in reqs if isinstance(r, kind)]
    assert len(out) == 1, reqs
    return out[0]


def assign(*ps):
    return (TPs(T, tuple(ps)),)


def joined(m, partitions=(0, 1, 2), epoch=1, now=0):
    """Start, answer the join with `partitions`, answer the offset fetch; returns the ack heartbeat."""
    hb = only(m.start(now), ConsumerGroupHeartbeatRequest)
    out = m.on_response(hb.correlation_id, R(member_id="m1", member_epoch=epoch, heartbeat_interval_ms=500,
                                             assignment=assign(*partitions)), now)
    ack = only(out, ConsumerGroupHeartbeatRequest)
    fetch = only(out, OffsetFetchRequest)
    m.on_response(fetch.correlation_id, OffsetFetchResponse(E.NONE, tuple(
        OffsetFetchPartition(TopicPartition("foo", p), -1, None, "", E.NONE) for p in partitions)), now)
    m.on_response(ack.correlation_id, R(member_id="m1", member_epoch=epoch, heartbeat_interval_ms=500), now)
    return ack


def test_state_names_are_the_java_consumers():
    assert {v for k, v in vars(S).items() if not k.startswith("_")} == {
        "UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE", "FENCED", "PREPARE_LEAVING",
        "LEAVING", "FATAL", "STALE"}


def test_join_sends_a_full_heartbeat_at_epoch_zero():
    m = client(instance_id="i1", server_assignor="uniform")
    assert m.state == S.UNSUBSCRIBED and m.poll(0) == []
    hb = only(m.start(0), ConsumerGroupHeartbeatRequest)
    assert m.state == S.JOINING
    assert (hb.member_id, hb.member_epoch, hb.instance_id, hb.rebalance_timeout_ms, hb.subscribed_topic_names,
            hb.server_assignor, hb.topic_partitions) == ("m1", 0, "i1", 1000, ("foo",), "uniform", ())
    assert m.tick(0) == []                              # one heartbeat in flight at a time


def test_assignment_is_reconciled_then_acknowledged():
    m = client()
    hb = only(m.start(0), ConsumerGroupHeartbeatRequest)
    out = m.on_response(hb.correlation_id, R(member_id="m1", member_epoch=1, heartbeat_interval_ms=500,
                                             assignment=assign(0, 1)), 0)
    ack = only(out, ConsumerGroupHeartbeatRequest)
    fetch = only(out, OffsetFetchRequest)
    assert (fetch.member_id, fetch.member_epoch) == ("m1", 1)
    assert (ack.member_epoch, ack.topic_partitions, ack.subscribed_topic_names) == (1, assign(0, 1), None)
    assert m.state == S.STABLE and m.owned == {(T, 0), (T, 1)}


def test_heartbeat_interval_and_unchanged_fields_are_not_sent():
    m = client()
    joined(m)
    assert m.tick(499) == []
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    assert (hb.member_epoch, hb.rebalance_timeout_ms, hb.subscribed_topic_names, hb.topic_partitions) == (1, -1, None, None)


def test_revocation_commits_and_completes_before_the_acknowledgement():
    m = client()
    joined(m)
    m.poll(10)
    m.poll(20)                                          # positions 2 on each partition
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    out = m.on_response(hb.correlation_id, R(member_id="m1", member_epoch=1, heartbeat_interval_ms=500,
                                             assignment=assign(0)), 500)
    commit = only(out, OffsetCommitRequest)
    assert not [r for r in out if isinstance(r, ConsumerGroupHeartbeatRequest)]
    assert commit.generation_id_or_member_epoch == 1 and commit.member_id == "m1"
    assert dict(commit.offsets)[TopicPartition("foo", 1)].offset == 2
    assert m.state == S.RECONCILING and m.owned == {(T, 0), (T, 1), (T, 2)}   # still owned until revoked
    out = m.on_response(commit.correlation_id, OffsetCommitResponse(tuple((tp, E.NONE) for tp, _ in commit.offsets)), 510)
    ack = only(out, ConsumerGroupHeartbeatRequest)
    assert ack.topic_partitions == assign(0) and m.owned == {(T, 0)} and m.state == S.STABLE


def test_reconciliation_commit_retried_with_the_new_epoch():
    m = client()
    joined(m)
    m.poll(10)
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    out = m.on_response(hb.correlation_id, R(member_id="m1", member_epoch=1, heartbeat_interval_ms=500,
                                             assignment=assign(0)), 500)
    commit = only(out, OffsetCommitRequest)
    hb2 = only(m.tick(1000), ConsumerGroupHeartbeatRequest)
    m.on_response(hb2.correlation_id, R(member_id="m1", member_epoch=2, heartbeat_interval_ms=500), 1000)
    out = m.on_response(commit.correlation_id, OffsetCommitResponse(
        tuple((tp, E.STALE_MEMBER_EPOCH) for tp, _ in commit.offsets)), 1001)
    retry = only(out, OffsetCommitRequest)
    assert retry.generation_id_or_member_epoch == 2 and m.state == S.RECONCILING


@pytest.mark.parametrize("error", [E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID])
def test_fenced_member_loses_partitions_and_rejoins_at_epoch_zero(error):
    m = client()
    joined(m)
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    out = m.on_response(hb.correlation_id, R(error=error), 510)
    rejoin = only(out, ConsumerGroupHeartbeatRequest)
    assert m.fenced_count == 1 and m.owned == frozenset() and m.state == S.JOINING
    assert (rejoin.member_id, rejoin.member_epoch, rejoin.topic_partitions, rejoin.subscribed_topic_names) == (
        "m1", 0, (), ("foo",))
    assert any("fenced" in text for _, text in m.events)


@pytest.mark.parametrize("error", [E.UNRELEASED_INSTANCE_ID, E.FENCED_INSTANCE_ID, E.GROUP_MAX_SIZE_REACHED,
                                   E.INVALID_REQUEST, E.UNSUPPORTED_ASSIGNOR])
def test_fatal_errors(error):
    m = client()
    hb = only(m.start(0), ConsumerGroupHeartbeatRequest)
    m.on_response(hb.correlation_id, R(error=error), 0)
    assert (m.state, m.fatal_error) == (S.FATAL, error)
    assert m.tick(10_000) == [] and m.poll(10_000) == []


def test_retriable_error_retries_with_a_full_request():
    m = client()
    joined(m)
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    assert m.on_response(hb.correlation_id, R(error=E.COORDINATOR_LOAD_IN_PROGRESS), 500) == []
    assert m.tick(550) == []                                   # retry backoff 100 ms
    retry = only(m.tick(600), ConsumerGroupHeartbeatRequest)
    assert (retry.member_epoch, retry.rebalance_timeout_ms, retry.subscribed_topic_names, retry.topic_partitions) == (
        1, 1000, ("foo",), assign(0, 1, 2))


def test_lost_heartbeat_resets_the_sent_fields():
    m = client()
    joined(m)
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    m.on_failure(hb.correlation_id, 600)
    retry = only(m.tick(700), ConsumerGroupHeartbeatRequest)
    assert retry.topic_partitions == assign(0, 1, 2) and retry.subscribed_topic_names == ("foo",)


@pytest.mark.parametrize("instance_id, epoch", [(None, -1), ("i1", -2)])
def test_leave_revokes_then_sends_the_leave_heartbeat(instance_id, epoch):
    m = client(instance_id=instance_id)
    joined(m)
    m.poll(10)
    out = m.leave(20)
    commit = only(out, OffsetCommitRequest)
    leave = only(out, ConsumerGroupHeartbeatRequest)
    assert commit.generation_id_or_member_epoch == 1                # committed before leaving, at its epoch
    assert (leave.member_epoch, leave.topic_partitions) == (epoch, ())
    assert m.state == S.UNSUBSCRIBED and m.owned == frozenset()
    assert m.tick(100_000) == []


def test_responses_after_leaving_are_ignored():
    m = client()
    ack = joined(m)
    hb = only(m.tick(500), ConsumerGroupHeartbeatRequest)
    out = m.leave(510)
    assert not [r for r in out if isinstance(r, ConsumerGroupHeartbeatRequest)]   # one heartbeat in flight
    assert m.state == S.LEAVING
    out = m.on_response(hb.correlation_id, R(member_id="m1", member_epoch=7, assignment=assign(0)), 520)
    leave = only(out, ConsumerGroupHeartbeatRequest)                  # the answer is ignored; now it leaves
    assert leave.member_epoch == -1 and m.member_epoch == -1
    assert m.state == S.UNSUBSCRIBED and m.owned == frozenset() and ack.member_epoch == 1


def test_user_commit_carries_the_member_epoch():
    m = client()
    joined(m, epoch=4)
    m.poll(10)
    c = only(m.commit(None, now=20), OffsetCommitRequest)
    assert (c.generation_id_or_member_epoch, c.member_id, len(c.offsets)) == (4, "m1", 3)


def test_invalid_transition_is_refused():
    m = client()
    with pytest.raises(IllegalTransition):
        m._to(S.STABLE)


def test_copy_and_snapshot():
    m = client()
    joined(m)
    n = m.copy()
    assert n.snapshot() == m.snapshot()
    n.poll(10)
    assert n.snapshot() != m.snapshot() and hash(m.snapshot()) is not None


def test_expired_poll_timer_leaves_goes_stale_and_rejoins_on_poll():
    m = client(rebalance_timeout_ms=1000)
    joined(m)                                              # last poll at 0
    assert m.next_wakeup() == 500
    out = m.tick(1000)
    leave = only(out, ConsumerGroupHeartbeatRequest)
    assert leave.member_epoch == -1 and m.state == S.STALE and m.owned == frozenset()
    assert m.on_response(leave.correlation_id, R(member_id="m1", member_epoch=-1), 1001) == []   # ignored
    assert m.tick(5000) == [] and m.next_wakeup() is None
    rejoin = only(m.poll(6000), ConsumerGroupHeartbeatRequest)
    assert (m.state, rejoin.member_epoch, rejoin.topic_partitions) == (S.JOINING, 0, ())


def test_periodic_auto_commit_carries_the_epoch_and_is_not_duplicated():
    m = client(rebalance_timeout_ms=60000, auto_commit_interval_ms=5000)
    joined(m, epoch=3)
    m.poll(100)
    assert [r for r in m.tick(4999) if isinstance(r, OffsetCommitRequest)] == []
    c = only([r for r in m.tick(5000) if isinstance(r, OffsetCommitRequest)], OffsetCommitRequest)
    assert c.generation_id_or_member_epoch == 3 and len(c.offsets) == 3
    assert [r for r in m.tick(10000) if isinstance(r, OffsetCommitRequest)] == []   # previous one in flight
    m.on_response(c.correlation_id, OffsetCommitResponse(tuple((tp, E.NONE) for tp, _ in c.offsets)), 10001)
    assert [r for r in m.tick(15000) if isinstance(r, OffsetCommitRequest)]
    n = client(rebalance_timeout_ms=60000, auto_commit_interval_ms=None)
    joined(n)
    n.poll(1)
    out = n.tick(50000)
    assert n.state == S.STABLE and out and not [r for r in out if isinstance(r, OffsetCommitRequest)]
