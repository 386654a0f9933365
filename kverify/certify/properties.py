"""The named properties an assignor answer is checked against, each a pure function.

Each check takes the problem (dict, issue 3's format) and the answer dict and returns None when
the property holds or a one-line message naming the members and partitions that break it.
`complete` and `balanced` allow for cooperative assignors: partitions still owned by a member
that is giving them up (in flight) may stay unassigned for one round, and balance is judged on
the settled round that follows.
"""
from __future__ import annotations

from kverify.certify.facts import tp_of as _tp
from kverify.certify.facts import assignment_of, effective_owners, in_flight, subscribed_partitions, well_formed
from kverify.certify.facts import members_of as _members
from kverify.certify.optimum import best_kept

PROPERTIES = {
    "answers": "every valid problem (metadata Kafka can have) gets an assignment: not an error answer, a crash, "
               "a hang or a malformed line; the other properties are judged on the problems that were answered",
    "complete": "every existing partition of a subscribed topic is assigned (cooperative: or still in flight)",
    "exclusive": "no partition is assigned to two members",
    "subscribed-only": "a member only gets partitions of topics it subscribes to",
    "no-ghosts": "the answer names exactly the members asked and only partitions that exist",
    "balanced": "no member holds 2+ more partitions than another member that could take one of them",
    "sticky": "as many owned partitions are kept as the best balanced assignment keeps (optimum from Z3)",
    "cooperative-safe": "no partition goes directly from one owner to another in one round",
    "deterministic": "same input, same answer; shuffled subscription/owned lists (and member order where "
                     "the assignor sorts members) give the same answer",
    "robust": "stale, duplicate or unknown claims, unknown topics and empty subscriptions get a usable answer "
              "(well-formed, no ghosts, nothing twice, subscribed only where the target claims that), not an "
              "error, a crash, a hang or a malformed line",
}
ORDER = list(PROPERTIES)


def no_answer(problem: dict, answer) -> str | None:
    """Why `answer` is not a usable answer to `problem` (an error answer, or not well formed), else None.
    A `TargetFailure` (crash, hang, malformed line) is no answer either; check.judge handles it."""
    return well_formed(problem, answer)


def check_no_ghosts(problem, answer, cooperative=False):
    a = assignment_of(answer)
    asked = set(_members(problem))
    extra = sorted(set(a) - asked)
    if extra:
        return f"answer names members that were not asked: {extra[:5]}"
    missing = [m for m in _members(problem) if m not in a]
    if missing:
        return f"answer leaves out members: {missing[:5]}"
    topics = problem.get("topics", {})
    for m, tps in a.items():
        for t, p in tps:
            if t not in topics:
                return f"{m} gets {t}-{p} of a topic that does not exist"
            if not 0 <= p < topics[t]:
                return f"{m} gets {t}-{p} but {t} has {topics[t]} partitions"
    return None


def check_exclusive(problem, answer, cooperative=False):
    seen = {}
    for m, tps in assignment_of(answer).items():
        for tp in tps:
            if tp in seen:
                who = "twice" if seen[tp] == m else f"and to {seen[tp]}"
                return f"{tp[0]}-{tp[1]} is assigned to {m} {who}"
            seen[tp] = m
    return None


def check_subscribed_only(problem, answer, cooperative=False):
    members = _members(problem)
    for m, tps in assignment_of(answer).items():
        subs = set(members.get(m, {}).get("topics", ()))
        for t, p in tps:
            if t not in subs:
                return f"{m} gets {t}-{p} but subscribes only to {sorted(subs)}"
    return None


def check_complete(problem, answer, cooperative=False):
    a = assignment_of(answer)
    given = {tp for tps in a.values() for tp in tps}
    allowed = in_flight(problem, a) if cooperative else set()
    missing = [tp for tp in subscribed_partitions(problem) if tp not in given and tp not in allowed]
    if missing:
        shown = ", ".join(f"{t}-{p}" for t, p in missing[:6])
        return f"{len(missing)} subscribed partition(s) assigned to no one: {shown}"
    return None


def movable_imbalance(problem, assignment) -> str | None:
    members = _members(problem)
    topics = problem.get("topics", {})
    sizes = {m: len(assignment.get(m, ())) for m in members}
    subs = {m: set(members[m].get("topics", ())) for m in members}
    for a in sorted(members):
        for t, p in assignment.get(a, ()):
            if t not in topics:
                continue
            for b in sorted(members):
                if b != a and t in subs[b] and sizes[a] > sizes[b] + 1:
                    return (f"{a} holds {sizes[a]} partitions and {b} holds {sizes[b]}, "
                            f"yet {b} could take {t}-{p}")
    return None


def check_balanced(problem, answer, cooperative=False):
    a = assignment_of(answer)
    if cooperative and in_flight(problem, a):
        return None  # judged on the follow-up round, once revoked partitions are reassigned
    return movable_imbalance(problem, a)


def kept_count(problem, assignment) -> int:
    owners = effective_owners(problem)
    return sum(1 for m, tps in assignment.items() for tp in set(tps) if owners.get(tp) == m)


def check_sticky(problem, answer, cooperative=False):
    a = assignment_of(answer)
    kept = kept_count(problem, a)   # a cooperative answer's withheld partitions move: not kept either way
    best, how = best_kept(problem, kept)
    if best is None or kept >= best:
        return None
    return f"keeps {kept} owned partition(s); the best balanced assignment keeps {best} (gap {best - kept}, {how})"


def check_cooperative_safe(problem, answer, cooperative=True):
    owners = {}
    for m in problem.get("members", []):
        for x in m.get("owned") or ():
            owners.setdefault(_tp(x), set()).add(m["id"])
    for m, tps in assignment_of(answer).items():
        for tp in tps:
            others = owners.get(tp, set()) - {m}
            if others and m not in owners.get(tp, set()):
                return (f"{tp[0]}-{tp[1]} goes to {m} in the same round {sorted(others)[0]} still owns it "
                        "(it must be revoked first)")
    return None


CHECKS = {
    "complete": check_complete,
    "exclusive": check_exclusive,
    "subscribed-only": check_subscribed_only,
    "no-ghosts": check_no_ghosts,
    "balanced": check_balanced,
    "sticky": check_sticky,
    "cooperative-safe": check_cooperative_safe,
}
