"""Hypothesis rule-based state machines built from a `Protocol` — no second copy of any rule.

`machine_for(name, params, behaviours)` returns a `RuleBasedStateMachine` class with one rule per
action name of the protocol (from its `ActionTable`, model/actions.py, when it has one; else the
names its `actions()` yields on a few seeded walks, plus one rule `other_action` for any name not
seen), each drawing among the enabled actions of that name. A shrunk failure therefore reads as
the protocol's own steps (`join`, `commit_arrives`, ...). After every step the machine checks every
invariant (and, for worlds, the refinement mapping), reports a deadlock (no action enabled in a
state that is not `allows_terminal`) and turns an exception raised by the protocol into the
violation `exception` with its trace. `sometimes` properties are held across the examples of a
run: `run_machine_report` says which were never reached.

`run_machine_report` is the engine entry point of `kverify verify` (counted budgets: examples and
steps per example, a fixed seed); `run_machine` (used by the zoo and tests) returns only the finding.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Optional

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hyp_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from kverify.invariants.core import Violation
from kverify.model import registry
from kverify.model.walk import crash_violation, walk

# Profiles: `quick` for kverify verify --profile quick, `fast` for make test, `ci` for --profile ci, `deep`.
# (`kverify verify` passes its own counted budgets from kverify/suite/profiles.py as overrides.)
PROFILES = {
    "quick": dict(max_examples=15, stateful_step_count=30),
    "fast": dict(max_examples=60, stateful_step_count=40),
    "ci": dict(max_examples=300, stateful_step_count=60),
    "deep": dict(max_examples=3000, stateful_step_count=150),
}
DATABASE_DIR = os.path.join(".hypothesis", "kverify")
DEADLOCK = "deadlock"
DEADLOCK_MESSAGE = "no action is enabled in a state that must not be terminal"
OTHER = "other_action"         # the rule for action names the protocol did not declare / was not seen using
OBSERVE_WALKS = (20, 40)       # (walks, steps) run to observe action names of a protocol without a table


class InvariantBroken(AssertionError):
    """Raised inside the machine when an invariant breaks; carries the (current) trace."""

    def __init__(self, violation: Violation, trace: list, init_index: int):
        super().__init__(f"{violation.invariant} broken at step {violation.step_index}: {violation.message}")
        self.violation = violation
        self.trace = list(trace)
        self.init_index = init_index


@dataclass
class Tracker:
    """What the examples of one run did together: counts, `sometimes` reached, and the user's time cap."""

    wanted: list                                  # the protocol's `sometimes` properties
    deadline: Optional[float] = None              # time.monotonic(); past it, examples do nothing
    examples: int = 0
    steps: int = 0
    reached: set = field(default_factory=set)
    cut: str = ""                                 # "max-seconds" once the deadline stopped examples

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.cut = "max-seconds"
        return bool(self.cut)


def action_names(proto, name: Optional[str] = None) -> list:
    """The protocol's action names: its ActionTable's (`proto.action_table`, in table order), else
    the names its registry spec declares (sorted), else those seen on a few seeded walks (first
    appearance order over sorted names per walk: deterministic)."""
    table = proto.action_table
    if table is not None:
        return [a.name for a in table.actions]
    if name in registry.ENTRIES:
        declared = getattr(registry.spec_for(name), "action_names", None)
        if declared:
            return sorted(declared)
    seen: dict = {}
    walks, steps = OBSERVE_WALKS
    for seed in range(walks):
        res = walk(proto, seed, steps, track_sometimes=False, memo=False)
        for n in sorted(res.actions):
            seen.setdefault(n, None)
    return list(seen)


def _ident(name: str, taken: set) -> str:
    base = re.sub(r"\W", "_", str(name)) or "action"
    if base[0].isdigit():
        base = "a_" + base
    out, k = base, 2
    while out in taken:
        out, k = f"{base}_{k}", k + 1
    taken.add(out)
    return out


def machine_for(name: str, params: Optional[dict] = None, behaviours=frozenset(), *, protocol=None,
                tracker: Optional[Tracker] = None):
    """A RuleBasedStateMachine class over registry protocol `name` (or a given protocol object)."""
    proto = protocol if protocol is not None else registry.build(name, params or {}, behaviours)
    refine = proto.check_refinement
    track = tracker if tracker is not None else Tracker(list(proto.sometimes()))
    names = action_names(proto, name)
    known = set(names)

    class ProtocolMachine(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            _all_rules_enabled(self)
            self.protocol = proto
            self.state = None
            self.trace = []
            self.init_index = 0
            self.enabled: dict = {}          # rule key (action name or OTHER) -> enabled actions

        @initialize(data=st.data())
        def start(self, data):
            if track.out_of_time():
                return                       # the run's --max-seconds is spent: this example does nothing
            track.examples += 1
            try:
                inits = self.protocol.init_states()
            except Exception as exc:
                raise InvariantBroken(crash_violation(exc, 0), [], 0) from None
            self.init_index = data.draw(st.integers(0, len(inits) - 1), label="init") if len(inits) > 1 else 0
            self._arrive(inits[self.init_index], 0, initial=True)

        def _apply(self, action):
            i = len(self.trace) + 1
            self.trace.append(action)
            track.steps += 1
            prev = self.state
            try:
                nxt = self.protocol.step(prev, action)
                v = self.protocol.check_step(prev, action, nxt, i) if self.protocol.step_invariants else None
                if v is None:
                    v = self.protocol.check_state(nxt, i)
                if v is None and refine is not None:
                    v = refine(prev, action, nxt, i)
            except Exception as exc:
                v = crash_violation(exc, i)
            self._fail(v)
            self._arrive(nxt, i)

        def _arrive(self, state, i, initial=False):
            """Enter `state` (after step i): sometimes reached, enabled actions, deadlock."""
            self.state = state
            try:
                if initial:
                    self._fail(self.protocol.check_state(state, 0))
                for prop in track.wanted:
                    if prop.name not in track.reached and prop.predicate(state):
                        track.reached.add(prop.name)
                enabled: dict = {}
                for a in self.protocol.actions(state):
                    enabled.setdefault(a[0] if a[0] in known else OTHER, []).append(a)
                stuck = not enabled and not self.protocol.allows_terminal(state)
            except InvariantBroken:
                raise
            except Exception as exc:
                raise InvariantBroken(crash_violation(exc, i), self.trace, self.init_index) from None
            self.enabled = enabled
            if stuck:
                self._fail(Violation(DEADLOCK, DEADLOCK_MESSAGE, i))

        def _fail(self, v):
            if v is not None:
                raise InvariantBroken(v, self.trace, self.init_index)

        @precondition(lambda self: not self.enabled)
        @rule()
        def idle(self):
            """Valid only where no action is enabled (an allowed end state, or an example the time cap
            stopped): Hypothesis needs one valid rule in every state."""

    taken = {"idle", "start"} | set(dir(RuleBasedStateMachine))
    for key in [*names, OTHER]:
        ident = _ident(key, taken)
        fire = _rule_for(key, ident)
        setattr(ProtocolMachine, "rule_" + ident, fire)

    ProtocolMachine.__name__ = ProtocolMachine.__qualname__ = f"Machine_{name.replace('-', '_')}"
    ProtocolMachine._hypothesis_internal_add_digest = repr((name, sorted((params or {}).items()),
                                                           sorted(behaviours))).encode()
    ProtocolMachine.rule_names = [*names, OTHER]
    return ProtocolMachine


def _all_rules_enabled(machine) -> None:
    """Turn Hypothesis' swarm testing off for this machine. Swarm testing disables a random subset of
    rules per example; with one rule per action name, a state whose enabled actions all belong to
    disabled rules ends the example as invalid, so examples would die after a few steps. The
    protocol's own guards already restrict the rules; every rule stays available (as with one rule
    for all actions). Reaches into Hypothesis' rule strategy: without that attribute, swarm stays on."""
    from hypothesis.strategies._internal.featureflags import FeatureFlags

    strategy = getattr(machine, "_rules_strategy", None)
    if strategy is not None and hasattr(strategy, "enabled_rules_strategy"):
        strategy.enabled_rules_strategy = st.just(FeatureFlags())


def _rule_for(key: str, ident: str):
    """The rule firing one enabled action named `key` (drawn among them when there are several)."""

    def fire(self, data):
        acts = self.enabled[key]
        self._apply(data.draw(st.sampled_from(acts), label=key) if len(acts) > 1 else acts[0])

    fire.__name__ = fire.__qualname__ = ident
    return precondition(lambda self: key in self.enabled)(rule(data=st.data())(fire))


@dataclass
class MachineFinding:
    violation: Violation
    trace: list
    init_index: int


@dataclass
class MachineRun:
    """One seeded run of a machine: the finding (if any) and what the examples covered."""

    finding: Optional[MachineFinding]
    examples: int                 # examples executed (shrinking included)
    steps: int                    # actions applied over all examples
    reached: list                 # `sometimes` properties reached by some example
    unreached: list               # ... and those no example reached
    rules: list                   # the machine's rules (action names)
    cut: str = ""                 # "max-seconds" when the user's cap stopped examples


def machine_settings(profile: str = "fast", *, database=True, deadline=None, **overrides) -> settings:
    """`database`: True = kverify's example database (.hypothesis/kverify), a path = that folder,
    False = none. Failing examples saved there are replayed first by the next run."""
    opts = dict(PROFILES[profile])
    opts.setdefault("phases", [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    opts.update(overrides)
    db = DirectoryBasedExampleDatabase(database if isinstance(database, str) else DATABASE_DIR) if database else None
    return settings(deadline=deadline, database=db,
                    suppress_health_check=list(HealthCheck), print_blob=False, **opts)


def run_machine_report(name: str, params: Optional[dict] = None, behaviours=frozenset(), *, seed: int = 0,
                       profile: str = "fast", protocol=None, database=True, stop_at: Optional[float] = None,
                       **overrides) -> MachineRun:
    """Run the machine with a fixed seed. `stop_at` (time.monotonic()) is the user's time cap: past
    it the remaining examples do nothing and the run says it was cut. Overrides go to Hypothesis'
    settings (`max_examples`, `stateful_step_count`, `phases`, ...)."""
    proto = protocol if protocol is not None else registry.build(name, params or {}, behaviours)
    tracker = Tracker(list(proto.sometimes()), deadline=stop_at)
    machine = machine_for(name, params, behaviours, protocol=proto, tracker=tracker)
    machine = hyp_seed(seed)(machine)
    finding = None
    try:
        run_state_machine_as_test(machine, settings=machine_settings(profile, database=database, **overrides))
    except InvariantBroken as exc:
        finding = MachineFinding(exc.violation, exc.trace, exc.init_index)
    wanted = [p.name for p in tracker.wanted]
    return MachineRun(finding, tracker.examples, tracker.steps, [n for n in wanted if n in tracker.reached],
                      [n for n in wanted if n not in tracker.reached], list(machine.rule_names), tracker.cut)


def run_machine(name: str, params: Optional[dict] = None, behaviours=frozenset(), *, seed: int = 0,
                profile: str = "fast", protocol=None, database=True, **overrides) -> Optional[MachineFinding]:
    """Run the machine with a fixed seed; return the shrunk finding, or None if nothing broke."""
    return run_machine_report(name, params, behaviours, seed=seed, profile=profile, protocol=protocol,
                              database=database, **overrides).finding
