"""Turning per-seed rows into the totals of a simulation, with exactly-once accounting.

Two implementations of the same arithmetic: `from_rows` in plain Python (the inline engine) and
`from_dataframe` with Spark DataFrames (the Spark engine, over the Parquet table the job wrote).
Both count each seed once: rows are de-duplicated by seed before anything is added up, so a row
delivered twice (a speculative duplicate, an at-least-once sink) cannot count twice, and the
number of distinct seeds in the requested range is what `runs_completed` reports -- a lost seed
shows as runs_completed < runs_requested rather than disappearing silently.

Per invariant the exemplar is the run that broke it earliest (smallest step, then smallest seed):
the cheapest to re-run and shrink. A deadlock counts as the pseudo-invariant "deadlock"; a liveness
property whose bounded response failed (model/response.py) counts under its own name, like an invariant.
The liveness figures add up the same way: fair tails per property (a sum), their longest response (a max).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kverify.model.shrink import DEADLOCK

EXACT_DISTINCT_LIMIT = 5_000_000     # fingerprint rows above which Spark counts approximately
APPROX_RSD = 0.01


@dataclass
class Totals:
    rows: int = 0                     # rows received (duplicates included)
    runs_completed: int = 0           # distinct seeds inside the requested range
    duplicate_rows: int = 0
    foreign_rows: int = 0             # rows whose seed is outside the requested range
    steps: int = 0
    violations: dict = field(default_factory=dict)       # invariant -> runs breaking it
    exemplars: dict = field(default_factory=dict)        # invariant -> (step, seed)
    distinct_abstract_states: int = 0
    distinct_exact: bool = True
    actions: dict = field(default_factory=dict)          # action name -> times fired
    reached: list = field(default_factory=list)          # `sometimes` goals reached by some run
    tail_steps: int = 0                                  # steps of the walks' fair tails (liveness)
    tails: dict = field(default_factory=dict)            # liveness property -> fair tails followed
    longest: dict = field(default_factory=dict)          # liveness property -> longest fair response (steps)

    def comparable(self) -> dict:
        """Everything two engines must agree on for the same seeds."""
        return {k: getattr(self, k) for k in ("runs_completed", "steps", "violations", "exemplars",
                                              "distinct_abstract_states", "actions", "reached", "tail_steps",
                                              "tails", "longest")}


def _finding(row):
    if row.invariant is not None:
        return row.invariant, row.violation_step
    if row.deadlock:
        return DEADLOCK, row.steps
    return None


def from_rows(rows, first_seed: int, runs: int) -> Totals:
    t = Totals()
    seen = set()
    fps = set()
    actions: dict = {}
    reached = set()
    for row in rows:
        t.rows += 1
        if not first_seed <= row.seed < first_seed + runs:
            t.foreign_rows += 1
            continue
        if row.seed in seen:
            t.duplicate_rows += 1
            continue
        seen.add(row.seed)
        t.steps += row.steps
        f = _finding(row)
        if f is not None:
            inv, step = f
            t.violations[inv] = t.violations.get(inv, 0) + 1
            best = t.exemplars.get(inv)
            if best is None or (step, row.seed) < best:
                t.exemplars[inv] = (step, row.seed)
        for name, n in row.actions.items():
            actions[name] = actions.get(name, 0) + n
        reached.update(row.reached)
        fps.update(row.fingerprints)
        t.tail_steps += row.tail_steps
        for name, n in row.tails.items():
            t.tails[name] = t.tails.get(name, 0) + n
        for name, m in row.longest.items():
            t.longest[name] = max(t.longest.get(name, 0), m)
    t.runs_completed = len(seen)
    t.distinct_abstract_states = len(fps)
    t.violations = dict(sorted(t.violations.items()))
    t.exemplars = dict(sorted(t.exemplars.items()))
    t.actions = dict(sorted(actions.items()))
    t.reached = sorted(reached)
    t.tails, t.longest = dict(sorted(t.tails.items())), dict(sorted(t.longest.items()))
    return t


def from_dataframe(df, first_seed: int, runs: int, *, exact_limit: int = EXACT_DISTINCT_LIMIT) -> Totals:
    """The same totals computed by Spark over a DataFrame with the RunRow columns, in three jobs:
    the counts, one grouping of every (kind, name) fact (actions, goals, findings), and the
    distinct fingerprints."""
    from pyspark.sql import functions as F

    t = Totals()
    inside = (F.col("seed") >= first_seed) & (F.col("seed") < first_seed + runs)
    counts = df.agg(F.count(F.lit(1)).alias("rows"),
                    F.sum(F.when(inside, 0).otherwise(1)).alias("foreign"),
                    F.countDistinct(F.when(inside, F.col("seed"))).alias("runs"),
                    F.sum("steps").alias("steps"), F.sum("tail_steps").alias("tail_steps"),
                    F.sum(F.size("fingerprints")).alias("fp_rows")).collect()[0]
    t.rows, t.foreign_rows, t.runs_completed = int(counts["rows"]), int(counts["foreign"] or 0), int(counts["runs"])
    t.duplicate_rows = t.rows - t.foreign_rows - t.runs_completed
    runs_df = df
    if t.duplicate_rows or t.foreign_rows:
        # rows of one seed are identical (walks are deterministic): keep one of each
        runs_df = df.where(inside).dropDuplicates(["seed"])
        again = runs_df.agg(F.sum("steps").alias("steps"), F.sum("tail_steps").alias("tail_steps"),
                            F.sum(F.size("fingerprints")).alias("fp_rows")).collect()[0]
        t.steps, fp_rows = int(again["steps"] or 0), int(again["fp_rows"] or 0)
        t.tail_steps = int(again["tail_steps"] or 0)
    else:
        t.steps, fp_rows = int(counts["steps"] or 0), int(counts["fp_rows"] or 0)
        t.tail_steps = int(counts["tail_steps"] or 0)

    finding = (F.when(F.col("invariant").isNotNull(), F.col("invariant"))
               .when(F.col("deadlock"), F.lit(DEADLOCK)))
    at = F.when(F.col("invariant").isNotNull(), F.col("violation_step")).otherwise(F.col("steps"))
    # a fact: (kind, name, n summed, best: the earliest (step, seed) of a finding, m: maxed)
    fact = lambda kind, name, n, best=None, m=None: F.struct(  # noqa: E731
        F.lit(kind).alias("kind"), name.alias("name"), n.cast("long").alias("n"),
        (best if best is not None else F.lit(None).cast("struct<at:int,seed:long>")).alias("best"),
        (m if m is not None else F.lit(None)).cast("long").alias("m"))
    facts = F.concat(
        F.transform(F.map_entries("actions"), lambda e: fact("action", e["key"], e["value"])),
        F.transform("reached", lambda r: fact("reached", r, F.lit(1))),
        F.transform(F.map_entries("tails"), lambda e: fact("tails", e["key"], e["value"])),
        F.transform(F.map_entries("longest"), lambda e: fact("longest", e["key"], F.lit(0), m=e["value"])),
        F.when(finding.isNotNull(),
               F.array(fact("finding", finding, F.lit(1),
                            F.struct(at.cast("int").alias("at"), F.col("seed").alias("seed")))))
        .otherwise(F.array().cast("array<struct<kind:string,name:string,n:bigint,best:struct<at:int,seed:bigint>,"
                                  "m:bigint>>")),
    )
    grouped = (runs_df.select(F.explode(facts).alias("f"))
               .groupBy("f.kind", "f.name").agg(F.sum("f.n").alias("n"), F.min("f.best").alias("best"),
                                                F.max("f.m").alias("m"))
               .collect())
    for r in grouped:
        if r["kind"] == "action":
            t.actions[r["name"]] = int(r["n"])
        elif r["kind"] == "reached":
            t.reached.append(r["name"])
        elif r["kind"] == "tails":
            t.tails[r["name"]] = int(r["n"])
        elif r["kind"] == "longest":
            t.longest[r["name"]] = int(r["m"])
        else:
            t.violations[r["name"]] = int(r["n"])
            t.exemplars[r["name"]] = (int(r["best"]["at"]), int(r["best"]["seed"]))

    fps = runs_df.select(F.explode("fingerprints").alias("fp"))
    if fp_rows <= exact_limit:
        t.distinct_abstract_states = int(fps.agg(F.countDistinct("fp")).collect()[0][0])
    else:
        t.distinct_exact = False
        t.distinct_abstract_states = int(fps.agg(F.approx_count_distinct("fp", APPROX_RSD)).collect()[0][0])
    t.violations = dict(sorted(t.violations.items()))
    t.exemplars = dict(sorted(t.exemplars.items()))
    t.actions = dict(sorted(t.actions.items()))
    t.reached = sorted(t.reached)
    t.tails, t.longest = dict(sorted(t.tails.items())), dict(sorted(t.longest.items()))
    return t
