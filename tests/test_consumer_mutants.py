"""Surviving KIP-848 client mutants of the quick profile's seed-2718 sample (issue 17), each killed by a quick check.

Why it exists: bench/mutation.py found mutants of impl/consumer/client.py that `kverify verify --profile quick`
let through. Each is planted here exactly as cosmic-ray wrote it (tests/planted_mutants.py recompiles the method
with the one change) and judged by the quick check that now catches it; the same check passes on the correct code.
"""
import pytest

from kverify.impl.consumer import client as kip848_client
from kverify.invariants.consumer_group import CGView, Reconciling, reconciliation_under_way
from kverify.model import registry
from kverify.model.explore import explore
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

PROCESSES = "explore:consumer-group-world/processes"

# name -> (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    # impl/consumer/client.py:436 ConsumerMember._maybe_reconcile, ReplaceComparisonOperator_NotEq_Eq
    "never-reconciles": (kip848_client, "ConsumerMember", "_maybe_reconcile",
                         "if self.state != S.RECONCILING or self._target_reconciled()",
                         "if self.state == S.RECONCILING or self._target_reconciled()",
                         "a client given a new target stays RECONCILING without ever revoking or assigning"),
    # impl/consumer/client.py:259 ConsumerMember.on_response, ReplaceComparisonOperator_Eq_Is
    "heartbeat-kind-by-identity": (kip848_client, "ConsumerMember", "on_response",
                                   'elif inf.kind == "heartbeat":', 'elif inf.kind is "heartbeat":',
                                   "a heartbeat answer whose in-flight kind is an equal but distinct string (a state "
                                   "unpickled by another process) is handled as an OffsetFetch answer"),
}


def plant(monkeypatch, name):
    planted_mutants.plant(monkeypatch, name, SURVIVORS)


_ctx = planted_mutants.quick_ctx


def test_the_processes_variant_is_in_quick_on_worker_processes():
    assert PROCESSES in [c.name for c in P.variants("quick")]
    assert PROCESSES in P.ON_WORKER_PROCESSES


def _rv(*reconciling):
    return CGView(0, 0, 0, (), (), (), (1,), 1, (), reconciling=reconciling)


def test_reconciliation_under_way_on_views():
    assert reconciliation_under_way(_rv()) is None
    assert reconciliation_under_way(_rv(Reconciling(0, True, False), Reconciling(1, False, True))) is None
    assert reconciliation_under_way(_rv(Reconciling(2, False, False))) == (
        "client m2 is RECONCILING toward a new target with no reconciliation under way")


def test_a_client_that_never_reconciles_is_caught_in_quick(tmp_path, monkeypatch):
    """Planted: maybeReconcile returns at once whenever the client is RECONCILING (every caller puts it there
    first), so it never revokes nor takes its target; its member waits in UNREVOKED_PARTITIONS until the rebalance
    timeout, which the world reaches only after ~10**6 time jumps: without the property the search is cut by its
    state budget (INCONCLUSIVE), never failed."""
    run = P._variant_check(PROCESSES)
    ok = run(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "never-reconciles")
    bad = run(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["reconciliation-under-way"], bad.summary


@pytest.mark.filterwarnings("ignore:\"is\" with a literal:SyntaxWarning")
def test_heartbeat_kind_by_identity_is_caught_across_worker_processes(tmp_path, monkeypatch):
    """`inf.kind is "heartbeat"` agrees with `==` while every InFlight was built in this process; the quick check on
    two worker processes hands states over as pickles, and the heartbeat answer then goes to the OffsetFetch handler."""
    bound = {"topics": 2, "failover": False, "grow": False, "members": 1}
    plant(monkeypatch, "heartbeat-kind-by-identity")
    serial = explore(registry.build("consumer-group-world", bound), graph=False)
    assert serial.complete and not serial.violations          # one process cannot tell the mutant apart
    bad = P._variant_check(PROCESSES)(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["exception"], bad.summary
    assert "_on_fetch_response" in bad.summary
