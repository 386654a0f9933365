"""AssignorRounds: the reference assignors across many rebalances (the certification's own group
rules and property functions, driven as a Protocol) — correct assignors hold every claimed
property exhaustively at small bounds; each assignor behaviour is caught."""
import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import WalkMemo, walk
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


@pytest.mark.parametrize("behaviours", [(), ("kafka-12984-double-claim",)], ids=["correct", "double-claim"])
def test_walk_memo_gives_the_same_traces_and_verdicts(behaviours):
    """Walks sharing the walker's memo (model/walk.py) take the steps of plain walks from the same
    seeds and reach the same verdicts (violations included)."""
    memo = WalkMemo()
    with_memo = registry.build("assignor-rounds", {}, behaviours)
    plain = registry.build("assignor-rounds", {}, behaviours)
    found = 0
    for seed in range(150):
        a = walk(with_memo, seed, 10, record_trace=True, memo=memo)
        b = walk(plain, seed, 10, record_trace=True, memo=False)
        assert (a.trace, a.violation, a.deadlock, a.reached) == (b.trace, b.violation, b.deadlock, b.reached), seed
        found += b.violation is not None
    assert memo.hits > 0 and (found > 0) == bool(behaviours)


def test_walk_memo_starts_again_when_the_invariants_change():
    """Verdicts kept in a memo belong to the invariants they were computed with: a protocol whose
    invariants are replaced (as tests/test_invariants_group.py does) is judged by the new ones."""
    from kverify.invariants.core import Invariant

    memo = WalkMemo()
    proto = registry.build("assignor-rounds", {}, ())
    assert walk(proto, 3, 10, memo=memo).violation is None and memo.nodes
    never = Invariant("no-rebalance", "no rebalance ever happens", lambda s: "rebalanced" if s.rounds else None)
    proto.__dict__["_state_invs"], proto.__dict__["_step_invs"] = (never,), ()
    found = [walk(proto, seed, 10, memo=memo).violation for seed in range(5)]
    assert any(v is not None and v.invariant == "no-rebalance" for v in found)


@pytest.mark.parametrize("behaviours", [[], ["kafka-12984-double-claim"]])
def test_checks_leave_the_shared_decoding_unchanged(behaviours):
    """The invariants share one decoding of a state's last rebalance (`_LastRound`): every property
    function must only read it, so after all of them ran it still equals a fresh decoding, and each
    verdict equals the one given on a fresh decoding."""
    import json

    from kverify.model.search import ExactStore, StateCollector, search
    from kverify.model.worlds import assignor_rounds as AR

    proto = registry.build("assignor-rounds", {"max_events": "1", "max_rounds": "2"}, behaviours)
    states = StateCollector()
    search(proto, ExactStore(lambda s: s), [states])
    judged = [s for _depth, s in states.states.values() if s.last]
    assert len(judged) > 20
    for s in judged:
        shared = AR._LastRound()
        names = ["assignor-answer"] + [f"assignor-{n}" for n in proto.checked]
        verdicts = [inv.check(s) for inv in proto.invariants()]
        fresh = [AR._LastRound().of(s.last)[3]] + [
            AR._checker(AR.CHECKS[n], proto.cooperative, n in AR.STALE_ROUND_CHECKS, AR._LastRound())(s)
            for n in proto.checked]
        assert verdicts == fresh, names
        for n in proto.checked:
            AR._checker(AR.CHECKS[n], proto.cooperative, n in AR.STALE_ROUND_CHECKS, shared)(s)
        assert shared.of(s.last)[:3] == tuple(json.loads(s.last))
