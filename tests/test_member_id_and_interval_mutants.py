"""Two mutants that survived `kverify verify` (issue 17, helper h3), planted in process.

A. impl/coordinator/coordinator.py GroupCoordinator._generate_member_id, `seed = member_id_seed & 0xFFFFFFFF`
   -> `>> 0xFFFFFFFF` (seed always 0): every broker's coordinator numbers its member ids from the same origin, so
   when the offsets partition moves to another broker the new coordinator hands out the ids the previous one
   already handed out (Kafka: clientId-UUID, never repeated). Caught by offsets-world's `member-id-never-reused`
   (invariants/offsets.py) at `explore:offsets-world/member-ids` (2 brokers, 2 JoinGroups, one crash).
B. impl/consumer/messages.py ConsumerGroupHeartbeatResponse `heartbeat_interval_ms: int = 0` -> `= 1` or `= -1`: the
   default only reaches answers to a leave and error answers; shown here to change nothing a client does (listed as an
   equivalent mutant, not checked by a property).
"""
import pytest

from kverify.impl.consumer.client import ClientConfig
from kverify.impl.consumer.coordinator import ConsumerGroupCoordinator
from kverify.impl.consumer.messages import ConsumerGroupHeartbeatResponse
from kverify.impl.coordinator import coordinator as coordinator_module
from kverify.impl.replication import offsets_topic as offsets_topic_module
from kverify.invariants.offsets import check_member_id_never_reused
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL

import planted_mutants
from consumer_harness import ConsumerHarness

MUTANTS = {
    "member-id-seed-zero": (coordinator_module, "GroupCoordinator", "_generate_member_id",
                            "seed = self.config.member_id_seed & 0xFFFFFFFF",
                            "seed = self.config.member_id_seed >> 0xFFFFFFFF",
                            "every coordinator generates member ids from seed 0: a coordinator that takes a group "
                            "over hands out the ids its predecessor handed out"),
    "restart-repeats-ids": (offsets_topic_module, "OffsetsTopicWorld", "sync",
                            "fresh._member_counter = self.coordinators[b]._member_counter",
                            "pass",
                            "a crashed broker's new coordinator numbers member ids from 0 again: after it wins the "
                            "offsets partition back it hands out the ids it handed out before its crash"),
}
CHECK = "explore:offsets-world/member-ids"


# --- A: member ids are never handed out twice, across coordinator moves -------------------------------------
def test_member_id_never_reused_on_values():
    assert check_member_id_never_reused(()) is None
    assert check_member_id_never_reused(("c-1-a", "c-2-a")) is None
    assert check_member_id_never_reused(("c-1-a", "c-2-a", "c-1-a")) == (
        "member id c-1-a handed out again (hand-out #3, first at #1)")


def test_member_ids_check_runs_in_every_profile():
    for profile in ("quick", "ci", "deep"):
        assert CHECK in [c.name for c in P.variants(profile)]


def test_member_id_seed_zero_is_caught_when_the_offsets_partition_moves(tmp_path, monkeypatch):
    bad = planted_mutants.variant_catches(monkeypatch, tmp_path, CHECK, "member-id-seed-zero", MUTANTS,
                                          "member-id-never-reused")
    assert "consumer-g-1-00000000-0000-4000-8000-000000000001 handed out again" in bad.summary


def test_a_restarted_broker_does_not_repeat_its_old_ids(tmp_path, monkeypatch):
    """Found by the check above with a preferred election: impl/replication/offsets_topic.py rebuilt a crashed
    broker's coordinator with its member-id counter at 0, so once the broker led the offsets partition again it
    repeated the ids of its first life. The counter now survives the restart (it stands for Kafka's UUIDs)."""
    run = P._variant_check(CHECK)
    planted_mutants.plant(monkeypatch, "restart-repeats-ids", MUTANTS)
    bad = run(planted_mutants.quick_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["member-id-never-reused"], bad.summary


def test_each_broker_hands_out_its_own_ids():
    """The two MEMBER_ID_REQUIRED answers of the shortest trace: broker 1's id, then (after broker 1 crashed and
    broker 2 loaded the group) broker 2's, distinct; with the mutant both are seed 0's first id."""
    from kverify.model import registry

    proto = registry.build("offsets-world", {"brokers": 2, "joins": 2}, frozenset())
    s = proto.init_states()[0]
    trace = [("join", 1), ("crash", 1, False), ("handle_broker_changes",), ("deliver", 1, "LeaderAndIsr", 0, 2),
             ("load",), ("join", 2)]
    for a in trace:
        assert a in proto.actions(s), (a, proto.actions(s))
        s = proto.step(s, a)
    (b1, id1), (b2, id2) = s.joins[1]
    assert (b1, b2) == (1, 2) and id1 != id2
    assert all(inv.check(s) is None for inv in proto.invariants() if inv.kind == "state")


# --- B: the default heartbeat interval of answers built without one ------------------------------------------
def _plant_interval(monkeypatch, value):
    defaults = list(ConsumerGroupHeartbeatResponse.__new__.__defaults__)
    i = ConsumerGroupHeartbeatResponse._fields.index("heartbeat_interval_ms")
    assert defaults[i] == 0
    defaults[i] = value
    monkeypatch.setattr(ConsumerGroupHeartbeatResponse.__new__, "__defaults__", tuple(defaults))


def _blank(r):
    """An answer built without an interval (error, or a leave's: epoch -1) with that field blanked out."""
    if isinstance(r, ConsumerGroupHeartbeatResponse) and (r.error != "NONE" or r.member_epoch < 0):
        return r._replace(heartbeat_interval_ms=None)
    return r


def _run(rejoin_in_flight: bool):
    """Client a joins, leaves (its leave answered, or still in flight when it subscribes again) and rejoins; client b
    joins, loses its requests past its session (fenced by the coordinator) and gets UNKNOWN_MEMBER_ID answers. Returns
    when each message was delivered, every request and answer (intervals of leave and error answers blanked out),
    client a's interval after the leave and the heartbeat answers."""
    coord = ConsumerGroupCoordinator(topics={"foo": 2})
    times = []

    def observe(h):
        times.append((h.now, len(h.delivered)))
    h = ConsumerHarness(coord, {n: ClientConfig("g", n, topics=("foo",)) for n in ("a", "b")}, observer=observe)
    h.act("a", "start")
    h.advance(6000)
    h.act("a", "leave", deliver=not rejoin_in_flight)
    if rejoin_in_flight:
        h.members["a"].subscribe(("foo",), h.now)
        h.act("a", "poll")                      # JOINING, waits for the leave answer, then joins at once
    after_leave = h.members["a"].heartbeat_interval_ms
    if not rejoin_in_flight:
        h.members["a"].subscribe(("foo",), h.now)
        h.act("a", "poll")
    h.advance(6000)
    h.act("b", "start")
    h.advance(12000)
    h.drop = lambda name, _r: name == "b"
    h.advance(50000)                            # past b's session: the coordinator fences it
    h.drop = None
    h.fail_lost()
    h.advance(12000)                            # b: UNKNOWN_MEMBER_ID, rejoins
    delivered = [(name, req, [_blank(r) for r in resps]) for name, req, resps in h.delivered]
    answers = [r for _n, req, resps in h.delivered for r in resps if isinstance(r, ConsumerGroupHeartbeatResponse)]
    assert h.stable("g") and all(m.state == "STABLE" for m in h.members.values())
    return times, delivered, after_leave, answers


@pytest.mark.parametrize("planted", [1, -1])     # -1: the client stores it and sets its timer to now - 1, unread
@pytest.mark.parametrize("rejoin_in_flight", [False, True])
def test_interval_default_of_leave_and_error_answers_changes_nothing_a_client_does(monkeypatch, rejoin_in_flight,
                                                                                    planted):
    times, delivered, after_leave, answers = _run(rejoin_in_flight)
    assert any(r.member_epoch == -1 and r.heartbeat_interval_ms == 0 for r in answers)   # the leave's answer
    assert any(r.error == "UNKNOWN_MEMBER_ID" and r.heartbeat_interval_ms == 0 for r in answers)
    _plant_interval(monkeypatch, planted)
    m_times, m_delivered, m_after_leave, m_answers = _run(rejoin_in_flight)
    assert any(r.member_epoch == -1 and r.heartbeat_interval_ms == planted for r in m_answers)  # reaches answers
    assert any(r.error == "UNKNOWN_MEMBER_ID" and r.heartbeat_interval_ms == planted for r in m_answers)
    if not rejoin_in_flight:
        assert (after_leave, m_after_leave) == (5000, planted)                           # ...and client a's state
    assert (m_times, m_delivered) == (times, delivered)    # yet every request, its time and every other field agree
