"""The `liveness:walk/<model>` checks of `kverify verify`: seeded walks judging the liveness properties
as bounded responses (model/response.py).

Why it exists: the explorer's `liveness:*` checks (kverify/suite/providers.py) decide the properties on
whole state graphs, which only small bounds allow; walks reach the bounds random runs use (three brokers,
two partitions, several crashes, a reassignment). Each check walks seeds ctx.seed, ctx.seed+1, ... of a
model at its walk bounds plus the few parameters below that let its properties' premises happen in a
random run, counted by the profile (kverify/suite/profiles.py `LIVENESS_WALKS`: walks, steps per walk,
response bound). At every step where an obligation starts, the walk follows a fair tail (no fault, not
the failed node's return) that must discharge it within the bound; invariants are checked all along.

PASS: every walk ran, every property started obligations in some walk, each was discharged in time,
no invariant broke, no deadlock. FAIL: the first violation, with its record (a liveness violation: the
walk up to the start of the tail, then the tail up to the step where the bound ran out, replayed by
`kverify replay`; an invariant or a crash: shrunk like `walk:*`). INCONCLUSIVE: a property never started
an obligation (vacuous), or --max-seconds stopped the walks.
"""
from __future__ import annotations

import os

from kverify.suite import Check, CheckResult, Context, profiles
from kverify.suite.verdicts import FAIL, INCONCLUSIVE, PASS

# check -> (model, parameters over the model's walk bounds). replication-world: a reassignment, so both of
# its properties are judged. offsets-world: two brokers and min.insync.replicas 1, so a commit is often
# acknowledged before the offsets leader crashes (with three brokers the walk spends its crashes first and
# the premise almost never holds), and a leader-epoch cap that leaves room for the second crash.
# group-world: time passes only by `settle` (with free time jumps, a rebalance timeout also removes a
# crashed member, a second route to Stable that hides a coordinator whose session timer never fires).
WALK_CHECKS = {
    "liveness:walk/replication-world": ("replication-world", {"reassignments": 1}),
    "liveness:walk/offsets-world": ("offsets-world", {"brokers": 2, "min_isr": 1, "crashes": 2, "epochs": 6}),
    "liveness:walk/group-world": ("group-world", {"ticks": 0}),
}
CATEGORY = "liveness"


def build(ctx: Context, check: str):
    """The model of `check` as its walks run it: walk bounds, the profile's parameters, the check's own."""
    from kverify.model import registry
    from kverify.suite import providers

    model, extra = WALK_CHECKS[check]
    params = dict(registry.spec_for(model).walk_params)
    params.update(profiles.params(ctx.profile, model))
    params.update(extra)
    return registry.build(model, params, providers._model_behaviours(ctx, model))


def response_bound(profile: str) -> int:
    from kverify.model.response import DEFAULT_BOUND

    bound = profiles.LIVENESS_WALKS[profile].bound
    return DEFAULT_BOUND if bound is None else bound


def _check(check: str):
    def run(ctx: Context) -> CheckResult:
        return run_walks(ctx, build(ctx, check), check, WALK_CHECKS[check][0])
    return run


def run_walks(ctx: Context, proto, check: str, model: str) -> CheckResult:
    """The walks of one check (module docstring), stopped at the first finding."""
    from kverify.invariants.core import Violation
    from kverify.model.response import properties_of
    from kverify.model.shrink import DEADLOCK
    from kverify.model.walk import walk

    plan, bound = profiles.LIVENESS_WALKS[ctx.profile], response_bound(ctx.profile)
    names = [p.name for p in properties_of(proto)]
    tails = {n: 0 for n in names}
    longest = {n: 0 for n in names}
    runs = steps = tail_steps = 0
    cut = ""
    for k in range(plan.runs):
        if ctx.out_of_time():
            cut = "--max-seconds"
            break
        seed = ctx.seed + k
        res = walk(proto, seed, plan.steps, record_trace=True, response_bound=bound)
        runs += 1
        steps += res.steps
        tail_steps += res.tail_steps
        for n, (t, m) in res.responses.items():
            tails[n] += t
            longest[n] = max(longest[n], m)
        found = res.violation
        if found is None and res.deadlock:
            found = Violation(DEADLOCK, "no action is enabled in a state that must not be terminal", res.steps)
        if found is not None:
            v = _report(ctx, proto, model, check, found, res.trace, seed, bound, found.invariant in names)
            return CheckResult(check, CATEGORY, FAIL, f"{v['invariant']} in run {runs} (seed {seed}): {v['message']}",
                               reports=[v["report"]], violations=[v],
                               covered={"runs": runs, "steps": steps, "tail_steps": tail_steps})
    covered = {"runs": runs, "steps": steps, "tail_steps": tail_steps, "properties": len(names)}
    figures = {"responses": {n: {"tails": tails[n], "longest": longest[n]} for n in names}}
    scope = (f"{runs:,} runs of <= {plan.steps} steps ({steps:,} steps, {tail_steps:,} in fair tails), "
             f"seeds {ctx.seed}..{ctx.seed + runs - 1}, bound {bound} fair steps; "
             + ", ".join(f"{n}: {tails[n]:,} tails, longest response {longest[n]}" for n in names))
    if cut:
        return CheckResult(check, CATEGORY, INCONCLUSIVE, f"{scope}; cut by --max-seconds, no violation",
                           covered=covered, figures=figures, cut=cut)
    idle = [n for n in names if not tails[n]]
    if not names or idle:
        what = ", ".join(idle) if names else "the model declares no liveness property"
        return CheckResult(check, CATEGORY, INCONCLUSIVE, f"{scope}; no obligation ever started (vacuous): {what}",
                           covered=covered, figures=figures, cut=f"premise never triggered: {what}")
    return CheckResult(check, CATEGORY, PASS, f"{scope}; every obligation discharged in time, invariants hold",
                       covered=covered, figures=figures)


def _report(ctx: Context, proto, model: str, check: str, found, trace: list, seed: int, bound: int,
            liveness: bool) -> dict:
    """The finding's record: a bounded-response record as walked, or an invariant/crash/deadlock shrunk."""
    from kverify.model.shrink import DEADLOCK, shrink_trace
    from kverify.model.walk import initial_index
    from kverify.reports.writer import signature, slug, write_report
    from kverify.suite import providers

    init = initial_index(proto, seed)
    if liveness:
        from kverify.model.response import response_record

        cx = response_record(proto, found, trace[:found.step_index], bound, engine="walk", seed=seed,
                             init_index=init, model_name=model)
    else:
        from kverify.reports.record import from_trace

        try:
            sh = shrink_trace(proto, trace, found.invariant, init, budget=providers.SHRINK_BUDGET)
            found, trace = sh.violation, sh.actions
        except ValueError:          # not reproducible by replay: reported as found
            trace = trace[:found.step_index] if found.invariant != DEADLOCK else trace
        cx = from_trace(proto, trace, found, engine="walk", seed=seed, init_index=init, model_name=model)
    path = write_report(cx, os.path.join(ctx.out_dir, slug(f"{check}-{found.invariant}")))
    return {"invariant": found.invariant, "signature": signature(cx), "report": path, "message": found.message}


def liveness_walks(profile: str) -> list:
    return [Check(name, CATEGORY, _check(name)) for name in WALK_CHECKS if profile in profiles.LIVENESS_WALKS]
