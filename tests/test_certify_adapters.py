"""Adapters to the assignors of kafka-python and aiokafka (the optional `clients` extra)."""
import importlib.util
import sys

import pytest

from kverify.certify.check import check_property
from kverify.certify.targets import TargetError, make_target
from kverify.impl.assignors import assign

HAVE_KAFKA = importlib.util.find_spec("kafka") is not None
HAVE_AIOKAFKA = importlib.util.find_spec("aiokafka") is not None


def need(flag, name):
    if not flag:
        print(f"skipping: {name} is not installed (pip install 'kverify[clients]')")
        pytest.skip(f"{name} not installed")


def member(mid, topics, owned=None, generation=None, instance_id=None):
    return {"id": mid, "topics": topics, "owned": owned, "generation": generation, "instance_id": instance_id}


SIMPLE = {"id": "s", "topics": {"t0": 3, "t1": 3}, "members": [member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"])]}


def as_sets(answer):
    return {m: sorted(map(tuple, v)) for m, v in answer["assignment"].items()}


@pytest.mark.parametrize("spec", ["kafka-python:range", "kafka-python:roundrobin", "aiokafka:range", "aiokafka:roundrobin"])
def test_adapters_agree_with_the_reference_on_a_simple_group(spec):
    need(HAVE_KAFKA if spec.startswith("kafka-python") else HAVE_AIOKAFKA, spec.split(":")[0])
    target = make_target(spec)
    assert as_sets(target.solve(SIMPLE)) == as_sets(assign(SIMPLE, spec.split(":")[1]))


@pytest.mark.parametrize("spec", ["kafka-python:sticky", "kafka-python:cooperative-sticky", "aiokafka:sticky"])
def test_sticky_adapters_pass_owned_partitions_and_generations(spec):
    need(HAVE_KAFKA if spec.startswith("kafka-python") else HAVE_AIOKAFKA, spec.split(":")[0])
    problem = {"id": 1, "topics": {"t": 4}, "members": [member("a", ["t"], [["t", 0], ["t", 1], ["t", 2]], 3),
                                                        member("b", ["t"], [["t", 3]], 3)]}
    got = as_sets(make_target(spec).solve(problem))
    assert ("t", 3) in got["b"] and len(got["a"]) == 2 and set(got["a"]) <= {("t", 0), ("t", 1), ("t", 2)}


def test_kafka_python_range_drops_dynamic_members_between_static_ones():
    # kafka-python groups static/dynamic members with itertools.groupby on an unsorted list, so a
    # dynamic member listed before a static one is lost: c0 gets nothing; Kafka's range gives c0 t0-2
    need(HAVE_KAFKA, "kafka-python")
    problem = {"id": 1, "topics": {"t0": 3}, "members": [member("c0", ["t0"]), member("c10", ["t0"], instance_id="i1"),
                                                         member("C3", ["t0"])]}
    assert as_sets(make_target("kafka-python:range").solve(problem))["c0"] == []
    assert as_sets(assign(problem, "range"))["c0"] == [("t0", 2)]
    v = check_property(make_target("kafka-python:range"), "deterministic", seed=3, examples=150)
    assert not v.holds


def test_aiokafka_sticky_holds_validity_claims_on_a_small_run():
    need(HAVE_AIOKAFKA, "aiokafka")
    target = make_target("aiokafka:sticky")
    for name in ("complete", "exclusive", "no-ghosts"):
        assert check_property(target, name, seed=1, examples=20).holds, name


def test_missing_library_is_a_one_line_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "aiokafka", None)  # import now fails as if not installed
    with pytest.raises(TargetError, match=r"aiokafka is not installed \(pip install 'kverify\[clients\]'\)"):
        make_target("aiokafka:range")


def test_kafka_python_roundrobin_crashes_when_the_next_member_skips_a_topic():
    # its skip loop rebinds member_id to the (instance_id, member_id) tuple: KeyError, a `robust` finding
    from kverify.certify.targets import TargetFailure

    need(HAVE_KAFKA, "kafka-python")
    problem = {"id": "r1", "topics": {"T3": 1}, "members": [member("c0", ["t0"]), member("c2", ["T3", "t0"])]}
    with pytest.raises(TargetFailure) as exc:
        make_target("kafka-python:roundrobin").solve(problem)
    assert exc.value.kind == "crash" and "KeyError" in exc.value.message
    assert as_sets(assign(problem, "roundrobin")) == {"c0": [], "c2": [("T3", 0)]}
