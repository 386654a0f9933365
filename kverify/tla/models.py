"""Which spec states which model, and the name-by-name comparison of the two.

The Python side is derived from the model object, never restated by hand where the model can tell:
- invariants: `protocol.invariants()` (names and kinds); deadlocks: whether the model restricts
  its allowed end states (`allows_terminal` overridden) <-> an `AllowedEnd` disjunct in Next;
- actions: the module's `ACTION_NAMES` if it declares one, else the action names `actions()`
  yields over the state spaces of the spec's bounds (every .cfg shipped with the spec);
- state variables: the module's `STATE_FIELDS` (names of a state's top-level fields) if it declares
  one, else the layout below, which is checked against the shape of the model's initial state (so a
  field added to the Python state without the spec is caught either way).

The TLA+ side comes from the `tla` parser: the module's variables minus its history variables
(those outside `modelVars`, the tuple the VIEW uses), the actions named in `Next`, and the operators
named after invariants (kverify/tla/names.py). `differences(...)` lists every mismatch as one line
naming both sides.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from kverify.model.search import ActionNames, ExactStore, search
from kverify.tla import cfg as cfgmod
from kverify.tla import names
from kverify.tla import spec as specmod

SPEC_OF = {"group": "GroupMembership", "replication": "Replication", "offsets": "OffsetsFailover",
           "consumer-group": "ConsumerGroup"}

# Python state layout when the model module declares no STATE_FIELDS: top-level field names in
# order. ("rs", "replication") = a field holding another model's whole state (its fields become
# TLA+ variables); RENAME gives a TLA+ name to a Python field whose name is taken.
FALLBACK_FIELDS = {
    "group": ("coord", "clients", "offsets", "persisted", "budget", "delivered", "prev"),
    "replication": ("reps", "ctrl", "reqs", "zombie", "hist"),
    "offsets": (("rs", "replication"), "coord", "payloads", "hist"),
}
RENAME = {("offsets", "hist"): "grouphist"}


def model_for_spec(spec_name: str) -> str:
    for model, spec in SPEC_OF.items():
        if spec == spec_name:
            return model
    raise specmod.SpecError(f"no registered model is stated by spec {spec_name!r} (known: {', '.join(SPEC_OF.values())})")


def spec_file(model: str) -> str:
    return os.path.join(specmod.SPECS_DIR, SPEC_OF[model] + ".tla")


def cfg_files(model: str) -> list:
    """The bounds shipped with a model's spec: specs/<Spec>_*.cfg, sorted."""
    return sorted(glob.glob(os.path.join(specmod.SPECS_DIR, SPEC_OF[model] + "_*.cfg")))


def is_large(cfg_path: str) -> bool:
    """A .cfg whose first line (a comment) calls it large: compared by `kverify tlc --compare`, not in tests."""
    with open(cfg_path, encoding="utf-8") as fh:
        first = fh.readline()
    return first.lstrip().startswith("\\*") and "large" in first.lower()


def small_cfg_files(model: str) -> list:
    """The shipped bounds the tests compare (every one not marked large)."""
    return [c for c in cfg_files(model) if not is_large(c)]


def _fields(model: str) -> tuple:
    from kverify.model import registry

    declared = registry.spec_for(model).state_fields
    return tuple(declared) if declared is not None else FALLBACK_FIELDS[model]


def expected_variables(model: str, state=None) -> tuple[list, list]:
    """(TLA+ variable names the spec must have, shape problems). `state` defaults to the model's
    initial state at default parameters; its tuple arity must match the layout."""
    from kverify.model import registry

    problems = []
    fields = _fields(model)
    if state is None:
        state = registry.build(model, {}).init_states()[0]
    if not isinstance(state, tuple) or len(state) != len(fields):
        problems.append(f"state: model {model!r} has {len(state) if isinstance(state, tuple) else '?'} top-level "
                        f"fields, the TLA+ layout knows {len(fields)} ({', '.join(f if isinstance(f, str) else f[0] for f in fields)})")
    out = []
    for i, f in enumerate(fields):
        if isinstance(f, tuple):
            sub_vars, sub_problems = expected_variables(f[1], state[i] if isinstance(state, tuple) and i < len(state) else None)
            out += sub_vars
            problems += [f"{p} (inside {model}'s field {f[0]})" for p in sub_problems]
        else:
            out.append(RENAME.get((model, f), names.field_to_tla(f)))
    return out, problems


def python_actions(model: str, bounds=None, limit: int = 300_000) -> set:
    """Action names the model takes: ACTION_NAMES if declared, else those seen over `bounds`
    (default: the spec's .cfg bounds), by the one BFS loop (model/search/) without invariant checks."""
    from kverify.model import registry

    declared = registry.spec_for(model).action_names
    if declared is not None:
        return set(declared)
    if bounds is None:
        bounds = [cfgmod.bound(model, cfgmod.parse_file(p)) for p in cfg_files(model)]
    names_seen = ActionNames()
    for b in bounds:
        run = search(registry.build(model, b.params, b.behaviours), ExactStore(), [names_seen], max_states=limit + 1)
        if run.stopped:
            raise ValueError(f"bound of {model} too large to collect action names (> {limit} states)")
        for _idx, _action, v in run.found.values():
            raise ValueError(f"{model}: {v.invariant}: {v.message}")
    return names_seen.names


@dataclass
class PythonSide:
    model: str
    variables: list
    shape_problems: list
    actions: set
    state_invariants: list
    step_invariants: list
    checks_deadlock: bool = False       # allows_terminal overridden: some end states are deadlocks


def python_side(model: str, bounds=None) -> PythonSide:
    from kverify.model import registry

    from kverify.model.protocol import Protocol

    p = registry.build(model, {})
    variables, problems = expected_variables(model)
    invs = list(p.invariants())
    return PythonSide(model, variables, problems, python_actions(model, bounds),
                      [i.name for i in invs if i.kind == "state"], [i.name for i in invs if i.kind == "step"],
                      checks_deadlock=checks_deadlock(model))


def checks_deadlock(model: str) -> bool:
    """Whether the explorer reports deadlocks for this model (it restricts its allowed end states)."""
    from kverify.model import registry
    from kverify.model.protocol import Protocol

    return type(registry.build(model, {})).allows_terminal is not Protocol.allows_terminal


def spec_model_variables(info: specmod.ModuleInfo) -> list:
    return info.tuple_names("modelVars") if "modelVars" in info.operators else list(info.variables)


def differences(py: PythonSide, info: specmod.ModuleInfo, cfgs=()) -> list:
    """Every name-level mismatch between the Python model and the spec (and its .cfg files)."""
    out = list(py.shape_problems)
    sname = info.name
    # variables
    svars = spec_model_variables(info)
    for v in py.variables:
        if v not in svars:
            out.append(f"variables: model {py.model!r} has state field {v!r}, spec {sname} has no variable {v} in modelVars")
    for v in svars:
        if v not in py.variables:
            out.append(f"variables: spec {sname} has variable {v} that model {py.model!r}'s state does not have")
    if svars != [v for v in py.variables if v in svars] and not any("variables:" in d for d in out):
        out.append(f"variables: spec {sname} orders modelVars {svars}, model {py.model!r}'s fields are {py.variables}")
    missing_decl = [v for v in svars if v not in info.variables]
    for v in missing_decl:
        out.append(f"variables: {sname}'s modelVars names {v}, which is not a declared VARIABLE")
    # actions
    spec_actions = specmod.next_actions(info)
    has_end = names.END_ACTION in spec_actions
    spec_actions = [a for a in spec_actions if a != names.END_ACTION]
    if py.checks_deadlock and not has_end:
        out.append(f"deadlock: model {py.model!r} restricts its allowed end states (allows_terminal), "
                   f"{sname}'s Next has no {names.END_ACTION} disjunct")
    if has_end and not py.checks_deadlock:
        out.append(f"deadlock: {sname}'s Next has {names.END_ACTION}, but model {py.model!r} allows every end state")
    spec_action_set = set()
    for a in spec_actions:
        if a.startswith("<"):
            out.append(f"actions: {sname}'s Next has an {a[1:-1]} (every disjunct must name an action)")
            continue
        try:
            spec_action_set.add(names.tla_to_action(a))
        except ValueError:
            out.append(f"actions: {sname}'s Next names {a}, which is not a CamelCase action name")
    for a in sorted(py.actions - spec_action_set):
        out.append(f"actions: model {py.model!r} takes action {a!r}, {sname}'s Next names no {names.action_to_tla(a)}")
    for a in sorted(spec_action_set - py.actions):
        out.append(f"actions: {sname}'s Next names {names.action_to_tla(a)}, model {py.model!r} never takes action {a!r}")
    # invariants: one operator each, named after the invariant
    for inv in py.state_invariants + py.step_invariants:
        op = names.invariant_to_tla(inv)
        if op not in info.operators:
            out.append(f"invariants: model {py.model!r} checks {inv!r}, spec {sname} defines no operator {op}")
    for inv in py.step_invariants:
        prop = names.step_property(inv)
        if prop not in info.operators:
            out.append(f"invariants: step invariant {inv!r} needs the property {prop} == [][{names.kebab_to_tla(inv)}]_vars in {sname}")
    # every .cfg checks exactly the model's invariants
    for c in cfgs:
        where = os.path.basename(c.path)
        invs = set()
        for x in c.invariants:
            try:
                invs.add(names.tla_to_invariant(x))
            except ValueError:
                out.append(f"invariants: {where} checks {x}, which is not named after a kverify invariant")
        props = set()
        for x in c.properties:
            try:
                props.add(names.invariant_of_property(x))
            except ValueError:
                out.append(f"invariants: {where} checks property {x}, which is not Always<step invariant>")
        for inv in sorted(set(py.state_invariants) - invs):
            out.append(f"invariants: model {py.model!r} checks {inv!r}, {where} does not list {names.invariant_to_tla(inv)} under INVARIANTS")
        for inv in sorted(invs - set(py.state_invariants)):
            out.append(f"invariants: {where} checks {names.invariant_to_tla(inv)}, which is no state invariant of model {py.model!r}")
        for inv in sorted(set(py.step_invariants) - props):
            out.append(f"invariants: model {py.model!r} checks step invariant {inv!r}, {where} does not list {names.step_property(inv)} under PROPERTIES")
        for inv in sorted(props - set(py.step_invariants)):
            out.append(f"invariants: {where} checks {names.step_property(inv)}, which is no step invariant of model {py.model!r}")
        hist = [v for v in info.variables if v not in svars]
        if hist and c.view != "ModelView":
            out.append(f"variables: {where} needs VIEW ModelView (history variables {', '.join(hist)} must not count as state)")
    # constants: exactly the parameters (minus engine settings) and the supported behaviours
    from kverify.model import registry

    want = {names.param_to_tla(k) for k in registry.spec_for(py.model).params if k not in cfgmod.ENGINE_PARAMS}
    want |= {names.kebab_to_tla(b) for b in registry.supports(py.model)}
    have = set(info.constants)
    for c in sorted(want - have):
        out.append(f"constants: model {py.model!r} has parameter/behaviour {c}, spec {sname} declares no such CONSTANT")
    for c in sorted(have - want):
        out.append(f"constants: spec {sname} declares CONSTANT {c}, which is no parameter or supported behaviour of model {py.model!r}")
    return out
