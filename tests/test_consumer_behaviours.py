"""Historical KIP-848 behaviours (impl/consumer/behaviours.py): each switched on shows its bad outcome
on the reference coordinator; the correct coordinator does not."""
import pytest

from kverify import behaviours as registry
from kverify.impl.consumer import behaviours as B
from kverify.impl.consumer.assignor_port import PreparedAssignor
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from kverify.impl.consumer.group import IllegalStateError
from kverify.impl.consumer.group_member import ConsumerGroupMember, MemberState as S
from kverify.impl.consumer.messages import ConsumerGroupHeartbeatRequest as HB, Errors as E, TopicPartitions as TPs
from kverify.impl.consumer.reconciliation import reconcile
from kverify.impl.consumer.topics import topic_id_for

FOO = topic_id_for("foo")


def setup(behaviours=(), partitions=2, **kw):
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(assignors={"range": a}, topics={"foo": partitions},
                                 behaviours=frozenset(behaviours), **kw)
    return c, a


def join(c, mid):
    return c.handle(HB("g", mid, 0, rebalance_timeout_ms=60000, subscribed_topic_names=("foo",),
                       topic_partitions=()))[0].response


def beat(c, mid, epoch, owned=None):
    tps = None if owned is None else (TPs(FOO, tuple(sorted(owned))),)
    return c.handle(HB("g", mid, epoch, topic_partitions=tps))[0].response


def owners(c):
    """{partition: [members whose assigned or pending revocation holds it]} (coordinator side)."""
    out = {}
    for m in c.group("g").members:
        for tp in m.assigned | m.pending_revocation:
            out.setdefault(tp, []).append(m.member_id)
    return out


def test_every_behaviour_is_registered():
    names = {b.name for b in registry.by_component("consumer-coordinator")}
    assert names == set(B.ALL)
    for n in B.ALL:
        assert registry.get(n).reference.startswith("KAFKA-")


def partition_comes_back_then_moves(c, a):
    """A owns p0,p1; B joins (p1 -> B); A revokes p1; B leaves (p1 back to A, which takes it in
    one heartbeat: KAFKA-19449's fix); C joins and is given p1 while A still owns it."""
    a.prepare({"A": {FOO: {0, 1}}})
    join(c, "A")
    a.prepare({"A": {FOO: {0}}, "B": {FOO: {1}}})
    join(c, "B")
    beat(c, "A", 1, owned={0, 1})                 # A: UNREVOKED_PARTITIONS, p1 pending revocation
    a.prepare({"A": {FOO: {0, 1}}})
    beat(c, "B", -1)                              # B leaves: p1 goes back to A
    resp = beat(c, "A", 1, owned={0})             # A revoked p1 and gets it back at once
    assert resp.member_epoch == 3 and {tp.topic_id: tp.partitions for tp in resp.assignment} == {FOO: (0, 1)}
    a.prepare({"A": {FOO: {0}}, "C": {FOO: {1}}})
    return join(c, "C")


def test_kafka_16147_partition_given_to_two_members():
    c, a = setup([B.LOST_PARTITION_EPOCH])
    resp = partition_comes_back_then_moves(c, a)
    assert {tp.topic_id: tp.partitions for tp in resp.assignment} == {FOO: (1,)}
    assert sorted(owners(c)[(FOO, 1)]) == ["A", "C"]          # two owners of one partition at once


def test_kafka_16147_fixed_bookkeeping_keeps_the_epoch():
    c, a = setup()
    resp = partition_comes_back_then_moves(c, a)
    assert resp.assignment == ()                              # C waits for A's revocation
    assert c.group("g").member("C").state == S.UNRELEASED_PARTITIONS
    assert owners(c)[(FOO, 1)] == ["A"]
    assert dict(c.group("g").partition_epochs)[(FOO, 1)] == 3
    # A revokes p1; only then C gets it.
    beat(c, "A", 3, owned={0, 1})
    beat(c, "A", 3, owned={0})
    assert (FOO, 1) not in owners(c)                           # released by the acknowledgement
    resp = beat(c, "C", 4)
    assert {tp.topic_id: tp.partitions for tp in resp.assignment} == {FOO: (1,)}
    assert owners(c)[(FOO, 1)] == ["C"]


def test_kafka_16147_fixed_group_rejects_an_inconsistent_epoch_update():
    """The fix also made the bookkeeping strict: removing an epoch that is not there is an error."""
    from kverify.impl.consumer.group import ConsumerGroup
    g = ConsumerGroup("x")
    g.update_member(ConsumerGroupMember("A", member_epoch=1, assigned=frozenset({(FOO, 0)})))
    with pytest.raises(IllegalStateError):
        g.update_member(ConsumerGroupMember("B", member_epoch=1, assigned=frozenset({(FOO, 0)})))


def test_kafka_16147_needs_the_19449_fix_to_show():
    """Finding: with KAFKA-19449's old behaviour too, A detours through UNRELEASED_PARTITIONS and the
    partition epoch is removed with the pending revocation, so no second owner appears."""
    c, a = setup([B.LOST_PARTITION_EPOCH, B.OWN_REVOCATION_UNRELEASED])
    a.prepare({"A": {FOO: {0, 1}}})
    join(c, "A")
    a.prepare({"A": {FOO: {0}}, "B": {FOO: {1}}})
    join(c, "B")
    beat(c, "A", 1, owned={0, 1})
    a.prepare({"A": {FOO: {0, 1}}})
    beat(c, "B", -1)
    beat(c, "A", 1, owned={0})
    a.prepare({"A": {FOO: {0}}, "C": {FOO: {1}}})
    join(c, "C")
    assert all(len(v) == 1 for v in owners(c).values())


def test_kafka_19449_own_pending_revocation_treated_as_unreleased():
    for behaviours, state, assigned in (([B.OWN_REVOCATION_UNRELEASED], S.UNRELEASED_PARTITIONS, {0}),
                                        ([], S.STABLE, {0, 1})):
        c, a = setup(behaviours)
        a.prepare({"A": {FOO: {0, 1}}})
        join(c, "A")
        a.prepare({"A": {FOO: {0}}, "B": {FOO: {1}}})
        join(c, "B")
        beat(c, "A", 1, owned={0, 1})
        a.prepare({"A": {FOO: {0, 1}}})
        beat(c, "B", -1)
        beat(c, "A", 1, owned={0})
        m = c.group("g").member("A")
        assert (m.state, {p for _, p in m.assigned}) == (state, assigned)
        # The buggy path converges one heartbeat later.
        beat(c, "A", 3, owned={0})
        assert c.group("g").state == "Stable"


def lose_two_epoch_bumps(c, a):
    """A's answers at epochs 2 and 3 are lost: its client still says epoch 1, the coordinator says 3
    (previous 2), so A is fenced; the client rejoins with epoch 0 and its member id (KIP-848)."""
    a.prepare({"A": {FOO: {0, 1}}})
    join(c, "A")
    a.prepare({"A": {FOO: {0, 1}}, "B": {}})
    join(c, "B")
    beat(c, "A", 1, owned={0, 1})                 # -> epoch 2 (answer lost)
    a.prepare({"A": {FOO: {0, 1}}, "B": {}, "C": {}})
    join(c, "C")
    beat(c, "A", 1, owned={0, 1})                 # previous epoch + subset: accepted -> 3 (lost)
    assert beat(c, "A", 1, owned={0, 1}).error == E.FENCED_MEMBER_EPOCH
    return c.handle(HB("g", "A", 0, rebalance_timeout_ms=60000, subscribed_topic_names=("foo",),
                       topic_partitions=()))[0].response


def test_kafka_19233_fenced_member_cannot_rejoin_at_epoch_zero():
    c, a = setup([B.NO_EPOCH_ZERO_REJOIN])
    resp = lose_two_epoch_bumps(c, a)
    assert resp.error == E.FENCED_MEMBER_EPOCH
    c.advance(44000)
    assert lose_rejoin(c).error == E.FENCED_MEMBER_EPOCH          # still locked out ...
    c.advance(45001)                                               # ... until the session expires
    assert lose_rejoin(c).error == E.NONE


def lose_rejoin(c):
    return c.handle(HB("g", "A", 0, rebalance_timeout_ms=60000, subscribed_topic_names=("foo",),
                       topic_partitions=()))[0].response


def test_kafka_19233_fixed_rejoin_at_epoch_zero_gets_the_assignment_back():
    c, a = setup()
    resp = lose_two_epoch_bumps(c, a)
    assert (resp.error, resp.member_epoch) == (E.NONE, 3)
    assert {tp.topic_id: tp.partitions for tp in resp.assignment} == {FOO: (0, 1)}


def unrevoked_twice(behaviours):
    """A holds foo 0..5; target 2 moves 3,4,5 to B; before A acknowledges, target 3 moves 2 to C;
    A then revokes only 3,4,5 and must still revoke 2."""
    c, a = setup(behaviours, partitions=6)
    a.prepare({"A": {FOO: set(range(6))}})
    join(c, "A")
    a.prepare({"A": {FOO: {0, 1, 2}}, "B": {FOO: {3, 4, 5}}})
    join(c, "B")
    beat(c, "A", 1, owned=set(range(6)))
    a.prepare({"A": {FOO: {0, 1}}, "B": {FOO: {3, 4, 5}}, "C": {FOO: {2}}})
    join(c, "C")
    beat(c, "A", 1, owned={0, 1, 2})
    return c, a, c.group("g").member("A")


def test_kafka_19974_unrevoked_to_unrevoked_bumps_the_epoch():
    _, _, m = unrevoked_twice([B.UNREVOKED_EPOCH_BUMP])
    assert (m.state, m.member_epoch, m.previous_member_epoch) == (S.UNREVOKED_PARTITIONS, 2, 1)
    # Epoch 2 is a target A never reconciled to, yet A holds partition 2 at it: the fix's invariant
    # "partition epochs only change when a partition changes hands" is broken.
    assert (FOO, 2) in m.pending_revocation


def test_kafka_19974_fixed_epoch_stays():
    c, _, m = unrevoked_twice([])
    assert (m.state, m.member_epoch, m.previous_member_epoch) == (S.UNREVOKED_PARTITIONS, 1, 1)
    assert dict(c.group("g").partition_epochs)[(FOO, 2)] == 1


def test_kafka_19974_builder_level():
    """CurrentAssignmentBuilderTest.testUnrevokedPartitionsToUnrevokedPartitions, before and after."""
    mk = lambda *ps: frozenset(("t", p) for p in ps)  # noqa: E731
    m = ConsumerGroupMember("m", subscribed_topic_names=("t",), state=S.UNREVOKED_PARTITIONS, member_epoch=10,
                            previous_member_epoch=10, assigned=mk(2, 3), pending_revocation=mk(1))
    args = (12, mk(3), lambda tp: -1, mk(2, 3), frozenset({"t"}))
    assert reconcile(m, *args).member_epoch == 10
    assert reconcile(m, *args, bump_on_unrevoked_exit=True).member_epoch == 11


def test_kafka_20442_empty_group_keeps_a_lagging_assignment_epoch():
    for behaviours, expected in (([B.EMPTY_GROUP_ASSIGNMENT_EPOCH], (2, 1)), ([], (2, 2))):
        c, a = setup(behaviours)
        a.prepare({"A": {FOO: {0}}})
        join(c, "A")
        c.advance(45001)                           # session timeout fences the last member
        g = c.group("g")
        assert (g.state, (g.group_epoch, g.assignment_epoch)) == ("Empty", expected)


# ---- client side ----------------------------------------------------------------------------------
def test_client_behaviours_are_registered():
    names = {b.name for b in registry.by_component("consumer-client")}
    assert names == set(B.CLIENT_ALL)


def leave_then_resubscribe(behaviours):
    """A member leaves while a heartbeat is in flight, re-subscribes at once, and the answers come
    late: first the old heartbeat's (epoch 1), then the leave's (epoch -1) while it is JOINING."""
    from kverify.impl.consumer.client import ClientConfig, ConsumerMember
    c = ConsumerGroupCoordinator(topics={"foo": 2})
    m = ConsumerMember(ClientConfig("g", "A", topics=("foo",), auto_commit=False,
                                    topic_names={FOO: "foo"}), behaviours=frozenset(behaviours))
    sent = []

    def pump(reqs):
        queue = list(reqs)
        while queue:
            req = queue.pop(0)
            sent.append(req)
            for reply in c.handle(req):
                queue += m.on_response(reply.correlation_id, reply.response, c.now)

    pump(m.start(0))
    c.advance(5000)
    old = m.tick(c.now)                        # heartbeat in flight
    assert m.leave(c.now) == []                # the leave heartbeat waits for it
    replies = c.handle(old[0])
    leave = m.on_response(replies[0].correlation_id, replies[0].response, c.now)
    assert [r.member_epoch for r in leave] == [-1] and m.state == "UNSUBSCRIBED"
    m.subscribe(("foo",), c.now)
    assert m.poll(c.now) == [] and m.state == "JOINING"
    sent.clear()
    leave_reply = c.handle(leave[0])[0]
    pump(m.on_response(leave_reply.correlation_id, leave_reply.response, c.now))
    return m, sent


def test_kafka_19335_joining_member_takes_the_leave_epoch():
    m, sent = leave_then_resubscribe([B.NEGATIVE_EPOCH_JOINING])
    assert sent[0].member_epoch == -1 and sent[0].subscribed_topic_names == ("foo",)   # a "join" that leaves
    assert m.fenced_count == 1                                                          # answered UNKNOWN_MEMBER_ID


def test_kafka_19335_fixed_joins_at_epoch_zero():
    m, sent = leave_then_resubscribe([])
    assert sent[0].member_epoch == 0 and m.fenced_count == 0 and m.member_epoch > 0


# ---- regex-driven behaviours ------------------------------------------------------------------------
BAR = topic_id_for("bar")


def rx_join(c, mid, names=(), regex=None):
    return c.handle(HB("g", mid, 0, rebalance_timeout_ms=60000, subscribed_topic_names=tuple(names),
                       subscribed_topic_regex=regex, topic_partitions=()))[0].response


def rx_beat(c, mid, epoch, owned, **kw):
    tps = tuple(TPs(t, tuple(sorted(ps))) for t, ps in owned.items() if ps)
    return c.handle(HB("g", mid, epoch, topic_partitions=tps, **kw))[0].response


def epoch_owners(c, history):
    """Record (partition, owner's member epoch) -> owners from the coordinator's view."""
    for m in c.group("g").members:
        for tp in m.assigned | m.pending_revocation:
            history.setdefault((tp, m.member_epoch), set()).add(m.member_id)


def regex_change_then_revocations(behaviours):
    """A (names foo + regex "bar") owns foo-0, foo-1, bar-0 at epoch 2. A switches to an unresolved
    regex: bar-0 must be revoked at epoch 2 with no new target. C joins (epoch 3: foo-1 -> C). A
    revokes bar-0, then must revoke foo-1; C takes foo-1 once A lets it go."""
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(assignors={"range": a}, topics={"foo": 2, "bar": 1},
                                 behaviours=frozenset(behaviours))
    history = {}
    a.prepare({"A": {FOO: {0, 1}, BAR: {0}}})
    rx_join(c, "A", names=("foo",), regex="bar")
    c.advance(2)                                                    # regex resolved: epoch 2
    steps = [lambda: rx_beat(c, "A", 1, {FOO: {0, 1}}),
             lambda: rx_beat(c, "A", 2, {FOO: {0, 1}, BAR: {0}}, subscribed_topic_regex="baz"),
             lambda: a.prepare({"A": {FOO: {0}}, "C": {FOO: {1}}}),
             lambda: rx_join(c, "C", names=("foo",)),
             lambda: rx_beat(c, "A", 2, {FOO: {0, 1}}),            # bar-0 revoked; foo-1 next
             lambda: rx_beat(c, "C", 3, {}),
             lambda: rx_beat(c, "A", c.group("g").member("A").member_epoch, {FOO: {0}}),
             lambda: rx_beat(c, "C", 3, {})]
    for step in steps:
        step()
        epoch_owners(c, history)
    return c, history


def test_kafka_19974_two_members_own_one_partition_at_one_epoch():
    c, history = regex_change_then_revocations([B.UNREVOKED_EPOCH_BUMP])
    shared = {k: v for k, v in history.items() if len(v) > 1}
    assert shared == {((FOO, 1), 3): {"A", "C"}}
    assert c.group("g").state == "Stable"


def test_kafka_19974_fixed_one_owner_per_partition_and_epoch():
    c, history = regex_change_then_revocations([])
    assert all(len(v) == 1 for v in history.values())
    assert history[((FOO, 1), 2)] == {"A"} and history[((FOO, 1), 3)] == {"C"}
    assert c.group("g").state == "Stable"


def drop_regex(behaviours):
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(assignors={"range": a}, topics={"foo": 1, "bar": 1},
                                 behaviours=frozenset(behaviours))
    a.prepare({"A": {FOO: {0}, BAR: {0}}})
    rx_join(c, "A", names=("foo",), regex="bar")
    c.advance(2)
    rx_beat(c, "A", 1, {FOO: {0}})
    a.prepare({"A": {FOO: {0}}})
    resp = rx_beat(c, "A", 2, {FOO: {0}, BAR: {0}}, subscribed_topic_regex="")   # back to names only
    rx_beat(c, "A", resp.member_epoch, {FOO: {0}})                                # bar-0 revoked
    return c


def test_kafka_19899_dropping_a_regex_leaves_a_stale_target():
    from kverify.impl.consumer import checks
    g = drop_regex([B.REGEX_REMOVAL_NO_BUMP]).group("g")
    assert g.group_epoch == 2 and g.state == "Stable"
    assert checks.stable_members_hold_target(g) is not None      # the target still names bar-0


def test_kafka_19899_fixed_bumps_and_recomputes_the_target():
    from kverify.impl.consumer import checks
    g = drop_regex([]).group("g")
    assert g.group_epoch == 3 and g.state == "Stable"
    assert checks.stable_members_hold_target(g) is None
