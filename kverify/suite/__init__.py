"""The verification run as a whole: named checks, profiles, verdicts, baselines.

`kverify verify` (kverify/commands/verify.py) plans the checks of a profile, runs them one after
another, and writes `summary.json`, `junit.xml` and `index.html` into the run's folder. A check is
any engine run with a verdict (an assignor certification, an exhaustive exploration, Z3 proofs,
Hypothesis machines, random walks, conformance scenarios); providers in this package build them.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

PROFILES = ("quick", "ci", "deep")


@dataclass
class CheckResult:
    name: str
    category: str
    passed: bool
    summary: str                                   # one line
    seconds: float = 0.0
    reports: list = field(default_factory=list)    # counterexample.json paths
    violations: list = field(default_factory=list) # [{"invariant", "signature", "report", "message"}]
    figures: dict = field(default_factory=dict)    # for plots: states_per_depth, action_coverage, ...
    known: bool = False                            # failed, but every violation is in the baseline

    def to_json(self) -> dict:
        return asdict(self)


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
        if not r.passed and r.violations and all((v["invariant"], v["signature"]) in known for v in r.violations):
            r.known = True


def gate_passes(results: list[CheckResult]) -> bool:
    return all(r.passed or r.known for r in results)
