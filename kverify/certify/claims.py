"""What a target claims: the built-in assignors' declared exceptions and the `--claims` presets.

Why it exists: the claims of a target are data (which properties it promises, and why it does not
promise the others); targets.py, the client-library adapters and the external-program target all
read them, so they live in this leaf module.
"""
from __future__ import annotations

from kverify.certify.properties import ORDER

EAGER = "eager protocol: members revoke everything before each rebalance, nothing moves while owned"
NOT_STICKY = "ignores previous ownership by design"

ROBUST_STICKY = ("Kafka 3.9's sticky assignors throw IllegalStateException or assign a partition twice when owned "
                 "partition numbers exceed a re-created topic's count, and can give partitions to a member "
                 "subscribed to nothing (both reproduced faithfully)")

BUILTIN_CLAIMS = {
    "range": {"balanced": "range balances topic by topic among each topic's subscribers, not across topics",
              "sticky": NOT_STICKY, "cooperative-safe": EAGER},
    "roundrobin": {"balanced": "round-robin deals over all members; with different subscriptions counts can "
                               "differ by more than one", "sticky": NOT_STICKY, "cooperative-safe": EAGER},
    "legacy-range": {"balanced": "blocks of ceil(P/C) can leave the last consumers short or empty",
                     "subscribed-only": "pre-0.9 blocks assume identical subscriptions",
                     "sticky": NOT_STICKY, "cooperative-safe": EAGER},
    "sticky": {"robust": ROBUST_STICKY, "cooperative-safe": EAGER},
    "cooperative-sticky": {"robust": ROBUST_STICKY},
}
ORDER_FREE = {"range", "roundrobin", "legacy-range"}
STICKY_SCOPE = ("claimed where every member subscribes to the same topics (Kafka's constrained algorithm); "
                "with different subscriptions Kafka's general algorithm is a greedy heuristic that can give up "
                "a partition the optimum keeps, so gaps there are reported, not failed")
ORDER_NOTE = ("member order not required: Kafka's sticky assignors walk a HashMap whose collision order "
              "follows the coordinator's member order")


def all_claimed(cooperative: bool) -> dict:
    claims = {p: None for p in ORDER}
    if not cooperative:
        claims["cooperative-safe"] = EAGER
    return claims


# `--claims PRESET`: the usual kinds of assignor. Each lists the properties such an assignor promises;
# the rest are reported but not held against it.
_EAGER = ("answers", "complete", "exclusive", "subscribed-only", "no-ghosts", "deterministic")
PRESETS = {
    "eager": _EAGER,                                       # range / round-robin-like
    "balanced": _EAGER + ("balanced",),                   # eager and balanced across members
    "sticky": _EAGER + ("balanced", "sticky"),            # sticky, eager protocol
    "cooperative": _EAGER + ("balanced", "sticky", "cooperative-safe"),   # cooperative-sticky-like
}
