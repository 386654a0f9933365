"""`kverify explore MODEL --engine spark`: level-synchronous breadth-first search on Spark.

Why it exists: exhaustive search meets the state explosion first, and one Python process stops at
what one core and one heap hold (issue 18). Each level of the search is two Spark jobs over P
partitions; partition i is both the owner of the fingerprints that fall on it and the producer of
the states it holds (model/search/shard.py: the rules, shared with the multi-process engine):

  own[d]  = own[d-1]'s visited set (co-partitioned: no shuffle of it) + the candidates of level d
            (shuffled to their owners) --merge--> visited set, admits (to the partitions holding
            their parents' chunks); its counters and the admits per chunk go to the driver, which
            plans the chunks that move (shard.plan)
  prod[d] = prod[d-1]'s frontier chunks (co-partitioned; the moving ones shuffled) + the admits of
            level d (shuffled to their chunk) --rebuild, expand--> the frontier of level d (pickled
            chunks), the candidates of level d+1 (owner, key, fingerprint, where the parent is),
            good flags; counters to the driver

Records are `(partition, (tag, value))`, one per partition and tag (lists batch the small ones),
so a level costs two small shuffles (plus the chunks that move) and one pickling of each new state
(one pickle a chunk, read with the garbage collector paused, at the next level). What a task reads
is handed to it as Spark keeps it: PySpark unpickles and pickles again every record of an RDD each
time a Python function reads it, so candidates and admits travel as one pickle a list (for bytes
that is a copy), the last level's records reach the next task unfiltered (`_beside`), and the
counters come back through an accumulator while a JVM-side count runs the job (`_materialise`),
not through a collect over every record. Each level's RDDs are persisted (memory, spilling to the
executors' disks) and locally checkpointed (the lineage stays one level long) until the next level
exists. A finding's shortest trace is its order key (shard.path_of), re-executed in this process
and written by the CLI as the usual counterexample record. The state graph for `recoverable` (edges
kept at the owner of their target) is analysed by a backward fixpoint, one job a round. The
protocol is rebuilt on each executor from its registry name, parameters and behaviours
(kverify/spark/world.py), once per Python worker.

Fingerprints must be equal on every executor: with a local master every Python worker is forked
from one daemon, so the explorer's `hash` is used; on a cluster the stable digest (shard.py
`stable_fingerprint`, any Python version). Before a run every partition fingerprints the initial
states and their successors, and the run refuses to start if the partitions disagree.
"""
from __future__ import annotations

from typing import Callable, Optional

from kverify.model.search import parallel as par
from kverify.model.search import shard as sh
from kverify.spark.world import WorldSpec

_MODELS: dict = {}


class SparkExploreError(RuntimeError):
    """Spark could not run the search (one line)."""


def _model(ws: WorldSpec, symmetry: bool, stable: bool) -> sh.Model:
    key = (ws, symmetry, stable)
    m = _MODELS.get(key)
    if m is None:
        m = _MODELS[key] = sh.Model(ws.build(), symmetry, stable)
    return m


def _ident(k: int) -> int:
    return k


def _keep(tags: str):
    def keep(it):
        for rec in it:
            if rec[1][0] in tags:
                yield rec
    return keep


def _moving(moves: dict):
    """The admits ("A", per chunk) and the frontier chunks ("F") that move, keyed by the partition
    that rebuilds them at this level (`moves`: shard.plan)."""
    def route(it):
        for rec in it:
            tag, v = rec[1]
            if tag == "A" or tag == "F" and v[0] in moves:
                yield moves.get(v[0], rec[0]), rec[1]
    return route


def _init_task(ws, symmetry, stable, parts):
    def task(_it):
        m = _model(ws, symmetry, stable)
        meta = sh.new_meta()
        for o, cands in sh.init_candidates(m, parts, meta).items():
            yield o, ("C", sh.dumps(cands))
        yield 0, ("M", meta)
    return task


def _merge_task(ws, symmetry, stable, parts, depth, graph, acc):
    def task(pidx, it):
        m = _model(ws, symmetry, stable)
        owner, cands, goods, metas = None, [], [], []
        for _, (tag, v) in it:
            if tag == "C":
                cands.extend(sh.loads(v))
            elif tag == "G":
                goods.extend(v)
            elif tag == "V":
                owner = v
            elif tag == "M":                        # the initial states' counters (level 0)
                metas.append(v)
        if owner is None:
            owner = sh.Owner(m, graph)
        if owner.graph:
            owner.mark_good(goods)
            if not graph:
                owner.drop_graph()
        meta = sh.new_meta()
        admits = sh.merge(m, owner, pidx, parts, cands, depth, meta)
        del cands
        yield pidx, ("V", owner)
        for pc, a in admits.items():
            yield pc[0], ("A", (pc, sh.dumps(a)))
        acc.add({("merge", depth, pidx): (sh.combine(metas + [meta]), {pc: len(a) for pc, a in admits.items()})})
    return task


def _produce_task(ws, symmetry, stable, parts, depth, pending, expand, graph, key_limit, moves, acc):
    def task(pidx, it):
        m = _model(ws, symmetry, stable)
        blobs, admits = {}, []
        for _, (tag, v) in it:                     # the last level's records and the routed ones
            if tag == "F":
                if moves.get(v[0], v[0][0]) == pidx:   # (not a chunk that moved away)
                    blobs[v[0]] = v[1]
            elif tag == "A":
                admits.extend(sh.loads(v[1]))
        chunks = {pc: sh.loads(blob) for pc, blob in blobs.items()}
        del blobs
        meta = sh.new_meta()
        items, goods = sh.rebuild(m, parts, chunks, admits, depth, pending, meta, graph=graph, key_limit=key_limit)
        del chunks, admits
        for o, g in goods.items():
            yield o, ("G", g)
        cands = sh.expand_items(m, pidx, parts, items, depth + 1, meta, graph) if expand else {}
        for o, c in cands.items():
            yield o, ("C", sh.dumps(c))
        del cands
        for n, chunk in enumerate(sh.chunks_of(items)):     # the frontier, pickled once
            yield pidx, ("F", ((pidx, n), sh.dumps(chunk)))
        acc.add({("produce", depth, pidx): meta})
    return task


def _probe_task(ws, symmetry, stable):
    def task(_it):
        m = _model(ws, symmetry, stable)
        out = []
        for s in (m.inits or [])[:4]:
            out.append(m.owner(s)[:2])
            try:
                acts = list(m.protocol.actions(s))[:8]
                out.extend(m.owner(m.protocol.step(s, a))[:2] for a in acts)
            except Exception:
                pass
        yield tuple(out)
    return task


def _back_start_task(parts):
    def task(pidx, it):
        owner, goods = None, []
        for _, (tag, v) in it:
            if tag == "V":
                owner = v
            elif tag == "G":
                goods.extend(v)
        owner.mark_good(goods)
        b = sh.Backward(owner)
        fresh = b.absorb(i for i, g in enumerate(owner.good) if g)
        yield pidx, ("B", b)
        for j, locs in b.spread(fresh, parts).items():
            yield j, ("S", locs)
        yield pidx, ("M", len(fresh))
    return task


def _back_round_task(parts):
    def task(pidx, it):
        b, incoming = None, []
        for _, (tag, v) in it:
            if tag == "B":
                b = v
            elif tag == "S":
                incoming.extend(v)
        fresh = b.absorb(incoming)
        yield pidx, ("B", b)
        for j, locs in b.spread(fresh, parts).items():
            yield j, ("S", locs)
        yield pidx, ("M", len(fresh))
    return task


def _verdict_task(pidx, it):
    for _, (tag, v) in it:
        if tag == "B":
            yield pidx, v.verdict()


def _slots():
    from pyspark.accumulators import AccumulatorParam

    class Slots(AccumulatorParam):
        """Dict-valued accumulator; a key sent again replaces its value (see SparkDriver._materialise)."""

        def zero(self, value):
            return {}

        def addInPlace(self, a, b):
            a.update(b)
            return a
    return Slots


class SparkDriver(par.LevelDriver):
    """The level loop of model/search/parallel.py with each exchange run as a Spark job."""

    engine = "spark"

    def __init__(self, protocol, ws: WorldSpec, sc, partitions: int, symmetry: bool = True,
                 stable: Optional[bool] = None, **kw):
        from kverify.spark.session import is_local

        super().__init__(protocol, **kw)
        self.ws, self.sc, self.parts, self.symmetry = ws, sc, partitions, symmetry
        self.stable = not is_local(sc.master) if stable is None else stable
        self.own = self.prod = None
        self.acc = sc.accumulator({}, _slots()())   # the tasks' counters (`_materialise`)

    def _args(self) -> tuple:
        return self.ws, self.symmetry, self.stable

    def _persist(self, rdd):
        from pyspark import StorageLevel

        # persist first: PySpark pipelines a Python transformation into an uncached parent, which
        # would make every later level recompute this one (and its checkpoint would never happen)
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        rdd.localCheckpoint()
        return rdd

    def _materialise(self, rdd, phase: str, depth: int) -> list:
        """Compute (and cache) `rdd` with a job that reads nothing back into Python (a collect would
        run one more Python pass over every record of it), then take the counters its tasks sent
        through the accumulator: one value a partition, keyed by (phase, level, partition), so a task
        Spark runs again overwrites its own value instead of adding to it."""
        rdd._jrdd.count()
        got = self.acc.value
        out = [got.pop((phase, depth, i), None) for i in range(self.parts)]
        if any(v is None for v in out):
            raise SparkExploreError(f"the counters of {phase} at level {depth} did not all come back")
        return out

    def _routed(self, rdd, tags: str):
        """The records of `rdd` with these tags, shuffled to the partition their key names."""
        return rdd.mapPartitions(_keep(tags)).partitionBy(self.parts, _ident)

    def _beside(self, rdd, routed):
        """`rdd` (co-partitioned, e.g. the last level's records) beside the `routed` records, partition
        by partition, without a pass over either. `rdd.union(routed)` would first run each through a
        Python pass that unpickles and pickles again every record: PySpark sees two serialisers
        (a shuffle's output is read with a BatchedSerializer, a Python RDD's with the context's
        AutoBatchedSerializer), though both write the same frames (pickled lists of records), which
        the shuffle's deserialiser reads."""
        from pyspark import RDD

        out = RDD(rdd._jrdd.union(routed._jrdd), self.sc, routed._jrdd_deserializer)
        if rdd.partitioner != routed.partitioner:
            raise SparkExploreError("the levels' records lost their partitioning")
        out.partitioner = routed.partitioner
        return out

    def _local(self, rdd, tags: str):
        """The records of `rdd` with these tags, where they are (co-partitioned: no shuffle)."""
        return rdd.mapPartitions(_keep(tags), preservesPartitioning=True)

    def start(self) -> None:
        sc, P = self.sc, self.parts
        seen = set(sc.parallelize(range(2 * P), 2 * P).mapPartitions(_probe_task(*self._args())).collect())
        if len(seen) > 1:
            raise SparkExploreError(f"the executors disagree on the states' fingerprints ({'stable' if self.stable else 'hash'}"
                                    "): states would not meet their owners")
        self.own = sc.parallelize([(i, ("V", None)) for i in range(P)], P).partitionBy(P, _ident)
        self.prod = sc.parallelize([0], 1).mapPartitions(_init_task(*self._args(), P))

    def merge(self, depth: int, graph: bool) -> dict:
        P = self.parts
        # the last level's records as they are (no Python pass to filter them: the task skips what it
        # does not read) + the candidates shuffled to their owners
        inp = self._beside(self.own, self._routed(self.prod, "CGM" if depth == 0 else "CG"))
        own = self._persist(inp.mapPartitionsWithIndex(_merge_task(*self._args(), P, depth, graph, self.acc),
                                                       preservesPartitioning=True))
        got = self._materialise(own, "merge", depth)
        meta = sh.combine(m for m, _ in got)
        self.load = sh.add_loads(n for _, n in got)
        if self.own is not None and depth > 0:
            self.own.unpersist(blocking=False)
        self.own = own
        return meta

    def admit_keys(self, depth: int) -> list:
        return self.own.mapPartitions(_keep("A")).flatMap(lambda r: [a[0] for a in sh.loads(r[1][1][1])]).collect()

    def produce(self, depth, pending, expand, graph, key_limit) -> dict:
        P = self.parts
        moves = sh.plan(self.load, P)
        inp = self.own.mapPartitions(_moving(moves)).partitionBy(P, _ident)
        if depth > 0 and moves:                   # (each side routed in its own pass: a union first is one more)
            inp = inp.union(self.prod.mapPartitions(_moving(moves)).partitionBy(P, _ident))
        if depth > 0:
            inp = self._beside(self.prod, inp)     # the frontier chunks where they are
        prod = self._persist(inp.mapPartitionsWithIndex(
            _produce_task(*self._args(), P, depth, list(pending), expand, graph, key_limit, moves, self.acc),
            preservesPartitioning=True))
        meta = sh.combine(self._materialise(prod, "produce", depth))
        if self.prod is not None:
            self.prod.unpersist(blocking=False)
        self.prod = prod
        return meta

    def backward(self) -> tuple:
        P = self.parts
        cur = self._persist(self._local(self.own, "V").union(self._routed(self.prod, "G"))
                            .mapPartitionsWithIndex(_back_start_task(P), preservesPartitioning=True))
        fresh = sum(cur.mapPartitions(_keep("M")).map(lambda r: r[1][1]).collect())
        while fresh:
            nxt = self._persist(self._local(cur, "B").union(self._routed(cur, "S"))
                                .mapPartitionsWithIndex(_back_round_task(P), preservesPartitioning=True))
            fresh = sum(nxt.mapPartitions(_keep("M")).map(lambda r: r[1][1]).collect())
            cur.unpersist(blocking=False)
            cur = nxt
        bad, firsts = 0, []
        for _, (n, first) in cur.mapPartitionsWithIndex(_verdict_task).collect():
            bad += n
            if first is not None:
                firsts.append(first)
        cur.unpersist(blocking=False)
        return bad, firsts

    def close(self) -> None:
        for rdd in (self.own, self.prod):
            if rdd is not None:
                try:
                    rdd.unpersist(blocking=False)
                except Exception:
                    pass
        self.own = self.prod = None


def explore_spark(model: str, params: dict, behaviours=(), *, symmetry: bool = True, master: str = "local[*]",
                  partitions: Optional[int] = None, max_states: Optional[int] = None,
                  max_seconds: Optional[float] = None, stop_on_first: bool = False, graph_limit=None,
                  stable: Optional[bool] = None, progress: Optional[Callable[[str], None]] = None,
                  conf: Optional[dict] = None):
    """Exhaustive BFS of registry model `model` on Spark; returns (ExploreResult, driver). The
    driver's `bytes` is the size of the visited sets on the executors."""
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
    # one partition per core: measured on replication's 1.3 M-state bound on local[2], 2 partitions ran in 98 s
    # and 4 in 147 s (each more partition splits a level's duplicate successors over more shards, so more
    # candidates cross the shuffle, and adds a task per stage and level)
    n = partitions or sc.defaultParallelism
    if n < 1:
        raise ValueError(f"--partitions must be at least 1, got {n}")
    drv = SparkDriver(protocol, ws, sc, n, symmetry, stable, max_states=max_states, max_seconds=max_seconds,
                      stop_on_first=stop_on_first, graph_limit=graph_limit, progress=progress)
    try:
        res = drv.run()
    except par.WorkerError:
        raise
    except Exception as exc:
        if isinstance(exc, SparkExploreError):
            raise
        from kverify.spark.runner import _one_line

        raise SparkExploreError(f"the Spark search failed: {_one_line(exc)}") from None
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
                  graph_limit=args.graph_limit, progress=progress)
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
        where = f"Spark {args.master}, {drv.parts} partitions, {'stable' if drv.stable else 'hash'} fingerprints"
    if not args.json:
        print(f"explore: engine {args.engine} ({where}): {res.distinct_states} distinct states in {drv.levels} "
              f"levels, {drv.bytes / max(res.distinct_states, 1):.1f} bytes a state in visited sets",
              file=sys.stderr)
    return res
