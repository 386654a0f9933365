"""The pytest fixture of kverify/testing.py: a running broker with online checks for a client library's tests.
kafka-python consumers under it (silent on the reference coordinator; a violation named with its report under a
historical behaviour), and the fixture failing a test on a violation (pytester)."""
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError

from kverify.reports.record import Counterexample
from kverify.testing import kverify_broker, start_broker  # noqa: F401  (the fixture, also a pytest11 plugin)
from kverify.wire.record import replay

pytest_plugins = ["pytester"]
PARTS = 4
RECORDS = 12


def _consumer(bootstrap, name):
    c = KafkaConsumer("t0", bootstrap_servers=bootstrap, group_id="g", client_id=name,
                      auto_offset_reset="earliest", session_timeout_ms=3000, heartbeat_interval_ms=100,
                      max_poll_interval_ms=10000, fetch_max_wait_ms=20, enable_auto_commit=False,
                      request_timeout_ms=5000)
    # know the topic before the first join: a leader without metadata assigns nothing and rejoins at once, a path
    # on which kafka-python 3.0.12 sometimes stays "rebalancing" after a successful SyncGroup (client-side)
    assert c.partitions_for_topic("t0") == set(range(PARTS))
    return c


def _poll_until(consumers, got, done, seconds=20.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for i, c in enumerate(consumers):
            for tp, recs in c.poll(timeout_ms=20).items():
                for r in recs:
                    got[(tp.partition, r.offset)] = i
            if c.assignment():
                try:
                    c.commit()
                except KafkaError:          # a rebalance under way: the next poll rejoins
                    pass
        if done():
            return True
    return False


def _two_consumers_one_after_the_other(bootstrap):
    """c0 alone gets every partition; then c1 joins and the group splits them. Returns what was consumed."""
    p = KafkaProducer(bootstrap_servers=bootstrap, client_id="producer")
    for i in range(RECORDS):
        p.send("t0", value=b"v%d" % i, partition=i % PARTS)
    p.flush()
    p.close()
    got = {}
    c0 = _consumer(bootstrap, "c0")
    cs = [c0]
    try:
        assert _poll_until(cs, got, lambda: len(c0.assignment()) == PARTS), "c0 never got every partition"
        c1 = _consumer(bootstrap, "c1")
        cs.append(c1)
        ok = _poll_until(cs, got, lambda: len(got) == RECORDS and len(c0.assignment()) == PARTS // 2
                         and len(c1.assignment()) == PARTS // 2)
        assert ok, f"no split: {c0.assignment()} / {c1.assignment()}, {len(got)} records"
    finally:
        for c in cs:
            c.close()
    return got


@pytest.mark.kverify_broker(topics={"t0": PARTS}, seed=3)
def test_kafka_python_group_passes_the_online_checks(kverify_broker):
    got = _two_consumers_one_after_the_other(kverify_broker.bootstrap)
    assert sorted(got) == sorted((i % PARTS, i // PARTS) for i in range(RECORDS))
    syncs = [e for e in kverify_broker.recorder.events if e.get("api") == "SyncGroup" and e["dir"] == "out"]
    assert len(syncs) >= 3                       # c0 alone, then c0 and c1: the checks saw the rebalance
    assert kverify_broker.violations == []       # and the fixture re-checks at teardown


def test_kafka_python_group_under_no_generation_bump_is_reported(tmp_path):
    with start_broker(topics={"t0": PARTS}, behaviours=["no-generation-bump"], report_dir=str(tmp_path)) as rb:
        _two_consumers_one_after_the_other(rb.bootstrap)
    with pytest.raises(AssertionError) as info:
        rb.check()
    assert "exclusive-ownership" in str(info.value) and "counterexample.html" in str(info.value)
    cx = Counterexample.load(str(tmp_path / "exclusive-ownership" / "counterexample.json"))
    assert cx.behaviours == ["no-generation-bump"] and {"c0", "c1"} <= set(cx.participants)
    assert replay(cx)[0]


INNER = '''
import pytest
from kverify.testing import kverify_broker
from kverify.wire.client import GroupMember, WireClient

def _rebalance(rb):
    a = GroupMember(WireClient("127.0.0.1", rb.port, client_id="ca"), "g")
    b = GroupMember(WireClient("127.0.0.1", rb.port, client_id="cb"), "g")
    a.finish_join(a.send_join())
    a.finish_sync(a.send_sync({a.member_id: [("t0", 0), ("t0", 1)]}))
    jb = b.send_join()
    import time
    while a.heartbeat() != "REBALANCE_IN_PROGRESS":
        time.sleep(0.01)
    ja = a.send_join()
    a.finish_join(ja)
    b.finish_join(jb)
    sa = a.send_sync({a.member_id: [("t0", 0)], b.member_id: [("t0", 1)]})
    sb = b.send_sync()
    a.finish_sync(sa)
    b.finish_sync(sb)

@pytest.mark.kverify_broker(topics={"t0": 2}, behaviours=["no-generation-bump"], seed=11)
def test_buggy(kverify_broker):
    _rebalance(kverify_broker)

@pytest.mark.kverify_broker(topics={"t0": 2}, behaviours=["no-generation-bump"], expect_violations=True)
def test_buggy_expected(kverify_broker):
    _rebalance(kverify_broker)
    assert [v.invariant for v in kverify_broker.violations] == ["exclusive-ownership"]

@pytest.mark.kverify_broker(topics={"t0": 2})
def test_correct(kverify_broker):
    _rebalance(kverify_broker)
'''


def test_fixture_fails_a_test_on_a_violation(pytester):
    pytester.makepyfile(INNER)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    # a violation fails the test at the fixture's teardown (pytest counts the call as passed + an error)
    result.assert_outcomes(passed=3, errors=1)
    out = result.stdout.str()
    assert "ERROR at teardown of test_buggy" in out
    assert "exclusive-ownership" in out and "seed 11" in out and "counterexample.html" in out


@pytest.mark.kverify_broker(topics={"t0": 2}, clock="manual", seed=5, faults="failover:at=100,ms=50,load=50")
def test_fixture_faults_failover_keeps_committed_offsets(kverify_broker):
    from kafka.protocol.consumer.group import OffsetFetchRequest

    from kverify.wire.client import GroupMember, WireClient, error_name

    rb = kverify_broker
    a = GroupMember(WireClient("127.0.0.1", rb.port, client_id="ca"), "g")
    a.finish_join(a.send_join())
    a.finish_sync(a.send_sync({a.member_id: [("t0", 0), ("t0", 1)]}))
    assert a.commit({("t0", 0): 5, ("t0", 1): 8}) == {("t0", 0): "NONE", ("t0", 1): "NONE"}

    def fetched():
        r = a.c.call(a.c.build(OffsetFetchRequest, group_id="g", topics=[{"name": "t0", "partition_indexes": [0, 1]}],
                               require_stable=True))
        return error_name(r.error_code), {p.partition_index: p.committed_offset for t in r.topics for p in t.partitions}

    rb.advance(101)                                # the coordinator resigns: NOT_COORDINATOR
    assert a.heartbeat() == "NOT_COORDINATOR"
    rb.advance(50)                                 # loading
    assert fetched()[0] == "COORDINATOR_LOAD_IN_PROGRESS"
    rb.advance(51)                                 # reloaded from the committed offsets log
    assert fetched() == ("NONE", {0: 5, 1: 8})
    assert any("failover" in str(e.get("fault")) for e in rb.recorder.events)
