"""The bug zoo: every historical behaviour switched on, hunted by the engines in order of cost.

For a behaviour, the candidate protocols are the registry models that implement it (abstract
models first, then the impl worlds). Engines run in order of cost — the explorer at the model's
small default bounds, then the Hypothesis machine, then seeded random walks (shrunk by delta
debugging) — until one returns a violation; the finding is written as a counterexample record.
A behaviour nobody catches is a defect of the suite (a missing invariant or action). The control
run (`control=True`) switches nothing on and runs the same engines at the same budget: it must
find nothing (no false alarms).

Budgets are counts, so the same seed catches the same behaviour with the same trace on any machine,
loaded or idle: each exhaustive search explores at most `states` distinct states (the pairs a world
declares as the way to reach the behaviour get `HINTED_FACTOR` times more), walks take `walk_steps`
steps in all, Hypothesis runs its "ci" profile's examples. `max_seconds`, the user's explicit cap,
is the only clock: a hunt it cuts says so.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Optional

from kverify import behaviours as B
from kverify.model import registry

ABSTRACT_FIRST = ("group", "replication", "offsets", "consumer-group")
ENGINES = ("explore", "hypothesis", "walk")
STATES = 150_000          # distinct states per exhaustive search of a (model, behaviour) pair
HINTED_FACTOR = 10        # the pair a world declares as the way to reach the behaviour: 1.5 M states
WALK_STEPS = 100_000      # random-walk steps per (model, behaviour) pair


@dataclass
class ZooRow:
    name: str
    component: str
    caught: bool
    invariant: Optional[str] = None
    engine: Optional[str] = None
    model: Optional[str] = None
    seconds: float = 0.0
    trace_length: Optional[int] = None
    report: Optional[str] = None
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def candidates(behaviour: Optional[str]) -> list[str]:
    """Registry models that implement `behaviour` (all models for the control run), cheapest first."""
    names = [n for n in registry.names() if behaviour is None or behaviour in registry.supports(n)]
    return sorted(names, key=lambda n: (n not in ABSTRACT_FIRST, ABSTRACT_FIRST.index(n) if n in ABSTRACT_FIRST else 0, n))


def hunt_params(model: str, behaviour: Optional[str]) -> dict:
    """Parameters under which `model` exercises `behaviour` (its SPEC's `hunt_params`; the defaults
    otherwise)."""
    entry = registry.spec_for(model).hunt_params.get(behaviour) if behaviour else None
    return dict(entry[0]) if entry else {}


def _hinted_engine(model: str, behaviour: Optional[str]) -> Optional[str]:
    entry = registry.spec_for(model).hunt_params.get(behaviour) if behaviour else None
    hint = entry[1] if entry else None
    return {"explorer": "explore"}.get(hint, hint) if hint in ("explore", "explorer", "hypothesis", "walk") else None


def plan(behaviour: Optional[str], models: list, engines=ENGINES) -> list:
    """(engine, model) pairs in the order they run: the explorer on the abstract models (cheapest),
    then the pairs a world declares as the way to reach the behaviour, then every engine in order of
    cost over every model."""
    first = [("explore", m) for m in models if m in ABSTRACT_FIRST and "explore" in engines]
    hinted = [(e, m) for m in models for e in [_hinted_engine(m, behaviour)] if e in engines and (e, m) not in first]
    rest = [(e, m) for e in engines for m in models if (e, m) not in first and (e, m) not in hinted]
    return first + hinted + rest


def _finding_explore(proto, states, seed, max_seconds=None):
    from kverify.model.explore import explore

    res = explore(proto, max_states=states, max_seconds=max_seconds, graph=False, stop_on_first=True)
    if res.violations:
        f = res.violations[0]
        return f.violation, f.actions, f.init_index, None
    return None


def _finding_hypothesis(proto, seed, name):
    from kverify.stateful_tests.machine import run_machine

    found = run_machine(name, protocol=proto, seed=seed, profile="ci", database=False)
    if found:
        return found.violation, found.trace, found.init_index, None
    return None


def _finding_walk(proto, total_steps, seed, steps: int = 200, deadline=None):
    from kverify.model.shrink import shrink_trace
    from kverify.model.walk import initial_index, walk

    s = seed
    taken = 0
    while taken < total_steps and (deadline is None or time.monotonic() < deadline):
        res = walk(proto, s, steps, record_trace=True, track_sometimes=False)
        taken += max(1, res.steps)
        if res.violation is not None:
            init = initial_index(proto, s)
            shrunk = shrink_trace(proto, res.trace, res.violation.invariant, init, budget=2000)
            return shrunk.violation, shrunk.actions, init, s
        s += 1
    return None


def hunt(behaviour: Optional[str], *, states: int = STATES, walk_steps: int = WALK_STEPS,
         max_seconds: Optional[float] = None, seed: int = 0, out_dir: Optional[str] = None,
         engines=ENGINES, models=None) -> ZooRow:
    """Switch `behaviour` on (None: the control run) and run the engines until a violation, each within
    its counted budget (`states` per search, `walk_steps` per walk run); `max_seconds` is an explicit
    wall-clock cap on the whole hunt (None: none)."""
    from kverify.reports.record import from_trace
    from kverify.reports.writer import slug, write_report

    comp = B.get(behaviour).component if behaviour else "control"
    row = ZooRow(name=behaviour or "(none)", component=comp, caught=False)
    models = [m for m in candidates(behaviour) if models is None or m in models]
    if not models:
        row.note = "no model or world implements this behaviour"
        return row
    t0 = time.monotonic()
    beh = frozenset([behaviour]) if behaviour else frozenset()
    pairs = plan(behaviour, models, engines)
    hinted_pairs = {(e, m) for m in models for e in [_hinted_engine(m, behaviour)] if e}
    deadline = None if max_seconds is None else t0 + max_seconds
    for engine, name in pairs:
        if deadline is not None and time.monotonic() >= deadline:
            row.note = f"--max-seconds {max_seconds:g} reached before every engine ran (inconclusive)"
            row.seconds = round(time.monotonic() - t0, 2)
            return row
        left = None if deadline is None else deadline - time.monotonic()
        hinted = (engine, name) in hinted_pairs
        proto = registry.build(name, hunt_params(name, behaviour), beh)
        if engine == "explore":
            found = _finding_explore(proto, states * (HINTED_FACTOR if hinted else 1), seed, left)
        elif engine == "hypothesis":
            found = _finding_hypothesis(proto, seed, name)
        else:
            found = _finding_walk(proto, walk_steps * (HINTED_FACTOR if hinted else 1), seed, deadline=deadline)
        if found is None:
            continue
        violation, actions, init_index, walk_seed = found
        row.caught, row.invariant, row.engine, row.model = True, violation.invariant, engine, name
        row.trace_length = len(actions)
        row.seconds = round(time.monotonic() - t0, 2)
        if out_dir:
            cx = from_trace(proto, actions, violation, engine=engine, seed=walk_seed if walk_seed is not None else seed,
                            init_index=init_index, model_name=name)
            row.report = write_report(cx, os.path.join(out_dir, slug(row.name)))
        return row
    row.seconds = round(time.monotonic() - t0, 2)
    row.note = "no engine found a violation"
    return row
