"""Coordinator selection (`partition_for`) proved over every 32-bit hash value.

Kafka maps a group to `Utils.abs(groupId.hashCode()) % n`. `Utils.abs` maps Integer.MIN_VALUE to
0; Java's `Math.abs` leaves it negative, and Java's `%` keeps the dividend's sign, so with the
`math-abs-coordinator` behaviour a group whose hash is MIN_VALUE lands on a negative partition.
Z3 proves the correct version for every hash and every n in 1..1024, and for the broken one
finds the shortest group id over [a-z] hashing to MIN_VALUE (then checked with the real hash).
"""
from __future__ import annotations

import z3

from kverify.model.proofs import Obligation, Result, limit

MIN_INT = 0x80000000
MAX_N = 1024
MATH_ABS = "math-abs-coordinator"
WORK = 3_000_000        # per query, Z3 resource units (bench/prove_work.py 14:45 UTC: largest query 264,913, x 10)


def _abs(h, java_math_abs: bool):
    negated = -h  # two's complement: -MIN_VALUE == MIN_VALUE
    if java_math_abs:
        return z3.If(h < 0, negated, h)
    return z3.If(h == z3.BitVecVal(MIN_INT, 32), z3.BitVecVal(0, 32), z3.If(h < 0, negated, h))


def _range(behaviours: frozenset) -> Result:
    h, n = z3.BitVecs("h n", 32)
    part = z3.SRem(_abs(h, MATH_ABS in behaviours), n)   # Java `%`: sign of the dividend
    s = limit(z3.Solver(), WORK)
    s.add(n >= 1, n <= MAX_N, z3.Not(z3.And(part >= 0, part < n)))
    verdict = s.check()
    if verdict == z3.unsat:
        return Result("proved", f"for all 2^32 hash values and every n in 1..{MAX_N}")
    if verdict == z3.unknown:
        return Result("unknown", s.reason_unknown())
    m = s.model()
    hv, nv = m[h].as_signed_long(), m[n].as_signed_long()
    pv = m.eval(part).as_signed_long()
    return Result("falsified", f"hash {hv} with n={nv} gives partition {pv}",
                  {"hash": hv, "n": nv, "partition": pv})


def java_hash_of_letters(length: int):
    """Symbolic Java String.hashCode of `length` chars constrained to [a-z]."""
    chars = [z3.BitVec(f"c{i}", 32) for i in range(length)]
    h = z3.BitVecVal(0, 32)
    for c in chars:
        h = h * 31 + c
    bounds = [z3.And(c >= ord("a"), c <= ord("z")) for c in chars]
    return chars, h, bounds


def min_value_witness(max_length: int = 10):
    """Shortest [a-z]+ string whose Java hashCode is Integer.MIN_VALUE (None if none up to max)."""
    for length in range(1, max_length + 1):
        chars, h, bounds = java_hash_of_letters(length)
        s = limit(z3.Solver(), WORK)
        s.add(*bounds, h == z3.BitVecVal(MIN_INT, 32))
        if s.check() == z3.sat:
            m = s.model()
            return "".join(chr(m[c].as_long()) for c in chars)
    return None


def _witness(behaviours: frozenset) -> Result:
    """With Math.abs, some group id over [a-z] lands on a negative partition of 50."""
    from kverify.impl.coordinator.partition import java_string_hash, partition_for

    if MATH_ABS not in behaviours:
        # The correct mapping is proved non-negative by `_range`; here we show the witness of the
        # broken one still maps into range with Utils.abs (the obligation holds).
        word = min_value_witness()
        p = partition_for(word, 50)
        ok = 0 <= p < 50 and java_string_hash(word) == -(2**31)
        return Result("proved" if ok else "falsified",
                      f"'{word}' hashes to Integer.MIN_VALUE and Utils.abs maps it to partition {p} of 50",
                      None if ok else {"group_id": word, "partition": p})
    word = min_value_witness()
    if word is None:
        return Result("unknown", "no [a-z] string up to length 10 hashes to Integer.MIN_VALUE")
    real_hash = java_string_hash(word)
    p = partition_for(word, 50, frozenset({MATH_ABS}))
    if real_hash != -(2**31):
        return Result("unknown", f"Z3 witness {word!r} does not hash to MIN_VALUE with the real hash ({real_hash})")
    return Result("falsified", f"group id '{word}' hashes to Integer.MIN_VALUE; Math.abs puts it on partition {p}",
                  {"group_id": word, "java_hash": real_hash, "partitions": 50, "partition": p})


def obligations() -> list[Obligation]:
    return [
        Obligation("coordinator-partition-in-range",
                   f"for every 32-bit hash h and n in 1..{MAX_N}, Utils.abs(h) % n lies in [0, n)",
                   _range, frozenset({MATH_ABS})),
        Obligation("coordinator-partition-min-value",
                   "a group id hashing to Integer.MIN_VALUE still lands on a valid partition of 50",
                   _witness, frozenset({MATH_ABS})),
    ]
