"""Z3 proof obligations: properties proved for every state (or every input), not just within the
bounds of exhaustive search, with a concrete counterexample when they fail.

An `Obligation` has a name, a one-line statement, and a `run(behaviours)` returning a `Result`:
status `proved` (the negation is unsatisfiable), `falsified` (Z3 found a counterexample, shown as
a plain dict and, by `kverify prove`, as a counterexample record) or `unknown` (the solver gave up).

Budgets are solver work, not seconds: every query is bounded with `limit(solver, work)`, Z3's
deterministic resource limit (`rlimit`, counted in solver steps, the same count on every machine), so
the same commit gives the same status whatever the machine's load; `unknown` then means "more solver
work than budgeted". Each module sizes its budget per query from measurement (bench/prove_work.py: a
generous multiple of the largest count seen). A user's explicit wall-clock cap (`kverify prove
--max-seconds`, `budget(max_seconds=...)`) may add a timeout; what it cuts is `unknown` (INCONCLUSIVE).
`expected(behaviours)` says which status the correct suite expects: with no behaviour, `proved`;
with a behaviour that breaks the property, `falsified`. An obligation about one model may name that
model's behaviours (`model_behaviours`) and the subset its encoding covers (`encodes`): a switched-on
behaviour of the model outside `encodes` makes the status `unknown` (never `proved` for a model the
encoding does not describe), and `expected` says so; behaviours of other models are irrelevant to it.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

# --- deterministic solver budgets ----------------------------------------------------------------
_SCALE = 1.0                      # multiplies every budget (tests shrink it to force `unknown`)
_DEADLINE: Optional[float] = None  # perf_counter() deadline of an explicit --max-seconds, else None
_SIZE = "full"                    # "full" (ci, `kverify prove`) or "small" (quick: smallest meaningful sizes)


def work_done() -> int:
    """Z3's resource counter of this process's context: deterministic solver work done so far."""
    import z3

    return int(z3.Solver().statistics().get_key_value("rlimit count"))


def limit(solver, work: int):
    """Bound each `check()` of `solver` (Solver or Optimize) by `work` units of Z3's resource counter
    (`rlimit`: relative to the work already done, per check), scaled by an enclosing `budget(scale=)`.
    Past the budget, `check()` answers unknown ("max. resource limit exceeded"), on every machine alike.
    Under an explicit `budget(max_seconds=)` the query is also cut at the deadline (a timeout). Returns
    the solver."""
    solver.set("rlimit", max(1, int(work * _SCALE)))
    if _DEADLINE is not None:
        solver.set("timeout", max(1, int((_DEADLINE - time.perf_counter()) * 1000)))
    return solver


def size() -> str:
    """The size obligations run at: "full", or "small" inside `budget(size="small")` (the quick profile)."""
    return _SIZE


@contextmanager
def budget(scale: float = 1.0, max_seconds: Optional[float] = None, size: str = "full") -> Iterator[None]:
    """Within the block: every `limit` budget times `scale`; when `max_seconds` is given, a wall-clock
    deadline that far ahead for every query (the user's explicit cap); obligations at `size`."""
    global _SCALE, _DEADLINE, _SIZE
    if size not in ("full", "small"):
        raise ValueError(f"size must be full or small, not {size!r}")
    saved = _SCALE, _DEADLINE, _SIZE
    _SCALE = scale
    _DEADLINE = None if max_seconds is None else time.perf_counter() + max_seconds
    _SIZE = size
    try:
        yield
    finally:
        _SCALE, _DEADLINE, _SIZE = saved


@dataclass
class Result:
    status: str                                # proved | falsified | unknown
    detail: str = ""                           # one line: bounds, strengthening, witness
    counterexample: Optional[dict] = None      # concrete values when falsified
    seconds: float = 0.0
    work: int = 0                              # Z3 resource units spent (deterministic, unlike seconds)


@dataclass
class Obligation:
    name: str
    statement: str
    run: Callable[[frozenset], Result]
    breaking: frozenset = field(default_factory=frozenset)   # behaviours that make it falsifiable
    model_behaviours: frozenset = field(default_factory=frozenset)   # the behaviours of its model
    encodes: Optional[frozenset] = None       # those the encoding covers (None: every one)
    small: Optional[Callable[[frozenset], Result]] = None   # the same claim at its smallest meaningful size
    #                                           (run instead of `run` inside budget(size="small"): the quick profile)

    def uncovered(self, behaviours: frozenset) -> frozenset:
        """Switched-on behaviours of this obligation's model that its encoding does not have."""
        if self.encodes is None:
            return frozenset()
        return frozenset(behaviours) & self.model_behaviours - self.encodes

    def expected(self, behaviours: frozenset) -> str:
        if self.uncovered(behaviours):
            return "unknown"
        return "falsified" if self.breaking & behaviours else "proved"

    def check(self, behaviours: frozenset = frozenset()) -> Result:
        t0, w0 = time.perf_counter(), work_done()
        missing = self.uncovered(behaviours)
        if missing:
            res = Result("unknown", f"not encoded: {', '.join(sorted(missing))} (the encoding covers "
                                    f"{', '.join(sorted(self.encodes)) or 'no behaviour'}); nothing is claimed")
        else:
            res = (self.small if self.small is not None and _SIZE == "small" else self.run)(behaviours)
        res.seconds = round(time.perf_counter() - t0, 3)
        res.work = work_done() - w0
        return res


def all_obligations(include_open: bool = False) -> list[Obligation]:
    """Every obligation of every proof module, in a stable order. `include_open` adds the obligations
    whose inductive proof is still open (they cannot report `proved` yet, so the suite's gate and
    `kverify prove` run them only when asked: by name, or `kverify prove --open`)."""
    from kverify.model.proofs import (assignor_arith, consumer_group_inductive, coordinator_selection, group_inductive,
                                      replication_inductive, sticky_optimum)

    out: list[Obligation] = []
    for mod in (coordinator_selection, assignor_arith, group_inductive, sticky_optimum, replication_inductive,
                consumer_group_inductive):
        out.extend(mod.obligations())
    if include_open:
        out.extend(open_obligations())
    return out


def open_obligations() -> list[Obligation]:
    """Obligations whose encoding and BMC work but whose inductive strengthening is not finished:
    on the correct model they report `unknown` with a counterexample to induction."""
    from kverify.model.proofs import replication_inductive

    return replication_inductive.open_obligations()


def by_name(name: str) -> Obligation:
    for ob in all_obligations(include_open=True):
        if ob.name == name:
            return ob
    raise KeyError(name)


def to_record(ob: Obligation, res: Result, behaviours: frozenset):
    """A falsified obligation as the common counterexample record (engine "z3")."""
    from kverify.reports.record import Counterexample, Step

    state = res.counterexample or {}
    steps = state.get("trace") if isinstance(state.get("trace"), list) else []
    # a trace that starts from a concrete state (BMC: the initial state; a CTI: its pre-state) is the
    # record's trace as it is; other counterexamples are one symbolic step
    trace = [] if steps and steps[0].get("action") is None else [Step(0, None, "symbolic counterexample", state)]
    for step in steps:
        trace.append(Step(len(trace), step.get("action"), step.get("label", str(step.get("action"))), step.get("state", {})))
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
