"""Level-synchronous breadth-first search split by fingerprint: the driver's loop and the multi-process engine.

Why it exists: one Python process stops at what one core and one heap hold (issue 18). The search is
split between shards (model/search/shard.py: what one shard does at a level, and why the answers are
the in-process explorer's); this module is the driver's side, written once for every engine
(`LevelDriver`: levels, stop rules, progress, traces, the recoverability analysis, the
`ExploreResult`), and the engine that runs the shards as forked worker processes (`ProcessesDriver`,
`kverify explore --engine processes`; they swap small records through files in /dev/shm). The
Spark engine (kverify/spark/explore.py) runs the same shards as Spark tasks.

A level `d` is two exchanges: `merge(d)` (each owner takes the candidates sent to it, keeps the new
states, answers their producers) and `produce(d)` (each producer rebuilds and checks the admitted
states and expands them, sending the candidates of level d+1). Whole states never leave the shard
that holds them; only candidate records (about 100 bytes) and admits travel.

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
import pickle
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
    `produce(depth, pending, expand, graph, key_limit) -> meta`, `link(depth, part, id) -> (parent
    owner, parent id, action index) | None`, `backward() -> (unrecoverable, [(level, part, id)])`
    and `close()`. After `run`, `bytes` = visited sets + parent links on the shards."""

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
        link_bytes = 0
        stopped, depth, max_depth, last_admitted = "", 0, 0, 0
        self.start()
        while True:
            m = self.merge(depth, graph)
            total = combine([total, m])
            link_bytes += m["link_bytes"]
            self.bytes = m["store_bytes"] + link_bytes
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

        best = None
        for level, part, sid in firsts:
            init, ks = self.path(level, part, sid)
            key = init
            for k in ks:
                key = key * RADIX + k
            if best is None or (level, key) < best[0]:
                best = ((level, key), init, ks)
        _, init, ks = best
        acts = self.replay(p, init, ks)
        return Found(recoverable_violation(bad, len(acts)), init, acts)

    def _report(self, depth, total, frontier, t0) -> None:
        if self.progress is None:
            return
        dt = max(time.monotonic() - t0, 1e-9)
        self.progress(f"explore[{self.engine}]: level {depth}: {total['new']} distinct, frontier {frontier}, "
                      f"{total['transitions']} transitions, {total['new'] / dt:,.0f} distinct/s, "
                      f"{dt:,.0f}s")

    def path(self, depth: int, part: int, sid: int) -> tuple:
        """(init index, action indices) of a state, from the parent links back to an initial state."""
        ks = []
        while True:
            link = self.link(depth, part, sid)
            if link is None:
                raise RuntimeError(f"parent link of a depth-{depth} state not found")
            powner, pid, k = link
            ks.append(k)
            if depth == 0:
                break
            depth, part, sid = depth - 1, powner % self.parts, pid
        ks.reverse()
        return ks[0], ks[1:]

    @staticmethod
    def replay(p, init: int, ks: list) -> list:
        return follow_indices(p, init, ks)[0]

    def trace(self, p, ref) -> tuple:
        """(init index, actions) of a finding: the path to its state re-executed (plus its own step)."""
        if ref is None:
            return 0, []
        depth, owner, sid, last = ref
        init, ks = self.path(depth, owner % self.parts, sid)
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
        self.frontier: list = []
        self.links: list = []
        self.back: Optional[sh.Backward] = None

    def _send(self, tag: str, buckets: dict) -> None:
        for w, b in buckets.items():
            path = os.path.join(self.xdir, f"{tag}-{self.index}-{w}")
            with open(path + ".tmp", "wb") as fh:
                fh.write(pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(path + ".tmp", path)

    def _gather(self, tag: str) -> list:
        out = []
        for w in range(self.n):
            path = os.path.join(self.xdir, f"{tag}-{w}-{self.index}")
            if os.path.exists(path):
                with open(path, "rb") as fh:
                    out.extend(pickle.loads(fh.read()))
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
        admits, links = sh.merge(self.model, self.owner, self.index, self.n, self._gather("c"), depth, meta)
        self.links.append(links)
        self.admits = admits
        self._send("a", admits)
        return meta

    def admit_keys(self, depth: int) -> list:
        return [a[0] for b in self.admits.values() for a in b]

    def rebuild(self, depth: int, pending, graph: bool, key_limit) -> dict:
        """Phase 1 of a level's production: rebuild the admitted states here, send each to its owner."""
        meta = new_meta()
        items, goods = sh.rebuild(self.model, self.n, self.frontier, self._gather("a"), depth, pending, meta,
                                  graph=graph, key_limit=key_limit)
        self._send("x", sh.route_items(items, self.n))
        self._send("g", goods)
        return meta

    def expand(self, depth: int, expand: bool, graph: bool) -> dict:
        """Phase 2: the states this worker owns become its frontier and are expanded here."""
        meta = new_meta()
        self.frontier = items = self._gather("x")         # sources in worker order, each in key order
        cands = sh.expand_items(self.model, self.index, self.n, items, depth + 1, meta, graph) if expand else {}
        self._send("c", cands)
        return meta

    def link(self, depth: int, sid: int):
        return self.links[depth].get(sid) if depth < len(self.links) else None

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

    def call_one(self, w: int, cmd: str, *args):
        self.conns[w].send((cmd, *args))
        return self._answer(self.conns[w])

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
        return combine(self.pool.call("merge", depth, graph))

    def admit_keys(self, depth) -> list:
        return [k for ks in self.pool.call("admit_keys", depth) for k in ks]

    def produce(self, depth, pending, expand, graph, key_limit) -> dict:
        built = self.pool.call("rebuild", depth, pending, graph, key_limit)
        return combine(built + self.pool.call("expand", depth, expand, graph))

    def link(self, depth, part, sid):
        return self.pool.call_one(part, "link", depth, sid)

    def backward(self) -> tuple:
        fresh, r = sum(self.pool.call("back_start")), 0
        while fresh:
            r += 1
            fresh = sum(self.pool.call("back_round", r))
        bad, firsts = 0, []
        for part, (n, first) in enumerate(self.pool.call("back_verdict")):
            bad += n
            if first is not None:
                firsts.append((first[0], part, first[1]))
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
