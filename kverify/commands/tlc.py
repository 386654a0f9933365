"""`kverify tlc SPEC --config CFG`: run TLC on one of the TLA+ specs (or any .tla).

SPEC is a path or a module name in specs/ (GroupMembership, Replication, OffsetsFailover,
ConsumerGroup); CFG a path or a .cfg name in specs/. `--compare` also explores the registered model
the spec states at the same bound (parameters and behaviours read from the .cfg) and says whether the
two agree on distinct states, verdict and counterexample length, and on the WHOLE state sets (a second
run with invariants off on both sides; a difference names the first differing state with a shortest
trace to it). `--compare` without `--config` does it for every .cfg shipped with the spec. Needs Java 11+ and tla2tools.jar
(`pip install 'kverify[tlc]'`); when either is missing: one line, exit 2.
Exit 0: no violation (and, with --compare, agreement); 1: a violation or a disagreement; 2: bad usage.
"""
from __future__ import annotations

import os

from kverify.cli import UsageError, emit_json

NAME = "tlc"
HELP = "model-check a TLA+ spec with TLC (optionally compare with the explorer)"


def add_arguments(parser):
    parser.add_argument("spec", metavar="SPEC", help="a .tla path or a module of specs/ (e.g. GroupMembership)")
    parser.add_argument("--config", metavar="CFG",
                        help="a .cfg path or a .cfg name in specs/ (with --compare and no --config: every shipped .cfg)")
    parser.add_argument("--workers", default="1", metavar="N", help="TLC worker threads, or 'auto' (default 1)")
    parser.add_argument("--compare", action="store_true",
                        help="also run `explore` on the model the spec states, at the .cfg's bound, and compare")
    parser.add_argument("--timeout", type=float, default=None, metavar="S", help="give up on TLC after S seconds")


def _cfg_path(raw: str) -> str:
    from kverify.tla.spec import SPECS_DIR

    for cand in (raw, raw + ".cfg", os.path.join(SPECS_DIR, raw), os.path.join(SPECS_DIR, raw + ".cfg")):
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    raise UsageError(f"no TLC config {raw!r} (looked in . and {SPECS_DIR})")


def run(args) -> int:
    from kverify.tla import runner
    from kverify.tla.cfg import CfgError
    from kverify.tla.spec import SpecError, spec_path

    workers = str(args.workers)
    if workers != "auto" and not (workers.isdigit() and int(workers) >= 1):
        raise UsageError(f"--workers expects a positive number or 'auto', got {workers!r}")
    try:
        spec = spec_path(args.spec)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    if args.config is None:
        if not args.compare:
            raise UsageError("kverify tlc: give --config CFG (or --compare to check every shipped .cfg)")
        return _compare_all(spec, workers, args)
    cfg = _cfg_path(args.config)
    try:
        if args.compare:
            from kverify.tla import crosscheck, models

            module = os.path.splitext(os.path.basename(spec))[0]
            model = models.model_for_spec(module)
            cmp = crosscheck.compare(model, cfg, spec, workers=workers, timeout=args.timeout)
            res = cmp.tlc
        else:
            cmp = None
            res = runner.run_tlc(spec, cfg, workers=workers, timeout=args.timeout)
    except (runner.ToolMissing, runner.TlcError, SpecError, CfgError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        emit_json(cmp.to_json() if cmp else res.to_json())
    else:
        print(_summary(res))
        if res.violation:
            print("  trace: " + " -> ".join(res.trace))
        if cmp:
            ex = cmp.explored
            found = ", ".join(f"{n} after {k} steps" for n, k in cmp.python_violations()) or "no violation"
            print(f"explore {cmp.model} {_fmt_bound(cmp)}: {ex.distinct_states} distinct states, {found} "
                  f"({cmp.explore_seconds:.2f} s)")
            print("agree" if cmp.ok else "DISAGREE: " + "; ".join(cmp.differences))
    if cmp is not None and not cmp.ok:
        return 1
    return 1 if res.violation else 0


def _summary(res) -> str:
    from kverify.tla.crosscheck import tlc_violation_name

    what = (f"{tlc_violation_name(res)} violated after {res.trace_length} steps" if res.violation
            else "no violation" if res.complete else "incomplete")
    return (f"TLC {os.path.basename(res.spec)} with {os.path.basename(res.cfg)} ({res.workers} worker(s)): "
            f"{res.distinct} distinct states, depth {res.depth}, {what} ({res.seconds:.2f} s)")


def _fmt_bound(cmp) -> str:
    params = " ".join(f"{k}={v}" for k, v in cmp.params.items())
    behs = " ".join(f"+{b}" for b in sorted(cmp.behaviours))
    return (params + (" " + behs if behs else "")).strip()


def _compare_all(spec: str, workers: str, args) -> int:
    """Every specs/<Spec>_*.cfg compared with its model: one line per .cfg, exit 1 if any disagrees."""
    from kverify.tla import crosscheck, models, runner
    from kverify.tla.cfg import CfgError
    from kverify.tla.spec import SpecError

    module = os.path.splitext(os.path.basename(spec))[0]
    try:
        model = models.model_for_spec(module)
        results = crosscheck.compare_all(model, spec, workers=workers, timeout=args.timeout)
    except (runner.ToolMissing, runner.TlcError, SpecError, CfgError) as exc:
        raise UsageError(str(exc)) from None
    if not results:
        raise UsageError(f"no .cfg shipped for {module} in specs/")
    if args.json:
        emit_json([c.to_json() for c in results])
    else:
        for c in results:
            name = os.path.basename(c.cfg)
            line = "agree" if c.ok else "DISAGREE: " + "; ".join(c.differences)
            print(f"{name}: {c.explored.distinct_states} distinct states: {line}")
    return 0 if all(c.ok for c in results) else 1
