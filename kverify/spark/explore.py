"""`kverify explore MODEL --engine spark`: level-synchronous breadth-first search on Spark.

Why it exists: exhaustive search meets the state explosion first, and one Python process stops at
what one core and one heap hold (issue 18). Here every level of the search is a Spark job over
datasets partitioned by fingerprint (owner = fingerprint mod partitions):

  merged[d-1] --expand (executors: the loop's per-state expansion, step invariants, deadlocks)--> candidates
  candidates --partitionBy(owner)--> union with visited[d-1] (same partitioner: no shuffle of it)
             --merge (owner: new? state invariants, `sometimes`, parent link)--> merged[d]
  merged[d]  = visited slice ("V", one record a partition) + frontier ("F") + links ("L") + counters ("M")
  lm[d]      = merged[d]'s links and counters, persisted on disk (the counters are what the driver collects)

The shard logic (order keys, dedup, subsumption, checks, findings) is model/search/parallel.py's, the
same code the multi-process engine runs, so the answers are the in-process explorer's. Each merged
level is locally checkpointed (memory, spilling to the executors' disks; the lineage stays one level
long) until the next one exists; the parent links of every level stay persisted on the executors'
disks, and a finding's shortest trace is rebuilt from them on the driver (one small job per step),
re-executed in this process and written by the CLI as the usual counterexample record. States travel
as bytes (model/search/parallel.py `dumps`); the protocol is rebuilt on each executor from its
registry name, parameters and behaviours (kverify/spark/world.py), once per Python worker.
"""
from __future__ import annotations

from typing import Callable, Optional

from kverify.model.search import parallel as par
from kverify.spark.world import WorldSpec

_MODELS: dict = {}


class SparkExploreError(RuntimeError):
    """Spark could not run the search (one line)."""


def _model(ws: WorldSpec, symmetry: bool) -> par.Model:
    key = (ws, symmetry)
    m = _MODELS.get(key)
    if m is None:
        m = _MODELS[key] = par.Model(ws.build(), symmetry)
    return m


def _ident(k: int) -> int:
    return k


def _tag_is(tags: str):
    def keep(rec) -> bool:
        return rec[1][0] in tags
    return keep


def _init_task(ws: WorldSpec, symmetry: bool):
    def task(_it):
        m = _model(ws, symmetry)
        meta = par.new_meta()
        for o, c in par.init_candidates(m, meta):
            yield o, ("C", par.dumps(par.with_owner(o, c)))
        yield 0, ("M", meta)
    return task


def _expand_task(ws: WorldSpec, symmetry: bool, depth: int):
    def task(pidx, it):
        m = _model(ws, symmetry)
        meta = par.new_meta()
        items = (par.loads(v[1]) for _, v in it if v[0] == "F")
        for o, c in par.expand_items(m, items, depth, meta):
            yield o, ("C", par.dumps(par.with_owner(o, c)))
        yield pidx, ("M", meta)
    return task


def _merge_task(ws: WorldSpec, symmetry: bool, depth: int, pending: list):
    def task(pidx, it):
        m = _model(ws, symmetry)
        store, cands, metas = None, [], []
        for _, (tag, v) in it:
            if tag == "C":
                cands.append(par.loads(v))
            elif tag == "V":
                store = v
            elif tag == "M":
                metas.append(v)
        if store is None:
            store = par.new_store(m)
        meta = par.new_meta()
        items, links = par.merge(m, store, cands, depth, pending, meta)
        del cands
        yield pidx, ("V", store)
        yield pidx, ("L", links)
        for item in items:
            yield item[1], ("F", par.dumps(item))
        yield pidx, ("M", par.combine(metas + [meta]))
    return task


def _hash_probe(_it):
    yield (hash(None), hash("kverify"), hash(("a", 1, None)))


class SparkDriver(par.LevelDriver):
    """The level loop of model/search/parallel.py with each level run as Spark jobs."""

    engine = "spark"

    def __init__(self, protocol, ws: WorldSpec, sc, partitions: int, symmetry: bool = True, **kw):
        super().__init__(protocol, **kw)
        self.ws, self.sc, self.P, self.symmetry = ws, sc, partitions, symmetry
        self.merged = None
        self.lm: list = []                       # per level: links + counters, persisted on disk

    def _check_hashes(self) -> None:
        seen = set(self.sc.parallelize(range(2 * self.P), 2 * self.P).mapPartitions(_hash_probe).collect())
        if len(seen) > 1:
            raise SparkExploreError("the executors' Python processes disagree on hash() (Python < 3.12 on several "
                                    "hosts, or PYTHONHASHSEED differs): fingerprints would not route states consistently")

    def _level(self, visited, cands, depth: int, pending: list) -> dict:
        from pyspark import StorageLevel

        merged = visited.union(cands.partitionBy(self.P, _ident)).mapPartitionsWithIndex(
            _merge_task(self.ws, self.symmetry, depth, list(pending)), preservesPartitioning=True)
        # persist first: PySpark pipelines a Python transformation into an uncached parent, which
        # would make every later level recompute this one (and its checkpoint would never happen)
        merged.persist(StorageLevel.MEMORY_AND_DISK)
        merged.localCheckpoint()
        lm = merged.filter(_tag_is("LM")).persist(StorageLevel.DISK_ONLY)
        metas = lm.filter(_tag_is("M")).map(lambda r: r[1][1]).collect()
        if self.merged is not None:
            self.merged.unpersist(blocking=False)
        self.merged = merged
        self.lm.append(lm)
        return par.combine(metas)

    def start(self, pending) -> dict:
        self._check_hashes()
        sc = self.sc
        visited = sc.parallelize([(i, ("V", None)) for i in range(self.P)], self.P).partitionBy(self.P, _ident)
        cands = sc.parallelize([0], 1).mapPartitions(_init_task(self.ws, self.symmetry))
        return self._level(visited, cands, 0, pending)

    def level(self, depth: int, pending) -> dict:
        prev = self.merged
        cands = prev.mapPartitionsWithIndex(_expand_task(self.ws, self.symmetry, depth))
        visited = prev.filter(_tag_is("V"))
        return self._level(visited, cands, depth, pending)

    def link(self, depth: int, owner: int, sid: int):
        def find(it):
            for _, (tag, v) in it:
                if tag == "L":
                    got = v.get(sid)
                    if got is not None:
                        yield got
        found = self.sc.runJob(self.lm[depth], find, [owner % self.P])
        return found[0] if found else None

    def close(self) -> None:
        if self.merged is not None:
            self.merged.unpersist(blocking=False)
        for lm in self.lm:
            lm.unpersist(blocking=False)
        self.merged, self.lm = None, []


def explore_spark(model: str, params: dict, behaviours=(), *, symmetry: bool = True, master: str = "local[*]",
                  partitions: Optional[int] = None, max_states: Optional[int] = None,
                  max_seconds: Optional[float] = None, stop_on_first: bool = False,
                  progress: Optional[Callable[[str], None]] = None, conf: Optional[dict] = None):
    """Exhaustive BFS of registry model `model` on Spark; returns (ExploreResult, driver). The
    driver's `bytes` is the size of the visited sets and parent links on the executors."""
    from kverify.spark import session
    from kverify.spark.world import resolve

    ws = resolve(model, params, behaviours)
    protocol = ws.build()
    try:
        sess = session.get(master, conf, app="kverify-explore")
    except Exception as exc:
        from kverify.spark.runner import _one_line

        raise SparkExploreError(f"Spark could not start on {master}: {_one_line(exc)}") from None
    sc = sess.sparkContext
    n = partitions or 2 * sc.defaultParallelism
    if n < 1:
        raise ValueError(f"--partitions must be at least 1, got {n}")
    drv = SparkDriver(protocol, ws, sc, n, symmetry, max_states=max_states, max_seconds=max_seconds,
                      stop_on_first=stop_on_first, progress=progress)
    try:
        res = drv.run()
    except par.WorkerError:
        raise
    except Exception as exc:
        if isinstance(exc, SparkExploreError):
            raise
        from kverify.spark.runner import _one_line

        raise SparkExploreError(f"the Spark search failed: {_one_line(exc)}") from None
    finally:
        drv.close()
    return res, drv


def run_engine(args, protocol, params: dict):
    """`kverify explore --engine spark|processes`: check the engine's flags (UsageError: one line,
    exit 2), run the search, print the engine's figures on stderr; returns the ExploreResult."""
    import os
    import sys

    from kverify.cli import UsageError
    from kverify.model.explore import stderr_progress

    if args.graph:
        raise UsageError(f"--graph needs the state graph, which only --engine inline builds (not {args.engine})")
    progress = None if args.quiet else stderr_progress
    common = dict(max_states=args.max_states, max_seconds=args.max_seconds, stop_on_first=args.first,
                  progress=progress)
    if args.engine == "processes":
        if args.master != "local[*]" or args.partitions is not None:
            raise UsageError("--master and --partitions apply to --engine spark only")
        workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
        if workers < 1:
            raise UsageError(f"--workers must be at least 1, got {workers}")
        drv = par.ProcessesDriver(protocol, workers, args.symmetry, **common)
        try:
            res = drv.run()
        except par.WorkerError as exc:
            raise UsageError(f"explore --engine processes: {exc}") from None
        where = f"{workers} worker processes"
    else:
        from kverify.commands.simulate import _MASTER
        from kverify.spark.world import WorldError

        if args.workers is not None:
            raise UsageError("--workers applies to --engine processes only")
        if not _MASTER.match(args.master):
            raise UsageError(f"--master {args.master!r} is not a Spark master URL (local[*], local[N], spark://HOST:PORT, ...)")
        if args.partitions is not None and args.partitions < 1:
            raise UsageError(f"--partitions must be at least 1, got {args.partitions}")
        try:
            res, drv = explore_spark(args.model, params, args.behaviour, symmetry=args.symmetry, master=args.master,
                                     partitions=args.partitions, **common)
        except (WorldError, SparkExploreError) as exc:
            raise UsageError(f"explore --engine spark: {exc}") from None
        where = f"Spark {args.master}, {drv.P} partitions"
    if not args.json:
        print(f"explore: engine {args.engine} ({where}): {res.distinct_states} distinct states, "
              f"{drv.bytes / max(res.distinct_states, 1):.1f} bytes a state in visited sets + parent links",
              file=sys.stderr)
    return res
