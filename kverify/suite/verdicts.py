"""The three verdicts of a check and the exit code of a gate built from them.

Why it exists: a CI gate must not say more than was checked. A check is PASS only when it was
complete (an exhaustive search that finished, every `sometimes` property reached, the whole walk or
example budget run), INCONCLUSIVE when a bound, a budget or `--max-seconds` cut it short (its summary
says what was covered and what cut it), and FAIL when a property broke or the check itself crashed.
Every rendering (CLI lines, `--json`, summary.json, junit.xml, index.html) and the exit code of
`kverify verify` read these names, so they are defined once, here.
"""
from __future__ import annotations

PASS = "PASS"
INCONCLUSIVE = "INCONCLUSIVE"
FAIL = "FAIL"
VERDICTS = (PASS, INCONCLUSIVE, FAIL)

EXIT_PASS = 0            # every check PASS (or failed only with violations known to the baseline)
EXIT_FAIL = 1            # a check FAILed with a new violation; or, under --strict, a check was INCONCLUSIVE
EXIT_INCONCLUSIVE = 3    # nothing failed, but at least one check was INCONCLUSIVE (not --strict)

EXIT_CODES_HELP = f"""exit codes:
  {EXIT_PASS}  every check PASSed: complete and nothing broke (failures known to --baseline do not count)
  {EXIT_FAIL}  a check FAILed (a property broke, or a step raised); with --strict also when a check was INCONCLUSIVE
  2  bad usage or input (one line on stderr)
  {EXIT_INCONCLUSIVE}  nothing failed, but a check was INCONCLUSIVE: a budget, a bound or --max-seconds cut it
     short, or a `sometimes` property was never reached (its line says what was covered and what cut it)
--strict (the default of the ci profile; --no-strict turns it off) makes INCONCLUSIVE fail the gate."""


def worst(verdicts) -> str:
    """FAIL over INCONCLUSIVE over PASS (PASS for none)."""
    vs = set(verdicts)
    return FAIL if FAIL in vs else INCONCLUSIVE if INCONCLUSIVE in vs else PASS


def counts(results) -> dict:
    """{"passed", "failed", "inconclusive", "known"}: a FAIL whose violations are all in the baseline
    counts as known, not failed."""
    out = {"passed": 0, "failed": 0, "inconclusive": 0, "known": 0}
    for r in results:
        if r.verdict == PASS:
            out["passed"] += 1
        elif r.verdict == INCONCLUSIVE:
            out["inconclusive"] += 1
        elif r.known:
            out["known"] += 1
        else:
            out["failed"] += 1
    return out


def gate_verdict(results, strict: bool) -> str:
    """The run's verdict: FAIL on a new failure (or on an inconclusive check under `strict`),
    INCONCLUSIVE when something was cut short, else PASS."""
    c = counts(results)
    if c["failed"] or (strict and c["inconclusive"]):
        return FAIL
    return INCONCLUSIVE if c["inconclusive"] else PASS


def exit_code(verdict: str) -> int:
    return {PASS: EXIT_PASS, INCONCLUSIVE: EXIT_INCONCLUSIVE, FAIL: EXIT_FAIL}[verdict]


def explore_outcome(res) -> tuple:
    """(verdict, reason) of one exhaustive search, for `kverify explore` and `kverify verify` alike.

    FAIL: a violation (deadlock, recoverability and a raising step included) or a `sometimes` property a
    complete search never reached; INCONCLUSIVE: the search was cut (`res.stopped`) or finished without
    the recoverability analysis (no state graph, or one over its limit); PASS otherwise. `reason` says
    what failed or what cut the check (None for PASS)."""
    if res.violations or res.vacuous:
        parts = [f"{f.invariant}: {f.violation.message}" for f in res.violations]
        if res.vacuous:
            parts.append(f"vacuous: a complete search never reached {', '.join(res.vacuous)}")
        return FAIL, "; ".join(parts)
    if not res.complete:
        return INCONCLUSIVE, f"cut by {res.stopped or 'an unknown bound'} before the search finished"
    graph = res.graph
    if graph is None:
        return INCONCLUSIVE, "recoverability not checked: no state graph (--graph-limit 0)"
    if not graph.analysed:
        return INCONCLUSIVE, f"recoverability not checked: {graph.note or 'state graph not analysed'}"
    return PASS, None
