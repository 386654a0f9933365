"""The verification run as a whole: named checks, profiles, verdicts, baselines.

`kverify verify` (kverify/commands/verify.py) plans the checks of a profile, runs them (in worker
processes, one per usable core, results taken in plan order), and writes `summary.json`, `junit.xml` and `index.html` into the run's folder. A check is
any engine run with a verdict (an assignor certification, an exhaustive exploration, Z3 proofs,
Hypothesis machines, random walks, conformance scenarios); providers in this package build them.
Each check ends with one of three verdicts (kverify/suite/verdicts.py): PASS, INCONCLUSIVE, FAIL.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

from kverify.suite.verdicts import FAIL, PASS, VERDICTS

PROFILES = ("quick", "ci", "deep")


@dataclass
class CheckResult:
    name: str
    category: str
    verdict: str                                   # PASS | INCONCLUSIVE | FAIL (kverify/suite/verdicts.py)
    summary: str                                   # one line: what was covered; what broke or cut it
    seconds: float = 0.0
    reports: list = field(default_factory=list)    # counterexample.json paths
    violations: list = field(default_factory=list) # [{"invariant", "signature", "report", "message"}]
    figures: dict = field(default_factory=dict)    # for plots: states_per_depth, action_coverage, ...
    known: bool = False                            # failed, but every violation is in the baseline
    covered: dict = field(default_factory=dict)    # counted coverage: states, runs, steps, examples, ...
    cut: str = ""                                  # INCONCLUSIVE: what cut it short
    detail: str = ""                               # a crashed check: the traceback

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"check {self.name}: verdict must be one of {VERDICTS}, not {self.verdict!r}")

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    def to_json(self) -> dict:
        return dict(asdict(self), passed=self.passed)


@dataclass
class Context:
    profile: str
    out_dir: str
    seed: int
    behaviours: frozenset = frozenset()
    deadline: Optional[float] = None               # time.monotonic() value, for --max-seconds
    progress: bool = True

    def remaining(self) -> Optional[float]:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def out_of_time(self) -> bool:
        """The user's --max-seconds is spent (a check stopped by it is INCONCLUSIVE, never PASS)."""
        return self.deadline is not None and time.monotonic() >= self.deadline


@dataclass
class Check:
    name: str
    category: str
    run: Callable[[Context], CheckResult]


def plan(profile: str) -> list[Check]:
    """Every check of a profile, cheapest first."""
    from kverify.suite import providers

    checks: list[Check] = []
    for provide in providers.ALL:
        checks.extend(provide(profile))
    return checks


def apply_baseline(results: list[CheckResult], baseline: dict) -> None:
    """Mark failed checks whose violations are all known (by invariant + trace signature)."""
    known = {(v["invariant"], v["signature"]) for v in baseline.get("violations", [])}
    for r in results:
        if r.verdict == FAIL and r.violations and all((v["invariant"], v["signature"]) in known for v in r.violations):
            r.known = True


def run_isolated(check: Check, ctx: Context) -> CheckResult:
    """Run one check so that nothing it raises ends the run: an exception escaping the check's own
    engine (which reports crashes inside a trace itself) becomes a FAIL with the exception's type,
    message and site as its violation, and the traceback in `detail`."""
    import hashlib
    import traceback

    from kverify.model.walk import EXCEPTION, crash_site, crash_violation

    try:
        return check.run(ctx)
    except Exception as exc:
        v = crash_violation(exc, 0)
        sig = hashlib.sha256(f"{check.name}\n{crash_site(v)}".encode()).hexdigest()[:16]
        return CheckResult(check.name, check.category, FAIL, f"the check raised {v.message}",
                           violations=[{"invariant": EXCEPTION, "signature": sig, "report": "", "message": v.message}],
                           detail="".join(traceback.format_exception(exc)))
