"""Every state x request combination of the coordinator table (digest §7.7) and the transition
table (§1.1), legal and refused."""
import pytest

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, IllegalStateError
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import TopicPartition
from kverify.impl.coordinator.states import ALL_STATES, VALID_PREVIOUS

G = "groupId"
TP = TopicPartition("t", 0)


def make():
    return Harness(GroupCoordinator(CoordinatorConfig(
        group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False)))


def setup(state):
    """A group in `state`; returns (harness, known member, follower or None, current generation)."""
    h = make()
    if state == "Dead":
        h.c.internal.create_group(G, "Dead", members=[dict(member_id="m-1", protocols=(("range", b""),))])
        return h, "m-1", None, 0
    a = h.join_dynamic(G)
    b = h.join_dynamic(G)
    h.advance(51)
    h.advance(501)
    ra, rb = h.get(a), h.get(b)
    leader = ra.leader_id
    follower = rb.member_id if leader == ra.member_id else ra.member_id
    gen = ra.generation_id
    if state == "Empty":
        h.leave(G, ra.member_id, rb.member_id)
        assert h.c.group(G).state == "Empty"
        return h, leader, None, h.c.group(G).generation_id
    if state == "CompletingRebalance":
        return h, leader, follower, gen
    h.sync(G, gen, leader, {leader: b"L", follower: b"F"})
    h.sync(G, gen, follower)
    if state == "Stable":
        return h, leader, follower, gen
    assert state == "PreparingRebalance"
    h.join(G, member_id=leader)            # the leader's rejoin starts a rebalance; follower not yet back
    assert h.c.group(G).state == "PreparingRebalance"
    return h, leader, follower, gen


STATES = ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]


@pytest.mark.parametrize("state", STATES)
def test_join_known_member(state):
    h, leader, follower, gen = setup(state)
    member = follower or leader
    cid = h.join(G, member_id=member)
    if state in ("Empty",):
        assert h.get(cid).error == "UNKNOWN_MEMBER_ID"
    elif state == "Dead":
        assert h.get(cid).error == "COORDINATOR_NOT_AVAILABLE"
    elif state == "PreparingRebalance":
        # the follower was the last one missing: the join completes with generation + 1
        assert h.get(cid).error == "NONE" and h.get(cid).generation_id == gen + 1
        assert h.c.group(G).state == "CompletingRebalance"
    elif state == "CompletingRebalance":
        assert h.get(cid).generation_id == gen and h.c.group(G).state == "CompletingRebalance"
    else:   # Stable, unchanged follower
        assert h.get(cid).generation_id == gen and h.c.group(G).state == "Stable"


@pytest.mark.parametrize("state", STATES)
def test_join_new_member(state):
    h, leader, follower, gen = setup(state)
    cid = h.join(G, require_known=False)
    g = h.c.group(G)
    if state == "Dead":
        assert h.get(cid).error == "COORDINATOR_NOT_AVAILABLE"
        return
    assert not h.done(cid)
    assert g.state == "PreparingRebalance"
    if state == "Empty":
        assert ("ijoin", G) in [k for _, k, _ in h.c.internal.timers()], "initial delayed join"


def test_new_member_in_completing_rebalance_answers_sync_waiters_rebalance_in_progress():
    h, leader, follower, gen = setup("CompletingRebalance")
    s = h.sync(G, gen, follower)
    assert not h.done(s)
    h.join(G, require_known=False)
    assert h.get(s).error == "REBALANCE_IN_PROGRESS"


@pytest.mark.parametrize("state", STATES)
def test_sync(state):
    h, leader, follower, gen = setup(state)
    member = follower or leader
    cid = h.sync(G, gen, member)
    expected = {"Empty": "UNKNOWN_MEMBER_ID", "PreparingRebalance": "REBALANCE_IN_PROGRESS",
                "Dead": "COORDINATOR_NOT_AVAILABLE", "Stable": "NONE"}
    if state == "CompletingRebalance":
        assert not h.done(cid), "a follower waits for the leader"
        lc = h.sync(G, gen, leader, {leader: b"L", follower: b"F"})
        assert h.get(lc).assignment == b"L" and h.get(cid).assignment == b"F"
        assert h.c.group(G).state == "Stable"
    else:
        assert h.get(cid).error == expected[state]
    if state == "Stable":
        assert h.get(cid).assignment == b"F"


@pytest.mark.parametrize("state", STATES)
def test_heartbeat(state):
    h, leader, follower, gen = setup(state)
    expected = {"Empty": "UNKNOWN_MEMBER_ID", "PreparingRebalance": "REBALANCE_IN_PROGRESS",
                "CompletingRebalance": "NONE", "Stable": "NONE", "Dead": "COORDINATOR_NOT_AVAILABLE"}
    assert h.heartbeat(G, gen, follower or leader) == expected[state]
    if state not in ("Empty", "Dead"):
        assert h.heartbeat(G, gen + 7, follower) == "ILLEGAL_GENERATION"
        assert h.heartbeat(G, gen, "nobody") == "UNKNOWN_MEMBER_ID"


@pytest.mark.parametrize("state", STATES)
def test_leave(state):
    h, leader, follower, gen = setup(state)
    r = h.leave(G, follower or leader)
    if state == "Dead":
        assert r.error == "COORDINATOR_NOT_AVAILABLE" and r.members == ()
        return
    assert r.error == "NONE"
    if state == "Empty":
        assert [m.error for m in r.members] == ["UNKNOWN_MEMBER_ID"]
        return
    assert [m.error for m in r.members] == ["NONE"]
    g = h.c.group(G)
    assert follower not in g.members
    if state == "PreparingRebalance":
        assert g.state == "CompletingRebalance" and g.generation_id == gen + 1, "join completion retried"
    else:
        assert g.state in ("PreparingRebalance", "CompletingRebalance") and g.generation_id >= gen


@pytest.mark.parametrize("state", STATES)
def test_offset_commit(state):
    h, leader, follower, gen = setup(state)
    errors = h.commit(G, gen, follower or leader, {TP: 5})
    expected = {"Empty": "UNKNOWN_MEMBER_ID", "PreparingRebalance": "NONE",
                "CompletingRebalance": "REBALANCE_IN_PROGRESS", "Stable": "NONE",
                "Dead": "COORDINATOR_NOT_AVAILABLE"}
    assert errors == {TP: expected[state]}
    # generation -1 without member: only an Empty group accepts it
    simple = h.commit(G, -1, "", {TP: 9})
    assert simple == {TP: {"Empty": "NONE", "Dead": "COORDINATOR_NOT_AVAILABLE"}.get(state, "UNKNOWN_MEMBER_ID")}


@pytest.mark.parametrize("state", STATES)
def test_offset_fetch(state):
    h, leader, follower, gen = setup(state)
    if state in ("Stable", "PreparingRebalance"):
        h.commit(G, gen, follower, {TP: 5})
    r = h.fetch(G, (TP,))
    assert r.error == "NONE"
    expected = 5 if state in ("Stable", "PreparingRebalance") else -1
    assert [(p.partition, p.offset, p.error) for p in r.partitions] == [(TP, expected, "NONE")]


@pytest.mark.parametrize("state", STATES)
def test_delete_groups(state):
    h, leader, follower, gen = setup(state)
    expected = {"Empty": "NONE", "Dead": "GROUP_ID_NOT_FOUND"}.get(state, "NON_EMPTY_GROUP")
    assert h.delete_groups(G) == {G: expected}
    if state == "Empty":
        assert h.c.group(G) is None


@pytest.mark.parametrize("state", STATES)
def test_describe_and_list(state):
    h, leader, follower, gen = setup(state)
    d = h.describe(G)
    assert d.error == "NONE" and d.state == state
    if state == "Stable":
        assert d.protocol == "range" and {m.assignment for m in d.members} == {b"L", b"F"}
    else:
        assert d.protocol == "" and all(m.assignment == b"" and m.metadata == b"" for m in d.members)
    lst = h.list_groups()
    assert lst.error == "NONE" and [(g, s) for g, _, s in lst.groups] == [(G, state)]
    assert h.list_groups([state]).groups and not h.list_groups(["Nope"]).groups


# ---- transition table (§1.1) -------------------------------------------------------------------
@pytest.mark.parametrize("source", ALL_STATES)
@pytest.mark.parametrize("target", ALL_STATES)
def test_transition_table(source, target):
    h = make()
    h.c.internal.create_group(G, source)
    if source in VALID_PREVIOUS[target]:
        h.c.internal.force_transition(G, target)
        assert h.c.group(G).state == target
    else:
        with pytest.raises(IllegalStateError, match=f"before moving to {target} state"):
            h.c.internal.force_transition(G, target)
        assert h.c.group(G).state == source


def test_table_is_kafkas():
    legal = {(s, t) for t, prev in VALID_PREVIOUS.items() for s in prev}
    assert len(legal) == 11
    assert ("Stable", "Empty") not in legal and ("CompletingRebalance", "Empty") not in legal
    assert ("Dead", "Dead") in legal and ("PreparingRebalance", "PreparingRebalance") not in legal
