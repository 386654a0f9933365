"""The scenario format layer: strict validation (one-line errors naming scenario and step), defaults,
references, Kafka's partitionFor."""
import json

import pytest

from kverify.conformance.format import (FormatError, kafka_partition_for, load_text,
                                        parse_ref)


def line(steps, **top):
    obj = {"id": "t1", "source": "test", "topic": "join", "config": {}, "steps": steps}
    obj.update(top)
    return json.dumps(obj)


JOIN = {"op": "join", "as": "j1", "group": "groupId", "member_id": ""}


def error_of(text):
    with pytest.raises(FormatError) as exc:
        load_text(text, "f.jsonl")
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_valid_scenario_gets_kafka_test_defaults():
    sc = load_text(line([JOIN, {"op": "advance", "ms": 51}, {"op": "expect", "of": "j1", "error": "NONE"}]))[0]
    j = sc.steps[0]
    assert (j["session_timeout_ms"], j["rebalance_timeout_ms"], j["protocols"]) == (500, 500, [["range", ""]])
    assert (j["require_known_member_id"], j["support_skipping_assignment"], j["client_id"]) == (False, True, "clientId")
    assert sc.config["group_max_size"] == 4 and sc.config["owned_partitions"] == [0]
    assert sc.kinds == {"j1": "join"}


@pytest.mark.parametrize("steps, needle", [
    ([{"op": "jion", "as": "j1", "group": "g", "member_id": ""}], "step 1: unknown op 'jion'"),
    ([dict(JOIN, colour="red")], "step 1: join: unknown field 'colour'"),
    ([{"op": "join", "as": "j1", "group": "g"}], "missing field 'member_id'"),
    ([JOIN, {"op": "expect", "of": "j9", "error": "NONE"}], "step 2: 'of' names undefined label 'j9'"),
    ([JOIN, dict(JOIN, **{"as": "j2", "member_id": "$j3"})], "step 2: join.member_id: reference '$j3' to undefined label 'j3'"),
    ([dict(JOIN, member_id="$j1")], "reference '$j1' to undefined label 'j1'"),
    ([JOIN, dict(JOIN, **{"as": "j2", "member_id": "$j1.member_id+1"})], "+N/-N needs an integer field"),
    ([JOIN, dict(JOIN, **{"as": "j2", "member_id": "$j1.assignment"})], "a join response has no field 'assignment'"),
    ([JOIN, dict(JOIN, **{"as": "j2", "member_id": "$j1..x"})], "malformed reference"),
    ([JOIN, JOIN], "label 'j1' defined twice"),
    ([JOIN, {"op": "expect", "of": "j1", "member_errors": []}], "field 'member_errors' does not apply to a join response"),
    ([JOIN, {"op": "expect", "of": "j1", "completed": False, "error": "NONE"}], "cannot check response fields"),
    ([{"op": "create_group", "group": "g", "state": "Empty", "members": []}], "needs feature 'internal_setup'"),
    ([{"op": "set_log_append_result", "error": "MESSAGE_TOO_LARGE"}], "needs feature 'log_append_error'"),
    ([JOIN, {"op": "expect_group", "group": "groupId", "member_count": 1}], "needs feature 'group_introspection'"),
    ([JOIN, {"op": "expect", "of": "j1", "raises": "IllegalStateException"}], "needs feature 'exception'"),
    ([{"op": "advance", "ms": 5}, dict(JOIN, at_ms=4)], "step 2: 'at_ms' is 4 but the clock is 5"),
    ([{"op": "advance", "ms": -1}], "advance.ms must be a non-negative integer"),
    ([JOIN, {"op": "expect_any", "alternatives": [[JOIN]]}], "inside expect_any"),
    ([dict(JOIN, protocols=[["range", "XYZ"]])], "lowercase hex"),
    ([{"op": "commit", "as": "c1", "group": "g", "offsets": {"foo": {"offset": 1}}}], "not \"<topic>-<partition>\""),
])
def test_bad_steps_rejected_with_one_line_naming_scenario_and_step(steps, needle):
    msg = error_of(line(steps))
    assert msg.startswith("f.jsonl:1: scenario 't1'")
    assert needle in msg


def test_bad_top_level_and_config():
    assert "unknown top-level key 'extra'" in error_of(line([JOIN], extra=1))
    assert "unknown topic 'joins'" in error_of(line([JOIN], topic="joins"))
    assert "unknown config key 'group_max'" in error_of(line([JOIN], config={"group_max": 3}))
    assert "Kafka's partitionFor gives 1" in error_of(line([JOIN], config={"group_partitions": {"otherGroup": 0}}))
    assert "not valid JSON" in error_of("{not json")
    assert "duplicate id" in error_of(line([JOIN]) + "\n" + line([JOIN]))
    assert "no scenario" in error_of("\n\n")


def test_feature_group_state_introspection_suffices_for_state_only():
    ok = line([JOIN, {"op": "expect_group", "group": "groupId", "state": "PreparingRebalance"}],
              features=["group_state_introspection"])
    assert load_text(ok)[0].steps[1]["state"] == "PreparingRebalance"
    full = line([JOIN, {"op": "expect_group", "group": "groupId", "state": "Empty"}], features=["group_introspection"])
    assert load_text(full)


def test_parse_ref():
    r = parse_ref("$j2.generation_id+1")
    assert (r.label, r.field, r.delta) == ("j2", "generation_id", 1)
    r = parse_ref("$j2")
    assert (r.label, r.field, r.delta) == ("j2", "member_id", 0)
    assert parse_ref("$s1.generation_id-3").delta == -3
    assert parse_ref("plain") is None
    with pytest.raises(ValueError):
        parse_ref("$")


def test_kafka_partition_for_matches_the_format_table():
    assert kafka_partition_for("polygenelubricants", 50) == 0
    # coordinator-scenarios.md §2: groupId, deadGroupId, "" -> 0; otherGroup, invalid-group -> 1
    assert [kafka_partition_for(g, 2) for g in ("groupId", "deadGroupId", "", "otherGroup", "invalid-group")] == [0, 0, 0, 1, 1]


def test_reference_types_are_checked():
    hb = {"op": "heartbeat", "as": "h1", "group": "groupId", "member_id": "$j1", "generation": "$j1"}
    assert "reference '$j1' names a str field, an integer needed" in error_of(line([JOIN, hb]))
    hb2 = dict(hb, member_id="$j1.generation_id", generation=1)
    assert "names a int field, a string needed" in error_of(line([JOIN, hb2]))
    ok = dict(hb, generation="$j1.generation_id+1")
    assert load_text(line([JOIN, ok]))[0].steps[1]["generation"] == "$j1.generation_id+1"


def test_random_mutations_never_crash_the_format_layer_or_runner():
    """Seeded mutations of the checked-in scenarios: each is either rejected with a one-line FormatError
    or runs to a verdict without an internal exception escaping (seed printed on failure)."""
    import glob
    import os
    import random

    from kverify.conformance.runner import run_all

    seed = 11
    rnd = random.Random(seed)
    files = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "scenarios", "*.jsonl")))
    lines = [ln for f in files for ln in open(f, encoding="utf-8") if ln.strip()]
    values = [None, 0, -1, 1.5, "", "x", "$", "$j1", "$zz", "$j1.generation_id+1", [], {}, [1], {"a": 1}, True, "ff"]

    def paths(o, p=()):
        if p:
            yield p
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in items:
            yield from paths(v, p + (k,))

    rejected = 0
    for i in range(400):
        obj = json.loads(rnd.choice(lines))
        path = rnd.choice(list(paths(obj)))
        parent = obj
        for k in path[:-1]:
            parent = parent[k]
        if isinstance(parent, dict) and rnd.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = rnd.choice(values)
        try:
            scs = load_text(json.dumps(obj))
        except FormatError as exc:
            assert "\n" not in str(exc)
            rejected += 1
            continue
        for o in run_all(scs).outcomes:
            internal = o.message.startswith("raised ") and not o.message.startswith("raised IllegalStateError")
            assert o.passed or not internal, (seed, i, path, o.message)
    assert 0 < rejected < 400
