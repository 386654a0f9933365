"""The checks `kverify verify` runs so that its profiles execute the code of impl/ they guard (issue 17):
the variant-bound explorations of kverify/suite/providers.py (`EXPLORE_VARIANTS`) are planned in the
profiles that name them, each really runs the impl functions it is there for (counted by wrapping them),
passes on the correct code, and fails on a planted bug in that code. bench/coverage.py's exception lists
name only functions that exist. Small bounds only (quick's own bounds, or the ci bound where it is small)."""
import importlib.util
import os

import pytest

from kverify.impl.coordinator import offset_handling as OH
from kverify.impl.replication import cluster as RC
from kverify.suite import Context, plan, profiles
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ctx(tmp_path, profile="quick"):
    return Context(profile, str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False)


def _count_calls(monkeypatch, owner, name) -> list:
    calls = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args[1:2])
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)
    return calls


def test_the_variant_checks_are_planned_in_their_profiles():
    names = {c.name for c in plan("ci")}
    assert set(P.EXPLORE_VARIANTS) <= names
    quick = {c.name for c in plan("quick")}
    assert {"explore:replication-world/shutdown", "explore:offsets-world/transactions",
            "liveness:replication-world/reassign"} <= quick
    for name, (model, bounds, caps) in P.EXPLORE_VARIANTS.items():
        assert name.startswith(f"explore:{model}/")
        assert all(profile in caps for profile in bounds), name     # every profile that runs it caps it


def test_the_quick_reassignment_check_runs_the_reassignment_step(tmp_path, monkeypatch):
    steps = _count_calls(monkeypatch, RC.Cluster, "reassignment_step")
    res = P._liveness_check("liveness:replication-world/reassign")(_ctx(tmp_path))
    assert res.verdict == PASS, res.summary
    assert len(steps) > 100


def test_the_shutdown_variant_runs_controlled_shutdown_and_a_clean_stop(tmp_path, monkeypatch):
    shutdowns = _count_calls(monkeypatch, RC.Cluster, "controlled_shutdown")
    stops = _count_calls(monkeypatch, RC.Cluster, "stop")
    res = P._variant_check("explore:replication-world/shutdown")(_ctx(tmp_path))
    assert res.verdict == PASS, res.summary
    assert res.name == "explore:replication-world/shutdown" and res.covered["states"] > 100
    assert {b for (b,) in shutdowns} == {1, 2, 3} and stops


def test_a_shutdown_that_elects_outside_the_isr_is_caught(tmp_path, monkeypatch):
    """Planted: controlled shutdown hands leadership to the first other live replica, in the ISR or not
    (the correct election picks a live ISR member). From a state where a follower is out of the ISR
    (it starts outside: init_isr=1), the new leader misses the committed record."""
    from kverify.impl.replication import elections

    def anyone(ar, isr, live, shutting_down):
        for r in ar:
            if r in live and r not in shutting_down:
                return r, (r,)
        return None
    monkeypatch.setattr(elections, "controlled_shutdown", anyone)
    name = "explore:replication-world/shutdown"
    model, bounds, caps = P.EXPLORE_VARIANTS[name]
    monkeypatch.setitem(P.EXPLORE_VARIANTS, name, (model, {"quick": dict(bounds["quick"], init_isr=1, min_isr=1)},
                                                   caps))
    res = P._variant_check(name)(_ctx(tmp_path))
    assert res.verdict == FAIL, res.summary
    assert res.violations[0]["invariant"].startswith("i-"), res.violations


def test_the_transactions_variant_settles_staged_offsets_and_catches_a_lost_settlement(tmp_path, monkeypatch):
    settled = _count_calls(monkeypatch, OH.OffsetHandling, "complete_transaction")
    ok = P._variant_check("explore:offsets-world/transactions")(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    assert settled
    # planted: the coordinator drops the staged offsets when the commit marker arrives
    monkeypatch.setattr(OH.OffsetHandling, "_settle_txn", staticmethod(lambda group, pending, commit: None))
    bad = P._variant_check("explore:offsets-world/transactions")(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL and bad.violations[0]["invariant"] == "acked-commit-durable", bad.summary


def _bench_coverage():
    spec = importlib.util.spec_from_file_location("kverify_bench_coverage", os.path.join(ROOT, "bench", "coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("table", ["EXCUSED", "NOT_MODELLED"])
def test_every_named_exception_is_a_function_of_impl(table):
    """A stale entry (a function renamed or deleted) would silently excuse nothing; each must name a
    function (or `module.py:*` a module) that exists, with a reason."""
    cov = _bench_coverage()
    known = set()
    for dirpath, _dirs, files in os.walk(cov.IMPL):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), cov.IMPL)
                known.add(f"{rel}:*")
                known.update(f"{rel}:{q}" for q, _a, _b in cov.functions_of(os.path.join(dirpath, f)))
    entries = getattr(cov, table)
    assert entries
    for key, why in entries.items():
        assert key.startswith("*.") or key in known, key
        assert len(why.strip()) >= 10, key                  # a reason, not a placeholder
