"""I-REASSIGN (replication.md fact 55, R1): no original replica is dropped before every target replica
is in the ISR — allowed and forbidden sides, and the impl world catching the early-drop behaviour."""
from kverify.invariants.replication import I_REASSIGN, ReassignView
from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.worlds.replication_world import HUNT

B = "reassignment-drops-old-replicas-early"


def test_allows_no_reassignment_and_drop_after_catch_up():
    assert I_REASSIGN.check(ReassignView((4, 5, 6), (4,), None)) is None
    assert I_REASSIGN.check(ReassignView((4, 5, 6), (4, 5, 6), ((1, 2, 3), (4, 5, 6)))) is None
    assert I_REASSIGN.check(ReassignView((1, 2, 3, 4), (1, 2), ((1, 2, 3), (1, 2, 4)))) is None  # still a superset


def test_forbids_dropping_original_replicas_early():
    msg = I_REASSIGN.check(ReassignView((1, 4, 5), (1,), ((1, 2, 3), (1, 4, 5))))
    assert msg and "[2, 3]" in msg and "[4, 5]" in msg


def test_world_catches_early_drop_and_is_clean_without_it():
    bad = explore(registry.build("replication-world", HUNT[B], [B]), graph=False, stop_on_first=True, max_seconds=60)
    assert bad.violations and bad.violations[0].invariant == "i-reassign"
    assert any(a[0] == "reassign" for a in bad.violations[0].actions)
    good = explore(registry.build("replication-world", HUNT[B]), graph=False, max_states=20000, max_seconds=60)
    assert not good.violations
