"""TLC against `kverify explore`, side by side, on the same TLA+ specs and bounds.

For every case: TLC with one worker, TLC with all workers (`-workers auto`), and `kverify explore`
(a subprocess, symmetry off like TLC, no state graph) on the bound the rendered .cfg describes.
Prints distinct states per second for each (search only: TLC from "Computing initial states" to
exit, the explorer's own search time; and end to end: whole process, JVM / interpreter start and
parsing included) and the ratio kverify / TLC single-worker. The distinct-state counts must be
equal (else the row says so and the exit code is 1). `--profile` prints where the explorer spends
its time (cProfile, top functions) for every case where it is behind TLC single-worker.

    .venv/bin/python bench/vs_tlc.py [--quick] [--profile] [--json]

Needs Java and tla2tools.jar (`pip install 'kverify[tlc]'`); without them it prints why and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from kverify.tla import cfg as cfgmod  # noqa: E402
from kverify.tla import models, runner  # noqa: E402

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


def render_cfg(model, params, behaviours, where):
    """A .cfg for the bound, checking what the spec's shipped .cfg files check."""
    template = cfgmod.parse_file(models.cfg_files(model)[0])
    text = cfgmod.render(model, params, behaviours, invariants=template.invariants,
                         properties=template.properties, view=template.view, comment="bench/vs_tlc.py")
    path = os.path.join(where, f"{models.SPEC_OF[model]}_bench.cfg")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def run_explore(model, params, behaviours, out_dir):
    cmd = [sys.executable, "-m", "kverify", "explore", model, "--no-symmetry", "--graph-limit", "0", "--quiet",
           "--json", "--out", out_dir]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    for b in behaviours:
        cmd += ["--behaviour", b]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kverify explore failed: {proc.stderr.strip().splitlines()[-1:]}")
    data = json.loads(proc.stdout)
    return data["distinct_states"], data["seconds"], wall


def profile_explore(model, params, behaviours, top=15):
    import cProfile
    import io
    import pstats

    from kverify.model import registry
    from kverify.model.explore import explore

    proto = registry.build(model, params, behaviours)
    prof = cProfile.Profile()
    prof.enable()
    explore(proto, symmetry=False, graph=False)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small bounds (seconds instead of a minute)")
    ap.add_argument("--profile", action="store_true", help="cProfile the explorer where it is behind TLC")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    missing = runner.tools_available()
    if missing:
        print(f"bench/vs_tlc.py: skipped: {missing}")
        return 0
    rows, bad = [], 0
    with tempfile.TemporaryDirectory(prefix="kverify-vs-tlc-") as tmp:
        for model, params, behaviours in (QUICK if args.quick else CASES):
            full = {k: v for k, v in cfgmod.bound(model, cfgmod.parse_text(
                cfgmod.render(model, params, behaviours), "x.cfg")).params.items()}
            cfg = render_cfg(model, full, behaviours, tmp)
            spec = models.spec_file(model)
            t1 = runner.run_tlc(spec, cfg, workers="1", jvm_flags=runner.BENCH_FLAGS)
            ta = runner.run_tlc(spec, cfg, workers="auto", jvm_flags=runner.BENCH_FLAGS)
            kd, ks, kw = run_explore(model, full, behaviours, os.path.join(tmp, "out"))
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
            if args.profile and row["ratio_search"] < 1.0:
                row["profile"] = profile_explore(model, full, behaviours)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (rates are distinct states/s)")
        head = (f"{'spec':<16} {'distinct':>9} {'TLC 1w':>9} {'TLC all':>9} {'kverify':>9} {'ratio':>6}   "
                f"{'TLC 1w e2e':>10} {'kverify e2e':>11} {'ratio':>6}")
        print(head)
        print("-" * len(head))
        for r in rows:
            sr, er = r["search_rate"], r["end_to_end_rate"]
            flag = "" if r["same_count"] else f"   COUNTS DIFFER {r['distinct']}"
            print(f"{r['spec']:<16} {r['distinct']['kverify']:>9} {sr['tlc_1']:>9.0f} {sr['tlc_all']:>9.0f} {sr['kverify']:>9.0f} "
                  f"{r['ratio_search']:>6.2f}   {er['tlc_1']:>10.0f} {er['kverify']:>11.0f} {r['ratio_end_to_end']:>6.2f}{flag}")
        print("ratio = kverify / TLC single-worker (goal >= 1); e2e = whole process, JVM/interpreter start included")
        for r in rows:
            if r.get("profile"):
                print(f"\n== where `kverify explore {r['model']}` spends its time (cProfile, by own time)")
                print(r["profile"])
    return 1 if bad else 0


def _rate(n, secs):
    return round(n / secs, 1) if n and secs > 0 else 0.0


if __name__ == "__main__":
    sys.exit(main())
