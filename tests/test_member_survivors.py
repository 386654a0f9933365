"""Surviving mutants of the classic consumer member (impl/member/member.py, issue 17), each killed by a check of the
quick profile, which also passes on the correct code.

Each mutant is planted in process the way tests/planted_mutants.py does it (the reference method recompiled from its
own source with exactly the one change cosmic-ray made) and judged by the very `kverify verify` check that has to fail
on it, at the quick profile's bounds."""
import inspect
from types import SimpleNamespace

import pytest

from kverify.impl.member import member as classic_member
from kverify.impl.member.member import Generation, InFlight
from kverify.model import registry
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

# name -> (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    # Member._auto_commit_before_revoking, ReplaceComparisonOperator_NotEq_Lt ("EAGER" < "COOPERATIVE" is False)
    "eager-revocation-not-pending": (classic_member, "Member", "_auto_commit_before_revoking",
                                     "if self.protocol != COOPERATIVE and not self._b_14196:",
                                     "if self.protocol < COOPERATIVE and not self._b_14196:",
                                     "an EAGER member keeps consuming the partitions it is about to revoke while "
                                     "onJoinPrepare's auto-commit is in flight (KAFKA-14196)"),
    # Member.tick, ReplaceBinaryOperator_Add_Mod: the deadline becomes sent_at % timeout (<= sent_at <= now)
    "request-deadline-mod": (classic_member, "Member", "tick",
                             "if self.now >= f.sent_at + (c.join_timeout_ms",
                             "if self.now >= f.sent_at % (c.join_timeout_ms",
                             "every request in flight times out at the member's next tick, however recent"),
    # Member._fetch_positions, ReplaceComparisonOperator_Eq_LtE ("commit" <= "fetch")
    "fetch-waits-for-commit-answer": (classic_member, "Member", "_fetch_positions",
                                      'if any(f.kind == "fetch" for f in self.inflight.values()):',
                                      'if any(f.kind <= "fetch" for f in self.inflight.values()):',
                                      "no OffsetFetch of newly assigned partitions while an OffsetCommit is in flight"),
}


def plant(monkeypatch, name):
    planted_mutants.plant(monkeypatch, name, SURVIVORS)


_ctx = planted_mutants.quick_ctx


@pytest.mark.parametrize("name", sorted(SURVIVORS))
def test_each_planted_survivor_changes_its_method(name):
    module, cls, method, old, new, _what = SURVIVORS[name]
    src = inspect.getsource(getattr(getattr(module, cls), method))
    assert src.count(old) == 1 and old != new


def test_the_killing_checks_are_in_quick_and_ci():
    for profile in ("quick", "ci"):
        names = [c.name for c in P.variants(profile)]
        assert "explore:group-world/auto-commit-handover" in names and "explore:group-world/lost-request" in names


# --- EAGER auto-commit: the partitions to revoke are paused while joinPrepare's commit is in flight ------------
def test_eager_member_consuming_during_the_prepare_commit_is_caught_by_handover_committed(tmp_path, monkeypatch):
    """ConsumerCoordinator.onJoinPrepare (EAGER, auto-commit on) commits what was consumed and, since KAFKA-14196,
    marks the partitions pending revocation so that nothing is consumed after that commit; the mutant keeps
    consuming (log end 2: one more record after the commit of offset 1), and the next owner would consume it again."""
    bad = planted_mutants.variant_catches(monkeypatch, tmp_path, "explore:group-world/auto-commit-handover",
                                          "eager-revocation-not-pending", SURVIVORS, "handover-committed")
    assert "having consumed up to 2, but the committed offset is 1" in bad.summary


# --- a commit awaited across a rebalance, and the OffsetFetch that does not wait for it ------------------------
def _members(*kinds):
    gen = Generation(1, "m0-x", "range")
    inflight = {cid: InFlight(kind, gen, 0, ()) for cid, kind in enumerate(kinds, 1)}
    return SimpleNamespace(members=(SimpleNamespace(inflight=inflight),))


def test_fetch_beside_pending_commit_on_states():
    world = registry.build("group-world", {"members": 1, "losses": 1, "request_timeouts": True})
    assert "fetch-beside-pending-commit" in [x.name for x in world.sometimes()]
    assert "fetch-beside-pending-commit" not in [x.name for x in registry.build("group-world", {}).sometimes()]
    reached = world._fetch_beside_pending_commit
    assert reached(_members("commit", "fetch"))
    assert not reached(_members("fetch", "commit"))         # a commit sent while the fetch was in flight
    assert not reached(_members("fetch")) and not reached(_members("commit", "heartbeat"))


@pytest.fixture(scope="module")
def lost_request_ok(tmp_path_factory):
    return P._variant_check("explore:group-world/lost-request")(_ctx(tmp_path_factory.mktemp("ok")))


@pytest.mark.parametrize("name", ["request-deadline-mod", "fetch-waits-for-commit-answer"])
def test_a_commit_not_awaited_across_a_rebalance_is_caught_in_quick(lost_request_ok, tmp_path, monkeypatch, name):
    """One member pauses past its session while its OffsetCommit's request is lost; fenced, it rejoins and is assigned
    its partition again. Kafka's consumer waits request.timeout.ms for the commit's answer and its poll sends the
    OffsetFetch of the new assignment meanwhile (refreshCommittedOffsetsIfNeeded does not wait for pending commits).
    request-deadline-mod gives the commit up at the first time jump; fetch-waits-for-commit-answer holds the
    OffsetFetch back until the commit times out: neither reaches that state (a vacuous `sometimes`)."""
    assert lost_request_ok.verdict == PASS, lost_request_ok.summary
    plant(monkeypatch, name)
    bad = P._variant_check("explore:group-world/lost-request")(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert not bad.violations and "never reached fetch-beside-pending-commit" in bad.summary, bad.summary
