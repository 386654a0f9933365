"""Z3 obligations: the correct versions are proved, broken ones falsified, and the arithmetic
encodings agree with the reference assignors at every small size."""
import itertools
import json
import subprocess
import sys

import pytest
import z3

from kverify.impl.assignors import assign
from kverify.model.proofs import all_obligations, by_name
from kverify.model.proofs import assignor_arith as A
from kverify.model.proofs.coordinator_selection import min_value_witness


def _eval(expr):
    return z3.simplify(expr).as_long()


def test_range_formula_matches_reference_assignor():
    for k, n in itertools.product(range(1, 7), range(0, 13)):
        members = [{"id": f"c{i}", "topics": ["t"], "owned": None, "generation": None, "instance_id": None}
                   for i in range(k)]
        ans = assign({"id": "x", "assignor": "range", "topics": {"t": n}, "members": members})
        # member order for c0..c5 is the id order (single digits)
        q, r = z3.BitVecVal(n // k, 32), z3.BitVecVal(n % k, 32)
        for i in range(k):
            start = _eval(A.range_start(q, r, z3.BitVecVal(i, 32)))
            length = _eval(A.range_len(q, r, z3.BitVecVal(i, 32)))
            assert sorted(p for _, p in ans["assignment"][f"c{i}"]) == list(range(start, start + length)), (k, n, i)


def test_roundrobin_formula_matches_reference_assignor():
    for k, n in itertools.product(range(1, 6), range(0, 11)):
        members = [{"id": f"c{i}", "topics": ["t"], "owned": None, "generation": None, "instance_id": None}
                   for i in range(k)]
        ans = assign({"id": "x", "assignor": "roundrobin", "topics": {"t": n}, "members": members})
        for i in range(k):
            assert sorted(p for _, p in ans["assignment"][f"c{i}"]) == [p for p in range(n) if p % k == i]
            # the closed form the proof uses for the count: (n + k - 1 - i) // k
            assert len(ans["assignment"][f"c{i}"]) == (n + k - 1 - i) // k


def test_broken_block_formula_is_falsified():
    """The legacy (pre-0.9) block rule, ceil(n/k) per member, is not balanced: Z3 says so."""
    n, k, i, j = (z3.BitVec(x, 32) for x in "nkij")
    block = z3.UDiv(n + k - 1, k)
    size = lambda m: z3.If(z3.ULE(n, m * block), z3.BitVecVal(0, 32),
                           z3.If(z3.ULE(n, (m + 1) * block), n - m * block, block))
    res = A._prove(A._bounds(n, k) + [z3.ULT(i, k), z3.ULT(j, k), z3.Not(z3.ULE(size(i), size(j) + 1))],
                   "balanced", {"n": n, "k": k, "i": i, "j": j})
    assert res.status == "falsified"
    c = res.counterexample
    sizes = [max(0, min(c["n"], (m + 1) * -(-c["n"] // c["k"])) - m * -(-c["n"] // c["k"])) for m in range(c["k"])]
    assert max(sizes) - min(sizes) > 1  # the witness really is unbalanced


def test_min_value_witness_is_shortest_and_real():
    from kverify.impl.coordinator.partition import java_string_hash, partition_for

    word = min_value_witness()
    assert java_string_hash(word) == -(2**31)
    assert partition_for(word, 50) == 0
    assert partition_for(word, 50, frozenset({"math-abs-coordinator"})) < 0
    # nothing shorter over [a-z] hashes to MIN_VALUE
    assert min_value_witness(max_length=len(word) - 1) is None


# The KIP-848 obligations are proved, and falsified with the depth of their trace and its replay in the model, in
# tests/test_proofs_consumer_group.py; the replication ones, proved with the detail of their strengthening and
# falsified by each of their breaking behaviours with a replayed trace, in tests/test_proofs_replication.py. This
# file checks that those have every one of them (below): each solver query runs once.
ELSEWHERE = ("consumer-group-", "replication-")
OBLIGATIONS = [o for o in all_obligations() if not o.name.startswith(ELSEWHERE)]


def test_every_obligation_is_checked_here_or_in_its_own_file():
    import test_proofs_consumer_group as CGT
    import test_proofs_replication as RPT

    cg = {o.name for o in all_obligations() if o.name.startswith(ELSEWHERE[0])}
    assert cg and cg == {f"consumer-group-{p}" for p in CGT.PROPS}
    assert {o.name for o in all_obligations() if o.name in cg and o.breaking} == {n for n, _, _ in CGT.FALSIFIED}
    rep = {o.name for o in all_obligations() if o.name.startswith(ELSEWHERE[1])}
    assert rep and rep == set(RPT.OBLIGATIONS)
    assert {(o.name, b) for o in all_obligations() if o.name in rep for b in o.breaking} == set(RPT.FALSIFIED)
    assert len(OBLIGATIONS) + len(cg) + len(rep) == len(all_obligations()) and len(OBLIGATIONS) > 5


@pytest.mark.parametrize("ob", OBLIGATIONS, ids=lambda o: o.name)
def test_obligation_proved_on_correct_suite(ob):
    res = ob.check(frozenset())
    assert res.status == "proved", res.detail      # its time is a figure (bench/prove_group.py), not an assertion


@pytest.mark.parametrize("ob", [o for o in OBLIGATIONS if o.breaking], ids=lambda o: o.name)
def test_obligation_falsified_by_its_behaviour(ob):
    res = ob.check(ob.breaking)
    assert res.status == "falsified", res.detail
    assert res.counterexample


def test_prove_cli_json_and_report(tmp_path):
    r = subprocess.run([sys.executable, "-m", "kverify", "prove", "coordinator-partition-min-value",
                        "--behaviour", "math-abs-coordinator", "--json", "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    (row,) = data["obligations"]
    assert row["status"] == "falsified" and row["counterexample"]["partition"] < 0
    rep = subprocess.run([sys.executable, "-m", "kverify", "replay", row["report"]], capture_output=True, text=True)
    assert rep.returncode == 1 and "reproduced" in rep.stdout
    bad = subprocess.run([sys.executable, "-m", "kverify", "prove", "no-such-obligation"], capture_output=True, text=True)
    assert bad.returncode == 2
