"""The Python models' states as the TLA+ specs write them: one mapping per spec.

Why it exists: the cross-check compares the state SETS TLC and the explorer reach (kverify/tla/
states.py), so each Python state must become the value its spec's variables (`modelVars`) take,
in the form of kverify/tla/values.py. The group model's mapping is written here (`MAPPINGS`); other
models declare theirs as `SPEC = ModelSpec(..., tla_state=...)`. The mapping must be injective: two Python states with one TLA+ form would make
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


MAPPINGS = {"group": group_state}


def mapping(model: str):
    """The function (proto, state) -> {TLA+ variable: value} for a model with a spec: written here
    (MAPPINGS), else the `tla_state` its ModelSpec declares (model/spec.py)."""
    own = MAPPINGS.get(model)
    if own is not None:
        return own
    from kverify.model import registry

    declared = registry.spec_for(model).tla_state
    if declared is None:
        raise ValueError(f"no TLA+ form for model {model!r}: declare SPEC = ModelSpec(..., tla_state=...)")
    return declared


def to_tla(model: str, proto, state):
    """A Python state as the record of its spec's model variables."""
    return rec(**mapping(model)(proto, state))
