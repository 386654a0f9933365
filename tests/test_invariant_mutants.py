"""Deliberately broken variants for the two invariants no historical behaviour breaks.

`valid-state-transition` (group) and `leader-in-isr` (replication) are runtime assertions in Kafka
(`GroupMetadata.assertValidTransition` throws; every controller election path puts the new leader in
the ISR, the unclean one as ISR = {leader}), so no Kafka release is known to have broken them; the
search is recorded in docs/FINDINGS.md. Their hand-built violating views are in the view tests; here
each is caught end to end by the explorer on a model with one rule deliberately broken (a mutant
patched into one model instance, never a registered behaviour), and the unpatched model passes at the
same bounds, so the check, its view and the engine's wiring are all shown able to fail.
"""
from kverify.invariants.group import EMPTY, STABLE
from kverify.model import registry
from kverify.model.explore import explore

GROUP_SMALL = {"partitions": 1, "events": 2, "faults": 1, "commits": 1}


def _stable_to_empty_shortcut(model):
    """Mutant: when the last member of a Stable group leaves, the group goes straight to Empty
    (Kafka goes through PreparingRebalance, whose join phase then completes empty)."""
    after_removal = model.after_removal

    def mutated(s):
        if s.coord.state == STABLE and s.coord.members == 0:
            return s._replace(coord=s.coord._replace(state=EMPTY))
        return after_removal(s)

    model.after_removal = mutated
    return model


def test_explorer_catches_a_group_that_skips_preparing_rebalance():
    res = explore(_stable_to_empty_shortcut(registry.build("group", GROUP_SMALL)), graph=False)
    hit = [f for f in res.violations if f.invariant == "valid-state-transition"]
    assert hit, [f.invariant for f in res.violations]
    assert "Stable" in hit[0].violation.message and "Empty" in hit[0].violation.message
    assert explore(registry.build("group", GROUP_SMALL), graph=False).ok


# the bounds at which the zoo reaches an unclean election (model/replication.py HUNT_PARAMS)
REPL_SMALL = {"records": 1, "epochs": 2, "crashes": 2, "lossy": 0, "alters": 0, "init_isr": 2}


def _unclean_election_keeps_the_old_isr(model):
    """Mutant: an unclean election names a leader but leaves the controller's ISR as it was (without
    the new leader), instead of ISR = {leader}."""
    import kverify.model.replication as R

    def mutated(m, s, r):
        c = s.controller
        c = c._replace(leader=r, leader_epoch=c.leader_epoch + 1, elr=0, partition_epoch=c.partition_epoch + 1)
        return s._replace(controller=c, requests=R.add_request(s.requests, R.request_from(c)),
                          spent=s.spent._replace(unclean=s.spent.unclean + 1))

    model.replace_action("elect_unclean", update=mutated)
    model.__dict__["_state_invs"] = tuple(i for i in model.invariants() if i.name == "leader-in-isr")
    model.__dict__["_step_invs"] = ()
    return model


def test_explorer_catches_a_leader_elected_outside_the_isr():
    mutant = _unclean_election_keeps_the_old_isr(registry.build("replication", REPL_SMALL, ["unclean-election"]))
    res = explore(mutant, graph=False, stop_on_first=True)
    assert [f.invariant for f in res.violations] == ["leader-in-isr"]
    assert "not in the ISR" in res.violations[0].violation.message
    assert res.violations[0].actions[-1][0] == "elect_unclean"
    honest = registry.build("replication", REPL_SMALL, ["unclean-election"])
    honest.__dict__["_state_invs"] = tuple(i for i in honest.invariants() if i.name == "leader-in-isr")
    honest.__dict__["_step_invs"] = ()
    assert explore(honest, graph=False).violations == []
