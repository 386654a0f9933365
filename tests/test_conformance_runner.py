"""The scenario runner's own semantics, against the real reference coordinator: every kind of
failure it must detect (double delivery, parked vs delivered, exceptions, counts, alternatives,
implicit expectations) and determinism."""
import glob
import json
import os

from kverify.conformance.adapter import CoordinatorAdapter
from kverify.conformance.format import load_text
from kverify.conformance.runner import run_all, run_scenario

HERE = os.path.dirname(__file__)


def scenario(steps, features=(), **top):
    obj = {"id": "t", "source": "test", "topic": "join", "features": list(features), "config": {}, "steps": steps}
    obj.update(top)
    return load_text(json.dumps(obj))[0]


J = lambda label, member="", **kw: {"op": "join", "as": label, "group": "groupId", "member_id": member, **kw}
ADV = lambda ms: {"op": "advance", "ms": ms}
E = lambda of, **kw: {"op": "expect", "of": of, **kw}


def test_passing_scenario_with_every_check_op():
    sc = scenario([J("j1"), J("j2"), E("j1", completed=False), ADV(51), ADV(51), {"op": "await", "of": "j1"},
                   E("j1", completed=True, error="NONE", generation_id=1, leader_id="$j1", members_count=2),
                   {"op": "expect_error_counts", "of": ["j1", "j2"], "counts": {"NONE": 2, "UNKNOWN_MEMBER_ID": 0}},
                   {"op": "expect_errors_equal", "of": ["j1"], "other": ["j2"]},
                   {"op": "expect_any", "alternatives": [[E("j2", leader_id="$j2")], [E("j2", leader_id="$j1")]]},
                   {"op": "heartbeat", "as": "h1", "group": "groupId", "member_id": "$j2",
                    "generation": "$j1.generation_id"},
                   E("h1", error="NONE"),
                   {"op": "heartbeat", "as": "h2", "group": "groupId", "member_id": "$j2",
                    "generation": "$j1.generation_id+1"},
                   E("h2", error="ILLEGAL_GENERATION"),
                   {"op": "expect_group", "group": "groupId", "state": "CompletingRebalance", "member_ids": ["$j1", "$j2"]},
                   {"op": "expect_group", "group": "nope", "exists": False}],
                  features=["group_introspection"])
    out = run_scenario(sc)
    assert out.passed, out.line_text()


def test_parked_response_expected_delivered_and_vice_versa():
    out = run_scenario(scenario([J("j1"), ADV(51), E("j1", completed=False)]))
    assert not out.passed and out.failed_step == 3 and "expected still parked, but it was delivered" in out.message
    out = run_scenario(scenario([J("j1"), {"op": "await", "of": "j1"}]))
    assert not out.passed and out.message == "response j1 still parked (not delivered)"


def test_counts_alternatives_and_errors_equal_failures():
    base = [J("j1"), J("j2", protocol_type="connect"), ADV(51)]
    out = run_scenario(scenario(base + [{"op": "expect_error_counts", "of": ["j1", "j2"], "counts": {"NONE": 2}}]))
    assert not out.passed and "expected {'NONE': 2}, got {'NONE': 1}" in out.message
    out = run_scenario(scenario(base + [{"op": "expect_errors_equal", "of": ["j1"], "other": ["j2"]}]))
    assert not out.passed and "INCONSISTENT_GROUP_PROTOCOL" in out.message
    out = run_scenario(scenario(base + [{"op": "expect_any", "alternatives": [[E("j1", error="X")], [E("j2", error="Y")]]}]))
    assert not out.passed and "alternative 1: error: expected 'X'" in out.message and "alternative 2" in out.message


def test_exceptions():
    pend = [J("p1", require_known_member_id=True), J("j2", "$p1", instance_id="inst")]
    out = run_scenario(scenario(pend))   # nobody expects the exception: the request step itself fails
    assert not out.passed and out.failed_step == 2 and "IllegalStateException" in out.message
    ok = run_scenario(scenario(pend + [E("j2", raises="IllegalStateException", message_contains=["pending member"])],
                               features=["exception"]))
    assert ok.passed, ok.line_text()
    out = run_scenario(scenario([J("j1"), E("j1", raises="IllegalStateException")], features=["exception"]))
    assert not out.passed and "no exception" in out.message


def test_implicit_expectation_failure_is_flagged():
    out = run_scenario(scenario([J("j1"), ADV(51), E("j1", implicit=True, error="MEMBER_ID_REQUIRED")]))
    assert not out.passed and out.implicit and "(implicit expectation)" in out.line_text()


class DoubleDelivery(CoordinatorAdapter):
    """A broken coordinator that delivers every reply twice."""

    def _record(self, replies):
        super()._record(list(replies or ()) * 2)


def test_double_delivery_detected():
    out = run_scenario(scenario([J("j1", group="")]), adapter_factory=DoubleDelivery)
    assert not out.passed and out.failed_step == 1 and "response j1 delivered twice" in out.message


def test_runs_are_deterministic():
    files = sorted(glob.glob(os.path.join(HERE, "scenarios", "*.jsonl")))
    scs = [sc for f in files for sc in load_text(open(f).read(), f)]
    a = [o.as_json() for o in run_all(scs).outcomes]
    b = [o.as_json() for o in run_all(scs).outcomes]
    assert a == b and len(a) == len(scs)
