"""KIP-848 clients + coordinator over a FIFO driver (tests/consumer_harness.py): three members join,
one leaves; partitions move only after their previous owner revoked them, never two owners at once."""
from kverify.impl.consumer import behaviours as B
from kverify.impl.consumer.client import ClientConfig
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from consumer_harness import ConsumerHarness
from kverify.impl.consumer.messages import OffsetCommitRequest


class Watch:
    """Checked after every delivered message and time step."""

    def __init__(self):
        self.violations = []
        self.gained = []            # (now, member, partition, previous owners at that moment)
        self.prev_owned = {}
        self.epochs = {}

    def __call__(self, h):
        owners = {}
        for name, owned in h.owned().items():
            for tp in owned:
                owners.setdefault(tp, []).append(name)
        for tp, names in owners.items():
            if len(names) > 1:
                self.violations.append((h.now, tp, sorted(names)))
        for name, owned in h.owned().items():
            for tp in owned - self.prev_owned.get(name, frozenset()):
                self.gained.append((h.now, name, tp))
            self.prev_owned[name] = owned
            m = h.members[name]
            last = self.epochs.get(name, 0)
            if 0 < m.member_epoch < last:
                self.violations.append((h.now, name, "epoch decreased", last, m.member_epoch))
            self.epochs[name] = m.member_epoch


def harness(names=("a", "b", "c"), behaviours=frozenset()):
    coord = ConsumerGroupCoordinator(topics={"foo": 6, "bar": 3}, behaviours=behaviours)
    watch = Watch()
    h = ConsumerHarness(coord, {n: ClientConfig("g", n, topics=("foo", "bar")) for n in names}, observer=watch)
    return h, watch


def test_three_members_join_one_leaves():
    h, watch = harness()
    h.act("a", "start")
    h.advance(3000)
    assert h.stable("g") and len(h.members["a"].owned) == 9
    h.act("b", "start")
    h.act("c", "start")
    h.advance(20000)
    assert h.stable("g")
    owned = h.owned()
    assert sorted(len(o) for o in owned.values()) == [3, 3, 3]
    assert frozenset().union(*owned.values()) == frozenset(
        (t.topic_id, p) for t in h.coord.topics.topics for p in range(t.partitions))
    moved_from_a = owned["b"] | owned["c"]
    # b and c got their partitions only after a had revoked them (a owned all 9 before).
    for now, name, tp in watch.gained:
        if name in ("b", "c"):
            assert tp in moved_from_a
    before = h.owned()["b"]
    h.act("b", "leave")
    h.advance(20000)
    assert h.stable("g") and h.members["b"].state == "UNSUBSCRIBED"
    after = h.owned()
    assert after["b"] == frozenset() and before <= after["a"] | after["c"]
    assert watch.violations == []
    # Every commit the clients sent carried the member epoch the coordinator knew: all accepted.
    commits = [(req, resp) for _, req, resp in h.delivered if isinstance(req, OffsetCommitRequest)]
    assert commits and all(e == "NONE" for _, resp in commits for _, e in resp[0].partition_errors)
    g = h.coord.group("g")
    assert {m.member_id for m in g.members} == {"a", "c"} and g.state == "Stable"


def test_lost_heartbeats_fence_and_the_member_rejoins():
    """A member whose heartbeats are lost past the session timeout is fenced by the coordinator;
    its next heartbeat gets UNKNOWN_MEMBER_ID, it releases everything and rejoins at epoch 0."""
    h, watch = harness(("a", "b"))
    h.act("a", "start")
    h.act("b", "start")
    h.advance(20000)
    assert h.stable("g")
    cut = {"on": True}
    h.drop = lambda name, req: cut["on"] and name == "b"
    h.advance(46000, step=1000)
    assert h.coord.group("g").member("b") is None            # session expired
    cut["on"] = False
    h.fail_lost()
    h.advance(20000)
    assert h.stable("g") and h.members["b"].fenced_count == 1
    assert watch.violations == []


def test_fenced_member_rejoins_at_epoch_zero_with_its_member_id():
    """a's answers are lost while the group epoch moves twice (b and c join other topics): the
    coordinator has a at epoch 3 (previous 2), the client still says 1 and is fenced; it rejoins at
    epoch 0 with the same member id and, since KAFKA-19233's fix, gets its partitions back at once
    (coordinator-level test of the old behaviour: tests/test_consumer_behaviours.py)."""
    coord = ConsumerGroupCoordinator(topics={"foo": 3, "bar": 2})
    watch = Watch()
    lose = {"on": False}
    h = ConsumerHarness(coord, {"a": ClientConfig("g", "a", topics=("foo",)),
                                "b": ClientConfig("g", "b", topics=("bar",)),
                                "c": ClientConfig("g", "c", topics=("bar",))}, observer=watch,
                        drop_reply=lambda name, resp: lose["on"] and name == "a")
    h.act("a", "start")
    h.advance(6000)
    assert h.stable("g") and h.members["a"].member_epoch == 1
    lose["on"] = True
    h.act("b", "start")
    h.advance(5000)                    # a heartbeats once: epoch 2 on the coordinator, answer lost
    h.fail_lost()
    h.act("c", "start")
    h.advance(5000)                    # a (full request, epoch 1 = previous): epoch 3, answer lost
    h.fail_lost()
    assert coord.group("g").member("a").member_epoch == 3 and h.members["a"].member_epoch == 1
    lose["on"] = False
    h.advance(6000)
    a = h.members["a"]
    assert a.fenced_count == 1 and a.member_id == "a" and a.member_epoch == 3
    assert h.stable("g") and len(a.owned) == 3 and watch.violations == []


# ---- a seeded lossy, reordering network: the checks of impl/consumer/checks.py after every step ------
import random  # noqa: E402

from kverify.impl.consumer import checks  # noqa: E402
from kverify.impl.consumer.client import ConsumerMember  # noqa: E402


def lossy_run(seed, behaviours=frozenset(), steps=250):
    """Three clients (random subscriptions, regexes too; c is static), lost/reordered requests and answers, crashes, restarts,
    leaves, subscription changes, partitions added, coordinator failovers; returns the first broken check or None."""
    rnd = random.Random(seed)
    topics = {"foo": 3, "bar": 2}
    coord = ConsumerGroupCoordinator(topics=topics, behaviours=behaviours)
    names = {t.topic_id: t.name for t in coord.topics.topics}
    clients = {n: ConsumerMember(ClientConfig("g", n, topics=tuple(rnd.sample(sorted(topics), rnd.randint(1, 2))),
                                              topic_names=names, rebalance_timeout_ms=8000,
                                              instance_id="static-c" if n == "c" else None,
                                              correlation_base=i * 10**6)) for i, n in enumerate("abc", 1)}
    net, back = [], []
    epoch_owner = {}                     # (partition, owner's member epoch) -> member id
    for step in range(steps):
        r = rnd.random()
        n = rnd.choice(sorted(clients))
        m = clients[n]
        out = []
        if r < 0.35 and net:
            who, req = net.pop(rnd.randrange(len(net)) if rnd.random() < 0.3 else 0)
            back += [(who, rep) for rep in coord.handle(req)]
        elif r < 0.6 and back:
            who, rep = back.pop(rnd.randrange(len(back)) if rnd.random() < 0.3 else 0)
            n, out = who, clients[who].on_response(rep.correlation_id, rep.response, coord.now)
        elif r < 0.65 and net:
            n, req = net.pop(rnd.randrange(len(net)))
            out = clients[n].on_failure(req.correlation_id, coord.now)
        elif r < 0.68 and back:
            n, rep = back.pop(rnd.randrange(len(back)))
            out = clients[n].on_failure(rep.correlation_id, coord.now)
        elif r < 0.8:
            coord.advance(rnd.choice([100, 500, 2000]))
            for x in sorted(clients):
                net += [(x, q) for q in clients[x].tick(coord.now)]
        elif r < 0.9:
            out = m.poll(coord.now)
        elif r < 0.92:
            out = m.start(coord.now) if m.state == "UNSUBSCRIBED" else m.leave(coord.now)
        elif r < 0.925:
            out = m.subscribe(rnd.sample(sorted(topics), rnd.randint(1, 2)), coord.now)
        elif r < 0.93:
            # (a regex matching nothing can strand partitions in Kafka: see
            # test_consumer_coordinator_regex.py::test_switch_to_a_regex_matching_nothing_strands_partitions)
            out = m.subscribe_regex(rnd.choice(["ba.*", "f.*", "b.*|foo"]), coord.now)
        elif r < 0.94:
            out = m.commit(None, now=coord.now)
        elif r < 0.945:
            m.crash(coord.now)
            out = m.restart(coord.now)
        elif r < 0.95:
            t = rnd.choice(sorted(topics))
            topics = dict(topics, **{t: topics[t] + 1})
            coord.set_topics(topics)
        elif r < 0.96:
            coord.load() if not coord.active else coord.unload()    # coordinator failover
        net += [(n, q) for q in out]
        for x, cl in clients.items():
            # A restarted static member may find its old incarnation still active: fatal, as in Kafka.
            if cl.fatal_error not in (None, "UNRELEASED_INSTANCE_ID"):
                return f"step {step}: client {x} failed with {cl.fatal_error}"
        view = coord.group("g")
        if view is not None:
            for check in checks.ALL:
                msg = check(view)
                if msg:
                    return f"step {step}: {check.__name__}: {msg}"
            msg = checks.target_is_legal(view, coord.topics) or checks.clients_own_only_what_they_hold(
                view, clients.values())
            if msg:
                return f"step {step}: {msg}"
            for mm in view.members:     # one owner per partition and epoch (KAFKA-19974's invariant)
                who = mm.instance_id or mm.member_id      # a static member's successor takes over as is
                for tp in mm.assigned | mm.pending_revocation:
                    prev = epoch_owner.setdefault((tp, mm.member_epoch), who)
                    if prev != who and mm.member_epoch > 0:
                        return f"step {step}: {tp} owned by {prev} and {who} at epoch {mm.member_epoch}"
    return None


def test_lossy_runs_keep_every_check():
    for seed in range(12):
        assert lossy_run(seed) is None, seed


def test_lossy_runs_catch_kafka_16147():
    found = [s for s in range(12) if lossy_run(s, frozenset({B.LOST_PARTITION_EPOCH}))]
    assert found, "the seeded walk never broke a check with KAFKA-16147 switched on"


def test_coordinator_failover_keeps_the_group():
    """The coordinator is unloaded (NOT_COORDINATOR, retried) and loaded back: members keep their
    epochs and partitions, no one is fenced."""
    h, watch = harness(("a", "b"))
    h.act("a", "start")
    h.act("b", "start")
    h.advance(20000)
    before = {n: (m.member_epoch, m.owned) for n, m in h.members.items()}
    h.coord.unload()
    h.advance(6000)
    assert any(resp and getattr(resp[0], "error", None) == "NOT_COORDINATOR" for _, _, resp in h.delivered)
    h.coord.load()
    h.advance(10000)
    assert h.stable("g") and watch.violations == []
    assert {n: (m.member_epoch, m.owned) for n, m in h.members.items()} == before
    assert all(m.fenced_count == 0 for m in h.members.values())


def test_subscription_change_and_new_partitions():
    """A member drops a topic (revoked first, KAFKA-19431's consistency), partitions are added to the
    other topic: the group converges to a legal target each time, with no double owner."""
    h, watch = harness(("a", "b"))
    h.act("a", "start")
    h.act("b", "start")
    h.advance(20000)
    assert h.stable("g")
    bar = h.coord.topics.by_name("bar").topic_id
    h.act("a", "subscribe", ("foo",))
    h.advance(20000)
    assert h.stable("g") and all(t != bar for t, _ in h.members["a"].owned)
    assert {p for t, p in h.members["b"].owned if t == bar} == {0, 1, 2}
    h.coord.set_topics({"foo": 8, "bar": 3})
    h.advance(20000)
    assert h.stable("g")
    foo = h.coord.topics.by_name("foo").topic_id
    owned_foo = [p for m in h.members.values() for t, p in m.owned if t == foo]
    assert sorted(owned_foo) == list(range(8))
    assert watch.violations == []
    assert checks.target_is_legal(h.coord.group("g"), h.coord.topics) is None


def test_runs_are_deterministic_and_copies_independent():
    def final(seed):
        h, _ = harness(("a", "b", "c"))
        for n in "abc":
            h.act(n, "start")
        h.advance(7000)
        copy = h.coord.copy()
        h.act("b", "leave")
        h.advance(7000)
        return h.coord.snapshot(), copy.snapshot(), tuple(m.snapshot() for m in h.members.values())
    first, again = final(0), final(0)
    assert first == again
    assert first[0] != first[1]                 # the copy did not see the leave


def test_regex_subscription_end_to_end():
    coord = ConsumerGroupCoordinator(topics={"foo": 2, "bar": 2, "baz": 1})
    watch = Watch()
    h = ConsumerHarness(coord, {"a": ClientConfig("g", "a", topics=("foo",)),
                                "b": ClientConfig("g", "b")}, observer=watch)
    h.act("a", "start")
    h.act("b", "subscribe_regex", "ba.*")
    h.act("b", "poll")
    h.advance(20000)
    assert h.stable("g") and watch.violations == []
    names = {t.topic_id: t.name for t in coord.topics.topics}
    assert {names[t] for t, _ in h.members["b"].owned} == {"bar", "baz"}
    assert {names[t] for t, _ in h.members["a"].owned} == {"foo"}
    h.act("b", "subscribe", ("foo",))                      # back to names: "" clears the regex
    h.advance(20000)
    assert h.stable("g") and coord.group("g").member("b").subscribed_topic_regex == ""
    assert {names[t] for m in h.members.values() for t, _ in m.owned} == {"foo"}


def test_static_member_restart_keeps_its_partitions_without_a_rebalance():
    coord = ConsumerGroupCoordinator(topics={"foo": 4})
    watch = Watch()
    h = ConsumerHarness(coord, {"a": ClientConfig("g", "a", topics=("foo",)),
                                "s": ClientConfig("g", "s", topics=("foo",), instance_id="static-s")},
                        observer=watch)
    h.act("a", "start")
    h.act("s", "start")
    h.advance(20000)
    assert h.stable("g")
    before, epoch = h.members["s"].owned, coord.group("g").group_epoch
    h.act("s", "leave")                                   # close(): epoch -2, partitions kept for it
    assert coord.group("g").member("s").member_epoch == -2
    h.members["s"].crash(h.now)
    h.act("s", "restart")                                 # new member id, same instance id
    h.advance(10000)
    s = h.members["s"]
    assert s.member_id == "s-r1" and s.owned == before and s.fatal_error is None
    assert coord.group("g").group_epoch == epoch and h.stable("g") and watch.violations == []
