"""Regular-expression subscriptions (SubscribedTopicRegex): resolved asynchronously, a changed
resolution bumps the group epoch, an unresolved regex matches nothing."""
from kverify.impl.consumer import checks
from kverify.impl.consumer.assignor_port import PreparedAssignor
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from kverify.impl.consumer.group_member import MemberState as S
from kverify.impl.consumer.messages import (ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest as HB,
                                            Errors as E, TopicPartitions as TPs)
from kverify.impl.consumer.regex import is_valid, resolve
from kverify.impl.consumer.topics import topic_id_for

FOO, BAR, BAZ = topic_id_for("foo"), topic_id_for("bar"), topic_id_for("baz")


def join(c, mid, names=(), regex=None):
    return c.handle(HB("g", mid, 0, rebalance_timeout_ms=60000, subscribed_topic_names=tuple(names),
                       subscribed_topic_regex=regex, topic_partitions=()))[0].response


def beat(c, mid, epoch, owned=None, **kw):
    tps = None if owned is None else tuple(TPs(t, tuple(sorted(ps))) for t, ps in owned.items())
    return c.handle(HB("g", mid, epoch, topic_partitions=tps, **kw))[0].response


def test_regex_resolution_helpers():
    assert resolve("ba.*", ["foo", "bar", "baz", "xbar"]) == {"bar", "baz"}
    assert resolve("bar", ["bar", "bart"]) == {"bar"}                   # whole-name match
    assert is_valid("ba[rz]") and not is_valid("(") and not is_valid("(?=a)b")


def test_regex_is_resolved_asynchronously_then_bumps_the_epoch():
    c = ConsumerGroupCoordinator(topics={"foo": 2, "bar": 2, "baz": 1})
    resp = join(c, "m1", regex="ba.*")
    assert (resp.error, resp.member_epoch, resp.assignment) == (E.NONE, 1, ())     # nothing resolved yet
    assert c.group("g").subscription_metadata == ()
    c.advance(2)                                                                     # the resolution completes
    g = c.group("g")
    assert g.group_epoch == 2 and g.state == "Assigning"
    resp = beat(c, "m1", 1)
    assert resp.member_epoch == 2
    assert {tp.topic_id: tp.partitions for tp in resp.assignment} == {BAR: (0, 1), BAZ: (0,)}
    d = c.handle(ConsumerGroupDescribeRequest(("g",)))[0].response.groups[0].members[0]
    assert d.subscribed_topic_regex == "ba.*"


def test_invalid_regex():
    c = ConsumerGroupCoordinator(topics={"foo": 2})
    assert join(c, "m1", regex="(").error == E.INVALID_REGULAR_EXPRESSION
    assert c.group("g") is None


def test_second_member_with_a_resolved_regex_bumps_at_once():
    c = ConsumerGroupCoordinator(topics={"foo": 2, "bar": 2})
    join(c, "m1", regex="bar")
    c.advance(2)
    beat(c, "m1", 1)
    epoch = c.group("g").group_epoch
    resp = join(c, "m2", regex="bar")                       # REGEX_UPDATED_AND_RESOLVED
    assert c.group("g").group_epoch == epoch + 1 and resp.member_epoch == epoch + 1


def test_new_topic_matching_a_regex_is_picked_up():
    c = ConsumerGroupCoordinator(topics={"bar": 1})
    join(c, "m1", regex="ba.*")
    c.advance(2)
    beat(c, "m1", 1)
    c.set_topics({"bar": 1, "baz": 2})
    c.advance(10_001)                                       # past the 10 s minimum between refreshes
    beat(c, "m1", 2, owned={BAR: {0}})                      # the heartbeat starts a refresh
    c.advance(2)
    resp = beat(c, "m1", 2, owned={BAR: {0}})
    assert {tp.topic_id: tp.partitions for tp in resp.assignment} == {BAR: (0,), BAZ: (0, 1)}


def test_changing_to_an_unresolved_regex_revokes_at_the_same_epoch():
    """KAFKA-19431 with a regex: the new regex matches nothing until resolved, so the member must
    revoke the old regex's partitions although no new target exists yet."""
    a = PreparedAssignor("range")
    c = ConsumerGroupCoordinator(assignors={"range": a}, topics={"foo": 1, "bar": 1})
    a.prepare({"A": {FOO: {0}, BAR: {0}}})
    join(c, "A", names=("foo",), regex="bar")
    c.advance(2)
    beat(c, "A", 1, owned={FOO: {0}})
    m = c.group("g").member("A")
    assert (m.state, m.member_epoch, m.assigned) == (S.STABLE, 2, frozenset({(FOO, 0), (BAR, 0)}))
    resp = beat(c, "A", 2, owned={FOO: {0}, BAR: {0}}, subscribed_topic_regex="baz")
    g = c.group("g")
    m = g.member("A")
    assert g.group_epoch == 2 and resp.member_epoch == 2
    assert (m.state, m.pending_revocation) == (S.UNREVOKED_PARTITIONS, frozenset({(BAR, 0)}))
    assert {tp.topic_id: tp.partitions for tp in resp.assignment} == {FOO: (0,)}
    assert checks.coordinator_single_owner(g) is None and checks.partition_epochs_name_owners(g) is None


def test_target_within_subscriptions_holds_when_computed_not_after_a_regex_change():
    c = ConsumerGroupCoordinator(topics={"foo": 1, "bar": 1})
    join(c, "A", names=("foo",), regex="bar")
    c.advance(2)
    beat(c, "A", 1, owned={FOO: {0}})
    g = c.group("g")
    assert checks.target_within_subscriptions(g, c.topics) is None
    assert dict(g.resolved_regexes) == {"bar": frozenset({"bar"})}
    beat(c, "A", 2, owned={FOO: {0}, BAR: {0}}, subscribed_topic_regex="baz")
    assert "does not subscribe" in checks.target_within_subscriptions(c.group("g"), c.topics)


def test_switch_to_a_regex_matching_nothing_strands_partitions():
    """Finding (Kafka-faithful, as read from handleRegularExpressionsResult): B switches from a
    resolved regex to one matching no topic while A still subscribes the dropped topic by name. The
    switch does not bump the epoch (REGEX_UPDATED), the resolution equals EMPTY (no bump) and the
    group's topics do not change (no bump): the target keeps giving bar to B, which no longer takes
    it, and the Stable group leaves bar unconsumed until some other change bumps the epoch."""
    c = ConsumerGroupCoordinator(topics={"foo": 1, "bar": 2})
    join(c, "A", names=("foo", "bar"))
    join(c, "B", regex="ba.*")
    c.advance(2)
    for _ in range(4):
        for mid in ("A", "B"):
            m = c.group("g").member(mid)
            beat(c, mid, m.member_epoch, owned={t: {p for tt, p in m.assigned if tt == t} for t, _ in m.assigned})
    g = c.group("g")
    assert g.state == "Stable" and g.target_of("B") and all(t == BAR for t, _ in g.target_of("B"))
    m = g.member("B")
    beat(c, "B", m.member_epoch, owned={BAR: {p for _, p in m.assigned}}, subscribed_topic_regex="zz")
    beat(c, "B", m.member_epoch, owned={})
    c.advance(10_001)
    beat(c, "B", c.group("g").member("B").member_epoch, owned={})     # starts the resolution
    c.advance(2)                                                        # "zz" -> no topic: no bump
    for _ in range(3):
        for mid in ("A", "B"):
            m = c.group("g").member(mid)
            beat(c, mid, m.member_epoch, owned={t: {p for tt, p in m.assigned if tt == t} for t, _ in m.assigned})
    g = c.group("g")
    held = {tp for mm in g.members for tp in mm.assigned}
    stranded = {tp for tp in g.target_of("B") if tp not in held}
    assert g.state == "Stable" and stranded and all(t == BAR for t, _ in stranded)
    assert dict(g.resolved_regexes) == {"zz": frozenset()}
