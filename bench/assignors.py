"""Problems per second of each built-in assignor at 100 members x 1,000 partitions and at
1,000 members x 10,000 partitions (issue 3).

Each size is run twice: a fresh group (no owned partitions) and a steady group (every member
owns what the previous answer gave it, one generation later), all members subscribed to the
same 10 topics; the sticky assignors also get a mixed-subscription group at the small size
(their general algorithm). Each case repeats until it has run 3 times or 3 seconds.
Usage: .venv/bin/python bench/assignors.py [--quick]   (--quick: small size only)
"""
from __future__ import annotations

import sys
import time

from kverify.impl.assignors import assign, names

TOPICS = 10
BUDGET_S = 3.0
REPEATS = 3


def group(members: int, partitions: int, mixed: bool = False) -> dict:
    per_topic = partitions // TOPICS
    topics = {f"topic-{i:02d}": per_topic for i in range(TOPICS)}
    names_ = sorted(topics)
    ms = []
    for i in range(members):
        subs = names_ if not mixed else names_[: 1 + (i % TOPICS)]
        ms.append({"id": f"consumer-{i:05d}", "topics": subs, "owned": None, "generation": None, "instance_id": None})
    return {"id": "bench", "topics": topics, "members": ms}


def steady(problem: dict, answer: dict) -> dict:
    members = [dict(m, owned=answer["assignment"][m["id"]], generation=1) for m in problem["members"]]
    return dict(problem, members=members)


def rate(problem: dict, assignor: str):
    runs, spent = 0, 0.0
    answer = None
    while runs < REPEATS and spent < BUDGET_S:
        t0 = time.perf_counter()
        answer = assign(problem, assignor)
        spent += time.perf_counter() - t0
        runs += 1
    if "error" in answer:
        raise SystemExit(f"{assignor}: {answer['error']}")
    return runs / spent, answer


def main(argv) -> int:
    sizes = [(100, 1_000)] if "--quick" in argv else [(100, 1_000), (1_000, 10_000)]
    print(f"{'assignor':<20} {'members x partitions':>22} {'group':>8} {'problems/s':>12}")
    for members, partitions in sizes:
        fresh = group(members, partitions)
        for name in names():
            r, answer = rate(fresh, name)
            print(f"{name:<20} {members:>9} x {partitions:<10} {'fresh':>8} {r:>12.2f}", flush=True)
            r, _ = rate(steady(fresh, answer), name)
            print(f"{name:<20} {members:>9} x {partitions:<10} {'steady':>8} {r:>12.2f}", flush=True)
            if name in ("sticky", "cooperative-sticky") and members <= 100:
                r, _ = rate(group(members, partitions, mixed=True), name)
                print(f"{name:<20} {members:>9} x {partitions:<10} {'mixed':>8} {r:>12.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
