"""Surviving cosmic-ray mutants (issue 17, helper h7), each killed by a check of `kverify verify --profile quick`
that passes on the correct code (the others of the batch are equivalents: bench/mutation_equivalents.json).

- loading.py PartitionLoading._maybe_update_epoch, ReplaceComparisonOperator_Gt_Is (`epoch > current` ->
  `epoch is current`): a coordinator never raises the coordinator epoch it stored for an offsets partition, so every
  later load or unload at a newer leader epoch counts as stale and is ignored. Kafka unloads the groups of an offsets
  partition the broker now follows (GroupCoordinator.onResignation, ignored only for an *older* epoch). Killed by
  `coordinator-follows-leadership` (invariants/offsets.py) on `explore:offsets-world/preferred` (quick: 2 brokers):
  broker 2 led in epoch 1 after broker 1 crashed, broker 1 restarted and won the partition back by a preferred
  election (epoch 2): broker 2's coordinator ignores the resignation and keeps owning the partition it follows.
- replica.py Replica.handle_offsets_response, ReplaceComparisonOperator_NotEq_IsNot (`resp.request_leader_epoch !=
  self.leader_epoch` -> `is not`): equal to `!=` only while the epochs are small cached ints or the very object the
  follower sent. A real cluster's leader epochs pass 256 and an answer is decoded off the wire (a fresh int), so the
  follower discards every valid OffsetsForLeaderEpoch answer, stays TRUNCATING and never fetches. Killed by
  `replica-rejoins-isr` on `liveness:replication-world/large-epochs` (replication-world `epoch_base=1000`: epochs from
  1000, every message delivered as a decoded copy; the quick failover bound, 799 states as at base 0)."""
from kverify.impl.coordinator import loading
from kverify.impl.replication import replica
from kverify.invariants.offsets import check_coordinator_follows_leadership
from kverify.suite import Context, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

OFFSETS_PREFERRED = "explore:offsets-world/preferred"
LARGE_EPOCHS = "liveness:replication-world/large-epochs"

# name -> planted_mutants.MUTANTS entry: (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    "epoch-never-raised": (loading, "PartitionLoading", "_maybe_update_epoch",
                           "if epoch is not None and epoch > current:", "if epoch is not None and epoch is current:",
                           "a coordinator ignores every load/unload of a newer coordinator epoch than its first"),
    "ofle-epoch-by-identity": (replica, "Replica", "handle_offsets_response",
                               "resp.request_leader_epoch != self.leader_epoch",
                               "resp.request_leader_epoch is not self.leader_epoch",
                               "a follower compares the echoed leader epoch by identity: decoded answers are discarded"),
}


def _run(check, tmp_path):
    run = P._liveness_check(check) if check in P.LIVENESS_CHECKS else P._variant_check(check)
    return run(Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False))


def _plant(monkeypatch, name):
    monkeypatch.setitem(planted_mutants.MUTANTS, name, SURVIVORS[name])
    planted_mutants.plant(monkeypatch, name)


def test_coordinator_follows_leadership_on_views():
    assert check_coordinator_follows_leadership(()) is None
    assert check_coordinator_follows_leadership(((0, False, False), (1, True, True), (2, False, True))) is None
    assert check_coordinator_follows_leadership(((1, True, True), (2, True, False))) == \
        "broker 2's coordinator still owns the offsets partition its replica no longer leads"


def test_offsets_preferred_passes_on_the_correct_code(tmp_path):
    ok = _run(OFFSETS_PREFERRED, tmp_path)
    assert ok.verdict == PASS, ok.summary


def test_epoch_never_raised_is_caught(tmp_path, monkeypatch):
    _plant(monkeypatch, "epoch-never-raised")
    bad = _run(OFFSETS_PREFERRED, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert "coordinator-follows-leadership" in [v["invariant"] for v in bad.violations], bad.summary


def test_large_epochs_bound_passes_on_the_correct_code(tmp_path):
    ok = _run(LARGE_EPOCHS, tmp_path)
    assert ok.verdict == PASS, ok.summary


def test_large_epochs_reach_past_the_small_int_cache():
    """The bound starts its leader epochs past CPython's small-int cache (-5..256)."""
    from kverify.model import registry
    from kverify.suite.providers import LIVENESS_CHECKS

    proto = registry.build("replication-world", LIVENESS_CHECKS[LARGE_EPOCHS][1]["quick"])
    c = proto.init_states()[0].cluster
    assert min(st.leader_epoch for st in c.store.states.values()) == 1000


def test_ofle_epoch_by_identity_is_caught(tmp_path, monkeypatch):
    _plant(monkeypatch, "ofle-epoch-by-identity")
    bad = _run(LARGE_EPOCHS, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert "replica-rejoins-isr" in bad.summary, bad.summary
