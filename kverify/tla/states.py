"""States on both sides, in one form: TLC's state dump (`-dump FILE`) parsed, and the Python
models' states converted to the TLA+ values the specs give them. When TLC and the explorer count
different numbers of states, `diff(...)` names states only one side reaches (the shortest first):
the difference in the rules, as data.

Common form: integers, booleans, strings; tuples for sequences; frozensets for sets;
("rec", ((field, value), ...)) for records; ("fun", ((key, value), ...)) for functions whose domain
is not 1..n (TLC prints `0 :> a @@ 1 :> b`).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile

_TOK = re.compile(r'\s*(<<|>>|\|->|:>|@@|\.\.|/\\|[\[\](){},=]|"[^"]*"|-?\d+|[A-Za-z_][A-Za-z0-9_]*)')


def _tokens(text: str) -> list:
    out, pos = [], 0
    while pos < len(text):
        m = _TOK.match(text, pos)
        if not m:
            if not text[pos:].strip():
                break
            raise ValueError(f"cannot read TLC value near {text[pos:pos + 30]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


class _Reader:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.t[self.i]
        self.i += 1
        if want is not None and tok != want:
            raise ValueError(f"expected {want!r}, got {tok!r}")
        return tok

    def value(self):
        v = self.atom()
        if self.peek() == "..":
            self.take()
            return frozenset(range(v, self.atom() + 1))
        if self.peek() == ":>":
            items = {}
            self.take()
            items[v] = self.value()
            while self.peek() == "@@":
                self.take()
                k = self.atom()
                self.take(":>")
                items[k] = self.value()
            return ("fun", tuple(sorted(items.items(), key=repr)))
        return v

    def _items(self, close):
        items = []
        while self.peek() != close:
            items.append(self.value())
            if self.peek() == ",":
                self.take()
        self.take(close)
        return items

    def atom(self):
        tok = self.take()
        if tok == "<<":
            return tuple(self._items(">>"))
        if tok == "{":
            return frozenset(self._items("}"))
        if tok == "[":
            fields = []
            while self.peek() != "]":
                k = self.take()
                self.take("|->")
                fields.append((k, self.value()))
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return ("rec", tuple(sorted(fields)))
        if tok == "(":
            v = self.value()
            self.take(")")
            return v
        if tok in ("TRUE", "FALSE"):
            return tok == "TRUE"
        if tok.startswith('"'):
            return tok[1:-1]
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        raise ValueError(f"unexpected token {tok!r} in a TLC value")


def parse_value(text: str):
    return _Reader(_tokens(text)).value()


def parse_dump(path: str, keep=None) -> set:
    """States of a TLC `-dump` file, as records of the variables in `keep` (all when None)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    out = set()
    for block in re.split(r"State \d+:\s*\n", text)[1:]:
        r = _Reader(_tokens(block.strip()))
        fields = []
        while r.peek() == "/\\":
            r.take()
            name = r.take()
            r.take("=")
            val = r.value()
            if keep is None or name in keep:
                fields.append((name, val))
        out.add(("rec", tuple(sorted(fields))))
    return out


# --- Python states -> TLA+ values ------------------------------------------------------------------
def _rec(**kw):
    return ("rec", tuple(sorted(kw.items())))


def _fun(d: dict):
    return ("fun", tuple(sorted(d.items(), key=repr)))


def _bits(mask: int) -> frozenset:
    return frozenset(i for i in range(mask.bit_length()) if mask >> i & 1)


def _log(log) -> tuple:
    return tuple(tuple(x) for x in log)


def replication_vars(s) -> dict:
    from kverify.model import replication as R

    reps, ctrl, reqs, zombie, hist = s

    def rep(x):
        pend = x[R.PEND]
        return _rec(alive=x[R.ALIVE], log=_log(x[R.LOG]), hw=x[R.HW], ep=x[R.EP], pep=x[R.PEP], cep=x[R.CEP],
                    ldr=x[R.LDR], trunc=x[R.TRUNC], isr=_bits(x[R.ISR]), leso=x[R.LESO], since=x[R.SINCE],
                    pend=_rec(isr=_bits(pend & R.MASK), applied=bool(pend & R.APPLIED), stale=bool(pend & R.STALE)))

    def req(q):
        return _rec(ldr=q[0], ep=q[1], isr=_bits(q[2]), pep=q[3], cep=q[4])

    return {"reps": _fun({i: rep(x) for i, x in enumerate(reps)}),
            "ctrl": _rec(ldr=ctrl[0], ep=ctrl[1], isr=_bits(ctrl[2]), elr=_bits(ctrl[3]), pep=ctrl[4], cep=ctrl[5]),
            "reqs": frozenset(req(q) for q in reqs),
            "zombie": () if zombie is None else req(zombie),
            "hist": _rec(next=hist[0], committed=_log(hist[1]), acked=tuple((o, tuple(r)) for o, r in hist[2]),
                         crashes=hist[3], lossy=hist[4], unclean=hist[5], alters=hist[6], failovers=hist[7])}


def group_vars(s, n: int, p: int) -> dict:
    from kverify.model import group as G

    coord, clients, offsets, persisted, budget, delivered, prev = s
    names = {G.EMPTY: "Empty", G.PREPARING: "PreparingRebalance", G.COMPLETING: "CompletingRebalance",
             G.STABLE: "Stable", G.PREP_INITIAL: "PreparingInitial"}

    def asg(a):
        return () if a is None else _fun({i: _bits(a[i]) for i in range(n)})

    def pers(x):
        return _rec(gen=x[0], members=_bits(x[1]), leader=x[2], assign=asg(x[3]))

    def client(c):
        return _rec(st=G.STATUS_NAMES[c[0]], gen=c[1], owned=_bits(c[2]), flag=G.FLAG_NAMES[c[3]], acted=c[4],
                    inflight=() if not c[5] else (c[5][0], _bits(c[5][1])))

    cs, gen, leader, members, awaiting, syncwait, pending, assign, epoch = coord
    return {"coord": _rec(state=names[cs], gen=gen, leader=leader, members=_bits(members), awaiting=_bits(awaiting),
                          syncwait=_bits(syncwait), pending=_bits(pending), assign=asg(assign), epoch=epoch),
            "clients": _fun({i: client(c) for i, c in enumerate(clients)}),
            "offsets": _fun(dict(enumerate(offsets))),
            "persisted": pers(persisted),
            "budget": _rec(events=budget[0], faults=budget[1], commits=budget[2], commitGen=budget[3]),
            "delivered": tuple((g, asg(a)) for g, a in delivered),
            "prev": () if prev is None else _rec(persisted=pers(prev[0]), offsets=_fun(dict(enumerate(prev[1]))))}


def offsets_vars(s, parts: int) -> dict:
    rs, coord, payloads, hist = s
    out = replication_vars(rs)
    out["coord"] = _rec(owner=coord[0], gen=coord[1], pend=coord[2], loads=coord[3], asg=coord[4])
    out["payloads"] = tuple(tuple(pl) for pl in payloads)
    out["grouphist"] = _rec(joins=hist[0], next=_fun(dict(enumerate(hist[1]))), lost=frozenset(tuple(x) for x in hist[2]))
    return out


def to_tla(model: str, proto, state):
    if model == "replication":
        d = replication_vars(state)
    elif model == "group":
        d = group_vars(state, proto.n, proto.p)
    elif model == "offsets":
        d = offsets_vars(state, proto.parts)
    else:
        raise ValueError(f"no TLA+ form for model {model!r}")
    return ("rec", tuple(sorted(d.items())))


def python_states(model: str, proto, limit: int = 2_000_000) -> dict:
    """TLA+ form -> (depth, Python state) of every reachable state (plain BFS, no invariants)."""
    out = {}
    frontier = list(proto.init_states())
    seen = set(frontier)
    depth = 0
    while frontier:
        for s in frontier:
            out.setdefault(to_tla(model, proto, s), (depth, s))
        nxt = []
        for s in frontier:
            for a in proto.actions(s):
                t = proto.step(s, a)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
                    if len(seen) > limit:
                        raise ValueError(f"more than {limit} states")
        frontier = nxt
        depth += 1
    return out


def diff(model: str, cfg_path: str, spec_path: str | None = None, show: int = 1) -> list:
    """Lines naming states only TLC or only the explorer reaches at the .cfg's bound (empty: same sets)."""
    from kverify.model import registry
    from kverify.tla import cfg as cfgmod
    from kverify.tla import models, runner
    from kverify.tla import spec as specmod

    b = cfgmod.bound(model, cfgmod.parse_file(cfg_path))
    spec_path = spec_path or models.spec_file(model)
    keep = set(models.spec_model_variables(specmod.parse_file(spec_path)))
    with tempfile.TemporaryDirectory(prefix="kverify-dump-") as tmp:
        dump = os.path.join(tmp, "states")
        cmd = [runner.find_java(), *runner.FAST_START_FLAGS, f"-Djava.io.tmpdir={tmp}", "-cp", runner.find_jar(),
               "tlc2.TLC", "-workers", "1", "-deadlock", "-metadir", tmp, "-dump", dump, "-config",
               os.path.abspath(cfg_path), os.path.basename(spec_path)]
        subprocess.run(cmd, cwd=os.path.dirname(os.path.abspath(spec_path)), capture_output=True, text=True)
        tlc = parse_dump(dump + ".dump", keep)
    proto = registry.build(model, b.params, b.behaviours)
    py = python_states(model, proto)
    only_tlc = sorted(tlc - set(py), key=lambda x: len(repr(x)))
    only_py = sorted((py[k] for k in set(py) - tlc), key=lambda d: d[0])
    lines = []
    if only_tlc:
        lines.append(f"{len(only_tlc)} states only TLC reaches, e.g. {only_tlc[0]}")
    for depth, s in only_py[:show]:
        lines.append(f"{len(only_py)} states only the explorer reaches, the first at depth {depth}: {s}")
    return lines
