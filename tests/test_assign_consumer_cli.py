"""`kverify assign` with `"protocol": "consumer"` problems (KIP-848 server-side assignors)."""
import io
import json

import pytest

from kverify.cli import main
from kverify.impl.consumer.assignors import assign, topic_id_for

U1 = {"id": "u1", "protocol": "consumer", "assignor": "uniform", "topics": {"t0": 3, "t1": 2},
      "members": [{"id": "m1", "topics": ["t0", "t1"], "rack": "r1", "instance_id": None, "assigned": []},
                  {"id": "m2", "topics": ["t0"], "rack": None, "instance_id": None, "assigned": [["gone", 0]]}]}
C1 = {"id": "c1", "assignor": "range", "topics": {"t0": 2},
      "members": [{"id": "c0", "topics": ["t0"], "owned": None, "generation": None, "instance_id": None}]}


def run(monkeypatch, capsys, lines, *args):
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(x) + "\n" for x in lines)))
    code = main(["assign", *args])
    captured = capsys.readouterr()
    return code, [json.loads(x) for x in captured.out.strip().splitlines()], captured.err


def test_consumer_and_classic_problems_share_one_stream(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, [U1, C1, dict(U1, id="r1", assignor="range"),
                                             dict(C1, id="c2", protocol="classic")])
    assert code == 0
    assert out[0] == {"id": "u1", "assignment": {"m1": [["t1", 0], ["t1", 1]], "m2": [["t0", 0], ["t0", 1], ["t0", 2]]}}
    assert out[1] == out[3] | {"id": "c1"} == {"id": "c1", "assignment": {"c0": [["t0", 0], ["t0", 1]]}}
    assert out[2] == {"id": "r1", "assignment": {"m1": [["t0", 0], ["t0", 1], ["t1", 0], ["t1", 1]], "m2": [["t0", 2]]}}


def test_assignor_override_applies_to_the_matching_protocol(monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, [U1, C1], "--assignor", "range")
    assert code == 0 and out[0]["assignment"]["m2"] == [["t0", 2]] and "assignment" in out[1]
    code, out, err = run(monkeypatch, capsys, [U1, C1], "--assignor", "uniform")
    assert code == 2 and "assignment" in out[0]
    assert "unknown assignor" in out[1]["error"] and "line 2" in err


@pytest.mark.parametrize("change, message", [
    ({"assignor": "sticky"}, "unknown consumer assignor 'sticky'"),
    ({"protocol": "kip-999"}, "unknown protocol"),
    ({"owned": []}, "unknown field(s) owned"),
    ({"topic_ids": {"t0": "not-a-uuid"}}, "topic_ids['t0']"),
    ({"topic_ids": {"t0": "T1-A4s3VTwiI5CTbEp6POw", "t1": "T1-A4s3VTwiI5CTbEp6POw"}}, "same topic id"),
    ({"racks": {"t0": [["a"]]}}, "one list of rack names per partition"),
    ({"racks": {"zz": []}}, "not in 'topics'"),
    ({"member_order": "sorted"}, "'member_order' must be"),
    ({"members": [{"id": "m1", "topics": ["t0"], "assigned": [["t0", 3]]}]}, "has 3 partitions"),
    ({"members": [{"id": "m1", "assigned": [["t0", 0]]}, {"id": "m2", "assigned": [["t0", 0]]}]},
     "also assigned to 'm1'"),
    ({"members": [{"id": "m1"}, {"id": "m1"}]}, "duplicate member id"),
    ({"members": [{"id": "m1", "generation": 3}]}, "unknown field(s) generation"),
])
def test_malformed_consumer_problems_get_one_line_error_answers(monkeypatch, capsys, change, message):
    code, out, err = run(monkeypatch, capsys, [dict(U1, **change), U1])
    assert code == 2
    assert message in out[0]["error"] and out[0]["id"] == "u1" and "\n" not in out[0]["error"]
    assert "assignment" in out[1] and err.count("line 1") == 1


def test_racks_are_accepted_and_do_not_change_the_answer():
    """Kafka 4.0's coordinator answers racksForPartition with the empty set: no rack awareness."""
    racks = {"t0": [["r1"], ["r2"], ["r1", "r2"]], "t1": [["r2"], ["r2"]]}
    for name in ("uniform", "range"):
        p = dict(U1, assignor=name)
        assert assign(dict(p, racks=racks)) == assign(p)


def test_missing_topic_ids_are_the_documented_derived_ids():
    for name in ("uniform", "range"):
        p = dict(U1, assignor=name)
        explicit = dict(p, topic_ids={t: topic_id_for(t) for t in ("t0", "t1", "gone")})
        assert assign(explicit) == assign(p)


def test_member_order_hash_is_kafkas_hashmap_order():
    """TargetAssignmentBuilder's HashMap iterates "A" before "B" whatever the insertion order, so A gets
    the extra partition; with "input" order B (listed first) gets it."""
    p = {"id": 1, "protocol": "consumer", "assignor": "uniform", "topics": {"t": 3},
         "members": [{"id": "B", "topics": ["t"]}, {"id": "A", "topics": ["t"]}]}
    assert assign(p)["assignment"] == {"B": [["t", 2]], "A": [["t", 0], ["t", 1]]}
    assert assign(dict(p, member_order="input"))["assignment"] == {"B": [["t", 0], ["t", 1]], "A": [["t", 2]]}


def test_assigned_order_hash_is_assignment_from_record():
    """Which topic a member over quota keeps depends on its assignment map's order: Kafka's
    Assignment.fromRecord HashMap puts T2-B4s3... before T1-A4s3... (bucket order), a LinkedHashMap
    keeps the listed order (OptimizedUniformAssignmentBuilderTest's mkOrderedAssignment)."""
    p = {"id": 1, "protocol": "consumer", "assignor": "uniform", "topics": {"topic1": 3, "topic2": 3},
         "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe"},
         "member_order": "input",
         "members": [{"id": "A", "topics": ["topic1", "topic2"],
                      "assigned": [["topic1", 0], ["topic1", 1], ["topic2", 0], ["topic2", 1]]},
                     {"id": "B", "topics": ["topic1", "topic2"], "assigned": [["topic1", 2], ["topic2", 2]]}]}
    assert assign(p)["assignment"]["A"] == [["topic1", 0], ["topic2", 0], ["topic2", 1]]
    assert assign(dict(p, assigned_order="input"))["assignment"]["A"] == [["topic1", 0], ["topic1", 1], ["topic2", 0]]


def test_assign_never_raises_on_garbage():
    for junk in (None, [], "x", {"protocol": "consumer"}, {"protocol": "consumer", "assignor": "range",
                                                           "members": "nope"}):
        answer = assign(junk)
        assert set(answer) == {"id", "error"}
