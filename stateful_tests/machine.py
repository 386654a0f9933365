"""Hypothesis rule-based state machines built from a `Protocol` — no second copy of any rule.

`machine_for(name, params, behaviours)` returns a `RuleBasedStateMachine` class whose one rule
draws the next action from `protocol.actions(state)` (so Hypothesis explores exactly the
protocol's enabled actions and shrinks a failure to a short action sequence), and which checks
every invariant (and, for worlds, the refinement mapping) after every step. `run_machine` is the
engine entry point used by the CLI and the bug zoo: seeded, with the example database, returning
the shrunk trace of the first violation.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hyp_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from kverify.invariants.core import Violation
from kverify.model import registry

# Profiles: `quick` for kverify verify --profile quick, `fast` for make test, `ci` for --profile ci, `deep`.
PROFILES = {
    "quick": dict(max_examples=15, stateful_step_count=30),
    "fast": dict(max_examples=60, stateful_step_count=40),
    "ci": dict(max_examples=300, stateful_step_count=60),
    "deep": dict(max_examples=3000, stateful_step_count=150),
}
DATABASE_DIR = os.path.join(".hypothesis", "kverify")


class InvariantBroken(AssertionError):
    """Raised inside the machine when an invariant breaks; carries the (current) trace."""

    def __init__(self, violation: Violation, trace: list, init_index: int):
        super().__init__(f"{violation.invariant} broken at step {violation.step_index}: {violation.message}")
        self.violation = violation
        self.trace = list(trace)
        self.init_index = init_index


def machine_for(name: str, params: Optional[dict] = None, behaviours=frozenset(), *, protocol=None):
    """A RuleBasedStateMachine class over registry protocol `name` (or a given protocol object)."""
    proto = protocol if protocol is not None else registry.build(name, params or {}, behaviours)
    refine = getattr(proto, "check_refinement", None)

    class ProtocolMachine(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.protocol = proto
            self.state = None
            self.trace = []
            self.init_index = 0

        @initialize(data=st.data())
        def start(self, data):
            inits = self.protocol.init_states()
            self.init_index = data.draw(st.integers(0, len(inits) - 1), label="init") if len(inits) > 1 else 0
            self.state = inits[self.init_index]
            self._fail(self.protocol.check_state(self.state, 0))

        @precondition(lambda self: self.state is not None)
        @rule(data=st.data())
        def step(self, data):
            actions = list(self.protocol.actions(self.state))
            if not actions:
                return
            action = data.draw(st.sampled_from(actions), label="action")
            prev, self.state = self.state, self.protocol.step(self.state, action)
            self.trace.append(action)
            i = len(self.trace)
            v = self.protocol.check_step(prev, action, self.state, i) if self.protocol.step_invariants else None
            if v is None:
                v = self.protocol.check_state(self.state, i)
            if v is None and refine is not None:
                v = refine(prev, action, self.state, i)
            self._fail(v)

        def _fail(self, v):
            if v is not None:
                raise InvariantBroken(v, self.trace, self.init_index)

    ProtocolMachine.__name__ = ProtocolMachine.__qualname__ = f"Machine_{name.replace('-', '_')}"
    ProtocolMachine._hypothesis_internal_add_digest = repr((name, sorted((params or {}).items()),
                                                           sorted(behaviours))).encode()
    return ProtocolMachine


@dataclass
class MachineFinding:
    violation: Violation
    trace: list
    init_index: int


def machine_settings(profile: str = "fast", *, database=True, deadline=None, **overrides) -> settings:
    """`database`: True = kverify's example database (.hypothesis/kverify), a path = that folder,
    False = none. Failing examples saved there are replayed first by the next run."""
    opts = dict(PROFILES[profile])
    opts.setdefault("phases", [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    opts.update(overrides)
    db = DirectoryBasedExampleDatabase(database if isinstance(database, str) else DATABASE_DIR) if database else None
    return settings(deadline=deadline, database=db,
                    suppress_health_check=list(HealthCheck), print_blob=False, **opts)


def run_machine(name: str, params: Optional[dict] = None, behaviours=frozenset(), *, seed: int = 0,
                profile: str = "fast", protocol=None, database=True, **overrides) -> Optional[MachineFinding]:
    """Run the machine with a fixed seed; return the shrunk finding, or None if nothing broke."""
    machine = machine_for(name, params, behaviours, protocol=protocol)
    machine = hyp_seed(seed)(machine)
    try:
        run_state_machine_as_test(machine, settings=machine_settings(profile, database=database, **overrides))
    except InvariantBroken as exc:
        return MachineFinding(exc.violation, exc.trace, exc.init_index)
    return None
