"""Seeded random walks over the cluster's explicit steps (impl/replication/steps.py): the correct
implementation keeps every acked record on the leader (I-DUR) and keeps replicas equal below their
HWs (I-LM) when crashes do not lose flushed-later data; switched-on behaviours are found by the
same walks. Seeds are printed in failure messages."""
import random

import pytest

from kverify.impl.replication import Cluster, ReplicationConfig
from kverify.impl.replication.steps import apply, enabled_steps

TP = ("t", 0)


def walk(seed, steps, behaviours=(), min_isr=2):
    rng = random.Random(seed)
    c = Cluster((0, 1, 2, 3), ReplicationConfig(min_insync_replicas=min_isr, replica_lag_time_max_ms=100),
                frozenset(behaviours), controller=0)
    c.create_topic("t", 1, 3, assignment={0: (1, 2, 3)})
    c.deliver_all()
    trace = []
    for i in range(steps):
        options = [s for s in enabled_steps(c, values=(i,), advance_ms=60)
                   if not (s[0] in ("crash", "restart") and s[1] == 0)]      # keep the controller up
        weights = [0.05 if s[0] == "crash" else 0.3 if s[0] == "drop" else 1.0 for s in options]
        step = rng.choices(options, weights)[0]
        apply(c, step)
        trace.append(step)
        missing, mismatch = c.missing_acked(TP), c.log_mismatches(TP)
        missing += c.inconsistent_reads(TP)
        mismatch += c.epoch_cache_faults()
        if missing or mismatch:
            return c, trace, (missing, mismatch)
    return c, trace, None


@pytest.mark.parametrize("min_isr", [1, 2])
def test_correct_implementation_never_loses_acked_records(min_isr):
    for seed in range(80):
        _, trace, bad = walk(seed, 300, min_isr=min_isr)
        assert bad is None, f"seed {seed}: {bad} after {trace[-5:]}"


def test_walk_is_deterministic_from_its_seed():
    a, ta, _ = walk(7, 200)
    b, tb, _ = walk(7, 200)
    assert ta == tb and a.snapshot() == b.snapshot()


@pytest.mark.parametrize("behaviour", ["unclean-election", "preferred-election-outside-isr", "truncate-to-hw"])
def test_walks_find_switched_on_behaviours(behaviour):
    for seed in range(150):
        _, trace, bad = walk(seed, 400, behaviours=(behaviour,))
        if bad is not None:
            missing, mismatch = bad
            assert missing or mismatch
            return
    pytest.fail(f"no violation of {behaviour} in 150 seeded walks")


def test_controller_failover_and_reassignment_keep_acked_records():
    """Walks where the controller's broker also hosts replicas and can crash (a new controller is
    then elected by a step), with reassignments of partition t-0 started along the way."""
    for seed in range(30):
        rng = random.Random(seed)
        c = Cluster((1, 2, 3, 4), ReplicationConfig(min_insync_replicas=2, replica_lag_time_max_ms=100),
                    controller=1)
        c.create_topic("t", 2, 3, assignment={0: (1, 2, 3), 1: (2, 3, 4)})
        c.deliver_all()
        for i in range(300):
            options = enabled_steps(c, values=(i,), acks=(-1, 1), advance_ms=60)
            weights = [0.05 if s[0] == "crash" else 0.3 if s[0] == "drop" else 1.0 for s in options]
            step = rng.choices(options, weights)[0]
            apply(c, step)
            if not c.store.reassignments and c.active_controller() is not None and rng.random() < 0.02:
                c.reassign(TP, tuple(rng.sample((1, 2, 3, 4), 3)))
            for tp in (("t", 0), ("t", 1)):
                st = c.state(tp)
                assert c.missing_acked(tp) == [] and c.log_mismatches(tp) == [], f"seed {seed} step {i} {step}"
                assert st.isr and (st.leader < 0 or st.leader in st.isr), f"seed {seed} step {i}: {st}"


def test_copies_share_brokers_until_written_and_never_write_through():
    """Cluster.copy is copy-on-write per broker: along seeded walks over every kind of step, the
    cluster a step was taken from keeps its exact snapshot (and its cached broker keys stay true),
    and brokers the step did not write to are still shared with it."""
    shared_seen = False
    for seed in range(12):
        rng = random.Random(seed)
        c = Cluster((0, 1, 2, 3), ReplicationConfig(min_insync_replicas=2, replica_lag_time_max_ms=100),
                    controller=0)
        c.create_topic("t", 2, 3, assignment={0: (1, 2, 3), 1: (2, 3, 1)})
        c.deliver_all()
        for i in range(120):
            before = c.snapshot()
            keys = [b.key() for _, b in sorted(c.brokers.items())]
            options = enabled_steps(c, values=(i,), acks=(-1, 1), advance_ms=60, lossy=True)
            step = options[rng.randrange(len(options))]
            nxt = c.copy()
            apply(nxt, step)
            assert c.snapshot() == before, f"seed {seed} step {i} {step} wrote through to the original"
            assert [b.key() for _, b in sorted(c.brokers.items())] == keys
            fresh = [(b.id, b.alive, b.epoch, b.shutting_down, b.controller_epoch_seen, b.ctrl_epoch_applied,
                      tuple(r.snapshot() for _, r in sorted(b.replicas.items()))) for _, b in sorted(nxt.brokers.items())]
            assert [b.key() for _, b in sorted(nxt.brokers.items())] == fresh
            shared_seen |= any(nxt.brokers[b] is c.brokers[b] for b in c.brokers)
            c = nxt
    assert shared_seen
