"""`kverify simulate WORLD`: many seeded random runs, on Spark (local or a cluster) or inline.

See kverify/spark/ for the machinery (kverify.spark.runner is the entry point). Exit 0: every run
completed and nothing was violated; 1: a violation (or deadlock) was found, a `sometimes` goal was
never reached, or a seed was lost; 2: bad usage, no Java, or Spark cannot start on the master;
70: the Spark job itself failed (one line with its cause).
"""
from __future__ import annotations

import os
import re
import sys

from kverify.cli import UsageError, emit_json

NAME = "simulate"
HELP = "large seeded random runs of a world (Spark: local[*] or a cluster; or inline)"
DESCRIPTION = (HELP + ". WORLD is a registry name (`kverify simulate group ...`) or module:function "
               "naming a make(params, behaviours) factory. Every finding is re-run from its seed, "
               "shrunk and written as a replayable report.")


def add_arguments(parser):
    parser.add_argument("world", metavar="WORLD", help="registry name (group, group-world, ...) or module:function")
    parser.add_argument("--runs", type=int, default=1000, help="number of runs (seeds) (default 1000)")
    parser.add_argument("--steps", type=int, default=100, help="steps per run (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="first seed; runs use seeds S..S+runs-1 (default 0)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical behaviour (repeatable)")
    parser.add_argument("--param", action="append", default=[], metavar="K=V", help="world parameter (repeatable)")
    parser.add_argument("--engine", choices=("spark", "inline"), default="spark", help="default spark")
    parser.add_argument("--master", default="local[*]",
                        help="Spark master: local[*] (default), local[N], spark://HOST:7077, ...")
    parser.add_argument("--conf", action="append", default=[], metavar="K=V",
                        help="extra Spark configuration (repeatable), e.g. spark.executor.memory=2g")
    parser.add_argument("--seeds-per-task", type=int, default=None,
                        help="seeds walked by one Spark task (default: runs/16, clamped to 1000..10000)")
    parser.add_argument("--out", default="kverify-simulate", help="output directory (default ./kverify-simulate)")
    parser.add_argument("--no-reports", action="store_true", help="do not re-run and shrink the violations")
    from kverify.model.response import DEFAULT_BOUND

    parser.add_argument("--response-bound", type=int, default=DEFAULT_BOUND, metavar="N",
                        help="fair steps within which a started liveness obligation must be discharged "
                             f"(model/response.py; default {DEFAULT_BOUND}; 0: liveness not judged)")
    parser.add_argument("--progress", dest="progress", action="store_const", const=True, default=None,
                        help="show the progress bar (default: only when stderr is a terminal)")
    parser.add_argument("--no-progress", dest="progress", action="store_const", const=False,
                        help="never show the progress bar")


_MASTER = re.compile(r"^(local(\[(\*|\d+)(,\s*\d+)?\])?|local-cluster\[\d+,\s*\d+,\s*\d+\]|"
                     r"(spark|k8s|mesos)://\S+|yarn)$")


def _kv(items, flag):
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"{flag} expects K=V, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def run(args) -> int:
    from kverify.spark.runner import SUMMARY_KEYS, SimConfig, simulate
    from kverify.spark.world import WorldError, resolve

    if args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    if args.seeds_per_task is not None and args.seeds_per_task < 1:
        raise UsageError(f"--seeds-per-task must be at least 1, got {args.seeds_per_task}")
    if args.engine == "spark" and not _MASTER.match(args.master):
        raise UsageError(f"--master {args.master!r} is not a Spark master URL "
                         "(local[*], local[N], spark://HOST:PORT, yarn, k8s://..., local-cluster[...])")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} exists and is not a directory")
    try:
        world = resolve(args.world, _kv(args.param, "--param"), args.behaviour, args.steps)
    except WorldError as exc:
        raise UsageError(str(exc)) from None
    if args.response_bound < 0:
        raise UsageError(f"--response-bound must be 0 (off) or a number of steps, got {args.response_bound}")
    cfg = SimConfig(world=world, runs=args.runs, out=args.out, seed=args.seed, engine=args.engine,
                    master=args.master, spark_conf=_kv(args.conf, "--conf"), per_range=args.seeds_per_task,
                    progress=args.progress, write_reports=not args.no_reports,
                    response_bound=args.response_bound)
    if not args.json:
        where = f"Spark {args.master}" if args.engine == "spark" else "inline"
        print(f"simulate {world.name}: {args.runs} runs x {args.steps} steps, seeds {args.seed}.."
              f"{args.seed + args.runs - 1}, {where}", flush=True)
    if args.engine == "spark":
        from kverify.spark.java import JavaNotFound
        from kverify.spark.runner import SparkJobError, SparkStartError

        try:
            result = simulate(cfg)
        except (JavaNotFound, SparkStartError) as exc:
            raise UsageError(str(exc)) from None
        except SparkJobError as exc:
            print(f"kverify: error: {exc}", file=sys.stderr)
            return 70
    else:
        result = simulate(cfg)
    s = result.summary
    unreached = sorted(name for name, ok in s["sometimes"].items() if not ok)
    lost = s["runs_requested"] - s["runs_completed"]
    if args.json:
        emit_json({k: s[k] for k in SUMMARY_KEYS})
    else:
        _print_human(s, args.out, unreached, lost)
    return 1 if (s["violations"] or unreached or lost) else 0


def _print_human(s, out, unreached, lost):
    rate = f"{s['steps_per_second']:,.0f}" if s["steps_per_second"] else "n/a"
    approx = "" if s["distinct_abstract_states_exact"] else " (approx.)"
    print(f"runs {s['runs_completed']}/{s['runs_requested']}, steps {s['steps']:,}, {rate} steps/s, "
          f"{s['distinct_abstract_states']:,} distinct abstract states{approx}")
    if lost:
        print(f"LOST: {lost} seeds were requested but not run")
    print("actions: " + (", ".join(f"{k} {v:,}" for k, v in s["actions"].items()) or "none"))
    live = s["liveness"]
    if live.get("properties"):
        print(f"liveness (bounded response, {live['response_bound']} fair steps): " + ", ".join(
            f"{k} {v['tails']:,} fair tails, longest response {v['longest']}" for k, v in live["properties"].items()))
    for name in unreached:
        print(f"SOMETIMES NEVER REACHED: {name}")
    if not s["violations"]:
        print("no violation")
    for inv, n in s["violations"].items():
        print(f"VIOLATION {inv}: {n} runs")
    for r in s["reports"]:
        if "error" in r:
            print(f"  {r['invariant']}: seed {r['seed']} could not be re-run: {r['error']}")
            continue
        print(f"  {r['invariant']}: seed {r['seed']} broke it at step {r['step']}; shrunk to "
              f"{r['shrunk_steps']} steps -> {r['path']}")
        print(f"    replay: {r['replay']}")
        print(f"    re-run: {r['seed_command']}")
    print(f"output: {out}/summary.json")
