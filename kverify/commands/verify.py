"""`kverify verify`: the main job. Runs every check of a profile and writes the run's reports.

Profiles (kverify/suite/profiles.py): `quick` (about a minute: `make verify`; may be INCONCLUSIVE),
`ci` (about five minutes on 2 cores; every check complete on a correct build; strict), `deep` (as long
as `--max-seconds` allows). Every check ends PASS, INCONCLUSIVE or FAIL (kverify/suite/verdicts.py);
the exit code says which of them the run as a whole is (see `--help`).
"""
import json
import os
import random
import sys
import time

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.suite import PROFILES, CheckResult, Context, apply_baseline, plan, profiles, run_isolated
from kverify.suite.verdicts import (EXIT_CODES_HELP, FAIL, INCONCLUSIVE, PASS, counts, exit_code,
                                    gate_verdict)

NAME = "verify"
HELP = "run the whole suite (assignors, explorer, Z3, stateful machines, random runs) and write reports"
DESCRIPTION = (HELP + ". Every check ends PASS (complete, nothing broke), INCONCLUSIVE (a budget, bound or "
               "--max-seconds cut it short; its line says what was covered and what cut it) or FAIL. "
               "Budgets are counts (states, runs, steps, examples); quick and ci use a fixed seed.")
DEFAULT_BASELINE = "kverify-baseline.json"


def add_arguments(parser):
    import argparse

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXIT_CODES_HELP
    parser.add_argument("--profile", choices=PROFILES, default="quick", help="budget (default: quick)")
    parser.add_argument("--out", help="report folder (default reports/out/<timestamp>/)")
    parser.add_argument("--seed", type=int, help=f"seed for every randomized engine (default: {profiles.DEFAULT_SEED} "
                        "for quick and ci, random for deep; always printed)")
    parser.add_argument("--max-seconds", type=float, help="overall time cap: a check it cuts short is INCONCLUSIVE")
    parser.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                        help="INCONCLUSIVE fails the gate (exit 1); default: on for ci, off otherwise")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical behaviour in every check (repeatable)")
    parser.add_argument("--only", action="append", default=[], metavar="PREFIX",
                        help="run only checks whose name starts with PREFIX (repeatable; end it with $ for "
                             "exactly that name)")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop at the first check that fails the gate (FAIL, or INCONCLUSIVE under --strict); "
                             "the checks not run are INCONCLUSIVE")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="checks run at once in worker processes (default: the usable cores); verdicts, "
                             "counts and the order of the printed lines do not depend on it")
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


def verdict_line(res: CheckResult) -> str:
    """The line a check prints: its verdict, name and one-line summary (no timing: equal runs print
    equal lines)."""
    return f"  {res.verdict:<12} {res.name:<32} {res.summary}"


def run(args) -> int:
    started = time.monotonic()
    behaviours = B.validate(args.behaviour)
    baseline = load_baseline(args.baseline) if args.baseline else None
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError(f"--max-seconds must be positive, not {args.max_seconds}")
    seed = args.seed if args.seed is not None else profiles.default_seed(args.profile)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    strict = profiles.budget(args.profile).strict if args.strict is None else args.strict
    out = args.out or os.path.join("reports", "out", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    deadline = started + args.max_seconds if args.max_seconds else None
    checks = [c for c in plan(args.profile) if not args.only or any(
        c.name == p[:-1] if p.endswith("$") else c.name.startswith(p) for p in args.only)]
    if args.fail_fast and baseline is not None:
        raise UsageError("--fail-fast stops at the first FAIL before the baseline can excuse it: drop one of them")
    if not checks:
        raise UsageError("no check matches --only " + " ".join(args.only) if args.only else "this build has no checks")
    log = sys.stderr if args.json else sys.stdout
    print(f"kverify verify --profile {args.profile} --seed {seed}" + (" --strict" if strict else " --no-strict")
          + "".join(f" --behaviour {b}" for b in sorted(behaviours)) + f"  ({len(checks)} checks, reports in {out})",
          file=log, flush=True)
    ctx = Context(profile=args.profile, out_dir=out, seed=seed, behaviours=behaviours, deadline=deadline,
                  progress=not args.json)
    results: list[CheckResult] = []
    stopped = "interrupted"        # why checks were not run, if some were not
    jobs = min(args.jobs or usable_cores(), len(checks))
    try:
        for res in run_checks(checks, ctx, jobs):
            results.append(res)
            print(verdict_line(res), file=log, flush=True)
            if args.fail_fast and (res.verdict == FAIL or (strict and res.verdict == INCONCLUSIVE)):
                stopped = "--fail-fast"
                break
    finally:
        # written in every case, an interrupted run included (the checks not run are INCONCLUSIVE)
        done = {r.name for r in results}
        results += [CheckResult(c.name, c.category, INCONCLUSIVE, f"not run: {stopped}", cut=stopped)
                    for c in checks if c.name not in done]
        if baseline is not None:
            apply_baseline(results, baseline)
        summary = _summary(args, seed, strict, behaviours, out, results, time.monotonic() - started)
        _write_outputs(out, results, summary, strict)
    if args.json:
        emit_json(summary)
    else:
        print(summary_line(summary, out))
        for v in summary["new_violations"]:
            print(f"  new violation: {v['invariant']} in {v['check']} ({v.get('report', '')})")
    return summary["exit_code"]


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                    # not on Linux
        return max(1, os.cpu_count() or 1)


def run_one(check, ctx: Context) -> CheckResult:
    t0 = time.monotonic()
    if ctx.out_of_time():
        res = CheckResult(check.name, check.category, INCONCLUSIVE, "not run: --max-seconds spent",
                          cut="--max-seconds")
    else:
        res = run_isolated(check, ctx)
    res.seconds = round(time.monotonic() - t0, 3)
    return res


_PLANNED: tuple = ()           # (checks, ctx) of the run, inherited by forked workers


def _run_planned(i: int) -> CheckResult:
    checks, ctx = _PLANNED
    return run_one(checks[i], ctx)


def run_checks(checks, ctx: Context, jobs: int):
    """Yield each check's result in plan order. With jobs > 1 the checks run in forked worker processes
    (each check is seeded by the run's seed alone, so where it runs does not change its verdict); a
    result is yielded only when every earlier one has been, so the printed lines, `--fail-fast` and an
    interrupt see the same order as a sequential run, and whatever the caller stops before is cancelled."""
    if jobs <= 1 or len(checks) <= 1 or not hasattr(os, "fork"):
        for check in checks:
            yield run_one(check, ctx)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _PLANNED
    _PLANNED = (checks, Context(**{**ctx.__dict__, "progress": False}))   # workers print nothing of their own
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        futures = [pool.submit(_run_planned, i) for i in range(len(checks))]
        for fut in futures:
            yield fut.result()
    finally:
        _PLANNED = ()
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            if proc.is_alive():            # a check still running after the caller stopped
                proc.terminate()


def _summary(args, seed, strict, behaviours, out, results, seconds) -> dict:
    verdict = gate_verdict(results, strict)
    return {"profile": args.profile, "seed": seed, "strict": strict, "behaviours": sorted(behaviours),
            "verdict": verdict, "passed": verdict == PASS, "exit_code": exit_code(verdict),
            "counts": counts(results), "seconds": round(seconds, 3), "out": out, "baseline": args.baseline,
            "checks": [r.to_json() for r in results],
            "new_violations": [dict(v, check=r.name) for r in results if r.verdict == FAIL and not r.known
                               for v in r.violations]}


def summary_line(summary: dict, out: str) -> str:
    """The run's one line: gate verdict and how many checks passed, failed, were inconclusive."""
    c = summary["counts"]
    head = {PASS: "OK", INCONCLUSIVE: "INCONCLUSIVE", FAIL: "FAILED"}[summary["verdict"]]
    strict_note = " (--strict: inconclusive fails)" if summary["strict"] and c["inconclusive"] else ""
    return (f"{head}: {c['passed']} passed, {c['failed']} failed, {c['inconclusive']} inconclusive{strict_note}"
            + (f", {c['known']} known (baseline)" if c["known"] else "")
            + f" in {summary['seconds']:.1f}s (exit {summary['exit_code']}); see {os.path.join(out, 'index.html')}")


def _write_outputs(out, results, summary, strict):
    from kverify.reports.index import to_index
    from kverify.reports.junit import to_junit

    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, default=str)
    with open(os.path.join(out, "junit.xml"), "w", encoding="utf-8") as fh:
        fh.write(to_junit(results, strict=strict))
    c = summary["counts"]
    meta = {"profile": summary["profile"], "seed": summary["seed"],
            "behaviours": ", ".join(summary["behaviours"]) or "none", "strict": "yes" if strict else "no",
            "verdict": summary["verdict"],
            "checks": f"{c['passed']} pass, {c['inconclusive']} inconclusive, {c['failed']} fail"
                      + (f", {c['known']} known" if c["known"] else "")}
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as fh:
        fh.write(to_index(results, title="kverify verification run", meta=meta, out_dir=out))
