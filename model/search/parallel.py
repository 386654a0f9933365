"""Level-synchronous breadth-first search split by fingerprint: the shared core and the multi-process engine.

Why it exists: one Python process stops at what one core and one heap hold (issue 18). Here a level
of the search is split between shards that each own the states whose fingerprint falls on them:
every shard expands the frontier states it owns (model/search/expand.py `expand_one`, the loop's own
per-state expansion with the loop's step and deadlock checks), sends each successor to its owner,
and the owner keeps it only if it is new (its own slice of the visited set), checks the state
invariants on it (the loop's `StateInvariants`) and the `sometimes` goals, and remembers its parent
link (fingerprint -> parent fingerprint + action index) for the trace. `Model`, `expand_items` and
`merge` are that core, `LevelDriver` the driver's loop over levels; the worker processes below (they
swap successors through files in /dev/shm) (`explore_processes`, `kverify explore --engine processes`) and the Spark
engine (kverify/spark/explore.py) both run it, so they give the answers of the in-process explorer:

- Order keys make every choice the in-process loop makes by its processing order: a state's key is
  `parent key * 2**16 + action index` (initial states: their index), which orders a level exactly as
  the in-process frontier. The owner keeps, per new state, the candidate with the smallest key (the
  in-process BFS parent, hence the same shortest trace), applies fault-budget subsumption in key
  order (with subsumption the owner is the fingerprint of the state's core), and every finding
  carries `(level, key)`: per property the smallest one is the finding the in-process run notes first.
- Fingerprints are Python's `hash` of the canonical state, the explorer's own; a worker process is
  forked from the driver and every Spark worker from one daemon with PYTHONHASHSEED fixed, so they
  agree (kverify/spark/explore.py checks its executors agree before a run).
- Not done here: the recoverability analysis of the state graph (`recoverable`), which needs the whole
  graph in one place; these engines say so in `ExploreResult.graph.note`.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import time
import traceback
from array import array
from typing import Callable, Iterable, Optional

from kverify.invariants.core import Violation
from kverify.model.search.expand import MAX_ACTIONS, expand_one
from kverify.model.search.storage import FingerprintSet, Subsumption, offers_subsumption
from kverify.model.search.visitors import Deadlock, StateInvariants, StepInvariants, crash

RADIX = MAX_ACTIONS + 1                      # key of a successor = parent key * RADIX + action index


# --- moving states between processes --------------------------------------------------------------
# World states keep caches (model/worlds/group_world.py `WorldState`): a "not computed yet" mark that
# is a module-level `object()` sentinel compared by identity (`_UNSET`), and read-only views holding
# `MappingProxyType`s, which plain pickle cannot copy. These helpers pickle a sentinel by name (it
# arrives as the same object) and a mapping proxy as a proxy of a copied dict.

_SENTINELS: dict = {}


def _scan_sentinels() -> None:
    import sys

    for name, mod in list(sys.modules.items()):
        if name.startswith("kverify") and mod is not None:
            for attr, val in list(vars(mod).items()):
                if type(val) is object:
                    _SENTINELS[id(val)] = (name, attr)


def _sentinel(module: str, attr: str):
    import importlib

    return getattr(importlib.import_module(module), attr)


def _proxy(d: dict):
    from types import MappingProxyType

    return MappingProxyType(d)


def _reduce_sentinel(obj):
    if id(obj) not in _SENTINELS:
        _scan_sentinels()
    where = _SENTINELS.get(id(obj))
    if where is None:
        raise pickle.PicklingError("a bare object() that is no module-level sentinel cannot be moved")
    return _sentinel, where


def _reduce_proxy(obj):
    return _proxy, (dict(obj),)


def _dispatch() -> dict:
    import copyreg
    from types import MappingProxyType

    table = dict(copyreg.dispatch_table)
    table[object] = _reduce_sentinel          # looked up by exact type: only bare object() instances
    table[MappingProxyType] = _reduce_proxy
    return table


_DISPATCH = _dispatch()


def dumps(obj) -> bytes:
    """pickle.dumps, with sentinels and mapping proxies handled (a per-type table: no per-object callback)."""
    import io

    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = _DISPATCH
    p.dump(obj)
    return buf.getvalue()


def loads(data: bytes):
    return pickle.loads(data)


class Model:
    """A protocol as one shard uses it: the checks (built once per process, reused every level) and
    the owner of a state (the fingerprint that decides which shard keeps it)."""

    def __init__(self, protocol, symmetry: bool = True):
        self.protocol = protocol
        self.gen_checks = [StepInvariants(protocol), Deadlock(protocol)]
        self.deadlock = self.gen_checks[1]
        self.state_checks = StateInvariants(protocol)
        self.goals = {q.name: q.predicate for q in protocol.sometimes()}
        try:
            inits = protocol.init_states()
        except Exception:
            inits = ()
        self.subsume = bool(symmetry and offers_subsumption(protocol, inits))
        self.fp = protocol.fingerprint if symmetry else hash

    def owner(self, state) -> tuple:
        """(owner fingerprint, state id, fault budgets or None)."""
        if self.subsume:
            core, spare = self.protocol.subsumption(state)
            o = hash(core)
            return o, hash((o, spare)), spare
        f = self.fp(state)
        return f, f, None


def new_meta() -> dict:
    return {"transitions": 0, "expanded": 0, "deadlocks": 0, "new": 0, "admitted": 0,
            "store_bytes": 0, "link_bytes": 0, "findings": {}, "reached": {}}


def _note(meta: dict, order: tuple, v: Violation, ref: tuple) -> None:
    """Keep the finding with the smallest (level, key) per property name. `ref` = (depth, owner,
    id, action or None): the state the trace goes to, plus the step for a step finding."""
    cur = meta["findings"].get(v.invariant)
    if cur is None or order < cur[0]:
        meta["findings"][v.invariant] = (order, v.message, ref)


def combine(metas: Iterable[dict]) -> dict:
    """Sum the counters of several shards' metas; smallest finding per name; earliest `sometimes`."""
    out = new_meta()
    for m in metas:
        for k in ("transitions", "expanded", "deadlocks", "new", "admitted", "store_bytes", "link_bytes"):
            out[k] += m[k]
        for name, (order, msg, ref) in m["findings"].items():
            _note(out, order, Violation(name, msg, 0), ref)
        for name, d in m["reached"].items():
            if name not in out["reached"] or d < out["reached"][name]:
                out["reached"][name] = d
    return out


def expand_items(model: Model, items: Iterable, depth: int, meta: dict):
    """Expand frontier items `(key, owner, id, state)` (states of depth `depth - 1`); yield
    `(owner, candidate)` for each successor, the candidate with the smallest key per successor
    (`candidate = (key, id, spare, parent owner, parent id, action index, state)`)."""
    proto, checks, dl = model.protocol, model.gen_checks, model.deadlock
    best: dict = {}
    for key, owner, sid, s in items:
        before = dl.count
        e = expand_one(proto, checks, s, depth)
        meta["expanded"] += 1
        meta["transitions"] += e.transitions
        meta["deadlocks"] += dl.count - before
        base = key * RADIX
        if e.findings:
            try:
                acts = list(proto.actions(s))
            except Exception:
                acts = []
            for a, v in e.findings:
                k = acts.index(a) if a is not None and a in acts else -1
                step_ref = (depth - 1, owner, sid, a)
                _note(meta, (depth, base + k), Violation(v.invariant, v.message, 0), step_ref)
        for k, a, t in e.successors:
            try:
                o, tid, spare = model.owner(t)
            except Exception as exc:
                v = crash(exc, depth)
                _note(meta, (depth, base + k), v, (depth - 1, owner, sid, a))
                continue
            c = best.get((o, tid))
            if c is None or base + k < c[0]:
                best[(o, tid)] = (base + k, tid, spare, owner, sid, k, t)
    for (o, _), c in best.items():
        yield o, c


def init_candidates(model: Model, meta: dict):
    """`(owner, candidate)` of every initial state (key = its index); a crash is a finding."""
    try:
        inits = list(model.protocol.init_states())
    except Exception as exc:
        _note(meta, (0, -1), crash(exc), None)
        return
    for i, s in enumerate(inits):
        try:
            o, tid, spare = model.owner(s)
        except Exception as exc:
            _note(meta, (0, i), crash(exc), None)
            continue
        yield o, (i, tid, spare, 0, 0, i, s)


class Links:
    """Parent links of one shard at one level: id -> (parent owner, parent id, action index), in
    flat arrays (26 bytes a state); looked up only to rebuild a trace."""

    __slots__ = ("ids", "powners", "pids", "ks")

    def __init__(self):
        self.ids, self.powners, self.pids, self.ks = array("q"), array("q"), array("q"), array("l")

    def add(self, sid: int, powner: int, pid: int, k: int) -> None:
        self.ids.append(sid)
        self.powners.append(powner)
        self.pids.append(pid)
        self.ks.append(k)

    def get(self, sid: int) -> Optional[tuple]:
        try:
            i = self.ids.index(sid)
        except ValueError:
            return None
        return self.powners[i], self.pids[i], self.ks[i]

    def __len__(self) -> int:
        return len(self.ids)

    def __getstate__(self):
        return (self.ids, self.powners, self.pids, self.ks)

    def __setstate__(self, st):
        self.ids, self.powners, self.pids, self.ks = st


def new_store(model: Model):
    return Subsumption() if model.subsume else FingerprintSet()


def merge(model: Model, store, cands: list, depth: int, pending: Iterable[str], meta: dict) -> tuple:
    """The owner's side of a level: keep the new candidates (smallest key first per state;
    subsumption in key order), check them, record their links. Returns (new frontier items, Links)."""
    links = Links()
    items = []
    checks = model.state_checks
    check = checks.check_state if checks.active() else None
    goals = [(n, model.goals[n]) for n in pending if n in model.goals]
    reached = meta["reached"]
    if model.subsume:
        cands.sort(key=lambda c: c[0])
        fresh = []
        find = store.find_or_add
        for c in cands:
            if find(c[7], c[2], 0) < 0:
                fresh.append(c)
    else:
        best: dict = {}
        for c in cands:
            b = best.get(c[1])
            if b is None or c[0] < b[0]:
                best[c[1]] = c
        add = store.add
        fresh = [c for c in best.values() if add(c[1])]
    for c in fresh:
        key, sid, spare, powner, pid, k, t = c[:7]
        owner = _owner_of(c)
        links.add(sid, powner, pid, k)
        meta["new"] += 1
        if check is not None:
            v = check(t, depth)
            if v is not None:
                _note(meta, (depth, key), v, (depth, owner, sid, None))
                continue
        meta["admitted"] += 1
        for n, pred in goals:
            if n not in reached:
                try:
                    hit = pred(t)
                except Exception:
                    hit = False
                if hit:
                    reached[n] = depth
        items.append((key, owner, sid, t))
    meta["store_bytes"] = store_bytes(store)
    meta["link_bytes"] = 26 * len(links)
    return items, links


def store_bytes(store) -> int:
    """Bytes of a shard's visited set (its flat arrays; the rare overflow dict is not counted)."""
    return sum(a.itemsize * len(a) for a in (getattr(store, n, None) for n in ("table", "keys", "vals"))
               if a is not None)


def _owner_of(c) -> int:
    return c[7]


def with_owner(owner: int, c: tuple) -> tuple:
    """A candidate carries its owner (needed once it left its shuffle key behind)."""
    return c + (owner,)


# --- the multi-process engine -------------------------------------------------------------------

def _exchange_dir() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="kverify-explore-", dir=base)


class _Worker:
    """One worker process: its shard of the visited set, its frontier, its links per level."""

    def __init__(self, model: Model, index: int, n: int, xdir: str):
        self.model, self.index, self.n, self.xdir = model, index, n, xdir
        self.store = new_store(model)
        self.frontier: list = []
        self.links: list = []
        self.incoming: list = []

    def _route(self, pairs, depth: int) -> None:
        buckets = [[] for _ in range(self.n)]
        for o, c in pairs:
            buckets[o % self.n].append(with_owner(o, c))
        self.incoming = buckets[self.index]
        for w, b in enumerate(buckets):
            if w != self.index and b:
                path = os.path.join(self.xdir, f"{depth}-{self.index}-{w}")
                with open(path + ".tmp", "wb") as fh:
                    fh.write(dumps(b))
                os.replace(path + ".tmp", path)

    def _gather(self, depth: int) -> list:
        cands = self.incoming
        self.incoming = []
        for w in range(self.n):
            path = os.path.join(self.xdir, f"{depth}-{w}-{self.index}")
            if w != self.index and os.path.exists(path):
                with open(path, "rb") as fh:
                    cands.extend(loads(fh.read()))
                os.remove(path)
        return cands

    def init(self) -> dict:
        meta = new_meta()
        self._route(init_candidates(self.model, meta) if self.index == 0 else (), 0)
        return meta

    def expand(self, depth: int) -> dict:
        meta = new_meta()
        frontier, self.frontier = self.frontier, []
        self._route(expand_items(self.model, frontier, depth, meta), depth)
        return meta

    def merge(self, depth: int, pending) -> dict:
        meta = new_meta()
        items, links = merge(self.model, self.store, self._gather(depth), depth, pending, meta)
        self.frontier = items
        self.links.append(links)
        return meta

    def link(self, depth: int, sid: int):
        return self.links[depth].get(sid) if depth < len(self.links) else None

    def frontier_size(self) -> int:
        return len(self.frontier)


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


class WorkerError(RuntimeError):
    """A worker process failed (the message is its traceback's last line)."""


class ProcessPool:
    """N forked worker processes, each a `_Worker`; `call(cmd, *args)` runs it on all of them."""

    def __init__(self, model: Model, workers: int):
        import multiprocessing as mp

        ctx = mp.get_context("fork")        # children share the driver's hash secret: same fingerprints
        self.xdir = _exchange_dir()
        self.conns, self.procs = [], []
        for i in range(workers):
            a, b = ctx.Pipe()
            p = ctx.Process(target=_run_worker, args=(b, model, i, workers, self.xdir), daemon=True)
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


def _run_worker(conn, model, index, n, xdir) -> None:
    _serve(conn, _Worker(model, index, n, xdir))


class LevelDriver:
    """The driver's side of a level-synchronous search, whatever runs the shards: the loop over
    levels, the stop rules, progress, and the `ExploreResult` (traces rebuilt from parent links and
    re-executed in this process). An engine supplies `start() -> meta`, `level(depth, pending) ->
    meta` (expand the frontier of depth-1, merge the successors of depth `depth`), `link(depth, owner,
    id) -> (parent owner, parent id, action index)`. After `run`, `bytes` = visited sets + parent links."""

    engine = "parallel"

    def __init__(self, protocol, *, max_states=None, max_seconds=None, stop_on_first=False,
                 progress: Optional[Callable[[str], None]] = None):
        self.protocol = protocol
        self.max_states, self.max_seconds, self.stop_on_first = max_states, max_seconds, stop_on_first
        self.progress = progress

    def run(self):
        from kverify.model.explore import ExploreResult, Found, GraphReport

        t0 = time.monotonic()
        p = self.protocol
        pending = sorted(q.name for q in p.sometimes())
        total = new_meta()
        reached: dict = {}
        per_depth: dict = {}
        meta = self.start(pending)
        depth, stopped, frontier, max_depth = 0, "", meta["admitted"], 0

        total_store = 0

        def absorb(m, d):
            nonlocal total, total_store
            total_store = m["store_bytes"]
            total = combine([total, m])
            for name, dd in m["reached"].items():
                reached.setdefault(name, dd)
            if m["admitted"] or d == 0:
                per_depth[d] = m["admitted"]

        absorb(meta, 0)
        self._report(0, total, frontier, t0)
        while frontier:
            if self.stop_on_first and total["findings"]:
                stopped = "violation"
            elif self.max_states is not None and total["new"] >= self.max_states:
                stopped = "max-states"
            elif self.max_seconds is not None and time.monotonic() - t0 >= self.max_seconds:
                stopped = "max-seconds"
            if stopped:
                break
            depth += 1
            pending = [n for n in pending if n not in reached]
            meta = self.level(depth, pending)
            absorb(meta, depth)
            frontier = meta["admitted"]
            if frontier:
                max_depth = depth
            self._report(depth, total, frontier, t0)
        seconds = time.monotonic() - t0
        complete = not stopped
        res = ExploreResult(distinct_states=total["new"], transitions=total["transitions"], max_depth=max_depth,
                            seconds=seconds, complete=complete, stopped=stopped,
                            covered_depth=max_depth if complete else max(depth, 0),
                            expanded=total["expanded"], unexpanded=0 if complete else frontier,
                            sometimes={n: reached.get(n) for n in sorted(q.name for q in p.sometimes())},
                            states_per_depth=per_depth, deadlocks=total["deadlocks"],
                            graph=GraphReport(note=f"state graph not built: the {self.engine} engine does not "
                                              "analyse recoverability (use --engine inline)"))
        found = []
        for name, (order, msg, ref) in total["findings"].items():
            init, acts = self.trace(p, ref)
            found.append(Found(Violation(name, msg, len(acts)), init, acts))
        found.sort(key=lambda f: (len(f.actions), f.invariant))
        res.violations = found
        self.bytes = total_store + total["link_bytes"]
        return res

    def _report(self, depth, total, frontier, t0) -> None:
        if self.progress is None:
            return
        dt = max(time.monotonic() - t0, 1e-9)
        self.progress(f"explore[{self.engine}]: level {depth}: {total['new']} distinct, frontier {frontier}, "
                      f"{total['transitions']} transitions, {total['new'] / dt:,.0f} distinct/s")

    def trace(self, p, ref) -> tuple:
        """(init index, actions) of a finding: the parent links back to an initial state, then the
        action indices re-executed from it (plus the finding's own step)."""
        if ref is None:
            return 0, []
        depth, owner, sid, last = ref
        ks = []
        while True:
            link = self.link(depth, owner, sid)
            if link is None:
                raise RuntimeError(f"parent link of a depth-{depth} state not found")
            powner, pid, k = link
            ks.append(k)
            if depth == 0:
                break
            depth, owner, sid = depth - 1, powner, pid
        ks.reverse()
        init, steps = ks[0], ks[1:]
        state = p.init_states()[init]
        acts = []
        for k in steps:
            a = list(p.actions(state))[k]
            acts.append(a)
            state = p.step(state, a)
        if last is not None:
            acts.append(last)
        return init, acts


class ProcessesDriver(LevelDriver):
    engine = "processes"

    def __init__(self, protocol, workers: int, symmetry: bool = True, **kw):
        super().__init__(protocol, **kw)
        self.workers = workers
        self.model = Model(protocol, symmetry)
        self.pool: Optional[ProcessPool] = None

    def start(self, pending) -> dict:
        self.pool = ProcessPool(self.model, self.workers)
        m = combine(self.pool.call("init"))
        return combine([m] + self.pool.call("merge", 0, pending))

    def level(self, depth, pending) -> dict:
        m = combine(self.pool.call("expand", depth))
        return combine([m] + self.pool.call("merge", depth, pending))

    def link(self, depth, owner, sid):
        return self.pool.call_one(owner % self.workers, "link", depth, sid)

    def run(self):
        try:
            return super().run()
        finally:
            if self.pool is not None:
                self.pool.close()


def explore_processes(protocol, workers: int = 2, symmetry: bool = True, **kw):
    """Exhaustive BFS of `protocol` on `workers` forked processes (same answers as `explore`,
    without the recoverability analysis)."""
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    return ProcessesDriver(protocol, workers, symmetry, **kw).run()
