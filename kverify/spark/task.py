"""The unit of work: a contiguous range of seeds, walked one after the other in one task.

Both engines run this same function -- Spark inside `mapPartitions`, `--engine inline` in a plain
loop -- so they produce the same rows for the same seeds. Seeds are grouped into ranges of
thousands (a Python task costs tens of milliseconds to schedule; one seed per task would spend
more time scheduling than walking). The split depends only on the first seed, the number of runs
and the range size, never on the number of cores, so a laptop and a cluster produce identical rows.

A row is compact: the seed, steps taken, the first violation (invariant name and step index), a
deadlock flag, how often each action fired, the `sometimes` goals reached, and the fingerprints
(`stable_fingerprint` of `Protocol.abstract`, see MemoisedAbstraction) of the abstract states
this run was the first in its range to visit -- the union over all rows is exactly the set of abstract states visited, at a
fraction of the volume. With a response bound (model/response.py) a row also carries the liveness figures of
its walk: the fair tails' steps, and per property the tails followed and the longest fair response.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, NamedTuple, Optional

from kverify.model.protocol import stable_fingerprint
from kverify.model.walk import walk
from kverify.spark.world import WorldSpec

DEFAULT_MIN_PER_RANGE = 1000
DEFAULT_MAX_PER_RANGE = 10000


class SeedRange(NamedTuple):
    index: int
    start: int
    count: int


class RunRow(NamedTuple):
    seed: int
    steps: int
    invariant: Optional[str]          # first invariant broken (None: none)
    violation_step: Optional[int]
    deadlock: bool
    actions: dict                     # action name -> times fired
    reached: list                     # names of `sometimes` goals reached (sorted)
    fingerprints: list                # abstract states first visited in this range (sorted)
    tail_steps: int = 0               # steps of the fair tails (model/walk.py; not in `steps`)
    tails: dict = {}                  # liveness property -> fair tails followed (never mutated)
    longest: dict = {}                # liveness property -> most fair steps a tail took to discharge it


def seeds_per_range(runs: int) -> int:
    """Default range size: about 16 ranges, each of 1,000 to 10,000 seeds."""
    return max(DEFAULT_MIN_PER_RANGE, min(DEFAULT_MAX_PER_RANGE, -(-runs // 16)))


def split(first_seed: int, runs: int, per_range: int | None = None) -> list[SeedRange]:
    if runs < 1:
        raise ValueError(f"--runs must be at least 1, got {runs}")
    size = per_range or seeds_per_range(runs)
    if size < 1:
        raise ValueError(f"seeds per task must be at least 1, got {size}")
    return [SeedRange(i, first_seed + off, min(size, runs - off))
            for i, off in enumerate(range(0, runs, size))]


@dataclass(frozen=True)
class FaultInjection:
    """Test hook for exactly-once accounting: the first `failures` attempts of each listed range
    walk half its seeds (emitting their rows) and then fail; marker files in `marker_dir`
    remember attempts across processes and executors."""

    marker_dir: str
    ranges: tuple = (0,)
    failures: int = 1


class InjectedFailure(RuntimeError):
    pass


class MemoisedAbstraction:
    """The protocol as the walker sees it in a task, with `abstract` memoised to an int.

    `walk(coverage=True)` fingerprints every visited state with `stable_fingerprint(abstract(s))`
    (canonical form, repr, blake2b): about half of a step's cost for the group model. Here
    `abstract(s)` returns `stable_fingerprint` of the real abstract state, computed once per
    distinct abstract state in the task (a dict keyed by the state), so the walker only hashes a
    small int. A row's fingerprint is therefore stable_fingerprint(stable_fingerprint(abstract)):
    still a process-independent function of the abstract state, identical in both engines.
    Everything else is the protocol itself."""

    MAX_ENTRIES = 200_000

    def __init__(self, protocol):
        self._protocol = protocol
        self._real_abstract = protocol.abstract
        self._memo: dict = {}

    def __getattr__(self, name):
        return getattr(self._protocol, name)

    def abstract(self, state) -> int:
        a = self._real_abstract(state)
        fp = self._memo.get(a)
        if fp is None:
            if len(self._memo) >= self.MAX_ENTRIES:
                self._memo.clear()
            fp = self._memo[a] = stable_fingerprint(a)
        return fp


def run_range(world: WorldSpec, rng: SeedRange, fault: FaultInjection | None = None,
              protocol=None, response_bound: int = 0) -> Iterator[RunRow]:
    """Walk every seed of `rng` and yield one row per seed, in seed order; `response_bound`: the walks
    judge the liveness properties as bounded responses (0: not judged)."""
    protocol = MemoisedAbstraction(protocol if protocol is not None else world.build())
    fail_after = _first_attempt_failure_point(fault, rng)
    seen: set = set()
    for k in range(rng.count):
        if fail_after is not None and k == fail_after:
            raise InjectedFailure(f"injected failure in seed range {rng.index} after {k} seeds")
        seed = rng.start + k
        res = walk(protocol, seed, world.steps, coverage=True, response_bound=response_bound)
        fresh = res.abstract_fingerprints - seen
        seen |= fresh
        v = res.violation
        resp = sorted(res.responses.items())
        yield RunRow(seed, res.steps, v.invariant if v else None, v.step_index if v else None,
                     bool(res.deadlock), dict(sorted(res.actions.items())), sorted(res.reached),
                     sorted(fresh), res.tail_steps, {k: n for k, (n, _) in resp}, {k: m for k, (_, m) in resp})


def _first_attempt_failure_point(fault: FaultInjection | None, rng: SeedRange) -> Optional[int]:
    if fault is None or rng.index not in fault.ranges:
        return None
    for attempt in range(fault.failures):
        marker = os.path.join(fault.marker_dir, f"range-{rng.index}.failed-{attempt}")
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            continue         # this attempt number already failed: a later attempt
        os.close(fd)
        return rng.count // 2
    return None              # every planned failure happened: run normally
