"""Group scenarios for certification: generated with Hypothesis, played round by round.

A scenario is JSON: initial topics and members, then events. Playing it against a target gives
one problem per round, exactly as a real group produces them: the answer of a round becomes the
members' owned partitions in the next, with the generation of the round that gave them; a member
that joins arrives with no owned partitions and no generation; a cooperative assignor that
withholds partitions gets the follow-up round its revocations trigger.

Families:
- "realistic": only metadata Kafka can have: every topic has at least one partition; members
  join, leave, change subscriptions (possibly to topics that do not exist yet, never to nothing),
  topics are created, grow or are deleted, and the group rebalances with no change;
- "stale": realistic plus members subscribed to nothing, and members that missed a rebalance and come back with the owned
  partitions and generation of an older round (what KAFKA-13419/14639 are about);
- "robust-consumer": for server-side (KIP-848) assignors: realistic plus a target assignment naming a
  topic that was deleted, and members subscribed to nothing;
- "robust": stale plus inputs that break assumptions: topics with zero partitions (Kafka has none),
  members subscribed to nothing (a pattern matching no topic), topics re-created smaller while members still claim the old partition
  numbers, claims on topics that do not exist, and two members claiming one partition in the
  same generation.
"""
from __future__ import annotations

from hypothesis import strategies as st

MEMBER_POOL = ["c0", "c1", "c2", "c10", "C3", "a", "b", "m-\u00e9"]
TOPIC_POOL = ["t0", "t1", "t2", "T3"]
GHOST_TOPIC = "gone"
FAMILIES = ("realistic", "stale", "robust", "robust-consumer")
MAX_FOLLOW_UPS = 3


_CACHE: dict = {}


def _s(key, build):
    """Strategies are built once and reused: building them per draw dominates generation time."""
    if key not in _CACHE:
        _CACHE[key] = build()
    return _CACHE[key]


def _topic_subset(min_size: int = 1):
    return _s(("subset", min_size), lambda: st.lists(st.sampled_from(TOPIC_POOL + [GHOST_TOPIC]), unique=True,
                                                     min_size=min_size, max_size=4).map(sorted))


def _ints(lo: int, hi: int):
    return _s(("int", lo, hi), lambda: st.integers(lo, hi))


def _pick(values: tuple):
    return _s(("pick", values), lambda: st.sampled_from(values))


_KINDS = {
    "realistic": ("join", "leave", "resubscribe", "grow", "delete", "create", "rebalance"),
}
# a late member, often while the group changes
_KINDS["stale"] = _KINDS["realistic"] + ("stale",) * 4 + ("join",) * 2
_KINDS["robust"] = _KINDS["stale"] + ("shrink", "claim-ghost", "claim-duplicate")
# KIP-848 (server-side assignors): the coordinator's target assignment is all there is, so no stale claims and
# no duplicates; what remains is a target assignment naming a deleted topic, and empty subscriptions
_KINDS["robust-consumer"] = _KINDS["realistic"] + ("claim-ghost",) * 2
_INSTANCE_IDS = (None, None, None, "i1", "i2", "I0", "i10")


@st.composite
def scenarios(draw, family: str = "realistic", max_members: int = 5, max_partitions: int = 6,
              max_events: int = 5):
    names = draw(_s(("topics",), lambda: st.lists(st.sampled_from(TOPIC_POOL), unique=True, min_size=1,
                                                  max_size=len(TOPIC_POOL))))
    # a topic with no partitions does not exist in Kafka: only the robust family asks about one
    topics = {t: draw(_ints(0 if family == "robust" else 1, max_partitions)) for t in sorted(names)}
    ids = draw(_s(("ids", max_members), lambda: st.lists(st.sampled_from(MEMBER_POOL), unique=True, min_size=1,
                                                          max_size=max_members)))
    # a member subscribed to nothing (a pattern matching no topic) only in the robust family
    low = 0 if family.startswith("robust") else 1
    same = draw(_s(("bool",), st.booleans))
    shared = draw(_topic_subset(low))
    members = []
    for mid in ids:
        subs = shared if same else draw(_topic_subset(low))
        inst = draw(_pick(_INSTANCE_IDS))
        members.append({"id": mid, "topics": list(subs), "instance_id": inst})
    seen = set()
    for m in members:  # instance ids are unique within a group
        if m["instance_id"] in seen:
            m["instance_id"] = None
        seen.add(m["instance_id"])
    kinds = _KINDS[family]
    events = []
    for _ in range(draw(_ints(0, max_events))):
        kind = draw(_pick(kinds))
        if kind == "join":
            events.append([kind, draw(_topic_subset(low)) if not same else list(shared)])
        elif kind in ("leave", "stale"):
            events.append([kind, draw(_ints(0, 7))])
        elif kind == "resubscribe":
            events.append([kind, draw(_ints(0, 7)), draw(_topic_subset(low))])
        elif kind in ("grow", "shrink", "create"):
            events.append([kind, draw(_pick(tuple(TOPIC_POOL))), draw(_ints(1, max_partitions))])
        elif kind == "delete":
            events.append([kind, draw(_pick(tuple(TOPIC_POOL)))])
        elif kind == "claim-ghost":
            events.append([kind, draw(_ints(0, 7)), draw(_pick(tuple(TOPIC_POOL + [GHOST_TOPIC]))),
                           draw(_ints(0, max_partitions + 2))])
        elif kind == "claim-duplicate":
            events.append([kind, draw(_ints(0, 7)), draw(_ints(0, 7))])
        else:
            events.append([kind])
    return {"family": family, "topics": topics, "members": members, "events": events}


class Group:
    """The state a scenario plays on: topics, members, what each member owns, generations."""

    def __init__(self, scenario: dict):
        self.topics = dict(scenario["topics"])
        self.members = [dict(m) for m in scenario["members"]]
        self.owned = {}            # member -> list of [topic, partition] it holds (None = new)
        self.generation = {}       # member -> generation of its owned partitions (None = new)
        self.history = []          # (owned, generation) snapshots before each round
        self.extra_claims = {}     # member -> extra claims injected by robust events
        self.stale = set()         # members reporting an older round's state next time
        self.round = 0

    def _member(self, index):
        return self.members[index % len(self.members)] if self.members else None

    def apply(self, event) -> None:
        kind = event[0]
        if kind == "join":
            used = {m["id"] for m in self.members}
            free = [x for x in MEMBER_POOL if x not in used]
            if free:
                self.members.append({"id": free[0], "topics": list(event[1]), "instance_id": None})
        elif kind == "leave" and len(self.members) > 1:
            m = self._member(event[1])
            self.members.remove(m)
            self.owned.pop(m["id"], None)
            self.generation.pop(m["id"], None)
        elif kind == "resubscribe" and self.members:
            self._member(event[1])["topics"] = list(event[2])
        elif kind == "grow":
            t, n = event[1], event[2]
            if t in self.topics:
                self.topics[t] = max(self.topics[t], n)
        elif kind == "create":
            if event[1] not in self.topics:
                self.topics[event[1]] = event[2]
        elif kind == "delete":
            if len(self.topics) > 1:
                self.topics.pop(event[1], None)
        elif kind == "shrink":
            if event[1] in self.topics:
                self.topics[event[1]] = min(self.topics[event[1]], event[2])
        elif kind == "stale" and self.members:
            self.stale.add(self._member(event[1])["id"])
        elif kind == "claim-ghost" and self.members:
            m = self._member(event[1])
            self.extra_claims.setdefault(m["id"], []).append([event[2], event[3]])
        elif kind == "claim-duplicate" and len(self.members) > 1:
            a, b = self._member(event[1]), self._member(event[2])
            if a is not b and self.owned.get(a["id"]):
                self.extra_claims.setdefault(b["id"], []).append(list(self.owned[a["id"]][0]))

    def problem(self, pid: str, assignor=None) -> dict:
        members = []
        older = self.history[-1] if self.history else None   # state before the last rebalance
        for m in self.members:
            mid = m["id"]
            owned, gen = self.owned.get(mid), self.generation.get(mid)
            if mid in self.stale and older is not None and mid in older[0]:
                owned, gen = older[0][mid], older[1][mid]
            if mid in self.extra_claims:
                owned = list(owned or []) + self.extra_claims[mid]
                gen = self.round if gen is None else gen
            members.append({"id": mid, "topics": list(m["topics"]),
                            "owned": None if owned is None else [list(x) for x in owned],
                            "generation": gen, "instance_id": m["instance_id"]})
        p = {"id": pid, "topics": dict(self.topics), "members": members}
        if assignor:
            p = {"id": pid, "assignor": assignor, "topics": p["topics"], "members": members}
        return p

    def settle(self, problem: dict, assignment: dict) -> bool:
        """Record an answer as the new state; True if a member gave up partitions it owned."""
        self.round += 1
        self.history.append(({k: v for k, v in self.owned.items()}, dict(self.generation)))
        revoked = False
        for m in problem["members"]:
            mid = m["id"]
            mine = [list(x) for x in assignment.get(mid, [])]
            before = {tuple(x) for x in (m["owned"] or [])}
            if before - {tuple(x) for x in mine}:
                revoked = True
            self.owned[mid] = mine
            self.generation[mid] = self.round
        self.stale.clear()
        self.extra_claims.clear()
        return revoked


def play(scenario: dict, solve, cooperative: bool, on_round, assignor=None):
    """Play `scenario`: for each round, `answer = solve(problem)` then
    `on_round(index, problem, answer)` (which may raise to stop). A round without a usable answer
    (an error answer, a crash, a malformed line) changes nothing: the group keeps its state and the
    scenario goes on with its next event, so one refusal does not hide what later rounds show. A
    hang ends the scenario (each one costs a timeout)."""
    from kverify.certify.facts import assignment_of, well_formed
    from kverify.certify.failures import TargetFailure

    group = Group(scenario)
    index = 0
    steps = [None] + list(scenario["events"])
    for event in steps:
        if event is not None:
            group.apply(event)
        follow_ups = 0
        while True:
            problem = group.problem(f"r{index}", assignor)
            answer = solve(problem)
            on_round(index, problem, answer)
            index += 1
            if isinstance(answer, TargetFailure) and answer.kind == "hang":
                return
            if isinstance(answer, TargetFailure) or well_formed(problem, answer) is not None:
                break
            revoked = group.settle(problem, assignment_of(answer))
            if not (cooperative and revoked) or follow_ups >= MAX_FOLLOW_UPS:
                break
            follow_ups += 1
