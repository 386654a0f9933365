"""LeaveGroup batch semantics (digest §6): per-member errors, removal by instance id, pending
members, fenced instances, status errors, and the effect on the rebalance."""
from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import MemberIdentity

G = "groupId"
SUPERSET = (("range", b""), ("roundrobin", b""))


def make():
    return Harness(GroupCoordinator(CoordinatorConfig(
        group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False,
        offsets_partitions=2, owned_partitions=(0,))))


def static_pair(h):
    a = h.join(G, instance_id="leader", require_known=False, protocols=SUPERSET)
    b = h.join(G, instance_id="follower", require_known=False, protocols=SUPERSET)
    h.advance(51)
    h.advance(51)
    ra, rb = h.get(a), h.get(b)
    h.sync(G, ra.generation_id, ra.member_id, {ra.member_id: b"L", rb.member_id: b"F"})
    h.sync(G, ra.generation_id, rb.member_id)
    return ra.member_id, rb.member_id


def test_batch_leave_by_instance_id_and_fenced_and_unknown():
    h = make()
    lid, fid = static_pair(h)
    pending = h.get(h.join(G)).member_id
    r = h.leave(G, MemberIdentity("", "follower"), MemberIdentity(lid, "follower"), MemberIdentity("", "ghost"),
                MemberIdentity(pending, None), MemberIdentity("stranger", None))
    assert r.error == "NONE"
    assert [(m.member_id, m.group_instance_id, m.error) for m in r.members] == [
        ("", "follower", "NONE"),
        (lid, "follower", "UNKNOWN_MEMBER_ID"),      # "follower" is no longer registered after the first entry
        ("", "ghost", "UNKNOWN_MEMBER_ID"),
        (pending, None, "NONE"),
        ("stranger", None, "UNKNOWN_MEMBER_ID")]
    g = h.c.group(G)
    assert fid not in g.members and "follower" not in g.static_members and not g.pending_members
    assert g.state == "PreparingRebalance"


def test_leave_with_wrong_instance_is_fenced():
    h = make()
    lid, fid = static_pair(h)
    r = h.leave(G, MemberIdentity(lid, "follower"))
    assert [m.error for m in r.members] == ["FENCED_INSTANCE_ID"] and h.c.group(G).state == "Stable"


def test_leave_status_errors_and_unknown_group():
    h = make()
    assert h.leave("", "m").error == "INVALID_GROUP_ID"
    assert h.leave("otherGroup", "m").error == "NOT_COORDINATOR"
    r = h.leave("deadGroupId", "a", "b")          # owned partition, no such group
    assert r.error == "NONE" and [m.error for m in r.members] == ["UNKNOWN_MEMBER_ID"] * 2


def test_leaving_member_parked_in_join_gets_unknown_member_id():
    h = make()
    lid, fid = static_pair(h)
    parked = h.join(G, member_id=lid, instance_id="leader", protocols=SUPERSET)
    assert not h.done(parked)
    h.leave(G, MemberIdentity("", "leader"))
    r = h.get(parked)
    assert r.error == "UNKNOWN_MEMBER_ID" and r.member_id == ""


def test_last_member_leaving_ends_empty_with_a_new_generation():
    h = make()
    lid, fid = static_pair(h)
    gen = h.c.group(G).generation_id
    h.leave(G, MemberIdentity("", "leader"), MemberIdentity("", "follower"))
    g = h.c.group(G)
    assert g.state == "Empty" and g.generation_id == gen + 1 and not g.members and g.leader_id is None
