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

Usage: .venv/bin/python bench/explore.py [MODEL ...] [--param model:k=v ...] [--naive] [--max-seconds S]
"""
from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

from kverify.model import registry
from kverify.model.explore import Explorer
from kverify.model.search import ExactStore, search


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
    explorer's fingerprints save."""
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="registry names (default: every model that exists)")
    ap.add_argument("--param", action="append", default=[], metavar="MODEL:K=V")
    ap.add_argument("--naive", action="store_true", help="also measure a BFS that keeps whole states")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="bound of each run (default 60)")
    args = ap.parse_args(argv)
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
