"""group-world: the reference coordinator + consumer members + network behind the Protocol interface.

Exhaustive exploration at the smallest bounds (no violation, every `sometimes` reached), the state
contract (hashable, deterministic actions, JSON-primitive actions), the report hooks, and each
historical behaviour the world supports caught by an engine (explorer, seeded walker, Hypothesis).
"""
import json

import pytest

from kverify.invariants.group import EMPTY, PREPARING, COMPLETING, STABLE
from kverify.model import registry
from kverify.model.explore import Explorer
from kverify.model.walk import walk, replay
from kverify.model.worlds import group_world as GW
from kverify.model.worlds.network import Net, REQ, RESP


def build(behaviours=(), **params):
    return registry.build("group-world", params, behaviours)


# --- exhaustive runs of the correct implementation -----------------------------------------------------
@pytest.mark.slow
def test_default_bounds_with_a_fault_explore_exhaustively_without_violation():
    # two members, a crash or a pause; time passes when nothing else can happen (ticks=0)
    w = build()
    assert w.params["faults"] == 1 and w.params["members"] == 2
    res = Explorer(w, graph=True, max_seconds=240).run()
    assert res.complete, res.stopped
    assert res.violations == []
    assert res.graph.analysed and res.graph.unrecoverable == 0 and res.graph.good_states > 0
    assert res.graph.fault_edges > 0
    assert res.vacuous == []
    assert set(res.sometimes) == {"stable-with-all-members", "rebalanced-stable", "commit-accepted", "zombie-fenced"}
    assert res.distinct_states > 10000


def test_the_fault_free_bound_explores_exhaustively_without_violation():
    res = Explorer(build(**GW.FAULT_FREE), graph=True, max_seconds=90).run()
    assert res.complete and res.violations == [] and res.vacuous == []
    assert res.graph.analysed and res.graph.unrecoverable == 0 and res.graph.good_states > 0
    assert set(res.sometimes) == {"stable-with-all-members", "rebalanced-stable", "commit-accepted"}
    assert res.distinct_states > 1000


def test_one_member_with_a_pause_budget_reaches_the_zombie():
    w = build(members=1, events=1, faults=1, ticks=3, commits=1)
    res = Explorer(w, graph=True, max_seconds=90).run()
    assert res.complete and res.violations == [] and res.vacuous == []
    assert res.graph.analysed and res.graph.fault_edges > 0 and res.graph.unrecoverable == 0
    assert res.sometimes["zombie-fenced"] is not None


RICH = dict(faults=2, ticks=6, commits=3, events=4, losses=1, tick_choices=3)


# --- faults, exhaustively, and the explorer's reductions on the world -----------------------------------
# one member, a crash or pause, a lost message, request timeouts as time targets (a member waiting for a
# lost answer must be able to time out, else the state is a dead end of the bound, not of Kafka)
FAULTY = dict(members=1, events=2, faults=1, losses=1, ticks=0, request_timeouts=True, settle_ticks=12)
NO_TIMEOUTS = dict(FAULTY, request_timeouts=False)


@pytest.fixture(scope="module")
def faulty_runs():
    """Each FAULTY bound explored once with the reductions on (graph analysed): the two tests of a bound
    and the reductions test read the same result instead of exploring it again (issue 17)."""
    return {name: Explorer(build(**params), graph=True, max_seconds=90).run()
            for name, params in (("timeouts", FAULTY), ("no-timeouts", NO_TIMEOUTS))}


def test_a_bound_with_a_crash_and_a_lost_message_is_exhaustive_and_recoverable(faulty_runs):
    res = faulty_runs["timeouts"]
    assert res.complete and res.violations == [] and res.vacuous == [], [f.invariant for f in res.violations]
    assert res.graph.analysed and res.graph.fault_edges > 0 and res.graph.unrecoverable == 0
    assert res.sometimes["zombie-fenced"] is not None


def test_without_request_timeouts_a_lost_request_is_a_dead_end_the_recoverability_check_reports(faulty_runs):
    res = faulty_runs["no-timeouts"]
    (f,) = res.violations
    assert f.invariant == "recoverable" and any(a[0] == "lose" for a in f.actions)


def test_reductions_keep_every_verdict_and_shrink_the_state_space(faulty_runs):
    # correlation-id renumbering (canonical) and fault-budget subsumption against the plain fingerprint
    for name, params in (("timeouts", FAULTY), ("no-timeouts", NO_TIMEOUTS)):
        on = faulty_runs[name]
        off = Explorer(build(**params), graph=True, max_seconds=90, symmetry=False).run()
        assert on.complete and off.complete
        assert on.distinct_states < off.distinct_states
        assert [(f.invariant, len(f.actions)) for f in on.violations] == \
            [(f.invariant, len(f.actions)) for f in off.violations]
        assert on.sometimes == off.sometimes and on.max_depth == off.max_depth
        assert (on.graph.unrecoverable == 0) == (off.graph.unrecoverable == 0)


class _NoLeave(GW.GroupWorld):
    """Test double: processes never leave, so a leader only goes away by a crash or a pause."""

    def actions(self, s):
        return [a for a in super().actions(s) if a[0] != "leave"]


def test_a_seeded_bug_behind_a_crash_is_found_with_the_reductions_on():
    # the leader crashes or pauses: the coordinator expires it and must elect another leader (Kafka does)
    def world():
        return _NoLeave(GW.SPEC.resolve({"events": 2, "faults": 1, "ticks": 0}), frozenset({"leader-not-reelected"}))
    on = Explorer(world(), graph=False, stop_on_first=True, max_seconds=90).run()
    off = Explorer(world(), graph=False, stop_on_first=True, max_seconds=90, symmetry=False).run()
    assert [f.invariant for f in on.violations] == [f.invariant for f in off.violations] == ["leader-in-members"]
    assert len(on.violations[0].actions) == len(off.violations[0].actions)
    assert any(a[0] in ("crash", "pause") for a in on.violations[0].actions)
    states, v = replay(world(), on.violations[0].actions)
    assert v is not None and v.invariant == "leader-in-members"


def test_canonical_form_renumbers_correlation_ids_only():
    w = build(**RICH)
    trace, states = _random_states(w, 5)
    for s in states:
        c = w.canonical(s)
        assert c == GW._renumber_cids(s.key(), w.n) and c[3:] == s.key()[3:]
        for m in range(w.n):
            next_cid = c[1][m][1]
            assert (m + 1) * GW.CID_STRIDE < next_cid <= (m + 1) * GW.CID_STRIDE + 1 + len(s.members[m].inflight) + \
                len(s.net.requests[m]) + len(s.net.responses[m]) + 2
    assert len({w.canonical(s) for s in states}) <= len(set(states))
    # the snapshot positions the renumbering relies on (impl/member/member.py, impl/coordinator/group.py)
    for s in states:
        for m, mem in enumerate(s.members):
            snap = s.msnaps[m]
            assert (snap[1], snap[10], snap[24], snap[25], snap[27]) == (
                mem.next_cid, mem.join_cid, tuple(sorted(mem.inflight.items())), mem.blocked, mem.prepare_commit)
        grp = s.coord._groups.get("group")
        if grp is not None:
            cms = s.csnap[1][0][7]
            assert [(cm[10], cm[11]) for cm in cms] == [(x.awaiting_join, x.awaiting_sync) for x in grp.members.values()]


# --- the state and action contract --------------------------------------------------------------------
def _random_states(w, seed, steps=60):
    """States of the first walk from `seed` on that lasts at least 20 steps."""
    while True:
        r = walk(w, seed, steps, record_trace=True)
        if len(r.trace) >= 20:
            break
        seed += 1
    states, v = replay(w, r.trace)
    assert v is None
    return r.trace, states


def test_actions_are_json_primitives_in_a_deterministic_order():
    w1, w2 = build(**RICH), build(**RICH)
    t1, s1 = _random_states(w1, 7)
    t2, s2 = _random_states(w2, 7)
    assert t1 == t2 and len(t1) >= 20
    for s in s1:
        acts = list(w1.actions(s))
        assert acts == list(w1.actions(s))
        for a in acts:
            json.dumps(list(a))
            assert isinstance(a[0], str)


def test_states_are_values_equal_by_content():
    w = build(**RICH)
    trace, states = _random_states(w, 3)
    again = replay(w, trace)[0]
    assert [hash(s) for s in states] == [hash(s) for s in again]
    assert states[-1] == again[-1] and states[-1] is not again[-1]
    assert len(set(states)) >= len(states) // 2
    # stepping never mutates the state it starts from
    s = states[5]
    key = s.key()
    for a in w.actions(s):
        w.step(s, a)
    assert s.key() == key


def test_describe_participants_and_arrows():
    w = build(**RICH)
    trace, states = _random_states(w, 1, 40)
    d = w.describe(states[-1])
    json.dumps(d)
    assert set(d) >= {"group", "members", "in_flight", "now_ms", "delivered"}
    assert set(d["members"]) == {"m0", "m1"}
    assert w.participants() == ("member m0", "member m1", "coordinator")
    assert w.arrow(("deliver", 1, 2000001)) == ("member m1", "coordinator")
    assert w.arrow(("receive", 0, 1000001)) == ("coordinator", "member m0")
    assert w.arrow(("lose", "resp", 0, 1000001)) == ("coordinator", "member m0")
    assert w.arrow(("commit", 0)) == ("member m0", "member m0")


def test_bad_parameters_are_one_line_errors():
    with pytest.raises(ValueError, match="protocol"):
        build(protocol="sticky")
    with pytest.raises(registry.ModelError):
        registry.build("group-world", {"nope": 1})
    with pytest.raises(registry.ModelError, match="does not implement"):
        registry.build("group-world", {}, ["unclean-election"])


def test_offset_expiry_deleting_an_empty_group_is_not_a_lost_commit():
    # commit, leave, then the retention task expires the offsets and deletes the Empty group: a new
    # group may later start at generation 0 again; neither is a violation
    w = build(expiration=True, **GW.FAULT_FREE)
    trace = [("start", 0), ("deliver", 0, 1000001), ("receive", 0, 1000001), ("deliver", 0, 1000002),
             ("tick", 3001), ("receive", 0, 1000002), ("deliver", 0, 1000003), ("receive", 0, 1000003),
             ("deliver", 0, 1000004), ("receive", 0, 1000004), ("commit", 0), ("leave", 0),
             ("deliver", 0, 1000005), ("deliver", 0, 1000006), ("tick", 5001)]
    states, v = replay(w, trace)
    assert v is None
    assert states[-2].group("group").offsets and states[-1].group("group") is None
    assert states[-1].gepoch == states[-2].gepoch + 1
    assert states[-1].last.accepted[0].explicit_reset      # the expiry is reported as a configured deletion


def test_fifo_network_delivers_each_connection_in_order():
    from kverify.impl.coordinator.messages import HeartbeatRequest
    net = Net.empty(1).send(0, [HeartbeatRequest("g", 1, "a", correlation_id=1),
                                HeartbeatRequest("g", 1, "a", correlation_id=2)], conn=0)
    net = net.send(0, [HeartbeatRequest("g", 1, "a", correlation_id=3)], conn=1)
    assert net.deliverable(REQ, 0, True) == (1, 3)          # old connection's head and the new one's
    assert net.deliverable(REQ, 0, False) == (1, 2, 3)
    msg, rest = net.take(REQ, 0, 1)
    assert msg.correlation_id == 1 and rest.deliverable(REQ, 0, True) == (2, 3)
    assert rest.deliverable(RESP, 0, True) == ()


def test_states_passed_inside_one_step_are_read_from_the_coordinators_journal():
    class V:
        def __init__(self, state):
            self.state = state

    leave_last = [("g", "Stable", "PreparingRebalance"), ("other", "Empty", "PreparingRebalance"),
                  ("g", "PreparingRebalance", "Empty")]
    assert GW._passed(leave_last, "g", V("Stable"), V("Empty")) == (PREPARING,)
    assert GW._passed([], "g", V("Stable"), V("Stable")) == ()
    # a journal that does not start where the step started keeps its own start: the invariant sees it
    assert GW._passed([("g", "Empty", "PreparingRebalance")], "g", V("Stable"), V("PreparingRebalance")) == (EMPTY,)


def test_valid_state_transition_judges_what_the_coordinator_really_did(monkeypatch):
    """A coordinator that skips PreparingRebalance when the last member of a Stable group leaves (its own
    transition guard bypassed too) is caught: the world reads the transitions the coordinator journaled,
    it does not infer them from the table the invariant checks."""
    from kverify.impl.coordinator import states
    from kverify.impl.coordinator.membership import MembershipHandling

    prepare = MembershipHandling._prepare_rebalance

    def skipping(self, group):
        if group.state == states.STABLE and not group.members:
            self._transitions.append((group.group_id, group.state, states.EMPTY))
            group.state = states.EMPTY
            return
        prepare(self, group)

    params = {"members": 1, "faults": 0, "commits": 0, "events": 2}
    assert not Explorer(registry.build("group-world", params)).run().violations
    monkeypatch.setattr(MembershipHandling, "_prepare_rebalance", skipping)
    res = Explorer(registry.build("group-world", params)).run()
    hit = [f for f in res.violations if f.invariant == "valid-state-transition"]
    assert hit and "Stable -> Empty" in hit[0].violation.message, [f.invariant for f in res.violations]


def test_supports_lists_only_declared_behaviours():
    from kverify import behaviours as B
    known = {b.name for b in B.all_behaviours()}
    assert "commit-unowned-partitions" in GW.SUPPORTS and "stale-generation-commit" in GW.SUPPORTS
    assert GW.SUPPORTS <= known
    assert set(GW.HUNT_PARAMS) <= GW.SUPPORTS
    for name, (params, engine) in GW.HUNT_PARAMS.items():
        assert engine in ("explorer", "walk")
        build([name], **params)          # every row builds


# --- historical behaviours: which engine catches which ------------------------------------------------
def _explore_until(w, invariant, seconds=60):
    res = Explorer(w, graph=False, max_seconds=seconds, stop_on_first=True).run()
    found = [f for f in res.violations if f.invariant == invariant]
    assert found, (res.stopped, [(f.invariant, f.violation.message) for f in res.violations])
    return found[0]


def _walk_until(w, invariant, seeds=4000, steps=150):
    for seed in range(seeds):
        r = walk(w, seed, steps)
        if r.violation is not None:
            assert r.violation.invariant == invariant, r.violation
            return seed, r.violation
    raise AssertionError(f"no walk of {seeds} broke {invariant}")


def test_no_generation_bump_is_caught_by_the_explorer():
    f = _explore_until(build(["no-generation-bump"], **GW.FAULT_FREE), "generation-monotonicity")
    assert "must grow by exactly one" in f.violation.message
    assert len(f.actions) <= 12


def test_math_abs_coordinator_is_caught_in_the_initial_state():
    f = _explore_until(build(["math-abs-coordinator"], group="polygenelubricants"), "coordinator-partition-in-range")
    assert f.actions == [] and "-48" in f.violation.message
    assert Explorer(build(group="polygenelubricants"), graph=False, max_states=200).run().violations == []


def test_stale_generation_commit_is_caught_when_a_commit_is_overtaken():
    # an OffsetCommit sent under generation g arrives after the member's rejoin made generation g+1
    # (the explorer finds it too, 22 steps, in ~18 s: `explore group-world --param fifo=false`)
    seed, v = _walk_until(build(["stale-generation-commit"], fifo=False, **RICH), "committed-offset-safety")
    assert "accepted while the group is at generation" in v.message


def test_leader_not_reelected_is_caught_by_the_explorer():
    f = _explore_until(build(["leader-not-reelected"], **GW.FAULT_FREE), "leader-in-members")
    assert "is not a member" in f.violation.message and len(f.actions) <= 8


def test_duplicate_static_member_is_caught_by_the_walker():
    seed, v = _walk_until(build(["kafka-8500-duplicate-static-member"], static=True, **RICH),
                          "one-member-per-instance", seeds=200)
    assert "held by two members" in v.message


def test_static_replace_in_completing_is_caught_by_the_walker():
    seed, v = _walk_until(build(["kafka-9801-static-replace-in-completing"], static=True, **RICH),
                          "owners-have-assignments", seeds=200)
    assert "empty assignment" in v.message


def test_commit_of_unowned_partitions_is_a_fault_the_invariants_catch():
    f = _explore_until(build(["commit-unowned-partitions"], partitions=2, **GW.FAULT_FREE), "committed-offset-safety",
                       seconds=90)
    assert "does not assign to it" in f.violation.message


# found by the seeded walker with HUNT_PARAMS (walk seed 3711, ~20 s of searching from seed 0):
# replayed here so that the test stays fast; the search itself is what the bug zoo runs
KAFKA_12983_TRACE = [
    ("start", 0), ("deliver", 0, 1000001), ("start", 1), ("deliver", 1, 2000001), ("receive", 1, 2000001),
    ("tick", 10001), ("receive", 0, 1000001), ("deliver", 0, 1000002), ("receive", 0, 1000002),
    ("deliver", 1, 2000002), ("deliver", 0, 1000003), ("receive", 0, 1000003), ("deliver", 0, 1000004),
    ("receive", 1, 2000002), ("deliver", 1, 2000003), ("tick", 13002), ("receive", 1, 2000003),
    ("receive", 0, 1000004), ("tick", 16002), ("deliver", 0, 1000005), ("deliver", 1, 2000004),
    ("receive", 0, 1000005), ("tick", 19002), ("deliver", 0, 1000006), ("receive", 0, 1000006),
    ("tick", 316003), ("deliver", 0, 1000007), ("deliver", 0, 1000010), ("receive", 0, 1000010)]


def test_join_prepare_once_leaves_a_reset_cooperative_member_owning_partitions():
    # cooperative members keep their partitions through onJoinPrepare; a member id reset mid-rebalance
    # must then declare them lost, which KAFKA-12983 skips
    params, engine = GW.HUNT_PARAMS["kafka-12983-join-prepare-once"]
    assert engine == "walk"
    w = build(["kafka-12983-join-prepare-once"], **params)
    assert walk(w, 3711, 200, record_trace=True).trace == KAFKA_12983_TRACE
    states, v = replay(w, KAFKA_12983_TRACE)
    assert v is not None and v.invariant == "reset-member-owns-nothing" and v.step_index == len(KAFKA_12983_TRACE)
    # the correct member, driven the same way for as long as the same actions exist, owns nothing then
    ok = build(**params)
    s = ok.init_states()[0]
    for i, a in enumerate(KAFKA_12983_TRACE, 1):
        if a not in ok.actions(s):
            break
        nxt = ok.step(s, a)
        assert ok.check_step(s, a, nxt, i) is None and ok.check_state(nxt, i) is None
        s = nxt


def test_the_correct_world_survives_the_same_walks():
    w = build(**RICH)
    for seed in range(150):
        assert walk(w, seed, 150).violation is None
    w = build(static=True, **RICH)
    for seed in range(100):
        assert walk(w, seed, 150).violation is None


def test_hypothesis_machine_finds_a_behaviour_in_the_world():
    from kverify.stateful_tests.machine import run_machine
    finding = run_machine("group-world", {}, frozenset({"no-generation-bump"}), seed=1, database=False)
    assert finding is not None and finding.violation.invariant == "generation-monotonicity"
    w = build(["no-generation-bump"])
    states, v = replay(w, finding.trace, finding.init_index)
    assert v is not None and v.invariant == "generation-monotonicity"
    assert run_machine("group-world", {}, frozenset(), seed=1, database=False, max_examples=20) is None
