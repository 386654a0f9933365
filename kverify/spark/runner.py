"""One simulation from start to finish: split seeds, run them (Spark or inline), aggregate,
write the output directory, re-run and shrink each distinct violation, build the summary.

Output directory (`--out`):
  runs/ (Spark: Parquet; inline: runs.jsonl)  one row per seed (kverify.spark.task.RunRow)
  actions/, violations/ (Spark: Parquet)      the aggregate tables
  reports/<invariant>.json                    one shrunk counterexample record per invariant (a liveness
                                              property: the trace up to the step where its bound ran out)
  summary.json                                the summary (SUMMARY_KEYS first, then details; `liveness`:
                                              the response bound, fair tails and longest response per property)

Both engines walk with the same response bound (model/response.py), so a liveness verdict is the same
inline and on Spark for the same seeds.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from kverify.model.response import DEFAULT_BOUND
from kverify.spark import aggregate, findings
from kverify.spark.progress import AccumulatorPoller, Progress
from kverify.spark.task import FaultInjection, run_range, split
from kverify.spark.world import WorldSpec

SUMMARY_KEYS = ("world", "runs_requested", "runs_completed", "steps", "steps_per_second",
                "distinct_abstract_states", "violations", "reports")


class SparkStartError(RuntimeError):
    """Spark could not start on the given master (bad URL, unreachable cluster); one line."""


class SparkJobError(RuntimeError):
    """The Spark job failed (after Spark's own retries); one line naming the cause."""


def _one_line(exc: BaseException) -> str:
    """The informative line of a (often multi-line, Java- or Python-traceback-laden) error."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    errors = [ln for ln in lines if not ln.startswith(("at ", "File ", "^", "Traceback", "SQLSTATE", "JVM stacktrace"))]
    python_errors = [ln for ln in errors if ln.split(":", 1)[0].endswith(("Error", "Exception", "Failure"))]
    line = (python_errors or errors or [type(exc).__name__])[-1]
    return line[:300]


@dataclass
class SimConfig:
    world: WorldSpec
    runs: int
    out: str
    seed: int = 0
    engine: str = "spark"                 # "spark" | "inline"
    master: str = "local[*]"
    spark_conf: dict = field(default_factory=dict)
    per_range: Optional[int] = None       # seeds per task (default: kverify.spark.task.seeds_per_range)
    progress: Optional[bool] = None       # None: when stderr is a terminal
    write_reports: bool = True
    fault: Optional[FaultInjection] = None
    response_bound: int = DEFAULT_BOUND   # fair steps within which a liveness obligation is discharged (0: off)
    on_job: Optional[Callable[[str], None]] = None   # called with "start"/"end" around the runs (bench)


@dataclass
class SimResult:
    summary: dict
    totals: aggregate.Totals
    elapsed: float                        # seconds spent running the seeds (start-up excluded)
    timeline: list = field(default_factory=list)   # [(seconds, steps done)]: throughput over the run


def run_rows_schema():
    from pyspark.sql import types as T

    return T.StructType([
        T.StructField("seed", T.LongType(), False),
        T.StructField("steps", T.IntegerType(), False),
        T.StructField("invariant", T.StringType(), True),
        T.StructField("violation_step", T.IntegerType(), True),
        T.StructField("deadlock", T.BooleanType(), False),
        T.StructField("actions", T.MapType(T.StringType(), T.LongType(), False), False),
        T.StructField("reached", T.ArrayType(T.StringType(), False), False),
        T.StructField("fingerprints", T.ArrayType(T.LongType(), False), False),
        T.StructField("tail_steps", T.LongType(), False),
        T.StructField("tails", T.MapType(T.StringType(), T.LongType(), False), False),
        T.StructField("longest", T.MapType(T.StringType(), T.LongType(), False), False),
    ])


def _spark_task(world, fault, bound, accs, ranges):
    """mapPartitions body: each partition holds one seed range."""
    runs_acc, steps_acc, viol_acc = accs
    protocol = world.build()
    for rng in ranges:
        for row in run_range(world, rng, fault, protocol, bound):
            runs_acc.add(1)
            steps_acc.add(row.steps)
            if row.invariant is not None or row.deadlock:
                viol_acc.add(1)
            yield row


def _notify(cfg: SimConfig, event: str) -> None:
    if cfg.on_job is not None:
        cfg.on_job(event)


def _run_spark(cfg: SimConfig, ranges, progress: Progress):
    from kverify.spark import session
    from kverify.spark.java import JavaNotFound

    try:
        sess = session.get(cfg.master, cfg.spark_conf)
    except JavaNotFound:
        raise
    except Exception as exc:  # py4j / Spark errors carry Java stack traces
        raise SparkStartError(f"cannot start Spark on master {cfg.master!r}: {_one_line(exc)}") from None
    sc = sess.sparkContext
    accs = (sc.accumulator(0), sc.accumulator(0), sc.accumulator(0))
    rdd = sc.parallelize(ranges, len(ranges)).mapPartitions(
        functools.partial(_spark_task, cfg.world, cfg.fault, cfg.response_bound, accs))
    df = sess.createDataFrame(rdd, schema=run_rows_schema(), verifySchema=False)
    runs_path = os.path.join(cfg.out, "runs")
    progress.start()
    _notify(cfg, "start")
    t0 = time.perf_counter()
    try:
        with AccumulatorPoller(progress, *accs):
            df.write.mode("overwrite").parquet(runs_path)
    except Exception as exc:
        raise SparkJobError(f"Spark job failed: {_one_line(exc)}") from None
    elapsed = time.perf_counter() - t0
    _notify(cfg, "end")
    totals = aggregate.from_dataframe(sess.read.parquet(runs_path), cfg.seed, cfg.runs)
    sess.createDataFrame(sorted(totals.actions.items()), "action string, fired long") \
        .coalesce(1).write.mode("overwrite").parquet(os.path.join(cfg.out, "actions"))
    sess.createDataFrame([(inv, n, totals.exemplars[inv][1], totals.exemplars[inv][0])
                          for inv, n in totals.violations.items()],
                         "invariant string, runs long, exemplar_seed long, exemplar_step long") \
        .coalesce(1).write.mode("overwrite").parquet(os.path.join(cfg.out, "violations"))
    return totals, elapsed


def _run_inline(cfg: SimConfig, ranges, progress: Progress):
    protocol = cfg.world.build()
    os.makedirs(os.path.join(cfg.out, "runs"), exist_ok=True)
    rows = []
    progress.start()
    _notify(cfg, "start")
    t0 = time.perf_counter()
    for rng in ranges:
        for row in run_range(cfg.world, rng, cfg.fault, protocol, cfg.response_bound):
            rows.append(row)
            progress.add(row.steps, row.invariant is not None or row.deadlock)
    elapsed = time.perf_counter() - t0
    _notify(cfg, "end")
    with open(os.path.join(cfg.out, "runs", "runs.jsonl"), "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row._asdict(), separators=(",", ":")))
            fh.write("\n")
    return aggregate.from_rows(rows, cfg.seed, cfg.runs), elapsed


def simulate(cfg: SimConfig) -> SimResult:
    if cfg.engine not in ("spark", "inline"):
        raise ValueError(f"--engine must be spark or inline, got {cfg.engine!r}")
    if cfg.response_bound < 0:
        raise ValueError(f"the response bound must be 0 (off) or a number of steps, got {cfg.response_bound}")
    ranges = split(cfg.seed, cfg.runs, cfg.per_range)
    protocol = cfg.world.build()
    os.makedirs(cfg.out, exist_ok=True)
    for stale in ("reports", "runs", "actions", "violations", "summary.json"):   # a previous run's output
        path = os.path.join(cfg.out, stale)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    progress = Progress(cfg.runs, cfg.progress)
    try:
        if cfg.engine == "spark":
            totals, elapsed = _run_spark(cfg, ranges, progress)
        else:
            totals, elapsed = _run_inline(cfg, ranges, progress)
    finally:
        progress.close()
    reports = []
    if cfg.write_reports:
        engine = "spark" if cfg.engine == "spark" else "walk"
        for inv, (step, seed) in totals.exemplars.items():
            try:
                reports.append(findings.report(cfg.world, inv, seed, step, totals.violations[inv],
                                               cfg.out, engine, response_bound=cfg.response_bound).to_json())
            except findings.NondeterministicReplay as exc:   # reported, not hidden
                reports.append({"invariant": inv, "seed": seed, "step": step, "runs": totals.violations[inv],
                                "error": str(exc)})
    sometimes = {s.name: s.name in totals.reached for s in protocol.sometimes()}
    liveness = {"response_bound": cfg.response_bound, "tail_steps": totals.tail_steps,
                "properties": {p.name: {"tails": totals.tails.get(p.name, 0), "longest": totals.longest.get(p.name, 0)}
                               for p in protocol.liveness()} if cfg.response_bound else {}}
    summary = {
        "world": cfg.world.name,
        "runs_requested": cfg.runs,
        "runs_completed": totals.runs_completed,
        "steps": totals.steps,
        "steps_per_second": round(totals.steps / elapsed, 1) if elapsed > 0 else None,
        "distinct_abstract_states": totals.distinct_abstract_states,
        "violations": totals.violations,
        "reports": reports,
        # details (summary.json only)
        "distinct_abstract_states_exact": totals.distinct_exact,
        "engine": cfg.engine,
        "master": cfg.master if cfg.engine == "spark" else None,
        "seed": cfg.seed,
        "steps_per_run": cfg.world.steps,
        "params": dict(cfg.world.params),
        "behaviours": list(cfg.world.behaviours),
        "seed_ranges": len(ranges),
        "seeds_per_range": ranges[0].count,
        "elapsed_seconds": round(elapsed, 3),
        "rows_received": totals.rows,
        "duplicate_rows_dropped": totals.duplicate_rows,
        "rows_outside_range": totals.foreign_rows,
        "actions": totals.actions,
        "sometimes": sometimes,
        "liveness": liveness,
    }
    with open(os.path.join(cfg.out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2)
        fh.write("\n")
    return SimResult(summary, totals, elapsed, list(progress.timeline))
