"""One shard of a level-synchronous search split by fingerprint: what a worker process or a Spark task runs.

Why it exists: the multi-process engine (model/search/parallel.py) and the Spark engine
(kverify/spark/explore.py) split the breadth-first search between shards and must give the answers
of the in-process explorer; the rules of a shard are written here once and both engines call them.
A shard plays two roles at each level:

- owner: it holds the visited set of the fingerprints that fall on it (`Owner`). `merge` takes the
  candidates of a level in order-key order, keeps the new ones (fault-budget subsumption in the same
  order), records the state-graph edges, and
  answers the shards holding the parents with the admitted states they must rebuild (parent and
  action), grouped by the frontier chunk the parent is in.
- producer: it holds whole states (its frontier, in chunks: `chunks_of`). `rebuild` re-creates the
  admitted states from their parents here (re-executing the parent's action: a step costs less than
  sending every successor) and checks them (state invariants, `sometimes`, quiescent-good for the
  state graph); `expand_items` expands them here (model/search/expand.py, step invariants,
  deadlocks): they are the shard's next frontier, and each successor's small candidate record
  (order key, fingerprint, parent, where the parent lives) goes to the successor's owner.
  A state is so expanded where its parent's chunk is, and never serialised for that: the engines
  serialise a state only to keep it between levels (Spark) or to move a chunk. The work of a level
  is the admitted states of each chunk (`merge` counts them), and `plan` moves whole chunks (parents
  and their admits) from the shards above the mean to those below before the level is rebuilt (the
  shard holding the initial state would otherwise keep every state: one busy core).

Order keys make every choice the in-process loop makes by its processing order: a state's key is
`parent key * RADIX + action index` (initial states: their index), which orders a level as the
in-process frontier, so the owner keeps the in-process BFS parent (same shortest traces), applies
subsumption as the in-process store does, and every finding carries `(level, key)`: per property
the smallest one is the finding the in-process run notes first. A key is also its state's trace (the
initial state's index, then the action indices, in base RADIX: `path_of`), so no shard keeps parent
links: a finding's trace is re-executed from its key alone. Where a state is expanded changes no
answer: candidates are ordered by key, findings by (level, key).

Fingerprints decide the owner and identify a state inside it, so every process must compute the
same one for equal states: `Model(..., stable=False)` uses the explorer's `hash` of the canonical
state (equal across processes forked from one parent, and across machines only on Python 3.12+ with
the same PYTHONHASHSEED: before 3.12 `hash(None)` depends on an address); `stable=True` uses
`stable_fingerprint` (a digest of the canonical value: equal on any machine and Python, slower).
"""
from __future__ import annotations

import gc
import hashlib
import pickle
from array import array
from typing import Iterable, Optional

from kverify.invariants.core import Violation
from kverify.model.search.expand import MAX_ACTIONS, Expander
from kverify.model.search.storage import FingerprintSet, Subsumption, offers_subsumption
from kverify.model.search.visitors import Deadlock, StateInvariants, StepInvariants, Visitor, crash

RADIX = MAX_ACTIONS + 1                      # key of a successor = parent key * RADIX + action index
CHUNK = 2000                                 # at most this many frontier states a chunk (one pickle)
SPLIT = 16                                   # ... and at least this many chunks a shard (for `plan`)
SLACK = 1.05                                 # `plan` moves chunks off a shard above SLACK x the mean work

# candidate record fields (producer -> owner)
C_KEY, C_TID, C_SPARE, C_O, C_PART, C_CHUNK, C_OFF, C_GID, C_FAULT, C_ACTION = range(10)


# --- serialising states ---------------------------------------------------------------------------

def dumps(obj) -> bytes:
    """One pickle for a chunk of frontier states (their shared parts are written once)."""
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes):
    """pickle.loads with the cyclic garbage collector paused: rebuilding thousands of objects
    otherwise triggers collections over the whole heap (2x slower for replication states, 6x for
    group-world ones)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(blob)
    finally:
        if was:
            gc.enable()


def chunk_size(n: int) -> int:
    """States a chunk of a frontier of `n` states: at most CHUNK, at least SPLIT chunks when n allows."""
    return max(1, min(CHUNK, -(-n // SPLIT)))


def chunks_of(items: list) -> list:
    """The frontier `items` cut in chunks of `chunk_size(len(items))` (the positions `expand_items` sends)."""
    size = chunk_size(len(items))
    return [items[i:i + size] for i in range(0, len(items), size)]


def add_loads(loads: Iterable[dict]) -> dict:
    """{(part, chunk): admitted states} summed over the owners' counts (`merge`'s admits per chunk)."""
    out: dict = {}
    for load in loads:
        for pc, n in load.items():
            out[pc] = out.get(pc, 0) + n
    return out


def plan(load: dict, parts: int) -> dict:
    """{(part, chunk): target part} for the chunks that move before a level is rebuilt, from `load`
    {(part, chunk): admitted states}: each shard keeps its chunks in order while it stays under SLACK
    x the mean (and always its first one); the rest go, largest first, to the least loaded shard.
    Deterministic: the same loads give the same moves."""
    total = sum(load.values())
    if parts < 2 or not total:
        return {}
    cap = SLACK * total / parts
    kept = [0] * parts
    spill = []
    for pc in sorted(load):
        n = load[pc]
        if not kept[pc[0]] or kept[pc[0]] + n <= cap:
            kept[pc[0]] += n
        else:
            spill.append(pc)
    spill.sort(key=lambda pc: (-load[pc], pc))
    moves = {}
    for pc in spill:
        t = min(range(parts), key=lambda q: (kept[q], q))
        kept[t] += load[pc]
        if t != pc[0]:
            moves[pc] = t
    return moves


# --- fingerprints -----------------------------------------------------------------------------------

def _plain(x):
    """A value with the same equality as `x` whose repr is the same in every process: sets sorted,
    dicts itemised, world states (model/worlds `KeyedState`) replaced by their keys."""
    t = type(x)
    if t is int or t is str or x is None or t is bool or t is float or t is bytes:
        return x
    if isinstance(x, tuple) or t is list:
        return tuple([_plain(y) for y in x])
    if isinstance(x, (frozenset, set)):
        return ("<set>",) + tuple(sorted((_plain(y) for y in x), key=repr))
    if isinstance(x, dict):
        return ("<dict>",) + tuple(sorted(((_plain(k), _plain(v)) for k, v in x.items()), key=repr))
    key = getattr(x, "key", None)
    if callable(key) and hasattr(type(x), "_compute_key"):
        return ("<state>", _plain(key()))
    return x


def stable_fingerprint(value) -> int:
    """64-bit digest of `value` that is equal on every machine and Python version."""
    digest = hashlib.blake2b(repr(_plain(value)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Model:
    """A protocol as one shard uses it: the checks (built once per process, reused every level) and
    the owner of a state (the fingerprint that decides which shard keeps it)."""

    def __init__(self, protocol, symmetry: bool = True, stable: bool = False):
        self.protocol = protocol
        self.gen_checks = [StepInvariants(protocol), Deadlock(protocol)]
        self.deadlock = self.gen_checks[1]
        self.state_checks = StateInvariants(protocol)
        self.goals = {q.name: q.predicate for q in protocol.sometimes()}
        try:
            self.inits = list(protocol.init_states())
        except Exception:
            self.inits = None
        self.subsume = bool(symmetry and offers_subsumption(protocol, self.inits or ()))
        self.stable = stable
        if stable:
            canon = protocol.canonical if symmetry else (lambda s: s)
            self.fp = lambda s: stable_fingerprint(canon(s))
            self.core_fp = stable_fingerprint
        else:
            self.fp = protocol.fingerprint if symmetry else hash
            self.core_fp = hash

    def owner(self, state) -> tuple:
        """(owner fingerprint, state id, fault budgets or None); with subsumption the owner is the
        fingerprint of the state's core, the id that of (core fingerprint, budgets)."""
        if self.subsume:
            core, spare = self.protocol.subsumption(state)
            o = self.core_fp(core)
            return o, hash((o, spare)), spare          # ints and a tuple of ints: the same in every process
        f = self.fp(state)
        return f, f, None


# --- per-level counters ---------------------------------------------------------------------------

COUNTERS = ("transitions", "expanded", "deadlocks", "new", "admitted", "emitted", "edges", "fault_edges",
            "good", "store_bytes")


def new_meta() -> dict:
    m = dict.fromkeys(COUNTERS, 0)
    m["findings"], m["reached"] = {}, {}
    return m


def note(meta: dict, order: tuple, v: Violation, ref: Optional[tuple]) -> None:
    """Keep the finding with the smallest (level, key) per property name. `ref` = (depth, key,
    action or None): the state the trace goes to, plus the step for a step finding."""
    cur = meta["findings"].get(v.invariant)
    if cur is None or order < cur[0]:
        meta["findings"][v.invariant] = (order, v.message, ref)


def combine(metas: Iterable[dict]) -> dict:
    """Sum the counters of several shards' metas; smallest finding per name; earliest `sometimes`."""
    out = new_meta()
    for m in metas:
        for k in COUNTERS:
            out[k] += m[k]
        for name, (order, msg, ref) in m["findings"].items():
            note(out, order, Violation(name, msg, 0), ref)
        for name, d in m["reached"].items():
            if name not in out["reached"] or d < out["reached"][name]:
                out["reached"][name] = d
    return out


# --- what an owner keeps --------------------------------------------------------------------------

def path_of(key: int, depth: int) -> tuple:
    """(initial state index, [action index]) of the state of level `depth` with order key `key`."""
    ks = []
    for _ in range(depth):
        key, k = divmod(key, RADIX)
        ks.append(k)
    ks.reverse()
    return key, ks


class Owner:
    """An owner's slice of the search: its visited set, how many states it admitted (their local
    numbers, in (level, key) order), and while the state graph is kept: id -> local number, per local
    number its order key and level, the non-fault edges into its states (source global number, local
    target) and the quiescent-good flags. A global number is `local * parts + part`."""

    __slots__ = ("store", "count", "graph", "index", "keys", "starts", "esrc", "edst", "good")

    def __init__(self, model: Model, graph: bool):
        self.store = Subsumption() if model.subsume else FingerprintSet()
        self.count = 0
        self.graph = False
        self.index: Optional[dict] = None
        self.keys = self.esrc = self.edst = None
        self.starts: list = []
        self.good = bytearray()
        if graph:
            self.graph = True
            self.index = {} if not model.subsume else None
            self.keys, self.esrc, self.edst = [], array("q"), array("q")

    def drop_graph(self) -> None:
        self.graph = False
        self.index = self.keys = self.esrc = self.edst = None
        self.good = bytearray()

    def bytes(self) -> int:
        """Bytes of the visited set (flat arrays; the rare overflow dict is not counted)."""
        s = self.store
        return sum(a.itemsize * len(a) for a in (getattr(s, n, None) for n in ("table", "keys", "vals"))
                   if a is not None)

    def mark_good(self, locals_: Iterable[int]) -> None:
        g = self.good
        if len(g) < self.count:
            g.extend(bytes(self.count - len(g)))
        for i in locals_:
            g[i] = 1


def merge(model: Model, owner: Owner, part: int, parts: int, cands: list, depth: int, meta: dict) -> dict:
    """The owner's side of level `depth`: the candidates in key order, the new ones kept (local
    numbers), the state-graph edges recorded. Returns {(producer part, chunk): [admit]}; an
    admit = (key, (part, chunk), parent's offset in the chunk, action, global number)."""
    cands.sort(key=lambda c: c[0])
    admits: dict = {}
    graph = owner.graph
    owner.starts.append(owner.count)
    if model.subsume:
        find = owner.store.find_or_add
    else:
        add = owner.store.add
        index = owner.index
    for c in cands:
        key, tid, spare, o, sp, sch, soff, sgid, fault, action = c
        local = owner.count
        if model.subsume:
            r = find(o, spare, local)
            fresh = r < 0
        elif graph:
            r = index.get(tid)
            fresh = r is None
            if fresh:
                index[tid] = local
                add(tid)
        else:
            fresh = add(tid)
        if fresh:
            r = local
            owner.count += 1
            meta["new"] += 1
            pc = (sp, sch)
            a = admits.get(pc)
            if a is None:
                a = admits[pc] = []
            else:
                pc = a[0][1]                          # one tuple object a chunk: pickled once
            a.append((key, pc, soff, action, local * parts + part))
            if graph:
                owner.keys.append(key)
        if graph and sgid >= 0:
            meta["edges"] += 1
            if fault:
                meta["fault_edges"] += 1
            else:
                owner.esrc.append(sgid)
                owner.edst.append(r)
    meta["store_bytes"] = owner.bytes()
    return admits


def init_candidates(model: Model, parts: int, meta: dict) -> dict:
    """{owner part: [candidate]} of the initial states (key = index; "chunk" and offset = index:
    an initial state is rebuilt from `Model.inits` on any shard)."""
    if model.inits is None:
        try:
            model.protocol.init_states()
        except Exception as exc:
            note(meta, (0, -1), crash(exc), None)
        return {}
    out: dict = {}
    for i, s in enumerate(model.inits):
        try:
            o, tid, spare = model.owner(s)
        except Exception as exc:
            note(meta, (0, i), crash(exc), None)
            continue
        out.setdefault(o % parts, []).append((i, tid, spare, o, 0, i, i, -1, 0, None))
    return out


def rebuild(model: Model, parts: int, chunks: dict, admits: list, depth: int, pending: Iterable[str],
            meta: dict, *, graph: bool, key_limit=None) -> tuple:
    """The producer's side: rebuild the admitted states of level `depth` (admits of `merge`, from any
    owner) from their parents in `chunks` ({(part, chunk): frontier items of level depth-1} held
    here; initial states at level 0) and check them. Returns (items in key order, {owner part: [good
    local numbers]}); an item = (key, global number, state), expanded here."""
    admits.sort(key=lambda a: a[0])
    proto = model.protocol
    checks = model.state_checks
    check = checks.check_state if checks.active() else None
    goals = [(n, model.goals[n]) for n in pending if n in model.goals]
    reached = meta["reached"]
    good_of = proto.is_quiescent_good
    goods: dict = {}
    items = []
    step = proto.step
    for key, pc, off, action, gid in admits:
        if key_limit is not None and key > key_limit:
            break
        try:
            t = model.inits[off] if depth == 0 else step(chunks[pc][off][2], action)
            if graph and good_of(t):
                goods.setdefault(gid % parts, []).append(gid // parts)
                meta["good"] += 1
        except Exception as exc:
            note(meta, (depth, key), crash(exc, depth), (depth, key, None))
            continue
        if check is not None:
            v = check(t, depth)
            if v is not None:
                note(meta, (depth, key), v, (depth, key, None))
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
        items.append((key, gid, t))
    return items, goods


class _AllNew:
    """A store for which every successor is new (its owner decides, after the exchange)."""

    @staticmethod
    def key(_state):
        return None

    @staticmethod
    def visit(_key, j: int) -> int:
        return j


class _Batch:
    """What the search loop's expansion (model/search/expand.py `Expander.bind`) reads of a run,
    reused state after state of a level: successors all new, findings collected."""

    __slots__ = ("store", "parent", "via", "max_states", "stopped", "found")

    def __init__(self):
        self.store = _AllNew
        self.parent, self.via = array("q"), array("q")
        self.max_states, self.stopped, self.found = None, "", []

    def note(self, idx, action, violation) -> None:
        self.found.append((action, violation))

    def stop(self, reason: str) -> None:
        self.stopped = reason


class _Actions(Visitor):
    """The action of every transition kept, in the order of the successors."""

    def __init__(self):
        self.actions: list = []

    def on_edge(self, src: int, action, dst: int) -> None:
        self.actions.append(action)


def expand_items(model: Model, part: int, parts: int, items: list, depth: int, meta: dict, graph: bool) -> dict:
    """Expand frontier items (states of depth `depth - 1`) with the loop's own per-state expansion,
    bound once for the level: {owner part: [candidate]}. Without the state graph only the
    smallest-key candidate per successor is sent; with it every transition. A candidate names its
    parent by (part, chunk, offset) in `chunks_of(items)`."""
    proto, dl = model.protocol, model.deadlock
    is_fault = proto.is_fault
    batch, edges, nxt, nxt_k = _Batch(), _Actions(), [], array("q")
    expand = Expander(proto, model.gen_checks + [edges]).bind(batch, depth, nxt, nxt_k)
    parent, via, acts_of, found = batch.parent, batch.via, edges.actions, batch.found
    best: dict = {}
    out: dict = {}
    owner_of, subsume = model.owner, model.subsume
    size = chunk_size(len(items))
    transitions, before = 0, dl.count
    for pos, (key, gid, s) in enumerate(items):
        ch, off = divmod(pos, size)
        transitions += expand(s, 0)
        base = key * RADIX
        if found:
            try:
                acts = list(proto.actions(s))
            except Exception:
                acts = []
            for a, v in found:
                k = acts.index(a) if a is not None and a in acts else -1
                note(meta, (depth, base + k), Violation(v.invariant, v.message, 0), (depth - 1, key, a))
            found.clear()
        for t, k, a in zip(nxt, via, acts_of):
            try:
                o, tid, spare = owner_of(t)
            except Exception as exc:
                note(meta, (depth, base + k), crash(exc, depth), (depth - 1, key, a))
                continue
            if graph:
                out.setdefault(o % parts, []).append(
                    (base + k, tid, spare, o, part, ch, off, gid, 1 if is_fault(a) else 0, a))
                continue
            bk = (o, tid) if subsume else tid             # (without subsumption the id is the owner fingerprint)
            c = best.get(bk)
            if c is None or base + k < c[0]:
                best[bk] = (base + k, tid, spare, o, part, ch, off, -1, 0, a)
        del nxt[:], nxt_k[:], parent[:], via[:], acts_of[:]
    meta["transitions"] += transitions
    meta["expanded"] += len(items)
    meta["deadlocks"] += dl.count - before
    for c in best.values():
        out.setdefault(c[C_O] % parts, []).append(c)
    meta["emitted"] += sum(len(v) for v in out.values())
    return out


# --- recoverability: a backward fixpoint over the edges each owner keeps -----------------------------

class Backward:
    """One owner's part of "which states reach a quiescent good state along non-fault edges": the
    predecessors of each local state (from the edges into it) and the `ok` flags, grown round by
    round from the good states (each round: the new `ok` states send their predecessors to those
    predecessors' owners)."""

    __slots__ = ("start", "preds", "ok", "count", "keys", "starts")

    def __init__(self, owner: Owner):
        n = owner.count
        start = array("q", bytes(8 * (n + 1)))
        for d in owner.edst:
            start[d + 1] += 1
        for i in range(n):
            start[i + 1] += start[i]
        fill = array("q", start[:n])
        preds = array("q", bytes(8 * start[n]))
        for s, d in zip(owner.esrc, owner.edst):
            preds[fill[d]] = s
            fill[d] += 1
        self.start, self.preds, self.count = start, preds, n
        self.ok = bytearray(n)
        self.keys, self.starts = owner.keys, owner.starts

    def absorb(self, locals_: Iterable[int]) -> list:
        """Mark these local states ok; the ones that were not yet."""
        ok, fresh = self.ok, []
        for i in locals_:
            if not ok[i]:
                ok[i] = 1
                fresh.append(i)
        return fresh

    def spread(self, fresh: list, parts: int) -> dict:
        """{part: [local]} of the predecessors of the newly ok states."""
        out: dict = {}
        start, preds = self.start, self.preds
        for d in fresh:
            for j in range(start[d], start[d + 1]):
                g = preds[j]
                out.setdefault(g % parts, []).append(g // parts)
        return out

    def verdict(self) -> tuple:
        """(states not ok, (level, key) of the first of them or None): local numbers follow
        (level, key) order, so the first is this owner's shortest-trace one."""
        bad = self.count - sum(self.ok)
        if not bad:
            return 0, None
        first = self.ok.index(0)
        level = max(d for d, s in enumerate(self.starts) if s <= first)
        return bad, (level, self.keys[first])
