"""World steps per second under Hypothesis and under the plain seeded random walker, per world.

The same protocol object, the same rules: Hypothesis draws each action through its data stream
(generation, shrinking bookkeeping); the walker draws with `random.Random` and, on memo-safe worlds,
reuses what earlier walks of the run computed for a state (model/walk.py `WalkMemo`: same traces, every
new state still checked; the share of steps it answered is printed). The walker is the engine for
volume (Spark), so it must stay at least 10x faster on the same rules. Prints one row a world.
Usage: python bench/steps.py [--seconds S] [WORLD ...]
"""
import argparse
import sys
import time

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from kverify.model import registry
from kverify.model.walk import memo_for, walk
from kverify.stateful_tests.machine import machine_for

WORLDS = ["group-world", "replication-world", "offsets-world", "assignor-rounds", "group", "replication", "offsets"]


def walker_rate(proto, seconds: float, steps: int = 100, memo=None) -> float:
    done, seed, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        done += walk(proto, seed, steps, track_sometimes=False, memo=memo).steps
        seed += 1
    return done / (time.perf_counter() - t0)


def hypothesis_rate(name, proto, seconds: float, steps: int = 100) -> float:
    counter = {"steps": 0}
    inner = proto.step

    def counted(state, action):
        counter["steps"] += 1
        return inner(state, action)

    proto.step = counted                  # count the protocol steps the machine takes
    machine = machine_for(name, protocol=proto)
    t0 = time.perf_counter()
    try:
        while time.perf_counter() - t0 < seconds:
            run_state_machine_as_test(machine, settings=settings(
                max_examples=20, stateful_step_count=steps, deadline=None, database=None,
                suppress_health_check=list(HealthCheck)))
    finally:
        del proto.step
    return counter["steps"] / (time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("worlds", nargs="*", default=WORLDS)
    ap.add_argument("--seconds", type=float, default=5.0, help="per engine and world (default 5)")
    ap.add_argument("--no-memo", action="store_true", help="walk without the memo (each step computed afresh)")
    args = ap.parse_args(argv)
    print(f"{'world':<20} {'walker steps/s':>15} {'Hypothesis steps/s':>19} {'ratio':>7} {'memo hits':>10}")
    worst = None
    for name in args.worlds:
        try:
            proto = registry.build(name)
        except Exception as exc:  # a world this build does not have: say so, do not hide it
            print(f"{name:<20} not available: {exc}")
            continue
        w = walker_rate(proto, args.seconds, memo=False if args.no_memo else None)
        memo = memo_for(proto)
        hits = f"{memo.hits / max(1, memo.hits + memo.misses):.0%}" if memo is not None and not args.no_memo else "-"
        h = hypothesis_rate(name, proto, args.seconds)
        ratio = w / h if h else float("inf")
        worst = ratio if worst is None else min(worst, ratio)
        print(f"{name:<20} {w:>15,.0f} {h:>19,.0f} {ratio:>6.1f}x {hits:>10}", flush=True)
    if worst is not None:
        print(f"walker/Hypothesis, worst world: {worst:.1f}x (goal >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
