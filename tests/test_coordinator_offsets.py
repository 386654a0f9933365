"""OffsetCommit acceptance rules (digest §7.1), storage through the log (§7.3), OffsetFetch (§7.4),
retention/expiry (§7.5), OffsetDelete and DeleteGroups (§7.6)."""
import pytest

from kverify.impl.coordinator import CoordinatorConfig, DeferredOffsetsLog, GroupCoordinator
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import OffsetAndMetadata, OffsetCommitRequest, TopicPartition
from kverify.impl.coordinator.subscription import decode_subscription_topics, encode_subscription

G = "groupId"
TP = TopicPartition("t", 0)
OTHER = TopicPartition("other-topic", 0)
DAY = 24 * 3600 * 1000


def make(log=None, **kw):
    cfg = dict(group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50,
               offsets_expiration_enabled=False)
    cfg.update(kw)
    return Harness(GroupCoordinator(CoordinatorConfig(**cfg), log=log))


def consumer_group(h, topics=("t",), n=1, session=500):
    meta = encode_subscription(list(topics))
    cids = [h.join_dynamic(G, protocols=(("range", meta),), session=session) for _ in range(n)]
    while not all(h.done(c) for c in cids):
        h.advance(51)
    rs = [h.get(c) for c in cids]
    gen, leader = rs[0].generation_id, rs[0].leader_id
    for r in rs:
        h.sync(G, gen, r.member_id, {x.member_id: b"" for x in rs} if r.member_id == leader else {})
    return [r.member_id for r in rs], gen


# ---- acceptance rules -------------------------------------------------------------------------
def test_simple_consumer_commit_creates_group_and_generation_rules():
    h = make()
    assert h.commit("fresh", 3, "", {TP: 1}) == {TP: "ILLEGAL_GENERATION"}
    assert h.c.group("fresh") is None
    assert h.commit("fresh", -1, "", {TP: 1}) == {TP: "NONE"}
    g = h.c.group("fresh")
    assert g.state == "Empty" and g.protocol_type is None and g.offsets[TP].offset == 1


def test_empty_group_accepts_only_generation_minus_one_without_member_checks():
    h = make()
    (m,), gen = consumer_group(h)
    h.leave(G, m)
    assert h.c.group(G).state == "Empty"
    assert h.commit(G, -1, "", {TP: 4}) == {TP: "NONE"}
    assert h.commit(G, -1, "someone", {TP: 5}, instance_id="x") == {TP: "NONE"}, "no member validation"
    assert h.commit(G, gen, m, {TP: 4}) == {TP: "UNKNOWN_MEMBER_ID"}


def test_member_generation_and_instance_checks():
    h = make()
    (m,), gen = consumer_group(h)
    assert h.commit(G, gen, m, {TP: 1}) == {TP: "NONE"}
    assert h.commit(G, gen - 1, m, {TP: 1}) == {TP: "ILLEGAL_GENERATION"}
    assert h.commit(G, gen + 1, m, {TP: 1}) == {TP: "ILLEGAL_GENERATION"}
    assert h.commit(G, gen, "stranger", {TP: 1}) == {TP: "UNKNOWN_MEMBER_ID"}
    assert h.commit(G, -1, "", {TP: 1}) == {TP: "UNKNOWN_MEMBER_ID"}, "non-Empty group: only members commit"


def test_static_member_commit_with_wrong_member_id_is_fenced():
    h = make()
    a = h.join(G, instance_id="inst", require_known=False)
    h.advance(51)
    r = h.get(a)
    h.sync(G, r.generation_id, r.member_id, {r.member_id: b""})
    assert h.commit(G, r.generation_id, "other-id", {TP: 1}, instance_id="inst") == {TP: "FENCED_INSTANCE_ID"}
    assert h.commit(G, r.generation_id, r.member_id, {TP: 1}, instance_id="inst") == {TP: "NONE"}


def test_commit_keeps_session_alive():
    h = make()
    (m,), gen = consumer_group(h, session=300)
    for _ in range(5):
        h.advance(200)
        assert h.commit(G, gen, m, {TP: 1}) == {TP: "NONE"}
    assert m in h.c.group(G).members


def test_metadata_too_large_is_per_partition():
    h = make(offset_metadata_max_bytes=4)
    errors = h.commit("simple", -1, "", {TP: OffsetAndMetadata(1, None, "12345"), OTHER: OffsetAndMetadata(2, None, "ok")})
    assert errors == {TP: "OFFSET_METADATA_TOO_LARGE", OTHER: "NONE"}
    assert h.commit("simple", -1, "", {TP: OffsetAndMetadata(1, None, "12345")}) == {TP: "OFFSET_METADATA_TOO_LARGE"}
    # Kafka 3.6 quirk: the rejected partition was staged as pending and is never settled
    assert h.fetch("simple", (TP,)).partitions[0].error == "UNSTABLE_OFFSET_COMMIT"
    assert h.commit("simple", -1, "", {TP: OffsetAndMetadata(3, None, "ok")}) == {TP: "NONE"}
    assert h.fetch("simple", (TP,)).partitions[0].offset == 3


@pytest.mark.parametrize("raw,mapped", [
    ("NOT_ENOUGH_REPLICAS", "COORDINATOR_NOT_AVAILABLE"), ("UNKNOWN_TOPIC_OR_PARTITION", "COORDINATOR_NOT_AVAILABLE"),
    ("NOT_LEADER_OR_FOLLOWER", "NOT_COORDINATOR"), ("KAFKA_STORAGE_ERROR", "NOT_COORDINATOR"),
    ("MESSAGE_TOO_LARGE", "INVALID_COMMIT_OFFSET_SIZE"), ("REQUEST_TIMED_OUT", "REQUEST_TIMED_OUT")])
def test_commit_append_error_mapping(raw, mapped):
    h = make()
    h.c.internal.set_log_append_result(raw)
    assert h.commit("simple", -1, "", {TP: 1}) == {TP: mapped}
    assert h.fetch("simple", (TP,)).partitions[0].offset == -1, "nothing materialised"


@pytest.mark.parametrize("raw,mapped", [
    ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", "COORDINATOR_NOT_AVAILABLE"), ("NOT_LEADER_OR_FOLLOWER", "NOT_COORDINATOR"),
    ("REQUEST_TIMED_OUT", "REBALANCE_IN_PROGRESS"), ("RECORD_LIST_TOO_LARGE", "UNKNOWN_SERVER_ERROR")])
def test_sync_append_error_mapping_and_new_rebalance(raw, mapped):
    h = make()
    cid = h.join_dynamic(G)
    h.advance(51)
    r = h.get(cid)
    h.c.internal.set_log_append_result(raw)
    s = h.get(h.sync(G, r.generation_id, r.member_id, {r.member_id: b"x"}))
    assert s.error == mapped and s.protocol_name is None
    assert h.c.group(G).state in ("PreparingRebalance", "CompletingRebalance")


# ---- pending appends (replicated log) ---------------------------------------------------------
def test_commit_is_materialised_only_when_the_append_completes():
    log = DeferredOffsetsLog()
    h = make(log=log)
    assert h.commit("simple", -1, "", {TP: 7}) is None, "no response until the append completes"
    (aid, partition, records), = h.c.pending_appends()
    assert records[0].offset == 7 and partition == h.c.internal.partition_of("simple")
    f = h.fetch("simple", (TP,))
    assert f.partitions[0].error == "UNSTABLE_OFFSET_COMMIT"
    assert h.fetch("simple", (TP,), require_stable=False).partitions[0].offset == -1
    replies = h.complete_append(aid, "NONE")
    assert [dict(r.response.partition_errors) for r in replies] == [{TP: "NONE"}]
    assert h.fetch("simple", (TP,)).partitions[0].offset == 7


def test_failed_pending_append_leaves_previous_offset():
    log = DeferredOffsetsLog()
    h = make(log=log)
    h.commit("simple", -1, "", {TP: 1})
    h.complete_append(h.c.pending_appends()[0][0])
    h.commit("simple", -1, "", {TP: 2})
    replies = h.complete_append(h.c.pending_appends()[0][0], "NOT_ENOUGH_REPLICAS")
    assert dict(replies[0].response.partition_errors) == {TP: "COORDINATOR_NOT_AVAILABLE"}
    assert h.fetch("simple", (TP,)).partitions[0].offset == 1


def test_leader_sync_waits_for_the_group_record():
    log = DeferredOffsetsLog()
    h = make(log=log)
    cid = h.join_dynamic(G)
    h.advance(51)
    r = h.get(cid)
    s = h.sync(G, r.generation_id, r.member_id, {r.member_id: b"A"})
    assert not h.done(s) and h.c.group(G).state == "CompletingRebalance"
    group_appends = [a for a in h.c.pending_appends() if type(a[2][0]).__name__ == "GroupMetadataRecord"]
    aid, _, (rec,) = group_appends[-1]
    assert rec.generation_id == r.generation_id and rec.members[0].assignment == b"A"
    h.complete_append(aid)
    assert h.get(s).assignment == b"A" and h.c.group(G).state == "Stable"


# ---- fetch ------------------------------------------------------------------------------------
def test_fetch_unknown_group_and_all_partitions():
    h = make()
    r = h.fetch("nobody", (TP, OTHER))
    assert r.error == "NONE" and [(p.offset, p.error) for p in r.partitions] == [(-1, "NONE")] * 2
    h.commit("simple", -1, "", {TP: 3, OTHER: 4})
    r = h.fetch("simple", None)
    assert {p.partition: p.offset for p in r.partitions} == {TP: 3, OTHER: 4}


# ---- expiry -----------------------------------------------------------------------------------
def expiring(**kw):
    return make(offsets_expiration_enabled=True, offsets_retention_ms=DAY,
                offsets_retention_check_interval_ms=600000, **kw)


def test_simple_group_offsets_expire_from_commit_time_and_group_dies():
    h = expiring()
    h.commit("simple", -1, "", {TP: 1})
    h.advance(DAY - 600000)
    assert h.c.group("simple").offsets
    h.advance(2 * 600000)
    assert h.c.group("simple") is None, "Empty group without offsets -> Dead, removed"


def test_empty_consumer_group_expires_from_the_time_it_became_empty():
    h = expiring()
    (m,), gen = consumer_group(h)
    h.commit(G, gen, m, {TP: 1})
    h.advance(1000)                                   # the member's session expires -> Empty
    g = h.c.group(G)
    assert g.state == "Empty" and g.protocol_type == "consumer"
    emptied_at = g.state_timestamp
    h.advance(DAY // 2)
    assert h.commit(G, -1, "", {OTHER: 2}) == {OTHER: "NONE"}   # a recent commit does not matter
    h.advance(emptied_at + DAY - h.c.now - 1)
    assert h.c.group(G) is not None and h.c.group(G).offsets
    h.advance(600000 + 1)
    assert h.c.group(G) is None, "every offset expired DAY after the group became Empty"


def long_lived(**kw):
    return expiring(group_max_session_timeout_ms=10 * DAY, **kw)


def test_stable_consumer_group_keeps_subscribed_offsets_and_expires_others():
    h = long_lived()
    (m,), gen = consumer_group(h, topics=("t",), session=3 * DAY)
    h.commit(G, gen, m, {TP: 1, OTHER: 2})
    h.advance(DAY + 600000)
    g = h.c.group(G)
    assert g.state == "Stable" and TP in g.offsets and OTHER not in g.offsets


def rebalancing_group_keeps_offsets(behaviours=frozenset()):
    h = long_lived()
    h.c = GroupCoordinator(h.c.config, behaviours=behaviours)
    meta = encode_subscription(["t"])
    cid = h.join_dynamic(G, protocols=(("range", meta),), session=3 * DAY, rebalance=5 * DAY)
    h.advance(51)
    r = h.get(cid)
    h.sync(G, r.generation_id, r.member_id, {r.member_id: b""})
    h.commit(G, r.generation_id, r.member_id, {OTHER: 2})
    h.c.internal.force_prepare_rebalance(G)             # the member does not rejoin for a long while
    h.advance(DAY + 600000)
    g = h.c.group(G)
    assert g.state == "PreparingRebalance"
    return OTHER in g.offsets


def test_rebalancing_consumer_group_expires_nothing():
    assert rebalancing_group_keeps_offsets() is True


def test_kafka_13636_behaviour_expires_offsets_of_rebalancing_group():
    assert rebalancing_group_keeps_offsets(frozenset({"kafka-13636-expire-while-rebalancing"})) is False


def test_member_codec_subscriptions_are_understood():
    from kverify.impl.member.codec import encode_subscription as member_encode
    data = member_encode(("a", "b"), (), -1)
    assert decode_subscription_topics(data) == frozenset({"a", "b"})
    assert decode_subscription_topics(b"S2|broken") is None


def test_subscription_codec_round_trip():
    data = encode_subscription(["a", "bé"], b"ud")
    assert decode_subscription_topics(data) == frozenset({"a", "bé"})
    assert decode_subscription_topics(b"") is None and decode_subscription_topics(b"\x00\x00\x00\x00\x00\x05x") is None


# ---- OffsetDelete / DeleteGroups --------------------------------------------------------------
def test_offset_delete_rules():
    h = make()
    (m,), gen = consumer_group(h, topics=("t",))
    h.commit(G, gen, m, {TP: 1, OTHER: 2})
    r = h.delete_offsets(G, TP, OTHER)
    assert r.error == "NONE" and dict(r.partition_errors) == {TP: "GROUP_SUBSCRIBED_TO_TOPIC", OTHER: "NONE"}
    assert set(h.c.group(G).offsets) == {TP}
    assert h.delete_offsets("nobody", TP).error == "GROUP_ID_NOT_FOUND"
    h.leave(G, m)
    r = h.delete_offsets(G, TP)
    assert dict(r.partition_errors) == {TP: "NONE"} and h.c.group(G) is None, "Empty and no offsets -> Dead"


def test_offset_delete_non_consumer_group():
    h = make()
    cid = h.join_dynamic(G, protocol_type="connect")
    h.advance(51)
    assert h.delete_offsets(G, TP).error == "NON_EMPTY_GROUP"


def test_delete_groups_results():
    h = make(offsets_partitions=2, owned_partitions=(0,))
    h.commit(G, -1, "", {TP: 1})
    res = h.delete_groups(G, "otherGroup", "", None, G)
    assert res == {G: "NONE", "otherGroup": "NOT_COORDINATOR", "": "GROUP_ID_NOT_FOUND", None: "INVALID_GROUP_ID"}
    assert h.c.group(G) is None and h.fetch(G, (TP,)).partitions[0].offset == -1


def test_explicit_retention_time_of_old_commit_versions():
    h = expiring()
    cid = h.send(lambda c: OffsetCommitRequest("simple", -1, "", None, ((TP, OffsetAndMetadata(1)),), c,
                                               retention_time_ms=1000))
    assert dict(h.get(cid).partition_errors) == {TP: "NONE"}
    assert h.c.group("simple").offsets[TP].expire_timestamp == 1000
    h.advance(600001)                                 # first expiry run: now >= expire timestamp
    assert h.c.group("simple") is None


def test_topic_deletion_removes_offsets_everywhere():
    h = make()
    h.commit("a", -1, "", {TP: 1, OTHER: 2})
    h.commit("b", -1, "", {TP: 3})
    h.c.on_partitions_deleted([TP])
    assert set(h.c.group("a").offsets) == {OTHER}
    assert h.c.group("b") is None, "Empty group left without offsets is removed"
