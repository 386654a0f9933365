"""Seeded random request sequences against the coordinator, checking its internal invariants after
every step (digest §10.1-10.3, 10.7): legal states, generation never decreases, leader is a member,
pending and joined members are disjoint, the static map is a bijection onto static members, the
awaiting-join counter is exact, no response is delivered twice, copies replay identically."""
import random

import pytest

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from coordinator_harness import Harness
from kverify.impl.coordinator.messages import TopicPartition
from kverify.impl.coordinator.states import ALL_STATES, COMPLETING_REBALANCE, STABLE

G = "groupId"
PROTOCOL_CHOICES = [(("range", b""),), (("range", b"\x01"),), (("range", b""), ("roundrobin", b"")),
                    (("roundrobin", b""), ("range", b""))]


def check(h, last_gen):
    g = h.c.group(G)
    if g is None:
        return last_gen
    assert g.state in ALL_STATES
    assert g.generation_id >= last_gen, "generation went backwards"
    members = g.members
    if members:
        assert g.leader_id in members, f"leader {g.leader_id} is not a member"
    else:
        assert g.leader_id is None
    assert not (g.pending_members & set(members))
    statics = {m.group_instance_id: mid for mid, m in members.items() if m.group_instance_id is not None}
    assert statics == dict(g.static_members)
    assert g.num_awaiting_join == sum(1 for m in members.values() if m.awaiting_join)
    if g.state in (COMPLETING_REBALANCE, STABLE):
        assert not any(m.awaiting_join for m in members.values())
    if g.state != COMPLETING_REBALANCE:
        assert not any(m.awaiting_sync for m in members.values())
    return g.generation_id


def step(h, rng, instances):
    g = h.c.group(G)
    mids = list(g.members) if g else []
    pending = sorted(g.pending_members) if g else []
    gen = g.generation_id if g else 0
    gen = gen if rng.random() < 0.9 else gen + rng.choice([-1, 1])
    op = rng.randrange(10)
    protocols = rng.choice(PROTOCOL_CHOICES)
    if op == 0:
        h.join(G, protocols=protocols, require_known=rng.random() < 0.7)
    elif op == 1 and pending:
        h.join(G, member_id=rng.choice(pending), protocols=protocols)
    elif op == 2 and mids:
        m = rng.choice(mids)
        h.join(G, member_id=m, instance_id=g.members[m].group_instance_id, protocols=protocols)
    elif op == 3:
        h.join(G, instance_id=rng.choice(instances), require_known=False, protocols=protocols)
    elif op == 4 and mids:
        m = rng.choice(mids)
        assignment = {x: bytes([i]) for i, x in enumerate(mids)} if g.leader_id == m else {}
        h.sync(G, gen, m, assignment, instance_id=g.members[m].group_instance_id)
    elif op == 5 and mids:
        h.heartbeat(G, gen, rng.choice(mids))
    elif op == 6 and (mids or pending):
        who = rng.choice(mids + pending)
        if rng.random() < 0.3 and who in g.members and g.members[who].group_instance_id:
            h.leave(G, ("", g.members[who].group_instance_id))
        else:
            h.leave(G, who)
    elif op == 7 and mids:
        h.commit(G, gen, rng.choice(mids), {TopicPartition("t", rng.randrange(3)): rng.randrange(1000)})
    else:
        h.advance(rng.choice([1, 10, 51, 120, 301, 501, 2000]))


@pytest.mark.parametrize("seed", range(12))
def test_random_sequences_keep_invariants(seed):
    print(f"seed={seed}")
    rng = random.Random(seed)
    h = Harness(GroupCoordinator(CoordinatorConfig(
        group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, group_max_size=4,
        offsets_expiration_enabled=False)))
    instances = ["i1", "i2", "i3"]
    last_gen = 0
    states = set()
    for i in range(400):
        step(h, rng, instances)
        last_gen = check(h, last_gen)
        g = h.c.group(G)
        if g:
            states.add(g.state)
        if i == 200:
            fork = h.c.copy()
            assert fork.snapshot() == h.c.snapshot()
    assert {"PreparingRebalance", "CompletingRebalance"} <= states, f"seed {seed} never rebalanced: {states}"


def test_some_seed_reaches_every_live_state():
    seen = set()
    for seed in range(12):
        rng = random.Random(seed)
        h = Harness(GroupCoordinator(CoordinatorConfig(
            group_min_session_timeout_ms=10, group_initial_rebalance_delay_ms=50, offsets_expiration_enabled=False)))
        for _ in range(400):
            step(h, rng, ["i1", "i2"])
            if h.c.group(G):
                seen.add(h.c.group(G).state)
    assert seen >= {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable"}
