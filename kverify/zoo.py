"""The bug zoo: every historical behaviour switched on, hunted by the engines in order of cost.

For a behaviour, the candidate protocols are the registry models that implement it (abstract
models first, then the impl worlds). Engines run in order of cost — the explorer at the model's
small default bounds, then the Hypothesis machine, then seeded random walks (shrunk by delta
debugging) — until one returns a violation; the finding is written as a counterexample record.
A behaviour nobody catches is a defect of the suite (a missing invariant or action). The control
run (`control=True`) switches nothing on and runs the same engines at the same budget: it must
find nothing (no false alarms).
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


def _finding_explore(proto, seconds, seed):
    from kverify.model.explore import explore

    res = explore(proto, max_seconds=seconds, graph=False, stop_on_first=True)
    if res.violations:
        f = res.violations[0]
        return f.violation, f.actions, f.init_index, None
    return None


def _finding_hypothesis(proto, seconds, seed, name):
    from kverify.stateful_tests.machine import run_machine

    found = run_machine(name, protocol=proto, seed=seed, profile="ci", database=False)
    if found:
        return found.violation, found.trace, found.init_index, None
    return None


def _finding_walk(proto, seconds, seed, steps: int = 200):
    from kverify.model.shrink import shrink_trace
    from kverify.model.walk import initial_index, walk

    deadline = time.monotonic() + seconds
    s = seed
    while time.monotonic() < deadline:
        res = walk(proto, s, steps, record_trace=True, track_sometimes=False)
        if res.violation is not None:
            init = initial_index(proto, s)
            shrunk = shrink_trace(proto, res.trace, res.violation.invariant, init, budget=2000)
            return shrunk.violation, shrunk.actions, init, s
        s += 1
    return None


def hunt(behaviour: Optional[str], *, budget: float = 60.0, seed: int = 0, out_dir: Optional[str] = None,
         engines=ENGINES, models=None) -> ZooRow:
    """Switch `behaviour` on (None: the control run) and run the engines until a violation."""
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
    for engine, name in pairs:
        left = budget - (time.monotonic() - t0)
        if left <= 0:
            row.note = f"budget of {budget:.0f}s exhausted"
            row.seconds = round(time.monotonic() - t0, 2)
            return row
        share = left / max(1, len(models)) if engine != "hypothesis" else left
        if engine == "walk" and (engine, name) == pairs[0]:
            share = left                     # the declared way to catch it gets the whole budget
        proto = registry.build(name, hunt_params(name, behaviour), beh)
        if engine == "explore":
            found = _finding_explore(proto, share if (engine, name) in hinted_pairs else min(share, budget / 3), seed)
        elif engine == "hypothesis":
            found = _finding_hypothesis(proto, share, seed, name)
        else:
            found = _finding_walk(proto, share, seed)
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
