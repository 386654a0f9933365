"""Safety properties checked online over the broker's trace of real Kafka messages.

Why not the `invariants/group.py` objects: those judge the coordinator's internal state (stored
assignment, group state, member set) through `GroupView`; over the wire only the messages are
visible, so these checks judge what clients were *told* (SyncGroup answers, acknowledged commits)
and what they *did* (Fetch requests). The property names are shared where the property is the same
one seen from outside; `no-double-fetch` exists only here.

Input: the broker's trace events (kverify/wire/trace.py: `seq, clock_ms, dir, conn, api, corr,
client_id, body, decoded`), fed in order to `OnlineChecks.feed`, which pairs every response with
its request by (connection, correlation id). Members are identified per group by their
group.instance.id when they have one (a static member that rejoins under a new member id is the
same owner), else by member id. A violation is reported once per (property, message).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kverify.wire.codec import ERROR_NAMES

STATEMENTS = {
    "exclusive-ownership": "within one generation, the SyncGroup answers never give a partition to two members",
    "committed-offset-safety": "an offset commit is acknowledged only in the group's current generation, and never "
                               "for a partition that the SyncGroup answers of that generation gave to another member",
    "generation-monotonicity": "the generation under which a member receives its assignment never decreases",
    "no-double-fetch": "no two clients fetch the same partition while both believe they own it "
                       "(from their Fetch requests and the assignments each was answered)",
}
FENCING = frozenset({"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"})


@dataclass
class Violation:
    invariant: str
    message: str
    seq: int                       # trace event after which it broke
    events: tuple = ()             # seqs of the events that make the case (for the report)

    @property
    def statement(self) -> str:
        return STATEMENTS[self.invariant]

    def line(self) -> str:
        return f"{self.invariant}: {self.message} (trace event {self.seq})"


@dataclass
class _Client:
    """What one client (by client id) believes it owns, and when it came to believe it."""

    members: set = field(default_factory=set)      # (group, member key) it joined as
    acquired: dict = field(default_factory=dict)   # (topic, partition) -> seq it came to own it
    fetched: dict = field(default_factory=dict)    # (topic, partition) -> seq of its last fetch while owning it
    join_conns: set = field(default_factory=set)   # open connections it sent JoinGroup on


def _err(body: dict, key: str = "error_code") -> str:
    code = body.get(key) or 0
    return ERROR_NAMES.get(code, f"UNKNOWN_CODE_{code}")


def _tps(decoded_assignment) -> set:
    return {(t, p) for t, ps in (decoded_assignment or {}).items() for p in ps}


class OnlineChecks:
    """Feed trace events in order; `violations` grows as properties break."""

    def __init__(self, only: Optional[set] = None):
        self.only = set(only) if only else set(STATEMENTS)
        self.violations: list[Violation] = []
        self._seen = set()
        self._pending = {}            # (conn, corr) -> request event
        self._owner = {}              # (group, generation) -> {(topic, p): (member key, seq)}
        self._synced = {}             # group -> highest generation answered by a SyncGroup NONE
        self._acted = {}              # (group, member key) -> (generation, seq) of its last SyncGroup NONE
        self._clients = {}            # client id -> _Client
        self.events = 0
        # api name -> bound handler (`_req_<Api>` / `_resp_<Api>`), looked up once
        self._on_req = {n[5:]: getattr(self, n) for n in dir(type(self)) if n.startswith("_req_")}
        self._on_resp = {n[6:]: getattr(self, n) for n in dir(type(self)) if n.startswith("_resp_")}

    # ---- entry point
    def feed(self, ev: dict) -> list[Violation]:
        """Check one event; returns the violations it caused (also appended to `violations`)."""
        self.events += 1
        before = len(self.violations)
        d, api = ev.get("dir"), ev.get("api")
        if d == "in" and api:
            self._pending[(ev.get("conn"), ev.get("corr"))] = ev
            handler = self._on_req.get(api)
            if handler is not None and isinstance(ev.get("body"), dict):
                handler(ev, ev["body"])
        elif d == "out" and api:
            req = self._pending.pop((ev.get("conn"), ev.get("corr")), None)
            handler = self._on_resp.get(api)
            if handler is not None and req is not None and isinstance(ev.get("body"), dict) \
                    and isinstance(req.get("body"), dict):
                handler(req, ev, req["body"], ev["body"])
        elif d == "close":
            for k in [k for k in self._pending if k[0] == ev.get("conn")]:
                del self._pending[k]
            for c in self._clients.values():
                c.join_conns.discard(ev.get("conn"))
        return self.violations[before:]

    def _report(self, inv: str, msg: str, seq: int, events=()) -> None:
        if inv not in self.only or (inv, msg) in self._seen:
            return
        self._seen.add((inv, msg))
        self.violations.append(Violation(inv, msg, seq, tuple(events)))

    @staticmethod
    def _key(body: dict) -> str:
        inst = body.get("group_instance_id")
        return f"instance:{inst}" if inst else body.get("member_id", "")

    def _client(self, ev) -> _Client:
        return self._clients.setdefault(ev.get("client_id") or f"conn{ev.get('conn')}", _Client())

    def _bind(self, ev, group: str, key: str) -> None:
        self._client(ev).members.add((group, key))

    # ---- JoinGroup: a rejoin revokes what the member does not claim to keep (cooperative: owned partitions)
    def _req_JoinGroup(self, ev, body):
        c = self._client(ev)
        c.join_conns.add(ev.get("conn"))
        keep = set()
        for sub in (ev.get("decoded") or {}).values():
            if sub:
                keep = {(t, p) for t, ps in (sub.get("owned") or {}).items() for p in ps}
                break
        self._revoke(c, set(c.acquired) - keep)

    def _resp_JoinGroup(self, req, ev, rb, sb):
        if _err(sb) == "NONE" and sb.get("member_id"):
            key = self._key({"group_instance_id": rb.get("group_instance_id"), "member_id": sb["member_id"]})
            self._bind(req, rb.get("group_id"), key)
        elif _err(sb) in FENCING:
            self._revoke(self._client(req), set(self._client(req).acquired))

    # ---- SyncGroup: ownership per generation, generation monotonicity, client beliefs
    def _resp_SyncGroup(self, req, ev, rb, sb):
        err = _err(sb)
        c = self._client(req)
        if err in FENCING:
            self._revoke(c, set(c.acquired))
            return
        if err != "NONE":
            return
        group, gen, key = rb.get("group_id"), int(rb.get("generation_id", -1)), self._key(rb)
        self._bind(req, group, key)
        decoded = (ev.get("decoded") or {}).get("assignment")
        seq = ev.get("seq", self.events)
        prev = self._acted.get((group, key))
        if prev is not None and gen < prev[0]:
            self._report("generation-monotonicity",
                         f"group {group!r}: member {key} was assigned under generation {prev[0]} and then under "
                         f"generation {gen}", seq, (prev[1], seq))
        self._acted[(group, key)] = (gen, seq)
        self._synced[group] = max(self._synced.get(group, -1), gen)
        if decoded is None:
            return      # not consumer-protocol bytes: nothing to say about partitions
        owners = self._owner.setdefault((group, gen), {})
        for tp in sorted(_tps(decoded)):
            other = owners.get(tp)
            if other is not None and other[0] != key:
                self._report("exclusive-ownership",
                             f"group {group!r} generation {gen}: {tp[0]}-{tp[1]} was given to {other[0]} and to {key}",
                             seq, (other[1], seq))
            else:
                owners[tp] = (key, seq)
        now = _tps(decoded)
        self._revoke(c, set(c.acquired) - now)
        for tp in now:
            c.acquired.setdefault(tp, seq)

    # ---- OffsetCommit: only the current generation, never another member's partition
    def _resp_OffsetCommit(self, req, ev, rb, sb):
        group = rb.get("group_id")
        gen = rb.get("generation_id_or_member_epoch", rb.get("generation_id", -1))
        gen = -1 if gen is None else int(gen)
        key = self._key(rb)
        seq = ev.get("seq", self.events)
        accepted = [(t.get("name"), p.get("partition_index")) for t in sb.get("topics") or ()
                    for p in t.get("partitions") or () if _err(p) == "NONE"]
        if _any_fencing(sb):
            self._revoke(self._client(req), set(self._client(req).acquired))
        if not accepted or gen < 0:
            return      # nothing acknowledged, or a standalone (simple consumer / admin) commit
        current = self._synced.get(group, -1)
        if gen < current:
            self._report("committed-offset-safety",
                         f"group {group!r}: commit of {_fmt(accepted)} by {key} at generation {gen} acknowledged "
                         f"after generation {current} was assigned", seq, (req.get("seq", seq), seq))
        owners = self._owner.get((group, gen), {})
        for tp in accepted:
            other = owners.get(tp)
            if other is not None and other[0] != key:
                self._report("committed-offset-safety",
                             f"group {group!r}: commit of {tp[0]}-{tp[1]} by {key} at generation {gen} acknowledged, "
                             f"but generation {gen} gave it to {other[0]}", seq, (other[1], req.get("seq", seq), seq))

    def _resp_Heartbeat(self, req, ev, rb, sb):
        if _err(sb) in FENCING:
            self._revoke(self._client(req), set(self._client(req).acquired))

    def _req_LeaveGroup(self, ev, body):
        c = self._client(ev)
        self._revoke(c, set(c.acquired))

    # ---- Fetch: two clients that both believe they own a partition both fetching it
    def _req_Fetch(self, ev, body):
        c = self._client(ev)
        if not c.acquired:
            return
        cid = ev.get("client_id") or f"conn{ev.get('conn')}"
        if self._ambiguous(cid):
            return
        seq = ev.get("seq", self.events)
        for t in body.get("topics") or ():
            topic = t.get("topic", t.get("name"))
            for p in t.get("partitions") or ():
                tp = (topic, p.get("partition"))
                if tp not in c.acquired:
                    continue
                for other_id, o in self._clients.items():
                    if o is c or tp not in o.acquired or self._ambiguous(other_id):
                        continue
                    last = o.fetched.get(tp)
                    if last is not None and last > c.acquired[tp]:
                        self._report("no-double-fetch",
                                     f"{tp[0]}-{tp[1]} fetched by client {cid!r} and by client {other_id!r} while both "
                                     "believed they owned it", seq, (o.acquired[tp], c.acquired[tp], last, seq))
                c.fetched[tp] = seq

    def _ambiguous(self, client_id) -> bool:
        """One client id joining on two open connections at once: two processes share it, so its fetches
        cannot be attributed to either (no judgement; give each consumer its own client id)."""
        c = self._clients.get(client_id)
        return c is not None and len(c.join_conns) > 1

    @staticmethod
    def _revoke(c: _Client, tps) -> None:
        for tp in tps:
            c.acquired.pop(tp, None)
            c.fetched.pop(tp, None)


def _any_fencing(sb) -> bool:
    return any(_err(p) in FENCING for t in sb.get("topics") or () for p in t.get("partitions") or ())


def _fmt(tps) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(tps))


def check_events(events) -> list[Violation]:
    """All violations of a whole recorded trace (e.g. a `--trace` file read back)."""
    oc = OnlineChecks()
    for ev in events:
        oc.feed(ev)
    return oc.violations
