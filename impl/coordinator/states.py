"""The five classic group states and Kafka's table of legal transitions (digest §1.1).

A transition whose source is not among the target's valid previous states raises
`IllegalStateError` with Kafka's wording (`GroupMetadata.assertValidTransition`).
"""
from __future__ import annotations

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

ALL_STATES = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)

# target -> valid previous states (in Kafka's declaration order, used in the error message)
VALID_PREVIOUS = {
    EMPTY: (PREPARING_REBALANCE,),
    PREPARING_REBALANCE: (STABLE, COMPLETING_REBALANCE, EMPTY),
    COMPLETING_REBALANCE: (PREPARING_REBALANCE,),
    STABLE: (COMPLETING_REBALANCE,),
    DEAD: (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD),
}


class IllegalStateError(Exception):
    """Kafka's IllegalStateException: an internal invariant of the coordinator was violated."""


def check_transition(group_id: str, source: str, target: str) -> None:
    if target not in VALID_PREVIOUS:
        raise IllegalStateError(f"unknown group state {target!r}")
    if source not in VALID_PREVIOUS[target]:
        raise IllegalStateError(
            f"Group {group_id} should be in the {','.join(VALID_PREVIOUS[target])} states before moving "
            f"to {target} state. Instead it is in {source} state")


def can_rebalance(state: str) -> bool:
    """`GroupMetadata.canRebalance`: the state may move to PreparingRebalance."""
    return state in VALID_PREVIOUS[PREPARING_REBALANCE]
