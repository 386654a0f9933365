"""Run every property against a target with Hypothesis; shrink failures; write the records.

Each property gets its own Hypothesis run (its own verdict, its own smallest counterexample):
scenarios from the property's family are played round by round, and the first round whose
answer breaks the property fails the example. Hypothesis replays the shrunk example last, so
the failure kept is the smallest one. A counterexample is written as a `reports.record`
Counterexample (engine "assignor-check", model "assignor:<target>"), the rounds as its trace,
the failing problem and answer in `extra`.
"""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, example, given, settings
from hypothesis import seed as hseed

from kverify.certify import properties as P
from kverify.certify.pinned import pinned
from kverify.certify.scenarios import play, scenarios
from kverify.certify.failures import TargetFailure

FAMILY = {"answers": "stale", "exclusive": "stale", "sticky": "stale", "cooperative-safe": "stale", "robust": "robust"}
# properties judged on every round, answered or not (the others only on rounds with a usable answer)
EVERY_ROUND = ("answers", "robust")
HANG_BUDGET = 3  # hangs per property before shrinking stops (each one costs a timeout)


class _Failed(AssertionError):
    pass


class _StopShrinking(BaseException):
    """Raised past Hypothesis (not an Exception) when shrinking would cost too many timeouts."""


@dataclass
class Verdict:
    name: str
    claimed: bool
    reason: str | None
    holds: bool = True
    examples: int = 0                 # scenarios played (shrinking attempts included)
    problems: int = 0                 # rounds played (one problem each)
    refused: int = 0                  # rounds without a usable answer: judged by `answers`, not by this one
    counterexample: dict | None = None
    message: str | None = None
    path: str | None = None
    rounds: list = field(default_factory=list)
    scope: str | None = None          # the claim covers only part of the problems (said why)
    outside: dict | None = None       # failures seen outside the claimed scope (not counted)

    @property
    def judged(self) -> int:
        """Rounds this property was judged on."""
        return self.problems if self.name in EVERY_ROUND else self.problems - self.refused

    @property
    def inconclusive(self) -> bool:
        """Held, but on no answered problem at all: nothing was checked."""
        return self.holds and self.problems > 0 and self.judged == 0

    @property
    def status(self) -> str:
        return "FAILS" if not self.holds else ("inconclusive" if self.inconclusive else "holds")

    def to_json(self) -> dict:
        d = {"holds": self.holds, "status": self.status, "claimed": self.claimed,
             "not_claimed_because": self.reason, "examples": self.examples, "problems": self.problems,
             "judged": self.judged, "refused": self.refused, "counterexample": self.counterexample}
        if self.scope:
            d["scope"] = self.scope
            d["outside_scope"] = self.outside
        return d


def identical_subscriptions(problem: dict) -> bool:
    """Every member lists the same topics (as Kafka's allSubscriptionsEqual sees it: topics that do
    not exist or have no partitions still count)."""
    return len({frozenset(m.get("topics", ())) for m in problem.get("members", [])}) <= 1


def _shuffled(problem: dict, rng: random.Random, members_too: bool) -> dict:
    members = []
    for m in problem["members"]:
        m = dict(m)
        m["topics"] = rng.sample(m["topics"], len(m["topics"]))
        if m.get("owned"):
            m["owned"] = rng.sample(m["owned"], len(m["owned"]))
        members.append(m)
    if members_too:
        members = rng.sample(members, len(members))
    out = dict(problem)
    out["members"] = members
    return out


def _same_answer(a: dict, b: dict) -> bool:
    if P.well_formed({"id": a.get("id")}, a) or P.well_formed({"id": b.get("id")}, b):
        return a == b
    sa = {m: sorted(map(tuple, tps)) for m, tps in a["assignment"].items()}
    sb = {m: sorted(map(tuple, tps)) for m, tps in b["assignment"].items()}
    return sa == sb


def judge(name: str, target, problem: dict, answer) -> str | None:
    """The property's verdict on one round: None if it holds, else a one-line message. Only `answers`
    and `robust` judge rounds without a usable answer (check_property does not ask the others)."""
    if isinstance(answer, TargetFailure):
        return f"no answer ({answer.kind}): {answer.message}"
    bad = P.well_formed(problem, answer)
    if bad:
        return bad
    if name == "answers":
        return None
    if name == "robust":  # a usable answer: nothing twice, nothing that does not exist or was not asked
        checks = [P.check_no_ghosts, P.check_exclusive]
        if target.claims.get("subscribed-only") is None:  # only where the target promises it at all
            checks.append(P.check_subscribed_only)
        for check in checks:
            msg = check(problem, answer)
            if msg:
                return msg
        return None
    if name == "cooperative-safe":
        return P.check_cooperative_safe(problem, answer)
    if name == "deterministic":
        rng = random.Random(json.dumps(problem, sort_keys=True))
        for variant, label in ((problem, "the same problem again"),
                               (_shuffled(problem, rng, target.member_order_free), "the problem with lists shuffled")):
            try:
                again = target.solve(variant)
            except TargetFailure as exc:
                return f"no answer to {label} ({exc.kind}): {exc.message}"
            if not _same_answer(answer, again):
                return f"{label} gets a different answer: {json.dumps(again.get('assignment', again))[:200]}"
        return None
    return P.CHECKS[name](problem, answer, target.cooperative)


def check_property(target, name: str, seed: int, examples: int, max_members: int = 5) -> Verdict:
    claimed = target.claims.get(name) is None
    v = Verdict(name, claimed, target.claims.get(name))
    v.scope = getattr(target, "scopes", {}).get(name)
    outside = {"rounds": 0, "example": None}
    state = {"last": None, "hangs": 0}
    family = FAMILY.get(name, "realistic")
    if target.protocol == "consumer":     # the coordinator's target assignment is the one truth: no stale claims
        family = {"stale": "realistic", "robust": "robust-consumer"}.get(family, family)

    def solve(problem):
        try:
            return target.solve(problem)
        except TargetFailure as exc:
            if exc.kind == "hang":
                state["hangs"] += 1
            return exc

    def run(scenario):
        v.examples += 1
        rounds = []

        def on_round(index, problem, answer):
            rounds.append((problem, answer))
            v.problems += 1
            if name not in EVERY_ROUND and (isinstance(answer, TargetFailure) or P.no_answer(problem, answer)):
                v.refused += 1      # the `answers` property reports it; this one judges answered rounds
                return
            msg = judge(name, target, problem, answer)
            if msg is not None and v.scope and not isinstance(answer, TargetFailure) \
                    and not identical_subscriptions(problem):
                outside["rounds"] += 1
                if outside["example"] is None:
                    outside["example"] = {"problem": problem, "answer": answer, "violation": msg}
                msg = None
            if msg is not None:
                state["last"] = (scenario, rounds[:], msg)
                if state["hangs"] >= HANG_BUDGET:
                    raise _StopShrinking()
                raise _Failed(msg)

        play(scenario, solve, target.cooperative, on_round)

    played = given(scenarios(family=family, max_members=max_members))(run)
    for scenario in pinned(name):        # kverify/certify/pinned.py: played first, whatever the budget
        played = example(scenario)(played)
    test = settings(max_examples=examples, database=None, deadline=None, verbosity=Verbosity.quiet,
                    suppress_health_check=list(HealthCheck), derandomize=False, report_multiple_bugs=False,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink])(hseed(seed)(played))
    try:
        test()
    except _StopShrinking:
        pass
    except _Failed:
        pass
    except Exception as exc:  # a failure Hypothesis reports as a group / flaky: keep our record
        if state["last"] is None:
            raise
        v.message = f"{type(exc).__name__}"
    if v.scope:
        v.outside = outside
    if state["last"] is not None:
        scenario, rounds, msg = state["last"]
        v.holds = False
        v.message = msg
        v.rounds = rounds
        problem, answer = rounds[-1]
        ans = answer if isinstance(answer, dict) else {"failure": answer.kind, "message": answer.message}
        v.counterexample = {"problem": problem, "answer": ans, "violation": msg, "rounds": len(rounds),
                            "scenario": scenario}
    return v


def _statement(name: str) -> str:
    return P.PROPERTIES[name]


def record_for(target, verdict: Verdict, seed: int):
    from kverify.reports.record import Counterexample, Step

    trace = []
    for i, (problem, answer) in enumerate(verdict.rounds):
        ans = answer if isinstance(answer, dict) else {"failure": answer.kind, "message": answer.message}
        trace.append(Step(index=i, action=None if i == 0 else ["rebalance", problem["id"]],
                          label=f"round {problem['id']}", state={"problem": problem, "answer": ans}))
    cx = verdict.counterexample
    return Counterexample(
        invariant=verdict.name, statement=_statement(verdict.name), model=f"assignor:{target.name}",
        params={}, behaviours=sorted(getattr(target, "behaviours", ()) or ()), engine="assignor-check",
        violation_step=len(trace) - 1, violation=verdict.message or "", trace=trace, seed=seed,
        replay=replay_command(target, seed, verdict.name),
        extra={"problem": cx["problem"], "answer": cx["answer"], "scenario": cx["scenario"],
               "replayer": "kverify.certify.replay:replay_record",
               **({"command": target.command} if hasattr(target, "command") else {})})


def replay_command(target, seed: int, prop: str) -> str:
    """The command line that re-runs this property with the same seed (same problems)."""
    import shlex

    what = f"--command {shlex.quote(target.command)}" if hasattr(target, "command") else shlex.quote(target.name)
    if hasattr(target, "command") and target.protocol == "consumer":
        what += " --protocol consumer"
    extra = "".join(f" --behaviour {b}" for b in sorted(getattr(target, "behaviours", ()) or ()))
    return f"kverify assignor check {what}{extra} --seed {seed} --property {prop}"


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "target"


def write_record(target, verdict: Verdict, seed: int, out_dir: str) -> str:
    """Write the record and its Markdown/HTML renderings into `out_dir/<property>/`."""
    from kverify.reports.writer import write_report

    cx = record_for(target, verdict, seed)
    command = cx.replay
    path = write_report(cx, os.path.join(out_dir, verdict.name))
    cx.extra["assignor_check_command"] = command   # the seed-level re-run, beside `kverify replay <path>`
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(cx.dumps() + "\n")
    return path


def run_check(target, seed: int, examples: int, properties=None, out_dir: str | None = None,
              max_members: int = 5, progress=None) -> list:
    verdicts = []
    for name in properties or P.ORDER:
        if progress:
            progress(name)
        v = check_property(target, name, seed, examples, max_members)
        if not v.holds and out_dir:
            v.path = write_record(target, v, seed, out_dir)
        verdicts.append(v)
    return verdicts
