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

# Z3 obligations per profile (the `z3:obligations` check). Every solver query is bounded by a count of Z3's
# deterministic resource units (`kverify.model.proofs.limit`; each proof module's WORK, sized at 10x the
# largest query measured by bench/prove_work.py), so no verdict depends on the machine's load. ci proves
# every obligation at full size; quick reaches every obligation family (one module of model/proofs each)
# at the smallest meaningful size ("small": group model with 2 member slots, replication with 2 replicas,
# 6 sticky scenarios) and, for the six consumer-group obligations (one encoding), a fixed subset of two; `z3_work_scale` multiplies
# every per-query budget (1: as measured).
@dataclass(frozen=True)
class Z3Plan:
    size: str = "full"                      # "full" | "small" (kverify.model.proofs.budget)
    only: Optional[tuple] = None            # obligation names to run (None: every one)
    work_scale: float = 1.0                 # multiplies each module's per-query work budget


Z3_PLANS = {
    "quick": Z3Plan(size="small", only=(
        "coordinator-partition-in-range", "coordinator-partition-min-value",            # coordinator_selection
        "range-exactly-once", "range-balanced-per-topic", "roundrobin-exactly-once-balanced",  # assignor_arith
        "group-generation-monotonicity", "group-exclusive-ownership", "group-committed-offset-safety",
        "sticky-optimum",
        "replication-i-dur", "replication-i-lcc",
        "consumer-group-target-legal", "consumer-group-epoch-follows-target")),
}


def z3_plan(profile: str) -> Z3Plan:
    return Z3_PLANS.get(profile, Z3Plan())


# The recoverability analysis needs the whole state graph (~1.3 KB a state): the explorer builds it up
# to this many states; a complete search without it is INCONCLUSIVE (recoverability unchecked).
GRAPH_LIMIT = 100_000
GRAPH_LIMITS: dict = {
    "ci": {"replication": 250_000, "assignor-rounds": 250_000, "group-world": 150_000},
    "deep": {m: 300_000 for m in ("group", "replication", "offsets", "group-world", "replication-world",
                                     "offsets-world", "assignor-rounds")},
}


# Walks judging the liveness properties as bounded responses (`liveness:walk/*`, kverify/suite/liveness_walks.py):
# per model `runs` seeded walks of at most `steps` steps; a started obligation must be discharged within `bound`
# fair steps (None: model/response.py DEFAULT_BOUND).
@dataclass(frozen=True)
class LivenessWalks:
    runs: int
    steps: int
    bound: Optional[int] = None


LIVENESS_WALKS = {"quick": LivenessWalks(runs=100, steps=60), "ci": LivenessWalks(runs=400, steps=80),
                  "deep": LivenessWalks(runs=5_000, steps=150)}


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
