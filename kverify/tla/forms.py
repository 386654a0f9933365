"""The Python models' states as the TLA+ specs write them: one mapping per spec.

Why it exists: the cross-check compares the state SETS TLC and the explorer reach (kverify/tla/
states.py), so each Python state must become the value its spec's variables (`modelVars`) take,
in the form of kverify/tla/values.py. `MAPPINGS` names the mapping per model: written here (group),
or the protocol's own `tla_state(state)` method (replication). The mapping must be injective: two Python states with one TLA+ form would make
the state counts differ, and `states.python_graph` reports such a pair.
"""
from __future__ import annotations

from functools import lru_cache

from kverify.tla.values import bits, fun, rec, seq

NONE = ()        # the specs' "none" values (NoAssignment, NoCommit, NoPrev): the empty function <<>>


# --- GroupMembership <-> model/group.py ----------------------------------------------------------------
_GROUP_STATES = {0: "Empty", 1: "PreparingRebalance", 2: "CompletingRebalance", 3: "Stable", 5: "PreparingInitial"}


@lru_cache(maxsize=1 << 16)
def _assignment(a, n: int):
    return NONE if a is None else fun({i: bits(a[i]) for i in range(n)})


@lru_cache(maxsize=1 << 16)
def _record(r, n: int):
    return rec(generation=r.generation, members=bits(r.members), leader=r.leader, assignment=_assignment(r.assignment, n))


@lru_cache(maxsize=1 << 16)
def _client(c):
    from kverify.model import group as G

    inflight = NONE if not c.inflight else rec(generation=c.inflight.generation, partitions=bits(c.inflight.partitions))
    return rec(status=G.STATUS_NAMES[c.status], generation=c.generation, owned=bits(c.owned),
               flag=G.FLAG_NAMES[c.flag], acted=c.acted, inflight=inflight)


@lru_cache(maxsize=1 << 16)
def _coord(c, n: int):
    return rec(state=_GROUP_STATES[c.state], generation=c.generation, leader=c.leader, members=bits(c.members),
               awaitingJoin=bits(c.awaiting_join), awaitingSync=bits(c.awaiting_sync),
               pendingSync=bits(c.pending_sync), assignment=_assignment(c.assignment, n), epoch=c.epoch)


def group_state(proto, s) -> dict:
    from kverify.model import group as G

    n = proto.n
    s = G.as_state(s) if type(s) is not G.GroupState else s
    return {
        "coord": _coord(s.coord, n),
        "clients": fun({i: _client(x) for i, x in enumerate(s.clients)}),
        "offsets": fun(dict(enumerate(s.offsets))),
        "persisted": _record(s.persisted, n),
        "budget": rec(events=s.budget.events, faults=s.budget.faults, commits=s.budget.commits,
                      commitGeneration=s.budget.commit_generation),
        "delivered": seq(rec(generation=d.generation, assignment=_assignment(d.assignment, n)) for d in s.delivered),
        "prev": NONE if s.prev is None else rec(record=_record(s.prev.record, n),
                                                offsets=fun(dict(enumerate(s.prev.offsets)))),
    }


# --- Replication: the older positional layout, used by offsets_state below until model/offsets.py has `tla_state`
def _log(log) -> tuple:
    return tuple(tuple(x) for x in log)


def replication_state(proto, s) -> dict:
    from kverify.model import replication as R

    reps, ctrl, reqs, zombie, hist = s

    def rep(x):
        pend = x[R.PEND]
        return rec(alive=x[R.ALIVE], log=_log(x[R.LOG]), hw=x[R.HW], ep=x[R.EP], pep=x[R.PEP], cep=x[R.CEP],
                   ldr=x[R.LDR], trunc=x[R.TRUNC], isr=bits(x[R.ISR]), leso=x[R.LESO], since=x[R.SINCE],
                   pend=rec(isr=bits(pend & R.MASK), applied=bool(pend & R.APPLIED), stale=bool(pend & R.STALE)))

    def req(q):
        return rec(ldr=q[0], ep=q[1], isr=bits(q[2]), pep=q[3], cep=q[4])

    return {"reps": fun({i: rep(x) for i, x in enumerate(reps)}),
            "ctrl": rec(ldr=ctrl[0], ep=ctrl[1], isr=bits(ctrl[2]), elr=bits(ctrl[3]), pep=ctrl[4], cep=ctrl[5]),
            "reqs": frozenset(req(q) for q in reqs),
            "zombie": NONE if zombie is None else req(zombie),
            "hist": rec(next=hist[0], committed=_log(hist[1]), acked=tuple((o, tuple(r)) for o, r in hist[2]),
                        crashes=hist[3], lossy=hist[4], unclean=hist[5], alters=hist[6], failovers=hist[7])}


# --- OffsetsFailover <-> model/offsets.py (until the model declares `tla_state`) ----------------------------
def offsets_state(proto, s) -> dict:
    rs, coord, payloads, hist = s
    out = replication_state(proto, rs)
    out["coord"] = rec(owner=coord[0], gen=coord[1], pend=coord[2], loads=coord[3], asg=coord[4])
    out["payloads"] = tuple(tuple(pl) for pl in payloads)
    out["grouphist"] = rec(joins=hist[0], next=fun(dict(enumerate(hist[1]))), lost=frozenset(tuple(x) for x in hist[2]))
    return out


def _declared(proto, s) -> dict:
    """A protocol that writes its own TLA+ form (model/replication.py's `tla_state` method)."""
    return proto.tla_state(s)


MAPPINGS = {"group": group_state, "replication": _declared, "offsets": offsets_state}


def mapping(model: str):
    """The function (proto, state) -> {TLA+ variable: value} for a model with a spec."""
    try:
        return MAPPINGS[model]
    except KeyError:
        raise ValueError(f"no TLA+ form for model {model!r}") from None


def to_tla(model: str, proto, state):
    """A Python state as the record of its spec's model variables."""
    return rec(**mapping(model)(proto, state))
