"""Exhaustive search on Spark and on worker processes: same distinct states as in-process, and parallel efficiency.

Why: issue 18's goals for `kverify explore --engine spark|processes`: the distinct-state count equal
to the in-process explorer's, and a parallel efficiency rate(local[2]) / (2 * rate(local[1])) of at
least 0.7 at a bound of at least 1 M states; and the group-world bound the in-process search could not
finish (`--model group-world --param members=2 --param faults=1 --param losses=1`, 1.59 M states in
25 min in-process). For each engine it prints distinct states, seconds, distinct states/s, bytes a
state on the executors (visited sets + parent links), the CPU seconds the run used (driver, workers,
JVM: on a shared machine the wall clock alone says little) and the load average before and after.
Spark's start-up is excluded (the session starts, then a warm-up search of 2 levels runs).

    .venv/bin/python bench/spark_explore.py [--model replication] [--param K=V ...] [--behaviour B ...]
        [--engines inline,spark:1,spark:2,processes:2] [--partitions N] [--max-seconds S] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def cpu_now() -> float:
    """CPU seconds of this process, its finished children and its live descendants (JVM, Python workers)."""
    from spark_scaling import tree_cpu

    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + sum(tree_cpu().values())


def run_one(engine: str, model: str, params: dict, behaviours: list, partitions, max_seconds) -> dict:
    from kverify.model import registry

    kind, _, n = engine.partition(":")
    before_load = os.getloadavg()[0]
    if kind == "inline":
        from kverify.model.explore import explore

        p = registry.build(model, params, behaviours)
        c0, t0 = cpu_now(), time.monotonic()
        res = explore(p, graph=False, max_seconds=max_seconds)
        secs, cpu, nbytes = time.monotonic() - t0, cpu_now() - c0, None
    elif kind == "processes":
        from kverify.model.search.parallel import ProcessesDriver

        drv = ProcessesDriver(registry.build(model, params, behaviours), int(n or 2), max_seconds=max_seconds)
        c0, t0 = cpu_now(), time.monotonic()
        res = drv.run()
        secs, cpu, nbytes = time.monotonic() - t0, cpu_now() - c0, drv.bytes
    elif kind == "spark":
        from kverify.spark import session
        from kverify.spark.explore import explore_spark

        master = f"local[{n or '*'}]"
        session.stop()
        session.get(master, None, app="kverify-explore")
        explore_spark(model, params, behaviours, master=master, partitions=partitions, max_states=1)   # warm-up
        c0, t0 = cpu_now(), time.monotonic()
        res, drv = explore_spark(model, params, behaviours, master=master, partitions=partitions,
                                 max_seconds=max_seconds)
        secs, cpu, nbytes = time.monotonic() - t0, cpu_now() - c0, drv.bytes
        session.stop()
    else:
        raise SystemExit(f"unknown engine {engine!r} (inline, processes:N, spark:N)")
    return {"engine": engine, "distinct": res.distinct_states, "transitions": res.transitions,
            "depth": res.max_depth, "complete": res.complete, "seconds": round(secs, 2),
            "distinct_per_s": round(res.distinct_states / max(secs, 1e-9)), "cpu_seconds": round(cpu, 1),
            "bytes_per_state": round(nbytes / max(res.distinct_states, 1), 1) if nbytes is not None else None,
            "violations": [f.invariant for f in res.violations],
            "load_before": round(before_load, 1), "load_after": round(os.getloadavg()[0], 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="replication")
    ap.add_argument("--param", action="append", default=[], metavar="K=V")
    ap.add_argument("--behaviour", action="append", default=[])
    ap.add_argument("--engines", default="inline,spark:1,spark:2")
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--max-seconds", type=float, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from kverify.model import registry

    params = registry.parse_kv(args.param)
    rows = []
    for engine in args.engines.split(","):
        row = run_one(engine.strip(), args.model, params, args.behaviour, args.partitions, args.max_seconds)
        rows.append(row)
        if not args.json:
            print(f"{row['engine']:<12} {row['distinct']:>10} distinct {row['transitions']:>11} transitions "
                  f"depth {row['depth']:>3} {'complete' if row['complete'] else 'PARTIAL '} {row['seconds']:>9.1f}s "
                  f"{row['distinct_per_s']:>8} distinct/s cpu {row['cpu_seconds']:>8.1f}s "
                  f"bytes/state {row['bytes_per_state']} load {row['load_before']}->{row['load_after']}", flush=True)
    counts = {r["distinct"] for r in rows if r["complete"]}
    rate = {r["engine"]: r["distinct_per_s"] for r in rows}
    summary = {"model": args.model, "params": params, "behaviours": args.behaviour, "rows": rows,
               "same_distinct_states": len(counts) <= 1, "cpus": os.cpu_count()}
    if "spark:1" in rate and "spark:2" in rate and rate["spark:1"]:
        summary["efficiency_local2"] = round(rate["spark:2"] / (2 * rate["spark:1"]), 2)
    if "inline" in rate and "processes:2" in rate and rate["inline"]:
        summary["efficiency_processes2"] = round(rate["processes:2"] / (2 * rate["inline"]), 2)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"same distinct states: {summary['same_distinct_states']}"
              + (f"; Spark efficiency local[2] vs local[1]: {summary['efficiency_local2']} (goal >= 0.7)"
                 if "efficiency_local2" in summary else "")
              + (f"; processes:2 vs inline: {summary['efficiency_processes2']}" if "efficiency_processes2" in summary else ""))
    return 0 if summary["same_distinct_states"] else 1


if __name__ == "__main__":
    sys.exit(main())
