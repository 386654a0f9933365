"""The TLA+ specs in specs/ against the Python models, by name (the `tla` parser; no Java needed).

Every spec parses; its model variables, the actions named in Next, its invariant operators and its
constants match the model; and when one side changes without the other the comparison names the
difference (checked on mutated copies of the specs and of the Python side)."""
from __future__ import annotations

import dataclasses
import os

import pytest

from kverify.tla import cfg as cfgmod
from kverify.tla import models, names
from kverify.tla import spec as specmod

MODELS = sorted(models.SPEC_OF)


@pytest.fixture(scope="module")
def python_sides():
    return {m: models.python_side(m) for m in MODELS}


def _source(model):
    with open(models.spec_file(model), encoding="utf-8") as fh:
        return fh.read()


def _parse(text, model):
    return specmod.parse_source(text, models.spec_file(model), search_dir=specmod.SPECS_DIR)


def _cfgs(model):
    return [cfgmod.parse_file(p) for p in models.cfg_files(model)]


@pytest.mark.parametrize("model", MODELS)
def test_spec_parses_with_init_next_and_model_variables(model):
    info = specmod.parse_file(models.spec_file(model))
    assert info.name == models.SPEC_OF[model]
    for op in ("Init", "Next"):
        assert op in info.operators, f"{info.name} has no {op}"
    assert info.variables, f"{info.name} declares no VARIABLES"
    assert set(models.spec_model_variables(info)) <= set(info.variables)


@pytest.mark.parametrize("model", MODELS)
def test_spec_matches_model_by_name(model, python_sides):
    info = specmod.parse_file(models.spec_file(model))
    diffs = models.differences(python_sides[model], info, _cfgs(model))
    assert diffs == [], "\n".join(diffs)


@pytest.mark.parametrize("model", MODELS)
def test_every_cfg_is_a_bound_of_the_model(model):
    cfgs = _cfgs(model)
    assert len(cfgs) >= 3, f"{model}: fewer than three bounds in specs/"
    bounds = [cfgmod.bound(model, c) for c in cfgs]
    assert any(b.behaviours for b in bounds), f"{model}: no bound with a historical behaviour on"
    for c, b in zip(cfgs, bounds):
        assert c.init == "Init" and c.next == "Next", c.path
        assert not b.symmetry, f"{c.path}: the cross-check runs both sides without symmetry"


def test_offsets_spec_instantiates_replication():
    info = specmod.parse_file(models.spec_file("offsets"))
    assert info.instances["R"].name == "Replication"


# --- the comparison names the difference ------------------------------------------------------------
def test_action_dropped_from_next_is_named(python_sides):
    text = _source("group").replace("    \\/ \\E m \\in Slots : Stall(m)\n", "")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert diffs == ["actions: model 'group' takes action 'stall', GroupMembership's Next names no Stall"]


def _with_disjunct(model, name):
    """The model's spec with one more disjunct `name` in Next, defined as a stutter."""
    text = _source(model)
    assert text.count("\nNext ==\n") == 1
    return text.replace("\nNext ==\n", f"\n{name} == UNCHANGED vars\n\nNext ==\n    \\/ {name}\n")


def test_action_only_in_spec_is_named(python_sides):
    for model in ("group", "replication"):
        diffs = models.differences(python_sides[model], _parse(_with_disjunct(model, "Teleport"), model), _cfgs(model))
        assert diffs == [f"actions: {models.SPEC_OF[model]}'s Next names Teleport, model {model!r} never takes action 'teleport'"]


def test_anonymous_disjunct_in_next_is_named(python_sides):
    text = _source("group").replace("    \\/ JoinTimeout\n", "    \\/ JoinTimeout\n    \\/ UNCHANGED vars\n")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert len(diffs) == 1 and "anonymous disjunct" in diffs[0]


def test_renamed_invariant_operator_is_named(python_sides):
    text = _source("group").replace("LeaderInMembers ==", "LeaderIsMember ==")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert "invariants: model 'group' checks 'leader-in-members', spec GroupMembership defines no operator LeaderInMembers" in diffs


def test_missing_step_property_is_named(python_sides):
    text = _source("group").replace("AlwaysValidStateTransition == [][ValidStateTransition]_vars", "")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert diffs == ["invariants: step invariant 'valid-state-transition' needs the property AlwaysValidStateTransition "
                     "== [][ValidStateTransition]_vars in GroupMembership"]


def test_extra_spec_variable_is_named(python_sides):
    text = _source("group").replace("modelVars == <<coord, clients, offsets, persisted, budget, delivered, prev>>",
                                    "modelVars == <<coord, clients, offsets, persisted, budget, delivered, prev, passed>>")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert "variables: spec GroupMembership has variable passed that model 'group''s state does not have" in diffs


def test_extra_constant_is_named(python_sides):
    text = _source("group").replace("    MEMBERS, PARTITIONS,", "    MEMBERS, SPARE, PARTITIONS,")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert diffs == ["constants: spec GroupMembership declares CONSTANT SPARE, which is no parameter or supported behaviour of model 'group'"]


def test_python_side_changes_are_named(python_sides):
    info = specmod.parse_file(models.spec_file("group"))
    py = python_sides["group"]
    grown = dataclasses.replace(py, actions=py.actions | {"heartbeat_storm"},
                                state_invariants=py.state_invariants + ["no-split-brain"],
                                variables=py.variables + ["timers"])
    diffs = models.differences(grown, info, [])
    assert "actions: model 'group' takes action 'heartbeat_storm', GroupMembership's Next names no HeartbeatStorm" in diffs
    assert "invariants: model 'group' checks 'no-split-brain', spec GroupMembership defines no operator NoSplitBrain" in diffs
    assert "variables: model 'group' has state field 'timers', spec GroupMembership has no variable timers in modelVars" in diffs


def test_state_shape_drift_is_named():
    from kverify.model import registry

    state = registry.build("group", {}).init_states()[0]
    _, problems = models.expected_variables("group", state + ("timers",))
    assert problems and "group" in problems[0] and "8 top-level fields" in problems[0]
    assert models.expected_variables("group")[0] == ["coord", "clients", "offsets", "persisted", "budget", "delivered",
                                                     "prev"]
    nested = next(f for f in registry.spec_for("offsets").state_fields if isinstance(f, tuple))   # the replication state
    _, problems = models.expected_variables("offsets", ((1, 2, 3),) + tuple(registry.build("offsets", {}).init_states()[0][1:]))
    assert problems and f"inside offsets's field {nested[0]}" in problems[0]


def test_cfg_missing_an_invariant_is_named(python_sides):
    info = specmod.parse_file(models.spec_file("replication"))
    c = cfgmod.parse_file(models.cfg_files("replication")[0])
    c = dataclasses.replace(c, invariants=[x for x in c.invariants if x != "IRqs"])
    diffs = models.differences(python_sides["replication"], info, [c])
    assert diffs == [f"invariants: model 'replication' checks 'i-rqs', {os.path.basename(c.path)} does not list IRqs under INVARIANTS"]


def test_spec_that_does_not_parse_is_one_line():
    with pytest.raises(specmod.SpecError) as err:
        specmod.parse_source("---- MODULE Broken ----\nVARIABLES x\nInit == x = \n====\n", "Broken.tla")
    assert "Broken.tla" in str(err.value) and "\n" not in str(err.value)


# --- names and .cfg -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,tla", [("committed-offset-safety", "CommittedOffsetSafety"), ("i-dur", "IDur"),
                                      ("kafka-12890-no-sync-barrier", "Kafka12890NoSyncBarrier"),
                                      ("isr-shrinks-to-leader-min-isr-1", "IsrShrinksToLeaderMinIsr1")])
def test_kebab_names_map_both_ways(name, tla):
    assert names.kebab_to_tla(name) == tla
    assert names.tla_to_kebab(tla) == name


def test_action_and_param_names_map_both_ways():
    assert names.action_to_tla("join_timeout") == "JoinTimeout"
    assert names.tla_to_action("UncleanFailover") == "unclean_failover"
    assert names.param_to_tla("max_generation") == "MAX_GENERATION"
    assert names.tla_to_param("CTRL_FAILOVERS") == "ctrl_failovers"
    assert names.step_property("i-epoch") == "AlwaysIEpoch"
    assert names.invariant_of_property("AlwaysValidStateTransition") == "valid-state-transition"


@pytest.mark.parametrize("bad", ["a1b-c", "Upper-case", "double--dash", ""])
def test_irreversible_names_are_refused(bad):
    with pytest.raises(ValueError):
        names.kebab_to_tla(bad)


def test_every_registered_name_maps_reversibly():
    from kverify import behaviours
    from kverify.model import registry

    for b in behaviours.all_behaviours():
        assert names.tla_to_kebab(names.kebab_to_tla(b.name)) == b.name
    for m in MODELS:
        for inv in registry.build(m, {}).invariants():
            assert names.tla_to_kebab(names.kebab_to_tla(inv.name)) == inv.name
        for k in registry.module_for(m).PARAMS:
            assert names.tla_to_param(names.param_to_tla(k)) == k


def test_cfg_bound_round_trips_and_rejects_bad_constants(tmp_path):
    params = {"members": 2, "partitions": 1, "events": 2, "faults": 1, "commits": 1, "max_generation": 3,
              "failover": True, "admin": False}
    text = cfgmod.render("group", params, ["no-generation-bump"], invariants=["LeaderInMembers"])
    b = cfgmod.bound("group", cfgmod.parse_text(text, "x.cfg"))
    assert b.params == params and b.behaviours == {"no-generation-bump"} and not b.symmetry
    with pytest.raises(cfgmod.CfgError, match="WORKERS is no parameter"):
        cfgmod.bound("group", cfgmod.parse_text(text.replace("CONSTANTS", "CONSTANTS\n    WORKERS = 3"), "x.cfg"))
    with pytest.raises(cfgmod.CfgError, match="no TRUE/FALSE for behaviour"):
        cfgmod.bound("group", cfgmod.parse_text(text.replace("    UncleanElection = FALSE\n", ""), "x.cfg"))
    with pytest.raises(cfgmod.CfgError, match="no value for parameter"):
        cfgmod.bound("group", cfgmod.parse_text(text.replace("    MEMBERS = 2\n", ""), "x.cfg"))
    with pytest.raises(cfgmod.CfgError, match="not a behaviour model 'group' supports"):
        cfgmod.bound("group", cfgmod.parse_text(text.replace("CONSTANTS", "CONSTANTS\n    TruncateToHw = TRUE"), "x.cfg"))


def test_missing_allowed_end_is_named(python_sides):
    text = _source("group").replace("    \\/ AllowedEnd\n", "")
    diffs = models.differences(python_sides["group"], _parse(text, "group"), _cfgs("group"))
    assert diffs == ["deadlock: model 'group' restricts its allowed end states (allows_terminal), "
                     "GroupMembership's Next has no AllowedEnd disjunct"]
    text = _with_disjunct("replication", "AllowedEnd")
    diffs = models.differences(python_sides["replication"], _parse(text, "replication"), _cfgs("replication"))
    assert diffs == ["deadlock: Replication's Next has AllowedEnd, but model 'replication' allows every end state"]
