"""JoinGroup (digest §3): pre-checks, new/pending/existing members, static membership, protocol
selection, group max size and the initial rebalance delay."""
import pytest

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, IllegalStateError
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import JoinGroupRequest

RANGE = (("range", b""),)
SUPERSET = (("range", b""), ("roundrobin", b""))


def make(**kw):
    cfg = dict(group_min_session_timeout_ms=10, group_max_session_timeout_ms=600000,
               group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False, offsets_partitions=2,
               owned_partitions=(0,))
    cfg.update(kw)
    return Harness(GroupCoordinator(CoordinatorConfig(**cfg)))


def stable_group(h, n=2, group="groupId", **kw):
    """n dynamic members joined and synced; returns (member ids, generation)."""
    first = [h.join_dynamic(group, **kw)]
    h.advance(51)
    mids = [h.get(first[0]).member_id]
    gen = h.get(first[0]).generation_id
    h.sync(group, gen, mids[0], {mids[0]: b""})
    for _ in range(n - 1):
        cids = [h.join_dynamic(group, **kw)] + [h.join(group, member_id=m, **kw) for m in mids]
        assert all(h.done(c) for c in cids), "join phase should complete once everybody rejoined"
        mids = [h.get(c).member_id for c in cids]
        gen = h.get(cids[0]).generation_id
        leader = h.get(cids[0]).leader_id
        for m in mids:
            h.sync(group, gen, m, {x: b"" for x in mids} if m == leader else {})
    assert h.c.group(group).state == "Stable"
    return mids, gen


# ---- pre-checks -------------------------------------------------------------------------------
def test_invalid_group_id_and_not_coordinator_and_loading():
    h = make()
    assert h.get(h.join("")).error == "INVALID_GROUP_ID"
    assert h.get(h.join("otherGroup")).error == "NOT_COORDINATOR"
    h.c.internal.set_partition_loading(0)
    assert h.get(h.join("groupId")).error == "COORDINATOR_LOAD_IN_PROGRESS"
    h.c.internal.complete_partition_load(0)
    assert h.get(h.join("groupId")).error == "MEMBER_ID_REQUIRED"
    h.c.internal.set_active(False)
    assert h.get(h.join("groupId")).error == "COORDINATOR_NOT_AVAILABLE"


@pytest.mark.parametrize("session", [9, 600001])
def test_session_timeout_bounds(session):
    h = make()
    r = h.get(h.join("groupId", session=session))
    assert r.error == "INVALID_SESSION_TIMEOUT" and r.generation_id == -1
    assert h.c.group("groupId") is None, "checked before the group is created"


def test_known_member_of_unknown_group_is_unknown_member():
    h = make()
    r = h.get(h.join("groupId", member_id="someone"))
    assert r.error == "UNKNOWN_MEMBER_ID" and r.member_id == "someone"


# ---- KIP-394 pending members ------------------------------------------------------------------
def test_member_id_required_then_join_and_pending_expiry():
    h = make()
    r = h.get(h.join("groupId", client_id="cli"))
    assert r.error == "MEMBER_ID_REQUIRED" and r.member_id.startswith("cli-")
    g = h.c.group("groupId")
    assert g.state == "Empty" and r.member_id in g.pending_members and not g.members
    # the pending member never comes back: dropped after its session timeout
    h.advance(501)
    assert not h.c.group("groupId").pending_members


def test_member_id_required_leaves_stable_group_stable():
    h = make()
    mids, gen = stable_group(h, 1)
    r = h.get(h.join("groupId"))
    assert r.error == "MEMBER_ID_REQUIRED"
    g = h.c.group("groupId")
    assert g.state == "Stable" and r.member_id in g.pending_members


def test_old_join_versions_add_member_at_once():
    h = make()
    cid = h.join("groupId", require_known=False)
    g = h.c.group("groupId")
    assert g.state == "PreparingRebalance" and len(g.members) == 1 and g.num_new_members == 1
    h.advance(51)
    r = h.get(cid)
    assert r.error == "NONE" and r.generation_id == 1 and r.leader_id == r.member_id


def test_member_ids_are_deterministic_and_uuid_shaped():
    a, b = make(), make()
    ra, rb = a.get(a.join("groupId")), b.get(b.join("groupId"))
    assert ra.member_id == rb.member_id
    suffix = ra.member_id[len("clientId-"):]
    assert [len(x) for x in suffix.split("-")] == [8, 4, 4, 4, 12]
    c = make(member_id_seed=7)
    assert c.get(c.join("groupId")).member_id != ra.member_id


# ---- protocols --------------------------------------------------------------------------------
def test_protocol_checks():
    h = make()
    assert h.get(h.join("groupId", protocol_type="")).error == "INCONSISTENT_GROUP_PROTOCOL"
    assert h.get(h.join("groupId", protocols=())).error == "INCONSISTENT_GROUP_PROTOCOL"
    stable_group(h, 1)
    assert h.get(h.join("groupId", protocol_type="connect")).error == "INCONSISTENT_GROUP_PROTOCOL"
    assert h.get(h.join("groupId", protocols=(("roundrobin", b""),))).error == "INCONSISTENT_GROUP_PROTOCOL"
    assert h.get(h.join("groupId", protocols=SUPERSET)).error == "MEMBER_ID_REQUIRED"


def test_sole_member_rejoining_with_disjoint_protocols_is_rejected():
    h = make()
    (m,), _ = stable_group(h, 1)
    r = h.get(h.join("groupId", member_id=m, protocols=(("roundrobin", b""),)))
    assert r.error == "INCONSISTENT_GROUP_PROTOCOL"


def test_protocol_selection_by_vote():
    h = make()
    a = h.join_dynamic("groupId", protocols=(("rr", b""), ("range", b"")))
    b = h.join_dynamic("groupId", protocols=(("range", b""), ("rr", b"")))
    c = h.join_dynamic("groupId", protocols=(("range", b""), ("rr", b""), ("sticky", b"")))
    h.advance(51)
    h.advance(501)
    assert {h.get(x).protocol_name for x in (a, b, c)} == {"range"}
    assert h.c.group("groupId").select_protocol() == "range"


# ---- existing members per state ---------------------------------------------------------------
def test_unchanged_follower_in_stable_gets_current_generation_without_rebalance():
    h = make()
    (m1, m2), gen = stable_group(h, 2)
    leader = h.c.group("groupId").leader_id
    follower = m2 if leader == m1 else m1
    r = h.get(h.join("groupId", member_id=follower))
    assert r.error == "NONE" and r.generation_id == gen and r.leader_id == leader and r.members == ()
    assert h.c.group("groupId").state == "Stable"


def test_leader_rejoin_in_stable_forces_rebalance():
    h = make()
    (m1, m2), gen = stable_group(h, 2)
    leader = h.c.group("groupId").leader_id
    cid = h.join("groupId", member_id=leader)
    assert not h.done(cid) and h.c.group("groupId").state == "PreparingRebalance"


def test_changed_follower_metadata_forces_rebalance():
    h = make()
    (m1, m2), gen = stable_group(h, 2)
    follower = m2 if h.c.group("groupId").leader_id == m1 else m1
    h.join("groupId", member_id=follower, protocols=(("range", b"\x01"),))
    assert h.c.group("groupId").state == "PreparingRebalance"


def test_rejoin_in_completing_rebalance_same_metadata_gets_same_generation():
    h = make()
    mids, gen = stable_group(h, 1)
    c1 = h.join("groupId", member_id=mids[0])      # leader rejoin -> rebalance; sole member -> completes
    r1 = h.get(c1)
    assert h.c.group("groupId").state == "CompletingRebalance" and r1.generation_id == gen + 1
    r2 = h.get(h.join("groupId", member_id=mids[0]))
    assert r2.generation_id == gen + 1 and len(r2.members) == 1 and h.c.group("groupId").state == "CompletingRebalance"
    # changed metadata: a new rebalance, which a sole member completes at once (generation + 2)
    r3 = h.get(h.join("groupId", member_id=mids[0], protocols=(("range", b"\x02"),)))
    assert r3.generation_id == gen + 2 and h.c.group("groupId").state == "CompletingRebalance"


def test_second_join_while_parked_replaces_the_first_which_is_never_answered():
    h = make()
    (m1, m2), gen = stable_group(h, 2)
    leader = h.c.group("groupId").leader_id
    follower = m2 if leader == m1 else m1
    first = h.join("groupId", member_id=leader)
    second = h.join("groupId", member_id=leader)
    h.join("groupId", member_id=follower)
    assert h.done(second) and not h.done(first)
    h.advance(10000)
    assert not h.done(first)


# ---- group max size ---------------------------------------------------------------------------
def test_group_max_size():
    h = make(group_max_size=2)
    a = h.join("groupId", require_known=False)
    b = h.join("groupId", require_known=False)
    c = h.join("groupId", require_known=False)
    r = h.get(c)
    assert r.error == "GROUP_MAX_SIZE_REACHED" and r.member_id == ""
    h.advance(51)
    h.advance(501)
    assert h.get(a).error == "NONE" and h.get(b).error == "NONE"
    assert len(h.c.group("groupId").members) == 2
    # in CompletingRebalance/Stable a known member is accepted, a new one is not
    assert h.get(h.join("groupId", require_known=False)).error == "GROUP_MAX_SIZE_REACHED"


def test_last_rejoining_members_are_kicked_out_when_over_capacity():
    h = make(group_max_size=3)
    mids, gen = stable_group(h, 3)
    # an operator lowers group.max.size (the config is frozen: replace it)
    h.c.config = CoordinatorConfig(**{**h.c.config.__dict__, "group_max_size": 2})
    leader = h.c.group("groupId").leader_id
    others = [m for m in mids if m != leader]
    a = h.join("groupId", member_id=leader)
    b = h.join("groupId", member_id=others[0])
    c = h.join("groupId", member_id=others[1])
    assert h.get(c).error == "GROUP_MAX_SIZE_REACHED"
    assert others[1] not in h.c.group("groupId").members
    assert h.done(a) and h.done(b) and h.get(a).generation_id == gen + 1


# ---- initial rebalance delay ------------------------------------------------------------------
def test_initial_delay_then_completes():
    h = make()
    cid = h.join_dynamic("groupId", rebalance=1000)
    h.advance(50)
    assert not h.done(cid)
    h.advance(1)
    assert h.get(cid).generation_id == 1


def test_initial_delay_is_extended_by_new_members_up_to_rebalance_timeout():
    h = make()
    a = h.join("groupId", require_known=False, rebalance=120)
    h.advance(40)
    b = h.join("groupId", require_known=False, rebalance=120)   # sets newMemberAdded (generation 0)
    h.advance(11)                                                 # t=51: first window over, re-armed
    assert not h.done(a) and not h.done(b)
    h.advance(50)                                                 # t=101: deadline 101 is not < 101
    assert not h.done(a)
    h.advance(1)                                                  # t=102: second window over, no new member
    assert h.done(a) and h.done(b)
    assert h.get(a).generation_id == 1


def test_initial_delay_not_extended_after_first_generation_scala():
    h = make()
    a = h.join("groupId", require_known=False, rebalance=1000)
    h.advance(51)
    ma = h.get(a).member_id
    h.leave("groupId", ma)                                        # -> Empty, generation 2
    assert h.c.group("groupId").state == "Empty" and h.c.group("groupId").generation_id == 2
    x = h.join("groupId", require_known=False, rebalance=1000)
    h.advance(20)
    y = h.join("groupId", require_known=False, rebalance=1000)
    h.advance(31)                                                 # t = 51 after the first join: done
    assert h.done(x) and h.done(y) and h.get(x).generation_id == 3


# ---- static membership ------------------------------------------------------------------------
def static_pair(h, **kw):
    a = h.join("groupId", instance_id="leader", require_known=False, protocols=SUPERSET, **kw)
    b = h.join("groupId", instance_id="follower", require_known=False, protocols=SUPERSET, **kw)
    h.advance(51)
    h.advance(501)
    ra, rb = h.get(a), h.get(b)
    gen = ra.generation_id
    h.sync("groupId", gen, ra.member_id, {ra.member_id: b"L", rb.member_id: b"F"})
    h.sync("groupId", gen, rb.member_id)
    assert h.c.group("groupId").state == "Stable"
    return ra.member_id, rb.member_id, gen


def test_static_member_gets_instance_prefixed_id_and_never_member_id_required():
    h = make()
    r = h.join("groupId", instance_id="inst-1", require_known=True)
    assert not h.done(r)
    h.advance(51)
    assert h.get(r).member_id.startswith("inst-1-")


def test_static_follower_replacement_in_stable_keeps_assignment_without_rebalance():
    h = make()
    lid, fid, gen = static_pair(h)
    r = h.get(h.join("groupId", instance_id="follower", require_known=False, protocols=SUPERSET))
    assert r.error == "NONE" and r.generation_id == gen and r.member_id != fid and r.leader_id == lid
    g = h.c.group("groupId")
    assert g.state == "Stable" and g.static_members["follower"] == r.member_id and fid not in g.members
    assert h.get(h.sync("groupId", gen, r.member_id)).assignment == b"F"
    # the old id is fenced / unknown
    assert h.heartbeat("groupId", gen, fid, instance_id="follower") == "FENCED_INSTANCE_ID"
    assert h.heartbeat("groupId", gen, fid) == "UNKNOWN_MEMBER_ID"


def test_static_leader_replacement_returns_old_leader_id_before_v9_and_skip_assignment_after():
    h = make()
    lid, fid, gen = static_pair(h)
    r = h.get(h.join("groupId", instance_id="leader", require_known=False, protocols=SUPERSET))
    assert r.leader_id == lid and r.member_id != lid and r.members == () and not r.skip_assignment
    assert h.c.group("groupId").leader_id == r.member_id, "leadership follows the member"
    r2 = h.get(h.join("groupId", instance_id="leader", require_known=False, protocols=SUPERSET, skip=True))
    assert r2.skip_assignment and r2.leader_id == r2.member_id and len(r2.members) == 2


def test_static_replacement_with_protocol_change_rebalances():
    h = make()
    lid, fid, gen = static_pair(h)
    h.join("groupId", instance_id="follower", require_known=False, protocols=(("roundrobin", b""), ("range", b"")))
    g = h.c.group("groupId")
    # votes now: leader -> range, follower -> roundrobin: a tie; selection may change -> a rebalance
    assert g.state in ("PreparingRebalance", "Stable")
    h2 = make()
    lid, fid, gen = static_pair(h2)
    h2.join("groupId", instance_id="follower", require_known=False, protocols=(("roundrobin", b""),))
    assert h2.c.group("groupId").state == "PreparingRebalance"


def test_static_replacement_fences_parked_join_of_old_id():
    h = make()
    lid, fid, gen = static_pair(h)
    parked = h.join("groupId", member_id=lid, instance_id="leader", protocols=SUPERSET)   # leader rejoin -> rebalance
    assert not h.done(parked)
    new = h.join("groupId", instance_id="leader", require_known=False, protocols=SUPERSET)
    r = h.get(parked)
    assert r.error == "FENCED_INSTANCE_ID" and r.member_id == lid
    assert h.c.group("groupId").leader_id == h.c.group("groupId").static_members["leader"]
    assert not h.done(new)


def test_static_replacement_in_completing_rebalance_forces_rebalance_kafka_9801_fix():
    h = make()
    lid, fid, gen = static_pair(h)
    a = h.join("groupId", member_id=lid, instance_id="leader", protocols=SUPERSET)
    b = h.join("groupId", member_id=fid, instance_id="follower", protocols=SUPERSET)
    assert h.c.group("groupId").state == "CompletingRebalance"
    h.join("groupId", instance_id="follower", require_known=False, protocols=SUPERSET)
    assert h.c.group("groupId").state == "PreparingRebalance"


def test_static_replacement_persistence_failure_reverts():
    h = make()
    lid, fid, gen = static_pair(h)
    h.c.internal.set_log_append_result("MESSAGE_TOO_LARGE")
    r = h.get(h.join("groupId", instance_id="follower", require_known=False, protocols=SUPERSET))
    assert r.error == "UNKNOWN_SERVER_ERROR" and r.member_id == "" and r.leader_id == lid
    g = h.c.group("groupId")
    assert g.static_members["follower"] == fid and fid in g.members and g.state == "Stable"


def test_fenced_and_unknown_instance_ids():
    h = make()
    lid, fid, gen = static_pair(h)
    assert h.get(h.join("groupId", member_id=fid, instance_id="leader", protocols=SUPERSET)).error == "FENCED_INSTANCE_ID"
    assert h.get(h.join("groupId", member_id=fid, instance_id="nobody", protocols=SUPERSET)).error == "UNKNOWN_MEMBER_ID"


def test_pending_member_with_instance_id_is_an_illegal_state():
    h = make()
    pending = h.get(h.join("groupId")).member_id
    with pytest.raises(IllegalStateError, match="pending member"):
        h.c.handle(JoinGroupRequest("groupId", pending, "inst", protocols=RANGE, session_timeout_ms=500,
                                    rebalance_timeout_ms=500))


def test_static_member_rejoining_an_empty_group_is_an_illegal_state():
    h = make()
    h.c.internal.create_group("groupId", "Empty", members=[dict(member_id="m-1", instance_id="inst", protocols=RANGE)])
    with pytest.raises(IllegalStateError, match="was not supposed to be in the state Empty"):
        h.c.handle(JoinGroupRequest("groupId", "", "inst", protocols=RANGE, session_timeout_ms=500,
                                    rebalance_timeout_ms=500, require_known_member_id=False))


def test_failed_static_persistence_restores_timeouts_but_keeps_new_protocols_like_kafka_36():
    h = make()
    lid, fid, gen = static_pair(h)
    h.c.internal.set_log_append_result("NOT_ENOUGH_REPLICAS")
    changed = (("range", b"\x07"), ("roundrobin", b""))
    r = h.get(h.join("groupId", instance_id="follower", require_known=False, protocols=changed,
                     session=700, rebalance=900))
    assert r.error == "COORDINATOR_NOT_AVAILABLE"
    m = h.c.group("groupId").members[fid]
    assert (m.session_timeout_ms, m.rebalance_timeout_ms) == (500, 500)
    assert m.protocols == changed, "GroupCoordinator.scala@3.6.0 captures oldProtocols after updateMember"


def test_replaced_static_member_that_had_not_synced_triggers_rebalance_at_sync_expiry_like_kafka_36():
    """replaceStaticMember leaves the old id in pendingSyncMembers (GroupMetadata.scala@3.6.0), so the
    DelayedSync expires and starts a rebalance although every current member is in sync."""
    h = make()
    a = h.join("groupId", instance_id="leader", require_known=False, protocols=SUPERSET, rebalance=300)
    b = h.join("groupId", instance_id="follower", require_known=False, protocols=SUPERSET, rebalance=300)
    h.advance(51)
    h.advance(51)
    ra, rb = h.get(a), h.get(b)
    h.sync("groupId", ra.generation_id, ra.member_id, {ra.member_id: b"L", rb.member_id: b"F"})
    assert h.c.group("groupId").state == "Stable" and rb.member_id in h.c.group("groupId").pending_sync_members
    r = h.get(h.join("groupId", instance_id="follower", require_known=False, protocols=SUPERSET, rebalance=300))
    assert h.get(h.sync("groupId", r.generation_id, r.member_id)).assignment == b"F"
    g = h.c.group("groupId")
    assert g.pending_sync_members == {rb.member_id} and rb.member_id not in g.members
    h.advance(301)
    assert h.c.group("groupId").state == "PreparingRebalance"
