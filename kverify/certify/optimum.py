"""The most owned partitions any complete, exclusive, balanced assignment can keep.

`sticky` compares an answer's kept count with this optimum. Cheap bounds come first: if the
answer keeps every valid claim, nothing can do better; if every member subscribes to the same
existing topics, a closed formula gives the optimum. Otherwise, for problems up to
`Z3_LIMIT` (members x partitions), Z3's Optimize maximises the kept count under the
constraints; larger problems are not judged (reported as such). Results are cached.
"""
from __future__ import annotations

import json

from kverify.certify.facts import effective_owners, subscribed_partitions

Z3_LIMIT = 400          # members x subscribed partitions
_CACHE: dict = {}


def _identical_optimum(problem, owners, parts) -> int | None:
    members = problem["members"]
    topics = problem["topics"]
    subs = [frozenset(t for t in m.get("topics", ()) if topics.get(t, 0) > 0) for m in members]
    if len(set(subs)) != 1:
        return None
    n, total = len(members), len(parts)
    q, r = divmod(total, n)
    claims = {}
    for who in owners.values():
        claims[who] = claims.get(who, 0) + 1
    c = [claims.get(m["id"], 0) for m in members]
    return sum(min(x, q) for x in c) + min(r, sum(1 for x in c if x > q))


def _z3_optimum(problem, owners, parts) -> int:
    import z3

    members = [m["id"] for m in problem["members"]]
    topics = problem["topics"]
    subs = {m["id"]: {t for t in m.get("topics", ()) if topics.get(t, 0) > 0} for m in problem["members"]}
    x = {}
    for m in members:
        for tp in parts:
            if tp[0] in subs[m]:
                x[m, tp] = z3.Bool(f"x|{m}|{tp[0]}|{tp[1]}")
    opt = z3.Optimize()
    for tp in parts:
        holders = [x[m, tp] for m in members if (m, tp) in x]
        opt.add(z3.PbEq([(v, 1) for v in holders], 1))
    count = {m: z3.Sum([z3.If(v, 1, 0) for (mm, _tp), v in x.items() if mm == m] or [z3.IntVal(0)])
             for m in members}
    for a in members:
        for t in sorted(subs[a]):
            holds_t = z3.Or([x[a, tp] for tp in parts if tp[0] == t])
            for b in members:
                if b != a and t in subs[b]:
                    opt.add(z3.Implies(holds_t, count[a] <= count[b] + 1))
    kept = z3.Sum([z3.If(x[who, tp], 1, 0) for tp, who in owners.items() if (who, tp) in x] or [z3.IntVal(0)])
    h = opt.maximize(kept)
    if opt.check() != z3.sat:
        raise RuntimeError("no balanced assignment found (cannot happen)")
    return opt.upper(h).as_long()


def best_kept(problem: dict, kept: int):
    """(optimum or None, how it was obtained) for the kept count `kept` of an answer."""
    owners = effective_owners(problem)
    parts = subscribed_partitions(problem)
    live = {tp: who for tp, who in owners.items() if tp in set(parts)}
    if kept >= len(live):
        return len(live), "every valid claim kept"
    ident = _identical_optimum(problem, live, parts)
    if ident is not None:
        return ident, "identical subscriptions, exact formula"
    size = len(problem["members"]) * len(parts)
    if size > Z3_LIMIT:
        return None, f"problem too large for Z3 ({size} > {Z3_LIMIT})"
    key = json.dumps([problem["topics"], [[m["id"], sorted(m.get("topics", ()))] for m in problem["members"]],
                      sorted([list(tp), w] for tp, w in live.items())], sort_keys=True)
    if key not in _CACHE:
        _CACHE[key] = _z3_optimum(problem, live, parts)
    return _CACHE[key], "Z3 optimum"
