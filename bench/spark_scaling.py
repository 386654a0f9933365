"""Steps per second of `kverify simulate` inline and on Spark with 1 and 2 cores, same seeds.

Why: the Spark engine is only worth its start-up when it scales. This prints, for one world and
one seed range, the rate of `--engine inline`, of Spark local[1] and of local[2], and the parallel
efficiency rate(2 cores) / (2 * rate(1 core)). Spark's start-up is excluded: each session first
runs a small warm-up simulation (JVM start, Python workers, code generation), then the measured
run's clock covers only the job that walks the seeds and writes their Parquet rows
(`elapsed_seconds` in summary.json); the aggregation afterwards is reported separately. Because
other processes may share the cpus, it also prints the CPU seconds each measured job used
(driver, Spark's Python workers, the JVM) and the efficiency those imply on two idle cores. All
three runs must agree on the totals (checked). Goals from issue #9: efficiency >= 0.85 and more
than 10^6 world steps per minute on 2 cores.

    .venv/bin/python bench/spark_scaling.py [--world kverify.spark.toy_counter:make] [--runs 20000]
        [--steps 100] [--seed 0] [--param K=V ...] [--behaviour NAME ...] [--repeat N] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from kverify.spark import session
from kverify.spark.runner import SimConfig, simulate
from kverify.spark.world import resolve


def tree_cpu() -> dict:
    """CPU seconds used so far by this process's descendants, split into the JVM ("java") and
    everything else (Spark's Python workers), read from /proc; {} where /proc is missing."""
    if not os.path.isdir("/proc"):
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    procs = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                raw = fh.read()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        procs[int(entry)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / tick)
    me, out = os.getpid(), {"java": 0.0, "python": 0.0}
    for pid, (ppid, name, cpu) in procs.items():
        p = ppid
        while p and p != me and p in procs:
            p = procs[p][0]
        if p == me and pid != me:
            out["java" if name == "java" else "python"] += cpu
    return out


def _run(world, runs, seed, engine, master, out, per_task, repeat=1):
    """Best of `repeat` runs (shortest job time): on shared machines the other runs measure the
    neighbours as much as kverify."""
    best = None
    for _ in range(repeat):
        marks = {}

        def on_job(event):
            marks[event] = (tree_cpu(), time.process_time())

        t0 = time.perf_counter()
        res = simulate(SimConfig(world=world, runs=runs, out=out, seed=seed, engine=engine, master=master,
                                 per_range=per_task, progress=False, write_reports=False, on_job=on_job))
        wall = time.perf_counter() - t0
        (c0, own0), (c1, own1) = marks["start"], marks["end"]
        cpu = {k: c1[k] - c0.get(k, 0.0) for k in c1}
        cpu["driver"] = own1 - own0
        if best is None or res.elapsed < best[0].elapsed:
            best = (res, wall, cpu)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", default="kverify.spark.toy_counter:make")
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds-per-task", type=int, default=None)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--behaviour", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=1, help="measure each engine N times, keep the best")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    params = dict(p.split("=", 1) for p in args.param)
    world = resolve(args.world, params, args.behaviour, args.steps)
    tmp = tempfile.mkdtemp(prefix="kverify-bench-")
    print(f"world {world.name}, {args.runs} runs x {args.steps} steps, seeds {args.seed}.."
          f"{args.seed + args.runs - 1}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}",
          file=sys.stderr, flush=True)
    rows = {}
    res, wall, cpu = _run(world, args.runs, args.seed, "inline", None, os.path.join(tmp, "inline"),
                          args.seeds_per_task, args.repeat)
    rows["inline"] = (res, wall, 0.0, cpu)
    reference = res.totals.comparable()
    for cores in (1, 2):
        master = f"local[{cores}]"
        t0 = time.perf_counter()
        session.get(master)
        _run(world, min(args.runs, 2000), args.seed + 10**9, "spark", master, os.path.join(tmp, f"warm{cores}"), None)
        startup = time.perf_counter() - t0
        res, wall, cpu = _run(world, args.runs, args.seed, "spark", master, os.path.join(tmp, f"spark{cores}"),
                              args.seeds_per_task, args.repeat)
        if res.totals.comparable() != reference:
            print(f"MISMATCH: {master} totals differ from inline", file=sys.stderr)
            return 1
        rows[master] = (res, wall, startup, cpu)
    session.stop()

    def rate(name):
        res = rows[name][0]
        return res.totals.steps / res.elapsed

    eff = rate("local[2]") / (2 * rate("local[1]"))
    # CPU accounting is immune to neighbours: on two idle cores local[1]'s Python worker has a core of
    # its own (the JVM uses the other), while local[2] shares both cores between the workers and the
    # JVM, so the efficiency to expect there is worker CPU / all CPU of the local[2] run.
    cpu2 = rows["local[2]"][3]
    predicted = (cpu2["python"] / sum(cpu2.values())) if cpu2.get("java") else None
    per_min_2 = rate("local[2]") * 60
    report = {
        "world": world.name, "runs": args.runs, "steps_per_run": args.steps, "steps": reference["steps"],
        "seed_ranges": rows["local[2]"][0].summary["seed_ranges"],
        "engines": {name: {"steps_per_second": round(rate(name), 1),
                           "job_seconds": round(res.elapsed, 3),
                           "end_to_end_seconds": round(wall, 3),
                           "startup_and_warmup_seconds": round(startup, 3),
                           "cpu_seconds": {k: round(v, 2) for k, v in cpu.items()}}
                    for name, (res, wall, startup, cpu) in rows.items()},
        "predicted_efficiency_idle_2_cores_from_cpu": round(predicted, 3) if predicted else None,
        "parallel_efficiency_2_cores": round(eff, 3),
        "speedup_2_cores_vs_inline": round(rate("local[2]") / rate("inline"), 3),
        "world_steps_per_minute_2_cores": round(per_min_2),
        "goal_efficiency_0_85": eff >= 0.85,
        "goal_1e6_steps_per_minute": per_min_2 > 1e6,
        "load_average_at_end": round(os.getloadavg()[0], 2),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{'engine':<10} {'steps/s':>12} {'job s':>9} {'end-to-end s':>13} {'start-up s':>11}   cpu s (driver/python workers/jvm)")
    for name, e in report["engines"].items():
        c = e["cpu_seconds"]
        print(f"{name:<10} {e['steps_per_second']:>12,.0f} {e['job_seconds']:>9.2f} "
              f"{e['end_to_end_seconds']:>13.2f} {e['startup_and_warmup_seconds']:>11.2f}   "
              f"{c.get('driver', 0):.1f} / {c.get('python', 0):.1f} / {c.get('java', 0):.1f}")
    print(f"parallel efficiency (2 cores): {eff:.3f}  (goal >= 0.85: {'met' if eff >= 0.85 else 'NOT met'})")
    if predicted:
        print(f"efficiency to expect on 2 idle cores, from CPU use (python workers / all): {predicted:.3f}")
    print(f"speed-up local[2] vs inline: {report['speedup_2_cores_vs_inline']:.2f}")
    print(f"world steps per minute on 2 cores: {per_min_2:,.0f}  "
          f"(goal > 1,000,000: {'met' if per_min_2 > 1e6 else 'NOT met'})")
    print(f"load average at the end: {report['load_average_at_end']} (other processes share these cpus)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
