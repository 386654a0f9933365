"""consumer-group-world's poll stalls (`poll_stall`): a client whose application misses a poll past max.poll.interval
leaves with a heartbeat whose answer it must ignore (ignoreResponse), goes STALE and rejoins when it polls again.

Why it exists: the mutant of impl/consumer/client.py:257 (ConsumerMember.on_response) that handles that answer as
any heartbeat answer (then `if not inf.kind == "heartbeat" and inf.purpose == "leave-stale":`) survived
`kverify verify --profile quick`: no check ever let a poll timer expire. Writing this world option showed that our
client waited for that answer before rejoining, where Kafka's resets the heartbeat request state at once ("we can
join before or after receiving the response"); the client now sends that leave as an `ignored` request. The quick variant
explore:consumer-group-world/poll-stall catches it (stale-leave-answer-ignored) and passes on the correct code; the
parameter is off by default, so the default bounds and their state counts are unchanged.
"""
from kverify.impl.consumer import client as kip848_client
from kverify.invariants.consumer_group import CGView, Ignored, poll_timer_reset_by_poll, stale_leave_answer_ignored
from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import replay
from kverify.model.worlds import consumer_group_world as W
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL

import planted_mutants

CHECK = "explore:consumer-group-world/poll-stall"
QUICK = {"poll_stall": True, "perturbations": 2, "members": 1, "topics": 2, "failover": False, "grow": False}

MUTANTS = {
    # impl/consumer/client.py ConsumerMember.on_response: the survivor's effect on today's code
    "stale-leave-answer-handled": (kip848_client, "ConsumerMember", "on_response",
                                   'if inf.kind == "ignored":\n'       # (the method's source, dedented)
                                   '        out = []                                           # sent with ignoreResponse\n'
                                   '    elif inf.kind == "heartbeat":',
                                   'if inf.kind in ("heartbeat", "ignored"):',
                                   "the answer to the leave sent on poll-timer expiry is handled as a heartbeat answer"),
    # impl/consumer/client.py ConsumerMember._maybe_heartbeat, ReplaceComparisonOperator_GtE_NotEq (a survivor of the
    # quick profile: its only effect on the capped default bound was a bigger state space, INCONCLUSIVE either way)
    "poll-timer-not-equal": (kip848_client, "ConsumerMember", "_maybe_heartbeat",
                             "if (now - self.last_poll_at >= self.config.rebalance_timeout_ms",
                             "if (now - self.last_poll_at != self.config.rebalance_timeout_ms",
                             "the poll timer counts as expired whenever the time since the last poll differs from "
                             "max.poll.interval: the client leaves right after every poll"),
}

# the poll timer expires (miss_poll), the leave is late past the session timeout (stall: the member is removed and
# the client, polling again, rejoins), then the leave reaches the coordinator: UNKNOWN_MEMBER_ID to a JOINING client
FENCED_BY_OLD_ANSWER = [("start", 0), ("deliver", 0), ("receive", 0), ("deliver", 0), ("deliver", 0), ("receive", 0),
                        ("receive", 0), ("miss_poll", 0), ("stall",), ("deliver", 0), ("receive", 0)]


def build(params=None):
    return registry.build("consumer-group-world", params or {})


def test_poll_stall_is_off_by_default_and_changes_no_count():
    """Off: no finite max.poll.interval, neither action ever enabled, the same states as before (137 at the
    processes variant's bound, measured before the parameter existed)."""
    w = build()
    assert not w.poll_stall and w.poll_ms == W.REBALANCE_MS
    assert registry.spec_for("consumer-group-world").params["poll_stall"].default is False
    bound = {"topics": 2, "failover": False, "grow": False, "members": 1}
    off = explore(build(bound), graph=False)
    assert off.complete and not off.violations and off.distinct_states == 137
    assert not {"stale-leave-answered", "stale-leave-refused-after-rejoin"} & set(off.sometimes)
    on = build(dict(bound, poll_stall=True))
    assert on.poll_ms == W.POLL_MS
    on.init_states()                                  # builds the client configs
    assert all(c.rebalance_timeout_ms == W.POLL_MS for c in on.client_configs)
    assert w.is_fault(("miss_poll", 0)) and not w.is_fault(("poll", 0))


def test_the_variant_runs_in_every_profile():
    for profile in ("quick", "ci", "deep"):
        assert CHECK in [c.name for c in P.variants(profile)], profile


def test_a_missed_poll_leaves_goes_stale_and_rejoins():
    """miss_poll: the background thread finds the poll timer expired, sends a leave (epoch -1) and goes STALE; `poll`
    (the application again) makes it JOINING at once, its join going out beside the leave whose answer it ignores."""
    w = build(QUICK)
    s = w.init_states()[0]
    for a in FENCED_BY_OLD_ANSWER[:7]:
        s = w.step(s, a)
    assert s.clients[0].state == "STABLE" and ("miss_poll", 0) in w.actions(s)
    s = w.step(s, ("miss_poll", 0))
    c = s.clients[0]
    assert c.state == "STALE" and c.poll_timer_expired and s.budget.perturbations == 1
    assert [r.member_epoch for _cid, r, _ in s.net.requests[0]] == [-1]
    s = w.step(s, ("poll", 0))
    assert s.clients[0].state == "JOINING"
    assert [r.member_epoch for _cid, r, _ in s.net.requests[0]] == [-1, 0]       # the join does not wait
    s = w.step(w.step(s, ("deliver", 0)), ("receive", 0))
    assert s.facts.ignored == (Ignored(0, True, "NONE", ()),)
    assert [r.member_epoch for _cid, r, _ in s.net.requests[0]] == [0]


def test_stale_leave_answer_ignored_on_views():
    v = CGView(0, 0, 0, (), (), (), (1,), 1, ())
    assert stale_leave_answer_ignored(v, v._replace(ignored=(Ignored(0, False, "NONE", ()),))) is None
    assert stale_leave_answer_ignored(v, v._replace(ignored=(Ignored(1, True, "UNKNOWN_MEMBER_ID", (
        "fenced_count", "next_heartbeat_at")),))) == (
        "client m1 handled the answer to the leave it sent on poll-timer expiry: fenced it (UNKNOWN_MEMBER_ID) "
        "while it rejoined")


def test_the_stale_leave_answer_mutant_is_caught_in_quick(tmp_path, monkeypatch):
    planted_mutants.variant_catches(monkeypatch, tmp_path, CHECK, "stale-leave-answer-handled", MUTANTS,
                                    "stale-leave-answer-ignored")


def test_the_mutant_fences_a_rejoining_client_with_the_old_answer(monkeypatch):
    """The consequence a user sees: the leave, late past the session timeout, is answered UNKNOWN_MEMBER_ID after the
    client polled again; handled, that answer fences the rejoining client (onPartitionsLost, a second rejoin)."""
    states, v = replay(build(QUICK), FENCED_BY_OLD_ANSWER)
    assert v is None and states[-2].clients[0].state == "JOINING"
    assert states[-1].facts.ignored == (Ignored(0, True, "UNKNOWN_MEMBER_ID", ()),)
    assert states[-1].clients[0].fenced_count == 0
    planted_mutants.plant(monkeypatch, "stale-leave-answer-handled", MUTANTS)
    states, v = replay(build(QUICK), FENCED_BY_OLD_ANSWER)
    assert v is not None and v.invariant == "stale-leave-answer-ignored" and v.step_index == len(FENCED_BY_OLD_ANSWER)
    assert "fenced it (UNKNOWN_MEMBER_ID) while it rejoined" in v.message
    assert states[-1].clients[0].fenced_count == 1


def test_poll_timer_reset_by_poll_on_views():
    v = CGView(0, 0, 0, (), (), (), (1,), 1, ())
    assert poll_timer_reset_by_poll(v, v) is None
    assert poll_timer_reset_by_poll(v, v._replace(left_after_poll=(1,))) == (
        "client m1 left the group on poll-timer expiry in a step in which its application polled")


def test_a_client_that_leaves_right_after_polling_is_caught(tmp_path, monkeypatch):
    """Every consumer-group-world step that makes a client's application poll is checked: with the mutant the client
    leaves on its very first poll (start), a FAIL of the quick poll-stall check and of the default bound's first
    step, not only a bigger search that a state cap makes INCONCLUSIVE."""
    run = P._variant_check("explore:consumer-group-world/poll-stall")
    planted_mutants.plant(monkeypatch, "poll-timer-not-equal", MUTANTS)
    bad = run(planted_mutants.quick_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["poll-timer-reset-by-poll"], bad.summary
    _states, v = replay(build(), [("start", 0)])
    assert v is not None and v.invariant == "poll-timer-reset-by-poll"
