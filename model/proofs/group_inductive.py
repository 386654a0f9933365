"""The group model's safety properties proved inductive with Z3, for every member count up to 8.

The encoding below is the transition relation of model/group.py written symbolically: one method
`enc_<action>` per action of the model's ActionTable (model/group.py `ACTIONS`), each returning
(guard, next state, completed-a-join, extra); `Enc.actions` walks that table with the model's own
argument domains, and an `Enc` refuses to exist when an action has no encoding or an encoding no
action, so the action lists cannot drift.
States are flat dicts of Z3 terms: coordinator fields, per-slot client fields, offsets, the
persisted group record, the budgets and, with `unclean-election`, the record before the last
append (`prev`). Ghost fields that no rule reads are abstracted: `delivered` (a list pruned to
reloadable generations) becomes `dmax`, the highest generation still listed (-1 if none), pruned by
the same rule; budget.commit_generation (only for a `sometimes` property) is dropped. Budgets and
`max_generation` are symbolic (any value), so the proof covers every budget.

Bound: 8 member slots and 1..2 partitions (3 partitions also proves, in about twice the time).
Slots that never start stay DOWN and non-members, and a model with k < 8 members is exactly the 8-slot model restricted to its first k slots (`_assign`
and leader choice depend only on the member set), so the 8-slot proof covers every k <= 8.
tests/test_proofs_group.py checks the encoding against the explicit-state model (every transition
the Python model takes at small bounds satisfies it, and every Z3 successor of a reachable state
is a Python successor).

Statuses. A counterexample to induction (CTI) may start from an unreachable state, so it never
decides `falsified` by itself: `falsified` means bounded model checking (model/proofs/bmc.py) found
a trace from the initial state (`hunt`, over the small configurations in HUNTS), and model/group.py
replayed it and reported the same invariant broken at its last step. Each obligation: when a
switched-on behaviour is in its breaking set, hunt first; else prove (exclusive-ownership first with
the ownership strengthening, which does not rely on generations growing, so it also proves the
property under no-generation-bump and unclean-election; then with the correct model's); a failed
proof under a behaviour hunts too; nothing found -> `unknown`, naming the CTI and the bounds searched.

Figures (bench/prove_group.py, CPU seconds per obligation; the wall clock was 2-5x that on the
shared 2-core machine under load 7-9): correct model generation-monotonicity 10.4, exclusive-
ownership 5.1 (ownership strengthening), committed-offset-safety 10.5; leader-not-reelected and
kafka-12890-no-sync-barrier about the same (proved); no-generation-bump 0.1 (falsified, depth 2) /
4.8 (proved) / 2.2 (falsified, depth 8); stale-generation-commit 11.5 (proved) / 11.6 (proved: the
ownership strengthening fails at once, the correct one proves) / 2.1 (falsified, depth 8);
unclean-election 0.9 (falsified, depth 4) / 10.0 (proved) / 1.3 (falsified, depth 6).
"""
from __future__ import annotations

from typing import NamedTuple

import z3

from kverify.invariants.group import COMPLETING, EMPTY, PREPARING, STABLE
from kverify.model.group import SUPPORTS as MODEL_SUPPORTS
from kverify.model.group import (CSTABLE, DOWN, IDLE, JOINING, PAUSED, PREP_INITIAL, RUN, STALLED, SYNC_WAIT,
                                 SYNCING)
from kverify.invariants.group import BROKEN_BY
from kverify.model.proofs import Obligation, Result
from kverify.model.proofs.bmc import bmc, default_decode, z3_var

MEMBERS = 8
PARTITION_COUNTS = (1, 2)

STALE = "stale-generation-commit"
NO_BUMP = "no-generation-bump"
UNCLEAN = "unclean-election"


class _Bounds(NamedTuple):
    """What the model's action domains read from a model (model/group.py `_slots`, `_partitions`)."""

    slot_args: tuple
    part_args: tuple


class Enc:
    """Symbolic group model for n slots, p partitions and a set of behaviours."""

    def __init__(self, n: int, p: int, behaviours: frozenset = frozenset(), failover: bool = True, admin: bool = True):
        self.n, self.p = n, p
        self.stale = STALE in behaviours
        self.no_bump = NO_BUMP in behaviours
        self.keep_leader = "leader-not-reelected" in behaviours
        self.no_barrier = "kafka-12890-no-sync-barrier" in behaviours
        self.unclean = UNCLEAN in behaviours and failover
        self.failover, self.admin = failover, admin
        self.maxgen = z3.Int("max_generation")
        self.bounds = _Bounds(tuple((m,) for m in range(n)), tuple((q,) for q in range(p)))
        missing = self.check_actions()
        if missing:
            raise ValueError("the Z3 encoding and model/group.py's actions differ: " + "; ".join(missing))

    # --- state layout ---------------------------------------------------------------------------
    def fields(self):
        """(name, kind) with kind 'int' | 'bool' | 'mbv' (member bitmask) | 'pbv' (partition bitmask)."""
        n, p = self.n, self.p
        out = [("cs", "int"), ("gen", "int"), ("leader", "int"), ("mem", "mbv"), ("awt", "mbv"), ("sw", "mbv"),
               ("pend", "mbv"), ("ha", "bool")] + [(f"a{i}", "pbv") for i in range(n)] + [("epoch", "int")]
        for i in range(n):
            out += [(f"st{i}", "int"), (f"cg{i}", "int"), (f"own{i}", "pbv"), (f"fl{i}", "int"), (f"act{i}", "int"),
                    (f"inf{i}", "bool"), (f"ig{i}", "int"), (f"ip{i}", "pbv")]
        out += [(f"off{q}", "int") for q in range(p)]
        out += [("pg", "int"), ("pm", "mbv"), ("pl", "int"), ("ph", "bool")] + [(f"pa{i}", "pbv") for i in range(n)]
        out += [("ev", "int"), ("fa", "int"), ("co", "int"), ("dmax", "int")]
        if self.unclean:
            out += [("qg", "int"), ("qm", "mbv"), ("ql", "int"), ("qh", "bool")] + [(f"qa{i}", "pbv") for i in range(n)]
            out += [(f"qo{q}", "int") for q in range(p)]
        return out

    def var(self, name, kind, tag):
        return z3_var(f"{name}_{tag}", kind, self.n if kind == "mbv" else self.p)

    def state(self, tag: str) -> dict:
        return {name: self.var(name, kind, tag) for name, kind in self.fields()}

    def value(self, name, kind, v):
        if kind == "int":
            return z3.IntVal(v)
        if kind == "bool":
            return z3.BoolVal(bool(v))
        return z3.BitVecVal(v, self.n if kind == "mbv" else self.p)

    def equals(self, s: dict, vals: dict):
        return z3.And([s[k] == self.value(k, kind, vals[k]) for k, kind in self.fields()])

    def same(self, s: dict, t: dict):
        return z3.And([s[k] == t[k] for k, _ in self.fields()])

    # --- helpers ----------------------------------------------------------------------------------
    def mbit(self, x, i):
        return z3.Extract(i, i, x) == 1

    def M(self, v):
        return z3.BitVecVal(v, self.n)

    def P(self, v):
        return z3.BitVecVal(v, self.p)

    def lowest(self, mask):
        """Index of the lowest set bit, -1 when empty (Python: (x & -x).bit_length() - 1)."""
        out = z3.IntVal(-1)
        for i in reversed(range(self.n)):
            out = z3.If(self.mbit(mask, i), z3.IntVal(i), out)
        return out

    def has_bit(self, mask, idx):
        """bit `idx` (a symbolic Int) of mask is set."""
        return z3.Or([z3.And(idx == i, self.mbit(mask, i)) for i in range(self.n)])

    @staticmethod
    def ite(c, a: dict, b: dict) -> dict:
        return {k: (a[k] if a[k] is b[k] else z3.If(c, a[k], b[k])) for k in a}

    def set_client(self, s, i, **kw):
        t = dict(s)
        for k, v in kw.items():
            t[f"{k}{i}"] = v
        return t

    def assign_of(self, mem):
        """GroupModel.assign: partition q goes to the (q mod k)-th member of the sorted members."""
        n, p = self.n, self.p
        k = z3.Sum([z3.If(self.mbit(mem, i), 1, 0) for i in range(n)])
        out = []
        for i in range(n):
            rank = z3.Sum([z3.IntVal(0)] + [z3.If(self.mbit(mem, j), 1, 0) for j in range(i)])
            parts = self.P(0)
            for q in range(p):
                mine = z3.And(self.mbit(mem, i), z3.Or([z3.And(k == kk, rank == q % kk) for kk in range(1, n + 1)]))
                parts = parts | z3.If(mine, self.P(1 << q), self.P(0))
            out.append(parts)
        return out

    def unresponsive(self, s, mask):
        """GroupModel.unresponsive."""
        return z3.Or([z3.And(self.mbit(mask, i), z3.Or(s[f"st{i}"] == DOWN, s[f"fl{i}"] != RUN)) for i in range(self.n)])

    def hb_error(self, s, m):
        """GroupModel.heartbeat_error."""
        return z3.Or(z3.Not(self.mbit(s["mem"], m)), s[f"cg{m}"] != s["gen"],
                     z3.Or(s["cs"] == PREPARING, s["cs"] == PREP_INITIAL))

    def commit_ok(self, s, m, cg):
        """GroupModel.commit_verdict(...) == "NONE"."""
        gen_ok = cg == s["gen"]
        if self.stale:
            gen_ok = z3.Or(gen_ok, z3.And(cg >= 0, cg < s["gen"]))
        return z3.And(self.mbit(s["mem"], m), gen_ok, s["cs"] != COMPLETING)

    def save_prev(self, s, t):
        """`prev = (persisted, offsets)` of s (only with unclean-election)."""
        if not self.unclean:
            return t
        t = dict(t)
        t.update(qg=s["pg"], qm=s["pm"], ql=s["pl"], qh=s["ph"])
        for i in range(self.n):
            t[f"qa{i}"] = s[f"pa{i}"]
        for q in range(self.p):
            t[f"qo{q}"] = s[f"off{q}"]
        return t

    def prune(self, t, newest):
        """GroupModel.prune on the ghost dmax (`newest`: max listed generation before pruning)."""
        low = t["pg"] if not self.unclean else z3.If(t["qg"] < t["pg"], t["qg"], t["pg"])
        t = dict(t)
        t["dmax"] = z3.If(newest >= low, newest, z3.IntVal(-1))
        return t

    def no_assign(self, t):
        t = dict(t)
        t["ha"] = z3.BoolVal(False)
        for i in range(self.n):
            t[f"a{i}"] = self.P(0)
        return t

    # --- coordinator rules (model/group.py GroupModel.remove/prepare/complete_join/...) ---------------
    def remove(self, s, m):
        """GroupModel.remove."""
        t = dict(s)
        clear = self.M(~(1 << m) & ((1 << self.n) - 1))
        t["mem"] = s["mem"] & clear
        if not self.keep_leader:
            t["leader"] = z3.If(s["leader"] == m, self.lowest(t["mem"]), s["leader"])
        t["awt"], t["sw"], t["pend"] = s["awt"] & clear, s["sw"] & clear, s["pend"] & clear
        return t

    def prepare(self, s):
        """GroupModel.prepare."""
        completing = s["cs"] == COMPLETING
        t = dict(s)
        for i in range(self.n):
            to_idle = z3.And(completing, self.mbit(s["sw"], i), s[f"st{i}"] == SYNC_WAIT)
            t[f"st{i}"] = z3.If(to_idle, IDLE, s[f"st{i}"])
            t[f"own{i}"] = z3.If(to_idle, self.P(0), s[f"own{i}"])
        t["ha"] = z3.And(z3.Not(completing), s["ha"])
        for i in range(self.n):
            t[f"a{i}"] = z3.If(completing, self.P(0), s[f"a{i}"])
        t["cs"] = z3.If(s["cs"] == EMPTY, z3.IntVal(PREP_INITIAL), z3.IntVal(PREPARING))
        t["sw"], t["pend"] = self.M(0), self.M(0)
        return t

    def complete(self, s):
        """GroupModel.complete_join (onCompleteJoin)."""
        mem = s["mem"] & s["awt"]
        leader = s["leader"]
        in_mem = self.has_bit(mem, leader)
        # GroupModel.new_leader: kept if it rejoined (or, with leader-not-reelected, while it is set)
        kept = z3.Or(in_mem, z3.And(leader >= 0, z3.BoolVal(self.keep_leader)))
        leader = z3.If(kept, leader, self.lowest(mem))
        ngen = s["gen"] if self.no_bump else s["gen"] + 1
        # no member rejoined: Empty, persisted
        e = self.no_assign(dict(s))
        e.update(cs=z3.IntVal(EMPTY), gen=ngen, leader=leader, mem=self.M(0), awt=self.M(0), sw=self.M(0), pend=self.M(0))
        e = self.save_prev(s, e)
        e.update(pg=ngen, pm=self.M(0), pl=leader, ph=z3.BoolVal(False))
        for i in range(self.n):
            e[f"pa{i}"] = self.P(0)
        e = self.prune(e, s["dmax"])
        # CompletingRebalance: parked joiners get the new generation
        c = self.no_assign(dict(s))
        c.update(cs=z3.IntVal(COMPLETING), gen=ngen, leader=leader, mem=mem, awt=self.M(0), sw=self.M(0), pend=mem)
        for i in range(self.n):
            go = z3.And(self.mbit(mem, i), s[f"st{i}"] == JOINING)
            c[f"st{i}"] = z3.If(go, SYNCING, s[f"st{i}"])
            c[f"cg{i}"] = z3.If(go, ngen, s[f"cg{i}"])
            c[f"own{i}"] = z3.If(go, self.P(0), s[f"own{i}"])
        return self.ite(mem == 0, e, c)

    def maybe_complete(self, s):
        """GroupModel.maybe_complete: returns (state, completed)."""
        cond = z3.And(s["cs"] == PREPARING, (s["mem"] & ~s["awt"]) == 0)
        return self.ite(cond, self.complete(s), s), cond

    def join(self, s, m):
        """GroupModel.handle_join."""
        bit = self.M(1 << m)
        known = self.mbit(s["mem"], m)
        prep = z3.Or(s["cs"] == PREPARING, s["cs"] == PREP_INITIAL)
        # known member, rebalancing: park
        k1 = self.set_client(dict(s), m, st=z3.IntVal(JOINING), own=self.P(0))
        k1["awt"] = s["awt"] | bit
        # known leader of a Stable group: rebalance
        k2 = self.prepare(s)
        k2["awt"] = k2["awt"] | bit
        k2 = self.set_client(k2, m, st=z3.IntVal(JOINING), own=self.P(0))
        # follower: the current generation at once
        k3 = self.set_client(dict(s), m, st=z3.IntVal(SYNCING), cg=s["gen"], own=self.P(0))
        known_t = self.ite(prep, k1, self.ite(z3.And(s["cs"] == STABLE, s["leader"] == m), k2, k3))
        # new member
        u = dict(s)
        u["leader"] = z3.If(s["leader"] < 0, z3.IntVal(m), s["leader"])
        u["mem"], u["awt"] = s["mem"] | bit, s["awt"] | bit
        u = self.set_client(u, m, st=z3.IntVal(JOINING), own=self.P(0))
        u = self.ite(z3.Or(s["cs"] == EMPTY, s["cs"] == STABLE, s["cs"] == COMPLETING), self.prepare(u), u)
        return self.maybe_complete(self.ite(known, known_t, u))

    def after_removal(self, s):
        """GroupModel.after_removal."""
        t = self.ite(z3.Or(s["cs"] == STABLE, s["cs"] == COMPLETING), self.prepare(s), s)
        return self.maybe_complete(t)

    def load(self, s, src):
        """GroupModel.load from a record src = (gen, members, leader, has assignment, assignment) and offsets."""
        gen, pm, pl, ph, pa, offs = src
        t = dict(s)
        loaded = pm != 0
        t.update(cs=z3.If(loaded, z3.IntVal(STABLE), z3.IntVal(EMPTY)), gen=gen, leader=z3.If(loaded, pl, z3.IntVal(-1)),
                 mem=pm, awt=self.M(0), sw=self.M(0), pend=self.M(0), ha=z3.And(loaded, ph), epoch=s["epoch"] + 1)
        for i in range(self.n):
            t[f"a{i}"] = z3.If(loaded, pa[i], self.P(0))
            back = z3.Or(s[f"st{i}"] == JOINING, s[f"st{i}"] == SYNC_WAIT)
            t[f"st{i}"] = z3.If(back, IDLE, s[f"st{i}"])
            t[f"own{i}"] = z3.If(back, self.P(0), s[f"own{i}"])
        for q in range(self.p):
            t[f"off{q}"] = offs[q]
        t["pg"], t["pm"], t["pl"], t["ph"] = gen, pm, pl, ph
        for i in range(self.n):
            t[f"pa{i}"] = pa[i]
        if self.unclean:
            t.update(qg=gen, qm=pm, ql=pl, qh=ph)
            for i in range(self.n):
                t[f"qa{i}"] = pa[i]
            for q in range(self.p):
                t[f"qo{q}"] = offs[q]
        t = self.prune(t, s["dmax"])
        t["fa"] = s["fa"] - 1
        return t

    def down(self, t, m):
        return self.set_client(t, m, st=z3.IntVal(DOWN), cg=z3.IntVal(-1), own=self.P(0), fl=z3.IntVal(RUN),
                               act=z3.IntVal(-1), inf=z3.BoolVal(False), ig=z3.IntVal(0), ip=self.P(0))

    # --- actions: one encoding per action of model/group.py's ActionTable, same name ----------------
    # `enc_<name>(s, *args)` -> (guard, next state, completed a join, extra), or None when the action
    # cannot happen under this encoding's settings (the model's guard is then always false).
    # `actions(s)` walks the model's table, so the two action lists cannot drift: `check_actions()`
    # (run at construction) refuses a table action without an encoding, and an encoding of no action.
    def env_ok(self, s):
        return s["gen"] < self.maxgen

    def faulty(self, s):
        return z3.And(s["fa"] > 0, self.env_ok(s))

    def alive_run(self, s, m):
        return z3.And(s[f"st{m}"] != DOWN, s[f"fl{m}"] == RUN)

    def enc_commit_arrives(self, s, m):
        ig, ip = s[f"ig{m}"], s[f"ip{m}"]
        st = s[f"st{m}"]
        ok = self.commit_ok(s, m, ig)
        good = self.set_client(dict(s), m, inf=z3.BoolVal(False), ig=z3.IntVal(0), ip=self.P(0))
        for q in range(self.p):
            good[f"off{q}"] = s[f"off{q}"] + z3.If(z3.Extract(q, q, ip) == 1, 1, 0)
        good = self.save_prev(s, good)
        refused_drop = z3.And(st == CSTABLE, s[f"cg{m}"] == ig)
        bad = self.set_client(dict(s), m, inf=z3.BoolVal(False), ig=z3.IntVal(0), ip=self.P(0),
                              st=z3.If(refused_drop, IDLE, st), own=z3.If(refused_drop, self.P(0), s[f"own{m}"]))
        return s[f"inf{m}"], self.ite(ok, good, bad), z3.BoolVal(False), {"accepted": ok, "member": m}

    def enc_start(self, s, m):
        t = self.set_client(dict(s), m, st=z3.IntVal(IDLE), cg=z3.IntVal(-1), own=self.P(0), fl=z3.IntVal(RUN),
                            act=z3.IntVal(-1), inf=z3.BoolVal(False), ig=z3.IntVal(0), ip=self.P(0))
        t["ev"] = s["ev"] - 1
        t, done = self.join(t, m)
        return z3.And(s[f"st{m}"] == DOWN, s["ev"] > 0, self.env_ok(s), z3.Not(self.mbit(s["mem"], m))), t, done, {}

    def enc_expire(self, s, m):
        t, done = self.after_removal(self.remove(s, m))
        g = z3.And(self.mbit(s["mem"], m), z3.Not(self.mbit(s["awt"] | s["sw"], m)),
                   z3.Or(s[f"st{m}"] == DOWN, s[f"fl{m}"] == PAUSED))
        return g, t, done, {}

    def enc_join(self, s, m):
        t, done = self.join(s, m)
        return z3.And(self.alive_run(s, m), s[f"st{m}"] == IDLE), t, done, {}

    def enc_sync(self, s, m):
        return z3.And(self.alive_run(s, m), s[f"st{m}"] == SYNCING), self.sync(s, m), z3.BoolVal(False), {}

    def enc_rejoin(self, s, m):
        t, done = self.join(s, m)
        return z3.And(self.alive_run(s, m), s[f"st{m}"] == CSTABLE, self.hb_error(s, m)), t, done, {}

    def enc_commit(self, s, m):
        t = self.set_client(dict(s), m, inf=z3.BoolVal(True), ig=s[f"cg{m}"], ip=s[f"own{m}"])
        t["co"] = s["co"] - 1
        g = z3.And(self.alive_run(s, m), s[f"st{m}"] == CSTABLE, s[f"own{m}"] != 0, s["co"] > 0, z3.Not(s[f"inf{m}"]))
        return g, t, z3.BoolVal(False), {}

    def enc_leave(self, s, m):
        t = self.down(dict(s), m)
        t["ev"] = s["ev"] - 1
        t, done = self.after_removal(self.remove(t, m))
        g = z3.And(self.alive_run(s, m), s[f"st{m}"] == CSTABLE, s["ev"] > 0, self.env_ok(s), self.mbit(s["mem"], m))
        return g, t, done, {}

    def _flagged(self, s, m, flag):
        t = self.set_client(dict(s), m, fl=z3.IntVal(flag))
        t["fa"] = s["fa"] - 1
        return t

    def enc_pause(self, s, m):
        return z3.And(self.alive_run(s, m), self.faulty(s)), self._flagged(s, m, PAUSED), z3.BoolVal(False), {}

    def enc_stall(self, s, m):
        g = z3.And(self.alive_run(s, m), s[f"st{m}"] == SYNCING, self.faulty(s))
        return g, self._flagged(s, m, STALLED), z3.BoolVal(False), {}

    def enc_resume(self, s, m):
        t = self.set_client(dict(s), m, fl=z3.IntVal(RUN))
        return z3.And(s[f"st{m}"] != DOWN, s[f"fl{m}"] == PAUSED), t, z3.BoolVal(False), {}

    def enc_crash(self, s, m):
        t = self.down(dict(s), m)
        t["fa"] = s["fa"] - 1
        return z3.And(s[f"st{m}"] != DOWN, self.faulty(s)), t, z3.BoolVal(False), {}

    def enc_join_timeout(self, s):
        g = z3.Or(s["cs"] == PREP_INITIAL, z3.And(s["cs"] == PREPARING, self.unresponsive(s, s["mem"] & ~s["awt"])))
        return g, self.complete(s), z3.BoolVal(True), {}

    def enc_sync_timeout(self, s):
        if self.no_barrier:
            return None
        t = dict(s)
        for m in range(self.n):
            t = self.ite(self.mbit(s["pend"], m), self.remove(t, m), t)
        t, done = self.maybe_complete(self.prepare(t))
        g = z3.And(z3.Or(s["cs"] == COMPLETING, s["cs"] == STABLE), self.unresponsive(s, s["pend"]))
        return g, t, done, {}

    def enc_admin_reset(self, s, q):
        if not self.admin:
            return None
        t = self.save_prev(s, dict(s))
        t[f"off{q}"] = z3.IntVal(0)
        t["co"] = s["co"] - 1
        return z3.And(s["co"] > 0, s["cs"] == EMPTY, s[f"off{q}"] != 0), t, z3.BoolVal(False), {"reset": q}

    def _record(self, s, prefix):
        """(gen, members, leader, has assignment, assignment, offsets) of the persisted record
        (prefix p) or of the one before the last append (prefix q)."""
        off = "off" if prefix == "p" else "qo"
        return (s[f"{prefix}g"], s[f"{prefix}m"], s[f"{prefix}l"], s[f"{prefix}h"],
                [s[f"{prefix}a{i}"] for i in range(self.n)], [s[f"{off}{q}"] for q in range(self.p)])

    def enc_failover(self, s):
        if not self.failover:
            return None
        return self.faulty(s), self.load(s, self._record(s, "p")), z3.BoolVal(False), {"reload": True}

    def enc_unclean_failover(self, s):
        if not (self.failover and self.unclean):
            return None
        src, cur = self._record(s, "q"), self._record(s, "p")
        flat = lambda r: list(r[:4]) + r[4] + r[5]          # noqa: E731
        differs = z3.Not(z3.And([a == b for a, b in zip(flat(src), flat(cur))]))
        return z3.And(self.faulty(s), differs), self.load(s, src), z3.BoolVal(False), {"reload": True}

    def check_actions(self) -> list:
        """Names on one side only: model/group.py's ActionTable against this encoding's `enc_` methods."""
        from kverify.model.group import ACTIONS

        encoded = {k[len("enc_"):] for k in dir(type(self)) if k.startswith("enc_")}
        table = set(ACTIONS.names())
        return ([f"model/group.py action {a!r} has no encoding enc_{a}" for a in sorted(table - encoded)]
                + [f"encoding enc_{a} is no action of model/group.py" for a in sorted(encoded - table)])

    def actions(self, s):
        """Every action of GroupModel.actions(), in the model's table order, as
        (label, action, guard, next, completed, extra)."""
        from kverify.model.group import ACTIONS

        out = []
        for action in ACTIONS.actions:
            encode = getattr(self, "enc_" + action.name)
            domain = action.domain(self.bounds, None)
            prefix = "p" if domain is self.bounds.part_args else "m"
            for args in domain:
                got = encode(s, *args)
                if got is None:
                    continue
                guard, nxt, done, extra = got
                label = " ".join([action.name] + [f"{prefix}{a}" for a in args])
                out.append((label, (action.name, *args), guard, nxt, done, extra))
        return out

    def sync(self, s, m):
        """GroupModel.handle_sync."""
        bit = self.M(1 << m)
        member = self.mbit(s["mem"], m)
        refused = z3.Or(z3.Not(member), s[f"cg{m}"] != s["gen"], s["cs"] == PREPARING, s["cs"] == PREP_INITIAL)
        r = self.set_client(dict(s), m, st=z3.IntVal(IDLE), own=self.P(0))
        # Stable: the stored assignment at once
        st = self.set_client(dict(s), m, st=z3.IntVal(CSTABLE), cg=s["gen"], own=s[f"a{m}"], act=s["gen"])
        st["pend"] = s["pend"] & ~bit
        # CompletingRebalance: park; the leader persists and answers everyone parked
        w = self.set_client(dict(s), m, st=z3.IntVal(SYNC_WAIT), own=self.P(0))
        w["sw"], w["pend"] = s["sw"] | bit, s["pend"] & ~bit
        asg = self.assign_of(s["mem"])
        ld = self.save_prev(s, dict(w))
        ld.update(pg=s["gen"], pm=s["mem"], pl=s["leader"], ph=z3.BoolVal(True), cs=z3.IntVal(STABLE), sw=self.M(0),
                  ha=z3.BoolVal(True))
        for i in range(self.n):
            ld[f"pa{i}"] = asg[i]
            ld[f"a{i}"] = asg[i]
            go = z3.And(self.mbit(w["sw"], i), w[f"st{i}"] == SYNC_WAIT)
            ld[f"st{i}"] = z3.If(go, CSTABLE, w[f"st{i}"])
            ld[f"cg{i}"] = z3.If(go, s["gen"], w[f"cg{i}"])
            ld[f"own{i}"] = z3.If(go, asg[i], w[f"own{i}"])
            ld[f"act{i}"] = z3.If(go, s["gen"], w[f"act{i}"])
        ld = self.prune(ld, z3.If(s["dmax"] > s["gen"], s["dmax"], s["gen"]))
        completing = self.ite(s["leader"] == m, ld, w)
        return self.ite(refused, r, self.ite(s["cs"] == STABLE, st, completing))

    def transition(self, s, t):
        """The whole transition relation T(s, t)."""
        return z3.Or([z3.And(g, self.same(t, nxt)) for _, _, g, nxt, _, _ in self.actions(s)])

    def init(self, s):
        """GroupModel.init_states() with any budgets."""
        n, p = self.n, self.p
        c = [s["cs"] == EMPTY, s["gen"] == 0, s["leader"] == -1, s["mem"] == 0, s["awt"] == 0, s["sw"] == 0,
             s["pend"] == 0, z3.Not(s["ha"]), s["epoch"] == 0, s["pg"] == 0, s["pm"] == 0, s["pl"] == -1,
             z3.Not(s["ph"]), s["ev"] >= 0, s["fa"] >= 0, s["co"] >= 0, s["dmax"] == -1, self.maxgen >= 0]
        for i in range(n):
            c += [s[f"a{i}"] == 0, s[f"pa{i}"] == 0, s[f"st{i}"] == DOWN, s[f"cg{i}"] == -1, s[f"own{i}"] == 0,
                  s[f"fl{i}"] == RUN, s[f"act{i}"] == -1, z3.Not(s[f"inf{i}"]), s[f"ig{i}"] == 0, s[f"ip{i}"] == 0]
        c += [s[f"off{q}"] == 0 for q in range(p)]
        if self.unclean:
            c += [s["qg"] == 0, s["qm"] == 0, s["ql"] == -1, z3.Not(s["qh"])]
            c += [s[f"qa{i}"] == 0 for i in range(n)] + [s[f"qo{q}"] == 0 for q in range(p)]
        return z3.And(c)

    # --- the properties (invariants/group.py, on the symbolic state) --------------------------------
    def can_commit(self, s, i):
        """ClientView.can_commit: stable, and the coordinator would accept its commit now."""
        return z3.And(s[f"st{i}"] == CSTABLE, self.commit_ok(s, i, s[f"cg{i}"]))

    def exclusive(self, s):
        """check_exclusive_ownership."""
        n = self.n
        c = []
        for i in range(n):
            for j in range(i + 1, n):
                c.append(z3.Implies(s["ha"], s[f"a{i}"] & s[f"a{j}"] == 0))
                both = z3.And(s[f"st{i}"] != DOWN, s[f"st{j}"] != DOWN, self.can_commit(s, i), self.can_commit(s, j))
                c.append(z3.Implies(both, s[f"own{i}"] & s[f"own{j}"] == 0))
        return z3.And(c)

    def commit_safe(self, s, t, extra):
        """check_committed_offset_safety for one action."""
        c = []
        if "accepted" in extra:
            m = extra["member"]
            ip = s[f"ip{m}"]
            c.append(z3.Implies(extra["accepted"], z3.And(
                s[f"ig{m}"] == s["gen"], self.mbit(s["mem"], m), s["ha"], ip & ~s[f"a{m}"] == 0)))
        if "reset" in extra:
            c.append(s["cs"] == EMPTY)
        for q in range(self.p):
            if extra.get("reset") != q:
                c.append(t[f"off{q}"] >= s[f"off{q}"])
        return z3.And(c)

    def monotone(self, s, t, completed, extra):
        """check_generation_monotonicity for one action (delivered generations via dmax)."""
        c = []
        if extra.get("reload"):
            c.append(t["gen"] >= s["dmax"])
        else:
            c.append(t["gen"] == s["gen"] + z3.If(completed, 1, 0))
        for i in range(self.n):
            c.append(z3.Implies(z3.And(s[f"st{i}"] != DOWN, t[f"st{i}"] != DOWN, s[f"act{i}"] >= 0),
                                t[f"act{i}"] >= s[f"act{i}"]))
        return z3.And(c)

    # --- strengthening --------------------------------------------------------------------------
    def strengthening(self, s):
        """Named conjuncts that, with the properties, make an inductive invariant."""
        n, p = self.n, self.p
        cs = s["cs"]
        out = {}
        out["domains"] = z3.And([z3.Or([cs == v for v in (EMPTY, PREPARING, COMPLETING, STABLE, PREP_INITIAL)]),
                                 s["gen"] >= 0, s["pg"] >= 0, s["epoch"] >= 0, s["ev"] >= 0, s["fa"] >= 0, s["co"] >= 0,
                                 s["leader"] >= -1, s["leader"] < n, s["pl"] >= -1, s["pl"] < n]
                                + [s[f"off{q}"] >= 0 for q in range(p)]
                                + [z3.And(s[f"st{i}"] >= DOWN, s[f"st{i}"] <= CSTABLE, s[f"fl{i}"] >= RUN,
                                          s[f"fl{i}"] <= STALLED, s[f"cg{i}"] >= -1, s[f"act{i}"] >= -1,
                                          s[f"ig{i}"] >= -1) for i in range(n)])
        if self.unclean:   # the record before the last append is a record like any other
            out["domains"] = z3.And(out["domains"], s["qg"] >= 0, s["qg"] <= s["pg"], s["ql"] >= -1, s["ql"] < n,
                                    s["qh"] == (s["qm"] != 0), z3.Implies(s["qh"], self.has_bit(s["qm"], s["ql"])),
                                    z3.And([s[f"qo{q}"] >= 0 for q in range(p)]),
                                    z3.And([z3.Implies(z3.Not(self.mbit(s["qm"], i)), s[f"qa{i}"] == 0) for i in range(n)]))
        out["no-assignment-is-zero"] = z3.And([z3.And(z3.Implies(z3.Not(s["ha"]), s[f"a{i}"] == 0),
                                                      z3.Implies(z3.Not(s["ph"]), s[f"pa{i}"] == 0),
                                                      z3.Implies(z3.Not(s[f"inf{i}"]), z3.And(s[f"ig{i}"] == 0, s[f"ip{i}"] == 0)))
                                               for i in range(n)])
        out["down-clients-are-reset"] = z3.And([z3.Implies(s[f"st{i}"] == DOWN, z3.And(
            s[f"cg{i}"] == -1, s[f"own{i}"] == 0, s[f"fl{i}"] == RUN, s[f"act{i}"] == -1, z3.Not(s[f"inf{i}"])))
            for i in range(n)])
        out["only-stable-clients-own"] = z3.And([z3.Implies(s[f"st{i}"] != CSTABLE, s[f"own{i}"] == 0) for i in range(n)])
        out["parked-sets-within-members"] = z3.And((s["awt"] & ~s["mem"]) == 0, (s["sw"] & ~s["mem"]) == 0,
                                                   (s["pend"] & ~s["mem"]) == 0)
        # with leader-not-reelected a departed leader keeps its id: only "members have a leader" holds
        leader_member = (z3.BoolVal(True) if self.keep_leader
                         else z3.Implies(s["leader"] >= 0, self.has_bit(s["mem"], s["leader"])))
        out["leader-is-a-member"] = z3.And(leader_member, z3.Implies(s["mem"] != 0, s["leader"] >= 0))
        out["persisted-record-well-formed"] = z3.And(s["ph"] == (s["pm"] != 0),
                                                     z3.Implies(s["ph"], s["pl"] >= 0 if self.keep_leader
                                                                else self.has_bit(s["pm"], s["pl"])),
                                                     z3.And([z3.Implies(z3.Not(self.mbit(s["pm"], i)), s[f"pa{i}"] == 0)
                                                             for i in range(n)]),
                                                     z3.And([s[f"pa{i}"] & s[f"pa{j}"] == 0
                                                             for i in range(n) for j in range(i + 1, n)]))
        out["empty-groups-are-persisted-empty"] = z3.Implies(z3.Or(cs == EMPTY, cs == PREP_INITIAL), z3.And(
            s["gen"] == s["pg"], z3.Not(s["ph"]), z3.Not(s["ha"]), s["sw"] == 0, s["pend"] == 0))
        out["empty-has-no-members"] = z3.Implies(cs == EMPTY, z3.And(s["mem"] == 0, z3.BoolVal(True) if self.keep_leader
                                                                     else s["leader"] == -1))
        out["stored-assignment-is-persisted"] = z3.Implies(s["ha"], z3.And(
            s["ph"], s["gen"] == s["pg"], z3.And([s[f"a{i}"] == s[f"pa{i}"] for i in range(n)])))
        out["stable-matches-record"] = z3.Implies(cs == STABLE, z3.And(
            s["ha"], s["pm"] == s["mem"], s["pl"] == s["leader"], s["awt"] == 0, s["sw"] == 0))
        out["rebalance-runs-ahead-of-record"] = z3.And(
            z3.Implies(cs == COMPLETING, z3.And(z3.Not(s["ha"]), s["gen"] > s["pg"], s["awt"] == 0)),
            z3.Implies(cs == PREPARING, z3.And(s["sw"] == 0, s["pend"] == 0,
                                               z3.Implies(z3.Not(s["ha"]), s["gen"] > s["pg"]))),
            s["gen"] >= s["pg"], s["dmax"] <= s["pg"])
        per = []
        for i in range(n):
            stable = s[f"st{i}"] == CSTABLE
            per.append(z3.And(
                s[f"act{i}"] <= s["pg"],
                z3.Implies(stable, z3.And(s[f"cg{i}"] == s[f"act{i}"], s[f"cg{i}"] <= s["pg"],
                                          z3.Implies(s[f"cg{i}"] == s["pg"], z3.And(s["ph"], s[f"own{i}"] == s[f"pa{i}"])))),
                z3.Implies(s[f"inf{i}"], z3.And(s[f"ig{i}"] <= s["pg"],
                                                z3.Implies(s[f"ig{i}"] == s["pg"],
                                                           z3.And(s["ph"], s[f"ip{i}"] == s[f"pa{i}"]))))))
        out["clients-received-the-persisted-assignment"] = z3.And(per)
        out["awaited-members-are-joining"] = z3.And([z3.Implies(self.mbit(s["awt"], i), z3.Or(
            s[f"st{i}"] == JOINING, s[f"st{i}"] == DOWN)) for i in range(n)])
        out["stable-members-are-current"] = z3.And(
            [z3.And(z3.Implies(z3.And(s[f"st{i}"] == CSTABLE, self.mbit(s["mem"], i)), s[f"cg{i}"] == s["gen"]),
                    z3.Implies(z3.And(s[f"st{i}"] == CSTABLE, self.mbit(s["pm"], i)), s[f"cg{i}"] == s["pg"]))
             for i in range(n)])
        return out

    def ownership_strengthening(self, s):
        """Named conjuncts for exclusive-ownership that do not rely on generations growing (they hold
        with no-generation-bump, where every generation is 0, and with unclean-election, where a
        reload may go back to the record before the last one): a member that can commit holds the
        persisted assignment of its generation because it is a member of that record."""
        n = self.n
        base = self.strengthening(s)
        out = {k: base[k] for k in ("domains", "persisted-record-well-formed", "empty-has-no-members",
                                    "stored-assignment-is-persisted", "stable-matches-record",
                                    "awaited-members-are-joining")}
        cs = s["cs"]
        out["rebalance-phases-are-clean"] = z3.And(
            z3.Implies(cs == COMPLETING, z3.And(z3.Not(s["ha"]), s["awt"] == 0)),
            z3.Implies(cs == PREPARING, z3.And(s["sw"] == 0, s["pend"] == 0)))
        out["completing-has-no-stable-members"] = z3.Implies(cs == COMPLETING, z3.And(
            [z3.Implies(self.mbit(s["mem"], i), s[f"st{i}"] != CSTABLE) for i in range(n)]))
        out["current-stable-members-are-recorded"] = z3.And(
            [z3.Implies(z3.And(s[f"st{i}"] == CSTABLE, self.mbit(s["mem"], i), s[f"cg{i}"] == s["gen"]),
                        z3.And(self.mbit(s["pm"], i), s["gen"] == s["pg"])) for i in range(n)])
        records = [("p", s["pg"], s["pm"], s["ph"], [s[f"pa{i}"] for i in range(n)])]
        if self.unclean:
            records.append(("q", s["qg"], s["qm"], s["qh"], [s[f"qa{i}"] for i in range(n)]))
        out["stable-record-members-hold-its-assignment"] = z3.And(
            [z3.Implies(z3.And(s[f"st{i}"] == CSTABLE, self.mbit(xm, i), s[f"cg{i}"] == xg), z3.And(xh, s[f"own{i}"] == xa[i]))
             for _, xg, xm, xh, xa in records for i in range(n)])
        if self.unclean:
            out["prev-record-well-formed"] = z3.And(
                [s[f"qa{i}"] & s[f"qa{j}"] == 0 for i in range(n) for j in range(i + 1, n)])
            if not self.no_bump:
                # appends of a new group record happen ahead of the record; equal generations = same record
                out["one-record-per-generation"] = z3.And(
                    s["gen"] >= s["pg"], z3.Implies(cs == COMPLETING, s["gen"] > s["pg"]),
                    z3.Implies(s["qg"] == s["pg"], z3.And(s["qm"] == s["pm"], s["qh"] == s["ph"],
                                                          *[s[f"qa{i}"] == s[f"pa{i}"] for i in range(n)])))
        return out


STRENGTHENING_NAMES = ("domains", "no-assignment-is-zero", "down-clients-are-reset", "only-stable-clients-own",
                       "parked-sets-within-members", "leader-is-a-member", "persisted-record-well-formed",
                       "empty-groups-are-persisted-empty", "empty-has-no-members", "stored-assignment-is-persisted",
                       "stable-matches-record", "rebalance-runs-ahead-of-record",
                       "clients-received-the-persisted-assignment", "awaited-members-are-joining",
                       "stable-members-are-current")


# --- mapping to/from the Python model's states ------------------------------------------------------
def values_of(state, n: int, p: int, unclean: bool = False) -> dict:
    """A model/group.py state as the encoding's field values (ghosts abstracted as documented)."""
    from kverify.model.group import as_state

    s = as_state(state)
    c = s.coord
    v = dict(cs=c.state, gen=c.generation, leader=c.leader, mem=c.members, awt=c.awaiting_join, sw=c.awaiting_sync,
             pend=c.pending_sync, ha=c.assignment is not None, epoch=c.epoch)
    for i in range(n):
        v[f"a{i}"] = c.assignment[i] if c.assignment is not None else 0
        cl = s.clients[i]
        v.update({f"st{i}": cl.status, f"cg{i}": cl.generation, f"own{i}": cl.owned, f"fl{i}": cl.flag,
                  f"act{i}": cl.acted, f"inf{i}": bool(cl.inflight),
                  f"ig{i}": cl.inflight.generation if cl.inflight else 0,
                  f"ip{i}": cl.inflight.partitions if cl.inflight else 0})
    for q in range(p):
        v[f"off{q}"] = s.offsets[q]
    r = s.persisted
    v.update(pg=r.generation, pm=r.members, pl=r.leader, ph=r.assignment is not None)
    for i in range(n):
        v[f"pa{i}"] = r.assignment[i] if r.assignment is not None else 0
    v.update(ev=s.budget.events, fa=s.budget.faults, co=s.budget.commits,
             dmax=max((d.generation for d in s.delivered), default=-1))
    if unclean:
        q_r, qo = s.prev.record, s.prev.offsets
        v.update(qg=q_r.generation, qm=q_r.members, ql=q_r.leader, qh=q_r.assignment is not None)
        for i in range(n):
            v[f"qa{i}"] = q_r.assignment[i] if q_r.assignment is not None else 0
        for q in range(p):
            v[f"qo{q}"] = qo[q]
    return v


def model_values(enc: Enc, model, s: dict) -> dict:
    return default_decode(model, {name: s[name] for name, _ in enc.fields()})


def describe_values(v: dict, n: int, p: int) -> dict:
    """Readable form of a field-value dict (the same names as GroupModel.describe)."""
    from kverify.model.group import FLAG_NAMES, STATUS_NAMES

    def slots(mask):
        return [f"m{i}" for i in range(n) if (mask >> i) & 1]

    def parts(mask):
        return [f"p{q}" for q in range(p) if (mask >> q) & 1]

    names = {0: "Empty", 1: "PreparingRebalance", 2: "CompletingRebalance", 3: "Stable", 5: "PreparingRebalance(initial)"}
    return {
        "coordinator": {"state": names.get(v["cs"], v["cs"]), "generation": v["gen"],
                        "leader": f"m{v['leader']}" if v["leader"] >= 0 else None, "members": slots(v["mem"]),
                        "awaiting_join": slots(v["awt"]), "awaiting_sync": slots(v["sw"]), "pending_sync": slots(v["pend"]),
                        "assignment": {f"m{i}": parts(v[f"a{i}"]) for i in range(n) if v[f"a{i}"]} if v["ha"] else None,
                        "epoch": v["epoch"]},
        "clients": {f"m{i}": {"status": STATUS_NAMES[v[f"st{i}"]] if 0 <= v[f"st{i}"] < 6 else v[f"st{i}"],
                              "generation": v[f"cg{i}"], "acted": v[f"act{i}"], "owned": parts(v[f"own{i}"]),
                              "flag": FLAG_NAMES[v[f"fl{i}"]] if 0 <= v[f"fl{i}"] < 3 else v[f"fl{i}"],
                              "commit_in_flight": {"generation": v[f"ig{i}"], "partitions": parts(v[f"ip{i}"])}
                              if v[f"inf{i}"] else None}
                    for i in range(n) if v[f"st{i}"] != DOWN or (v["mem"] >> i) & 1},
        "offsets": {f"p{q}": v[f"off{q}"] for q in range(p)},
        "persisted": {"generation": v["pg"], "members": slots(v["pm"]),
                      "assignment": {f"m{i}": parts(v[f"pa{i}"]) for i in range(n) if v[f"pa{i}"]} if v["ph"] else None},
        "max_delivered_generation": v["dmax"],
        "budget": {"events": v["ev"], "faults": v["fa"], "commits": v["co"]},
        **({"prev": {"generation": v["qg"], "members": slots(v["qm"]), "offsets": [v[f"qo{q}"] for q in range(p)]}}
           if "qg" in v else {}),
    }


# --- the obligations --------------------------------------------------------------------------------
PROPERTIES = ("generation-monotonicity", "exclusive-ownership", "committed-offset-safety")


WORK = 15_000_000       # per query, Z3 resource units (bench/prove_work.py 14:45 UTC: largest query 1,358,536, x 10)
HUNT_WORK = 20_000_000   # per BMC depth (largest measured: 1,350,638, committed-offset-safety depth 8)
SMALL_MEMBERS = 2        # size "small" (quick profile): the fewest slots where two members can conflict


def _members() -> int:
    from kverify.model.proofs import size

    return SMALL_MEMBERS if size() == "small" else MEMBERS


def _solver(work: int = WORK):
    """Each query is solved from scratch with equation solving first: the successor's fields are
    defined by equalities (t = next), which `solve-eqs` eliminates before the SMT core runs."""
    sol = z3.Then("simplify", "solve-eqs", "elim-uncnstr", "simplify", "smt").solver()
    from kverify.model.proofs import limit

    return limit(sol, work)


def check_inductive(prop: str, n: int, p: int, behaviours: frozenset, work: int = WORK,
                    ownership: bool = False):
    """Prove `prop` with the strengthening inductive for n slots, p partitions. Returns
    ("proved", None) or ("falsified", cti dict) or ("unknown", reason). `ownership`: use
    `Enc.ownership_strengthening` (for exclusive-ownership) instead of the correct model's."""
    enc = Enc(n, p, behaviours)
    s, t = enc.state("s"), enc.state("t")
    strengthen = enc.ownership_strengthening if ownership else enc.strengthening
    S, St = strengthen(s), strengthen(t)
    # initiation
    goals_init = list(S.items())
    if prop == "exclusive-ownership":
        goals_init.append(("property", enc.exclusive(s)))
    sol = _solver(work)
    sol.add(enc.init(s), z3.Not(z3.And([g for _, g in goals_init])))
    r = sol.check()
    if r == z3.unknown:
        return "unknown", sol.reason_unknown()
    if r == z3.sat:
        m = sol.model()
        bad = [k for k, g in goals_init if z3.is_false(m.eval(g, model_completion=True))]
        return "falsified", {"kind": "initiation", "broken": bad, "state": describe_values(model_values(enc, m, s), n, p)}
    hyp = list(S.values()) + [enc.maxgen >= 0]
    if prop == "exclusive-ownership":
        # a state property: the strengthening implies it (then S /\ P is inductive once S is)
        sol = _solver(work)
        sol.add(*hyp, z3.Not(enc.exclusive(s)))
        r = sol.check()
        if r == z3.unknown:
            return "unknown", sol.reason_unknown()
        if r == z3.sat:
            return "falsified", {"kind": "implication", "action": None, "broken": ["property"], "members": n,
                                 "partitions": p, "state": describe_values(model_values(enc, sol.model(), s), n, p)}
    acts = enc.actions(s)

    def prop_goal(completed, extra):
        if prop == "generation-monotonicity":
            return [("property", enc.monotone(s, t, completed, extra))]
        if prop == "committed-offset-safety":
            return [("property", enc.commit_safe(s, t, extra))]
        return []     # exclusive-ownership: implied by the strengthening (checked above)

    def cti(label, action, guard, nxt, goal):
        sol = _solver(work)
        sol.add(*hyp)
        sol.add(guard, enc.same(t, nxt), z3.Not(z3.And([g for _, g in goal])))
        r = sol.check()
        if r == z3.unknown:
            return "unknown", f"{label}: {sol.reason_unknown()}"
        if r == z3.unsat:
            return None
        m = sol.model()
        bad = [k for k, g in goal if z3.is_false(m.eval(g, model_completion=True))]
        pre, post = model_values(enc, m, s), model_values(enc, m, t)
        return "falsified", {"kind": "consecution", "action": label, "broken": bad, "members": n, "partitions": p,
                             "trace": [{"action": None, "label": "state satisfying the invariant and strengthening",
                                        "state": describe_values(pre, n, p)},
                                       {"action": list(action), "label": label, "state": describe_values(post, n, p)}]}

    # one query per action: property and strengthening preserved together
    first = None
    for label, action, guard, nxt, completed, extra in acts:
        found = cti(label, action, guard, nxt, prop_goal(completed, extra) + list(St.items()))
        if found is not None:
            if found[0] == "unknown" or "property" in found[1]["broken"]:
                return found
            first = first or found
            break
    if first is None:
        return "proved", None
    # not inductive: prefer a counterexample that breaks the property itself, if there is one
    if prop != "exclusive-ownership":
        for label, action, guard, nxt, completed, extra in acts:
            found = cti(label, action, guard, nxt, prop_goal(completed, extra))
            if found is not None:
                return found
    return first


def _proof(prop: str, behaviours: frozenset, work: int = WORK):
    """Induction at MEMBERS slots for every partition count: ("proved", detail, None) or the first
    failure (status, detail, info) of the last strengthening tried. exclusive-ownership tries the
    ownership strengthening (no reliance on generations growing) first, then the correct model's.
    At size "small" (the quick profile) with SMALL_MEMBERS slots instead."""
    failure, members = None, _members()
    for ownership in ((True, False) if prop == "exclusive-ownership" else (False,)):
        for p in PARTITION_COUNTS:
            status, info = check_inductive(prop, members, p, behaviours, work, ownership)
            if status == "unknown":
                failure = ("unknown", f"{members} slots, {p} partitions: {info}", None)
                break
            if status == "falsified":
                where = {"consecution": info.get("action"), "initiation": "the initial state",
                         "implication": "a state satisfying the strengthening"}[info["kind"]]
                failure = ("falsified", f"counterexample to induction ({members} slots, {p} partitions) at {where}: "
                                        f"breaks {', '.join(info['broken'])}", info)
                break
        else:
            enc = Enc(2, 1, behaviours)
            names = (enc.ownership_strengthening(enc.state("x")) if ownership else STRENGTHENING_NAMES)
            kind = "ownership strengthening" if ownership else "strengthening"
            return ("proved", f"inductive for every member count <= {members} and {min(PARTITION_COUNTS)}.."
                              f"{max(PARTITION_COUNTS)} partitions, any budgets and max_generation, with {kind}: "
                              f"{', '.join(names)}", None)
    return failure


# --- reachability: bounded model checking from the initial state ------------------------------------
# Searched in order when a switched-on behaviour may break a property, or its proof fails: small
# models with the explicit model's (concrete) parameters, so a violation is a shortest trace found
# in seconds that model/group.py replays. Faults first with a short bound (unclean-election needs
# one), then no faults deeper (stale commits need two memberships and a commit: depth 8).
HUNTS = (dict(members=2, partitions=1, events=2, faults=1, commits=1, max_generation=4, depth=6),
         dict(members=2, partitions=1, events=2, faults=0, commits=1, max_generation=4, depth=9))


class Bounded:
    """The encoding started from GroupModel's initial state for concrete parameters."""

    def __init__(self, enc: Enc, params: dict):
        self.enc, self.params = enc, params

    def state(self, name):
        return self.enc.state(name)

    def init(self, s):
        p = self.params
        return z3.And(self.enc.init(s), s["ev"] == p["events"], s["fa"] == p["faults"], s["co"] == p["commits"],
                      self.enc.maxgen == p["max_generation"])

    def actions(self, s):
        return self.enc.actions(s)

    def same(self, t, nxt):
        return self.enc.same(t, nxt)


def bad_predicates(enc: Enc, prop: str):
    """(bad_state, bad_step) for `bmc`: the property negated on the encoding."""
    if prop == "exclusive-ownership":
        return (lambda s: z3.Not(enc.exclusive(s))), None
    if prop == "committed-offset-safety":
        return None, (lambda s, t, act: z3.Not(enc.commit_safe(s, t, act[5])))
    return None, (lambda s, t, act: z3.Not(enc.monotone(s, t, act[4], act[5])))


def replay_in_model(prop: str, params: dict, behaviours: frozenset, actions: list):
    """Run `actions` in model/group.py from its initial state: (True, the invariant's message at the
    last step) when the property fails there, else (False, why not)."""
    from kverify.model.group import GroupModel

    model = GroupModel({k: v for k, v in params.items() if k != "depth"}, behaviours)
    inv = next(i for i in model.invariants() if i.name == prop)
    prev, s = None, model.init_states()[0]
    for a in actions:
        if a not in model.actions(s):
            return False, f"{a} is not enabled in model/group.py there"
        prev, s = s, model.step(s, a)
    msg = inv.check(s) if inv.kind == "state" else inv.check(prev, actions[-1], s)
    return (True, msg) if msg else (False, f"model/group.py: {prop} holds at the end of the trace")


def hunt(prop: str, behaviours: frozenset, work: int = HUNT_WORK, configs: tuple = HUNTS):
    """BMC over `configs`: (counterexample dict, detail) for the first reachable violation, or (None,
    what was searched). The trace is replayed in model/group.py before it is believed."""
    searched = []
    for cfg in configs:
        n, p = cfg["members"], cfg["partitions"]
        enc = Enc(n, p, behaviours)
        bad_state, bad_step = bad_predicates(enc, prop)
        res = bmc(Bounded(enc, cfg), cfg["depth"], bad_state, bad_step, work=work,
                  decode=lambda m, s: describe_values(model_values(enc, m, s), n, p))
        params = {k: v for k, v in cfg.items() if k != "depth"}
        where = f"{n} slots, {p} partition{'s' * (p > 1)}, events {cfg['events']}, faults {cfg['faults']}, commits " \
                f"{cfg['commits']}, max_generation {cfg['max_generation']}"
        if res.status == "falsified":
            actions = [tuple(step["action"]) for step in res.trace[1:]]
            confirmed, msg = replay_in_model(prop, params, behaviours, actions)
            if not confirmed:
                searched.append(f"BMC trace at depth {res.depth} ({where}) does not replay: {msg}")
                continue
            cx = dict(res.as_counterexample(), params=params, model_violation=msg)
            path = " -> ".join(step["label"] for step in res.trace[1:])
            return cx, f"reachable from the initial state in {res.depth} steps ({where}): {path}; model/group.py: {msg}"
        searched.append(f"BMC {res.status} to depth {res.bound if res.status == 'clean' else res.depth} ({where})"
                        + (f": {res.reason}" if res.reason else ""))
    return None, "; ".join(searched)


def _run(prop: str, breaking: frozenset):
    def run(behaviours: frozenset) -> Result:
        hunted = None
        if breaking & behaviours:
            cx, hunted = hunt(prop, behaviours)
            if cx is not None:
                return Result("falsified", hunted, cx)
        status, detail, info = _proof(prop, behaviours)
        if status == "proved":
            return Result("proved", detail)
        if hunted is None:
            # the proof failed: a CTI may come from an unreachable state; look for a real trace
            cx, hunted = hunt(prop, behaviours)
            if cx is not None:
                return Result("falsified", hunted, cx)
        why = "no inductive proof" + (f" under {', '.join(sorted(behaviours))}" if behaviours else "")
        return Result("unknown", f"{why}: {detail}" + (f"; no reachable violation: {hunted}" if hunted else ""), info)
    return run


# Behaviours that break each property of this model: invariants/group.py BROKEN_BY restricted to the
# behaviours model/group.py implements (BROKEN_BY also names ones shown on worlds, e.g. assignor
# bugs this model abstracts away), plus no-generation-bump for committed-offset-safety: two
# memberships share generation 0, so a commit sent before a rebalance lands afterwards for a
# partition that moved (found by `hunt` at depth 8; the plain explorer stops earlier, at the
# generation-monotonicity violation of the first join).
BREAKING = {prop: frozenset(BROKEN_BY[prop]) & MODEL_SUPPORTS for prop in PROPERTIES}
BREAKING["committed-offset-safety"] |= {NO_BUMP}


def obligations() -> list[Obligation]:
    return [
        Obligation("group-generation-monotonicity",
                   f"group model (<= {MEMBERS} members): while loaded the generation grows by exactly one per completed "
                   "join and is otherwise unchanged; a reload never goes below a delivered generation; a live member's "
                   "acted-under generation never decreases",
                   _run("generation-monotonicity", BREAKING["generation-monotonicity"]),
                   BREAKING["generation-monotonicity"]),
        Obligation("group-exclusive-ownership",
                   f"group model (<= {MEMBERS} members): the stored assignment is disjoint and no two live members that "
                   "can commit consume the same partition",
                   _run("exclusive-ownership", BREAKING["exclusive-ownership"]), BREAKING["exclusive-ownership"]),
        Obligation("group-committed-offset-safety",
                   f"group model (<= {MEMBERS} members): an accepted commit comes from a member of the current generation "
                   "for partitions it is assigned, or a standalone reset on an Empty group; offsets never go back otherwise",
                   _run("committed-offset-safety", BREAKING["committed-offset-safety"]),
                   BREAKING["committed-offset-safety"]),
    ]
