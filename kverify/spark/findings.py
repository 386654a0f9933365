"""From "seed S broke invariant I at step k" to a shrunk, replayable counterexample report.

The executors only report a seed and a step; the driver re-runs that seed here, in this process,
with the same walker (so a finding from a cluster replays on one machine), checks that the re-run
breaks the same invariant at the same step (anything else means the protocol is not
deterministic, which is reported rather than papered over), shrinks the action sequence with
model/shrink.py, and writes the counterexample record (reports/record.py) next to the run's
other output, with both ways to replay it: the record itself and the seed. A liveness property whose
bounded response failed (model/response.py) is not shrunk: its record is the walk up to the step where
its tail started, then the fair tail up to the step where the bound ran out, replayed by
`kverify.model.response:replay_response`.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from kverify.invariants.core import Violation
from kverify.model.shrink import DEADLOCK, shrink_trace
from kverify.model.response import DEFAULT_BOUND, properties_of, response_record
from kverify.model.walk import initial_index, walk
from kverify.reports.record import from_trace
from kverify.spark.world import WorldSpec


class NondeterministicReplay(RuntimeError):
    """The re-run of a seed did not reproduce what the executor reported."""


@dataclass
class Finding:
    invariant: str
    seed: int
    step: int                 # step of the violation in the original run
    runs: int                 # runs that broke this invariant
    path: str                 # the written record
    shrunk_steps: int
    minimal: bool
    replay: str               # command replaying the record
    seed_command: str         # command re-running the seed

    def to_json(self) -> dict:
        return {"invariant": self.invariant, "seed": self.seed, "step": self.step, "runs": self.runs,
                "shrunk_steps": self.shrunk_steps, "minimal": self.minimal, "path": self.path,
                "replay": self.replay, "seed_command": self.seed_command}


def seed_command(world: WorldSpec, seed: int, response_bound: int = DEFAULT_BOUND) -> str:
    parts = ["kverify", "simulate", world.name, "--runs", "1", "--seed", str(seed),
             "--steps", str(world.steps), "--engine", "inline"]
    if response_bound != DEFAULT_BOUND:
        parts += ["--response-bound", str(response_bound)]
    for b in world.behaviours:
        parts += ["--behaviour", b]
    for k, v in world.params:
        parts += ["--param", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    return " ".join(shlex.quote(p) for p in parts)


def report(world: WorldSpec, invariant: str, seed: int, step: int, runs: int, out_dir: str,
           engine: str, *, shrink_budget: int = 5000, response_bound: int = DEFAULT_BOUND) -> Finding:
    protocol = world.build()
    res = walk(protocol, seed, world.steps, record_trace=True, track_sometimes=False, response_bound=response_bound)
    if invariant == DEADLOCK:
        got = (DEADLOCK, res.steps) if res.deadlock and res.violation is None else None
    else:
        got = (res.violation.invariant, res.violation.step_index) if res.violation else None
    if got != (invariant, step):
        raise NondeterministicReplay(
            f"seed {seed} of {world.name}: the executor reported {invariant} at step {step}, "
            f"the re-run gave {got or 'no violation'}; the protocol is not deterministic")
    init = initial_index(protocol, seed)
    os.makedirs(os.path.join(out_dir, "reports"), exist_ok=True)
    path = os.path.join(out_dir, "reports", f"{invariant}.json")
    cmd = seed_command(world, seed, response_bound)
    if response_bound and invariant in {p.name for p in properties_of(protocol)}:
        actions = res.trace[:step]
        record = response_record(protocol, res.violation, actions, response_bound, engine=engine, seed=seed,
                                 init_index=init, model_name=world.name)
        record.extra.update({"seed_command": cmd, "original_steps": step, "shrunk_steps": len(actions),
                             "shrink_replays": 0, "minimal": False, "runs_breaking_it": runs})
        shrunk_steps, minimal = len(actions), False
    else:
        shrunk = shrink_trace(protocol, res.trace, invariant, init, budget=shrink_budget)
        violation = shrunk.violation
        if invariant == DEADLOCK:
            violation = Violation(DEADLOCK, violation.message, len(shrunk.actions))
        record = from_trace(protocol, shrunk.actions, violation, engine=engine, seed=seed,
                            init_index=init, model_name=world.name)
        record.extra = {"seed_command": cmd,
                        **({"replayer": "kverify.spark.findings:replay_record"}
                           if invariant == DEADLOCK or not world.is_registry_name else {}), "original_steps": step,
                        "shrunk_steps": len(shrunk.actions), "shrink_replays": shrunk.tests,
                        "minimal": shrunk.minimal, "runs_breaking_it": runs}
        shrunk_steps, minimal = len(shrunk.actions), shrunk.minimal
    record.replay = f"kverify replay {shlex.quote(path)}"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(record.dumps())
        fh.write("\n")
    return Finding(invariant, seed, step, runs, path, shrunk_steps, minimal, record.replay, cmd)


def replay_record(cx):
    """`kverify replay` hook (extra["replayer"]) for records the registry replayer cannot
    handle: worlds named `module:function`, and deadlocks. Returns (reproduced, message)."""
    from kverify.model.shrink import replays_to
    from kverify.spark.world import _make

    protocol = _make(cx.model, dict(cx.params), frozenset(cx.behaviours))
    v = replays_to(protocol, cx.actions, cx.init_index, cx.invariant)
    if v is not None and v.step_index == cx.violation_step:
        return True, f"reproduced: `{cx.invariant}` breaks at step {cx.violation_step}: {v.message}"
    return False, f"no longer reproduces: `{cx.invariant}` does not break at step {cx.violation_step}"
