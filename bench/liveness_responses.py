"""How many fair steps the correct worlds take to discharge their liveness obligations in walks (the
figures model/response.py's DEFAULT_BOUND is sized from).

    .venv/bin/python bench/liveness_responses.py [--runs 2000] [--steps 100] [CHECK ...]

For each `liveness:walk/*` check of kverify/suite/liveness_walks.py (its model and parameters), walks
seeds 0..runs-1 with a response bound far above any response seen (so nothing is cut) and prints, per
property, the fair tails followed and the longest response; the bound should leave a wide margin above
the longest. Seeds and counts are printed; seconds are only for the reader.
"""
import argparse
import time

MEASURING_BOUND = 100_000


def main() -> None:
    from kverify.model.walk import walk
    from kverify.suite import Context
    from kverify.suite import liveness_walks as LW

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("checks", nargs="*", default=list(LW.WALK_CHECKS))
    args = ap.parse_args()
    ctx = Context("ci", "/dev/null", seed=0, progress=False)
    for check in args.checks:
        proto = LW.build(ctx, check)
        tails: dict = {}
        longest: dict = {}
        steps = tail_steps = 0
        t0 = time.perf_counter()
        for seed in range(args.runs):
            res = walk(proto, seed, args.steps, response_bound=MEASURING_BOUND)
            if res.violation is not None:
                raise SystemExit(f"{check} seed {seed}: {res.violation.invariant}: {res.violation.message}")
            steps += res.steps
            tail_steps += res.tail_steps
            for name, (n, m) in res.responses.items():
                tails[name] = tails.get(name, 0) + n
                longest[name] = max(longest.get(name, 0), m)
        print(f"{check}: seeds 0..{args.runs - 1}, {args.steps} steps per walk, {steps:,} steps + {tail_steps:,} in "
              f"fair tails ({time.perf_counter() - t0:.0f} s); "
              + ", ".join(f"{n}: {tails[n]:,} tails, longest {longest[n]}" for n in sorted(tails)), flush=True)


if __name__ == "__main__":
    main()
