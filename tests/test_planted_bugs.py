"""Planted bugs that passed `make verify` before issue 17, each caught by the check of `kverify verify`
that now reaches it, and that check holding on the correct code (tests/planted_mutants.py).

The checks run through the very functions `kverify verify` calls (kverify/suite/providers.py), at the
quick profile's own bounds (the early-drop reassignment: the ci bound, it needs two replicas; the walks:
a part of quick's step budget, same seeds). Not here: a controller that accepts a dead broker as
CONTROLLER (`elect_controller`'s `not b.alive` guard) is an equivalent mutant in this implementation:
a crash unregisters the broker in the same step, so "alive" and "registered" never differ."""
import pytest

from kverify.suite import Context, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, INCONCLUSIVE, PASS, gate_verdict

from planted_mutants import plant

REASSIGN = "liveness:replication-world/reassign"
FAILOVER = "liveness:replication-world/failover"


def _ctx(tmp_path, profile="quick"):
    return Context(profile, str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False)


def _liveness(tmp_path, check, profile="quick"):
    return P._liveness_check(check)(_ctx(tmp_path, profile))


def test_never_fails_over_is_caught_by_the_quick_failover_check(tmp_path, monkeypatch):
    assert _liveness(tmp_path / "ok", FAILOVER).verdict == PASS
    plant(monkeypatch, "never-fails-over")
    res = _liveness(tmp_path / "bad", FAILOVER)
    assert res.verdict == FAIL and [v["invariant"] for v in res.violations] == ["leader-failover"]


def test_a_dead_broker_accepted_into_the_isr_is_caught_by_the_quick_failover_check(tmp_path, monkeypatch):
    """The quick bound starts a follower outside the ISR: its AlterPartition can reach the controller
    after the follower died; the correct controller answers INELIGIBLE_REPLICA."""
    plant(monkeypatch, "isr-accepts-dead-broker")
    res = _liveness(tmp_path, FAILOVER)
    assert res.verdict == FAIL and res.violations[0]["invariant"] == "exception"
    assert "_on_alter_partition" in res.violations[0]["message"]


def test_epoch_cache_answering_its_first_epoch_is_caught_by_the_quick_walks(tmp_path, monkeypatch):
    """The follower asks OffsetsForLeaderEpoch for its first epoch and truncates committed records
    of later epochs: an in-sync replica then misses a committed record (i-lcc). The quick profile's
    own walk check of replication-world (its walk bounds and seeds; 3,000 of its 10,000 steps)."""
    import dataclasses

    quick = profiles.BUDGETS["quick"]
    monkeypatch.setitem(profiles.BUDGETS, "quick", dataclasses.replace(quick, walk_total=3000))
    ok = P._walk_check("replication-world")(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "epoch-cache-first")
    bad = P._walk_check("replication-world")(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL and bad.violations[0]["invariant"] == "i-lcc", bad.summary


@pytest.fixture(scope="module")
def reassign_rf1_ok(tmp_path_factory):
    return _liveness(tmp_path_factory.mktemp("ok"), REASSIGN)


def test_the_correct_reassignment_holds_at_the_quick_bound(reassign_rf1_ok):
    assert reassign_rf1_ok.verdict == PASS, reassign_rf1_ok.summary
    assert "reassignment-completes" in reassign_rf1_ok.summary


def test_reassignment_keeping_a_live_non_target_leader_breaks_leader_in_isr(tmp_path, monkeypatch):
    plant(monkeypatch, "reassign-keeps-leader")
    res = _liveness(tmp_path, REASSIGN)
    assert res.verdict == FAIL and res.violations[0]["invariant"] == "leader-in-isr"


def test_reassignment_that_never_converges_fails_a_strict_gate(tmp_path, monkeypatch):
    """Every step rewrites the expanded replica set with a new leader epoch: the state space has no end,
    so the search is cut by its counted budget (INCONCLUSIVE), which fails the ci gate (--strict)."""
    plant(monkeypatch, "reassign-expands-forever")
    res = _liveness(tmp_path, REASSIGN)
    assert res.verdict == INCONCLUSIVE and "state budget" in res.cut
    assert gate_verdict([res], strict=True) == FAIL


@pytest.mark.slow
def test_reassignment_dropping_old_replicas_early_is_caught_at_the_profile_bound(tmp_path, monkeypatch):
    """Needs three brokers and two replicas (with one replica `all` and `any` agree): the ci profile's own
    reassignment bound, ~13,000 states for the correct code."""
    ok = _liveness(tmp_path / "ok", REASSIGN, profile="ci")
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "reassign-early-drop")
    bad = _liveness(tmp_path / "bad", REASSIGN, profile="ci")
    assert bad.verdict == FAIL and bad.violations[0]["invariant"] == "i-reassign"
