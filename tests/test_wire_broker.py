"""kverify broker on the wire, with raw frames (kafka-python's message classes): versions, bad input,
parked responses, the control request, failover and the trace. Every test starts its own broker on
port 0 with a manual clock, so nothing depends on timing."""
import json
import socket
import struct
import subprocess
import sys

import pytest
from kafka.protocol.consumer.group import (
    JoinGroupRequest, JoinGroupResponse, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
    OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse, HeartbeatRequest, HeartbeatResponse)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from kverify.cli import UsageError
from kverify.wire import codec, control, faults
from kverify.wire.server import Broker, BrokerConfig

NOT_COORDINATOR, LOAD_IN_PROGRESS = 16, 14


class Raw:
    """A bare connection: frames built with kafka-python classes through kverify.wire.codec.build."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.corr = 0

    def send(self, cls, version, **fields):
        self.corr += 1
        msg = codec.build(cls, version, fields)
        msg.with_header(correlation_id=self.corr, client_id="raw")
        self.sock.sendall(bytes(msg.encode(header=True, framed=True)))
        return self.corr

    def send_bytes(self, data):
        self.sock.sendall(data)

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def recv(self, cls, version):
        head = self._read(4)
        assert head is not None, "connection closed"
        data = self._read(struct.unpack(">i", head)[0])
        return cls.decode(data, version=version, header=True)

    def closed(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self):
        self.sock.close()


@pytest.fixture
def broker():
    b = Broker(BrokerConfig(topics={"t0": 2}, clock="manual", group_min_session_timeout_ms=10,
                            group_initial_rebalance_delay_ms=0, max_request_bytes=4096))
    b.start()
    yield b
    b.stop()
    assert b.errors == []


def _join(raw, member_id="", group="g", version=5):
    raw.send(JoinGroupRequest, version, group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000,
             member_id=member_id, group_instance_id=None, protocol_type="consumer",
             protocols=[{"name": "range", "metadata": b"\x00\x01"}])


def _member_of_group(raw, broker, group="g"):
    """Join (MEMBER_ID_REQUIRED, then again), sync as leader with t0-0; returns (member id, generation)."""
    _join(raw, group=group)
    first = raw.recv(JoinGroupResponse, 5)
    assert first.error_code == 79                       # MEMBER_ID_REQUIRED (JoinGroup v4+)
    _join(raw, first.member_id, group=group)
    broker.advance(1)                                    # the (zero) initial rebalance delay expires
    joined = raw.recv(JoinGroupResponse, 5)
    assert joined.error_code == 0 and joined.leader == first.member_id
    raw.send(SyncGroupRequest, 3, group_id=group, generation_id=joined.generation_id, member_id=first.member_id,
             group_instance_id=None, assignments=[{"member_id": first.member_id, "assignment": b"\x00\x00"}])
    synced = raw.recv(SyncGroupResponse, 3)
    assert synced.error_code == 0 and synced.assignment == b"\x00\x00"
    return first.member_id, joined.generation_id


def test_api_versions_lists_every_served_api_and_answers_unknown_versions_with_v0(broker):
    raw = Raw(broker.port)
    raw.send(ApiVersionsRequest, 3, client_software_name="raw", client_software_version="1")
    r = raw.recv(ApiVersionsResponse, 3)
    assert r.error_code == 0
    served = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    assert served == {a.key: (a.min_version, a.max_version) for a in codec.APIS.values()}
    assert control.CONTROL_KEY not in served
    # a newer ApiVersions than we serve: UNSUPPORTED_VERSION in a v0 body, and the connection stays usable
    raw.send_bytes(struct.pack(">ihhih", 10, 18, 99, 7, 0))
    r = raw.recv(ApiVersionsResponse, 0)
    assert r.error_code == 35 and len(r.api_keys) == len(codec.APIS)
    raw.send(MetadataRequest, 1, topics=None)
    assert [t.name for t in raw.recv(MetadataResponse, 1).topics] == ["t0"]


def test_request_before_api_versions_is_served_like_kafka(broker):
    raw = Raw(broker.port)
    raw.send(MetadataRequest, 12, topics=[{"name": "t0", "topic_id": None}, {"name": "nope", "topic_id": None}],
             allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    r = raw.recv(MetadataResponse, 12)
    assert {t.name: (t.error_code, len(t.partitions)) for t in r.topics} == {"t0": (0, 2), "nope": (3, 0)}
    assert r.brokers[0].port == broker.port


@pytest.mark.parametrize("bad", [
    struct.pack(">ihhi", 8, 999, 0, 1),                                   # unknown api key
    struct.pack(">ihhi", 8, 11, 42, 1),                                   # JoinGroup v42
    struct.pack(">ihhih", 14, 11, 5, 1, 3) + b"abc" + b"\x00",            # JoinGroup v5, truncated body
    struct.pack(">i", 1 << 20),                                           # size above max_request_bytes
    struct.pack(">i", -5),                                                # negative size
    struct.pack(">ih", 2, 11),                                            # frame shorter than a header
])
def test_bad_frames_close_that_connection_only(broker, bad):
    good = Raw(broker.port)
    member, gen = _member_of_group(good, broker)
    good.send(OffsetCommitRequest, 8, group_id="g", generation_id_or_member_epoch=gen, member_id=member,
              group_instance_id=None, topics=[{"name": "t0", "partitions": [
                  {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
                   "committed_metadata": None}]}])
    assert good.recv(OffsetCommitResponse, 8).topics[0].partitions[0].error_code == 0
    hostile = Raw(broker.port)
    hostile.send_bytes(bad)
    assert hostile.closed()
    good.send(HeartbeatRequest, 4, group_id="g", generation_id=gen, member_id=member, group_instance_id=None)
    assert good.recv(HeartbeatResponse, 4).error_code == 0
    good.send(OffsetFetchRequest, 8, groups=[{"group_id": "g", "topics": None}], require_stable=False)
    parts = good.recv(OffsetFetchResponse, 8).groups[0].topics[0].partitions
    assert [(p.partition_index, p.committed_offset) for p in parts] == [(0, 5)]


def test_hostile_group_and_member_ids_get_kafka_errors_and_the_connection_stays(broker):
    raw = Raw(broker.port)
    _join(raw, group="")
    assert raw.recv(JoinGroupResponse, 5).error_code == 24                # INVALID_GROUP_ID
    _join(raw, member_id="nobody-" + "x" * 1000, group="g" * 1500)
    assert raw.recv(JoinGroupResponse, 5).error_code == 25                # UNKNOWN_MEMBER_ID
    raw.send(HeartbeatRequest, 4, group_id="g\u00e9\x00", generation_id=7, member_id="ghost", group_instance_id=None)
    assert raw.recv(HeartbeatResponse, 4).error_code in (16, 25)          # no such group / member
    raw.send(SyncGroupRequest, 5, group_id="g", generation_id=-3, member_id="", group_instance_id=None,
             protocol_type=None, protocol_name=None, assignments=[])
    assert raw.recv(SyncGroupResponse, 5).error_code == 25
    raw.send(MetadataRequest, 1, topics=None)
    assert raw.recv(MetadataResponse, 1).topics[0].name == "t0"


def test_parked_join_is_answered_on_its_own_connection_with_its_correlation_id(broker):
    a, b = Raw(broker.port), Raw(broker.port)
    member_a, gen = _member_of_group(a, broker)
    _join(b)
    mb = b.recv(JoinGroupResponse, 5).member_id
    b.corr = 40                                        # correlation ids of different connections are unrelated
    _join(b, mb)                                       # parks: the group rebalances, waiting for a
    a.send(HeartbeatRequest, 4, group_id="g", generation_id=gen, member_id=member_a, group_instance_id=None)
    assert a.recv(HeartbeatResponse, 4).error_code == 27      # REBALANCE_IN_PROGRESS
    _join(a, member_a)                                 # a rejoins: both parked joins complete
    ra, rb = a.recv(JoinGroupResponse, 5), b.recv(JoinGroupResponse, 5)
    assert ra.header.correlation_id == a.corr and rb.header.correlation_id == 41
    assert ra.generation_id == rb.generation_id == gen + 1 and rb.member_id == mb
    assert ra.leader == member_a and len(ra.members) == 2 and rb.members == []


def test_failover_answers_not_coordinator_then_load_in_progress_and_keeps_committed_offsets(broker):
    raw = Raw(broker.port)
    member, gen = _member_of_group(raw, broker)
    raw.send(OffsetCommitRequest, 8, group_id="g", generation_id_or_member_epoch=gen, member_id=member,
             group_instance_id=None, topics=[{"name": "t0", "partitions": [
                 {"partition_index": 1, "committed_offset": 42, "committed_leader_epoch": -1,
                  "committed_metadata": "m"}]}])
    assert raw.recv(OffsetCommitResponse, 8).topics[0].partitions[0].error_code == 0

    def fetch():
        raw.send(OffsetFetchRequest, 5, group_id="g", topics=None, require_stable=False)
        return raw.recv(OffsetFetchResponse, 5)

    broker.failover(ms=100, load=50)
    assert fetch().error_code == NOT_COORDINATOR
    raw.send(HeartbeatRequest, 4, group_id="g", generation_id=gen, member_id=member, group_instance_id=None)
    assert raw.recv(HeartbeatResponse, 4).error_code == NOT_COORDINATOR
    broker.advance(100)
    assert fetch().error_code == LOAD_IN_PROGRESS
    broker.advance(50)
    r = fetch()
    assert r.error_code == 0
    assert [(p.partition_index, p.committed_offset, p.metadata) for t in r.topics for p in t.partitions] == [
        (1, 42, "m")]
    raw.send(HeartbeatRequest, 4, group_id="g", generation_id=gen, member_id=member, group_instance_id=None)
    assert raw.recv(HeartbeatResponse, 4).error_code == 0            # the member was reloaded too


def test_control_request_advances_the_clock_switches_faults_and_reports_handled(broker):
    before = control.control("127.0.0.1", broker.port, {"op": "clock"})
    after = control.control("127.0.0.1", broker.port, {"op": "advance", "ms": 250})
    assert after["clock_ms"] == before["clock_ms"] + 250 == broker.clock_ms
    raw = Raw(broker.port)
    raw.send(MetadataRequest, 1, topics=None)
    raw.recv(MetadataResponse, 1)
    assert control.control("127.0.0.1", broker.port, {"op": "clock"})["handled"] == before["handled"] + 1
    control.control("127.0.0.1", broker.port, {"op": "faults", "spec": "close:api=Metadata,count=1"})
    raw.send(MetadataRequest, 1, topics=None)
    assert raw.closed()
    with pytest.raises(RuntimeError, match="unknown control op"):
        control.control("127.0.0.1", broker.port, {"op": "explode"})
    with pytest.raises(RuntimeError, match="unknown fault kind"):
        control.control("127.0.0.1", broker.port, {"op": "faults", "spec": "melt"})


def test_seeded_faults_fire_the_same_way_for_the_same_seed():
    def pattern(seed):
        f = faults.Faults("drop:api=Heartbeat,p=0.5;delay:ms=5,api=*,count=2", seed, codec.BY_NAME)
        return [(r.kind if r else None) for r in (f.on_response(api, 0) for api in ["Heartbeat", "Fetch"] * 10)]
    assert pattern(3) == pattern(3)
    assert {"drop", None} <= set(pattern(3)) and pattern(3).count("delay") == 2
    assert pattern(3) != pattern(4) or pattern(3) != pattern(5)


@pytest.mark.parametrize("spec,needle", [
    ("delay:api=Heartbeat", "needs ms"), ("drop:p=2", "bad value"), ("close:api=Nope", "unknown api"),
    ("failover:ms=5", "needs at"), ("pause:at=1", "needs ms"), ("drop:x", "KEY=VALUE"), ("drop:zz=1", "unknown key")])
def test_fault_spec_errors_are_one_line_usage_errors(spec, needle):
    with pytest.raises(UsageError, match=needle):
        faults.parse(spec, codec.BY_NAME)


def test_delay_and_drop_faults_and_the_trace(tmp_path):
    path = tmp_path / "trace.jsonl"
    b = Broker(BrokerConfig(topics={"t0": 1}, clock="manual", faults="drop:api=Metadata,count=1",
                            trace_path=str(path)))
    seen = []
    b.listeners.append(seen.append)
    b.start()
    try:
        raw = Raw(b.port)
        raw.send(MetadataRequest, 1, topics=None)          # dropped: no answer ...
        raw.send(MetadataRequest, 1, topics=None)          # ... the next one is answered
        assert raw.recv(MetadataResponse, 1).header.correlation_id == 2
        b.set_faults("delay:api=Metadata,ms=30")
        raw.send(MetadataRequest, 1, topics=None)
        assert raw.recv(MetadataResponse, 1).header.correlation_id == 3
    finally:
        b.stop()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert events == seen
    assert events[0]["dir"] == "start" and events[0]["body"]["topics"] == {"t0": 1}
    kinds = [(e["dir"], e["corr"]) for e in events if e["api"] == "Metadata"]
    assert kinds == [("in", 1), ("fault", 1), ("in", 2), ("out", 2), ("in", 3), ("fault", 3), ("out", 3)]
    out = next(e for e in events if e["dir"] == "out")
    assert out["body"]["topics"][0]["name"] == "t0" and out["client_id"] == "raw" and out["version"] == 1


def test_cli_prints_the_port_first_and_rejects_bad_input_with_one_line():
    bad = subprocess.run([sys.executable, "-m", "kverify", "broker", "--topics", "t0:x"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--topics" in bad.stderr
    proc = subprocess.Popen([sys.executable, "-m", "kverify", "broker", "--port", "0", "--topics", "t0:6",
                             "--seed", "5"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("kverify broker listening on 127.0.0.1:") and line.rstrip().endswith("seed=5")
        port = int(line.split(":")[1].split()[0])
        assert control.control("127.0.0.1", port, {"op": "clock"})["handled"] == 0
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_offset_delete_and_delete_groups(broker):
    from kafka.protocol.admin.groups import DeleteGroupsRequest, DeleteGroupsResponse
    from kafka.protocol.consumer.group import LeaveGroupRequest, LeaveGroupResponse, OffsetDeleteRequest, \
        OffsetDeleteResponse
    raw = Raw(broker.port)
    member, gen = _member_of_group(raw, broker)
    raw.send(OffsetCommitRequest, 8, group_id="g", generation_id_or_member_epoch=gen, member_id=member,
             group_instance_id=None, topics=[{"name": "t0", "partitions": [
                 {"partition_index": p, "committed_offset": 7, "committed_leader_epoch": -1,
                  "committed_metadata": None} for p in (0, 1)]}])
    raw.recv(OffsetCommitResponse, 8)
    raw.send(DeleteGroupsRequest, 2, groups_names=["g"])
    assert [(r.group_id, r.error_code) for r in raw.recv(DeleteGroupsResponse, 2).results] == [("g", 68)]  # NON_EMPTY
    raw.send(LeaveGroupRequest, 4, group_id="g", members=[{"member_id": member, "group_instance_id": None}])
    assert raw.recv(LeaveGroupResponse, 4).error_code == 0
    raw.send(OffsetDeleteRequest, 0, group_id="g", topics=[{"name": "t0", "partitions": [{"partition_index": 0}]}])
    r = raw.recv(OffsetDeleteResponse, 0)
    assert r.error_code == 0 and r.topics[0].partitions[0].error_code == 0
    raw.send(OffsetFetchRequest, 5, group_id="g", topics=None, require_stable=False)
    left = raw.recv(OffsetFetchResponse, 5)
    assert [(p.partition_index, p.committed_offset) for t in left.topics for p in t.partitions] == [(1, 7)]
    raw.send(DeleteGroupsRequest, 2, groups_names=["g", "missing"])
    assert [(r.group_id, r.error_code) for r in raw.recv(DeleteGroupsResponse, 2).results] == [
        ("g", 0), ("missing", 69)]                                             # GROUP_ID_NOT_FOUND


def test_pause_fault_stops_the_real_clock_until_resumed():
    import time
    b = Broker(BrokerConfig(topics={"t0": 1}, faults="pause:at=0,ms=100000"))
    b.start()
    try:
        deadline = time.monotonic() + 10
        while not b._pause_until:                       # the pause fires at the first clock move
            assert time.monotonic() < deadline
            time.sleep(0.01)
        frozen = control.control("127.0.0.1", b.port, {"op": "clock"})["clock_ms"]
        time.sleep(0.2)
        assert control.control("127.0.0.1", b.port, {"op": "clock"})["clock_ms"] == frozen
        control.control("127.0.0.1", b.port, {"op": "resume"})
        while control.control("127.0.0.1", b.port, {"op": "clock"})["clock_ms"] == frozen:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        b.stop()


def test_kip848_heartbeats_and_describe_on_the_consumer_coordinator(broker):
    """ConsumerGroupHeartbeat v0 / ConsumerGroupDescribe v0 reach impl/consumer's coordinator; topic ids on the
    wire are the ones Metadata announces."""
    from kverify.wire.kip848 import (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
                                     ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse)
    a, b = Raw(broker.port), Raw(broker.port)
    a.send(MetadataRequest, 12, topics=[{"name": "t0", "topic_id": None}], allow_auto_topic_creation=False,
           include_topic_authorized_operations=False)
    t0_id = a.recv(MetadataResponse, 12).topics[0].topic_id

    def beat(raw, member_id, epoch, owned=None, topics=("t0",)):
        raw.send(ConsumerGroupHeartbeatRequest, 0, group_id="k", member_id=member_id, member_epoch=epoch,
                 instance_id=None, rack_id=None, rebalance_timeout_ms=5000,
                 subscribed_topic_names=list(topics) if topics is not None else None, server_assignor=None,
                 topic_partitions=owned)
        r = raw.recv(ConsumerGroupHeartbeatResponse, 0)
        assert r.error_code == 0, (r.error_code, r.error_message)
        return r

    def owned(r):
        return [] if r.assignment is None else [
            {"topic_id": tp.topic_id, "partitions": list(tp.partitions)} for tp in r.assignment.topic_partitions]

    ra = beat(a, "m-a-000000000000000000", 0, owned=[])
    assert ra.member_epoch >= 1 and owned(ra) == [{"topic_id": t0_id, "partitions": [0, 1]}]
    rb = beat(b, "m-b-000000000000000000", 0, owned=[])
    # a gives a partition back when told, then b receives it; the two never hold the same partition
    held = {"a": owned(ra), "b": owned(rb)}
    for _ in range(6):
        ra = beat(a, ra.member_id, ra.member_epoch, owned=held["a"], topics=None)
        held["a"] = owned(ra) if ra.assignment is not None else held["a"]
        rb = beat(b, rb.member_id, rb.member_epoch, owned=held["b"], topics=None)
        held["b"] = owned(rb) if rb.assignment is not None else held["b"]
        pa = {p for t in held["a"] for p in t["partitions"]}
        pb = {p for t in held["b"] for p in t["partitions"]}
        assert not pa & pb
    assert sorted(pa | pb) == [0, 1] and pa and pb
    a.send(ConsumerGroupDescribeRequest, 0, group_ids=["k", "nope"], include_authorized_operations=False)
    d = a.recv(ConsumerGroupDescribeResponse, 0)
    assert [g.group_id for g in d.groups] == ["k", "nope"] and d.groups[0].error_code == 0
    assert d.groups[1].error_code == 69                                     # GROUP_ID_NOT_FOUND
    assert sorted(m.member_id for m in d.groups[0].members) == sorted([ra.member_id, rb.member_id])


@pytest.mark.parametrize("argv,needle", [
    (["--topics", "t0:0"], "--topics"), (["--topics", "bad/name:2"], "legal Kafka topic name"),
    (["--port", "70000"], "--port"), (["--behaviour", "truncate-to-hw"], "replication behaviour"),
    (["--behaviour", "no-such-thing"], "unknown behaviour"), (["--faults", "delay:api=Heartbeat"], "needs ms"),
    (["--config", "nope=1"], "--config"), (["--config", "offsets_partitions=0"], "must be positive"),
    (["--consumer-config", "session_timeout_ms=x"], "needs a int"),
    (["--min-session-timeout-ms", "10", "--max-session-timeout-ms", "5"], "min-session"),
])
def test_broker_cli_bad_input_is_one_line_and_exit_2(argv, needle, capsys):
    from kverify.cli import main
    assert main(["broker", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_failover_answers_a_parked_join_with_not_coordinator(broker):
    a, b = Raw(broker.port), Raw(broker.port)
    member_a, gen = _member_of_group(a, broker)
    _join(b)
    mb = b.recv(JoinGroupResponse, 5).member_id
    _join(b, mb)                                      # parked: waits for a to rejoin
    a.send(HeartbeatRequest, 4, group_id="g", generation_id=gen, member_id=member_a, group_instance_id=None)
    assert a.recv(HeartbeatResponse, 4).error_code == 27
    broker.failover(ms=10, load=10)                   # the group is unloaded: the parked join is answered
    r = b.recv(JoinGroupResponse, 5)
    assert r.header.correlation_id == b.corr and r.error_code == NOT_COORDINATOR
    broker.advance(20)
    _join(b, mb)                                      # after the reload b (never a member) is a new joiner
    assert b.recv(JoinGroupResponse, 5).error_code == 25           # UNKNOWN_MEMBER_ID: only a was stored
