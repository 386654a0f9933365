"""Z3 proof obligations: properties proved for every state (or every input), not just within the
bounds of exhaustive search, with a concrete counterexample when they fail.

An `Obligation` has a name, a one-line statement, and a `run(behaviours)` returning a `Result`:
status `proved` (the negation is unsatisfiable), `falsified` (Z3 found a counterexample, shown as
a plain dict and, by `kverify prove`, as a counterexample record) or `unknown` (timeout).
`expected(behaviours)` says which status the correct suite expects: with no behaviour, `proved`;
with a behaviour that breaks the property, `falsified`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass
class Result:
    status: str                                # proved | falsified | unknown
    detail: str = ""                           # one line: bounds, strengthening, witness
    counterexample: Optional[dict] = None      # concrete values when falsified
    seconds: float = 0.0


@dataclass
class Obligation:
    name: str
    statement: str
    run: Callable[[frozenset], Result]
    breaking: frozenset = field(default_factory=frozenset)   # behaviours that make it falsifiable

    def expected(self, behaviours: frozenset) -> str:
        return "falsified" if self.breaking & behaviours else "proved"

    def check(self, behaviours: frozenset = frozenset()) -> Result:
        t0 = time.perf_counter()
        res = self.run(behaviours)
        res.seconds = round(time.perf_counter() - t0, 3)
        return res


def all_obligations() -> list[Obligation]:
    """Every obligation of every proof module, in a stable order."""
    from kverify.model.proofs import assignor_arith, coordinator_selection, group_inductive, sticky_optimum

    out: list[Obligation] = []
    for mod in (coordinator_selection, assignor_arith, group_inductive, sticky_optimum):
        out.extend(mod.obligations())
    return out


def by_name(name: str) -> Obligation:
    for ob in all_obligations():
        if ob.name == name:
            return ob
    raise KeyError(name)


def to_record(ob: Obligation, res: Result, behaviours: frozenset):
    """A falsified obligation as the common counterexample record (engine "z3")."""
    from kverify.reports.record import Counterexample, Step

    state = res.counterexample or {}
    trace = [Step(0, None, "symbolic counterexample", state)]
    for i, step in enumerate(state.get("trace", []) if isinstance(state.get("trace"), list) else [], 1):
        trace.append(Step(i, step.get("action"), step.get("label", str(step.get("action"))), step.get("state", {})))
    return Counterexample(invariant=ob.name, statement=ob.statement, model=f"z3:{ob.name}", params={},
                          behaviours=sorted(behaviours), engine="z3", violation_step=len(trace) - 1,
                          violation=res.detail, trace=trace,
                          extra={"replayer": "kverify.model.proofs:replay_record", "z3": res.counterexample})


def replay_record(cx) -> tuple[bool, str]:
    """Replayer for z3 records: re-run the obligation with the recorded behaviours."""
    ob = by_name(cx.model.split(":", 1)[1])
    res = ob.check(frozenset(cx.behaviours))
    if res.status == "falsified":
        return True, f"reproduced: {ob.name} is still falsified: {res.detail}"
    return False, f"no longer reproduces: {ob.name} is {res.status} ({res.detail})"
