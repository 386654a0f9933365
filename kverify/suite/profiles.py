"""What each profile of `kverify verify` checks, and how much: bounds, budgets, seed, strictness.

Why it exists: a gate is only deterministic when the amount of checking does not depend on the
machine. Every budget here is a count (states, runs, steps, examples), never seconds; `quick` and
`ci` start from a fixed seed; only the user's explicit `--max-seconds` brings the clock in, and a
check it cuts short is INCONCLUSIVE. `ci` is sized so that every check completes (PASS) on the
correct build; `quick` may be inconclusive and says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

DEFAULT_SEED = 1729            # quick and ci: the same seed on every machine, printed; --seed overrides
FIXED_SEED_PROFILES = ("quick", "ci")


@dataclass(frozen=True)
class Budget:
    explore_states: Optional[int]  # distinct states per exhaustive search (None: no cap); EXPLORE_STATES per model
    walk_total: int                # steps over all walks of a model (seeds seed, seed+1, ... until taken)
    walk_steps: int                # steps per walk at most (a walk also ends in a state with no action)
    walk_stretch: int              # while a `sometimes` is unreached, up to walk_total * walk_stretch steps
    machine_examples: int          # Hypothesis examples per model
    machine_steps: int             # Hypothesis steps per example
    examples: int                  # assignor certification: scenarios per property
    spark_runs: int = 0            # seeded walks of the group model on Spark (0: no Spark check)
    strict: bool = False           # INCONCLUSIVE fails the gate (exit 1) unless --no-strict


BUDGETS = {
    "quick": Budget(explore_states=20_000, walk_total=10_000, walk_steps=60, walk_stretch=5,
                    machine_examples=40, machine_steps=40, examples=20),
    "ci": Budget(explore_states=200_000, walk_total=100_000, walk_steps=150, walk_stretch=5,
                 machine_examples=200, machine_steps=60, examples=500, spark_runs=20_000, strict=True),
    "deep": Budget(explore_states=None, walk_total=2_000_000, walk_steps=300, walk_stretch=5,
                   machine_examples=2_000, machine_steps=150, examples=3000, spark_runs=1_000_000),
}

# Model parameters per profile, where a model's defaults are larger than the profile can finish.
# ci: the abstract replication and offsets models at their defaults have more than 600k states; with
# one record each the search completes (measured 13:30 UTC: replication ~110k states, offsets ~46k).
# consumer-group-world completes at its defaults (13,639 states, 14:40 UTC); quick without failover and growth.
PARAMS: dict = {
    "quick": {"assignor-rounds": {"max_events": "2", "max_rounds": "3"},
              "consumer-group-world": {"failover": "false", "grow": "false"}},
    "ci": {"replication": {"records": "1"}, "offsets": {"records": "1"}},
}

# Per-model caps on distinct states, where a model needs another cap than the profile's: in ci about
# twice the measured size, so that a model that grows is noticed (INCONCLUSIVE, a failure under
# --strict) instead of silently making the gate slow; quick completes the small models.
EXPLORE_STATES: dict = {
    "quick": {"group": 40_000, "offsets-world": 20_000, "assignor-rounds": 20_000, "consumer-group-world": 30_000},
    "ci": {"group": 60_000, "replication": 250_000, "offsets": 120_000, "consumer-group": 150_000,
           "group-world": 150_000, "consumer-group-world": 30_000, "replication-world": 80_000,
           "offsets-world": 20_000, "assignor-rounds": 250_000},
}

# The recoverability analysis needs the whole state graph (~1.3 KB a state): the explorer builds it up
# to this many states; a complete search without it is INCONCLUSIVE (recoverability unchecked).
GRAPH_LIMIT = 100_000
GRAPH_LIMITS: dict = {
    "ci": {"replication": 250_000, "assignor-rounds": 250_000, "group-world": 150_000},
    "deep": {m: 300_000 for m in ("group", "replication", "offsets", "group-world", "replication-world",
                                     "offsets-world", "assignor-rounds")},
}


def budget(profile: str) -> Budget:
    return BUDGETS[profile]


def params(profile: str, model: str) -> dict:
    return dict(PARAMS.get(profile, {}).get(model, {}))


def explore_states(profile: str, model: str) -> Optional[int]:
    return EXPLORE_STATES.get(profile, {}).get(model, BUDGETS[profile].explore_states)


def graph_limit(profile: str, model: str) -> int:
    return GRAPH_LIMITS.get(profile, {}).get(model, GRAPH_LIMIT)


def default_seed(profile: str) -> Optional[int]:
    """The fixed seed of a gate profile; None: draw one at random (and print it)."""
    return DEFAULT_SEED if profile in FIXED_SEED_PROFILES else None
