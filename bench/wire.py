"""Wire benchmark: heartbeat and commit round trips per second over loopback with many client connections,
and the time a 50-member group takes to form and to rebalance, against `kverify broker` (or any broker).

Why: issue 15's load goal (>= 10,000 requests/s on 2 cores) for the reference coordinator served on the
Kafka protocol. The broker runs in its own process (`kverify broker --port 0`, real clock) unless
--bootstrap names one; the load generator is one process driving N connections, each with one request
in flight (closed loop). Requests are encoded once with kafka-python's classes and re-sent as bytes,
so the figures measure the broker, not the generator's encoder.

    .venv/bin/python bench/wire.py [--connections 100] [--seconds 3] [--members 50] [--seed 0]
"""
from __future__ import annotations

import argparse
import os
import random
import select
import struct
import subprocess
import sys
import time

from kafka.protocol.consumer.group import HeartbeatRequest, OffsetCommitRequest

from kverify.wire.client import GroupMember, WireClient, error_name, message


def start_broker(partitions: int, seed: int, checks: bool = True):
    cmd = [sys.executable, "-m", "kverify", "broker", "--port", "0", "--topics", f"t0:{partitions}",
           "--seed", str(seed), "--min-session-timeout-ms", "10", "--initial-rebalance-delay-ms", "0"]
    if not checks:
        cmd.append("--no-checks")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if "listening on" not in line:
        p.kill()
        raise SystemExit(f"bench/wire.py: broker did not start: {line!r} {p.stderr.read()[:300]}")
    hostport = line.split("listening on", 1)[1].split()[0]
    host, _, port = hostport.rpartition(":")
    return p, host, int(port)


def cpu_seconds(pid, part: str = "both") -> float:
    """User + system ("both"), "user" or "system" CPU seconds a process has used so far (Linux /proc), or
    NaN elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        user, system = int(fields[11]), int(fields[12])
        ticks = {"both": user + system, "user": user, "system": system}[part]
        return ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _cpu_line(name, n, secs, broker_cpu, gen_cpu, broker_sys=float("nan")) -> str:
    per = broker_cpu / n * 1e6 if n else float("nan")
    return (f"{name}: {n} round trips in {secs:.2f}s over the connections = {n / secs:,.0f} requests/s; broker CPU "
            f"{broker_cpu:.2f}s (system {broker_sys:.2f}s) = {per:.0f} us/request = "
            f"{n / broker_cpu if broker_cpu else float('nan'):,.0f} requests per broker CPU-second; "
            f"load generator CPU {gen_cpu:.2f}s")


def _frame(msg, corr: int, client_id: str) -> bytes:
    msg.with_header(correlation_id=corr, client_id=client_id)
    return bytes(msg.encode(header=True, framed=True))


def closed_loop(conns: list, frames: list, seconds: float) -> tuple:
    """Each connection re-sends its frame as soon as the previous answer arrived. -> (answers, seconds)."""
    socks = [c.sock for c in conns]
    for s in socks:
        s.setblocking(False)
    bufs = {s.fileno(): bytearray() for s in socks}
    frame_of = {s.fileno(): f for s, f in zip(socks, frames)}
    sock_of = {s.fileno(): s for s in socks}
    answers = 0
    start = time.perf_counter()
    end = start + seconds
    for s, f in zip(socks, frames):
        s.sendall(f)
    while True:
        now = time.perf_counter()
        if now >= end:
            break
        ready, _, _ = select.select(socks, [], [], min(0.05, end - now))
        for s in ready:
            fd = s.fileno()
            try:
                data = s.recv(1 << 16)
            except BlockingIOError:
                continue
            if not data:
                raise SystemExit("bench/wire.py: the broker closed a connection")
            b = bufs[fd]
            b += data
            done = 0
            while len(b) >= 4:
                n = struct.unpack_from(">i", b, 0)[0]
                if len(b) < 4 + n:
                    break
                del b[:4 + n]
                done += 1
            answers += done
            for _ in range(done):
                sock_of[fd].sendall(frame_of[fd])
    elapsed = time.perf_counter() - start
    # every connection has exactly one answer still in flight: read it, so the connections can be reused
    for s in socks:
        s.setblocking(True)
        s.settimeout(10)
        b = bufs[s.fileno()]
        while len(b) < 4 or len(b) < 4 + struct.unpack_from(">i", b, 0)[0]:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise SystemExit("bench/wire.py: the broker closed a connection")
            b += chunk
        s.setblocking(False)
    return answers, elapsed


def drive_group(members: list, assign_partitions: int, timeout: float = 60.0) -> float:
    """Event-driven members (join -> sync -> heartbeat; rejoin on REBALANCE_IN_PROGRESS) until all are stable at one
    generation with every member in it. Returns the seconds it took."""
    start = time.perf_counter()
    state = {id(m): "join" for m in members}
    inflight = {}
    for m in members:
        inflight[id(m)] = ("join", m.send_join())
    while True:
        if time.perf_counter() - start > timeout:
            raise SystemExit("bench/wire.py: the group did not stabilise")
        gens = {m.generation for m in members}
        if all(state[id(m)] == "stable" for m in members) and len(gens) == 1:
            leader = next(m for m in members if m.member_id == m.leader)
            if len(leader.members) == len(members):
                return time.perf_counter() - start
        for m in members:
            kind, cid = inflight[id(m)]
            m.c.poll(0)
            if cid not in m.c.answers:
                continue
            if kind == "join":
                r = m.finish_join(cid)
                err = error_name(r.error_code)
                if err == "NONE":
                    plan = None
                    if m.member_id == m.leader:
                        ids = sorted(x for x, _ in m.members)
                        plan = {x: [("t0", p) for p in range(assign_partitions) if p % len(ids) == i]
                                for i, x in enumerate(ids)}
                    inflight[id(m)] = ("sync", m.send_sync(plan))
                else:
                    inflight[id(m)] = ("join", m.send_join())
            elif kind == "sync":
                r = m.finish_sync(cid)
                if error_name(r.error_code) == "NONE":
                    state[id(m)] = "stable"
                    inflight[id(m)] = ("hb", m.c.send(m.c.build(HeartbeatRequest, group_id=m.group,
                                                                generation_id=m.generation, member_id=m.member_id)))
                else:
                    state[id(m)] = "join"
                    inflight[id(m)] = ("join", m.send_join())
            else:
                r = m.c.take(cid)
                if error_name(r.error_code) == "NONE":
                    inflight[id(m)] = ("hb", m.c.send(m.c.build(HeartbeatRequest, group_id=m.group,
                                                                generation_id=m.generation, member_id=m.member_id)))
                else:
                    state[id(m)] = "join"
                    inflight[id(m)] = ("join", m.send_join())
        select.select([m.c.sock for m in members], [], [], 0.002)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=3.0, help="length of each throughput phase")
    ap.add_argument("--members", type=int, default=50, help="size of the group whose rebalance is timed")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--bootstrap", default=None, help="HOST:PORT of a running broker (default: start kverify broker)")
    ap.add_argument("--no-checks", action="store_true", help="start kverify broker without its online checks")
    a = ap.parse_args(argv)
    if a.connections < 1 or a.members < 2 or a.seconds <= 0:
        print("bench/wire.py: --connections >= 1, --members >= 2, --seconds > 0", file=sys.stderr)
        return 2
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 30)
    print(f"seed {seed}")
    rnd = random.Random(seed)
    proc = None
    if a.bootstrap:
        host, _, port = a.bootstrap.rpartition(":")
        port = int(port)
    else:
        proc, host, port = start_broker(max(a.members, 2), seed, checks=not a.no_checks)
    try:
        load = os.getloadavg()
        print(f"load: {os.cpu_count()} cpus, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start; "
              f"broker at {host}:{port} ({'given' if proc is None else 'kverify broker, own process, real clock, online checks ' + ('off' if a.no_checks else 'on')})")
        # 1. N one-member groups, each member on its own connection: heartbeats, then commits
        members = []
        for i in range(a.connections):
            m = GroupMember(WireClient(host, port, client_id=f"bench{i}"), f"bench-{seed}-{i}", topics=("t0",),
                            session_timeout_ms=30000, rebalance_timeout_ms=30000)
            m.finish_join(m.send_join())
            m.finish_sync(m.send_sync({m.member_id: [("t0", 0)]}))
            members.append(m)
        hb = [_frame(message(HeartbeatRequest, 4, group_id=m.group, generation_id=m.generation,
                             member_id=m.member_id), 1, m.c.client_id) for m in members]
        pid = proc.pid if proc is not None else None
        c0, s0, g0 = cpu_seconds(pid), cpu_seconds(pid, "system"), time.process_time()
        n, secs = closed_loop([m.c for m in members], hb, a.seconds)
        print(_cpu_line(f"heartbeat ({a.connections} connections)", n, secs, cpu_seconds(pid) - c0,
                        time.process_time() - g0, cpu_seconds(pid, "system") - s0))
        cm = [_frame(message(OffsetCommitRequest, 8, group_id=m.group, generation_id_or_member_epoch=m.generation,
                             member_id=m.member_id,
                             topics=[{"name": "t0", "partitions": [{"partition_index": 0,
                                                                     "committed_offset": rnd.randrange(1 << 20),
                                                                     "committed_metadata": ""}]}]), 1, m.c.client_id)
              for m in members]
        c0, s0, g0 = cpu_seconds(pid), cpu_seconds(pid, "system"), time.process_time()
        n2, secs2 = closed_loop([m.c for m in members], cm, a.seconds)
        print(_cpu_line(f"commit ({a.connections} connections)", n2, secs2, cpu_seconds(pid) - c0,
                        time.process_time() - g0, cpu_seconds(pid, "system") - s0))
        ok = members[0].commit({("t0", 0): 5})
        assert ok == {("t0", 0): "NONE"}, ok
        for m in members:
            m.c.close()
        # 2. one group of --members: formation, then a rebalance when one more member joins
        group = f"bench-big-{seed}"
        big = [GroupMember(WireClient(host, port, client_id=f"m{i}"), group, session_timeout_ms=30000,
                           rebalance_timeout_ms=30000) for i in range(a.members)]
        t_form = drive_group(big, a.members)
        print(f"group of {a.members}: formed (all joined, synced, same generation) in {t_form * 1000:.0f} ms")
        extra = GroupMember(WireClient(host, port, client_id="late"), group, session_timeout_ms=30000,
                            rebalance_timeout_ms=30000)
        t_reb = drive_group(big + [extra], a.members)
        print(f"group of {a.members}: rebalance after one more member joined, until all {a.members + 1} are synced "
              f"at the new generation {extra.generation}: {t_reb * 1000:.0f} ms")
        for m in big + [extra]:
            m.c.close()
        total = (n + n2) / (secs + secs2)
        print(f"overall: {total:,.0f} requests/s (goal >= 10,000 on 2 cores: {'met' if total >= 10000 else 'NOT met'})")
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
