"""Re-execute a counterexample record and say whether the violation still happens.

A record from a protocol engine (explore, walk, spark, hypothesis) is replayed by rebuilding the
protocol from the registry (model, params, behaviours) and re-applying the trace's actions.
Records of other engines (assignor certification, Z3) name a replayer in `extra["replayer"]`
("module:function" taking the record and returning (reproduced, message)).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from kverify.reports.record import Counterexample


@dataclass
class ReplayOutcome:
    reproduced: bool      # the same invariant breaks at the same step
    message: str          # one line for a person


def replay_record(cx: Counterexample) -> ReplayOutcome:
    custom = cx.extra.get("replayer") if isinstance(cx.extra, dict) else None
    if custom:
        mod, _, fn = custom.partition(":")
        reproduced, msg = getattr(importlib.import_module(mod), fn)(cx)
        return ReplayOutcome(bool(reproduced), msg)
    from kverify.model import registry
    from kverify.model.walk import replay

    protocol = registry.build(cx.model, cx.params, cx.behaviours)
    try:
        _, violation = replay(protocol, cx.actions, cx.init_index)
    except ValueError as exc:
        return ReplayOutcome(False, f"no longer reproduces: the trace cannot be executed any more ({exc})")
    if violation is None:
        return ReplayOutcome(False, f"no longer reproduces: all {len(cx.actions)} steps run and `{cx.invariant}` holds")
    if violation.invariant == cx.invariant and violation.step_index == cx.violation_step:
        return ReplayOutcome(True, f"reproduced: `{cx.invariant}` breaks at step {cx.violation_step}: {violation.message}")
    return ReplayOutcome(False, f"changed: now `{violation.invariant}` breaks at step {violation.step_index} "
                                f"(recorded: `{cx.invariant}` at step {cx.violation_step})")
