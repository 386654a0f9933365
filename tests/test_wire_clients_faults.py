"""aiokafka and confluent-kafka (librdkafka, classic protocol) against `kverify broker` under a seeded fault
schedule and under a historical coordinator behaviour (issue 15, "Real clients, end to end").

Faults: three consumers of one group consume what a producer wrote while the broker delays, drops and closes
responses (seeded rules plus a few that fire for sure), one consumer is killed, the survivors take over, and a
coordinator failover from the same fault grammar (`failover:at=T`, added to the schedule once offsets are
committed) keeps the committed offsets. The online checks (kverify/wire/checks.py) must stay silent.
The faults are chosen so that no member's session can expire while its process still runs (no dropped
Heartbeat, delays far below the session timeout): a member expired behind its back keeps fetching, which the
no-double-fetch check rightly reports, and that is the clients' documented zombie window, not a coordinator bug.

Behaviour: `no-generation-bump` (KAFKA-2720) switched on; a first member owns every partition, two more join,
the generation stays the same, so one generation's SyncGroup answers give a partition to two members. The online
checks must say exclusive-ownership, a counterexample record is written, `kverify replay` reproduces it on the
reference coordinator with the behaviour, and no longer reproduces it without.

Helpers (broker start, bounded waits, committed offsets, trace readers) come from tests/test_wire_clients.py.
Waits are bounded loops; nothing asserts on timing.
"""
import asyncio
import json
import time

import pytest
from test_wire_clients import (HEARTBEAT_MS, PARTS, SESSION_MS, TOPIC, clients_saw_the_failover, committed,
                               start_broker, stop_and_check, sync_rounds, until)

from kverify.cli import main as kverify_main
from kverify.testing import start_broker as start_recording_broker

# Tried in order, first match wins (kverify/wire/faults.py). The first three fire for sure (count=1 with p=1):
# a dropped OffsetCommit answer, a connection closed instead of a Heartbeat answer, a delayed SyncGroup answer;
# the rest are drawn from the broker's seeded generator.
FAULTS = ("drop:api=OffsetCommit,count=1;close:api=Heartbeat,count=1;delay:api=SyncGroup,ms=200,count=1;"
          "delay:api=SyncGroup,ms=200,p=0.5;delay:api=JoinGroup,ms=100,p=0.5;delay:api=Heartbeat,ms=150,p=0.3;"
          "delay:api=OffsetCommit,ms=100,p=0.3;delay:api=Fetch,ms=50,p=0.2;close:api=Fetch,p=0.05,count=2")
FAILOVER_MS, LOAD_MS = 800, 400
# Under faults a 1 s session is too short: librdkafka's coordinator re-discovery after the failover plus delayed
# heartbeats could expire a live member, which then fetches as a zombie (seen: no-double-fetch, rightly). 3 s
# leaves room for every fault of the schedule; the killed member is still noticed within 3 s.
FAULT_SESSION_MS = 3000


def _scheduled_failover(b):
    """Snapshot the committed offsets, then add a failover 50 ms ahead of the broker clock to the fault
    schedule (the same grammar as --faults; the seeded rules stay, their generator goes on). Returns the
    snapshot and the broker clock at which the failover is over."""
    before = committed(b)
    assert len(before) == PARTS, f"not every partition committed before the failover: {before}"
    at = b.clock_ms + 50
    b.set_faults(FAULTS + f";failover:at={at},ms={FAILOVER_MS},load={LOAD_MS}")
    return before, at + FAILOVER_MS + LOAD_MS


def _faults_fired(events):
    """Kinds of fault the broker really applied: delay/drop/close of a response, the failover's phases, kills."""
    kinds = set()
    for e in events:
        text = str(e.get("fault") or "")
        if e["dir"] == "fault" and e.get("api"):
            kinds.add(text.split()[0])                       # "delay 150ms api=...", "drop api=..."
        elif e["dir"] == "close" and text.startswith("close api="):
            kinds.add("close")
        elif e["dir"] == "fault" and isinstance(e.get("body"), dict) and e["body"].get("op"):
            kinds.add("failover-" + e["body"]["op"])         # resign, loading, elect
        elif e["dir"] == "fault" and text.startswith("kill "):
            kinds.add("kill")
    return kinds


def _check_fault_run(b, events, owners_after_kill):
    stop_and_check(b, events)                                # the online checks stay silent
    fired = _faults_fired(events)
    assert {"delay", "drop", "close", "kill", "failover-resign", "failover-loading", "failover-elect"} <= fired, fired
    assert clients_saw_the_failover(events)
    rounds = sync_rounds(events)
    assert any(set(r) == {"c0", "c1", "c2"} for r in rounds.values()), rounds
    assert any(set(r) == {"c0", "c1"} and sorted(r["c0"] + r["c1"]) == list(range(PARTS))
               for r in rounds.values()), rounds
    assert all(owners_after_kill) and sum(owners_after_kill) == PARTS


# ---- aiokafka under faults ------------------------------------------------------------------------
def _aio_consumer(port, i, group="g", session_ms=SESSION_MS):
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    return AIOKafkaConsumer(TOPIC, bootstrap_servers=f"127.0.0.1:{port}", group_id=group, client_id=f"c{i}",
                            auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=session_ms,
                            heartbeat_interval_ms=HEARTBEAT_MS, partition_assignment_strategy=(RangePartitionAssignor,),
                            fetch_max_wait_ms=100, retry_backoff_ms=50, request_timeout_ms=5000)


async def _aio_produce(port, start, count):
    from aiokafka import AIOKafkaProducer
    p = AIOKafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", client_id="producer", request_timeout_ms=5000)
    await p.start()
    try:
        for i in range(start, start + count):
            await p.send_and_wait(TOPIC, b"%d" % i, partition=i % PARTS)
    finally:
        await p.stop()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_aiokafka_group_under_a_seeded_fault_schedule():
    b, events = start_broker(faults=FAULTS, seed=31)
    result = {}

    async def main():
        seen = set()
        consumers = [_aio_consumer(b.port, i, session_ms=FAULT_SESSION_MS) for i in range(3)]

        async def poll(group):
            for c in group:
                for recs in (await c.getmany(timeout_ms=50)).values():
                    seen.update(int(r.value) for r in recs)

        def owners(group):
            return [len(c.assignment()) for c in group]

        def settled(group):
            return all(owners(group)) and sum(owners(group)) == PARTS

        async def until_async(cond, group, what, limit_s=40.0):
            deadline = time.monotonic() + limit_s
            while not cond():
                assert time.monotonic() < deadline, f"gave up waiting for {what}: {len(seen)} seen, {owners(group)}"
                await poll(group)

        async def commit_settled(group, what):
            """aiokafka commits the offsets of the assignment it has when called under the generation it has when
            the request leaves, so commit only while the group is settled (see tests/test_wire_clients.py); a
            commit that fails to a fault (dropped answer, closed connection, failover) is retried."""
            for c in group:
                async def ok(c=c):
                    try:
                        await asyncio.wait_for(c.commit(), 10)
                        return True
                    except Exception:   # noqa: BLE001 - the fault schedule at work; retried
                        return False
                deadline = time.monotonic() + 40.0
                while not (settled(group) and await ok()):
                    assert time.monotonic() < deadline, f"gave up committing {what}"
                    await poll(group)

        try:
            await _aio_produce(b.port, 0, 60)
            for c in consumers:
                await c.start()
            await until_async(lambda: seen >= set(range(60)) and settled(consumers), consumers,
                              "three members consuming every record")
            await commit_settled(consumers, "the first 60 records")
            b.kill_client("c2")                      # the process dies: connections cut, no LeaveGroup
            survivors = consumers[:2]
            await until_async(lambda: settled(survivors), survivors,
                              "the survivors to take over the killed member's partitions")
            result["owners_after_kill"] = owners(survivors)
            await _aio_produce(b.port, 60, 30)
            await until_async(lambda: seen >= set(range(90)), survivors, "the survivors to consume the rest")
            await commit_settled(survivors, "90 records")
            before, over = _scheduled_failover(b)
            result["before"] = before
            await until_async(lambda: b.clock_ms > over + 100, survivors, "the failover to finish")
            result["after"] = committed(b)
            await _aio_produce(b.port, 90, 12)
            await until_async(lambda: seen >= set(range(102)), survivors, "consumption after the failover")
            await commit_settled(survivors, "102 records")
            result["final"] = committed(b)
            for c in survivors:
                await c.stop()
        finally:
            for c in consumers:
                try:
                    await asyncio.wait_for(c.stop(), 10)
                except (Exception, asyncio.CancelledError):   # noqa: BLE001 - the killed one cannot stop cleanly
                    pass
    try:
        asyncio.run(main())
    finally:
        b.stop()
    # nothing was committed between the snapshot and the reload: the reload gives exactly what was committed
    assert result["before"] == {(TOPIC, p): 15 for p in range(PARTS)}, result["before"]
    assert result["after"] == result["before"], (result["before"], result["after"])
    assert result["final"] == {(TOPIC, p): 17 for p in range(PARTS)}, result["final"]
    _check_fault_run(b, events, result["owners_after_kill"])


# ---- confluent-kafka under faults -----------------------------------------------------------------
def _ck_conf(port, i, strategy, group="g", session_ms=SESSION_MS):
    return {"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group, "client.id": f"c{i}",
            "group.protocol": "classic", "partition.assignment.strategy": strategy,
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "session.timeout.ms": session_ms, "heartbeat.interval.ms": HEARTBEAT_MS,
            "fetch.wait.max.ms": 100, "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200,
            "retry.backoff.ms": 20, "socket.timeout.ms": 3000, "log_level": 0}


def _ck_produce(port, start, count):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "client.id": "producer", "log_level": 0})
    for i in range(start, start + count):
        p.produce(TOPIC, b"%d" % i, partition=i % PARTS)
    assert p.flush(30) == 0


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_kafka_group_under_a_seeded_fault_schedule(strategy):
    from confluent_kafka import Consumer
    b, events = start_broker(faults=FAULTS, seed=32)
    consumers = []
    seen = set()

    def poll(group):
        for c in group:
            m = c.poll(0.05)
            if m is not None and not m.error():
                seen.add(int(m.value()))
                try:
                    c.commit(message=m, asynchronous=True)
                except Exception:       # noqa: BLE001 - a commit refused in a rebalance; the next message retries
                    pass

    def owners(group):
        return [len(c.assignment()) for c in group]

    def settled(group):
        return all(owners(group)) and sum(owners(group)) == PARTS

    def state(group):
        return lambda: f"{len(seen)} seen, owners {owners(group)}, committed {committed(b)}"

    def commit_all(group, total):
        """Synchronous commits of every position until the broker holds `total` records committed (an async
        commit lost to a fault is not repeated by librdkafka once no new message comes)."""
        def step():
            poll(group)
            for c in group:
                try:
                    c.commit(asynchronous=False)
                except Exception:       # noqa: BLE001 - nothing to commit, or the fault schedule: retried
                    pass
        until(lambda: len(committed(b)) == PARTS and sum(committed(b).values()) == total, step,
              f"{total} records committed", limit_s=40.0, state=state(group))

    try:
        _ck_produce(b.port, 0, 60)
        consumers = [Consumer(_ck_conf(b.port, i, strategy, session_ms=FAULT_SESSION_MS)) for i in range(3)]
        for c in consumers:
            c.subscribe([TOPIC])
        until(lambda: seen >= set(range(60)) and settled(consumers), lambda: poll(consumers),
              "three members consuming every record", limit_s=40.0, state=state(consumers))
        b.kill_client("c2")
        survivors = consumers[:2]
        until(lambda: settled(survivors), lambda: poll(survivors),
              "the survivors to take over the killed member's partitions", limit_s=40.0, state=state(survivors))
        owners_after_kill = owners(survivors)
        _ck_produce(b.port, 60, 30)
        until(lambda: seen >= set(range(90)), lambda: poll(survivors), "the survivors to consume the rest",
              limit_s=40.0, state=state(survivors))
        commit_all(survivors, 90)
        before, over = _scheduled_failover(b)
        until(lambda: b.clock_ms > over + 100, lambda: poll(survivors), "the failover to finish", limit_s=40.0)
        after = committed(b)
        assert set(after) == set(before) and all(after[k] >= before[k] for k in before), (before, after)
        _ck_produce(b.port, 90, 12)
        until(lambda: seen >= set(range(102)), lambda: poll(survivors), "consumption after the failover",
              limit_s=40.0, state=state(survivors))
        commit_all(survivors, 102)
    finally:
        _close_bounded(consumers[:2])
        _close_bounded(consumers[2:], limit_s=2.0)   # killed: its LeaveGroup never gets through
        b.stop()
    assert before == {(TOPIC, p): 15 for p in range(PARTS)}, before
    _check_fault_run(b, events, owners_after_kill)


def _close_bounded(consumers, limit_s=20.0):
    """Close librdkafka consumers on threads of their own, waiting at most limit_s: the killed member's close can
    never reach the coordinator (its connections are cut), and a close must not hang the test run."""
    import threading
    threads = [threading.Thread(target=c.close, daemon=True) for c in consumers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + limit_s
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))


# ---- the historical behaviour no-generation-bump --------------------------------------------------
def _check_recorded_and_replayed(rb, tmp_path, capsys):
    """The online checks said exclusive-ownership (and the whole trace agrees), the generation never moved,
    a counterexample record was written, and `kverify replay` reproduces it with the behaviour and not without."""
    assert "exclusive-ownership" in {v.invariant for v in rb.violations}, [v.line() for v in rb.violations]
    events = list(rb.recorder.events)
    stop_and_check(rb.broker, events, expect_violation="exclusive-ownership")
    assert rb.recorder.errors == [] and rb.broker.errors == []
    gens = {e["body"]["generation_id"] for e in events if e["api"] == "JoinGroup" and e["dir"] == "out"
            and e["body"]["error_code"] == 0}
    assert len(gens) == 1, gens                              # the behaviour really was on
    path = tmp_path / "exclusive-ownership" / "counterexample.json"
    assert path.exists() and path.with_suffix(".html").exists(), sorted(p.name for p in tmp_path.rglob("*"))
    data = json.loads(path.read_text())
    assert data["behaviours"] == ["no-generation-bump"] and {"c0", "c1"} <= set(data["participants"])
    capsys.readouterr()
    assert kverify_main(["replay", str(path)]) == 1
    assert "reproduced on the reference coordinator" in capsys.readouterr().out
    data["behaviours"] = []                                  # the same requests on the correct coordinator
    fixed = tmp_path / "without-the-behaviour.json"
    fixed.write_text(json.dumps(data))
    assert kverify_main(["replay", "--json", str(fixed)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reproduced"] is False, out


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_aiokafka_under_no_generation_bump_is_reported_and_replayed(tmp_path, capsys):
    rb = start_recording_broker(topics={TOPIC: PARTS}, behaviours=["no-generation-bump"], seed=33,
                                report_dir=str(tmp_path))

    async def main():
        consumers = [_aio_consumer(rb.port, 0)]

        async def poll_until(cond, what, limit_s=30.0):
            deadline = time.monotonic() + limit_s
            while not cond():
                assert time.monotonic() < deadline, f"gave up waiting for {what}: {[v.line() for v in rb.violations]}"
                for c in consumers:
                    await c.getmany(timeout_ms=50)
        try:
            await _aio_produce(rb.port, 0, 12)
            await consumers[0].start()
            await poll_until(lambda: len(consumers[0].assignment()) == PARTS, "a first member owning all")
            consumers.extend(_aio_consumer(rb.port, i) for i in (1, 2))
            for c in consumers[1:]:
                await c.start()
            await poll_until(lambda: rb.violations, "the online checks to report")
        finally:
            for c in consumers:
                try:
                    await asyncio.wait_for(c.stop(), 10)
                except (Exception, asyncio.CancelledError):   # noqa: BLE001 - a member of a broken group
                    pass
    try:
        asyncio.run(main())
    finally:
        rb.stop()
    _check_recorded_and_replayed(rb, tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_kafka_under_no_generation_bump_is_reported_and_replayed(strategy, tmp_path, capsys):
    from confluent_kafka import Consumer
    rb = start_recording_broker(topics={TOPIC: PARTS}, behaviours=["no-generation-bump"], seed=34,
                                report_dir=str(tmp_path))
    consumers = []

    def poll():
        for c in consumers:
            c.poll(0.05)
    try:
        _ck_produce(rb.port, 0, 12)
        consumers.append(Consumer(_ck_conf(rb.port, 0, strategy)))
        consumers[0].subscribe([TOPIC])
        until(lambda: len(consumers[0].assignment()) == PARTS, poll, "a first member owning all")
        for i in (1, 2):
            consumers.append(Consumer(_ck_conf(rb.port, i, strategy)))
            consumers[-1].subscribe([TOPIC])
        until(lambda: rb.violations, poll, "the online checks to report")
    finally:
        _close_bounded(consumers)
        rb.stop()
    _check_recorded_and_replayed(rb, tmp_path, capsys)
