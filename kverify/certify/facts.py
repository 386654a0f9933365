"""Facts about one assignment problem and one answer, shared by the properties and the optimum.

Why it exists: `properties` (the checks) and `optimum` (the best sticky answer, from Z3) both read a
problem the same way — who effectively owns a partition, which partitions are subscribed, whether an
answer is well formed — and neither should import the other to get them (no import cycle).
"""
from __future__ import annotations


def tp_of(x):
    return (x[0], x[1])


def well_formed(problem: dict, answer) -> str | None:
    """None if `answer` is a proper answer to `problem` (shape only), else why not."""
    if not isinstance(answer, dict):
        return f"answer is not a JSON object: {answer!r}"[:300]
    if "error" in answer:
        return f"assignor answered an error: {answer['error']}"[:300]
    a = answer.get("assignment")
    if not isinstance(a, dict):
        return "answer has no 'assignment' object"
    if answer.get("id") != problem.get("id"):
        return f"answer id {answer.get('id')!r} is not the problem id {problem.get('id')!r}"
    for m, tps in a.items():
        if not isinstance(tps, list):
            return f"assignment of {m!r} is not a list"
        for x in tps:
            if (not isinstance(x, list) or len(x) != 2 or not isinstance(x[0], str)
                    or not isinstance(x[1], int) or isinstance(x[1], bool)):
                return f"assignment of {m!r} has a malformed partition {x!r}"
    return None


def assignment_of(answer: dict) -> dict:
    return {m: [tp_of(x) for x in tps] for m, tps in answer["assignment"].items()}


def members_of(problem):
    return {m["id"]: m for m in problem.get("members", [])}


def in_flight(problem: dict, assignment: dict) -> set:
    """Partitions some member owns in the input but was not given back (being revoked)."""
    out = set()
    for m in problem.get("members", []):
        kept = set(assignment.get(m["id"], ()))
        for x in m.get("owned") or ():
            if tp_of(x) not in kept:
                out.add(tp_of(x))
    return out


def subscribed_partitions(problem) -> list:
    topics = problem.get("topics", {})
    subscribed = {t for m in problem.get("members", []) for t in m.get("topics", ())}
    return [(t, p) for t in sorted(subscribed) if t in topics for p in range(topics[t])]


def effective_owners(problem) -> dict:
    """Partition -> the member whose claim counts (highest generation; a tie means nobody),
    over claims on existing partitions of topics the claimant still subscribes to."""
    topics = problem.get("topics", {})
    best = {}
    for m in problem.get("members", []):
        g = m.get("generation")
        g = -1 if g is None else g
        subs = set(m.get("topics", ()))
        for x in dict.fromkeys(tp_of(y) for y in (m.get("owned") or ())):
            t, p = x
            if t not in topics or not 0 <= p < topics[t] or t not in subs:
                continue
            cur = best.get(x)
            if cur is None or g > cur[1]:
                best[x] = (m["id"], g)
            elif g == cur[1]:
                best[x] = (None, g)
    return {tp: who for tp, (who, _g) in best.items() if who is not None}
