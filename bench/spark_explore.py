"""Exhaustive search on Spark and on worker processes: same distinct states as in-process, and parallel efficiency.

Why: issue 18's goals for `kverify explore --engine spark|processes`: the distinct-state count equal
to the in-process explorer's, and a parallel efficiency T_1 / (2 * T_2) of at least 0.7 on local[2] at
a bound of at least 1 M states; and the group-world bound the in-process search could not finish
(`--model group-world --param losses=1`: 2 members, a crash or pause, a lost message; 1.59 M states in
25 min in-process). For each engine it prints distinct states, seconds, distinct states/s, bytes a
state on the executors (visited sets), the CPU seconds the run used (driver, workers,
JVM, and the JVM's share alone: on a shared machine the wall clock alone says little) and the load average before and after;
then the efficiency of each 2-way run against the same engine on one core and against the
in-process explorer, in wall time and as a CPU ratio. The state graph is off on every engine
(recoverability is not part of the timed search). Spark's start-up is excluded (the session starts,
then a warm-up search of 1 state runs).

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
    jvm = None
    if kind == "inline":
        from kverify.model.explore import explore

        p = registry.build(model, params, behaviours)
        c0, t0 = cpu_now(), time.monotonic()
        res = explore(p, graph=False, max_seconds=max_seconds)
        secs, cpu, nbytes = time.monotonic() - t0, cpu_now() - c0, None
    elif kind == "processes":
        from kverify.model.search.parallel import ProcessesDriver

        drv = ProcessesDriver(registry.build(model, params, behaviours), int(n or 2), max_seconds=max_seconds,
                              graph_limit=0)
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
        from spark_scaling import tree_cpu

        c0, t0, j0 = cpu_now(), time.monotonic(), tree_cpu().get("java", 0.0)
        res, drv = explore_spark(model, params, behaviours, master=master, partitions=partitions,
                                 max_seconds=max_seconds, graph_limit=0)
        secs, cpu, nbytes = time.monotonic() - t0, cpu_now() - c0, drv.bytes
        jvm = tree_cpu().get("java", 0.0) - j0
        session.stop()
    else:
        raise SystemExit(f"unknown engine {engine!r} (inline, processes:N, spark:N)")
    return {"engine": engine, "distinct": res.distinct_states, "transitions": res.transitions,
            "depth": res.max_depth, "complete": res.complete, "seconds": round(secs, 2),
            "distinct_per_s": round(res.distinct_states / max(secs, 1e-9)), "cpu_seconds": round(cpu, 1),
            "bytes_per_state": round(nbytes / max(res.distinct_states, 1), 1) if nbytes is not None else None,
            "cpu_jvm_seconds": round(jvm, 1) if jvm is not None else None,
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
                  f"{row['distinct_per_s']:>8} distinct/s cpu {row['cpu_seconds']:>8.1f}s (JVM {row['cpu_jvm_seconds']}) "
                  f"bytes/state {row['bytes_per_state']} load {row['load_before']}->{row['load_after']}", flush=True)
    counts = {r["distinct"] for r in rows if r["complete"]}
    rate = {r["engine"]: r["distinct_per_s"] for r in rows}
    summary = {"model": args.model, "params": params, "behaviours": args.behaviour, "rows": rows,
               "same_distinct_states": len(counts) <= 1, "cpus": os.cpu_count()}
    cpu = {r["engine"]: r["cpu_seconds"] for r in rows}
    # efficiency = T_1 / (2 * T_2) in wall time (same distinct states, so = rate_2 / (2 * rate_1)), against
    # the same engine on one core and against the in-process explorer; on a shared machine also the CPU
    # ratio T_1(cpu) / T_2(cpu): the share of the 2-core run's work that is the 1-core run's work (what
    # two idle cores would turn into efficiency, the exchange's waits aside)
    for two, ones in (("spark:2", ("spark:1", "inline")), ("processes:2", ("processes:1", "inline"))):
        for one in ones:
            if one in rate and two in rate and rate[one]:
                tag = f"{two}_vs_{one}"
                summary[f"efficiency_{tag}"] = round(rate[two] / (2 * rate[one]), 2)
                summary[f"cpu_ratio_{tag}"] = round(cpu[one] / max(cpu[two], 1e-9), 2)
    summary["uptime"] = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"same distinct states: {summary['same_distinct_states']}; load average {summary['uptime']}")
        for k, v in summary.items():
            if k.startswith("efficiency_"):
                tag = k[len("efficiency_"):]
                print(f"  efficiency {tag.replace('_vs_', ' vs ')}: {v} wall (goal >= 0.7), CPU ratio "
                      f"{summary['cpu_ratio_' + tag]}")
    return 0 if summary["same_distinct_states"] else 1


if __name__ == "__main__":
    sys.exit(main())
