"""`kverify explore MODEL`: exhaustive breadth-first exploration of a registered model.

The last line is the verdict, judged as `kverify verify` judges an explore check
(kverify/suite/verdicts.py `explore_outcome`). Exit 0 (PASS): the search finished, every `sometimes`
property was reached and the state graph was analysed for recoverability; 1 (FAIL): a violation
(invariant, deadlock, recoverability, a raising step) or a vacuous run; 3 (INCONCLUSIVE): nothing
failed, but --max-states/--max-seconds cut the search or recoverability was not analysed (state graph
over --graph-limit, or --graph-limit 0); 2: bad usage (unknown model, parameter or behaviour, bad
bound). Each violation is written as a counterexample record (engine "explore") into --out.
"""
from __future__ import annotations

import argparse
import os
import sys

from kverify.cli import UsageError, emit_json

NAME = "explore"
HELP = "exhaustive BFS of a model: shortest counterexamples, deadlocks, vacuity, recoverability"
DESCRIPTION = (HELP + ". MODEL is a registry name (see `kverify explore --list`); every reachable state "
               "within the model's bounds is visited once (up to symmetry).")


def add_arguments(parser):
    parser.add_argument("model", nargs="?", metavar="MODEL", help="registry name, e.g. group")
    parser.add_argument("--list", action="store_true", help="list the registered models and their parameters")
    parser.add_argument("--param", action="append", default=[], metavar="K=V", help="model parameter (repeatable)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical behaviour (repeatable)")
    parser.add_argument("--max-states", type=int, default=None, metavar="N", help="stop after N distinct states")
    parser.add_argument("--max-seconds", type=float, default=None, metavar="S", help="stop after S seconds")
    parser.add_argument("--symmetry", action=argparse.BooleanOptionalAction, default=True,
                        help="state reductions (default on): the model's canonical form (symmetric replicas, renumbered message ids) and, where the model offers it, fault-budget subsumption")
    parser.add_argument("--graph", metavar="FILE", default=None, help="write the state graph as Graphviz DOT")
    parser.add_argument("--graph-limit", type=int, default=None, metavar="N",
                        help="build the state graph (recoverability check) only up to N states (default 100000; 0 = never)")
    parser.add_argument("--first", action="store_true", help="stop at the first violation")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="where counterexamples go (default reports/out/explore/<model>/)")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    # issue 18 (S1): the same search on several cores or on Spark (kverify/spark/explore.py run_engine)
    parser.add_argument("--engine", choices=("inline", "spark", "processes"), default="inline",
                        help="inline (default): this process; processes: --workers forked processes; "
                             "spark: level-synchronous BFS on Spark (--master, --partitions)")
    parser.add_argument("--master", default="local[*]", help="Spark master for --engine spark (default local[*])")
    parser.add_argument("--partitions", type=int, default=None, metavar="N",
                        help="fingerprint partitions for --engine spark (default: one per core Spark has)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="worker processes for --engine processes (default: the machine's cores)")


def _list_models() -> int:
    from kverify.model import registry

    for name in registry.names():
        try:
            spec = registry.spec_for(name)
        except ImportError:
            print(f"{name:<18} (not available yet)")
            continue
        params = ", ".join(f"{k}={v.default}" for k, v in spec.params.items())
        print(f"{name:<18} {registry.ENTRIES[name].description}\n{'':<18} params: {params or 'none'}")
    return 0


def run(args) -> int:
    from kverify.model import registry
    from kverify.model.explore import DEADLOCK, GRAPH_LIMIT, RECOVERABLE, Explorer, stderr_progress
    from kverify.model.protocol import action_label, action_to_json
    from kverify.reports.record import from_trace
    from kverify.reports.writer import slug, write_report
    from kverify.suite.verdicts import (EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_PASS, FAIL, INCONCLUSIVE, PASS,
                                        explore_outcome)

    if args.list:
        return _list_models()
    if not args.model:
        raise UsageError("explore: give a MODEL (see `kverify explore --list`)")
    if args.max_states is not None and args.max_states < 1:
        raise UsageError(f"--max-states must be at least 1, got {args.max_states}")
    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError(f"--max-seconds must be positive, got {args.max_seconds}")
    if args.graph_limit is not None and args.graph_limit < 0:
        raise UsageError(f"--graph-limit must be >= 0, got {args.graph_limit}")
    if args.model not in registry.ENTRIES:
        raise UsageError(f"unknown model {args.model!r}; known: {', '.join(registry.names())}")
    try:
        registry.module_for(args.model)
    except ImportError:
        raise UsageError(f"model {args.model!r} is registered but not available in this build") from None
    params = registry.parse_kv(args.param)
    try:
        protocol = registry.build(args.model, params, args.behaviour)
    except (ValueError, TypeError) as exc:
        if isinstance(exc, registry.ModelError):
            raise
        raise UsageError(f"model {args.model!r}: {exc}") from None
    graph_limit = GRAPH_LIMIT if args.graph_limit is None else args.graph_limit
    if args.graph and graph_limit == 0:
        raise UsageError("--graph needs the state graph; do not combine it with --graph-limit 0")
    out_dir = args.out or os.path.join("reports", "out", "explore", args.model)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"--out {out_dir} exists and is not a directory")

    if args.engine != "inline":
        from kverify.spark.explore import run_engine

        ex, res = None, run_engine(args, protocol, params)
    else:
        ex = Explorer(protocol, symmetry=args.symmetry, max_states=args.max_states, max_seconds=args.max_seconds,
                      graph=graph_limit > 0, graph_limit=graph_limit, keep_edge_labels=bool(args.graph),
                      stop_on_first=args.first, progress=None if args.quiet else stderr_progress)
        res = ex.run()

    graph_written = None
    if args.graph:
        try:
            ex.write_dot(args.graph)
            graph_written = args.graph
        except ValueError as exc:
            print(f"kverify: --graph not written: {exc}", file=sys.stderr)
        except OSError as exc:
            raise UsageError(f"--graph {args.graph}: {exc.strerror}") from None

    specials = {DEADLOCK: "some enabled action exists in every state that is not an allowed end state",
                RECOVERABLE: "from every reachable state a quiescent good state stays reachable once faults stop"}
    items = []
    for f in res.violations:
        cx = from_trace(protocol, f.actions, f.violation, engine="explore", init_index=f.init_index,
                        model_name=args.model)
        if f.invariant in specials:
            cx.statement = specials[f.invariant]
            cx.extra["replayer"] = "kverify.model.explore:replay_graph_property"
        cx.extra["explore"] = {"distinct_states": res.distinct_states, "symmetry": args.symmetry}
        path = write_report(cx, os.path.join(out_dir, slug(f.invariant)))
        items.append({"invariant": f.invariant, "message": f.violation.message,
                      "trace": [action_label(a) for a in f.actions],
                      "actions": [action_to_json(a) for a in f.actions], "file": path})

    verdict, reason = explore_outcome(res)
    code = {PASS: EXIT_PASS, FAIL: EXIT_FAIL}.get(verdict, EXIT_INCONCLUSIVE)
    if args.json:
        emit_json({
            "model": args.model, "params": protocol.replay_params(), "behaviours": sorted(protocol.behaviours),
            "symmetry": args.symmetry, "distinct_states": res.distinct_states, "transitions": res.transitions,
            "max_depth": res.max_depth, "seconds": round(res.seconds, 3), "complete": res.complete,
            "stopped": res.stopped or None, "covered_depth": res.covered_depth, "expanded": res.expanded,
            "unexpanded": res.unexpanded, "violations": items, "sometimes": res.sometimes,
            "vacuous": res.vacuous, "deadlocks": res.deadlocks,
            "graph": res.graph.to_json() if res.graph else None, "graph_file": graph_written,
            "verdict": verdict, "reason": reason,
        })
        return code

    beh = f" behaviours {','.join(sorted(protocol.behaviours))}" if protocol.behaviours else ""
    print(f"explore {args.model} {' '.join(f'{k}={v}' for k, v in protocol.replay_params().items())}{beh}")
    rate = f"{res.states_per_second:,.0f} distinct/s"
    print(f"  {res.distinct_states} distinct states, {res.transitions} transitions, depth {res.max_depth}, "
          f"{res.seconds:.2f}s ({rate}), symmetry {'on' if args.symmetry else 'off'}")
    if not res.complete:
        print(f"  PARTIAL: stopped by {res.stopped}; every state within depth {res.covered_depth} checked, "
              f"{res.unexpanded} found but not expanded")
    if res.graph is not None:
        g = res.graph
        if g.analysed:
            print(f"  recoverability: {g.nodes} states, {g.edges} edges ({g.fault_edges} faults), "
                  f"{g.good_states} quiescent good, {g.unrecoverable} cannot recover")
        elif g.note:
            print(f"  recoverability: {g.note}")
    reached = sum(1 for d in res.sometimes.values() if d is not None)
    print(f"  sometimes: {reached}/{len(res.sometimes)} reached"
          + (f"; VACUOUS (never reached): {', '.join(res.vacuous)}" if res.vacuous else ""))
    for it in items:
        print(f"  VIOLATION {it['invariant']}: {it['message']}")
        print(f"    shortest trace ({len(it['trace'])} steps): {' ; '.join(it['trace']) or '(initial state)'}")
        print(f"    written: {it['file']}")
    if graph_written:
        print(f"  state graph written: {graph_written}")
    print(verdict if verdict != INCONCLUSIVE else f"{verdict}: {reason}")
    return code
