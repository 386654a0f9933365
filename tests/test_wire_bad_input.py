"""Bad input against kverify broker: malformed frames, a size above the limit, unknown API keys and versions, a
request before ApiVersions, hostile group and member ids. The broker answers with Kafka's error codes or closes
that one connection, keeps serving everyone else, and loses no committed offset."""
import struct

import pytest
from kafka.protocol.consumer.group import HeartbeatRequest, JoinGroupRequest, OffsetCommitRequest, OffsetFetchRequest

from kverify.testing import start_broker
from kverify.wire.client import WireClient, error_name, message

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def rb():
    with start_broker(topics={"t0": 2}, clock="manual", coordinator={"group_max_size": 8}) as r:
        r.broker.config.max_request_bytes = LIMIT
        yield r
        assert r.broker.errors == [], r.broker.errors


@pytest.fixture(scope="module")
def bystander(rb):
    """A well-behaved client with a committed offset, watched after every attack."""
    c = WireClient("127.0.0.1", rb.port, client_id="bystander")
    r = c.call(c.build(OffsetCommitRequest, group_id="safe", generation_id_or_member_epoch=-1, member_id="",
                       topics=[{"name": "t0", "partitions": [{"partition_index": 0, "committed_offset": 77,
                                                               "committed_metadata": "m"}]}]))
    assert error_name(r.topics[0].partitions[0].error_code) == "NONE"
    yield c
    c.close()


def _still_fine(rb, bystander):
    r = bystander.call(bystander.build(OffsetFetchRequest, group_id="safe",
                                       topics=[{"name": "t0", "partition_indexes": [0]}], require_stable=True))
    assert r.topics[0].partitions[0].committed_offset == 77
    fresh = WireClient("127.0.0.1", rb.port, client_id="fresh")        # new connections are accepted too
    fresh.close()


def _raw(rb):
    return WireClient("127.0.0.1", rb.port, client_id="attacker", negotiate=False)


def _header(key, version, corr=1, client_id=b"x"):
    return struct.pack(">hhih", key, version, corr, len(client_id)) + client_id


def test_malformed_frame_closes_only_that_connection(rb, bystander):
    c = _raw(rb)
    body = _header(11, 5) + b"\x00\x05ab"                              # JoinGroup v5 cut inside its group id
    c.send_raw(struct.pack(">i", len(body)) + body)
    assert c.recv_closed()
    _still_fine(rb, bystander)


def test_frame_shorter_than_a_header_closes(rb, bystander):
    c = _raw(rb)
    c.send_raw(struct.pack(">i", 3) + b"abc")
    assert c.recv_closed()
    _still_fine(rb, bystander)


@pytest.mark.parametrize("size", [LIMIT + 1, 1 << 30, -5])
def test_size_outside_the_limit_closes(rb, bystander, size):
    c = _raw(rb)
    c.send_raw(struct.pack(">i", size) + b"\x00" * 16)
    assert c.recv_closed()
    _still_fine(rb, bystander)


def test_unknown_api_key_closes(rb, bystander):
    c = _raw(rb)
    c.send_raw(struct.pack(">i", 11) + _header(9999, 0))
    assert c.recv_closed()
    _still_fine(rb, bystander)


def test_unknown_version_of_a_served_api_closes(rb, bystander):
    c = _raw(rb)
    c.send_raw(struct.pack(">i", 11 + 4) + _header(12, 99) + b"\x00\x00\x00\x00")
    assert c.recv_closed()
    _still_fine(rb, bystander)


def test_api_versions_above_ours_gets_unsupported_version_and_the_list(rb, bystander):
    c = _raw(rb)
    c.send_raw(struct.pack(">i", 11 + 3) + _header(18, 77) + b"\x00\x00\x00")
    c.proto.in_flight_requests.append(_v0_header())     # the answer is ApiVersions v0 (KIP-511)
    r = None
    for _ in range(50):
        got = c.poll(0.1)
        if got:
            r = got[0][1]
            break
    assert r is not None and error_name(r.error_code) == "UNSUPPORTED_VERSION"
    assert any(k.api_key == 18 for k in r.api_keys)
    _still_fine(rb, bystander)


def _v0_header():
    from kafka.protocol.api_header import RequestHeader

    return RequestHeader(request_api_key=18, request_api_version=0, correlation_id=1, client_id="x")


def test_a_request_before_api_versions_is_served(rb, bystander):
    c = _raw(rb)
    r = c.call(message(HeartbeatRequest, 4, group_id="nobody", generation_id=1, member_id="m"))
    assert error_name(r.error_code) in ("UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND")
    _still_fine(rb, bystander)


@pytest.mark.parametrize("group", ["", "g" * 30000, "\u0000\u0001ctl", "\u00e9\u4e2d\U0001f600", "__consumer_offsets"])
def test_hostile_group_ids(rb, bystander, group):
    c = WireClient("127.0.0.1", rb.port, client_id="hostile")
    r = c.call(c.build(JoinGroupRequest, group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000,
                       member_id="", protocol_type="consumer", protocols=[{"name": "range", "metadata": b"\x00"}]))
    err = error_name(r.error_code)
    if group == "":
        assert err == "INVALID_GROUP_ID"
    else:
        assert err in ("MEMBER_ID_REQUIRED", "NONE")
    hb = c.call(c.build(HeartbeatRequest, group_id=group, generation_id=5, member_id="nobody"))
    assert error_name(hb.error_code) in ("UNKNOWN_MEMBER_ID", "INVALID_GROUP_ID", "ILLEGAL_GENERATION")
    _still_fine(rb, bystander)


@pytest.mark.parametrize("member", ["x" * 20000, "\u0000", "bystander-\U0001f600", "-1"])
def test_hostile_member_ids(rb, bystander, member):
    c = WireClient("127.0.0.1", rb.port, client_id="hostile")
    for req in (c.build(HeartbeatRequest, group_id="safe", generation_id=1, member_id=member),
                c.build(OffsetCommitRequest, group_id="safe", generation_id_or_member_epoch=1, member_id=member,
                        topics=[{"name": "t0", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                "committed_metadata": ""}]}])):
        r = c.call(req)
        errs = [r.error_code] if hasattr(r, "error_code") and not hasattr(r, "topics") else \
            [p.error_code for t in r.topics for p in t.partitions]
        assert all(error_name(e) in ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION") for e in errs), errs
    _still_fine(rb, bystander)


def test_a_storm_of_bad_connections_leaves_the_broker_serving(rb, bystander):
    for i in range(30):
        c = _raw(rb)
        body = _header(11, 5) + bytes([i % 256]) * 2
        c.send_raw(struct.pack(">i", len(body)) + body)
        c.close()
    _still_fine(rb, bystander)
