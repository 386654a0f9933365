"""specs/ConsumerGroup.tla against model/consumer_group.py: names, verdicts and whole state sets.

The name-level check (variables, one Next disjunct per action, one operator per invariant, every .cfg
checking every invariant) needs no Java; the TLC runs are skipped, with the reason printed, when Java
or tla2tools.jar is missing. Small bounds only (each TLC run a few seconds); the larger shipped .cfg
files run in tests/test_tlc_crosscheck.py / `kverify tlc --compare`.
"""
from __future__ import annotations

import os
import sys

import pytest

from kverify.model import consumer_group as CG
from kverify.tla import cfg as cfgmod
from kverify.tla import crosscheck, forms, models, runner, states  # noqa: F401
from kverify.tla import spec as specmod

MODEL, SPEC = "consumer-group", "ConsumerGroup"
MISSING = runner.tools_available()
if MISSING:
    print(f"tests/test_consumer_group_spec.py: TLC runs skipped: {MISSING}", file=sys.stderr)
needs_tlc = pytest.mark.skipif(bool(MISSING), reason=f"TLC unavailable: {MISSING}")


def cfg(name):
    return os.path.join(specmod.SPECS_DIR, f"{SPEC}_{name}.cfg")


def test_spec_names_match_the_model():
    info = specmod.parse_file(models.spec_file(MODEL))
    cfgs = [cfgmod.parse_file(p) for p in models.cfg_files(MODEL)]
    assert len(cfgs) == 3 + len(CG.SUPPORTS)           # small, default, large_1m, one per behaviour
    assert models.differences(models.python_side(MODEL), info, cfgs) == []
    assert {b for c in cfgs for b in cfgmod.bound(MODEL, c).behaviours} == CG.SUPPORTS


def test_tla_state_is_injective_on_a_small_space():
    from kverify.model import registry
    from kverify.model.search import ExactStore, Visitor, search

    proto = registry.build(MODEL, {"perturbations": 1, "losses": 1, "commits": 1, "grow": True})
    seen = {}

    class Check(Visitor):
        def on_new(self, idx, state, depth, src, action):
            key = forms.to_tla(MODEL, proto, state)
            assert seen.setdefault(key, state) == state
    search(proto, ExactStore(), [Check()], max_states=3000)
    assert len(seen) == 3000


@needs_tlc
@pytest.mark.slow
@pytest.mark.parametrize("name", ["no_epoch_zero_rejoin", "negative_epoch_joining"])
def test_tlc_and_explorer_agree_on_verdict_and_state_set(name):
    cmp = crosscheck.compare(MODEL, cfg(name), timeout=300)
    assert cmp.ok, cmp.differences
    assert cmp.sets is not None and cmp.sets.equal and cmp.sets.tlc_states > 300
    # (every other shipped bound: tests/test_tlc_crosscheck.py; the large one: `kverify tlc --compare`)
    assert cmp.tlc_invariant() == cmp.python_violations()[0][0]


@needs_tlc
@pytest.mark.slow
def test_a_rule_changed_in_the_spec_only_is_named_with_its_first_differing_state(tmp_path):
    text = open(models.spec_file(MODEL)).read()
    # the spec forgets that a fenced member's partitions become free
    broken = text.replace("partitionEpochs |-> [q \\in PartIdx |-> IF q \\in Held(x) THEN Free ELSE g.partitionEpochs[q]],",
                          "partitionEpochs |-> g.partitionEpochs,")
    assert broken != text
    spec = tmp_path / f"{SPEC}.tla"
    spec.write_text(broken)
    (tmp_path / f"{SPEC}_negative_epoch_joining.cfg").write_text(open(cfg("negative_epoch_joining")).read())
    sets = states.compare_sets(MODEL, str(tmp_path / f"{SPEC}_negative_epoch_joining.cfg"), str(spec), timeout=300)
    assert not sets.equal
    assert "partitionEpochs" in "\n".join(sets.lines())
