"""TLC and the kverify explorer on the same bound, compared.

The bound is the .cfg (kverify/tla/cfg.py turns its CONSTANTS into the model's parameters and
behaviours); symmetry is off on both sides unless the .cfg has a SYMMETRY line. They agree when
1. the verdicts agree: neither finds a violation, both searches complete, and the distinct-state
   counts are equal; or both find one, and TLC's counterexample has the length of the explorer's
   shortest one and violates one of the invariants the explorer found broken at that length (with
   several broken at the same depth TLC reports whichever it meets first); and
2. the WHOLE state sets are equal, every invariant off on both sides (kverify/tla/states.py): a
   rule that differs shows as the first differing state, with its shortest trace, even where no
   verdict depends on it.
The explorer runs with `graph=False`: the recoverability analysis and `sometimes` goals have no
TLC counterpart here (TLC checks safety only in these specs).
"""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field

from kverify.tla import cfg as cfgmod
from kverify.tla import names, runner


@dataclass
class Comparison:
    model: str
    spec: str
    cfg: str
    params: dict
    behaviours: frozenset
    tlc: runner.TlcResult
    explored: object                   # kverify.model.explore.ExploreResult
    explore_seconds: float = 0.0
    differences: list = field(default_factory=list)
    sets: object = None                # kverify.tla.states.SetComparison, None when not run

    @property
    def ok(self) -> bool:
        return not self.differences

    def tlc_invariant(self):
        """The kverify name of what TLC found violated, or None."""
        return tlc_violation_name(self.tlc)

    def python_violations(self) -> list:
        return [(f.invariant, len(f.actions)) for f in self.explored.violations]

    def to_json(self) -> dict:
        return {"model": self.model, "spec": os.path.basename(self.spec), "config": os.path.basename(self.cfg),
                "params": self.params, "behaviours": sorted(self.behaviours), "agree": self.ok,
                "differences": self.differences, "tlc": self.tlc.to_json(),
                "explore": {"distinct_states": self.explored.distinct_states, "complete": self.explored.complete,
                            "seconds": round(self.explore_seconds, 3),
                            "violations": [{"invariant": n, "trace_length": k} for n, k in self.python_violations()]},
                "state_sets": None if self.sets is None else {
                    "equal": self.sets.equal, "tlc": self.sets.tlc_states, "explorer": self.sets.python_states,
                    "only_tlc": self.sets.only_tlc, "only_explorer": self.sets.only_python,
                    "first_difference": self.sets.lines()[1:]}}


def tlc_violation_name(res: runner.TlcResult):
    if not res.violation:
        return None
    kind, name = res.violation
    if kind == "invariant":
        return names.tla_to_invariant(name)
    if kind == "property":
        return names.invariant_of_property(name)
    return kind


def differences(tlc: runner.TlcResult, explored) -> list:
    out = []
    pv = [(f.invariant, len(f.actions)) for f in explored.violations]
    if not explored.complete and not pv:
        out.append(f"the explorer stopped early ({explored.stopped}) without a violation: nothing to compare")
        return out
    if not pv:
        if tlc.violation:
            out.append(f"TLC finds {tlc_violation_name(tlc)} violated after {tlc.trace_length} steps "
                       f"({' -> '.join(tlc.trace)}), the explorer finds no violation")
        elif not tlc.complete:
            out.append("TLC did not complete its search")
        elif tlc.distinct != explored.distinct_states:
            out.append(f"distinct states: TLC {tlc.distinct}, explorer {explored.distinct_states}")
        return out
    shortest = min(k for _, k in pv)
    at_shortest = sorted(n for n, k in pv if k == shortest)
    if not tlc.violation:
        out.append(f"the explorer finds {', '.join(at_shortest)} violated after {shortest} steps, TLC finds no violation "
                   f"({tlc.distinct} distinct states)")
        return out
    name = tlc_violation_name(tlc)
    if tlc.trace_length != shortest:
        out.append(f"counterexample length: TLC {tlc.trace_length} steps ({name}), explorer {shortest} steps "
                   f"({', '.join(at_shortest)})")
    elif name not in at_shortest:
        out.append(f"TLC's {shortest}-step counterexample breaks {name}, the explorer's break {', '.join(at_shortest)}")
    return out


def compare(model: str, cfg_path: str, spec_path: str | None = None, *, workers="1",
            jvm_flags=runner.FAST_START_FLAGS, timeout=None, sets: bool = True) -> Comparison:
    """Run both on the bound of `cfg_path`: the verdicts, then (with `sets`) the whole state sets
    with invariants off (a second TLC run, kverify/tla/states.py)."""
    from kverify.model import registry
    from kverify.model.explore import explore
    from kverify.tla import models, states

    c = cfgmod.parse_file(cfg_path)
    b = cfgmod.bound(model, c)
    spec_path = spec_path or models.spec_file(model)
    graph = None
    with tempfile.TemporaryDirectory(prefix="kverify-xcheck-") as tmp:
        # one TLC run serves both checks when it explores everything (no violation): its state graph is the
        # whole state set; after a violation the set needs a second run with the invariants off
        dump = os.path.join(tmp, "graph") if sets and str(workers) == "1" else None
        tlc = runner.run_tlc(spec_path, cfg_path, workers=workers, jvm_flags=jvm_flags, timeout=timeout,
                             check_deadlock=models.checks_deadlock(model), dump_dot=dump)
        if dump and tlc.complete and not tlc.violation:
            graph = states.graph_of_dump(dump + ".dot", spec_path, cfg_path, tlc.distinct)
    proto = registry.build(model, b.params, b.behaviours)
    t0 = time.monotonic()
    res = explore(proto, symmetry=b.symmetry, graph=False)
    secs = time.monotonic() - t0
    diffs = differences(tlc, res)
    set_cmp = None
    if sets:
        try:
            set_cmp = states.compare_sets(model, cfg_path, spec_path, timeout=timeout, tlc=graph)
        except states.MappingError as exc:
            diffs.append(f"state sets: {exc}")
        else:
            diffs += set_cmp.lines()
    return Comparison(model, spec_path, cfg_path, b.params, b.behaviours, tlc, res, secs, diffs, set_cmp)


def compare_all(model: str, spec_path: str | None = None, *, workers="1", timeout=None, jobs: int = 2) -> list:
    """`compare` on every .cfg shipped with the model's spec (specs/<Spec>_*.cfg), `jobs` at a time:
    what `kverify tlc SPEC --compare` over all bounds reports, one Comparison per .cfg, in file order."""
    from concurrent.futures import ThreadPoolExecutor

    from kverify.model import registry
    from kverify.tla import models

    registry.build(model, {})                 # import once before the threads do
    cfgs = models.cfg_files(model)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda c: compare(model, c, spec_path, workers=workers, timeout=timeout), cfgs))
