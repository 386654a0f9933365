"""Z3 budgets are deterministic work counts (issue 17): the same obligation in the same process state
does the same solver work and reaches the same status on any machine; a budget too small for the query
is `unknown` (INCONCLUSIVE), never a crash and never `proved`; the quick profile reaches every proof
family at small size while ci runs every obligation at full size."""
import json
import subprocess
import sys

import pytest
import z3

from kverify.model import proofs
from kverify.model.proofs import bmc as B
from kverify.model.proofs import budget, by_name, limit, work_done
from kverify.suite import profiles

_RUN = """
import json, sys
from kverify.model.proofs import by_name
out = []
for name in sys.argv[1:]:
    r = by_name(name).check()
    out.append([name, r.status, r.work])
print(json.dumps(out))
"""


def _fresh(*names):
    """Run obligations in a fresh interpreter (a fresh Z3 context, as each suite worker has)."""
    done = subprocess.run([sys.executable, "-c", _RUN, *names], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_same_obligations_same_work_and_status_in_fresh_processes():
    names = ("range-balanced-per-topic", "coordinator-partition-in-range")
    first, second = _fresh(*names), _fresh(*names)
    assert first == second
    assert [status for _, status, _ in first] == ["proved", "proved"]
    assert all(work > 0 for _, _, work in first)


def test_work_is_counted_per_obligation():
    before = work_done()
    res = by_name("range-balanced-per-topic").check()
    assert res.status == "proved" and res.work > 0
    assert res.work <= work_done() - before <= res.work + 10      # reading the counter costs a unit or two


@pytest.mark.parametrize("name", ["range-exactly-once", "coordinator-partition-in-range"])
def test_tiny_budget_is_unknown_not_proved(name):
    with budget(scale=1e-7):
        res = by_name(name).check()
    assert res.status == "unknown"
    assert "resource limit" in res.detail
    # the same obligation at its real budget proves: the budget, not the property, made it unknown
    assert by_name(name).check().status == "proved"


def test_tiny_budget_stops_inductive_and_bmc_queries():
    from kverify.model.proofs import group_inductive as G

    status, info = G.check_inductive("generation-monotonicity", 2, 1, frozenset(), work=1)
    assert status == "unknown" and "resource limit" in info
    enc = G.Enc(2, 1, frozenset())
    bad_state, bad_step = G.bad_predicates(enc, "exclusive-ownership")
    res = B.bmc(G.Bounded(enc, G.HUNTS[0]), 3, bad_state, bad_step, work=1)
    assert res.status == "unknown" and res.depth <= 3 and res.reason      # cut at a depth, not clean


def test_limit_scales_and_restores():
    x = z3.BitVec("x", 32)
    hard = [x * x * x == 12345678 * x + 99, z3.ULT(x, 1 << 20)]
    with budget(scale=1e-6):
        s = limit(z3.Solver(), 1_000_000)       # 1 unit: nothing can be decided
        s.add(*hard)
        assert s.check() == z3.unknown
    assert proofs._SCALE == 1.0 and proofs._DEADLINE is None and proofs.size() == "full"
    with pytest.raises(ValueError):
        with budget(size="tiny"):
            pass


def test_small_size_is_seen_by_the_group_proofs():
    from kverify.model.proofs import group_inductive as G

    assert G._members() == G.MEMBERS
    with budget(size="small"):
        assert G._members() == G.SMALL_MEMBERS < G.MEMBERS
    assert G._members() == G.MEMBERS


def test_quick_reaches_every_family_and_ci_runs_all_at_full_size():
    obligations = proofs.all_obligations()
    names = {ob.name for ob in obligations}
    family = {ob.name: ob.run.__module__ for ob in obligations}
    quick = profiles.z3_plan("quick")
    assert quick.size == "small" and set(quick.only) <= names
    assert {family[n] for n in quick.only} == set(family.values())
    ci = profiles.z3_plan("ci")
    assert ci.only is None and ci.size == "full" and ci.work_scale == 1.0


def test_prove_rejects_non_positive_max_seconds():
    from kverify.cli import main

    assert main(["prove", "range-exactly-once", "--max-seconds", "0"]) == 2


def test_small_variants_run_only_inside_small_size():
    calls = []
    ob = proofs.Obligation("toy", "toy", lambda b: calls.append("full") or proofs.Result("proved"),
                           small=lambda b: calls.append("small") or proofs.Result("proved"))
    ob.check()
    with budget(size="small"):
        ob.check()
    assert calls == ["full", "small"]
    assert by_name("replication-i-lcc").small is not None


def test_prove_reports_work_and_accepts_an_explicit_wall_cap(capsys):
    from kverify.cli import main

    assert main(["prove", "range-balanced-per-topic", "--max-seconds", "600", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["obligations"][0]
    assert row["status"] == "proved" and row["work"] > 0
