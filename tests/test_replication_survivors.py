"""Surviving cosmic-ray mutants of impl/replication/replica.py (issue 17, helper h5), each killed by a check of
`kverify verify --profile quick` that passes on the correct code (the others of the batch are equivalents:
bench/mutation_equivalents.json).

- replica.py Replica.handle_fetch, ReplaceComparisonOperator_NotEq_Gt (`if err != M.NONE:` -> `if err > M.NONE:`):
  the error strings sort around "NONE", so the leader still refuses NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE and
  UNKNOWN_LEADER_EPOCH but serves a fetch it found FENCED_LEADER_EPOCH ("F" < "N"): a follower still fetching in
  an older leader epoch gets records (and the leader counts its fetch). Kafka fences it (KIP-320,
  Partition.fetchRecords -> localLogWithEpochOrThrow). Killed by `follower-epoch-known` (invariants/replication.py:
  a follower holds no record of a leader epoch newer than the one it follows) on
  `explore:replication-world/fenced-fetch`: a follower in controlled shutdown leaves the ISR (leader epoch 0 -> 1,
  same leader), is not yet told, fetches in epoch 0 and is served the record the leader wrote in epoch 1."""
from kverify.impl.replication import messages as M
from kverify.impl.replication import replica
from kverify.invariants.replication import check_follower_epoch_known
from kverify.suite import Context, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

FENCED_FETCH = "explore:replication-world/fenced-fetch"

# name -> planted_mutants.MUTANTS entry: (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    "fenced-fetch-served": (replica, "Replica", "handle_fetch", "if err != M.NONE:\n", "if err > M.NONE:\n",
                            "a leader serves (and counts) a fetch it found FENCED_LEADER_EPOCH"),
}


def _run(check, tmp_path):
    return P._variant_check(check)(Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False))


def test_follower_epoch_known_on_views():
    assert check_follower_epoch_known([]) is None
    assert check_follower_epoch_known([("t-0", 2, 1, 1, 1), ("t-0", 3, 1, 1, 0), ("t-1", 2, 3, 4, -1)]) is None
    assert check_follower_epoch_known([("t-0", 2, 1, 0, 1)]) == \
        "t-0: follower 2 of leader 1 in leader epoch 0 holds records of leader epoch 1"


def test_only_fenced_leader_epoch_sorts_below_none():
    """Why the mutant differs only on FENCED_LEADER_EPOCH: of the errors handle_fetch answers, it alone sorts
    before "NONE" (so `err > NONE` is False for it, True for the others)."""
    errors = (M.NOT_LEADER_OR_FOLLOWER, M.FENCED_LEADER_EPOCH, M.UNKNOWN_LEADER_EPOCH, M.OFFSET_OUT_OF_RANGE)
    assert [e for e in errors if not e > M.NONE] == [M.FENCED_LEADER_EPOCH]


def test_fenced_fetch_bound_passes_on_the_correct_code(tmp_path):
    ok = _run(FENCED_FETCH, tmp_path)
    assert ok.verdict == PASS, ok.summary


def test_fenced_fetch_served_is_caught(tmp_path, monkeypatch):
    monkeypatch.setitem(planted_mutants.MUTANTS, "fenced-fetch-served", SURVIVORS["fenced-fetch-served"])
    planted_mutants.plant(monkeypatch, "fenced-fetch-served")
    bad = _run(FENCED_FETCH, tmp_path)
    assert bad.verdict == FAIL, bad.summary
    assert "follower-epoch-known" in [v["invariant"] for v in bad.violations], bad.summary
