"""AssignorRounds: the reference assignors across many rebalances (the certification's own group
rules and property functions, driven as a Protocol) — correct assignors hold every claimed
property exhaustively at small bounds; each assignor behaviour is caught."""
import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.stateful_tests.machine import run_machine

SMALL = {"max_events": "2", "max_rounds": "3"}


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_correct_assignors_hold_exhaustively(assignor):
    proto = registry.build("assignor-rounds", dict(SMALL, assignor=assignor))
    res = explore(proto, graph=False)
    assert res.complete and not res.violations, [f.violation for f in res.violations]
    assert not res.vacuous
    assert res.distinct_states > 100


@pytest.mark.parametrize("behaviour", sorted(registry.supports("assignor-rounds")))
def test_assignor_behaviours_are_caught(behaviour):
    proto = registry.build("assignor-rounds", SMALL, [behaviour])
    res = explore(proto, graph=False, stop_on_first=True)
    assert res.violations
    found = res.violations[0]
    assert found.invariant in ("assignor-cooperative-safe", "assignor-exclusive", "assignor-answer")
    # the input that exposes it: a member that missed a rebalance, or a same-generation double claim
    assert any(a[0].startswith("stale") or a[0] == "claim-duplicate" for a in found.actions)


def test_hypothesis_drives_the_same_rules():
    proto = registry.build("assignor-rounds", {}, ["kafka-12984-double-claim"])
    finding = run_machine("assignor-rounds", protocol=proto, seed=1, database=False)
    assert finding is not None and finding.violation.invariant in ("assignor-exclusive", "assignor-answer")
    assert ("claim-duplicate", 0, 1) in finding.trace and len(finding.trace) <= 4   # shrunk


def test_unknown_assignor_is_a_clear_error():
    with pytest.raises(Exception) as exc:
        registry.build("assignor-rounds", {"assignor": "nope"})
    assert "unknown assignor" in str(exc.value)
