"""Java iteration orders and Kafka Uuids used by the KIP-848 assignors, against JDK 17's real output.

The expected orders below were printed by OpenJDK 17.0.15 (java.util.HashMap/HashSet/UUID; Kafka's
Uuid.hashCode is java.util.UUID's formula) for the inputs shown; JDK 25 printed the same for them,
and differs only where a pre-sized copy's capacity changes (n = 12, 24, 48: see copy_capacity_jdk17).
"""
from __future__ import annotations

import pytest

from kverify.impl.assignors.java_order import (JavaHashMap, copy_capacity_jdk17, integer_hash, java_hash_set,
                                               java_hash_set_copy, presized_capacity, string_hash)
from kverify.impl.consumer.assignors.topic_ids import (TopicId, derived_topic_id, parse_topic_id,
                                                       uuid_hash)

MEMBERS_PUT = (
    "NZ1BuveK_g3hu-euKMBFDA,5DwIT0u7K_GDne5GbYUstQ,vmphqpoMYRe9Z0Pn3JeFcw,mY5oXohcs2H4bJdGIL6_sA,"
    "EQCydlRXGMMPQGzI46GI_w,8RBZ62-85iZV371vg7iWcA,1tn5v1LYPe7cC_ZiBYNczA,Fq1oLYxHiib0UCeYSVmbVg,"
    "3VOzNRpXK0Dyf3LTfzR7XQ,mXkWLPqVnSgypGGW2SwwRg,l-lTwAJsxKResy-Sgp6NFA,7oJ8lO3JNRfvfaTAzilyzA,"
    "mwYLCLZGCFHzo6BbsQL3Mg,7SNb0Sg-1QIRku1qdUMAxQ,I2da-bbEpRTKyqG2pzZziA,U-4Ge4eEmt8BAKpKUswyOA,"
    "jAgq89XXi5i8wAvSb65RMA,PyP7one04GAsv35em6jsIg,2qk5XLs8sG_q8kVvClcXpg,tbsSdXkJK7KDGwJ5u1Bw8w"
).split(",")
MEMBERS_JDK17 = (
    "8RBZ62-85iZV371vg7iWcA,7oJ8lO3JNRfvfaTAzilyzA,tbsSdXkJK7KDGwJ5u1Bw8w,mXkWLPqVnSgypGGW2SwwRg,"
    "Fq1oLYxHiib0UCeYSVmbVg,NZ1BuveK_g3hu-euKMBFDA,U-4Ge4eEmt8BAKpKUswyOA,EQCydlRXGMMPQGzI46GI_w,"
    "mwYLCLZGCFHzo6BbsQL3Mg,7SNb0Sg-1QIRku1qdUMAxQ,I2da-bbEpRTKyqG2pzZziA,l-lTwAJsxKResy-Sgp6NFA,"
    "2qk5XLs8sG_q8kVvClcXpg,mY5oXohcs2H4bJdGIL6_sA,PyP7one04GAsv35em6jsIg,3VOzNRpXK0Dyf3LTfzR7XQ,"
    "vmphqpoMYRe9Z0Pn3JeFcw,jAgq89XXi5i8wAvSb65RMA,1tn5v1LYPe7cC_ZiBYNczA,5DwIT0u7K_GDne5GbYUstQ"
).split(",")
TOPICS_LISTED = (
    "T1-A4s3VTwiI5CTbEp6POw,T2-B4s3VTwiI5YHbPp6YUe,T3-CU8fVTLCz5YMkLoDQsa,T4-Tw9fVTLCz5HbPp6YQsa,"
    "MdwReGSBhow2Z8vT7UCRCQ,HgGqJqPRdQ37QXjV0aPiyQ,XaPWdZ9b4cLHkNNHgBqioQ,xrUqMh6sRlgO3eQtLopl9g,"
    "S6ad3ZFPOHuJNJF8oHpUjA,Xc3Ea6kXFgI5wQOi22f0wQ,ju8psy-mi6GqXblQHfv7EQ,d7VVkhRR7Fd8qfpeEF9sSg,"
    "2z0v38ezYCcfYkTOPSNvQA"
).split(",")
TOPICS_JDK17 = (
    "T2-B4s3VTwiI5YHbPp6YUe,XaPWdZ9b4cLHkNNHgBqioQ,d7VVkhRR7Fd8qfpeEF9sSg,HgGqJqPRdQ37QXjV0aPiyQ,"
    "S6ad3ZFPOHuJNJF8oHpUjA,MdwReGSBhow2Z8vT7UCRCQ,T4-Tw9fVTLCz5HbPp6YQsa,Xc3Ea6kXFgI5wQOi22f0wQ,"
    "T3-CU8fVTLCz5YMkLoDQsa,2z0v38ezYCcfYkTOPSNvQA,T1-A4s3VTwiI5CTbEp6POw,ju8psy-mi6GqXblQHfv7EQ,"
    "xrUqMh6sRlgO3eQtLopl9g"
).split(",")


def test_hashmap_of_member_ids_iterates_like_jdk17():
    table = JavaHashMap(string_hash)
    for member_id in MEMBERS_PUT:
        table.put(member_id, True)
    assert table.capacity == 32
    assert table.keys() == MEMBERS_JDK17


def test_hashset_copy_of_topic_ids_iterates_like_jdk17():
    ids = [parse_topic_id(t) for t in TOPICS_LISTED]
    got = java_hash_set_copy(uuid_hash, ids).keys()
    assert [TOPICS_LISTED[ids.index(t)] for t in got] == TOPICS_JDK17


@pytest.mark.parametrize("n, jdk17", [
    # new HashSet<>(list) for list[i] = i * 17 % 97 + 16 * (i % 3), printed by JDK 17
    (6, [0, 33, 66, 51, 84, 117]),
    (12, [0, 33, 66, 5, 38, 71, 51, 84, 117, 56, 89, 122]),   # JDK 25: [0, 33, 66, 51, 84, 117, 5, 38, ...]
    (13, [0, 33, 66, 5, 38, 71, 10, 51, 84, 117, 56, 89, 122]),
])
def test_hashset_copy_constructor_capacity_is_jdk17s(n, jdk17):
    items = [i * 17 % 97 + 16 * (i % 3) for i in range(n)]
    assert java_hash_set_copy(integer_hash, items).keys() == jdk17


def test_capacity_rules():
    assert [copy_capacity_jdk17(n) for n in (0, 11, 12, 13, 24)] == [16, 16, 17, 18, 33]
    assert presized_capacity(5) == 7 and presized_capacity(0) == 1
    m = JavaHashMap(integer_hash, 0)                # new HashMap<>(0), then puts
    for i in (5, 1, 9, 3, 17, 33):
        m.put(i, i)
    m.remove(1)
    m.put(1, 1)                                    # re-added: last in its bucket
    assert m.keys() == [9, 17, 33, 1, 3, 5]        # JDK 17 output
    s = java_hash_set(integer_hash, [40, 8, 24, 0, 16, 3], presized_capacity(5))
    assert s.keys() == [40, 8, 24, 0, 16, 3]       # JDK 17 output (capacity 8)


def test_linked_map_iterates_in_insertion_order():
    m = JavaHashMap(integer_hash, linked=True)
    for i in (40, 3, 17):
        m.put(i, True)
    assert m.keys() == [40, 3, 17]


@pytest.mark.parametrize("text, hash_code, msb, lsb", [
    # java.util.UUID(msb, lsb).hashCode() of Kafka's test ids, printed by JDK 17
    ("T1-A4s3VTwiI5CTbEp6POw", 418407434, 5719431763388092168, -8582694466532503749),
    ("T4-Tw9fVTLCz5HbPp6YQsa", -1944536819, 5732963320014916784, -5484127811987435343),
])
def test_kafka_uuid_bits_hash_and_text(text, hash_code, msb, lsb):
    tid = parse_topic_id(text)
    assert tid == TopicId(msb, lsb) and uuid_hash(tid) == hash_code
    assert parse_topic_id(str(tid)) == tid


def test_uuid_order_is_signed_compare():
    a, b = TopicId(-1, 0), TopicId(1, 0)
    assert sorted([b, a]) == [a, b]


@pytest.mark.parametrize("bad", ["", "abc", "T1-A4s3VTwiI5CTbEp6POw==xx", "T1-A4s3VTwiI5CTbEp6PO!"])
def test_bad_uuid_strings_are_refused(bad):
    with pytest.raises(ValueError):
        parse_topic_id(bad)


def test_derived_ids_are_stable_distinct_and_like_random_uuids():
    ids = {derived_topic_id(f"topic-{i}") for i in range(500)}
    assert len(ids) == 500
    assert derived_topic_id("orders") == derived_topic_id("orders")
    assert all(not str(t).startswith("-") and t not in (TopicId(0, 0), TopicId(0, 1)) for t in ids)
    assert str(derived_topic_id("orders")) == "tT_3fm5JW9fu0CEXBmcdzA"


def test_group_spec_member_order_keeps_the_capacity_of_a_replaced_static_member():
    """TargetAssignmentBuilder puts the departing static member's id, then removes it: with 12 members
    left the table stays at 32 buckets (13 keys once), which changes the iteration order."""
    from kverify.impl.consumer.assignors import GroupSpec, MemberSpec
    ids = [f"member-{i}" for i in range(12)]
    members = {m: MemberSpec() for m in ids}
    plain = GroupSpec(members, member_order=ids).member_ids
    replaced = GroupSpec(members, member_order=ids + ["gone-static"]).member_ids
    table16, table32 = JavaHashMap(string_hash), JavaHashMap(string_hash, 32)
    for m in ids:
        table16.put(m, True)
        table32.put(m, True)
    assert plain == table16.keys() and replaced == table32.keys() and plain != replaced


def test_compute_if_absent_resizes_first_on_every_call_and_prepends():
    """JDK 17 (and 25) printed {T2=..., T0=...} with a 4-slot table for: deepCopyAssignment of an empty
    map (new HashMap<>(0)), then computeIfAbsent(t0) twice and computeIfAbsent(t2) twice."""
    t0, t2 = parse_topic_id("6hZSZZZVSrMWygbgnaN3Ng"), parse_topic_id("3eZwXtZ2F01OMYsC2kvUjg")
    m = JavaHashMap(uuid_hash, 0)
    for t in (t0, t0, t2, t2):
        m.put_if_absent(t, dict)
    assert m.capacity == 4 and m.keys() == [t2, t0]
    p = JavaHashMap(uuid_hash, 0)          # put resizes after inserting: 1 -> 2 -> 4 slots (JDK 17 output)
    p.put(t0, 1)
    assert p.capacity == 2 and p.keys() == [t0]
    p.put(t2, 1)
    assert p.capacity == 4 and p.keys() == [t2, t0]
