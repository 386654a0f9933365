"""I-REASSIGN (replication.md fact 55, R1), a step property: the step that drops an original replica of a
partition under reassignment is taken only while every target replica is in the ISR. Allowed and forbidden
sides, the regression of the correct cluster's ISR shrinking after completion (docs/FINDINGS.md, "I-REASSIGN
judged the ISR after completion"), and the impl world catching the early-drop behaviour."""
from kverify.invariants.replication import I_REASSIGN, ReassignView
from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import replay
from kverify.model.worlds.replication_world import HUNT

B = "reassignment-drops-old-replicas-early"
R = ((1, 2, 3), (4, 5, 6))          # (original, target)


def check(prev, nxt):
    return I_REASSIGN.check(ReassignView(*prev), ("step",), ReassignView(*nxt))


def test_is_a_step_property():
    assert I_REASSIGN.kind == "step"


def test_allows_no_reassignment_and_drop_after_catch_up():
    assert check(((1, 2, 3), (1,), None), ((4, 5, 6), (4,), None)) is None
    assert check(((4, 5, 6, 1, 2, 3), (4, 5, 6), R), ((4, 5, 6), (4, 5, 6), R)) is None
    # still a superset: nothing dropped yet, whatever the ISR
    assert check(((1, 2, 4, 3), (1, 2, 3), ((1, 2, 3), (1, 2, 4))),
                 ((1, 2, 4, 3), (1,), ((1, 2, 3), (1, 2, 4)))) is None


def test_allows_the_isr_to_shrink_after_the_original_replicas_were_dropped():
    """The state the former state form rejected: RS = TRS, the reassignment still recorded (ZK's B6 before
    B7), and a target replica failed out of the ISR afterwards."""
    assert check(((4, 5, 6), (4, 5, 6), R), ((4, 5, 6), (4,), R)) is None
    assert check(((4, 5, 6), (4,), R), ((4, 5, 6), (4,), None)) is None


def test_forbids_dropping_original_replicas_early():
    msg = check(((1, 4, 5, 2, 3), (1,), ((1, 2, 3), (1, 4, 5))), ((1, 4, 5), (1,), ((1, 2, 3), (1, 4, 5))))
    assert msg and "[2, 3]" in msg and "[4, 5]" in msg
    # the ISR of the moment counts, not the ISR after: catching up in the same step does not excuse it
    msg = check(((4, 5, 6, 1, 2, 3), (4, 5), R), ((4, 5, 6), (4, 5, 6), R))
    assert msg and "[6]" in msg and "[1, 2, 3]" in msg


# the counterexample the former state form reported on the correct cluster (depth 10): the reassignment
# t-0 [1,2] -> [1,3] completes with ISR {1,3}; broker 1 had crashed and the controller notices only afterwards
GAP = dict(brokers=3, rf=2, reassignments=1, crashes=1, records=0, failovers=0, preferred=0)
GAP_TRACE = [("reassign", "t", 0, (1, 3)), ("reassignment_step", "t", 0), ("deliver", 1, "LeaderAndIsr", 0, 1),
             ("deliver", 2, "LeaderAndIsr", 0, 3), ("replicate", 3, "t", 0, 1), ("deliver", 2, "AlterPartition", 1, 0),
             ("crash", 1, False), ("reassignment_step", "t", 0), ("reassignment_step", "t", 0),
             ("handle_broker_changes",)]


def test_correct_cluster_shrinking_the_isr_after_completion_is_not_a_violation():
    world = registry.build("replication-world", GAP)
    states, violation = replay(world, GAP_TRACE)
    assert violation is None, violation
    store = states[-1].cluster.store
    tp = ("t", 0)
    # the shape of the gap: replicas = target, the reassignment still recorded, a target replica out of the ISR
    assert store.assignments[tp] == (1, 3) and store.reassignments[tp] == ((1, 2), (1, 3))
    assert store.states[tp].isr == (3,)
    # and the next reassignment step completes it
    states, violation = replay(world, GAP_TRACE + [("reassignment_step", "t", 0)])
    assert violation is None and tp not in states[-1].cluster.store.reassignments


def test_world_catches_early_drop_and_is_clean_without_it():
    bad = explore(registry.build("replication-world", HUNT[B], [B]), graph=False, stop_on_first=True, max_seconds=60)
    assert bad.violations and bad.violations[0].invariant == "i-reassign"
    assert any(a[0] == "reassign" for a in bad.violations[0].actions)
    good = explore(registry.build("replication-world", HUNT[B]), graph=False, max_states=20000, max_seconds=60)
    assert not good.violations


def test_correct_world_at_the_gap_bounds_has_no_violation():
    """The former state form broke at depth 10 within 6,886 states of these bounds."""
    res = explore(registry.build("replication-world", GAP), graph=False, max_states=15000)
    assert not res.violations, res.violations[0]
    assert res.distinct_states >= 15000 or res.complete
