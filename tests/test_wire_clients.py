"""Real Kafka clients against `kverify broker` (each test starts its own broker on port 0).

Three consumers of one group consume what a producer wrote; one is killed (the broker treats its
client id as a crashed process: connections closed, no LeaveGroup gets through), the group rebalances
and the survivors consume the rest; a coordinator failover keeps the committed offsets. The online
checks of kverify/wire/checks.py run over the broker's trace and must stay silent; with a historical
coordinator behaviour switched on they must report it. Waits are bounded loops (no timed assertions).
"""
import asyncio
import time

import pytest

from kverify.wire.checks import check_events
from kverify.wire.server import Broker, BrokerConfig

TOPIC, PARTS = "t0", 6
SESSION_MS, HEARTBEAT_MS = 1000, 100


def start_broker(**kw):
    events = []
    b = Broker(BrokerConfig(topics={TOPIC: PARTS}, group_min_session_timeout_ms=100,
                            group_initial_rebalance_delay_ms=0, **kw))
    b.listeners.append(events.append)
    b.start()
    return b, events


def until(cond, step, what, limit_s=30.0, state=None):
    """Call step() until cond() holds; fail naming `what` (and `state()`) after limit_s (a bound, not a
    timing claim)."""
    deadline = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}" + (f": {state()}" if state else ""))
        step()


def unanswered(events):
    """(client, api, corr) of requests the broker has not answered (nor dropped) yet: a stuck client is then
    waiting on the broker; none means the client itself stopped asking."""
    answered = {(e["conn"], e["corr"]) for e in list(events) if e["dir"] in ("out", "fault")}
    closed = {e["conn"] for e in list(events) if e["dir"] == "close"}
    return [(e["client_id"], e["api"], e["corr"]) for e in list(events)
            if e["dir"] == "in" and (e["conn"], e["corr"]) not in answered and e["conn"] not in closed
            and e["api"] != "Fetch"]


def last_group_answers(events):
    last = {}
    for e in list(events):
        if e["dir"] == "out" and e["api"] in ("JoinGroup", "SyncGroup", "Heartbeat"):
            last[e["client_id"]] = (e["seq"], e["api"], e["body"].get("error_code"), e["body"].get("generation_id"))
    return last


def sync_rounds(events):
    """{generation: {client id: partitions of TOPIC}} from the successful SyncGroup answers (the generation
    is the one of the matching request)."""
    gen_of = {(e["conn"], e["corr"]): e["body"]["generation_id"] for e in events
              if e["dir"] == "in" and e["api"] == "SyncGroup"}
    rounds: dict = {}
    for e in events:
        if e["dir"] == "out" and e["api"] == "SyncGroup" and e["body"]["error_code"] == 0:
            rounds.setdefault(gen_of[(e["conn"], e["corr"])], {})[e["client_id"]] = \
                e["decoded"]["assignment"].get(TOPIC, [])
    return rounds


def committed(b, group="g"):
    def read():
        g = b.coordinator.group(group)
        return {} if g is None else {(tp.topic, tp.partition): co.offset for tp, co in g.offsets.items()}
    return b.call(read)


def stop_and_check(b, events, expect_violation=None):
    b.stop()
    assert b.errors == []
    found = check_events(events)
    if expect_violation is None:
        assert found == [], "\n".join(v.line() for v in found)
    else:
        assert any(v.invariant == expect_violation for v in found), [v.line() for v in found]
    return found


def clients_saw_the_failover(events):
    """Some client was answered NOT_COORDINATOR (16) or COORDINATOR_LOAD_IN_PROGRESS (14)."""
    return any(e["dir"] == "out" and isinstance(e["body"], dict) and e["body"].get("error_code") in (14, 16)
               for e in events)


def failover_and_wait(b):
    before = committed(b)
    assert before, "nothing committed before the failover"
    t0 = b.clock_ms
    b.failover(ms=800, load=400)
    return before, t0


# ---- kafka-python ---------------------------------------------------------------------------------
def _kp_group(port, strategy, n=3, first=0):
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    assignor = {"range": RangePartitionAssignor, "cooperative-sticky": CooperativeStickyAssignor}[strategy]
    # metadata first: kafka-python 3.0.12 can stay "rebalancing" for good when its first assignment as leader
    # was computed without the topic's metadata (a client bug, seen by W2)
    group = [KafkaConsumer(TOPIC, bootstrap_servers=f"127.0.0.1:{port}", group_id="g", client_id=f"c{i}",
                           auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=SESSION_MS,
                           heartbeat_interval_ms=HEARTBEAT_MS, partition_assignment_strategy=[assignor],
                           request_timeout_ms=5000, retry_backoff_ms=50, fetch_max_wait_ms=100)
             for i in range(first, first + n)]
    for c in group:
        c.partitions_for_topic(TOPIC)
    return group


def _kp_produce(port, start, count):
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", client_id="producer")
    for i in range(start, start + count):
        p.send(TOPIC, b"%d" % i, partition=i % PARTS)
    p.flush()
    p.close()


class _Poller:
    """One kafka-python consumer polled on a thread of its own, as an application would (a consumer
    polled in turn with others can time out in the middle of a join that waits for them)."""

    def __init__(self, consumer, seen, lock):
        import threading
        self.c, self.seen, self.lock = consumer, seen, lock
        self.running = True
        self.owned = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            got = self.c.poll(timeout_ms=200)
            with self.lock:
                for recs in got.values():
                    self.seen.update(int(r.value) for r in recs)
            self.owned = len(self.c.assignment())
            if got:
                try:
                    self.c.commit()
                except Exception:       # noqa: BLE001 - a commit during a rebalance may fail; the next one retries
                    pass

    def stop(self, leave=True):
        self.running = False
        self.thread.join(timeout=30)
        if leave:
            self.c.close()
        else:
            self.c.close(autocommit=False)


def _kp_scenario(strategy, behaviours=frozenset(), faults=""):
    import threading
    b, events = start_broker(behaviours=behaviours, faults=faults, seed=11)
    pollers = []
    try:
        _kp_produce(b.port, 0, 60)
        seen, lock = set(), threading.Lock()
        pollers = [_Poller(c, seen, lock) for c in _kp_group(b.port, strategy)]

        def owners(group):
            return [p.owned for p in group]

        def has(n):
            with lock:
                return seen >= set(range(n))

        def state():
            return f"{len(seen)} records seen, owned {owners(pollers)}, states " + str(
                [getattr(getattr(p.c, "_coordinator", None), "state", "?") for p in pollers]) + \
                f", unanswered requests {unanswered(events)}, last group answers {last_group_answers(events)}"

        def nap():
            time.sleep(0.02)
        until(lambda: has(60) and all(owners(pollers)) and sum(owners(pollers)) == PARTS, nap,
              "three members consuming every record", state=state)
        pollers[2].running = False          # the process dies: no more polls, its connections are cut
        b.kill_client("c2")
        survivors = pollers[:2]
        until(lambda: sum(owners(survivors)) == PARTS and all(owners(survivors)), nap,
              "the survivors to take over the killed member's partitions", state=state)
        _kp_produce(b.port, 60, 30)
        until(lambda: has(90), nap, "the survivors to consume the rest", state=state)
        until(lambda: committed(b).get((TOPIC, PARTS - 1), 0) > 0, nap, "a commit of the last partition")
        before, t0 = failover_and_wait(b)
        until(lambda: b.clock_ms > t0 + 1300, nap, "the failover to finish")
        after = committed(b)
        assert set(after) == set(before) and all(after[k] >= before[k] for k in before), (before, after)
        _kp_produce(b.port, 90, 12)
        until(lambda: has(102), nap, "consumption after the failover", state=state)
    finally:
        for p in pollers[:2]:
            p.stop()
        if len(pollers) > 2:
            pollers[2].stop(leave=False)
        b.stop()
    return b, events


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_kafka_python_group_survives_a_killed_member_and_a_failover(strategy):
    b, events = _kp_scenario(strategy)
    stop_and_check(b, events)
    rounds = sync_rounds(events)
    assert any(set(r) == {"c0", "c1", "c2"} for r in rounds.values())
    # after the kill, a generation where the two survivors own every partition, once
    assert any(set(r) == {"c0", "c1"} and sorted(r["c0"] + r["c1"]) == list(range(PARTS)) for r in rounds.values())
    assert any(e["dir"] == "fault" and (e["body"] or {}).get("op") == "elect" for e in events)
    assert clients_saw_the_failover(events)


# ---- confluent-kafka (librdkafka, classic protocol) -----------------------------------------------
@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_kafka_group_survives_a_killed_member_and_a_failover(strategy):
    from confluent_kafka import Consumer, Producer
    b, events = start_broker(seed=12)
    consumers = []
    try:
        def produce(start, count):
            p = Producer({"bootstrap.servers": f"127.0.0.1:{b.port}", "client.id": "producer"})
            for i in range(start, start + count):
                p.produce(TOPIC, b"%d" % i, partition=i % PARTS)
            assert p.flush(20) == 0
        produce(0, 60)
        consumers = [Consumer({"bootstrap.servers": f"127.0.0.1:{b.port}", "group.id": "g", "client.id": f"c{i}",
                               "group.protocol": "classic", "partition.assignment.strategy": strategy,
                               "auto.offset.reset": "earliest", "enable.auto.commit": False,
                               "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": HEARTBEAT_MS,
                               "fetch.wait.max.ms": 100, "reconnect.backoff.ms": 20, "retry.backoff.ms": 20,
                               "log_level": 0})
                     for i in range(3)]
        for c in consumers:
            c.subscribe([TOPIC])
        seen = set()

        def poll(group):
            for c in group:
                m = c.poll(0.05)
                if m is not None and not m.error():
                    seen.add(int(m.value()))
                    try:
                        c.commit(message=m, asynchronous=True)
                    except Exception:   # noqa: BLE001 - retried with the next message
                        pass

        def owners(group):
            return [len(c.assignment()) for c in group]
        until(lambda: seen >= set(range(60)) and all(owners(consumers)) and sum(owners(consumers)) == PARTS,
              lambda: poll(consumers), "three members consuming every record")
        b.kill_client("c2")
        survivors = consumers[:2]
        until(lambda: sum(owners(survivors)) == PARTS and all(owners(survivors)), lambda: poll(survivors),
              "the survivors to take over the killed member's partitions")
        produce(60, 30)
        until(lambda: seen >= set(range(90)), lambda: poll(survivors), "the survivors to consume the rest")
        for _ in range(10):
            poll(survivors)
        before, t0 = failover_and_wait(b)
        until(lambda: b.clock_ms > t0 + 1300, lambda: poll(survivors), "the failover to finish")
        after = committed(b)
        assert set(after) == set(before) and all(after[k] >= before[k] for k in before), (before, after)
        produce(90, 12)
        until(lambda: seen >= set(range(102)), lambda: poll(survivors), "consumption after the failover")
        for c in survivors:
            c.close()
    finally:
        b.stop()
    stop_and_check(b, events)
    assert clients_saw_the_failover(events)


# ---- aiokafka -----------------------------------------------------------------------------------
def test_aiokafka_group_survives_a_killed_member_and_a_failover():
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    b, events = start_broker(seed=13)

    async def main():
        async def produce(start, count):
            p = AIOKafkaProducer(bootstrap_servers=f"127.0.0.1:{b.port}", client_id="producer")
            await p.start()
            for i in range(start, start + count):
                await p.send(TOPIC, b"%d" % i, partition=i % PARTS)
            await p.flush()
            await p.stop()
        await produce(0, 60)
        consumers = [AIOKafkaConsumer(TOPIC, bootstrap_servers=f"127.0.0.1:{b.port}", group_id="g",
                                      client_id=f"c{i}", auto_offset_reset="earliest", enable_auto_commit=False,
                                      session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
                                      partition_assignment_strategy=(RangePartitionAssignor,),
                                      fetch_max_wait_ms=100, retry_backoff_ms=50, request_timeout_ms=5000)
                     for i in range(3)]
        for c in consumers:
            await c.start()
        seen = set()

        async def poll(group):
            for c in group:
                for recs in (await c.getmany(timeout_ms=50)).values():
                    seen.update(int(r.value) for r in recs)

        async def commit(group):
            """Commits only while the group is settled: aiokafka's commit() takes the offsets of the
            assignment it has when called and sends them with the generation it has when the request
            leaves, so a commit overlapping a rebalance commits a partition the member no longer owns
            (seen here: committed-offset-safety reported on generation 4 for a gen-3 partition)."""
            for c in group:
                await c.commit()

        async def until_async(cond, group, what, limit_s=30.0):
            deadline = time.monotonic() + limit_s
            while not cond():
                assert time.monotonic() < deadline, f"gave up waiting for {what}"
                await poll(group)

        def owners(group):
            return [len(c.assignment()) for c in group]
        await until_async(lambda: seen >= set(range(60)) and all(owners(consumers))
                          and sum(owners(consumers)) == PARTS, consumers, "three members consuming every record")
        await commit(consumers)
        b.kill_client("c2")
        survivors = consumers[:2]
        await until_async(lambda: sum(owners(survivors)) == PARTS and all(owners(survivors)), survivors,
                          "the survivors to take over the killed member's partitions")
        await produce(60, 30)
        await until_async(lambda: seen >= set(range(90)), survivors, "the survivors to consume the rest")
        await commit(survivors)
        before, t0 = failover_and_wait(b)
        await until_async(lambda: b.clock_ms > t0 + 1300, survivors, "the failover to finish")
        after = committed(b)
        assert set(after) == set(before) and all(after[k] >= before[k] for k in before), (before, after)
        for c in survivors:
            await c.stop()
        try:
            await asyncio.wait_for(consumers[2].stop(), 10)
        except (Exception, asyncio.CancelledError):   # noqa: BLE001 - the killed member cannot stop cleanly
            pass
    try:
        asyncio.run(main())
    finally:
        b.stop()
    stop_and_check(b, events)
    assert clients_saw_the_failover(events)


# ---- faults and behaviours ------------------------------------------------------------------------
def test_kafka_python_group_under_a_seeded_fault_schedule():
    spec = "delay:api=Heartbeat,ms=150,p=0.3;delay:api=SyncGroup,ms=200,p=0.5;close:api=Fetch,p=0.05,count=3"
    b, events = _kp_scenario("range", faults=spec)
    stop_and_check(b, events)
    assert sum(1 for e in events if e["dir"] == "fault" and e["api"] in ("Heartbeat", "SyncGroup")) >= 1


def test_no_generation_bump_is_reported_by_the_online_checks():
    """KAFKA-2720 switched on: more members join, partitions move, the generation stays the same:
    one generation's SyncGroup answers give a partition to two members. The checks run online (a
    broker listener) and the test stops as soon as they report."""
    from kverify.wire.checks import OnlineChecks
    b, events = start_broker(behaviours=frozenset({"no-generation-bump"}), seed=14)
    online = OnlineChecks()
    b.listeners.append(online.feed)
    consumers = []
    try:
        _kp_produce(b.port, 0, 12)
        consumers = _kp_group(b.port, "range", n=1)

        def poll(group):
            return lambda: [c.poll(timeout_ms=50) for c in group]
        until(lambda: len(consumers[0].assignment()) == PARTS, poll(consumers), "a first member owning all")
        consumers += _kp_group(b.port, "range", n=2, first=1)
        until(lambda: online.violations, poll(consumers), "the online checks to report")
    finally:
        for c in consumers:
            c.close()
        b.stop()
    gens = {e["body"]["generation_id"] for e in events if e["api"] == "JoinGroup" and e["dir"] == "out"
            and e["body"]["error_code"] == 0}
    assert len(gens) == 1                               # the behaviour really was on
    assert "exclusive-ownership" in {v.invariant for v in online.violations}, [v.line() for v in online.violations]
    stop_and_check(b, events, expect_violation="exclusive-ownership")


# ---- KIP-848: librdkafka with group.protocol=consumer on impl/consumer's coordinator ---------------
def _kip848_owners_disjoint(events, dead=()):
    """Replays the ConsumerGroupHeartbeat answers: every member's last answered assignment; fails if two
    live members were told they own the same partition at the same time (a member of a client in `dead`
    stops owning anything once that client is killed: its process is gone)."""
    owned, member_of = {}, {}
    for e in events:
        if e["dir"] == "fault" and str(e.get("fault", "")).startswith("kill "):
            for m, cid in list(member_of.items()):
                if cid == e["fault"][5:]:
                    owned.pop(m, None)
        if e["api"] != "ConsumerGroupHeartbeat" or e["dir"] != "out" or e["body"]["error_code"] != 0:
            continue
        a = e["body"]["assignment"]
        if a is None:
            continue
        m = e["body"]["member_id"] or next((k for k, c in member_of.items() if c == e["client_id"]), None)
        member_of[m] = e["client_id"]
        owned[m] = {(t["topic_id"], p) for t in a["topic_partitions"] for p in t["partitions"]}
        seen = {}
        for mid, parts in owned.items():
            for tp in parts:
                assert tp not in seen, f"{tp} told to {seen[tp]} and {mid} (event {e['seq']})"
                seen[tp] = mid
    return owned


def test_confluent_kafka_kip848_consumers_share_consume_commit_and_survive_a_kill():
    from confluent_kafka import Consumer, Producer
    b, events = start_broker(seed=21, consumer={"session_timeout_ms": SESSION_MS, "heartbeat_interval_ms": HEARTBEAT_MS})
    consumers = []
    try:
        p = Producer({"bootstrap.servers": f"127.0.0.1:{b.port}", "client.id": "producer"})
        for i in range(60):
            p.produce(TOPIC, b"%d" % i, partition=i % PARTS)
        assert p.flush(20) == 0
        del p
        consumers = [Consumer({"bootstrap.servers": f"127.0.0.1:{b.port}", "group.id": "k", "client.id": f"k{i}",
                               "group.protocol": "consumer", "auto.offset.reset": "earliest",
                               "enable.auto.commit": False, "fetch.wait.max.ms": 100, "log_level": 0})
                     for i in range(3)]
        for c in consumers:
            c.subscribe([TOPIC])
        seen = set()

        def poll(group):
            def step():
                for c in group:
                    m = c.poll(0.05)
                    if m is not None and not m.error():
                        seen.add(int(m.value()))
                        c.commit(message=m, asynchronous=True)
            return step

        def owners(group):
            return [len(c.assignment()) for c in group]
        until(lambda: seen >= set(range(60)) and owners(consumers) == [2, 2, 2], poll(consumers),
              "three KIP-848 members sharing and consuming", state=lambda: (len(seen), owners(consumers)))
        b.kill_client("k2")
        survivors = consumers[:2]
        until(lambda: owners(survivors) == [3, 3], poll(survivors), "the survivors to take over",
              state=lambda: owners(survivors))
        def offsets():
            return {tp.partition: o.offset for tp, o in b.call(lambda: b.consumer_coordinator.offsets("k")).items()}
        # every record of each partition consumed and committed (the survivors commit what they consume)
        until(lambda: offsets() == {p: 10 for p in range(PARTS)}, poll(survivors), "commits of every partition",
              state=offsets)
        for c in survivors:
            c.close()
    finally:
        b.stop()
    assert b.errors == []
    assert any(e["api"] == "ConsumerGroupHeartbeat" and e["version"] == 1 for e in events)
    final = _kip848_owners_disjoint(events)                 # never two live owners of one partition
    assert sorted(p for parts in final.values() for _t, p in parts) == list(range(PARTS))
