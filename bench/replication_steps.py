"""Stepping speed of the replicated cluster: produce + fetch + election steps per second for
3 brokers, 10 partitions, RF 3 (issue #4). Also times copy() and snapshot(), which a model checker
pays on every explored state. Deterministic from the printed seed; only the timings vary.

    .venv/bin/python bench/replication_steps.py [--steps N] [--seed S]
"""
from __future__ import annotations

import argparse
import random
import time

from kverify.impl.replication import Cluster, ReplicationConfig


def build() -> Cluster:
    c = Cluster((1, 2, 3), ReplicationConfig(min_insync_replicas=2), controller=1)
    c.create_topic("t", 10, 3)
    c.deliver_all()
    return c


def run(steps: int, seed: int) -> dict:
    rng = random.Random(seed)
    c = build()
    tps = sorted(c.store.assignments)
    counts = {"produce": 0, "fetch": 0, "election": 0}
    calls = 0
    early = None
    t0 = time.perf_counter()
    while calls < steps:
        if early is None and calls >= 2000:
            early = c.copy()   # a state of the size a bounded model checker explores
        x = rng.random()
        if x < 0.35:
            c.produce(rng.choice(tps), calls, acks=rng.choice((-1, 1)))
            counts["produce"] += 1
            calls += 1
        elif x < 0.97:
            tp = rng.choice(tps)
            for b in c.store.assignments[tp]:
                if c.replicate(b, tp):
                    counts["fetch"] += 1
                calls += 1
            if c.net:
                calls += c.deliver_all()
        else:
            # an election: a broker fails, the controller re-elects, the broker comes back
            b = rng.choice((1, 2, 3))
            c.crash(b, lossy=rng.random() < 0.3)
            calls += 1
            if c.store.controller_id < 0:
                c.elect_controller(min(x for x in (1, 2, 3) if c.brokers[x].alive))
            else:
                c.handle_broker_changes()
            calls += 1 + c.deliver_all()
            c.restart(b)
            c.handle_broker_changes()
            calls += 2 + c.deliver_all()
            counts["election"] += 1
    elapsed = time.perf_counter() - t0
    out = {"seed": seed, "steps": calls, "seconds": elapsed, "steps_per_s": calls / elapsed, "counts": counts}
    for label, state in (("small", early or c), ("final", c)):
        n = 1000
        t1 = time.perf_counter()
        for _ in range(n):
            state.copy()
        out[f"{label}_copy_per_s"] = n / (time.perf_counter() - t1)
        t2 = time.perf_counter()
        for _ in range(n):
            hash(state.snapshot())
        out[f"{label}_snapshot_per_s"] = n / (time.perf_counter() - t2)
        out[f"{label}_records"] = sum(r.log.leo for b in state.brokers.values() for r in b.replicas.values())
        out[f"{label}_produced"] = len(state.results)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = run(a.steps, a.seed)
    print(f"seed={r['seed']} brokers=3 partitions=10 rf=3")
    print(f"steps={r['steps']} in {r['seconds']:.2f}s -> {r['steps_per_s']:.0f} steps/s "
          f"(produce {r['counts']['produce']}, fetch round trips {r['counts']['fetch']}, "
          f"elections {r['counts']['election']})")
    for label in ("small", "final"):
        print(f"{label} state ({r[label + '_produced']} produce requests, {r[label + '_records']} records in all "
              f"replica logs): copy() {r[label + '_copy_per_s']:.0f}/s, snapshot()+hash "
              f"{r[label + '_snapshot_per_s']:.0f}/s")


if __name__ == "__main__":
    main()
