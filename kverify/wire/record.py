"""A violation found online over the wire -> the usual counterexample record, and its replay.

Why: a client test that trips an online check (kverify/wire/checks.py) must leave the same evidence
every other engine leaves (reports/record.py: counterexample.json/.md/.html with the sequence
diagram of the real messages) and `kverify replay` must re-run it. The record keeps the recorded
trace events up to the violation (`extra["events"]`) plus what rebuilds the broker (`params`:
broker settings, the coordinator's exact configuration, behaviours). `replay` (named in
`extra["replayer"]`, which reports/replayer.py calls) feeds the recorded group requests, rebuilt as
real frames with kafka-python's classes, through kverify broker's own request path (`Broker.process`,
no sockets, manual clock) on a fresh reference coordinator, moving the clock as recorded, re-injects
the recorded Fetch requests (the coordinator does not see them), and runs the same online checks.
"""
from __future__ import annotations

import copy
import dataclasses
import marshal
from typing import Optional

from kverify.reports.record import Counterexample, Step
from kverify.wire.checks import STATEMENTS, OnlineChecks, Violation

MODEL = "wire"
ENGINE = "wire-online"
BROKER = "broker"
# requests the coordinator sees (fed again on replay) and the ones the checks read without it
FED_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
            "DescribeGroups", "ListGroups")
KEPT_APIS = FED_APIS + ("Fetch",)


def relevant(ev: dict) -> bool:
    """Events a record keeps: group requests/responses, Fetch requests, faults, clock moves, connection ends."""
    d = ev.get("dir")
    if d in ("fault", "clock", "start", "close"):
        return True
    return ev.get("api") in KEPT_APIS and (d == "in" or ev.get("api") != "Fetch")


def broker_params(broker) -> dict:
    """What rebuilds `broker` for replay: its settings and its coordinator's exact configuration."""
    cfg = broker.config
    keep = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)
            if f.name not in ("host", "port", "trace_path", "faults", "behaviours", "clock", "coordinator")}
    return {"broker": _jsonable(keep), "coordinator": _jsonable(dataclasses.asdict(broker.coordinator.config))}


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, frozenset, set)):
        return [_jsonable(x) for x in v]
    return v


# ---- the record ---------------------------------------------------------------------------------
def _who(ev: dict) -> str:
    return ev.get("client_id") or f"conn{ev.get('conn')}"


def _label(ev: dict) -> str:
    """One line naming the message and the fields that matter to the checks."""
    from kverify.wire.client import error_name

    d, api = ev.get("dir"), ev.get("api")
    body = ev.get("body") if isinstance(ev.get("body"), dict) else {}
    if d == "fault":
        return f"fault: {ev.get('fault')}"
    if d == "close":
        return f"connection {ev.get('conn')} closed"
    if d == "clock":
        return f"clock +{body.get('advance', ev.get('advance'))} ms -> {ev.get('clock_ms')}"
    if d == "start":
        return "broker starts"
    parts = [f"{api} v{ev.get('version')}" if d == "in" else f"{api} answer"]
    gen = body.get("generation_id", body.get("generation_id_or_member_epoch"))
    if d == "in":
        for k, short in (("group_id", "group"), ("member_id", "member"), ("group_instance_id", "instance")):
            if body.get(k):
                parts.append(f"{short}={body[k]}")
        if gen is not None:
            parts.append(f"gen={gen}")
    else:
        if "error_code" in body:
            parts.append(error_name(int(body["error_code"] or 0)))
        if gen is not None and api == "JoinGroup":
            parts.append(f"gen={gen}")
    if api in ("OffsetCommit", "Fetch") and body.get("topics"):
        parts.append(",".join(f"{t.get('name', t.get('topic'))}-{p.get('partition_index', p.get('partition'))}"
                              for t in body["topics"] for p in t.get("partitions") or ()))
    if api == "SyncGroup" and d == "out" and ev.get("decoded"):
        a = (ev["decoded"] or {}).get("assignment") or {}
        parts.append("assigned " + (",".join(f"{t}-{p}" for t, ps in a.items() for p in ps) or "nothing"))
    return " ".join(str(x) for x in parts)


def _snapshot(oc: OnlineChecks, committed: dict) -> dict:
    """What matters after a step: per group the owners each generation's SyncGroup answers named and the
    acknowledged commits; per client what it believes it owns."""
    groups: dict = {}
    for (g, gen), owners in sorted(oc._owner.items(), key=lambda x: (str(x[0][0]), x[0][1])):
        groups.setdefault(g, {})[f"generation {gen}"] = {f"{t}-{p}": k for (t, p), (k, _s) in sorted(owners.items())}
    for (g, tp), (off, gen, who) in sorted(committed.items(), key=lambda x: (str(x[0][0]), x[0][1])):
        groups.setdefault(g, {}).setdefault("committed", {})[f"{tp[0]}-{tp[1]}"] = f"{off} by {who} at gen {gen}"
    clients = {c: sorted(f"{t}-{p}" for t, p in st.acquired) for c, st in sorted(oc._clients.items()) if st.acquired}
    return {"groups": groups, "owned (client view)": clients}


def to_record(v: Violation, events: list, params: dict, behaviours, seed: Optional[int] = None) -> Counterexample:
    """The record of violation `v` over `events` (the kept trace events, in order, at least up to `v.seq`)."""
    from kverify.wire.client import error_name

    kept = [dict(e) for e in events if relevant(e) and e.get("seq", 0) <= v.seq]
    steps = [Step(0, None, "init", {"groups": {}, "owned (client view)": {}})]
    clients, vstep = [], 0
    oc, committed, commits = OnlineChecks(), {}, {}
    for e in kept:
        d, api = e.get("dir"), e.get("api")
        who = _who(e)
        oc.feed(e)
        body = e.get("body") if isinstance(e.get("body"), dict) else {}
        if d == "in" and api == "OffsetCommit":
            commits[(e.get("conn"), e.get("corr"))] = body
        elif d == "out" and api == "OffsetCommit":
            rq = commits.pop((e.get("conn"), e.get("corr")), {})
            offs = {(t.get("name"), p.get("partition_index")): p.get("committed_offset")
                    for t in rq.get("topics") or () for p in t.get("partitions") or ()}
            for t in body.get("topics") or ():
                for p in t.get("partitions") or ():
                    tp = (t.get("name"), p.get("partition_index"))
                    if error_name(int(p.get("error_code") or 0)) == "NONE" and tp in offs:
                        committed[(rq.get("group_id"), tp)] = (offs[tp], rq.get("generation_id_or_member_epoch"), who)
        if d in ("in", "out") and who not in clients:
            clients.append(who)
        src, dst = (who, BROKER) if d == "in" else (BROKER, who) if d == "out" else (BROKER, BROKER)
        steps.append(Step(len(steps), [d, api, e.get("conn"), e.get("corr"), e.get("seq")], _label(e),
                          _snapshot(oc, committed), d in ("fault", "close"), src, dst))
        if e.get("seq") == v.seq:
            vstep = len(steps) - 1
    return Counterexample(
        invariant=v.invariant, statement=STATEMENTS[v.invariant], model=MODEL, params=params,
        behaviours=sorted(behaviours), engine=ENGINE, violation_step=vstep or len(steps) - 1,
        violation=v.message, trace=steps, seed=seed, participants=clients + [BROKER],
        extra={"replayer": "kverify.wire.record:replay", "events": kept, "event_seq": v.seq})


def write(v: Violation, events: list, params: dict, behaviours, out_dir: str, seed: Optional[int] = None) -> str:
    """Write the record in all renderings (reports/writer.py); returns the JSON path."""
    from kverify.reports.writer import write_report

    return write_report(to_record(v, events, params, behaviours, seed), out_dir)


# ---- replay -------------------------------------------------------------------------------------
def from_json(cls, version: int, body: dict):
    """Rebuild a kafka-python request from its trace JSON (hex strings back to bytes where the schema says bytes)."""
    from kverify.wire.codec import build

    return build(cls, version, _unhex(cls._struct.fields, body))


def _unhex(fields: dict, body: dict) -> dict:
    out = {}
    for k, v in body.items():
        f = fields.get(k)
        if f is None:
            continue
        if v is not None and f.is_struct_array():
            v = [_unhex(f.fields, x) if isinstance(x, dict) else x for x in v]
        elif v is not None and f.is_struct() and isinstance(v, dict):
            v = _unhex(f.fields, v)
        elif isinstance(v, str) and getattr(f, "_type_str", None) in ("bytes", "records"):
            v = bytes.fromhex(v)
        out[k] = v
    return out


class _ReplayConn:
    """Stands in for a broker connection: frames go straight to `Broker.process`, answers are only traced."""

    def __init__(self, conn_id, peer):
        self.id, self.peer = conn_id, peer or "127.0.0.1:0"
        self.host = self.peer.rpartition(":")[0] or "127.0.0.1"
        self.closed = False
        self.transport = self

    def write(self, data):
        pass

    def release(self):
        pass

    def close(self, reason=None):
        self.closed = True


def _tuples(cfg: dict) -> dict:
    return {k: (tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v)
            for k, v in cfg.items()}


def replay_events(events: list, params: dict, behaviours) -> list:
    """Run the recorded group requests again on a fresh reference coordinator; returns the new trace events.

    The clock moves exactly as recorded (`clock` events; without them, up to each event's `clock_ms`),
    failovers are redone from their `fault` events (resign / loading / elect), dropped responses stay dropped."""
    from kverify.wire import codec
    from kverify.wire.server import Broker, BrokerConfig

    start = next((e.get("body") for e in events if e.get("dir") == "start" and isinstance(e.get("body"), dict)), {})
    bp = dict(params.get("broker") or {})
    known = {f.name for f in dataclasses.fields(BrokerConfig)}
    cfg = BrokerConfig(**{k: v for k, v in bp.items() if k in known})
    cfg.clock, cfg.behaviours, cfg.faults = "manual", frozenset(behaviours), ""
    cfg.coordinator = _tuples(start.get("config") or params.get("coordinator") or {})
    b = Broker(cfg)
    c = b.coordinator
    out: list = []
    b.listeners.append(out.append)
    explicit_clock = any(e.get("dir") == "clock" for e in events)
    conns: dict = {}
    dropped = {(e.get("conn"), e.get("corr")) for e in events
               if e.get("dir") == "fault" and e.get("api") and "drop" in str(e.get("fault", ""))}
    for e in events:
        d, body = e.get("dir"), e.get("body") if isinstance(e.get("body"), dict) else {}
        if d == "clock":
            b._advance_clock(int(body.get("advance", e.get("advance")) or 0))
            continue
        if not explicit_clock and isinstance(e.get("clock_ms"), int) and e["clock_ms"] > c.now:
            b._advance_clock(e["clock_ms"] - c.now)
        if d == "fault" and body.get("op") in ("resign", "loading", "elect"):
            for p in body.get("partitions") or ():
                if body["op"] == "resign":
                    b.route(c.on_resignation(p, body["epoch"]))
                elif body["op"] == "loading":
                    c.internal.set_partition_loading(p)
                else:
                    b.route(c.on_election(p, body["epoch"], b.log.records(p)))
            continue
        conn = conns.get(e.get("conn"))
        if conn is None and e.get("conn") is not None:
            conn = conns[e["conn"]] = _ReplayConn(e["conn"], e.get("peer"))
        if d == "in" and e.get("api") in FED_APIS:
            api = codec.BY_NAME[e["api"]]
            msg = from_json(api.request, e["version"], body)
            msg.with_header(correlation_id=e["corr"], client_id=e.get("client_id"))
            b.process(conn, bytes(msg.encode(header=True, framed=True))[4:])
        elif d == "in" and e.get("api") == "Fetch":
            b.tracer.emit(c.now, "in", e.get("conn"), e.get("peer"), "Fetch", e.get("api_key"),
                          e.get("version"), e.get("corr"), e.get("client_id"), body)
        elif d == "close" and conn is not None:
            conn.closed = True
            b.tracer.emit(c.now, "close", conn.id, conn.peer)
    if b.errors:
        raise RuntimeError("; ".join(b.errors))
    return [x for x in out if not (x.get("dir") == "out" and (x.get("conn"), x.get("corr")) in dropped)]


def replay(cx: Counterexample) -> tuple:
    """reports/replayer.py entry: (reproduced, message)."""
    events = (cx.extra or {}).get("events")
    if not isinstance(events, list):
        return False, "not a wire record: extra.events is missing"
    try:
        new = replay_events(events, cx.params or {}, cx.behaviours)
    except Exception as exc:  # noqa: BLE001 - a record this kverify cannot re-run
        return False, f"no longer reproduces: the recorded requests cannot be re-run ({type(exc).__name__}: {exc})"
    oc = OnlineChecks()
    for ev in new:
        oc.feed(ev)
    same = [v for v in oc.violations if v.invariant == cx.invariant]
    if same:
        return True, (f"reproduced on the reference coordinator: `{cx.invariant}` breaks again: {same[0].message} "
                      f"({len(new)} events re-run)")
    if oc.violations:
        o = oc.violations[0]
        return False, f"changed: now `{o.invariant}` breaks ({o.message}); recorded: `{cx.invariant}`"
    return False, f"no longer reproduces: {len(new)} events re-run and every online check holds"


# ---- online: a broker listener that checks and records -------------------------------------------
class EventLog:
    """The events a Recorder keeps, in order: the newest as dicts, older ones packed by `marshal` in chunks
    of `CHUNK` events (one bytes string per chunk, a deep copy of those events).

    Why: a broker under load keeps hundreds of thousands of events, each a dict of nested dicts and lists;
    kept as such they are objects the garbage collector walks at every full collection (a quarter of the
    broker's CPU per OffsetCommit in bench/wire.py). A bytes string is not tracked by the collector, and one
    `marshal.dumps` per chunk costs a third of one per event. Iterating gives every event back as a dict;
    a chunk marshal cannot hold is kept as a deep copy."""

    CHUNK = 16

    def __init__(self):
        self._chunks: list = []
        self._tail: list = []
        self._packed = 0

    def append(self, ev: dict) -> None:
        tail = self._tail
        tail.append(dict(ev))
        if len(tail) >= self.CHUNK:
            try:
                self._chunks.append(marshal.dumps(tail))
            except ValueError:
                self._chunks.append(copy.deepcopy(tail))
            self._packed += len(tail)
            self._tail = []

    def __iter__(self):
        for chunk in self._chunks:
            yield from (marshal.loads(chunk) if isinstance(chunk, bytes) else copy.deepcopy(chunk))
        yield from list(self._tail)

    def __len__(self) -> int:
        return self._packed + len(self._tail)


class Recorder:
    """Listener for `Broker.listeners`: keeps the relevant events, runs the online checks on each, and writes
    one counterexample record per broken property into `out_dir` (when given)."""

    def __init__(self, broker=None, out_dir: Optional[str] = None, params: Optional[dict] = None,
                 behaviours=frozenset(), seed: Optional[int] = None):
        self.checks = OnlineChecks()
        self.events = EventLog()
        self.out_dir = out_dir
        self.params = params if params is not None else (broker_params(broker) if broker is not None else {})
        self.behaviours = frozenset(behaviours if broker is None else broker.config.behaviours)
        self.seed = seed if seed is not None or broker is None else broker.config.seed
        self.reports: list = []      # paths written
        self.errors: list = []       # exceptions inside the listener (a bug of ours; must stay empty)
        self._written = set()

    def __call__(self, ev: dict) -> None:
        try:
            if relevant(ev) and not (ev.get("api") == "Fetch" and not self._owns_something(ev)):
                self.events.append(ev)           # (a Fetch by a client owning nothing can break no check)
            for v in self.checks.feed(ev):
                if self.out_dir and v.invariant not in self._written:
                    import os

                    self._written.add(v.invariant)
                    self.reports.append(write(v, self.events, self.params, self.behaviours,
                                              os.path.join(self.out_dir, v.invariant), self.seed))
        except Exception as exc:  # noqa: BLE001 - never take the broker thread down
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def _owns_something(self, ev) -> bool:
        c = self.checks._clients.get(ev.get("client_id") or f"conn{ev.get('conn')}")
        return bool(c is not None and c.acquired)

    @property
    def violations(self) -> list:
        return self.checks.violations


def attach(broker, out_dir: Optional[str] = None) -> Recorder:
    """Check `broker`'s traffic online (and record violations into `out_dir`); returns the Recorder."""
    rec = Recorder(broker, out_dir)
    broker.listeners.append(rec)
    return rec
