"""Figures for the group Z3 obligations (model/proofs/group_inductive.py): status, expected status,
wall and CPU seconds of each obligation, with no behaviour and with each behaviour the group model
supports. CPU seconds are the figure to compare: the wall clock depends on the machine's load.

    .venv/bin/python bench/prove_group.py [behaviour ...]
"""
import sys
import time

from kverify.model.group import SUPPORTS
from kverify.model.proofs import group_inductive


def main(argv):
    cases = argv or [""] + sorted(SUPPORTS)
    ok = True
    for name in cases:
        behaviours = frozenset({name} - {""})
        for ob in group_inductive.obligations():
            wall, cpu = time.perf_counter(), time.process_time()
            res = ob.run(behaviours)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            expected = ob.expected(behaviours)
            ok &= res.status == expected
            print(f"{name or 'correct':<28} {ob.name:<32} {res.status:<9} (expected {expected:<9}) "
                  f"wall {wall:6.2f}s cpu {cpu:6.2f}s", flush=True)
    print("all as expected" if ok else "SOME NOT AS EXPECTED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
