"""The consumer-level invariants of invariants/group.py (`consumer_invariants`: offsets-retention,
handover-committed, lost-only-when-fenced) on hand-made views (both sides of each docstring), and
the three historical behaviours they exist for, caught in group-world under HUNT_PARAMS while the
correct world under the same parameters stays clean:
kafka-13636-expire-while-rebalancing, kafka-14196-no-pending-revocation,
kafka-13891-sync-rebalance-reset-generation."""
import pytest

from kverify.invariants.group import (COMPLETING, DEAD, EMPTY, PREPARING, STABLE, Abandon, ClientView, CommitEvent,
                                      GroupView, Handover, check_committed_offset_safety,
                                      check_handover_committed, check_lost_only_when_fenced,
                                      check_offsets_retention, consumer_invariants)
from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import replay
from kverify.model.worlds import group_world as GW

EXPIRE = "kafka-13636-expire-while-rebalancing"
NO_PENDING = "kafka-14196-no-pending-revocation"
SYNC_RESET = "kafka-13891-sync-rebalance-reset-generation"


def view(**kw):
    base = dict(epoch=0, state=STABLE, generation=1, leader=0, members=0b1, assignment=(0b1,), offsets=(1,),
                clients=(ClientView(True, 1, 1, 0b1, True),), delivered=((1, (0b1,)),))
    base.update(kw)
    return GroupView(**base)


def expiry(state, parts=0b1):
    return CommitEvent(-1, -1, parts, True, state)


# --- offsets-retention ----------------------------------------------------------------------------
def test_offsets_retention_allows_the_expiry_of_an_empty_groups_offsets():
    prev = view(state=EMPTY, members=0, leader=-1, assignment=None)
    nxt = prev._replace(offsets=(0,), accepted=(expiry(EMPTY),))
    assert check_offsets_retention(prev, nxt) is None
    assert check_offsets_retention(prev, nxt._replace(state=DEAD, accepted=(expiry(DEAD),))) is None
    # an ordinary commit is no expiry, and the offset decrease of an allowed expiry is no lost commit
    assert check_offsets_retention(view(), view(accepted=(CommitEvent(0, 1, 0b1),))) is None
    assert check_committed_offset_safety(prev, nxt) is None


@pytest.mark.parametrize("state", [PREPARING, COMPLETING, STABLE])
def test_offsets_retention_forbids_expiry_in_a_rebalancing_or_stable_group(state):
    prev = view(state=state)
    nxt = prev._replace(offsets=(0,), accepted=(expiry(state),))
    msg = check_offsets_retention(prev, nxt)
    assert msg is not None and "expired while the group was" in msg
    # committed-offset-safety leaves the judgement to offsets-retention (it is not a standalone commit)
    assert check_committed_offset_safety(prev, nxt) is None


# --- handover-committed ---------------------------------------------------------------------------
def test_handover_committed_allows_a_commit_that_covers_what_was_consumed():
    nxt = view(offsets=(2,), handovers=(Handover(0, 0b1, (2,)),))
    assert check_handover_committed(view(), nxt) is None
    assert check_handover_committed(view(), nxt._replace(offsets=(3,))) is None
    # a partition without a consumed position hands nothing over
    assert check_handover_committed(view(), view(offsets=(0,), handovers=(Handover(0, 0b1, (-1,)),))) is None


def test_handover_committed_forbids_records_consumed_after_the_commit():
    nxt = view(offsets=(1,), handovers=(Handover(0, 0b1, (2,)),))
    msg = check_handover_committed(view(), nxt)
    assert msg is not None and "consumed up to 2" in msg and "committed offset is 1" in msg


# --- lost-only-when-fenced ------------------------------------------------------------------------
@pytest.mark.parametrize("cause", ["UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID", "left"])
def test_lost_only_when_fenced_allows_fencing_and_leaving(cause):
    assert check_lost_only_when_fenced(view(), view(abandoned=(Abandon(0, 1, 0b1, cause),))) is None


def test_lost_only_when_fenced_forbids_losing_partitions_of_a_live_generation():
    msg = check_lost_only_when_fenced(view(), view(abandoned=(Abandon(0, 2, 0b1, "REBALANCE_IN_PROGRESS"),)))
    assert msg is not None and "REBALANCE_IN_PROGRESS" in msg and "{p0}" in msg
    # a member that owns nothing loses nothing (an EAGER member revoked everything before joining)
    assert check_lost_only_when_fenced(view(), view(abandoned=(Abandon(0, 2, 0, "REBALANCE_IN_PROGRESS"),))) is None


def test_the_world_evaluates_the_consumer_invariants():
    names = {i.name for i in registry.build("group-world", {}).invariants()}
    assert {i.name for i in consumer_invariants(lambda a, act, b: (a, b))} <= names
    for name in (EXPIRE, NO_PENDING, SYNC_RESET):
        assert name in GW.SUPPORTS and GW.HUNT_PARAMS[name][1] == "explorer"


# --- the historical behaviours, caught by the explorer ------------------------------------------------
# behaviour, the invariant that catches it, a `sometimes` the correct world must reach under the same bounds
CAUGHT_BY = [(EXPIRE, "offsets-retention", "offsets-expired"), (NO_PENDING, "handover-committed", "handover"),
             (SYNC_RESET, "lost-only-when-fenced", "rebalanced-stable")]


@pytest.mark.slow
@pytest.mark.parametrize("behaviour,invariant,reached", CAUGHT_BY)
def test_explorer_catches_the_behaviour_and_the_correct_world_is_clean(behaviour, invariant, reached):
    params = GW.HUNT_PARAMS[behaviour][0]
    res = explore(registry.build("group-world", params, [behaviour]), graph=False, stop_on_first=True,
                  max_seconds=60)
    assert res.violations, res.stopped
    found = res.violations[0]
    assert found.invariant == invariant, found.violation
    # the same parameters without the behaviour: exhaustive, nothing raised
    ok = explore(registry.build("group-world", params), graph=False, max_seconds=120)
    assert ok.complete and ok.violations == [], [(f.invariant, f.violation.message) for f in ok.violations]
    assert ok.vacuous == [] and ok.sometimes[reached] is not None     # and the run was not vacuous


# the explorer's shortest traces, replayed on both worlds
EXPIRE_TRACE = [("start", 0), ("deliver", 0, 1000001), ("receive", 0, 1000001), ("deliver", 0, 1000002),
                ("tick", 3001), ("receive", 0, 1000002), ("deliver", 0, 1000003), ("receive", 0, 1000003),
                ("deliver", 0, 1000004), ("receive", 0, 1000004), ("commit", 0), ("leave", 0),
                ("deliver", 0, 1000005), ("deliver", 0, 1000006), ("restart", 0), ("deliver", 0, 1000007),
                ("receive", 0, 1000007), ("deliver", 0, 1000008), ("tick", 4001)]
NO_PENDING_TRACE = [("start", 0), ("deliver", 0, 1000001), ("receive", 0, 1000001), ("deliver", 0, 1000002),
                    ("start", 1), ("deliver", 1, 2000001), ("receive", 1, 2000001), ("tick", 3001),
                    ("receive", 0, 1000002), ("deliver", 0, 1000003), ("receive", 0, 1000003),
                    ("deliver", 0, 1000004), ("deliver", 1, 2000002), ("tick", 6001), ("deliver", 0, 1000005),
                    ("receive", 0, 1000004), ("receive", 0, 1000005), ("deliver", 0, 1000006),
                    ("receive", 0, 1000006)]
SYNC_RESET_TRACE = [("start", 0), ("deliver", 0, 1000001), ("receive", 0, 1000001), ("leave", 0), ("restart", 0),
                    ("deliver", 0, 1000004), ("receive", 0, 1000004), ("deliver", 0, 1000005), ("tick", 3001),
                    ("receive", 0, 1000005), ("deliver", 0, 1000006), ("deliver", 0, 1000002),
                    ("receive", 0, 1000006), ("deliver", 0, 1000007), ("receive", 0, 1000007), ("tick", 6001),
                    ("deliver", 0, 1000008), ("receive", 0, 1000008), ("deliver", 0, 1000009),
                    ("deliver", 0, 1000003), ("receive", 0, 1000009), ("deliver", 0, 1000010),
                    ("receive", 0, 1000010)]

# the typical story with two members: m0 (leader, owns p0) rejoins for m1; m1 syncs and leaves before
# m0's SyncGroup arrives, which is answered REBALANCE_IN_PROGRESS
SYNC_RESET_TWO_MEMBERS = [("start", 0), ("deliver", 0, 1000001), ("receive", 0, 1000001), ("deliver", 0, 1000002),
                          ("tick", 3001), ("receive", 0, 1000002), ("deliver", 0, 1000003), ("receive", 0, 1000003),
                          ("deliver", 0, 1000004), ("receive", 0, 1000004), ("start", 1), ("deliver", 1, 2000001),
                          ("receive", 1, 2000001), ("deliver", 1, 2000002), ("tick", 6001), ("deliver", 0, 1000005),
                          ("receive", 0, 1000005), ("deliver", 0, 1000006), ("receive", 0, 1000006),
                          ("receive", 1, 2000002), ("leave", 1), ("deliver", 1, 2000003), ("deliver", 1, 2000004),
                          ("deliver", 0, 1000007), ("receive", 0, 1000007)]


def _world(behaviour, on):
    return registry.build("group-world", GW.HUNT_PARAMS[behaviour][0], [behaviour] if on else [])


def test_expiry_while_rebalancing_deletes_the_offset_only_with_the_behaviour():
    states, v = replay(_world(EXPIRE, True), EXPIRE_TRACE)
    assert v is not None and v.invariant == "offsets-retention" and v.step_index == len(EXPIRE_TRACE)
    assert "PreparingRebalance" in v.message
    states, v = replay(_world(EXPIRE, False), EXPIRE_TRACE)
    assert v is None
    g = states[-1].group("group")
    assert g.state == "PreparingRebalance" and GW._offset(g, ("t", 0)) == 1     # the commit survives


def test_expiry_of_an_empty_group_is_reported_with_the_state_it_happened_in():
    w = registry.build("group-world", dict(GW.FAULT_FREE, expiration=True))
    trace = EXPIRE_TRACE[:14] + [("tick", 5001)]
    states, v = replay(w, trace)
    assert v is None
    assert states[-1].group("group") is None
    assert [(e.partitions, e.expired_in) for e in states[-1].last.accepted] == [(0b1, EMPTY)]


def test_records_consumed_after_the_pre_rebalance_commit_are_lost_only_with_the_behaviour():
    states, v = replay(_world(NO_PENDING, True), NO_PENDING_TRACE)
    assert v is not None and v.invariant == "handover-committed" and v.step_index == len(NO_PENDING_TRACE)
    states, v = replay(_world(NO_PENDING, False), NO_PENDING_TRACE)
    assert v is None
    # the correct member stopped consuming while its commit was in flight: the handover is exact
    assert states[-1].last.handovers == (Handover(0, 0b1, (1,)),)
    assert GW._offset(states[-1].group("group"), ("t", 0)) == 1


def test_sync_rebalance_in_progress_loses_partitions_only_with_the_behaviour():
    states, v = replay(_world(SYNC_RESET, True), SYNC_RESET_TRACE)
    assert v is not None and v.invariant == "lost-only-when-fenced" and v.step_index == len(SYNC_RESET_TRACE)
    assert "REBALANCE_IN_PROGRESS" in v.message
    states, v = replay(_world(SYNC_RESET, False), SYNC_RESET_TRACE)
    assert v is None
    m0 = states[-1].members[0]
    assert m0.owned and m0.generation.member_id      # the correct member keeps its partitions and rejoins


def test_sync_rebalance_in_progress_with_two_members():
    params = dict(GW.HUNT_PARAMS[SYNC_RESET][0], members=2, ticks=3)
    bad = registry.build("group-world", params, [SYNC_RESET])
    states, v = replay(bad, SYNC_RESET_TWO_MEMBERS)
    assert v is not None and v.invariant == "lost-only-when-fenced" and v.step_index == len(SYNC_RESET_TWO_MEMBERS)
    assert not states[-1].members[0].owned
    states, v = replay(registry.build("group-world", params), SYNC_RESET_TWO_MEMBERS)
    assert v is None
    assert states[-1].group("group").state == "PreparingRebalance" and states[-1].members[0].owned


# --- KAFKA-8500 and exclusive-ownership: why the behaviour is not in that invariant's broken_by ---------------
def _two_processes_one_instance(names):
    """group-world whose two processes share group.instance.id i0 (KAFKA-8500's "two unknown members
    join at the same time"), with the behaviour on, checking only `names`."""
    import dataclasses

    w = registry.build("group-world", {"static": True, "events": 2, "ticks": 2, "commits": 1, "faults": 0},
                       ["kafka-8500-duplicate-static-member"])
    c0, c1 = w.member_configs
    w.member_configs = (c0, dataclasses.replace(c1, instance_id=c0.instance_id))   # before any state is built
    w.__dict__["_state_invs"] = tuple(i for i in w.invariants() if i.name in names)
    w.__dict__["_step_invs"] = ()
    return w


@pytest.mark.slow
def test_kafka_8500_duplicates_a_static_member_but_the_fenced_one_cannot_commit():
    dup = explore(_two_processes_one_instance({"one-member-per-instance"}), graph=False, stop_on_first=True)
    assert [f.invariant for f in dup.violations] == ["one-member-per-instance"]
    # exhaustively: the coordinator holds both member ids, but the instance id maps to the newer one, so
    # every commit of the older process is FENCED_INSTANCE_ID: never two committers of one partition
    res = explore(_two_processes_one_instance({"exclusive-ownership"}), graph=False, max_seconds=120)
    assert res.complete and res.violations == [], [f.violation.message for f in res.violations]
    assert res.sometimes["commit-accepted"] is not None and res.sometimes["rebalanced-stable"] is not None
