"""`kverify explore MODEL --engine spark`: level-synchronous breadth-first search on Spark.

Why it exists: exhaustive search meets the state explosion first, and one Python process stops at
what one core and one heap hold (issue 18). Each level of the search is two Spark jobs over P
partitions; partition i is both the owner of the fingerprints that fall on it and the producer of
the states it holds (model/search/shard.py: the rules, shared with the multi-process engine):

  own[d]  = own[d-1]'s visited set (co-partitioned: no shuffle of it) + the candidates of level d
            (shuffled to their owners) --merge--> visited set, parent links ("L", kept on disk),
            admits (to their producers), counters
  prod[d] = prod[d-1]'s frontier (co-partitioned) + the admits of level d (shuffled back)
            --rebuild--> the states of level d, each shuffled to its owner once (pickled chunks)
            --expand--> frontier of level d (the same pickles, kept where they are owned), the
            candidates of level d+1 (owner, key, fingerprint, parent: ~100 bytes), good flags, counters

Records are `(partition, (tag, value))`, one per partition and tag (lists batch the small ones),
so a level costs two small shuffles, one shuffle of the new states and one pickling of each new
state (one pickle a chunk, read with the garbage collector paused). Expanding a state where its
fingerprint is owned spreads a level's work over the partitions (rebuilt states kept by their
producer would all stay on the partition of the initial state). Each
level's RDDs are persisted (memory, spilling to the executors' disks) and locally checkpointed (the
lineage stays one level long) until the next level exists; parent links stay on the executors' disks
and a finding's shortest trace is rebuilt from them on the driver, re-executed in this process and
written by the CLI as the usual counterexample record. The state graph for `recoverable` (edges kept
at the owner of their target) is analysed by a backward fixpoint, one job a round. The protocol is
rebuilt on each executor from its registry name, parameters and behaviours (kverify/spark/world.py),
once per Python worker.

Fingerprints must be equal on every executor: with a local master every Python worker is forked
from one daemon, so the explorer's `hash` is used; on a cluster the stable digest (shard.py
`stable_fingerprint`, any Python version). Before a run every partition fingerprints the initial
states and their successors, and the run refuses to start if the partitions disagree.
"""
from __future__ import annotations

import gc
import pickle
from typing import Callable, Optional

from kverify.model.search import parallel as par
from kverify.model.search import shard as sh
from kverify.spark.world import WorldSpec

CHUNK = 2000                      # frontier states a record (one pickle: shared parts pickled once)
_MODELS: dict = {}


class SparkExploreError(RuntimeError):
    """Spark could not run the search (one line)."""


def _model(ws: WorldSpec, symmetry: bool, stable: bool) -> sh.Model:
    key = (ws, symmetry, stable)
    m = _MODELS.get(key)
    if m is None:
        m = _MODELS[key] = sh.Model(ws.build(), symmetry, stable)
    return m


def dumps(obj) -> bytes:
    """One pickle for a chunk of frontier states (their shared parts are written once)."""
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes):
    """pickle.loads with the cyclic garbage collector paused: rebuilding thousands of objects
    otherwise triggers collections over the whole heap (6x slower for group-world states)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(blob)
    finally:
        if was:
            gc.enable()


def _ident(k: int) -> int:
    return k


def _keep(tags: str):
    def keep(it):
        for rec in it:
            if rec[1][0] in tags:
                yield rec
    return keep


def _init_task(ws, symmetry, stable, parts):
    def task(_it):
        m = _model(ws, symmetry, stable)
        meta = sh.new_meta()
        for o, cands in sh.init_candidates(m, parts, meta).items():
            yield o, ("C", cands)
        yield 0, ("M", meta)
    return task


def _merge_task(ws, symmetry, stable, parts, depth, graph):
    def task(pidx, it):
        m = _model(ws, symmetry, stable)
        owner, cands, goods, metas = None, [], [], []
        for _, (tag, v) in it:
            if tag == "C":
                cands.extend(v)
            elif tag == "G":
                goods.extend(v)
            elif tag == "V":
                owner = v
            elif tag == "M":
                metas.append(v)
        if owner is None:
            owner = sh.Owner(m, graph)
        if owner.graph:
            owner.mark_good(goods)
            if not graph:
                owner.drop_graph()
        meta = sh.new_meta()
        admits, links = sh.merge(m, owner, pidx, parts, cands, depth, meta)
        del cands
        yield pidx, ("V", owner)
        yield pidx, ("L", links)
        for j, a in admits.items():
            yield j, ("A", a)
        yield pidx, ("M", sh.combine(metas + [meta]))
    return task


def _rebuild_task(ws, symmetry, stable, parts, depth, pending, graph, key_limit):
    def task(pidx, it):
        m = _model(ws, symmetry, stable)
        chunks, admits = [], []
        for _, (tag, v) in it:
            if tag == "F":
                chunks.append(v)
            elif tag == "A":
                admits.extend(v)
        chunks.sort(key=lambda c: c[0])
        prev = [item for _, blob in chunks for item in loads(blob)]
        del chunks
        meta = sh.new_meta()
        items, goods = sh.rebuild(m, parts, prev, admits, depth, pending, meta, graph=graph, key_limit=key_limit)
        del prev
        for o, its in sh.route_items(items, parts).items():       # each state to its owner, pickled once
            for n, i in enumerate(range(0, len(its), CHUNK)):
                yield o, ("X", ((pidx, n), dumps(its[i:i + CHUNK])))
        for o, g in goods.items():
            yield o, ("G", g)
        yield pidx, ("M", meta)
    return task


def _expand_task(ws, symmetry, stable, parts, depth, expand, graph):
    def task(pidx, it):
        m = _model(ws, symmetry, stable)
        chunks, passed, metas = [], [], []
        for rec in it:
            tag, v = rec[1]
            if tag == "X":
                chunks.append(v)
            elif tag == "M":
                metas.append(v)
            else:
                passed.append(rec)                 # goods, already on their owner's partition
        chunks.sort(key=lambda c: c[0])            # by (source partition, chunk): positions are stable
        items = [item for _, blob in chunks for item in loads(blob)]
        meta = sh.new_meta()
        cands = sh.expand_items(m, pidx, parts, items, depth + 1, meta, graph) if expand else {}
        del items
        for n, (_, blob) in enumerate(chunks):     # the frontier: the same pickles, not made again
            yield pidx, ("F", (n, blob))
        del chunks
        yield from passed
        for o, c in cands.items():
            yield o, ("C", c)
        yield pidx, ("M", sh.combine(metas + [meta]))
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
        self.links: list = []                     # per level: the parent links, persisted on disk

    def _args(self) -> tuple:
        return self.ws, self.symmetry, self.stable

    def _persist(self, rdd):
        from pyspark import StorageLevel

        # persist first: PySpark pipelines a Python transformation into an uncached parent, which
        # would make every later level recompute this one (and its checkpoint would never happen)
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        rdd.localCheckpoint()
        return rdd

    def _metas(self, rdd) -> dict:
        return sh.combine(rdd.mapPartitions(_keep("M")).map(lambda r: r[1][1]).collect())

    def _routed(self, rdd, tags: str):
        """The records of `rdd` with these tags, shuffled to the partition their key names."""
        return rdd.mapPartitions(_keep(tags)).partitionBy(self.parts, _ident)

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
        inp = self._local(self.own, "V").union(self._routed(self.prod, "CGM" if depth == 0 else "CG"))
        own = self._persist(inp.mapPartitionsWithIndex(_merge_task(*self._args(), P, depth, graph),
                                                       preservesPartitioning=True))
        from pyspark import StorageLevel

        links = self._local(own, "LM").persist(StorageLevel.DISK_ONLY)      # one job: links to disk, counters back
        meta = self._metas(links)
        if self.own is not None and depth > 0:
            self.own.unpersist(blocking=False)
        self.own = own
        self.links.append(links)
        return meta

    def admit_keys(self, depth: int) -> list:
        return self.own.mapPartitions(_keep("A")).flatMap(lambda r: [a[0] for a in r[1][1]]).collect()

    def produce(self, depth, pending, expand, graph, key_limit) -> dict:
        P = self.parts
        frontier = self._local(self.prod, "F") if depth > 0 else self.sc.parallelize([], P).partitionBy(P, _ident)
        inp = frontier.union(self._routed(self.own, "A"))
        built = inp.mapPartitionsWithIndex(_rebuild_task(*self._args(), P, depth, list(pending), graph, key_limit),
                                           preservesPartitioning=True)
        prod = self._persist(self._routed(built, "XGM").mapPartitionsWithIndex(
            _expand_task(*self._args(), P, depth, expand, graph), preservesPartitioning=True))
        meta = self._metas(prod)
        if self.prod is not None:
            self.prod.unpersist(blocking=False)
        self.prod = prod
        return meta

    def link(self, depth: int, part: int, sid: int):
        def find(it):
            for _, (tag, v) in it:
                if tag == "L":
                    got = v.get(sid)
                    if got is not None:
                        yield got
        found = self.sc.runJob(self.links[depth], find, [part])
        return found[0] if found else None

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
        for part, (n, first) in cur.mapPartitionsWithIndex(_verdict_task).collect():
            bad += n
            if first is not None:
                firsts.append((first[0], part, first[1]))
        cur.unpersist(blocking=False)
        return bad, firsts

    def close(self) -> None:
        for rdd in [self.own, self.prod] + self.links:
            if rdd is not None:
                try:
                    rdd.unpersist(blocking=False)
                except Exception:
                    pass
        self.own = self.prod = None
        self.links = []


def explore_spark(model: str, params: dict, behaviours=(), *, symmetry: bool = True, master: str = "local[*]",
                  partitions: Optional[int] = None, max_states: Optional[int] = None,
                  max_seconds: Optional[float] = None, stop_on_first: bool = False, graph_limit=None,
                  stable: Optional[bool] = None, progress: Optional[Callable[[str], None]] = None,
                  conf: Optional[dict] = None):
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
              f"levels, {drv.bytes / max(res.distinct_states, 1):.1f} bytes a state in visited sets + parent links",
              file=sys.stderr)
    return res
