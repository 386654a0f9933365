"""Each group invariant over hand-made views: what it allows and what it forbids (both sides of
every docstring), and the historical behaviour that breaks it in the explorer."""
import pytest

from kverify.invariants.group import (BROKEN_BY, COMPLETING, EMPTY, PREPARING, STABLE, STATEMENTS,
                                      ClientView, CommitEvent, GroupView, check_committed_offset_safety,
                                      check_exclusive_ownership, check_generation_monotonicity,
                                      check_leader_in_members, check_valid_transition)
from kverify.model import registry
from kverify.model.explore import explore

A1 = (0b01, 0b10)          # generation assignment: m0 owns p0, m1 owns p1


def client(gen=1, owned=0, can_commit=False, alive=True, acted=None):
    return ClientView(alive, gen, gen if acted is None else acted, owned, can_commit)


def view(**kw):
    base = dict(epoch=0, state=STABLE, generation=1, leader=0, members=0b11, assignment=A1, offsets=(0, 0),
                clients=(client(owned=0b01, can_commit=True), client(owned=0b10, can_commit=True)),
                delivered=((1, A1),))
    base.update(kw)
    return GroupView(**base)


# --- exclusive-ownership -------------------------------------------------------------------------
def test_exclusive_ownership_allows_a_fenced_zombie_that_still_believes_it_owns():
    v = view(clients=(client(owned=0b01, can_commit=True), client(owned=0b11, can_commit=False, acted=0)))
    assert check_exclusive_ownership(v) is None
    assert check_exclusive_ownership(view()) is None


def test_exclusive_ownership_forbids_two_committers_and_overlapping_assignments():
    v = view(clients=(client(owned=0b01, can_commit=True), client(gen=0, owned=0b01, can_commit=True)))
    assert "both consume p0" in check_exclusive_ownership(v)
    assert "to m1 and to another member" in check_exclusive_ownership(view(assignment=(0b01, 0b11)))


# --- committed-offset-safety ---------------------------------------------------------------------
def test_commit_safety_allows_owner_commits_in_stable_and_preparing_and_resets_on_empty():
    prev = view()
    ok = view(offsets=(1, 0), accepted=(CommitEvent(0, 1, 0b01),))
    assert check_committed_offset_safety(prev, ok) is None
    assert check_committed_offset_safety(view(state=PREPARING), ok) is None      # old generation, §7.1.2
    empty = view(state=EMPTY, members=0, leader=-1, assignment=None, offsets=(5, 3))
    reset = empty._replace(offsets=(0, 3), accepted=(CommitEvent(-1, -1, 0b01, True),))
    assert check_committed_offset_safety(empty, reset) is None
    reload = view(epoch=1)                                                      # same offsets after a reload
    assert check_committed_offset_safety(prev, reload) is None


def test_commit_safety_forbids_stale_unowned_standalone_and_lost_commits():
    prev = view(generation=2)
    stale = prev._replace(offsets=(1, 0), accepted=(CommitEvent(0, 1, 0b01),))
    assert "at generation 1 accepted while the group is at generation 2" in check_committed_offset_safety(prev, stale)
    unowned = view(offsets=(0, 1), accepted=(CommitEvent(0, 1, 0b10),))
    assert "does not assign to it" in check_committed_offset_safety(view(), unowned)
    removed = view(members=0b10, offsets=(1, 0), accepted=(CommitEvent(0, 1, 0b01),))
    assert "not a member" in check_committed_offset_safety(view(members=0b10), removed)
    standalone = view(offsets=(0, 0), accepted=(CommitEvent(-1, -1, 0b01, True),))
    assert "standalone commit" in check_committed_offset_safety(view(offsets=(4, 0)), standalone)
    lost = view(epoch=1, offsets=(0, 0))
    assert "moved back from 3 to 0 by a coordinator reload" in check_committed_offset_safety(view(offsets=(3, 0)), lost)


# --- generation-monotonicity ---------------------------------------------------------------------
def test_generation_allows_plus_one_per_join_and_the_lost_generation_reload():
    prep = view(state=PREPARING)
    done = view(state=COMPLETING, generation=2, assignment=None)
    assert check_generation_monotonicity(prep, done) is None
    via = view(state=EMPTY, generation=2, members=0, leader=-1, assignment=None)   # Stable -> Preparing -> Empty
    assert check_generation_monotonicity(view(), via._replace(passed=(PREPARING,))) is None
    # generation 2 completed in memory only (nothing delivered under it); the reload goes back to 1
    lost = view(state=COMPLETING, generation=2, assignment=None,
                clients=(client(gen=2, acted=1), client(gen=2, acted=1)))
    reloaded = view(epoch=1, clients=lost.clients)
    assert check_generation_monotonicity(lost, reloaded) is None
    # ... and the next join reuses number 2 for another membership: still fine
    reuse = view(epoch=1, generation=2, members=0b01, assignment=(0b11, 0), delivered=((1, A1), (2, (0b11, 0))))
    assert check_generation_monotonicity(view(epoch=1, state=COMPLETING, generation=2, members=0b01), reuse) is None
    # a crash restarts a member's generation at -1 (a new incarnation)
    crashed = view(clients=(client(), client(gen=-1, acted=-1, alive=False)))
    assert check_generation_monotonicity(view(), crashed) is None


def test_generation_forbids_no_bump_jumps_delivered_loss_member_regress_and_double_delivery():
    prep = view(state=PREPARING)
    assert "must grow by exactly one" in check_generation_monotonicity(prep, view(state=COMPLETING, assignment=None))
    assert "without a completed join" in check_generation_monotonicity(view(), view(generation=2))
    delivered2 = view(generation=2, delivered=((1, A1), (2, (0b11, 0))))
    back = view(epoch=1, generation=1, delivered=delivered2.delivered)
    assert "already delivered" in check_generation_monotonicity(delivered2, back)
    regress = view(clients=(client(acted=0), client()))
    assert "m0 went from acting under generation 1 back to 0" in check_generation_monotonicity(view(), regress)
    twice = view(delivered=((1, A1), (1, (0b11, 0))))
    assert "delivered with two different assignments" in check_generation_monotonicity(view(), twice)


# --- valid-state-transition ----------------------------------------------------------------------
def test_transitions_allow_the_table_paths_and_reloads_into_empty_or_stable():
    assert check_valid_transition(view(), view(state=PREPARING)) is None
    assert check_valid_transition(view(state=PREPARING), view(state=COMPLETING)) is None
    assert check_valid_transition(view(), view(state=EMPTY)._replace(passed=(PREPARING,))) is None
    assert check_valid_transition(view(state=COMPLETING), view(epoch=1, state=STABLE)) is None


def test_transitions_forbid_shortcuts_and_reloads_into_rebalancing_states():
    assert "Stable -> Empty" in check_valid_transition(view(), view(state=EMPTY))
    assert "CompletingRebalance -> Empty" in check_valid_transition(view(state=COMPLETING), view(state=EMPTY))
    assert "Empty -> CompletingRebalance" in check_valid_transition(view(state=EMPTY), view(state=COMPLETING))
    assert "reloaded into PreparingRebalance" in check_valid_transition(view(), view(epoch=1, state=PREPARING))


# --- leader-in-members ---------------------------------------------------------------------------
def test_leader_in_members_both_sides():
    assert check_leader_in_members(view()) is None
    assert check_leader_in_members(view(state=EMPTY, members=0, leader=-1)) is None
    assert "leader m0 is not a member" in check_leader_in_members(view(members=0b10))
    assert "has no leader" in check_leader_in_members(view(leader=-1))


# --- every invariant: a name, a one-line statement, and the behaviour that breaks it --------------
def test_every_invariant_has_a_statement():
    p = registry.build("group")
    names = {i.name for i in p.invariants()}
    assert names == set(STATEMENTS) == set(BROKEN_BY)
    assert all(STATEMENTS[n] and "\n" not in STATEMENTS[n] for n in names)


SMALL = {"partitions": 1, "events": 2, "faults": 1, "commits": 1}
BREAKS = [(inv, b) for inv, bs in sorted(BROKEN_BY.items()) for b in bs if b in registry.supports("group")]


@pytest.mark.parametrize("invariant,behaviour", BREAKS)
def test_historical_behaviour_breaks_the_invariant_in_the_explorer(invariant, behaviour):
    model = registry.build("group", SMALL, [behaviour])
    # check only this invariant: the explorer does not expand a violating state, so another
    # invariant breaking first (no-generation-bump: generation-monotonicity) would hide this one
    model.__dict__["_state_invs"] = tuple(i for i in model.invariants() if i.name == invariant and i.kind == "state")
    model.__dict__["_step_invs"] = tuple(i for i in model.invariants() if i.name == invariant and i.kind == "step")
    res = explore(model, graph=False)
    hit = [f for f in res.violations if f.invariant == invariant]
    assert hit, [f.invariant for f in res.violations]
    assert explore(registry.build("group", SMALL), graph=False).ok      # and the correct model passes


def test_valid_transitions_hold_in_every_reachable_state_of_every_behaviour():
    # no registered behaviour breaks the state table at this level (see the report); it must hold
    for b in ("", "no-generation-bump", "leader-not-reelected", "unclean-election"):
        res = explore(registry.build("group", SMALL, [b] if b else []), graph=False)
        assert "valid-state-transition" not in {f.invariant for f in res.violations}


# --- behaviours the abstract model does not implement: shown on the world that does -----------------
def round_view(s):
    """The group right after an assignor-rounds rebalance (model/worlds/assignor_rounds.py): the leader's
    answer is the generation's stored assignment and every member consumes, and may commit, what it was
    given. None when the round got no usable answer (nothing is stored then)."""
    import json

    from kverify.certify import properties as P

    problem, answer, _ = json.loads(s.last)
    if P.well_formed(problem, answer) is not None:
        return None
    asg = {m: {tuple(tp) for tp in tps} for m, tps in P.assignment_of(answer).items()}
    ids = [m["id"] for m in problem["members"]]
    bit = {tp: 1 << i for i, tp in enumerate(sorted(set().union(*asg.values())))}
    masks = tuple(sum(bit[tp] for tp in asg.get(m, ())) for m in ids)
    clients = tuple(client(gen=s.rounds, owned=mask, can_commit=True) for mask in masks)
    return GroupView(0, STABLE, s.rounds, 0, (1 << len(ids)) - 1, masks, (0,) * len(bit), clients,
                     ((s.rounds, masks),))


def rounds_checking_exclusive_ownership(behaviours):
    """assignor-rounds whose only invariant is the group's exclusive-ownership, on `round_view`."""
    from kverify.invariants.core import Invariant

    def check(s):
        v = round_view(s) if s.last else None
        return None if v is None else check_exclusive_ownership(v)

    world = registry.build("assignor-rounds", {"max_rounds": 2, "max_events": 2}, behaviours)
    inv = Invariant("exclusive-ownership", STATEMENTS["exclusive-ownership"], check)
    world.__dict__["_state_invs"], world.__dict__["_step_invs"] = (inv,), ()
    return world


def test_round_view_of_a_clean_round_satisfies_exclusive_ownership():
    w = rounds_checking_exclusive_ownership([])
    s = w.step(w.init_states()[0], ("rebalance",))
    v = round_view(s)
    assert v.assignment and bin(v.assignment[0] | v.assignment[1]).count("1") == 4    # 2 topics x 2 partitions
    assert check_exclusive_ownership(v) is None


def breaks_exclusive_ownership_in_assignor_rounds(behaviour):
    bad = explore(rounds_checking_exclusive_ownership([behaviour]), graph=False, stop_on_first=True)
    assert [f.invariant for f in bad.violations] == ["exclusive-ownership"]
    assert "assignment gives" in bad.violations[0].violation.message
    good = explore(rounds_checking_exclusive_ownership([]), graph=False)
    assert good.complete and good.ok and good.distinct_states > 1000


# behaviour -> the test that shows it breaking the invariant on a world (both sides: the world without
# it, at the same bounds, is clean)
WORLD_BREAKS = {("exclusive-ownership", "kafka-12984-double-claim"): breaks_exclusive_ownership_in_assignor_rounds}


def test_every_listed_behaviour_is_shown_on_a_model_or_world():
    listed = {(inv, b) for inv, bs in BROKEN_BY.items() for b in bs}
    assert listed == set(BREAKS) | set(WORLD_BREAKS)
    for _, b in WORLD_BREAKS:
        assert b not in registry.supports("group")


@pytest.mark.parametrize("invariant,behaviour", sorted(WORLD_BREAKS))
def test_historical_behaviour_breaks_the_invariant_on_its_world(invariant, behaviour):
    WORLD_BREAKS[(invariant, behaviour)](behaviour)
