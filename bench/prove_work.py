"""Solver work of every Z3 obligation (the figures the `limit` budgets are sized from).

    .venv/bin/python bench/prove_work.py [--size full|small] [--behaviour NAME ...] [NAME ...]

For each obligation: status, seconds, total Z3 resource units (`rlimit count`), the number of solver
queries and the largest single query's units; a module's per-query budget should be a generous multiple
(10x) of the largest query seen for it. Runs the obligations on two worker processes (fixed split).
"""
import argparse
import sys
from concurrent.futures import ProcessPoolExecutor


def _measure(names, behaviours, size):
    import z3

    from kverify.model import proofs

    queries: list = []

    def wrap(cls):
        orig = cls.check

        def check(self, *a, **k):
            w0 = proofs.work_done()
            r = orig(self, *a, **k)
            queries.append(proofs.work_done() - w0)
            return r
        cls.check = check

    wrap(z3.Solver)
    wrap(z3.Optimize)
    out = []
    with proofs.budget(size=size):
        for name in names:
            queries.clear()
            res = proofs.by_name(name).check(frozenset(behaviours))
            out.append((name, res.status, res.seconds, res.work, len(queries), max(queries, default=0),
                        res.detail[:100]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--size", default="full")
    ap.add_argument("--behaviour", action="append", default=[])
    args = ap.parse_args()
    from kverify.model.proofs import all_obligations

    names = args.names or [o.name for o in all_obligations()]
    shares = [names[0::2], names[1::2]]
    with ProcessPoolExecutor(max_workers=2) as pool:
        rows = [r for f in [pool.submit(_measure, s, args.behaviour, args.size) for s in shares] for r in f.result()]
    print(f"{'obligation':<42} {'status':<9} {'sec':>7} {'work':>13} {'queries':>7} {'max query':>12}")
    for name, status, sec, work, nq, mx, detail in sorted(rows):
        print(f"{name:<42} {status:<9} {sec:7.2f} {work:13,d} {nq:7d} {mx:12,d}  {detail}")
    print(f"total seconds {sum(r[2] for r in rows):.1f}, work {sum(r[3] for r in rows):,d}", file=sys.stderr)


if __name__ == "__main__":
    main()
