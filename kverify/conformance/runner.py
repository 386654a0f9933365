"""Executes validated scenarios against the reference coordinator and reports the first failing step.

One fresh coordinator per scenario (through `adapter.CoordinatorAdapter`), steps strictly in order,
references resolved when their step runs. A scenario stops at its first failing step; the outcome
carries what was expected and what came back, or that the response was still parked.
The same runner drives a broker over the Kafka protocol through another adapter
(kverify/wire/conformance.py, `kverify coordinator run --bootstrap`); there `run_all(runnable=...)`
reports the scenarios the target cannot express as not runnable instead of running them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kverify.conformance import checks
from kverify.conformance.format import REQUEST_OPS, Scenario
from kverify.conformance.refs import Unresolvable, resolve

PARKED = "still parked (not delivered)"


@dataclass
class Outcome:
    id: str
    passed: bool
    failed_step: Optional[int] = None     # 1-based index into the scenario's steps
    op: str = ""
    label: str = ""
    expected: Any = None
    actual: Any = None
    message: str = ""
    implicit: bool = False
    path: str = ""
    line: int = 0
    runnable: bool = True                 # False: not runnable on this target (over the wire); `message` says why

    def as_json(self) -> dict:
        return {"id": self.id, "passed": self.passed, "failed_step": self.failed_step,
                "expected": self.expected, "actual": self.actual, "op": self.op or None,
                "label": self.label or None, "message": self.message or None, "implicit": self.implicit,
                "file": self.path, "line": self.line, "runnable": self.runnable}

    def line_text(self) -> str:
        if self.passed:
            return f"PASS {self.id}"
        if not self.runnable:
            return f"NOT RUNNABLE OVER THE WIRE {self.id}: {self.message}"
        what = f"{self.op} {self.label}".strip()
        imp = " (implicit expectation)" if self.implicit else ""
        return f"FAIL {self.id}: step {self.failed_step} ({what}){imp}: {self.message}"


class StepFailed(Exception):
    def __init__(self, message, expected=None, actual=None, implicit=False):
        super().__init__(message)
        self.message, self.expected, self.actual, self.implicit = message, expected, actual, implicit


def _diff(ms):
    return ({m.field: m.expected for m in ms}, {m.field: m.actual for m in ms})


class _Run:
    def __init__(self, sc: Scenario, adapter):
        self.sc, self.a = sc, adapter
        self.expect_raise = {lab for st in _flat(sc.steps) if st["op"] == "expect" and "raises" in st
                             for lab in [st["of"]]}

    # -- references
    def lookup(self, label):
        if label in self.a.raised:
            cls, msg = self.a.raised[label]
            raise Unresolvable(f"response {label} is an exception ({cls}: {msg})")
        if label not in self.a.delivered:
            raise Unresolvable(f"response {label} {PARKED}")
        return self.a.delivered[label]

    def resolve(self, value):
        try:
            return resolve(value, self.lookup)
        except Unresolvable as exc:
            raise StepFailed(f"cannot resolve reference: {exc}", "a delivered response", str(exc)) from None

    def delivered(self, label):
        if label in self.a.raised:
            cls, msg = self.a.raised[label]
            raise StepFailed(f"{label} raised {cls}: {msg}", "a response", f"{cls}: {msg}")
        if label not in self.a.delivered:
            raise StepFailed(f"response {label} {PARKED}", "delivered", PARKED)
        return self.a.delivered[label]

    # -- steps
    def step(self, st):
        op = st["op"]
        if op in REQUEST_OPS:
            fields = self.resolve({k: v for k, v in st.items() if k not in ("op", "as")})
            self.a.send(st["as"], op, fields)
            if st["as"] in self.a.raised and st["as"] not in self.expect_raise:
                cls, msg = self.a.raised[st["as"]]
                raise StepFailed(f"request raised {cls}: {msg}", "a response or a parked request", f"{cls}: {msg}")
        elif op == "advance":
            self.a.advance(st["ms"])
        elif op == "set_log_append_result":
            self.a.set_log_append_result(st["error"])
        elif op == "create_group":
            self.a.create_group(self.resolve(st["group"]), st["state"], st["protocol_type"],
                                self.resolve(st["members"]))
        elif op == "force_transition":
            self.a.force_transition(self.resolve(st["group"]), st["to"])
        elif op == "force_prepare_rebalance":
            self.a.force_prepare_rebalance(self.resolve(st["group"]))
        elif op == "set_partition_loading":
            self.a.set_partition_loading(st["partition"])
        elif op == "complete_partition_load":
            self.a.complete_partition_load(st["partition"])
        elif op == "delete_partitions":
            self.a.delete_partitions(st["partitions"])
        else:
            self.check(st)

    def check(self, st):
        op = st["op"]
        implicit = bool(st.get("implicit"))
        if op == "await":
            self.delivered(st["of"])
        elif op == "expect":
            lab = st["of"]
            kind = self.sc.kinds[lab]
            exp = {k: v for k, v in st.items() if k not in ("op", "of", "implicit", "completed")}
            if st.get("completed") is False:
                if lab in self.a.delivered or lab in self.a.raised:
                    got = self.a.delivered.get(lab) or self.a.raised.get(lab)
                    raise StepFailed(f"{lab} expected still parked, but it was delivered: {got}",
                                     {"completed": False}, {"completed": True, "response": got}, implicit)
                return
            if "raises" in exp:
                if lab in self.a.delivered:
                    raise StepFailed(f"{lab} expected to raise {exp['raises']}, got a response",
                                     exp, self.a.delivered[lab], implicit)
                ms = checks.check_raised(self.a.raised.get(lab), self.resolve(exp))
            else:
                try:
                    resp = self.delivered(lab)
                except StepFailed as exc:
                    exc.implicit = implicit
                    exc.expected = exp or {"completed": True}
                    raise
                ms = checks.check_response(kind, resp, self.resolve(exp))
            if ms:
                e, a = _diff(ms)
                raise StepFailed(checks.format_mismatches(ms), e, a, implicit)
        elif op == "expect_group":
            exp = {k: v for k, v in st.items() if k not in ("op", "group", "implicit")}
            ms = checks.check_group(self.a.group(self.resolve(st["group"])), self.resolve(exp))
            if ms:
                e, a = _diff(ms)
                raise StepFailed(f"group {st['group']}: " + checks.format_mismatches(ms), e, a, implicit)
        elif op == "expect_error_counts":
            errs = [self.delivered(lab)["error"] for lab in st["of"]]
            got = {e: errs.count(e) for e in st["counts"]}
            if got != st["counts"]:
                raise StepFailed(f"error counts over {st['of']}: expected {st['counts']}, got {got} "
                                 f"(errors in order: {errs})", st["counts"], got)
        elif op == "expect_errors_equal":
            a = [self.delivered(lab)["error"] for lab in st["of"]]
            b = [self.delivered(lab)["error"] for lab in st["other"]]
            if a != b:
                raise StepFailed(f"errors of {st['of']} = {a} differ from errors of {st['other']} = {b}", b, a)
        elif op == "expect_any":
            fails = []
            for i, alt in enumerate(st["alternatives"], 1):
                try:
                    for sub in alt:
                        self.check(sub)
                    return
                except StepFailed as exc:
                    fails.append(f"alternative {i}: {exc.message}")
            raise StepFailed("no alternative holds: " + " | ".join(fails),
                             "one alternative", [f for f in fails])
        else:
            raise ValueError(f"unknown op {op}")


def run_scenario(sc: Scenario, behaviours=frozenset(), adapter_factory=None) -> Outcome:
    if adapter_factory is None:
        from kverify.conformance.adapter import CoordinatorAdapter as adapter_factory
    base = dict(id=sc.id, path=sc.path, line=sc.line)
    try:
        adapter = adapter_factory(sc.config, behaviours)
    except Exception as exc:
        return Outcome(passed=False, failed_step=0, op="config", message=f"cannot build the coordinator: "
                       f"{type(exc).__name__}: {exc}", **base)
    try:
        return _run_steps(sc, adapter, base)
    finally:
        if hasattr(adapter, "close"):
            adapter.close()


def _run_steps(sc, adapter, base) -> Outcome:
    run = _Run(sc, adapter)
    for i, st in enumerate(sc.steps, 1):
        try:
            run.step(st)
            if adapter.problems:
                msg = "; ".join(adapter.problems)
                raise StepFailed(msg, "each response delivered at most once", msg)
        except StepFailed as exc:
            return Outcome(passed=False, failed_step=i, op=st["op"], label=st.get("as") or _of(st),
                           expected=exc.expected, actual=exc.actual, message=exc.message,
                           implicit=exc.implicit, **base)
        except Exception as exc:   # the coordinator (or a setup hook) blew up: a failure, not a crash
            return Outcome(passed=False, failed_step=i, op=st["op"], label=st.get("as") or _of(st),
                           expected="no exception", actual=f"{type(exc).__name__}: {exc}",
                           message=f"raised {type(exc).__name__}: {exc}", **base)
    return Outcome(passed=True, **base)


def _flat(steps):
    for st in steps:
        yield st
        for alt in st.get("alternatives", ()):
            yield from _flat(alt)


def _of(st):
    of = st.get("of", st.get("group", ""))
    return of if isinstance(of, str) else ",".join(map(str, of))


@dataclass
class Summary:
    outcomes: list = field(default_factory=list)

    @property
    def passed(self):
        return sum(1 for o in self.outcomes if o.passed)

    @property
    def total(self):
        return len(self.outcomes)

    @property
    def not_runnable(self):
        return sum(1 for o in self.outcomes if not o.runnable)

    @property
    def failed(self):
        return self.total - self.passed - self.not_runnable


def run_all(scenarios, behaviours=frozenset(), only=None, adapter_factory=None, runnable=None) -> Summary:
    """`runnable(sc) -> None | reason`: scenarios with a reason are reported as not runnable (never run,
    never passed) — how a target that lacks the format's optional features (e.g. a broker over the wire) says so."""
    s = Summary()
    for sc in scenarios:
        if only and sc.id not in only:
            continue
        why = runnable(sc) if runnable else None
        if why:
            s.outcomes.append(Outcome(id=sc.id, passed=False, runnable=False, message=why, path=sc.path, line=sc.line))
            continue
        s.outcomes.append(run_scenario(sc, behaviours, adapter_factory))
    return s
