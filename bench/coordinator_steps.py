"""Benchmark: coordinator requests handled per second for a 10-member group cycling through
rebalances (JoinGroup x10), SyncGroup x10, Heartbeat x30 and OffsetCommit x10 per cycle.
Also reports copy() and snapshot() rates, which bound the model checkers' step rate.

Usage: python bench/coordinator_steps.py [--seconds S] [--members N] [--json]
"""
from __future__ import annotations

import argparse
import json
import time

from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator
from kverify.impl.coordinator.messages import (
    HeartbeatRequest, JoinGroupRequest, OffsetAndMetadata, OffsetCommitRequest, SyncGroupRequest, TopicPartition)

G = "bench-group"
PROTOCOLS = (("range", b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"),)


def setup(n):
    c = GroupCoordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=0, offsets_expiration_enabled=False))
    mids = []
    for i in range(n):
        r = c.handle(JoinGroupRequest(G, protocols=PROTOCOLS, client_id=f"c{i}", correlation_id=i))
        mids.append(r[0].response.member_id)
    return c, mids


def cycle(c, mids, cid, gen):
    """One rebalance + steady state; returns (requests sent, next correlation id, generation)."""
    sent = 0
    leader_resp = None
    for m in mids:
        cid += 1
        for rep in c.handle(JoinGroupRequest(G, m, protocols=PROTOCOLS, correlation_id=cid)):
            if rep.response.members:
                leader_resp = rep.response
        sent += 1
    if leader_resp is None:          # first round: the initial delayed join completes on the clock
        for rep in c.advance(1):
            if rep.response.members:
                leader_resp = rep.response
    gen = leader_resp.generation_id
    leader = leader_resp.leader_id
    assignment = tuple((m, b"a") for m in mids)
    for m in mids:
        cid += 1
        c.handle(SyncGroupRequest(G, gen, m, assignments=assignment if m == leader else (), correlation_id=cid))
        sent += 1
    for _ in range(3):
        for m in mids:
            cid += 1
            c.handle(HeartbeatRequest(G, gen, m, correlation_id=cid))
            sent += 1
    for i, m in enumerate(mids):
        cid += 1
        c.handle(OffsetCommitRequest(G, gen, m, offsets=((TopicPartition("t", i), OffsetAndMetadata(cid)),),
                                     correlation_id=cid))
        sent += 1
    c.advance(10)
    return sent, cid, gen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--members", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    c, mids = setup(args.members)
    cid, gen, total, cycles = 1000, 0, 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        sent, cid, gen = cycle(c, mids, cid, gen)
        total += sent
        cycles += 1
    elapsed = time.perf_counter() - start
    assert c.group(G).state == "Stable" and len(c.group(G).members) == args.members and gen == cycles
    t0 = time.perf_counter()
    copies = 0
    while time.perf_counter() - t0 < args.seconds / 4:
        c.copy()
        copies += 1
    copy_rate = copies / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    snaps = 0
    while time.perf_counter() - t0 < args.seconds / 4:
        c.snapshot()
        snaps += 1
    snap_rate = snaps / (time.perf_counter() - t0)
    result = {"members": args.members, "requests": total, "cycles": cycles, "seconds": round(elapsed, 3),
              "requests_per_second": round(total / elapsed), "copies_per_second": round(copy_rate),
              "snapshots_per_second": round(snap_rate)}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"coordinator: {result['requests_per_second']} requests/s "
              f"({total} requests, {cycles} rebalance cycles of {args.members} members in {elapsed:.2f}s); "
              f"copy {result['copies_per_second']}/s; snapshot {result['snapshots_per_second']}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
