"""AssignorRounds: a group's life across many rebalances with one assignor, as a Protocol.

The rules of that life — members join, leave and change subscriptions, topics are created, grow,
shrink or go away, a member misses a rebalance and reports an older round's ownership, and each
rebalance feeds the previous answer back as owned partitions with the new generation — are the
certification's own (`kverify.certify.scenarios.Group`); the properties checked after every
rebalance are the certification's property functions (`kverify.certify.properties`) for what the
assignor claims. This module only freezes that group into hashable states and enumerates events
as actions, so the explorer, Hypothesis, the walker and the zoo drive it like any other model.
"""
from __future__ import annotations

import json
from typing import NamedTuple

from kverify.certify import properties as P
from kverify.certify.scenarios import Group
from kverify.invariants.core import Invariant, Sometimes
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param

PARAMS = {
    "assignor": Param("cooperative-sticky", "built-in assignor: range, roundrobin, sticky, cooperative-sticky"),
    "members": Param(2, "members at the start (ids c0, c1, ...)", lo=1),
    "max_members": Param(3, "members at most", lo=1),
    "partitions": Param(2, "partitions of each of the two topics at the start", lo=0),
    "max_events": Param(3, "membership/topic events at most", lo=0),
    "max_rounds": Param(4, "rebalances at most", lo=0),
    "recreate": Param(False, "topics may be re-created smaller while members still claim the old partitions "
                        "(robustness input Kafka 3.9's sticky assignors do not survive; see assignors.md fact 8)"),
}
SUPPORTS = frozenset({"kafka-12984-double-claim", "kafka-14639-stale-owner-ignored"})
TOPICS = ("t0", "t1")
SUBSETS = (("t0",), ("t1",), ("t0", "t1"))
CHECKED = ("no-ghosts", "exclusive", "subscribed-only", "complete", "balanced", "cooperative-safe")
CHECKS = {"no-ghosts": P.check_no_ghosts, "exclusive": P.check_exclusive, "subscribed-only": P.check_subscribed_only,
          "complete": P.check_complete, "balanced": P.check_balanced, "cooperative-safe": P.check_cooperative_safe}


# `claim-duplicate i j`: member j also claims member i's first partition in the same generation (what
# clients without generation in their subscription could send, KAFKA-12984); Kafka >= 3.0 treats
# such a partition as unowned.
# A round in which a member reports an older round's ownership (or a duplicate claim) is judged only on what Kafka's
# fixed assignors guarantee for such inputs (resolving conflicting claims): the other properties
# are claimed for clean rounds (Kafka 3.9 can, e.g., give a stale, re-subscribed member a partition
# of a topic it left -- assignors.md fact 8 -- which the certification also leaves unclaimed).
STALE_ROUND_CHECKS = ("no-ghosts", "exclusive", "cooperative-safe")


class RoundsState(NamedTuple):
    group: str            # the frozen Group (canonical JSON)
    last: str             # JSON [problem, answer, stale_round] of the last rebalance, "" before the first
    events: int
    rounds: int
    nogen: tuple = ()     # members whose next subscription carries an old ownership but no generation


def _freeze(g: Group) -> str:
    return json.dumps({"topics": g.topics, "members": g.members, "owned": g.owned, "generation": g.generation,
                       "history": g.history[-1:], "extra": g.extra_claims, "stale": sorted(g.stale),
                       "round": g.round}, sort_keys=True)


def _thaw(text: str) -> Group:
    d = json.loads(text)
    g = Group({"topics": d["topics"], "members": d["members"]})
    g.owned, g.generation = d["owned"], d["generation"]
    g.history = [tuple(h) for h in d["history"]]
    g.extra_claims, g.stale, g.round = d["extra"], set(d["stale"]), d["round"]
    return g


class AssignorRounds(Protocol):
    name = "assignor-rounds"
    memo_safe = True      # equal states: same actions, equal successors, same verdicts (model/walk.py)

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        from kverify.certify.targets import BUILTIN_CLAIMS
        from kverify.impl.assignors import get

        self.params = dict(params)
        self.behaviours = frozenset(behaviours)
        self.assignor = get(params["assignor"], self.behaviours)       # raises for an unknown name
        self.cooperative = bool(getattr(self.assignor, "cooperative", False))
        unclaimed = BUILTIN_CLAIMS.get(params["assignor"], {})
        self.checked = [p for p in CHECKED if p not in unclaimed and (p != "cooperative-safe" or self.cooperative)]

    # --- transition system ------------------------------------------------------------------
    def init_states(self):
        members = [{"id": f"c{i}", "topics": list(TOPICS), "instance_id": None} for i in range(self.params["members"])]
        g = Group({"topics": {t: self.params["partitions"] for t in TOPICS}, "members": members})
        return [RoundsState(_freeze(g), "", 0, 0)]

    def actions(self, s: RoundsState):
        if s.rounds < self.params["max_rounds"]:
            yield ("rebalance",)
        if s.events >= self.params["max_events"]:
            return
        g = json.loads(s.group)
        n = len(g["members"])
        if n < self.params["max_members"]:
            for sub in SUBSETS:
                yield ("join", sub)
        for i in range(n):
            if n > 1:
                yield ("leave", i)
            for sub in SUBSETS:
                yield ("resubscribe", i, sub)
            if g["history"]:
                yield ("stale", i)
                yield ("stale-nogen", i)
            if g["owned"].get(g["members"][i]["id"]):
                for j in range(n):
                    if j != i:
                        yield ("claim-duplicate", i, j)
        for t in TOPICS:
            if t in g["topics"]:
                yield ("grow", t, g["topics"][t] + 1)
                if self.params["recreate"] and g["topics"][t] > 1:
                    yield ("shrink", t, g["topics"][t] - 1)
            elif self.params["recreate"]:
                yield ("create", t, 1)
        if len(g["topics"]) > 1:
            for t in sorted(g["topics"]):
                yield ("delete", t)

    def step(self, s: RoundsState, a: tuple) -> RoundsState:
        g = _thaw(s.group)
        if a[0] == "stale-nogen":
            # a client that missed a rebalance and sends no generation (pre KIP-792): the assignor
            # sees its old ownership under the current generation
            g.apply(["stale", a[1]])
            mid = g.members[a[1] % len(g.members)]["id"]
            return RoundsState(_freeze(g), s.last, s.events + 1, s.rounds, tuple(sorted(set(s.nogen) | {mid})))
        if a[0] != "rebalance":
            event = [a[0]] + [list(x) if isinstance(x, tuple) else x for x in a[1:]]
            g.apply(event)
            return RoundsState(_freeze(g), s.last, s.events + 1, s.rounds, s.nogen)
        stale_round = (bool(g.stale) and bool(g.history)) or bool(g.extra_claims)
        problem = g.problem(f"r{s.rounds}")
        if s.nogen:
            current = max((m["generation"] for m in problem["members"] if m["generation"] is not None), default=None)
            for m in problem["members"]:
                if m["id"] in s.nogen and m["owned"] is not None:
                    m["generation"] = current
        answer = _solve(self, problem)
        if P.well_formed(problem, answer) is None:
            g.settle(problem, P.assignment_of(answer))
        return RoundsState(_freeze(g), json.dumps([problem, answer, stale_round], sort_keys=True), s.events,
                           s.rounds + 1, ())

    # --- properties -------------------------------------------------------------------------
    def invariants(self):
        last = _LastRound()

        def well_formed(s):
            return last.of(s.last)[3] if s.last else None

        invs = [Invariant("assignor-answer", "every rebalance gets a well-formed answer (no error)", well_formed)]
        for name in self.checked:
            invs.append(Invariant(f"assignor-{name}", P.PROPERTIES[name],
                                  _checker(CHECKS[name], self.cooperative, name in STALE_ROUND_CHECKS, last),
                                  broken_by=tuple(sorted(SUPPORTS))))
        return invs

    def sometimes(self):
        return [Sometimes("rounds-with-churn", "a rebalance after a membership change",
                          lambda s: s.rounds >= 2 and s.events >= 1)]

    def is_fault(self, a) -> bool:
        return a[0] in ("stale", "stale-nogen", "claim-duplicate")

    def participants(self):
        return ["leader (assignor)", "group"]

    def arrow(self, a):
        return ("group", "leader (assignor)") if a[0] == "rebalance" else ("group", "group")

    def describe(self, s: RoundsState) -> dict:
        g = json.loads(s.group)
        return {"topics": g["topics"], "round": g["round"],
                "members": {m["id"]: {"topics": m["topics"], "owned": [f"{t}-{p}" for t, p in g["owned"].get(m["id"]) or []],
                                      "generation": g["generation"].get(m["id"])} for m in g["members"]},
                "stale": g["stale"]}


def _solve(world: AssignorRounds, problem: dict) -> dict:
    from kverify.impl.assignors import assign

    return assign(problem, world.params["assignor"], world.behaviours)


class _LastRound:
    """The last rebalance of a state (`RoundsState.last`) decoded once for all the invariants that
    judge it: (problem, answer, stale_round, why the answer is not well formed or None), kept for
    the last text read. The explorer checks every invariant of one state in a row, so each state's
    text is parsed and its answer's shape judged once instead of once per property; the property
    functions only read what they are given (kverify/certify/properties.py)."""

    __slots__ = ("kept",)

    def __init__(self):
        self.kept = (None, None)          # (text, its decoding), replaced as one value

    def of(self, text: str) -> tuple:
        kept = self.kept
        if kept[0] is text:
            return kept[1]
        problem, answer, stale_round = json.loads(text)
        parsed = (problem, answer, stale_round, P.well_formed(problem, answer))
        self.kept = (text, parsed)
        return parsed


def _checker(fn, cooperative, in_stale_rounds: bool, last: _LastRound):
    def check(s):
        if not s.last:
            return None
        problem, answer, stale_round, malformed = last.of(s.last)
        if malformed is not None:
            return None   # reported by assignor-answer
        if stale_round and not in_stale_rounds:
            return None
        return fn(problem, answer, cooperative)
    return check


def make(params: dict, behaviours: frozenset) -> AssignorRounds:
    return AssignorRounds(params, behaviours)


SPEC = ModelSpec(name="assignor-rounds", make=make, params=PARAMS, supports=SUPPORTS,
                 check=lambda p: "max_members must be >= members" if p["max_members"] < p["members"] else None)
