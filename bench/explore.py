"""Explorer benchmark: distinct states per second and peak memory per distinct state, per model.

Why: issue #5 asks for under 100 bytes per distinct state (a plain BFS keeping whole states costs
~250) and for a speed that can be put next to TLC's. For every registered model whose module
exists it runs three complete explorations at the model's default bounds (or --param overrides):
  1. speed:   fingerprints only (no state graph), no tracing        -> distinct states per wall
             second and per CPU second (the latter is stable on a shared, loaded machine)
  2. memory:  the same run under tracemalloc                          -> peak bytes / distinct state
  3. graph:   with the state graph and the recoverability analysis   -> its time (untraced run)
             and bytes / state (traced run)
and, with --naive, a reference BFS that keeps every canonical state in a Python set (what the
explorer avoids) for the same memory measure.

With --ab COMMIT it instead compares the speed run of this tree with the one of an older commit
(issue #19: explore rates not lower than before the rewrite): each run is a fresh subprocess, the
trees alternate (old, new, new, old, ...), and it prints per model the median distinct states per
CPU second of each tree, their ratio, the median and the range of the per-pair ratios, and whether both trees found
the same distinct states, transitions, depth, completeness and violation count, then every pair's two
rates (a model whose run fails in either tree, e.g. one the old commit does not have, gets a line
saying so). CPU time, because a shared machine's wall time says little; the pairs are interleaved
because its load drifts. Timed in both trees: the explorer's construction and run (this tree's
enumerator compilation included), not the imports nor building the model. A child of the old tree
that loads a module of this tree (the editable install's finder falls back to it for a module the
old tree lacks) is an error, not a row.

Usage: .venv/bin/python bench/explore.py [MODEL ...] [--param model:k=v ...] [--naive] [--max-seconds S]
       .venv/bin/python bench/explore.py replication offsets --ab 3dc80ac [--runs 3] [--param ...]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from kverify.model import registry
from kverify.model.explore import Explorer


def available_models(wanted):
    out = []
    for name in wanted or registry.names():
        try:
            registry.module_for(name)
        except ImportError:
            continue
        out.append(name)
    return out


def naive_bfs(protocol):
    """Reference: the same loop storing every canonical state whole (`ExactStore`), the memory the
    explorer's fingerprints save. Imported here: an --ab child of an older tree imports only that tree."""
    from kverify.model.search import ExactStore, search

    return len(search(protocol, ExactStore(protocol.canonical)).parent)


def measure(name, params, max_seconds, naive):
    proto = registry.build(name, params)
    row = {"model": name, "params": " ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"}
    cpu0 = time.process_time()
    res = Explorer(proto, graph=False, max_seconds=max_seconds).run()
    row["cpu_rate"] = res.distinct_states / max(time.process_time() - cpu0, 1e-9)
    row.update(distinct=res.distinct_states, transitions=res.transitions, depth=res.max_depth,
               seconds=res.seconds, rate=res.states_per_second, complete=res.complete,
               violations=len(res.violations))
    proto = registry.build(name, params)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    res2 = Explorer(proto, graph=False, max_seconds=max_seconds * 10).run()   # tracing is slow
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    row["bytes_per_state"] = peak / max(res2.distinct_states, 1)
    row["memory_partial"] = not res2.complete
    proto = registry.build(name, params)
    t0 = time.monotonic()
    Explorer(proto, graph=True, max_seconds=max_seconds).run()
    row["graph_seconds"] = time.monotonic() - t0
    proto = registry.build(name, params)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    res3 = Explorer(proto, graph=True, max_seconds=max_seconds * 10).run()
    row["graph_bytes_per_state"] = (tracemalloc.get_traced_memory()[1] - base) / max(res3.distinct_states, 1)
    tracemalloc.stop()
    g = res3.graph
    row["recoverable"] = ("n/a" if g is None or not g.analysed else
                          ("yes" if g.unrecoverable == 0 else f"{g.unrecoverable} stuck"))
    if naive:
        proto = registry.build(name, params)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        n = naive_bfs(proto)
        row["naive_bytes_per_state"] = (tracemalloc.get_traced_memory()[1] - base) / max(n, 1)
        tracemalloc.stop()
    return row


# --- A/B against an older commit -----------------------------------------------------------------
_SAME = ("distinct", "transitions", "depth", "complete", "violations")


def speed_run(name, params) -> dict:
    """One speed run (fingerprints, no graph) in this process, with whatever tree `kverify` is. Timed:
    the explorer's construction and run, as a fresh process pays them (a compiled enumerator's
    compilation included); not timed: imports and building the model."""
    proto = registry.build(name, params)
    cpu0 = time.process_time()
    res = Explorer(proto, graph=False).run()
    cpu = time.process_time() - cpu0
    return {"distinct": res.distinct_states, "transitions": res.transitions, "depth": res.max_depth,
            "complete": res.complete, "violations": len(res.violations), "cpu": cpu, "foreign": foreign_modules()}


def foreign_modules() -> list:
    """The loaded `kverify` modules that are not files of the tree `kverify` itself comes from. An
    --ab child of the old tree must run that tree only, but the editable install's finder (last on
    sys.meta_path) resolves a module the old tree lacks from this tree, silently."""
    import kverify

    root = Path(kverify.__file__).resolve().parents[1]
    out = []
    for name, mod in sorted(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if name.startswith("kverify") and f and root not in Path(f).resolve().parents:
            out.append(name)
    return out


def old_tree(commit: str, where: str) -> str:
    """A directory to put on PYTHONPATH so that `import kverify` is `commit`'s tree: the commit
    exported by `git archive`, its root folders linked in as kverify's subpackages (as pyproject.toml
    maps them)."""
    repo = Path(__file__).resolve().parents[1]
    src, site = Path(where, "src"), Path(where, "site", "kverify")
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    site.mkdir(parents=True)
    for item in (src / "kverify").iterdir():
        (site / item.name).symlink_to(item)
    for folder in ("impl", "model", "invariants", "stateful_tests", "specs", "reports"):
        if (src / folder).is_dir():
            (site / folder).symlink_to(src / folder)
    return str(site.parent)


def _child(name, params, site, where):
    """One speed run in a fresh process: this tree (`site` None) or the old one; (row, None) or
    (None, the child's last error line) when it fails (e.g. a model the old commit does not have)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if site is not None:
        env["PYTHONPATH"] = site
    done = subprocess.run([sys.executable, __file__, "--one", name, json.dumps(params)], env=env, cwd=where,
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["exit status %d" % done.returncode])[-1]
    row = json.loads(done.stdout.strip().splitlines()[-1])
    if row["foreign"]:
        return None, "modules of the other tree loaded: " + ", ".join(row["foreign"])
    return row, None


def ab(names, per_model, commit: str, runs: int) -> int:
    failed = 0
    with tempfile.TemporaryDirectory(prefix="kverify-ab-") as where:
        site = old_tree(commit, where)
        print(f"A/B: {commit} (old) against this tree (new), {runs} interleaved pairs per model, "
              f"distinct states per CPU second")
        head = (f"{'model':<12} {'params':<20} {'old/cpu-s':>10} {'new/cpu-s':>10} {'ratio':>6} {'pairs':>6} "
                f"{'spread':>11}  counts equal")
        print(head)
        print("-" * len(head))
        for name in names:
            params = per_model.get(name, {})
            shown = " ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"
            rates, found, error = {"old": [], "new": []}, {"old": [], "new": []}, None
            for k in range(runs):
                for tree in (("old", "new") if k % 2 == 0 else ("new", "old")):
                    row, error = _child(name, params, site if tree == "old" else None, where)
                    if error:
                        break
                    rates[tree].append(row["distinct"] / max(row["cpu"], 1e-9))
                    found[tree].append(tuple(row[x] for x in _SAME))
                if error:
                    break
            if error:
                failed += 1
                print(f"{name:<12} {shown[:20]:<20} the {tree} tree's run failed: {error}", flush=True)
                continue
            old, new = statistics.median(rates["old"]), statistics.median(rates["new"])
            per_pair = [n / o for o, n in zip(rates["old"], rates["new"])]
            same = len(set(found["old"] + found["new"])) == 1
            print(f"{name:<12} {shown[:20]:<20} {old:>10,.0f} {new:>10,.0f} {new / old:>6.3f} "
                  f"{statistics.median(per_pair):>6.3f} {min(per_pair):>5.3f}-{max(per_pair):<5.3f}  "
                  f"{'yes' if same else 'NO: ' + str(found)}", flush=True)
            pairs = ", ".join(f"{o:,.0f}/{n:,.0f}" for o, n in zip(rates["old"], rates["new"]))
            print(f"{'':<12} pairs old/new: {pairs}", flush=True)
    return 1 if failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="registry names (default: every model that exists)")
    ap.add_argument("--param", action="append", default=[], metavar="MODEL:K=V")
    ap.add_argument("--naive", action="store_true", help="also measure a BFS that keeps whole states")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="bound of each run (default 60)")
    ap.add_argument("--ab", metavar="COMMIT", help="compare the speed run with COMMIT's tree (see above)")
    ap.add_argument("--runs", type=int, default=3, help="--ab: interleaved old/new pairs per model (default 3)")
    ap.add_argument("--one", nargs=2, metavar=("MODEL", "PARAMS_JSON"), help=argparse.SUPPRESS)  # --ab's child
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(speed_run(args.one[0], json.loads(args.one[1]))))
        return 0
    per_model: dict = {}
    for item in args.param:
        model, _, kv = item.partition(":")
        k, _, v = kv.partition("=")
        if not (model and k and v):
            print(f"bench: --param expects MODEL:K=V, got {item!r}", file=sys.stderr)
            return 2
        per_model.setdefault(model, {})[k] = v
    names = available_models(args.models)
    if not names:
        print("bench: no registered model is available", file=sys.stderr)
        return 2
    if args.ab:
        return ab(names, per_model, args.ab, args.runs)
    print(f"python {sys.version.split()[0]}; explorer = fingerprints (8 B) + parent (4 B) + action index (2 B) per state")
    head = (f"{'model':<12} {'params':<28} {'distinct':>9} {'trans':>9} {'depth':>5} {'s':>7} {'distinct/s':>10} "
            f"{'/cpu-s':>8} {'B/state':>8} {'graph s':>8} {'graph B/st':>10} {'recover':>8}" + (f" {'naive B/st':>10}" if args.naive else ""))
    print(head)
    print("-" * len(head))
    for name in names:
        try:
            row = measure(name, per_model.get(name, {}), args.max_seconds, args.naive)
        except Exception as exc:   # a model under construction must not hide the others' figures
            print(f"{name:<12} failed: {type(exc).__name__}: {exc}")
            continue
        line = (f"{row['model']:<12} {row['params'][:28]:<28} {row['distinct']:>9} {row['transitions']:>9} "
                f"{row['depth']:>5} {row['seconds']:>7.2f} {row['rate']:>10,.0f} {row['cpu_rate']:>8,.0f} {row['bytes_per_state']:>8.1f} "
                f"{row['graph_seconds']:>8.2f} {row['graph_bytes_per_state']:>10.1f} {row['recoverable']:>8}")
        if args.naive:
            line += f" {row['naive_bytes_per_state']:>10.1f}"
        if not row["complete"]:
            line += "  (partial: --max-seconds)"
        elif row["memory_partial"]:
            line += "  (memory run partial: B/state overstated)"
        if row["violations"]:
            line += f"  ({row['violations']} violations at default bounds!)"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
