"""Level-synchronous breadth-first search split by fingerprint: the driver's loop and the multi-process engine.

Why it exists: one Python process stops at what one core and one heap hold (issue 18). The search is
split between shards (model/search/shard.py: what one shard does at a level, and why the answers are
the in-process explorer's); this module is the driver's side, written once for every engine
(`LevelDriver`: levels, stop rules, progress, traces, the recoverability analysis, the
`ExploreResult`), and the engine that runs the shards as forked worker processes (`ProcessesDriver`,
`kverify explore --engine processes`; they swap small records through files in /dev/shm, and keep
what a worker sends itself in memory). The Spark engine (kverify/spark/explore.py) runs the same
shards as Spark tasks.

A level `d` is two exchanges: `merge(d)` (each owner takes the candidates sent to it, keeps the new
states, answers the shards holding their parents, and counts the admitted states per frontier chunk)
and `produce(d)` (the chunks `shard.plan` moves go, with their admits, to the less loaded shards;
then each shard rebuilds, checks and expands the admitted states of the chunks it holds, sending the
candidates of level d+1). A state is serialised only when its chunk moves; otherwise only candidate
records (about 100 bytes) and admits travel.

Stop rules act between the two exchanges of a level, so a cut is a clean one: `--max-states N` keeps
exactly the first N distinct states in breadth-first order (the in-process explorer's N states) and
checks them, `--max-seconds` and `--first` stop after the level they hit; the result says it is
partial, up to which depth every state was found and checked, and how many states were left
unexpanded. The state graph for `recoverable` is kept (edges at the owner of their target) up to
`graph_limit` states, as in-process, and analysed by a distributed backward fixpoint
(shard.py `Backward`).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import traceback
from typing import Callable, Optional

from kverify.invariants.core import Violation
from kverify.model.search import shard as sh
from kverify.model.search.loop import follow_indices
from kverify.model.search.shard import RADIX, Model, combine, new_meta  # noqa: F401  (the engines' imports)


class WorkerError(RuntimeError):
    """A worker process failed (the message is its traceback's last line)."""


class LevelDriver:
    """The driver's side of a level-synchronous search, whatever runs the shards. An engine
    supplies `start()`, `merge(depth, graph) -> meta`, `admit_keys(depth) -> [key]`,
    `produce(depth, pending, expand, graph, key_limit) -> meta`, `backward() -> (unrecoverable,
    [(level, key)])` and `close()`. A trace is re-executed from its state's order key
    (`shard.path_of`). After `run`, `bytes` = the visited sets on the shards."""

    engine = "parallel"
    parts = 1

    def __init__(self, protocol, *, max_states=None, max_seconds=None, stop_on_first=False, graph_limit=None,
                 progress: Optional[Callable[[str], None]] = None):
        from kverify.model.explore import GRAPH_LIMIT

        self.protocol = protocol
        self.max_states, self.max_seconds, self.stop_on_first = max_states, max_seconds, stop_on_first
        self.graph_limit = GRAPH_LIMIT if graph_limit is None else graph_limit
        self.progress = progress
        self.bytes = 0
        self.levels = 0

    def run(self):
        try:
            return self._run()
        finally:
            self.close()

    def _run(self):
        from kverify.model.explore import ExploreResult, Found, GraphReport, graph_note

        t0 = time.monotonic()
        p = self.protocol
        names = sorted(q.name for q in p.sometimes())
        pending = list(names)
        total = new_meta()
        per_depth: dict = {}
        graph = self.graph_limit > 0
        dropped = False
        stopped, depth, max_depth, last_admitted = "", 0, 0, 0
        self.start()
        while True:
            m = self.merge(depth, graph)
            total = combine([total, m])
            self.bytes = m["store_bytes"]
            key_limit = None
            if self.max_states is not None and total["new"] >= self.max_states:
                stopped = "max-states"
                over = total["new"] - self.max_states
                if over:
                    keys = sorted(self.admit_keys(depth))
                    key_limit = keys[len(keys) - over - 1]
                    total["new"] = self.max_states
            elif self.max_seconds is not None and time.monotonic() - t0 >= self.max_seconds:
                stopped = "max-seconds"
            if graph and total["new"] > self.graph_limit:
                graph, dropped = False, True
            pending = [n for n in pending if n not in total["reached"]]
            m = self.produce(depth, pending, not stopped, graph, key_limit)
            total = combine([total, m])
            last_admitted = m["admitted"]
            if last_admitted or depth == 0:
                per_depth[depth] = last_admitted
            if last_admitted:
                max_depth = depth
            self.levels = depth + 1
            self._report(depth, total, last_admitted, t0)
            if stopped or not m["emitted"]:
                break
            if self.stop_on_first and total["findings"]:
                stopped = "violation"
                break
            if self.max_seconds is not None and time.monotonic() - t0 >= self.max_seconds:
                stopped = "max-seconds"
                break
            depth += 1
        complete = not stopped
        unexpanded = last_admitted if stopped in ("max-states", "max-seconds") and not m["emitted"] else 0
        res = ExploreResult(distinct_states=total["new"], transitions=total["transitions"], max_depth=max_depth,
                            complete=complete, stopped=stopped,
                            covered_depth=max_depth if complete else max(depth - (key_limit is not None), 0),
                            expanded=total["expanded"], unexpanded=unexpanded,
                            sometimes={n: total["reached"].get(n) for n in names},
                            states_per_depth=per_depth, deadlocks=total["deadlocks"])
        found = []
        for name, (order, msg, ref) in total["findings"].items():
            init, acts = self.trace(p, ref)
            found.append(Found(Violation(name, msg, len(acts)), init, acts))
        if self.graph_limit > 0:
            rep = GraphReport()
            rep.note = graph_note(dropped, self.graph_limit, complete, total["findings"])
            if not rep.note:
                rep.nodes, rep.edges, rep.fault_edges = total["new"], total["edges"], total["fault_edges"]
                rep.good_states = total["good"]
                bad, firsts = self.backward()
                rep.unrecoverable, rep.analysed = bad, True
                if bad:
                    found.append(self._recoverable(p, bad, firsts))
            res.graph = rep
        found.sort(key=lambda f: (len(f.actions), f.invariant))
        res.violations = found
        res.seconds = time.monotonic() - t0
        return res

    def _recoverable(self, p, bad: int, firsts: list):
        """The unrecoverable state with the smallest (level, key), as a `recoverable` finding."""
        from kverify.model.explore import Found, recoverable_violation

        level, key = min(firsts)
        init, ks = sh.path_of(key, level)
        acts = self.replay(p, init, ks)
        return Found(recoverable_violation(bad, len(acts)), init, acts)

    def _report(self, depth, total, frontier, t0) -> None:
        if self.progress is None:
            return
        dt = max(time.monotonic() - t0, 1e-9)
        self.progress(f"explore[{self.engine}]: level {depth}: {total['new']} distinct, frontier {frontier}, "
                      f"{total['transitions']} transitions, {total['new'] / dt:,.0f} distinct/s, "
                      f"{dt:,.0f}s")

    @staticmethod
    def replay(p, init: int, ks: list) -> list:
        return follow_indices(p, init, ks)[0]

    def trace(self, p, ref) -> tuple:
        """(init index, actions) of a finding: the path to its state re-executed (plus its own step)."""
        if ref is None:
            return 0, []
        depth, key, last = ref
        init, ks = sh.path_of(key, depth)
        acts = self.replay(p, init, ks)
        if last is not None:
            acts.append(last)
        return init, acts

    def backward(self) -> tuple:
        """The engine's backward pass for `recoverable` (the distributed fixpoint): each engine has its own
        (ProcessesDriver.backward, kverify/spark/explore.py SparkDriver.backward); a driver without one
        cannot claim recoverability, so this base refuses rather than answering."""
        raise NotImplementedError(f"{type(self).__name__} has no backward pass for recoverable")

    def close(self) -> None:
        pass


# --- the multi-process engine -------------------------------------------------------------------

def _exchange_dir() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="kverify-explore-", dir=base)


class _Worker:
    """One worker process: owner of its fingerprint slice, producer of the states it holds."""

    def __init__(self, model: Model, index: int, n: int, xdir: str, graph: bool):
        self.model, self.index, self.n, self.xdir = model, index, n, xdir
        self.owner = sh.Owner(model, graph)
        self.chunks: dict = {}                  # this worker's frontier: {(part, chunk): items}
        self.work: list = []                    # [(chunk key, items, admits)] to rebuild at this level
        self.mine: dict = {}                    # tag -> what this worker sent itself (never pickled)
        self.back: Optional[sh.Backward] = None

    def _send(self, tag: str, buckets: dict) -> None:
        for w, b in buckets.items():
            if w == self.index:
                self.mine[tag] = b
                continue
            path = os.path.join(self.xdir, f"{tag}-{self.index}-{w}")
            with open(path + ".tmp", "wb") as fh:
                fh.write(sh.dumps(b))
            os.replace(path + ".tmp", path)

    def _gather(self, tag: str) -> list:
        out = []
        for w in range(self.n):
            if w == self.index:
                out.extend(self.mine.pop(tag, ()))
                continue
            path = os.path.join(self.xdir, f"{tag}-{w}-{self.index}")
            if os.path.exists(path):
                with open(path, "rb") as fh:
                    out.extend(sh.loads(fh.read()))
                os.remove(path)
        return out

    def start(self) -> None:
        if self.index == 0:
            meta = new_meta()
            self._send("c", sh.init_candidates(self.model, self.n, meta))
            self.init_meta = meta
        else:
            self.init_meta = new_meta()

    def merge(self, depth: int, graph: bool) -> dict:
        meta = self.init_meta if depth == 0 else new_meta()
        if self.owner.graph:
            self.owner.mark_good(self._gather("g"))
            if not graph:
                self.owner.drop_graph()
        self.admits = admits = sh.merge(self.model, self.owner, self.index, self.n, self._gather("c"), depth, meta)
        out: dict = {}
        for pc, a in admits.items():
            out.setdefault(pc[0], []).append((pc, a))
        self._send("a", out)
        meta["load"] = {pc: len(a) for pc, a in admits.items()}
        return meta

    def admit_keys(self, depth: int) -> list:
        return [a[0] for b in self.admits.values() for a in b]

    def ship(self, depth: int, moves: dict) -> None:
        """Phase 1 of a level's production: take the admits of the chunks held here; the chunks
        `moves` names go, with their admits, to their new worker."""
        groups: dict = {}
        for pc, a in self._gather("a"):                   # owners in worker order
            groups.setdefault(pc, []).extend(a)
        keep, out = [], {}
        for pc, a in groups.items():
            entry = (pc, self.chunks.get(pc), a)          # (no chunk at level 0: initial states)
            t = moves.get(pc)
            if t is None:
                keep.append(entry)
            else:
                out.setdefault(t, []).append(entry)
        self.chunks = {}
        self._send("s", out)
        self.work = keep

    def produce(self, depth: int, pending, expand: bool, graph: bool, key_limit) -> dict:
        """Phase 2: rebuild, check and expand the admitted states of the chunks held here; they
        become this worker's frontier."""
        meta = new_meta()
        work, self.work = self.work + self._gather("s"), []
        chunks = {pc: items for pc, items, _ in work}
        admits = [x for _, _, a in work for x in a]
        items, goods = sh.rebuild(self.model, self.n, chunks, admits, depth, pending, meta, graph=graph,
                                  key_limit=key_limit)
        del chunks, admits, work
        self._send("g", goods)
        cands = sh.expand_items(self.model, self.index, self.n, items, depth + 1, meta, graph) if expand else {}
        self._send("c", cands)
        self.chunks = {(self.index, c): ch for c, ch in enumerate(sh.chunks_of(items))}
        return meta

    def back_start(self) -> int:
        self.owner.mark_good(self._gather("g"))
        self.back = b = sh.Backward(self.owner)
        fresh = b.absorb(i for i, g in enumerate(self.owner.good) if g)
        self._send("b0", b.spread(fresh, self.n))
        return len(fresh)

    def back_round(self, r: int) -> int:
        """Round r of the backward fixpoint (its files are named by round: a fast worker's next round
        must not overwrite what a slow one has not read yet)."""
        fresh = self.back.absorb(self._gather(f"b{r - 1}"))
        self._send(f"b{r}", self.back.spread(fresh, self.n))
        return len(fresh)

    def back_verdict(self) -> tuple:
        return self.back.verdict()


def _serve(conn, worker: _Worker) -> None:
    while True:
        try:
            cmd, *args = conn.recv()
        except EOFError:
            return
        if cmd == "stop":
            conn.send(("ok", None))
            return
        try:
            conn.send(("ok", getattr(worker, cmd)(*args)))
        except BaseException:
            conn.send(("error", traceback.format_exc(limit=8)))


def _run_worker(conn, model, index, n, xdir, graph) -> None:
    _serve(conn, _Worker(model, index, n, xdir, graph))


class ProcessPool:
    """N forked worker processes, each a `_Worker`; `call(cmd, *args)` runs it on all of them."""

    def __init__(self, model: Model, workers: int, graph: bool):
        import multiprocessing as mp

        ctx = mp.get_context("fork")        # children share the driver's hash secret: same fingerprints
        self.xdir = _exchange_dir()
        self.conns, self.procs = [], []
        for i in range(workers):
            a, b = ctx.Pipe()
            p = ctx.Process(target=_run_worker, args=(b, model, i, workers, self.xdir, graph), daemon=True)
            p.start()
            b.close()
            self.conns.append(a)
            self.procs.append(p)

    def call(self, cmd: str, *args) -> list:
        for c in self.conns:
            c.send((cmd, *args))
        return [self._answer(c) for c in self.conns]

    @staticmethod
    def _answer(c):
        try:
            status, value = c.recv()
        except EOFError:
            raise WorkerError("a worker process died") from None
        if status != "ok":
            raise WorkerError(value.strip().splitlines()[-1])
        return value

    def close(self) -> None:
        for c in self.conns:
            try:
                c.send(("stop",))
                c.recv()
            except (OSError, EOFError):
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        shutil.rmtree(self.xdir, ignore_errors=True)


class ProcessesDriver(LevelDriver):
    engine = "processes"

    def __init__(self, protocol, workers: int, symmetry: bool = True, stable: bool = False, **kw):
        super().__init__(protocol, **kw)
        self.parts = self.workers = workers
        self.model = Model(protocol, symmetry, stable)        # forked workers agree on `hash`: stable is optional
        self.pool: Optional[ProcessPool] = None

    def start(self) -> None:
        self.pool = ProcessPool(self.model, self.workers, self.graph_limit > 0)
        self.pool.call("start")

    def merge(self, depth, graph) -> dict:
        metas = self.pool.call("merge", depth, graph)
        self.load = sh.add_loads(m.pop("load") for m in metas)
        return combine(metas)

    def admit_keys(self, depth) -> list:
        return [k for ks in self.pool.call("admit_keys", depth) for k in ks]

    def produce(self, depth, pending, expand, graph, key_limit) -> dict:
        self.pool.call("ship", depth, sh.plan(self.load, self.parts))
        return combine(self.pool.call("produce", depth, pending, expand, graph, key_limit))

    def backward(self) -> tuple:
        fresh, r = sum(self.pool.call("back_start")), 0
        while fresh:
            r += 1
            fresh = sum(self.pool.call("back_round", r))
        bad, firsts = 0, []
        for n, first in self.pool.call("back_verdict"):
            bad += n
            if first is not None:
                firsts.append(first)
        return bad, firsts

    def run(self):
        try:
            return super().run()
        finally:
            if self.pool is not None:
                self.pool.close()
                self.pool = None


def explore_processes(protocol, workers: int = 2, symmetry: bool = True, **kw):
    """Exhaustive BFS of `protocol` on `workers` forked processes (the answers of `explore`)."""
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    return ProcessesDriver(protocol, workers, symmetry, **kw).run()
