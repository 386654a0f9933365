"""TxnOffsetCommit (digest §7.2): validation without the state check, offsets staged per producer
until the transaction marker, commit/abort, requireStable fetches, and reload from the log."""
import pytest

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, MemoryOffsetsLog
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import TopicPartition
from kverify.impl.coordinator.records import TxnMarkerRecord

G = "groupId"
TP = TopicPartition("t", 0)


def make(log=None, **kw):
    cfg = dict(group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False)
    cfg.update(kw)
    return Harness(GroupCoordinator(CoordinatorConfig(**cfg), log=log))


def in_state(state):
    h = make()
    if state == "Dead":
        h.c.internal.create_group(G, "Dead")
        return h, "m", 0
    if state == "Empty":
        h.commit(G, -1, "", {TopicPartition("x", 0): 1})
        return h, "m", 0
    a, b = h.join_dynamic(G), h.join_dynamic(G)
    while not (h.done(a) and h.done(b)):
        h.advance(51)
    ra, rb = h.get(a), h.get(b)
    gen, leader = ra.generation_id, ra.leader_id
    follower = rb.member_id if leader == ra.member_id else ra.member_id
    if state == "CompletingRebalance":
        return h, follower, gen
    h.sync(G, gen, leader, {leader: b"", follower: b""})
    h.sync(G, gen, follower)
    if state == "PreparingRebalance":
        h.join(G, member_id=leader)
    return h, follower, gen


@pytest.mark.parametrize("state,expected", [("Empty", "NONE"), ("PreparingRebalance", "NONE"),
                                            ("CompletingRebalance", "NONE"), ("Stable", "NONE"),
                                            ("Dead", "COORDINATOR_NOT_AVAILABLE")])
def test_txn_commit_per_state(state, expected):
    h, member, gen = in_state(state)
    g = h.c.group(G)
    assert g.state == state
    if state == "Empty":
        assert h.txn_commit(G, 7, -1, "", {TP: 5}) == {TP: expected}
    else:
        assert h.txn_commit(G, 7, gen, member, {TP: 5}) == {TP: expected}
    if state != "Dead":
        # a generation-less commit (old TxnOffsetCommit versions) is accepted on any live group
        assert h.txn_commit(G, 8, -1, "", {TP: 6}) == {TP: "NONE"}
        assert h.txn_commit(G, 9, gen + 5, member, {TP: 6}) == {TP: "ILLEGAL_GENERATION" if state != "Empty" else "UNKNOWN_MEMBER_ID"}


def test_txn_commit_creates_the_group():
    h = make()
    assert h.txn_commit("fresh", 1, 4, "", {TP: 1}) == {TP: "UNKNOWN_MEMBER_ID"}
    assert h.c.group("fresh") is not None and h.c.group("fresh").state == "Empty"


def test_offsets_visible_only_after_commit_marker():
    h = make()
    assert h.txn_commit("simple", 1, offsets={TP: 10}) == {TP: "NONE"}
    assert h.fetch("simple", (TP,)).partitions[0].error == "UNSTABLE_OFFSET_COMMIT"
    assert h.fetch("simple", (TP,), require_stable=False).partitions[0].offset == -1
    h.c.complete_transaction(1, commit=True)
    assert h.fetch("simple", (TP,)).partitions[0].offset == 10


def test_abort_discards_and_later_append_wins():
    h = make()
    h.txn_commit("simple", 1, offsets={TP: 10})
    h.c.complete_transaction(1, commit=False)
    f = h.fetch("simple", (TP,)).partitions[0]
    assert f.offset == -1 and f.error == "NONE"
    h.txn_commit("simple", 2, offsets={TP: 20})        # appended first
    h.commit("simple", -1, "", {TP: 30})                  # regular commit appended later
    h.c.complete_transaction(2, commit=True)
    assert h.fetch("simple", (TP,)).partitions[0].offset == 30, "the record with the larger log offset wins"


def test_transactional_offsets_reload_from_the_log():
    log = MemoryOffsetsLog()
    h = make(log=log, offsets_partitions=1)
    h.txn_commit("simple", 1, offsets={TP: 10})
    h.txn_commit("simple", 2, offsets={TopicPartition("u", 0): 3})
    log.append(0, (TxnMarkerRecord(1, True),))
    h2 = make(offsets_partitions=1, owned_partitions=())
    h2.c.on_election(0, 1, log.records(0))
    assert h2.fetch("simple", (TP,)).partitions[0].offset == 10
    assert h2.fetch("simple", (TopicPartition("u", 0),)).partitions[0].error == "UNSTABLE_OFFSET_COMMIT"
    h2.c.complete_transaction(2, commit=True, partitions={0})
    assert h2.fetch("simple", (TopicPartition("u", 0),)).partitions[0].offset == 3
