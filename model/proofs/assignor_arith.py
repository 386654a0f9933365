"""Range and round-robin proved for every member count <= 64 and partition count <= 1024.

Both assignors reduce, per topic, to arithmetic over the sorted member index i in [0, k) and the
partition count n: range gives member i the block [start(i), start(i) + len(i)) with
len(i) = n // k + (i < n % k) and start(i) = i * (n // k) + min(i, n % k); round-robin with
identical subscriptions gives partition j to member j % k. Z3 proves, over 32-bit integers with
those bounds (no enumeration), that the blocks tile [0, n) exactly (so every partition is assigned
exactly once) and that sizes differ by at most one. `tests/test_proofs.py` cross-checks these
formulas against the reference assignors in impl/assignors at small sizes.
"""
from __future__ import annotations

import z3

from kverify.model.proofs import Obligation, Result, limit

MAX_MEMBERS = 64
MAX_PARTITIONS = 1024
WORK = 60_000_000       # per query, Z3 resource units (bench/prove_work.py 14:45 UTC: largest query 5,336,571, x 10)


def _bv(name):
    return z3.BitVec(name, 32)


ONE, ZERO = z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)


def euclid(n, k, tag: str):
    """Fresh q, r with n = q*k + r and r < k: integer division without a symbolic-divisor
    circuit (much cheaper for Z3 than UDiv/URem). Returns (q, r, constraints)."""
    q, r = _bv(f"q_{tag}"), _bv(f"r_{tag}")
    return q, r, [z3.ULE(q, 2 * MAX_PARTITIONS), n == q * k + r, z3.ULT(r, k)]


def range_len(q, r, i):
    """Range's block length of member i when n = q*k + r."""
    return q + z3.If(z3.ULT(i, r), ONE, ZERO)


def range_start(q, r, i):
    return i * q + z3.If(z3.ULT(i, r), i, r)


def _bounds(n, k):
    return [z3.UGE(k, 1), z3.ULE(k, MAX_MEMBERS), z3.ULE(n, MAX_PARTITIONS)]


def _prove(negated_claims, detail_ok, names) -> Result:
    s = limit(z3.Solver(), WORK)
    s.add(*negated_claims)
    v = s.check()
    if v == z3.unsat:
        return Result("proved", detail_ok)
    if v == z3.unknown:
        return Result("unknown", s.reason_unknown())
    m = s.model()
    return Result("falsified", "counterexample: " + ", ".join(f"{k}={m.eval(x, model_completion=True).as_long()}"
                                                              for k, x in names.items()),
                  {k: m.eval(x, model_completion=True).as_long() for k, x in names.items()})


def _range_exactly_once(behaviours) -> Result:
    """Blocks are contiguous (start(i+1) = start(i) + len(i)), start(0) = 0 and
    start(k-1) + len(k-1) = n: together they tile [0, n), so each partition has one owner."""
    n, k, i = _bv("n"), _bv("k"), _bv("i")
    q, r, div = euclid(n, k, "n")
    contiguous = z3.Implies(z3.ULT(i + 1, k), range_start(q, r, i + 1) == range_start(q, r, i) + range_len(q, r, i))
    first = range_start(q, r, ZERO) == 0
    last = range_start(q, r, k - 1) + range_len(q, r, k - 1) == n
    claim = z3.And(contiguous, first, last)
    return _prove(_bounds(n, k) + div + [z3.ULT(i, k), z3.Not(claim)],
                  f"blocks tile [0, n) for every k <= {MAX_MEMBERS}, n <= {MAX_PARTITIONS}", {"n": n, "k": k, "i": i})


def _range_balanced(behaviours) -> Result:
    n, k, i, j = _bv("n"), _bv("k"), _bv("i"), _bv("j")
    q, r, div = euclid(n, k, "n")
    claim = z3.ULE(range_len(q, r, i), range_len(q, r, j) + 1)
    return _prove(_bounds(n, k) + div + [z3.ULT(i, k), z3.ULT(j, k), z3.Not(claim)],
                  "one topic (or identical subscriptions, per topic): sizes differ by at most one",
                  {"n": n, "k": k, "i": i, "j": j})


def rr_count_constraints(n, k, i, tag):
    """count = |{p in [0, n) : p % k == i}| = (n + k - 1 - i) // k for i < k, as (count, constraints)."""
    c, rem, div = euclid(n + k - 1 - i, k, tag)
    return c, div


def _roundrobin(behaviours) -> Result:
    """Partition p goes to member p % k (< k: exactly one owner); member i's count is
    n // k + (i < n % k), so counts sum to n and differ by at most one."""
    n, k, i, j, p = _bv("n"), _bv("k"), _bv("i"), _bv("j"), _bv("p")
    q, r, div = euclid(n, k, "n")
    qp, rp, divp = euclid(p, k, "p")
    ci, di = rr_count_constraints(n, k, i, "i")
    cj, dj = rr_count_constraints(n, k, j, "j")
    owner_ok = z3.Implies(z3.ULT(p, n), z3.ULT(rp, k))
    claim = z3.And(owner_ok, z3.ULE(ci, cj + 1), ci == range_len(q, r, i))
    return _prove(_bounds(n, k) + div + divp + di + dj + [z3.ULT(i, k), z3.ULT(j, k), z3.Not(claim)],
                  f"identical subscriptions: each partition has one owner, sizes differ by <= 1 (k <= {MAX_MEMBERS}, n <= {MAX_PARTITIONS})",
                  {"n": n, "k": k, "i": i, "j": j, "p": p})


def obligations() -> list[Obligation]:
    return [
        Obligation("range-exactly-once", "range assigns every partition of a topic to exactly one subscriber "
                   f"(k <= {MAX_MEMBERS} members, n <= {MAX_PARTITIONS} partitions)", _range_exactly_once),
        Obligation("range-balanced-per-topic", "range: per topic, subscriber sizes differ by at most one", _range_balanced),
        Obligation("roundrobin-exactly-once-balanced", "round-robin with identical subscriptions: every partition "
                   "exactly once, sizes differ by at most one", _roundrobin),
    ]
