"""Properties of the KIP-848 server-side assignors on generated problems (fixed seed, small sizes).

Every partition of a subscribed topic assigned exactly once, only to subscribers; uniform: no
partition can move to a subscriber with 2+ fewer partitions (homogeneous: loads differ by <= 1),
a member keeps its still-valid partitions up to its quota, and the answer is a fixed point (fed back
as the current target assignment it comes back unchanged); range: each topic split in contiguous
ranges whose sizes differ by at most one, in Kafka's member order (static members first).
Also Kafka 4.0's known instability (KAFKA-18688, fixed in 4.1) reproduced exactly.
"""
from __future__ import annotations

import random

import pytest

from kverify.impl.assignors.problem import java_key
from kverify.impl.consumer.assignors import assign

SEED = 20250318


def generate(rng, assignor):
    topics = {f"t{i}": rng.randint(0, 7) for i in range(rng.randint(1, 4))}
    names = list(topics) + (["gone"] if rng.random() < 0.3 else [])
    homogeneous = rng.random() < 0.4
    common = rng.sample(names, rng.randint(0, len(names)))
    members = []
    for i in range(rng.randint(1, 6)):
        subs = common if homogeneous else rng.sample(names, rng.randint(0, len(names)))
        members.append({"id": f"m{rng.randint(0, 999)}-{i}", "topics": subs, "rack": None,
                        "instance_id": f"i{rng.randint(0, 99)}-{i}" if rng.random() < 0.3 else None,
                        "assigned": []})
    for t in names:
        for p in range(topics.get(t, 3)):
            if rng.random() < 0.6:
                rng.choice(members)["assigned"].append([t, p])
    return {"id": 1, "protocol": "consumer", "assignor": assignor, "topics": topics, "members": members}


def problems(assignor, n=300):
    rng = random.Random(f"{SEED}-{assignor}")
    return [generate(rng, assignor) for _ in range(n)]


def owners_checked(p, answer):
    """Complete, exclusive, subscribed-only; returns {(topic, partition): member}."""
    assert "error" not in answer, answer
    subs = {m["id"]: set(m["topics"]) for m in p["members"]}
    owner = {}
    for mid, tps in answer["assignment"].items():
        for t, q in tps:
            assert t in subs[mid] and q < p["topics"][t], (mid, t, q)
            assert (t, q) not in owner, (t, q)
            owner[(t, q)] = mid
    for t, n in p["topics"].items():
        if any(t in s for s in subs.values()):
            assert all((t, q) in owner for q in range(n)), t
    return owner


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_complete_exclusive_and_subscribed_only(assignor):
    for p in problems(assignor):
        owners_checked(p, assign(p))


def test_uniform_balance_within_kafkas_bound():
    for p in problems("uniform"):
        answer = assign(p)
        owner = owners_checked(p, answer)
        load = {m: len(tps) for m, tps in answer["assignment"].items()}
        subs = {m["id"]: set(m["topics"]) for m in p["members"]}
        if len({frozenset(s) for s in subs.values()}) == 1 and any(subs.values()):
            assert max(load.values()) - min(load.values()) <= 1, answer
        for (t, _q), o in owner.items():
            assert all(load[x] > load[o] - 2 for x in subs if t in subs[x]), (p, answer)


def test_uniform_homogeneous_keeps_valid_partitions_up_to_the_quota():
    checked = 0
    for p in problems("uniform"):
        subs = [frozenset(m["topics"]) for m in p["members"]]
        if len(set(subs)) != 1 or not subs[0]:
            continue
        answer = assign(p)
        total = sum(n for t, n in p["topics"].items() if t in subs[0])
        floor = total // len(subs)
        for m in p["members"]:
            valid = {(t, q) for t, q in m["assigned"] if t in subs[0] and t in p["topics"]}
            kept = valid & {tuple(x) for x in answer["assignment"][m["id"]]}
            assert len(kept) >= min(len(valid), floor), (p, answer)
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_answer_is_a_fixed_point(assignor):
    for p in problems(assignor):
        answer = assign(p)
        again = assign(dict(p, members=[dict(m, assigned=answer["assignment"][m["id"]]) for m in p["members"]]))
        assert again == answer, (p, answer, again)


def test_range_gives_contiguous_ranges_in_kafkas_member_order():
    for p in problems("range"):
        answer = assign(p)
        owners_checked(p, answer)
        order = sorted(p["members"], key=lambda m: (0, java_key(m["instance_id"])) if m["instance_id"] is not None
                       else (1, java_key(m["id"])))
        for t, n in p["topics"].items():
            subscribers = [m["id"] for m in order if t in m["topics"]]
            if not subscribers:
                continue
            got = [sorted(q for tt, q in answer["assignment"][mid] if tt == t) for mid in subscribers]
            quota, extra = divmod(n, len(subscribers))
            start = 0
            for i, parts in enumerate(got):
                size = min(quota + (1 if i < extra else 0), n - start)
                assert parts == list(range(start, start + size)), (p, answer)
                start += size


def test_kafka_4_0_homogeneous_moves_a_partition_of_an_already_balanced_group():
    """KAFKA-18688 (fixed in 4.1): at 4.0 the extra partitions go to the first members in iteration
    order, so a balanced assignment whose extra partition sits with a later member is reshuffled."""
    p = {"id": "k18688", "protocol": "consumer", "assignor": "uniform", "topics": {"t": 3},
         "member_order": "input",
         "members": [{"id": "A", "topics": ["t"], "assigned": [["t", 1]]},
                     {"id": "B", "topics": ["t"], "assigned": [["t", 0], ["t", 2]]}]}
    assert assign(p)["assignment"] == {"A": [["t", 1], ["t", 2]], "B": [["t", 0]]}
