"""`kverify verify`: the main job. Runs every check of a profile and writes the run's reports.

Profiles: `quick` (under a minute: `make verify`), `ci` (under five minutes on 2 cores), `deep`
(as long as `--max-seconds` allows). Exit 0 when everything holds (or every failure is a known
violation of `--baseline`), 1 when anything failed, 2 on bad usage.
"""
import json
import os
import random
import sys
import time

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.suite import PROFILES, CheckResult, Context, apply_baseline, gate_passes, plan

NAME = "verify"
HELP = "run the whole suite (assignors, explorer, Z3, stateful machines, random runs) and write reports"
DEFAULT_BASELINE = "kverify-baseline.json"


def add_arguments(parser):
    parser.add_argument("--profile", choices=PROFILES, default="quick", help="budget (default: quick)")
    parser.add_argument("--out", help="report folder (default reports/out/<timestamp>/)")
    parser.add_argument("--seed", type=int, help="seed for every randomized engine (default: random, printed)")
    parser.add_argument("--max-seconds", type=float, help="overall time budget (deep profile)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical behaviour in every check (repeatable)")
    parser.add_argument("--only", action="append", default=[], metavar="PREFIX",
                        help="run only checks whose name starts with PREFIX (repeatable)")
    parser.add_argument("--baseline", nargs="?", const=DEFAULT_BASELINE, metavar="FILE",
                        help=f"known violations that do not fail the gate (default file: {DEFAULT_BASELINE})")


def load_baseline(path: str) -> dict:
    if not os.path.exists(path):
        if path == DEFAULT_BASELINE:
            return {"violations": []}
        raise UsageError(f"baseline file {path} does not exist (create it with `kverify baseline update`)")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise UsageError(f"baseline {path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("violations"), list) or not all(
            isinstance(v, dict) and "invariant" in v and "signature" in v for v in data["violations"]):
        raise UsageError(f"baseline {path}: expected {{\"violations\": [{{\"invariant\", \"signature\"}}, ...]}}")
    return data


def run(args) -> int:
    behaviours = B.validate(args.behaviour)
    baseline = load_baseline(args.baseline) if args.baseline else None
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    out = args.out or os.path.join("reports", "out", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    deadline = time.monotonic() + args.max_seconds if args.max_seconds else None
    checks = [c for c in plan(args.profile) if not args.only or any(c.name.startswith(p) for p in args.only)]
    if not checks:
        raise UsageError("no check matches --only " + " ".join(args.only) if args.only else "this build has no checks")
    log = sys.stderr if args.json else sys.stdout
    print(f"kverify verify --profile {args.profile} --seed {seed}"
          + "".join(f" --behaviour {b}" for b in sorted(behaviours)) + f"  ({len(checks)} checks, reports in {out})",
          file=log, flush=True)
    ctx = Context(profile=args.profile, out_dir=out, seed=seed, behaviours=behaviours, deadline=deadline,
                  progress=not args.json)
    results: list[CheckResult] = []
    started = time.monotonic()
    for check in checks:
        t0 = time.monotonic()
        if ctx.deadline is not None and ctx.remaining() == 0:
            res = CheckResult(check.name, check.category, False, "not run: --max-seconds budget exhausted")
        else:
            res = check.run(ctx)
        res.seconds = round(time.monotonic() - t0, 3)
        results.append(res)
        mark = "PASS" if res.passed else "FAIL"
        print(f"  {mark}  {check.name:<40} {res.seconds:7.1f}s  {res.summary}", file=log, flush=True)
    if baseline is not None:
        apply_baseline(results, baseline)
    ok = gate_passes(results)
    summary = {"profile": args.profile, "seed": seed, "behaviours": sorted(behaviours), "passed": ok,
               "seconds": round(time.monotonic() - started, 3), "out": out,
               "baseline": args.baseline, "checks": [r.to_json() for r in results],
               "new_violations": [dict(v, check=r.name) for r in results if not r.passed and not r.known
                                  for v in r.violations]}
    _write_outputs(out, results, summary)
    if args.json:
        emit_json(summary)
    else:
        failed = [r for r in results if not r.passed and not r.known]
        known = [r for r in results if r.known]
        print(f"{'OK' if ok else 'FAILED'}: {len(results) - len(failed) - len(known)} passed, {len(failed)} failed"
              + (f", {len(known)} known (baseline)" if known else "") + f" in {summary['seconds']:.1f}s; "
              f"see {os.path.join(out, 'index.html')}")
        for v in summary["new_violations"]:
            print(f"  new violation: {v['invariant']} in {v['check']} ({v.get('report', '')})")
    return 0 if ok else 1


def _write_outputs(out, results, summary):
    from kverify.reports.index import to_index
    from kverify.reports.junit import to_junit

    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, default=str)
    with open(os.path.join(out, "junit.xml"), "w", encoding="utf-8") as fh:
        fh.write(to_junit(results))
    meta = {"profile": summary["profile"], "seed": summary["seed"],
            "behaviours": ", ".join(summary["behaviours"]) or "none",
            "verdict": "PASS" if summary["passed"] else "FAIL"}
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as fh:
        fh.write(to_index(results, title="kverify verification run", meta=meta, out_dir=out))
