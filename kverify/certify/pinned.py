"""Scenarios a property's certification plays before its generated ones (Hypothesis explicit examples).

Why it exists: some paths of an assignor need a group history that random generation seldom draws, so a
budget of a few dozen scenarios (the quick profile's) would leave them unjudged. Each scenario here was
found by Hypothesis at a much larger budget, then shrunk; it is an ordinary history of its property's
family (the scenario format of scenarios.py), judged on every target like a generated one. A scenario is
pinned to the one property it is there for, so the other properties' generated counterexamples stay theirs.
"""
from __future__ import annotations

PINNED = {
    "balanced": (
        # Three members on four topics, then one narrows its subscription to t0 alone. Kafka's uniform
        # heterogeneous builder then balances t0 among its three subscribers, and the most loaded of them
        # hold no partition of t0: MemberAssignmentBalancer must exclude them one by one from the most
        # loaded range (a path Hypothesis drew once in ~2,950 realistic scenarios; seed 1729).
        {"family": "realistic", "topics": {"T3": 1, "t0": 2, "t1": 1, "t2": 6},
         "members": [{"id": "c0", "topics": ["T3", "t0", "t1", "t2"], "instance_id": None}],
         "events": [["join", ["T3", "t0", "t1", "t2"]], ["join", ["T3", "t0", "t1", "t2"]],
                    ["resubscribe", 0, ["t0"]]]},
    ),
}


def pinned(prop: str) -> tuple:
    """The pinned scenarios of a property (none for most)."""
    return PINNED.get(prop, ())
