"""Certification reaches real-world assignors: a refusal of a valid problem is its own finding (`answers`),
every other property is judged on the problems the target did answer, and realistic scenarios only hold
metadata Kafka can have (no zero-partition topics)."""
import os
import sys

from hypothesis import given, settings
from hypothesis import seed as hseed

from kverify.certify.check import run_check
from kverify.certify.claims import PRESETS
from kverify.certify.scenarios import scenarios
from kverify.certify.targets import TargetError, make_target

HERE = os.path.join(os.path.dirname(__file__), "external_assignors")
REFUSING = f"{sys.executable} {os.path.join(HERE, 'refusing_assignor.py')}"


def test_refusals_do_not_hide_balance_and_stickiness_defects(tmp_path):
    target = make_target(None, REFUSING, timeout=10)
    try:
        verdicts = {v.name: v for v in run_check(target, seed=7, examples=60,
                                                   properties=["answers", "complete", "exclusive", "balanced",
                                                               "sticky"], out_dir=str(tmp_path))}
    finally:
        target.close()
    answers = verdicts["answers"]
    assert not answers.holds and "has no metadata" in answers.message
    problem = answers.counterexample["problem"]
    assert any(t not in problem["topics"] for m in problem["members"] for t in m["topics"])
    for name in ("complete", "exclusive"):
        assert verdicts[name].holds and verdicts[name].judged > 0, name
    for name in ("balanced", "sticky"):
        v = verdicts[name]
        assert not v.holds, name
        # judged on a problem it answered: every subscribed topic exists there
        p = v.counterexample["problem"]
        assert all(t in p["topics"] for m in p["members"] for t in m["topics"]), name
        assert "error" not in v.counterexample["answer"]
    # refusals were seen, and skipped, not failed: on the way to the stickiness defect and by the properties
    # that hold (balanced fails at once, on the scenario kverify/certify/pinned.py plays first)
    for name in ("sticky", "complete", "exclusive"):
        assert verdicts[name].refused > 0, name


def test_a_target_that_answers_nothing_is_inconclusive_not_passed(tmp_path):
    class Refuses:
        def assign(self, problem):
            return {"id": problem["id"], "error": "no"}

    import types
    mod = types.ModuleType("refuses_everything")
    mod.Refuses = Refuses
    sys.modules["refuses_everything"] = mod
    target = make_target("refuses_everything:Refuses")
    v = {x.name: x for x in run_check(target, seed=1, examples=10, properties=["answers", "complete"])}
    assert not v["answers"].holds
    assert v["complete"].inconclusive and v["complete"].status == "inconclusive" and v["complete"].judged == 0


def test_realistic_scenarios_hold_only_metadata_kafka_can_have():
    seen = {"realistic": set(), "stale": set(), "robust": set()}

    for family in seen:
        @settings(max_examples=150, database=None, deadline=None)
        @hseed(3)
        @given(scenarios(family=family))
        def collect(sc):
            seen[family].add(min(sc["topics"].values()))
        collect()
    assert min(seen["realistic"]) >= 1 and min(seen["stale"]) >= 1
    assert 0 in seen["robust"]       # zero-partition topics belong to the robust family


def test_claims_presets():
    t = make_target("range", claims=["eager"])
    assert {p for p, why in t.claims.items() if why is None} == set(PRESETS["eager"])
    t = make_target("cooperative-sticky", claims=["cooperative"])
    assert t.claims["cooperative-safe"] is None and t.claims["sticky"] is None
    try:
        make_target("range", claims=["nope"])
    except TargetError as exc:
        assert "presets" in str(exc)
    else:
        raise AssertionError("an unknown claim must be refused")
