"""TLC against `kverify explore`, side by side: small bounds, >= 1 M-state bounds, and time to a historical bug.

Three sections (`--only small,large,bugs`; all three by default):

small  TLC with one worker, TLC with all workers (`-workers auto`) and `kverify explore` (a subprocess,
       symmetry off like TLC, no state graph) on bounds of 16k-60k states rendered from CASES. Distinct
       states per second: search only (TLC from "Computing initial states" to exit, the explorer's own
       search time) and end to end (whole process, JVM / interpreter start and parsing included).

large  The specs/<Spec>_large_1m.cfg bounds (marked large: the test suite does not run them), each with
       >= 1 M distinct states: TLC `-workers 1` with a fixed heap (--tlc-heap) and the explorer (inline
       engine, one process) on the same constants. Per engine: distinct states, wall seconds (search
       only), CPU seconds of the whole process (user + system, from wait4: on a shared machine the CPU
       rate is the stable figure; the JVM's CPU includes its JIT and GC threads), distinct states per
       wall second and per CPU second, and bytes per distinct state:
         measured = (peak RSS of the run - peak RSS of the same program on a tiny bound) / distinct
                    (explorer: the same command cut at --max-states 1; TLC: the same flags on the spec's
                    smallest shipped .cfg)
         layout   = explorer: its fingerprint table (8 bytes a slot, load <= 3/4) + 6 bytes of BFS links a
                    state (the frontier's whole states are in `measured` only); TLC: 8 bytes a fingerprint
                    in its in-memory fingerprint set, its state queue is on disk (DiskStateQueue).
       `--profile` adds where the explorer spends its time (cProfile, first --profile-states states) for
       every large bound where it is behind TLC.

bugs   Time to the first counterexample of the same historical bug in J. Gustafson's public TLA+ specs of
       Kafka replication (github.com/hachikuji/kafka-specification; pass a local copy with
       --kafka-specification DIR: this script neither ships nor fetches that code) and in our replication
       model with the matching behaviour switched on. TLC runs the public module with one worker, BFS,
       checking its StrongIsr invariant on a .cfg written here; the explorer stops at its first violation,
       symmetry off. Without DIR the rows are reported as not run.

    .venv/bin/python bench/vs_tlc.py [--quick] [--only small,large,bugs] [--kafka-specification DIR]
                                     [--tlc-heap 2g] [--profile] [--json]

Needs Java and tla2tools.jar (`pip install 'kverify[tlc]'`); without them it prints why and exits 0.
Exit 1 when the two engines count different distinct states on a bound, or a bug row is not found by
one of them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from kverify.tla import cfg as cfgmod  # noqa: E402
from kverify.tla import models, runner  # noqa: E402

SECTIONS = ("small", "large", "bugs")

# (model, parameters, behaviours): bounds big enough for the JVM start not to dominate TLC
CASES = [
    ("group", {"members": 2, "partitions": 2, "events": 3, "faults": 1, "commits": 2, "max_generation": 4}, ()),
    ("replication", {"replicas": 2, "records": 2, "epochs": 2, "crashes": 1, "lossy": 1, "alters": 1}, ()),
    ("offsets", {"replicas": 2, "records": 2, "epochs": 2, "crashes": 1, "lossy": 0, "alters": 0, "joins": 1}, ()),
]
QUICK = [
    ("group", {"members": 2, "partitions": 1, "events": 2, "faults": 1, "commits": 1, "max_generation": 3}, ()),
    ("replication", {"replicas": 2, "records": 1, "epochs": 2, "crashes": 1, "lossy": 1, "alters": 1}, ()),
    ("offsets", {"replicas": 2, "records": 1, "epochs": 2, "crashes": 1, "lossy": 0, "alters": 0, "joins": 1}, ()),
]

# the >= 1 M-state bounds: one shipped .cfg per spec (first line marks it large)
LARGE = [("group", "GroupMembership_large_1m.cfg"), ("replication", "Replication_large_1m.cfg"),
         ("offsets", "OffsetsFailover_large_1m.cfg"), ("consumer-group", "ConsumerGroup_large_1m.cfg")]
LARGE_MIN_STATES = 1_000_000
NOT_RUN_EXPLORE = {"distinct_states": 0, "complete": False, "violations": [], "wall": 0.0, "seconds": 0.0, "cpu": 0.0,
                   "rss": 0}
PROFILE_STATES = 100_000
TLC_HEAP = "2g"


@dataclass(frozen=True)
class Bug:
    """A bug one module of the public specs exposes, and the behaviour of our replication model that
    brings back the same hole."""

    name: str
    module: str              # the public spec's module (file DIR/<module>.tla)
    replicas: int            # their constants: Replicas = {r1..rN}, LogSize = MaxRecords = records,
    records: int             # MaxLeaderEpoch = epochs
    epochs: int
    behaviour: str           # ours, at replicas/records/epochs = theirs and the model's other defaults
    note: str


BUGS = [
    Bug("pre-KIP-101: a follower truncates to its HW, is elected, a committed record is lost",
        "KafkaTruncateToHighWatermark", 2, 2, 2, "truncate-to-hw",
        "their StrongIsr = our i-lcc (a committed record missing on an ISR member)"),
    Bug("KIP-101 hole (fixed by KIP-279): offset-only epoch lookup after fast leader changes, logs diverge",
        "Kip101", 2, 2, 2, "ofle-offset-only",
        "their StrongIsr = our i-lcc"),
    Bug("KIP-320 first try: fetch carries no current leader epoch, a follower of an older epoch advances the HW",
        "Kip320FirstTry", 3, 2, 2, "no-fetch-epoch-fencing",
        "their StrongIsr; ours stops at its first violation, whichever invariant it is"),
]
BUG_MODULES = ("KafkaReplication", "KafkaTruncateToHighWatermark", "Kip101", "Kip320FirstTry")


class Usage(Exception):
    """Bad command line (exit 2)."""


# --- running the two engines with their resource use ---------------------------------------------
def _wait(proc):
    """wait4 on a child: (returncode, CPU seconds user+system, peak RSS bytes)."""
    _pid, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def tlc_run(spec, cfg, *, heap=TLC_HEAP, workers="1", check_deadlock=None, timeout=None, flags=runner.BENCH_FLAGS):
    """TLC on spec/cfg through runner.run_tlc, with wait4's CPU time and peak RSS. -> (TlcResult, cpu, rss)."""
    usage = {}
    jvm = list(flags) + ([f"-Xmx{heap}"] if heap else [])
    result = runner.run_tlc(spec, cfg, workers=workers, jvm_flags=jvm, timeout=timeout,
                            check_deadlock=check_deadlock, usage=usage)
    return result, usage.get("cpu", 0.0), usage.get("rss", 0)


def explore_run(model, params, behaviours=(), *, first=False, max_states=None, out_dir):
    """`kverify explore` in a subprocess (inline engine, symmetry off, no state graph), with wait4's CPU
    time and peak RSS. -> dict (the explorer's JSON + wall, cpu, rss)."""
    cmd = [sys.executable, "-m", "kverify", "explore", model, "--no-symmetry", "--graph-limit", "0", "--quiet",
           "--json", "--out", out_dir]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    for b in behaviours:
        cmd += ["--behaviour", b]
    if first:
        cmd.append("--first")
    if max_states:
        cmd += ["--max-states", str(max_states)]
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=os.path.dirname(HERE))
        out = proc.stdout.read()
        proc.stdout.close()
        rc, cpu, rss = _wait(proc)
        wall = time.monotonic() - t0
        err.seek(0)
        tail = err.read().decode(errors="replace").strip().splitlines()[-1:]
    # exit 3 (INCONCLUSIVE) is expected here: --graph-limit 0 leaves recoverability unanalysed;
    # the timed search itself must still be complete or have found the bug (checked by the callers)
    if rc not in (0, 1, 3):
        raise SystemExit(f"kverify explore {model} failed (exit {rc}): {tail}")
    data = json.loads(out)
    data.update(wall=wall, cpu=cpu, rss=rss)
    return data


def render_cfg(model, params, behaviours, where):
    """A .cfg for the bound, checking what the spec's shipped .cfg files check."""
    template = cfgmod.parse_file(models.small_cfg_files(model)[0])
    text = cfgmod.render(model, params, behaviours, invariants=template.invariants,
                         properties=template.properties, view=template.view, comment="bench/vs_tlc.py")
    path = os.path.join(where, f"{models.SPEC_OF[model]}_bench.cfg")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def profile_explore(model, params, behaviours, top=15, max_states=None):
    import cProfile
    import io
    import pstats

    from kverify.model import registry
    from kverify.model.explore import explore

    proto = registry.build(model, params, behaviours)
    prof = cProfile.Profile()
    prof.enable()
    explore(proto, symmetry=False, graph=False, max_states=max_states)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def _rate(n, secs):
    return round(n / secs, 1) if n and secs > 0 else 0.0


def _fp_table_bytes(n):
    """Bytes of the explorer's fingerprint table holding n states (model/search/storage.py FingerprintSet:
    power-of-two slots, at least 16 and 4096, doubled past load 3/4) plus 6 bytes of BFS links a state."""
    size = 1 << 12
    while n > size * 3 // 4:
        size *= 2
    return 8 * size + 6 * n


# --- section: small bounds -----------------------------------------------------------------------
def small_rows(cases, tmp, profile):
    rows, bad = [], 0
    for model, params, behaviours in cases:
        full = dict(cfgmod.bound(model, cfgmod.parse_text(cfgmod.render(model, params, behaviours), "x.cfg")).params)
        cfg = render_cfg(model, full, behaviours, tmp)
        spec = models.spec_file(model)
        t1 = runner.run_tlc(spec, cfg, workers="1", jvm_flags=runner.BENCH_FLAGS)
        ta = runner.run_tlc(spec, cfg, workers="auto", jvm_flags=runner.BENCH_FLAGS)
        k = explore_run(model, full, behaviours, out_dir=os.path.join(tmp, "out"))
        kd, ks, kw = k["distinct_states"], k["seconds"], k["wall"]
        row = {
            "spec": models.SPEC_OF[model], "model": model, "params": params, "behaviours": list(behaviours),
            "distinct": {"tlc_1": t1.distinct, "tlc_all": ta.distinct, "kverify": kd},
            "search_rate": {"tlc_1": _rate(t1.distinct, t1.search_seconds), "tlc_all": _rate(ta.distinct, ta.search_seconds),
                            "kverify": _rate(kd, ks)},
            "end_to_end_rate": {"tlc_1": _rate(t1.distinct, t1.seconds), "tlc_all": _rate(ta.distinct, ta.seconds),
                                "kverify": _rate(kd, kw)},
            "seconds": {"tlc_1": round(t1.seconds, 2), "tlc_1_search": round(t1.search_seconds, 2),
                        "tlc_all": round(ta.seconds, 2), "tlc_all_search": round(ta.search_seconds, 2),
                        "kverify": round(kw, 2), "kverify_search": round(ks, 2)},
        }
        row["ratio_search"] = round(row["search_rate"]["kverify"] / max(row["search_rate"]["tlc_1"], 1e-9), 2)
        row["ratio_end_to_end"] = round(row["end_to_end_rate"]["kverify"] / max(row["end_to_end_rate"]["tlc_1"], 1e-9), 2)
        row["same_count"] = t1.distinct == ta.distinct == kd
        bad += not row["same_count"]
        rows.append(row)
        if profile and row["ratio_search"] < 1.0:
            row["profile"] = profile_explore(model, full, behaviours)
    return rows, bad


def print_small(rows):
    print("== small bounds (the JVM has not warmed up here; rates are distinct states/s)")
    head = (f"{'spec':<16} {'distinct':>9} {'TLC 1w':>9} {'TLC all':>9} {'kverify':>9} {'ratio':>6}   "
            f"{'TLC 1w e2e':>10} {'kverify e2e':>11} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        sr, er = r["search_rate"], r["end_to_end_rate"]
        flag = "" if r["same_count"] else f"   COUNTS DIFFER {r['distinct']}"
        print(f"{r['spec']:<16} {r['distinct']['kverify']:>9} {sr['tlc_1']:>9.0f} {sr['tlc_all']:>9.0f} {sr['kverify']:>9.0f} "
              f"{r['ratio_search']:>6.2f}   {er['tlc_1']:>10.0f} {er['kverify']:>11.0f} {r['ratio_end_to_end']:>6.2f}{flag}")
    print("ratio = kverify / TLC single-worker; e2e = whole process, JVM/interpreter start included")
    for r in rows:
        if r.get("profile"):
            print(f"\n== where `kverify explore {r['model']}` spends its time (cProfile, by own time)")
            print(r["profile"])


# --- section: >= 1 M-state bounds ----------------------------------------------------------------
def large_rows(tmp, heap, profile, only_models=None, engines=("tlc", "kverify")):
    rows, bad = [], 0
    spec_dir = os.path.dirname(models.spec_file("group"))
    for model, name in LARGE:
        if only_models and model not in only_models:
            continue
        cfg = os.path.join(spec_dir, name)
        if not os.path.isfile(cfg) or not models.is_large(cfg):
            raise SystemExit(f"bench/vs_tlc.py: {name} is missing or not marked large (first line)")
        b = cfgmod.bound(model, cfgmod.parse_file(cfg))
        spec = models.spec_file(model)
        out = os.path.join(tmp, "out-" + model)
        # memory baselines: the same programs on a tiny bound
        if "kverify" in engines:
            k_rss0 = explore_run(model, b.params, sorted(b.behaviours), max_states=1, out_dir=out)["rss"]
            k = explore_run(model, b.params, sorted(b.behaviours), out_dir=out)
        else:
            k_rss0, k = 0, NOT_RUN_EXPLORE
        if "tlc" in engines:
            t_rss0 = tlc_run(spec, models.small_cfg_files(model)[0], heap=heap)[2]
            t, t_cpu, t_rss = tlc_run(spec, cfg, heap=heap)
        else:
            t_rss0, (t, t_cpu, t_rss) = 0, (runner.TlcResult(spec, cfg, "1"), 0.0, 0)
        kd = k["distinct_states"]
        row = {
            "spec": models.SPEC_OF[model], "cfg": name, "model": model, "params": b.params,
            "behaviours": sorted(b.behaviours), "tlc_heap": heap,
            "distinct": {"tlc": t.distinct, "kverify": kd},
            "complete": {"tlc": t.complete, "kverify": bool(k["complete"])},
            "violation": {"tlc": t.violation, "kverify": [v["invariant"] for v in k["violations"]]},
            "wall": {"tlc": round(t.seconds, 2), "tlc_search": round(t.search_seconds, 2),
                     "kverify": round(k["wall"], 2), "kverify_search": round(k["seconds"], 2)},
            "cpu": {"tlc": round(t_cpu, 2), "kverify": round(k["cpu"], 2)},
            "rate_wall": {"tlc": _rate(t.distinct, t.search_seconds), "kverify": _rate(kd, k["seconds"])},
            "rate_cpu": {"tlc": _rate(t.distinct, t_cpu), "kverify": _rate(kd, k["cpu"])},
            "peak_rss": {"tlc": t_rss, "tlc_baseline": t_rss0, "kverify": k["rss"], "kverify_baseline": k_rss0},
            "bytes_per_state": {"tlc": round((t_rss - t_rss0) / max(t.distinct or 1, 1), 1),
                                "kverify": round((k["rss"] - k_rss0) / max(kd, 1), 1),
                                "tlc_layout": 8.0, "kverify_layout": round(_fp_table_bytes(kd) / max(kd, 1), 1)},
        }
        row["ratio_wall"] = round(row["rate_wall"]["kverify"] / max(row["rate_wall"]["tlc"], 1e-9), 2)
        row["ratio_cpu"] = round(row["rate_cpu"]["kverify"] / max(row["rate_cpu"]["tlc"], 1e-9), 2)
        row["engines"] = list(engines)
        row["same_count"] = t.distinct == kd if len(engines) == 2 else None
        row["big_enough"] = max(kd or 0, t.distinct or 0) >= LARGE_MIN_STATES
        bad += row["same_count"] is False
        rows.append(row)
        if profile and "kverify" in engines and (len(engines) < 2 or min(row["ratio_wall"], row["ratio_cpu"]) < 1.0):
            row["profile"] = profile_explore(model, b.params, sorted(b.behaviours), max_states=PROFILE_STATES)
    return rows, bad


def print_large(rows):
    print(f"== >= 1 M-state bounds (specs/*_large_1m.cfg): TLC -workers 1 (heap -Xmx{rows[0]['tlc_heap'] if rows else TLC_HEAP}) "
          f"vs kverify explore (inline, one process, symmetry off)")
    head = (f"{'spec':<16} {'engine':<8} {'distinct':>10} {'wall s':>8} {'CPU s':>8} {'dist/s wall':>11} {'dist/s CPU':>10} "
            f"{'B/state':>8} {'layout':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        for eng, label in (("tlc", "TLC 1w"), ("kverify", "kverify")):
            if eng not in r["engines"]:
                print(f"{r['spec']:<16} {label:<8} not run (--engine)")
                continue
            print(f"{r['spec']:<16} {label:<8} {r['distinct'][eng]:>10,} {r['wall'][eng + '_search']:>8.1f} {r['cpu'][eng]:>8.1f} "
                  f"{r['rate_wall'][eng]:>11,.0f} {r['rate_cpu'][eng]:>10,.0f} {r['bytes_per_state'][eng]:>8.1f} "
                  f"{r['bytes_per_state'][eng + '_layout']:>7.1f}")
        notes = []
        if r["same_count"] is False:
            notes.append(f"COUNTS DIFFER {r['distinct']}")
        if not r["big_enough"]:
            notes.append(f"below {LARGE_MIN_STATES:,} states")
        if r["violation"]["tlc"] or r["violation"]["kverify"]:
            notes.append(f"violations {r['violation']}")
        ratio = (f"ratio kverify/TLC: wall {r['ratio_wall']:.2f}, CPU {r['ratio_cpu']:.2f}" if len(r["engines"]) == 2
                 else "no ratio: one engine run")
        print(f"{'':<16} {ratio}" + (f"   {'; '.join(notes)}" if notes else ""))
    print("wall s = search only (TLC: from 'Computing initial states'; kverify: its search); CPU s = whole process,")
    print("user+system (JVM: JIT and GC threads included). B/state = (peak RSS - peak RSS on a tiny bound) / distinct;")
    print("layout = bytes a state in the visited set by construction (TLC: its 8-byte fingerprints, states queued on")
    print("disk; kverify: its fingerprint table + 6 bytes of BFS links, whole frontier states not counted).")
    for r in rows:
        if r.get("profile"):
            print(f"\n== where `kverify explore {r['model']}` ({r['cfg']}) spends its time "
                  f"(cProfile, first {PROFILE_STATES:,} states, by own time)")
            print(r["profile"])


# --- section: time to a historical bug -------------------------------------------------------------
def check_kafka_specification(path):
    """None when `path` holds the public spec modules the bug rows need, else why not."""
    if not os.path.isdir(path):
        return f"--kafka-specification {path}: not a directory"
    missing = [m for m in BUG_MODULES if not os.path.isfile(os.path.join(path, m + ".tla"))]
    if missing:
        return f"--kafka-specification {path}: no {', '.join(m + '.tla' for m in missing)} there"
    return None


def bug_cfg(bug, where):
    """Our .cfg for their module: the bound and the invariant."""
    reps = ", ".join(f"r{i}" for i in range(1, bug.replicas + 1))
    text = (f"\\* bench/vs_tlc.py: {bug.module} with {bug.replicas} replicas\n"
            f"CONSTANTS\n    Replicas = {{{reps}}}\n    LogSize = {bug.records}\n    MaxRecords = {bug.records}\n"
            f"    MaxLeaderEpoch = {bug.epochs}\nINIT Init\nNEXT Next\nINVARIANT StrongIsr\n")
    path = os.path.join(where, f"{bug.module}_r{bug.replicas}.cfg")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path, text.splitlines()[1:6]


def bug_rows(kdir, tmp, heap):
    from kverify.model import registry

    rows, bad = [], 0
    for bug in BUGS:
        cfg, consts = bug_cfg(bug, tmp)
        t, t_cpu, _rss = tlc_run(os.path.join(kdir, bug.module + ".tla"), cfg, heap=heap, check_deadlock=False)
        params = {"replicas": bug.replicas, "records": bug.records, "epochs": bug.epochs}
        bound = registry.parse_params("replication", params)
        bound.pop("symmetry", None)
        k = explore_run("replication", params, [bug.behaviour], first=True, out_dir=os.path.join(tmp, "out-bugs"))
        kv = k["violations"][0] if k["violations"] else None
        row = {
            "bug": bug.name, "module": bug.module + ".tla",
            "their_bound": {"Replicas": bug.replicas, "LogSize": bug.records, "MaxRecords": bug.records,
                            "MaxLeaderEpoch": bug.epochs},
            "tlc": {"violation": t.violation[1] if t.violation else None, "trace_steps": t.trace_length,
                    "distinct": t.distinct, "wall": round(t.seconds, 2), "search": round(t.search_seconds, 2),
                    "cpu": round(t_cpu, 2)},
            "behaviour": bug.behaviour, "our_bound": bound,
            "kverify": {"violation": kv["invariant"] if kv else None, "trace_steps": len(kv["trace"]) if kv else None,
                        "distinct": k["distinct_states"], "wall": round(k["wall"], 2), "search": round(k["seconds"], 3),
                        "cpu": round(k["cpu"], 2), "trace": kv["trace"] if kv else []},
            "note": bug.note,
        }
        bad += not (t.violation and kv)
        rows.append(row)
    return rows, bad


def print_bugs(rows, kdir):
    print(f"== time to the first counterexample of the same bug: public spec ({kdir}) under TLC -workers 1 vs our "
          f"replication model under kverify explore --first (symmetry off)")
    for r in rows:
        tb, kb = r["tlc"], r["kverify"]
        print(f"- {r['bug']}")
        print(f"    TLC     {r['module']} Replicas={r['their_bound']['Replicas']} LogSize=MaxRecords={r['their_bound']['LogSize']} "
              f"MaxLeaderEpoch={r['their_bound']['MaxLeaderEpoch']}: "
              + (f"{tb['violation']} violated after {tb['trace_steps']} steps, {tb['distinct']:,} distinct states, "
                 f"{tb['wall']:.2f} s wall ({tb['search']:.2f} s search), {tb['cpu']:.2f} s CPU" if tb["violation"]
                 else f"NOT FOUND ({tb['distinct']} distinct states, {tb['wall']:.2f} s)"))
        ob = " ".join(f"{k}={v}" for k, v in r["our_bound"].items())
        print(f"    kverify replication --behaviour {r['behaviour']} {ob}: "
              + (f"{kb['violation']} violated after {kb['trace_steps']} steps, {kb['distinct']:,} distinct states, "
                 f"{kb['wall']:.2f} s wall ({kb['search']:.3f} s search), {kb['cpu']:.2f} s CPU" if kb["violation"]
                 else f"NOT FOUND ({kb['distinct']} distinct states, {kb['wall']:.2f} s)"))
        print(f"    ({r['note']}; our trace: {' ; '.join(kb['trace'])})")
    print("wall = whole process (JVM / interpreter start included); search = TLC from 'Computing initial states', "
          "kverify its search")


# --- main ----------------------------------------------------------------------------------------
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small section at smaller bounds only (seconds, not an hour)")
    ap.add_argument("--only", default=None, metavar="SECTIONS",
                    help=f"comma-separated sections to run: {','.join(SECTIONS)} (default: all)")
    ap.add_argument("--kafka-specification", default=None, metavar="DIR",
                    help="local copy of github.com/hachikuji/kafka-specification (the bug rows run only with it)")
    ap.add_argument("--tlc-heap", default=TLC_HEAP, metavar="SIZE", help=f"TLC's -Xmx on the large and bug rows (default {TLC_HEAP})")
    ap.add_argument("--model", action="append", default=[], metavar="MODEL",
                    help="large section: only this model's bound (repeatable)")
    ap.add_argument("--engine", action="append", default=[], choices=("tlc", "kverify"),
                    help="large section: run only this engine (repeatable; default both; ratios need both)")
    ap.add_argument("--profile", action="store_true", help="cProfile the explorer where it is behind TLC")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.only is None:
        args.sections = ("small",) if args.quick else SECTIONS
    else:
        args.sections = tuple(s.strip() for s in args.only.split(",") if s.strip())
        unknown = [s for s in args.sections if s not in SECTIONS]
        if unknown or not args.sections:
            raise Usage(f"--only: unknown section(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(SECTIONS)}")
    if args.kafka_specification is not None:
        why = check_kafka_specification(args.kafka_specification)
        if why:
            raise Usage(why)
        args.kafka_specification = os.path.abspath(args.kafka_specification)
    known = [m for m, _ in LARGE]
    for m in args.model:
        if m not in known:
            raise Usage(f"--model {m}: no large bound for it; known: {', '.join(known)}")
    return args


def main(argv=None) -> int:
    try:
        args = parse_args(argv)
    except Usage as exc:
        print(f"bench/vs_tlc.py: {exc}", file=sys.stderr)
        return 2
    notes = []
    why = "--quick" if args.quick and args.only is None else "--only"
    if "large" not in args.sections:
        notes.append(f"large-bound rows: not run ({why})")
    run_bugs = "bugs" in args.sections and args.kafka_specification is not None
    if "bugs" in args.sections and not run_bugs:
        notes.append("time-to-bug rows: NOT RUN: give --kafka-specification DIR, a local copy of "
                     "github.com/hachikuji/kafka-specification (the public KIP-101/KIP-279/KIP-320 replication specs)")
    elif "bugs" not in args.sections:
        notes.append(f"time-to-bug rows: not run ({why})")
    needs_tlc = "small" in args.sections or "large" in args.sections or run_bugs
    missing = runner.tools_available() if needs_tlc else None
    if missing:
        print(f"bench/vs_tlc.py: skipped: {missing}")
        return 0
    out = {"machine": machine(), "notes": notes}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="kverify-vs-tlc-") as tmp:
        if "small" in args.sections:
            out["small"], b = small_rows(QUICK if args.quick else CASES, tmp, args.profile)
            bad += b
            if not args.json:
                print_small(out["small"])
                print()
        if "large" in args.sections:
            out["large"], b = large_rows(tmp, args.tlc_heap, args.profile, set(args.model),
                                         tuple(e for e in ("tlc", "kverify") if e in args.engine) or ("tlc", "kverify"))
            bad += b
            if not args.json:
                print_large(out["large"])
                print()
        if run_bugs:
            out["bugs"], b = bug_rows(args.kafka_specification, tmp, args.tlc_heap)
            bad += b
            if not args.json:
                print_bugs(out["bugs"], args.kafka_specification)
                print()
    out["machine"]["load_after"] = round(os.getloadavg()[0], 1)
    if args.json:
        json.dump(out, sys.stdout, indent=2, default=str)
        print()
    else:
        m = out["machine"]
        print(f"machine: {m['cpu']}, {m['cores']} cores, {m['mem_gb']} GB RAM, {m['java']}; "
              f"load average {m['load_before']} before, {m['load_after']} after")
        for n in notes:
            print(n)
    return 1 if bad else 0


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0.0
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    java = "java ?"
    try:
        v = subprocess.run([runner.find_java(), "-version"], capture_output=True, text=True, timeout=30)
        java = (v.stderr or v.stdout).splitlines()[0].strip()
    except Exception:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gb": mem, "java": java,
            "python": sys.version.split()[0], "load_before": round(os.getloadavg()[0], 1)}


if __name__ == "__main__":
    sys.exit(main())
