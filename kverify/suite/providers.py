"""The providers of checks for `kverify verify`, cheapest first. Each takes a profile name and
returns `Check`s; every check runs a real engine and returns a verdict (nothing is skipped
silently: a check that cannot run in this installation says so and fails)."""
from __future__ import annotations

import os
import time

from kverify.suite import Check, CheckResult, Context

# registry models explored / walked / driven by Hypothesis; abstract models first
MODELS = ("group", "replication", "offsets", "group-world", "replication-world", "offsets-world", "assignor-rounds")
WORLDS = ("group-world", "replication-world", "offsets-world", "assignor-rounds")
# parameters per profile where a model's defaults are larger than the profile's budget
PARAMS = {"quick": {"assignor-rounds": {"max_events": "2", "max_rounds": "3"}}}
ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")

BUDGET = {  # per check, seconds (explore / walks), examples (assignors), Hypothesis profile
    "quick": dict(explore=3.0, walk=1.0, walk_steps=60, examples=20, hypothesis="quick"),
    "ci": dict(explore=25.0, walk=10.0, walk_steps=150, examples=500, hypothesis="ci"),
    "deep": dict(explore=600.0, walk=120.0, walk_steps=300, examples=3000, hypothesis="deep"),
}
SCENARIOS_DIR = os.path.join("tests", "scenarios")


def _model_behaviours(ctx: Context, name: str) -> frozenset:
    from kverify.model import registry

    return ctx.behaviours & registry.supports(name)


def _build(ctx: Context, name: str, walk: bool = False):
    """The model at the profile's bounds; for random walks, a model's `WALK_PARAMS` first (bounds under
    which short random runs reach every `sometimes` property, e.g. time jumps a walker can take)."""
    from kverify.model import registry

    params = dict(getattr(registry.module_for(name), "WALK_PARAMS", {}) or {}) if walk else {}
    params.update(PARAMS.get(ctx.profile, {}).get(name, {}))
    return registry.build(name, params, _model_behaviours(ctx, name))


def _report_violation(ctx, proto, name, violation, actions, init_index, engine, seed=None) -> dict:
    from kverify.reports.record import from_trace
    from kverify.reports.writer import signature, slug, write_report

    cx = from_trace(proto, actions, violation, engine=engine, seed=seed, init_index=init_index, model_name=name)
    path = write_report(cx, os.path.join(ctx.out_dir, slug(f"{engine}-{name}-{violation.invariant}")))
    return {"invariant": violation.invariant, "signature": signature(cx), "report": path,
            "message": violation.message}


# --- assignor certification ------------------------------------------------------------------
def _assignor_check(assignor: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.certify.check import run_check
        from kverify.certify.targets import make_target
        from kverify.model import registry  # noqa: F401  (behaviours validated by verify)

        beh = frozenset(b for b in ctx.behaviours if _is_assignor_behaviour(b))
        target = make_target(assignor, behaviours=beh)
        try:
            verdicts = run_check(target, ctx.seed, BUDGET[ctx.profile]["examples"],
                                 out_dir=os.path.join(ctx.out_dir, f"assignor-{assignor}"))
        finally:
            target.close()
        failed = [v for v in verdicts if v.claimed and not v.holds]
        viol = [{"invariant": v.name, "signature": _assignor_signature(assignor, v), "report": v.path,
                 "message": v.message} for v in failed]
        held = sum(1 for v in verdicts if v.claimed and v.holds)
        unclaimed = [v.name for v in verdicts if not v.claimed]
        summary = (f"{held} claimed properties hold" + (f" ({', '.join(unclaimed)} not claimed)" if unclaimed else "")
                   if not failed else "; ".join(f"{v.name}: {v.message}" for v in failed))
        return CheckResult(f"assignor:{assignor}", "assignor", not failed, summary,
                           reports=[v.path for v in failed if v.path], violations=viol,
                           figures={"examples": {v.name: v.examples for v in verdicts}})
    return run


def _is_assignor_behaviour(name: str) -> bool:
    from kverify import behaviours as B

    return B.get(name).component == "assignor"


def _assignor_signature(assignor, verdict) -> str:
    import hashlib
    import json

    blob = json.dumps([assignor, verdict.name, verdict.counterexample], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def assignors(profile: str) -> list:
    return [Check(f"assignor:{a}", "assignor", _assignor_check(a)) for a in ASSIGNORS]


# --- conformance scenarios ---------------------------------------------------------------------
def _conformance(ctx: Context) -> CheckResult:
    import glob

    from kverify.conformance.format import load_file
    from kverify.conformance.runner import run_all

    files = sorted(glob.glob(os.path.join(SCENARIOS_DIR, "*.jsonl")))
    if not files:
        return CheckResult("conformance:coordinator", "conformance", False,
                           f"no scenario files under {SCENARIOS_DIR} (run from a kverify checkout)")
    scenarios = [sc for f in files for sc in load_file(f)]
    results = run_all(scenarios, behaviours=frozenset(b for b in ctx.behaviours if _component(b) == "coordinator")).outcomes
    failed = [r for r in results if not r.passed]
    summary = (f"{len(results)} coordinator scenarios pass" if not failed
               else f"{len(failed)}/{len(results)} scenarios fail, first: {failed[0].id}")
    return CheckResult("conformance:coordinator", "conformance", not failed, summary,
                       violations=[{"invariant": "conformance", "signature": r.id, "report": "",
                                    "message": f"{r.id} fails"} for r in failed])


def _component(name):
    from kverify import behaviours as B

    return B.get(name).component


def conformance(profile: str) -> list:
    return [Check("conformance:coordinator", "conformance", _conformance)]


# --- Z3 ------------------------------------------------------------------------------------------
def _prove_in_order(names: list, behaviours: frozenset) -> list:
    from kverify.model.proofs import by_name

    return [by_name(name).check(behaviours) for name in names]


def _z3(ctx: Context) -> CheckResult:
    """Every Z3 obligation, split over two worker processes (independent, CPU-bound). The split is
    fixed, each worker proving its share in order: a Z3 model (hence a counterexample trace and its
    baseline signature) can depend on what the process solved before, so no work stealing."""
    from concurrent.futures import ProcessPoolExecutor

    from kverify.model.proofs import all_obligations, to_record
    from kverify.reports.writer import signature, slug, write_report

    obligations = all_obligations()
    names = [ob.name for ob in obligations]
    shares = [names[0::2], names[1::2]]
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = [pool.submit(_prove_in_order, share, ctx.behaviours) for share in shares]
        by_name = {}
        for share, fut in zip(shares, done):
            by_name.update(zip(share, fut.result()))
    results = [by_name[n] for n in names]
    bad, reports, viol, per, uncovered = [], [], [], {}, []
    for ob, res in zip(obligations, results):
        per[ob.name] = res.seconds
        expected = ob.expected(ctx.behaviours)
        if res.status == "falsified":
            cx = to_record(ob, res, ctx.behaviours)
            path = write_report(cx, os.path.join(ctx.out_dir, slug("z3-" + ob.name)))
            reports.append(path)
            viol.append({"invariant": ob.name, "signature": signature(cx), "report": path, "message": res.detail})
        if res.status == "unknown" and expected == "unknown":
            uncovered.append(ob.name)     # a switched-on behaviour its encoding does not cover: it claims nothing
        elif res.status != "proved":
            bad.append(f"{ob.name} {res.status} (expected {expected})")
    n = len(per)
    return CheckResult("z3:obligations", "z3", not bad,
                       f"{n - len(bad) - len(uncovered)}/{n} obligations proved"
                       + (f"; not covered by the encoding: {', '.join(uncovered)}" if uncovered else "")
                       + (f"; {'; '.join(bad)}" if bad else ""), reports=reports, violations=viol,
                       figures={"seconds_per_obligation": per})


def z3(profile: str) -> list:
    return [Check("z3:obligations", "z3", _z3)]


# --- exhaustive exploration -----------------------------------------------------------------------
def _explore_check(name: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.model import registry
        from kverify.model.explore import explore

        proto = _build(ctx, name)
        budget = BUDGET[ctx.profile]["explore"]
        if ctx.remaining() is not None:
            budget = min(budget, ctx.remaining())
        res = explore(proto, max_seconds=budget, graph=True)
        viol = [_report_violation(ctx, proto, name, f.violation, f.actions, f.init_index, "explore")
                for f in res.violations]
        problems = [f"{v['invariant']}: {v['message']}" for v in viol]
        if res.vacuous:
            problems.append(f"vacuous: never reached {', '.join(res.vacuous)}")
        if res.graph is not None and res.graph.analysed and res.graph.unrecoverable:
            problems.append(f"{res.graph.unrecoverable} states cannot reach a good quiescent state without faults")
        scope = "complete" if res.complete else f"partial ({res.stopped})"
        summary = (f"{res.distinct_states} distinct states, depth {res.max_depth}, {scope}, no violation"
                   if not problems else "; ".join(problems))
        per_depth = getattr(res, "states_per_depth", None)
        figures = {"states_per_depth": per_depth} if per_depth else {}
        figures["distinct_states"] = {"states": res.distinct_states}
        return CheckResult(f"explore:{name}", "explore", not problems, summary,
                           reports=[v["report"] for v in viol], violations=viol, figures=figures)
    return run


def explorer(profile: str) -> list:
    return [_or_broken(f"explore:{m}", "explore", m, _explore_check) for m in MODELS]


# --- Hypothesis state machines --------------------------------------------------------------------
def _machine_check(name: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.model import registry
        from kverify.stateful_tests.machine import run_machine

        proto = _build(ctx, name)
        found = run_machine(name, protocol=proto, seed=ctx.seed, profile=BUDGET[ctx.profile]["hypothesis"])
        if found is None:
            return CheckResult(f"hypothesis:{name}", "stateful", True,
                               f"no violation ({BUDGET[ctx.profile]['hypothesis']} profile, seed {ctx.seed})")
        v = _report_violation(ctx, proto, name, found.violation, found.trace, found.init_index, "hypothesis", ctx.seed)
        return CheckResult(f"hypothesis:{name}", "stateful", False, f"{v['invariant']}: {v['message']}",
                           reports=[v["report"]], violations=[v])
    return run


def stateful(profile: str) -> list:
    return [_or_broken(f"hypothesis:{w}", "stateful", w, _machine_check) for w in WORLDS]


# --- random walks ---------------------------------------------------------------------------------
def _walk_check(name: str):
    def run(ctx: Context) -> CheckResult:
        from collections import Counter

        from kverify.model import registry
        from kverify.model.shrink import shrink_trace
        from kverify.model.walk import initial_index, walk

        proto = _build(ctx, name, walk=True)
        b = BUDGET[ctx.profile]
        t0, seed, steps, runs = time.monotonic(), ctx.seed, 0, 0
        coverage: Counter = Counter()
        reached: set = set()
        wanted = {s.name for s in proto.sometimes()}
        # the budget, stretched (up to 5x) while a `sometimes` property is still unreached (a loaded machine)
        while (time.monotonic() - t0 < b["walk"]
               or (not wanted <= reached and time.monotonic() - t0 < 5 * b["walk"])):
            res = walk(proto, seed, b["walk_steps"], record_trace=True)
            runs += 1
            steps += res.steps
            coverage.update(res.actions)
            reached |= res.reached
            if res.violation is not None:
                init = initial_index(proto, seed)
                sh = shrink_trace(proto, res.trace, res.violation.invariant, init, budget=2000)
                v = _report_violation(ctx, proto, name, sh.violation, sh.actions, init, "walk", seed)
                return CheckResult(f"walk:{name}", "random", False,
                                   f"{v['invariant']} after {runs} runs (seed {seed}): {v['message']}",
                                   reports=[v["report"]], violations=[v], figures={"action_coverage": dict(coverage)})
            seed += 1
        secs = time.monotonic() - t0
        missed = sorted(wanted - reached)
        summary = f"{runs} runs, {steps} steps, {steps / secs:,.0f} steps/s, no violation"
        # no vacuous pass: a run that never reached a `sometimes` property did not exercise what it claims
        return CheckResult(f"walk:{name}", "random", not missed,
                           summary + (f"; VACUOUS: never reached {', '.join(missed)}" if missed else ""),
                           figures={"action_coverage": dict(sorted(coverage.items())),
                                    "steps_per_second": {name: round(steps / secs)}})
    return run


def random_runs(profile: str) -> list:
    return [_or_broken(f"walk:{m}", "random", m, _walk_check) for m in MODELS]


# --- Spark ----------------------------------------------------------------------------------------
SPARK_RUNS = {"ci": 20_000, "deep": 1_000_000}


def _spark(ctx: Context) -> CheckResult:
    """Seeded walks of the group model fanned out on Spark (local[*]): exactly-once accounting, no
    violation, and the throughput over the run (plotted in index.html)."""
    from kverify.spark.runner import SimConfig, simulate
    from kverify.spark.world import resolve

    name, runs = "group", SPARK_RUNS[ctx.profile]
    world = resolve(name, {}, sorted(_model_behaviours(ctx, name)), steps=100)
    out = os.path.join(ctx.out_dir, "spark-group")
    try:
        res = simulate(SimConfig(world=world, runs=runs, out=out, seed=ctx.seed, engine="spark", progress=False))
    except Exception as exc:   # Java or Spark missing/broken: a failing check that says why
        return CheckResult("spark:group", "random", False, f"Spark run could not start: {exc}")
    sm = res.summary
    series, prev = {}, (0.0, 0)
    for t, steps in res.timeline:
        if t > prev[0]:
            series[f"{t:.1f}s"] = round((steps - prev[1]) / (t - prev[0]))
            prev = (t, steps)
    viol = [{"invariant": r["invariant"], "signature": f"spark-{r['invariant']}-{r.get('seed')}",
             "report": r.get("path", ""), "message": f"{r.get('runs')} runs"} for r in sm["reports"] if "invariant" in r]
    ok = sm["runs_completed"] == sm["runs_requested"] and not sm["violations"]
    summary = (f"{sm['runs_completed']}/{sm['runs_requested']} runs, {sm['steps']} steps, "
               f"{sm['steps_per_second']:,.0f} steps/s, {sm['distinct_abstract_states']} abstract states"
               + (", no violation" if not sm["violations"] else f", violations {sm['violations']}"))
    return CheckResult("spark:group", "random", ok, summary, reports=[v["report"] for v in viol if v["report"]],
                       violations=viol, figures={"steps_per_second": series, "action_coverage": sm.get("actions", {})})


def spark(profile: str) -> list:
    return [Check("spark:group", "random", _spark)] if profile in SPARK_RUNS else []


def _or_broken(check_name: str, category: str, model: str, make) -> Check:
    """The check for `model`, or a failing check saying why the model cannot be loaded."""
    import importlib

    from kverify.model import registry

    try:
        importlib.import_module(registry.ENTRIES[model].module)
    except ImportError as exc:
        msg = f"model {model!r} is registered but its module does not import: {exc}"
        return Check(check_name, category, lambda ctx: CheckResult(check_name, category, False, msg))
    return Check(check_name, category, make(model))


ALL = [assignors, conformance, z3, explorer, stateful, random_runs, spark]
