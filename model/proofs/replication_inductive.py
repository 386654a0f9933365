"""Z3 for the replication model's durability (I-DUR) and committed-prefix (I-LCC) invariants: a
symbolic transition relation cross-checked against model/replication.py, bounded model checking that
refutes each invariant under the historical behaviours that break it, and an inductive proof for the
correct model (2 and 3 replicas).

Why it exists: `kverify explore replication` checks the invariants at fixed small budgets; here the
same transition relation (one symbolic function per Python `_do_*` rule, named in its docstring) is
encoded once, so Z3 can (a) search every budget at once and (b) give shortest traces from the
initial state that `kverify prove --behaviour ...` turns into reports.

STATUS: both invariants are PROVED inductive by 1-induction for 2 and 3 replicas (default obligations
`replication-i-dur` and `replication-i-lcc`), under the bounds below. I-DUR is proved under the assumption
lossy restarts < MinISR (`Enc.assumption`: check_dur itself only holds then); the I-LCC strengthening is
stated for MinISR >= 2, so with isr-shrinks-to-leader-min-isr-1 (MinISR 1) the I-LCC obligation claims
nothing (`unknown`, left out of its `encodes`). `strengthening()` states 33 named conjuncts; tests check
each is an invariant of the explicit model's reachable states (sampled), and that dropping a quorum
conjunct gives a counterexample to induction. The quorum argument: a leader whose last accepted ISR
has no "doomed" member (one that moved to a later leader epoch, or that is down and uncounted while the
leader is stale) waits for every ISR/ELR member and holds the committed prefix
(`unblocked-leader-covers-electable`, `unblocked-leader-holds-committed`, the same for a leader that has
not applied its request yet); a leader that a lagging electable replica (or such a future leader) may
follow and truncate to holds the committed prefix (`leader-of-a-lagging-electable-holds-committed`); a
stale leader's controller moved only through a member of its ISR (`stale-leader-was-superseded`); ELR
members joined while the ISR stayed below MinISR (`elr-members-joined-while-the-isr-stayed-small`); the
request slots record how the controller's ISR followed its leaders (`controller-isr-follows-its-leader`).
For I-DUR: acked records are committed (`acked-are-committed`) and a holder count
(`electable-count`: |ISR u ELR| + lossy restarts >= MinISR once an ISR of MinISR members existed), whose
electable members hold the committed prefix.

Bounds (concrete in the encoding): `replicas` 2 and 3, logs of at most `LOG` records (the records
budget symbolic, <= LOG), leader epochs at most `EPOCHS` + 1 (the epochs budget symbolic, <= EPOCHS).
BMC pins every budget to the bug zoo's hunting parameters of the behaviour (`bmc_params`) and uses
logs of `records` slots.

Abstractions (each exact or an over-approximation):
- LeaderAndIsr requests are kept by leader epoch: the controller sends exactly one per leader epoch
  up to its own (across failovers: the new controller continues the epochs), so slot e holds the one
  of epoch e exactly; a failover marks the existing slots old (`qo`). Old slots are never applied
  through their slot, and a zombie controller's requests are not stored: `apply_stale` applies ANY
  request whose controller epoch is below the controller's (fresh symbolic content), which
  over-approximates all of them (and is dead once `controller-epoch-known` holds).
- The zombie controller keeps (leader, leader epoch, ISR): its partition/controller epochs only feed
  the request it sends, which is stale (above).
- `acked` (a list in Python) is kept per offset: the first record acknowledged there, plus a flag
  `akx` set when a later acknowledgement at that offset names a different record; the proof goal
  includes `not akx`, so the proof covers every acknowledged record.
- Record ids stay integers (the `next` counter); logs and the committed prefix are bounded arrays of
  (epoch, id); unused slots are 0.

Behaviours encoded: unclean-election, truncate-to-hw, isr-shrinks-to-leader-min-isr-1 (MinISR = 1).
Any other behaviour of this model makes the obligation `unknown` without running (framework
`encodes`). Which behaviour breaks which invariant was decided from the explorer and from BMC:
I-DUR by all three (e.g. truncate-to-hw: write, fetch, inc_hw, crash 0, apply 1, restart 0 -> the
acked record is on no replica); I-LCC by unclean-election and truncate-to-hw (BMC finds no I-LCC
violation with MinISR = 1 within 8 steps on 2 replicas, depth 9 times out; the explorer at the
behaviour's hunting bounds reports I-DUR only).

Measured (2-core machine shared with other engineers' jobs): the correct model's proofs,
`kverify prove replication-i-dur replication-i-lcc`, 9.1 s and 9.4 s each (CPU = wall; 2 replicas ~1.5 s,
3 replicas ~7.5 s; every consecution query is one action). BMC, `kverify prove NAME --behaviour B`:
i-dur/truncate-to-hw 9 s (6 steps, 2 replicas), i-lcc/truncate-to-hw 4-6 s (5 steps),
i-dur/isr-shrinks 20 s (7 steps, 2 replicas), i-dur/unclean 26-49 s and i-lcc/unclean 18-26 s
(6 steps, 3 replicas: on 2 replicas the shortest trace is 8 steps and BMC times out).
BMC uses a fresh `solve-eqs` tactic solver per depth (bmc.py `fresh_solver`): ~10x faster than
incremental solving on this encoding.
tests/test_proofs_replication.py checks the encoding against the explicit-state model (every
transition the Python model takes at small bounds is one of the encoding's with the same successor,
and every Z3 successor of a reachable state is a Python successor) and replays BMC traces.
"""
from __future__ import annotations

import z3

from kverify.impl.replication import behaviours as B
from kverify.model import replication as R
from kverify.model.proofs import Obligation, Result
from kverify.model.proofs.bmc import default_decode, z3_var

LOG = 2            # log slots (records written at most)
EPOCHS = 2         # symbolic epochs budget <= EPOCHS; leader epochs <= EPOCHS + 1
REPLICAS = (2, 3)

ENCODED = frozenset({B.UNCLEAN_ELECTION, B.TRUNCATE_TO_HW, B.ISR_SHRINKS_TO_LEADER})
# The encoding's actions against model/replication.py's action table (R.ACTIONS): `apply_stale` is the
# encoding's name for applying a request of an older controller generation (Python: `apply`); actions
# that only a behaviour outside ENCODED enables are not encoded (obligations over it give `unknown`).
MODEL_ACTION = {"apply_stale": "apply"}
NOT_ENCODED = {"fetch_hw": B.HW_BEFORE_TRUNCATE}


def encoded_action_names(enc: "Enc") -> frozenset:
    """The model/replication.py action names the encoding `enc` has transitions for."""
    return frozenset(MODEL_ACTION.get(action[0], action[0]) for _, action, _, _ in enc.actions(enc.state("s")))


BUDGETS = ("maxrec", "maxep", "maxcr", "maxlo", "maxal", "maxfo", "maxun", "minisr", "initisr")


class Enc:
    """Symbolic model/replication.py for n replicas, logs of <= L records, leader epochs <= E + 1."""

    def __init__(self, n: int, behaviours: frozenset = frozenset(), L: int = LOG, E: int = EPOCHS):
        self.n, self.L, self.E = n, L, E
        self.Q = E + 2                        # request slots: leader epochs 0..E+1
        b = frozenset(behaviours)
        self.trunc_hw = B.TRUNCATE_TO_HW in b
        self.unclean = B.UNCLEAN_ELECTION in b
        self.min1 = B.ISR_SHRINKS_TO_LEADER in b
        self.bud = {k: z3.Int(k) for k in BUDGETS}
        self._fresh = 0                       # names the stale-request constants of each actions() call

    # --- state layout ---------------------------------------------------------------------------
    def fields(self):
        n, L = self.n, self.L
        out = []
        for r in range(n):
            out += [(f"al{r}", "bool"), (f"len{r}", "int")]
            for k in range(L):
                out += [(f"le{r}_{k}", "int"), (f"li{r}_{k}", "int")]
            out += [(f"hw{r}", "int"), (f"ep{r}", "int"), (f"pep{r}", "int"), (f"cep{r}", "int"), (f"ldr{r}", "int"),
                    (f"tr{r}", "bool"), (f"isr{r}", "bv"), (f"pd{r}", "pbv"), (f"leso{r}", "int"), (f"since{r}", "int")]
        out += [("cl", "int"), ("ce", "int"), ("ci", "bv"), ("cel", "bv"), ("cp", "int"), ("cc", "int")]
        for e in range(self.Q):
            out += [(f"qh{e}", "bool"), (f"qo{e}", "bool"), (f"ql{e}", "int"), (f"qi{e}", "bv"), (f"qp{e}", "int")]
        out += [("zh", "bool"), ("zl", "int"), ("ze", "int"), ("zi", "bv")]
        out += [("nx", "int"), ("cn", "int")]
        for k in range(L):
            out += [(f"ce_{k}", "int"), (f"ci_{k}", "int"), (f"ak{k}", "bool"), (f"ake{k}", "int"), (f"aki{k}", "int")]
        out += [("akx", "bool"), ("hc", "int"), ("hl", "int"), ("hu", "int"), ("ha", "int"), ("hf", "int")]
        return out

    def _var(self, name, kind, tag):
        return z3_var(f"{name}_{tag}", kind, self.n if kind == "bv" else self.n + 2)

    def state(self, tag: str) -> dict:
        return {name: self._var(name, kind, tag) for name, kind in self.fields()}

    def value(self, kind, v):
        if kind == "int":
            return z3.IntVal(v)
        if kind == "bool":
            return z3.BoolVal(bool(v))
        return z3.BitVecVal(v, self.n if kind == "bv" else self.n + 2)

    def equals(self, s: dict, vals: dict):
        return z3.And([s[k] == self.value(kind, vals[k]) for k, kind in self.fields()])

    def same(self, s: dict, t: dict):
        return z3.And([s[k] == t[k] for k, _ in self.fields()])

    # --- helpers ----------------------------------------------------------------------------------
    def M(self, v):
        return z3.BitVecVal(v, self.n)

    def bit(self, mask, i):
        return z3.Extract(i, i, mask) == 1

    def has(self, mask, idx):
        """bit `idx` (a symbolic Int) of an n-bit mask is set."""
        return z3.Or([z3.And(idx == i, self.bit(mask, i)) for i in range(self.n)])

    def popcount(self, mask):
        return z3.Sum([z3.If(self.bit(mask, i), 1, 0) for i in range(self.n)])

    def min_isr(self):
        return z3.IntVal(1) if self.min1 else self.bud["minisr"]

    def pmask(self, pd):
        """PEND & MASK as an n-bit mask (APPLIED is bit n, STALE bit n + 1 of the encoding's pend)."""
        return z3.Extract(self.n - 1, 0, pd)

    def applied(self, pd):
        return z3.Extract(self.n, self.n, pd) == 1

    def stale(self, pd):
        return z3.Extract(self.n + 1, self.n + 1, pd) == 1

    def widen(self, mask, applied=False):
        return z3.Concat(z3.BitVecVal(1 if applied else 0, 2), mask)

    @staticmethod
    def ite(c, a: dict, b: dict) -> dict:
        return {k: (a[k] if a[k] is b[k] else z3.If(c, a[k], b[k])) for k in a}

    def pick(self, idx, vals, default):
        """vals[idx] for a symbolic index (default when out of range)."""
        out = default
        for i in reversed(range(len(vals))):
            out = z3.If(idx == i, vals[i], out)
        return out

    def field_of(self, s, idx, name):
        """Replica `idx`'s field `name` for a symbolic replica index."""
        return self.pick(idx, [s[f"{name}{r}"] for r in range(self.n)], s[f"{name}0"])

    def log_of(self, s, r):
        """(length, [(epoch, id)] * L) of replica r (a concrete index)."""
        return (s[f"len{r}"], [(s[f"le{r}_{k}"], s[f"li{r}_{k}"]) for k in range(self.L)])

    def log_at(self, s, idx):
        """The log of a symbolically indexed replica."""
        lens = [s[f"len{r}"] for r in range(self.n)]
        ents = [(self.pick(idx, [s[f"le{r}_{k}"] for r in range(self.n)], s[f"le0_{k}"]),
                 self.pick(idx, [s[f"li{r}_{k}"] for r in range(self.n)], s[f"li0_{k}"])) for k in range(self.L)]
        return (self.pick(idx, lens, lens[0]), ents)

    def set_log(self, t, r, log):
        t[f"len{r}"] = log[0]
        for k in range(self.L):
            t[f"le{r}_{k}"], t[f"li{r}_{k}"] = log[1][k]

    def cut_log(self, log, cut):
        """log[:cut]: entries above the cut are zeroed (values_of zero-fills unused slots)."""
        ln, ents = log
        return (z3.If(cut < ln, cut, ln), [(z3.If(k < cut, e, 0), z3.If(k < cut, i, 0)) for k, (e, i) in enumerate(ents)])

    # --- epoch caches and truncation (model/replication.py epoch_entries .. truncation_point) ------
    def entries(self, log):
        """epoch_entries(log): [(present, epoch, start)] one candidate per offset."""
        ln, ents = log
        out = []
        for k in range(self.L):
            pres = z3.And(k < ln, z3.BoolVal(True) if k == 0 else ents[k][0] != ents[k - 1][0])
            out.append((pres, ents[k][0], z3.IntVal(k)))
        return out

    def last_epoch(self, log):
        ln, ents = log
        return self.pick(ln - 1, [e for e, _ in ents], z3.IntVal(-1))

    def leader_entries(self, s, idx):
        """leader_entries(rep): the log's entries plus (EP, LESO) when the log has no record of EP."""
        log = self.log_at(s, idx)
        ents = self.entries(log)
        ep, leso = self.field_of(s, idx, "ep"), self.field_of(s, idx, "leso")
        extra = z3.And(leso >= 0, z3.Or(log[0] == 0, self.last_epoch(log) < ep))
        return ents + [(extra, ep, leso)], log

    def end_offset_for(self, ents, leo, e):
        """KIP-279 lookup: (defined, epoch, end offset)."""
        any_ent = z3.Or([p for p, _, _ in ents])
        last = z3.IntVal(-1)
        for p, ep, _ in ents:
            last = z3.If(p, ep, last)
        found, rep, start = z3.BoolVal(False), z3.IntVal(0), z3.IntVal(0)
        fl_has, fl = z3.BoolVal(False), z3.IntVal(0)
        for p, ep, st in ents:
            hit = z3.And(p, z3.Not(found), ep > e)
            rep = z3.If(hit, z3.If(fl_has, fl, e), rep)
            start = z3.If(hit, st, start)
            upd = z3.And(p, z3.Not(found), z3.Not(ep > e))
            fl_has, fl = z3.Or(fl_has, upd), z3.If(upd, ep, fl)
            found = z3.Or(found, hit)
        is_last = z3.And(any_ent, e == last)
        defined = z3.And(any_ent, z3.Or(is_last, found))
        return defined, z3.If(is_last, e, rep), z3.If(is_last, leo, start)

    def truncation_point(self, flog, fhw, lents, lleo):
        """truncation_point(flog, fhw, lrep, offset_only=False)."""
        leo = flog[0]
        fents = self.entries(flog)
        e = self.last_epoch(flog)
        done, result = leo == 0, z3.IntVal(0)

        def mn(*xs):
            out = xs[0]
            for x in xs[1:]:
                out = z3.If(x < out, x, out)
            return out
        for _ in range(self.L + 1):
            defined, le, lend = self.end_offset_for(lents, lleo, e)
            # the follower's end offset for epoch le (first entry with that epoch)
            fend_has, fend = z3.BoolVal(False), z3.IntVal(0)
            for k, (p, ep, _) in enumerate(fents):
                hit = z3.And(p, ep == le, z3.Not(fend_has))
                nxt = leo
                for k2 in reversed(range(k + 1, self.L)):
                    nxt = z3.If(fents[k2][0], z3.IntVal(k2), nxt)
                fend = z3.If(hit, nxt, fend)
                fend_has = z3.Or(fend_has, hit)
            low_has, low = z3.BoolVal(False), z3.IntVal(0)
            for p, ep, _ in fents:
                c = z3.And(p, ep < le)
                low_has, low = z3.Or(low_has, c), z3.If(c, ep, low)
            val = z3.If(z3.Not(defined), mn(fhw, leo),
                        z3.If(fend_has, mn(fend, lend, leo), mn(lend, leo)))
            stop = z3.Or(z3.Not(defined), fend_has, z3.Not(low_has))
            result = z3.If(done, result, val)
            e = z3.If(z3.Or(done, stop), e, low)
            done = z3.Or(done, stop)
        return result

    def truncation(self, s, r):
        """ReplicationModel._truncation for follower r (a concrete index): (cut, done)."""
        flog = self.log_of(s, r)
        lidx = s[f"ldr{r}"]
        lents, llog = self.leader_entries(s, lidx)
        cut = self.truncation_point(flog, s[f"hw{r}"], lents, llog[0])
        ef = self.pick(cut - 1, [e for e, _ in flog[1]], z3.IntVal(-1))
        defined, le, lend = self.end_offset_for(lents, llog[0], ef)
        return cut, z3.Or(cut == 0, z3.And(defined, le == ef, lend >= cut))

    # --- rules ------------------------------------------------------------------------------------
    def quorum(self, s, r):
        """ReplicationModel.quorum: committed ISR plus a pending proposal (maximal ISR)."""
        pd = s[f"pd{r}"]
        return z3.If(pd != 0, s[f"isr{r}"] | self.pmask(pd), s[f"isr{r}"])

    def counts(self, s, r, f):
        """ReplicationModel._counts (r, f concrete)."""
        return z3.And(s[f"ldr{f}"] == r, z3.Not(s[f"tr{f}"]), s[f"ep{f}"] == s[f"ep{r}"])

    def fetch_ok(self, s, f):
        """ReplicationModel._fetch_ok."""
        ldr = s[f"ldr{f}"]
        return z3.And(ldr >= 0, ldr != f, s[f"al{f}"], self.field_of(s, ldr, "al"),
                      self.field_of(s, ldr, "ldr") == ldr, self.field_of(s, ldr, "ep") == s[f"ep{f}"],
                      ldr < self.n)

    def hw_candidate(self, s, r):
        cand = s[f"len{r}"]
        q = self.quorum(s, r)
        for f in range(self.n):
            if f == r:
                continue
            leo = z3.If(self.counts(s, r, f), s[f"len{f}"], 0)
            cand = z3.If(z3.And(self.bit(q, f), leo < cand), leo, cand)
        return cand

    def new_elr(self, old, new, elr):
        """ReplicationModel._new_elr (KIP-966)."""
        return z3.If(self.popcount(new) >= self.min_isr(), self.M(0), (elr | (old & ~new)) & ~new)

    def become(self, s, t, r, ldr, ep, isr, pep, cep):
        """ReplicationModel._become: replica r applies a LeaderAndIsr (leader `ldr`, epoch `ep`)."""
        log = self.log_of(s, r)
        lead = dict(t)
        since = z3.If(z3.And(s[f"ldr{r}"] == r, s[f"since{r}"] >= 0), s[f"since{r}"], ep)
        lead.update({f"al{r}": z3.BoolVal(True), f"ep{r}": ep, f"pep{r}": pep, f"cep{r}": cep, f"ldr{r}": z3.IntVal(r),
                     f"tr{r}": z3.BoolVal(False), f"isr{r}": isr, f"pd{r}": z3.BitVecVal(0, self.n + 2),
                     f"leso{r}": log[0], f"since{r}": since})
        fol = dict(t)
        fol.update({f"al{r}": z3.BoolVal(True), f"ep{r}": ep, f"pep{r}": pep, f"cep{r}": cep, f"ldr{r}": ldr,
                    f"tr{r}": z3.BoolVal(not self.trunc_hw), f"isr{r}": self.M(0),
                    f"pd{r}": z3.BitVecVal(0, self.n + 2), f"leso{r}": z3.IntVal(-1), f"since{r}": z3.IntVal(-1)})
        if self.trunc_hw:
            hw = s[f"hw{r}"]
            cut = z3.If(hw < log[0], hw, log[0])
            self.set_log(fol, r, self.cut_log(log, cut))
            fol[f"hw{r}"] = cut
        return self.ite(ldr == r, lead, fol)

    def add_req(self, t, ldr, ep, isr, pep):
        """_add_req for the current controller: the slot of leader epoch `ep`."""
        t = dict(t)
        for e in range(self.Q):
            at = ep == e
            t[f"qh{e}"] = z3.Or(t[f"qh{e}"], at)
            t[f"qo{e}"] = z3.And(t[f"qo{e}"], z3.Not(at))
            t[f"ql{e}"] = z3.If(at, ldr, t[f"ql{e}"])
            t[f"qi{e}"] = z3.If(at, isr, t[f"qi{e}"])
            t[f"qp{e}"] = z3.If(at, pep, t[f"qp{e}"])
        return t

    def epoch_budget(self, s):
        return self.bud["maxep"]

    # --- actions: (label, action, guard, next) ----------------------------------------------------
    def actions(self, s):
        """Every action of ReplicationModel.actions(), requests named by leader epoch (`apply r e`)."""
        n, L = self.n, self.L
        bud = self.bud
        T = z3.BoolVal(True)
        out = []
        mi = self.min_isr()
        cl, ce, ci, cel = s["cl"], s["ce"], s["ci"], s["cel"]
        for r in range(n):
            al, ln = s[f"al{r}"], s[f"len{r}"]
            log = self.log_of(s, r)
            # _do_restart
            for keep in range(L + 1):
                lossy = keep < ln
                g = z3.And(z3.Not(al), keep <= ln, z3.Or(keep == ln, s["hl"] < bud["maxlo"]))
                out.append((f"restart r{r} keep {keep}", ("restart", r, keep), g, self.restart(s, r, keep, lossy)))
            # _do_apply (current controller's requests, by leader epoch)
            for e in range(self.Q):
                g = z3.And(al, s[f"qh{e}"], z3.Not(s[f"qo{e}"]), e > s[f"ep{r}"], s["cc"] >= s[f"cep{r}"])
                cep = z3.If(s["cc"] > s[f"cep{r}"], s["cc"], s[f"cep{r}"])
                nxt = self.become(s, dict(s), r, s[f"ql{e}"], z3.IntVal(e), s[f"qi{e}"], s[f"qp{e}"], cep)
                out.append((f"apply r{r} epoch {e}", ("apply", r, e), g, nxt))
            # _do_apply of a request sent by an older controller generation: any content (over-approximation)
            self._fresh += 1
            tag = f"{r}_{self._fresh}"
            q_l, q_e, q_i, q_p, q_c = (z3.Int(f"stale_ldr_{tag}"), z3.Int(f"stale_ep_{tag}"), z3.BitVec(f"stale_isr_{tag}", n),
                                       z3.Int(f"stale_pep_{tag}"), z3.Int(f"stale_cep_{tag}"))
            g = z3.And(al, q_c < s["cc"], q_e > s[f"ep{r}"], q_c >= s[f"cep{r}"], q_l >= -1, q_l < n)
            nxt = self.become(s, dict(s), r, q_l, q_e, q_i, q_p, z3.If(q_c > s[f"cep{r}"], q_c, s[f"cep{r}"]))
            out.append((f"apply r{r} stale request", ("apply_stale", r), g, nxt))
            leads = z3.And(al, s[f"ldr{r}"] == r)
            isr_r = s[f"isr{r}"]
            # _do_write
            t = dict(s)
            for k in range(L):
                at = ln == k
                t[f"le{r}_{k}"] = z3.If(at, s[f"ep{r}"], s[f"le{r}_{k}"])
                t[f"li{r}_{k}"] = z3.If(at, s["nx"], s[f"li{r}_{k}"])
            t[f"len{r}"] = ln + 1
            t["nx"] = s["nx"] + 1
            out.append((f"write r{r}", ("write", r), z3.And(leads, s["nx"] <= bud["maxrec"], self.popcount(isr_r) >= mi), t))
            # _do_inc_hw
            cand = self.hw_candidate(s, r)
            out.append((f"inc_hw r{r}", ("inc_hw", r), z3.And(leads, self.popcount(isr_r) >= mi, cand > s[f"hw{r}"]),
                        self.inc_hw(s, r, cand)))
            pd = s[f"pd{r}"]
            # _do_alter_resp
            t = dict(s)
            t[f"pep{r}"] = s[f"pep{r}"] + 1
            t[f"isr{r}"] = self.pmask(pd)
            t[f"pd{r}"] = z3.BitVecVal(0, n + 2)
            out.append((f"alter_resp r{r}", ("alter_resp", r), z3.And(leads, self.applied(pd)), t))
            # _do_ctrl_alter
            out.append((f"ctrl_alter r{r}", ("ctrl_alter", r), z3.And(leads, pd != 0, z3.Not(self.applied(pd))),
                        self.ctrl_alter(s, r)))
            may_alter = z3.And(leads, pd == 0, s["ha"] < bud["maxal"])
            for f in range(n):
                if f == r:
                    continue
                cnt = self.counts(s, r, f)
                fl = s[f"len{f}"]
                # _do_shrink / _do_expand
                t = dict(s)
                t[f"pd{r}"] = self.widen(isr_r & self.M(~(1 << f) & ((1 << n) - 1)))
                t["ha"] = s["ha"] + 1
                g = z3.And(may_alter, self.bit(isr_r, f), z3.Not(z3.And(s[f"al{f}"], cnt, fl == ln)))
                out.append((f"shrink r{r} drops r{f}", ("shrink", r, f), g, t))
                t = dict(s)
                t[f"pd{r}"] = self.widen(isr_r | self.M(1 << f))
                t["ha"] = s["ha"] + 1
                g = z3.And(may_alter, z3.Not(self.bit(isr_r, f)), s[f"al{f}"], cnt, fl >= s[f"hw{r}"],
                           fl >= s[f"leso{r}"])
                out.append((f"expand r{r} adds r{f}", ("expand", r, f), g, t))
            follower = z3.And(al, s[f"ldr{r}"] != r)
            ok = self.fetch_ok(s, r)
            # _do_truncate
            cut, done = self.truncation(s, r)
            t = dict(s)
            self.set_log(t, r, self.cut_log(log, cut))
            t[f"hw{r}"] = z3.If(cut < s[f"hw{r}"], cut, s[f"hw{r}"])
            t[f"tr{r}"] = z3.Not(done)
            out.append((f"truncate r{r}", ("truncate", r), z3.And(follower, s[f"tr{r}"], ok, z3.Or(done, cut < ln)), t))
            # _do_fetch
            lidx = s[f"ldr{r}"]
            llog = self.log_at(s, lidx)
            grow = ln < llog[0]
            t = dict(s)
            for k in range(L):
                at = z3.And(grow, ln == k)
                t[f"le{r}_{k}"] = z3.If(at, llog[1][k][0], s[f"le{r}_{k}"])
                t[f"li{r}_{k}"] = z3.If(at, llog[1][k][1], s[f"li{r}_{k}"])
            newlen = z3.If(grow, ln + 1, ln)
            lhw = self.field_of(s, lidx, "hw")
            nhw = z3.If(lhw < newlen, lhw, newlen)
            t[f"len{r}"], t[f"hw{r}"] = newlen, nhw
            g = z3.And(follower, z3.Not(s[f"tr{r}"]), ok, z3.Or(grow, nhw != s[f"hw{r}"]))
            out.append((f"fetch r{r}", ("fetch", r), g, t))
            # _do_crash
            g = z3.And(al, s["hc"] < bud["maxcr"], z3.Or(z3.Not(self.bit(ci, r)), ce < bud["maxep"]))
            out.append((f"crash r{r}", ("crash", r), g, self.crash(s, r)))
        # controller: _do_elect / _do_elect_unclean
        window = z3.Or(ce < bud["maxep"], z3.And(cl == -1, ce == bud["maxep"]))
        for r in range(n):
            g = z3.And(window, cl != r, s[f"al{r}"], z3.Or(self.bit(ci, r), z3.And(ci == 0, self.bit(cel, r))))
            out.append((f"elect r{r}", ("elect", r), g, self.elect(s, r)))
        if self.unclean:
            nobody = z3.And([z3.Not(z3.And(self.bit(ci | cel, r), s[f"al{r}"])) for r in range(n)])
            for r in range(n):
                g = z3.And(window, s["hu"] < bud["maxun"], cl == -1, nobody, s[f"al{r}"])
                out.append((f"elect_unclean r{r}", ("elect_unclean", r), g, self.elect_unclean(s, r)))
        # _do_ctrl_failover
        out.append(("ctrl_failover", ("ctrl_failover",), s["hf"] < bud["maxfo"], self.failover(s)))
        # _do_zombie_elect (its request is stale: covered by apply_stale)
        for r in range(n):
            g = z3.And(s["zh"], s["ze"] < bud["maxep"], s["zl"] != r, self.has(s["zi"], z3.IntVal(r)), s[f"al{r}"])
            t = dict(s)
            t.update(zh=z3.BoolVal(False), zl=z3.IntVal(0), ze=z3.IntVal(0), zi=self.M(0))
            out.append((f"zombie_elect r{r}", ("zombie_elect", r), g, t))
        return out

    def inc_hw(self, s, r, new):
        """ReplicationModel._do_inc_hw."""
        t = dict(s)
        old = s[f"hw{r}"]
        log = self.log_of(s, r)
        ack_ok = self.popcount(self.quorum(s, r)) >= self.min_isr()
        since = s[f"since{r}"]
        for k in range(self.L):
            e, i = log[1][k]
            add = z3.And(ack_ok, old <= k, k < new, e >= since)
            first = z3.And(add, z3.Not(s[f"ak{k}"]))
            t[f"ak{k}"] = z3.Or(s[f"ak{k}"], add)
            t[f"ake{k}"] = z3.If(first, e, s[f"ake{k}"])
            t[f"aki{k}"] = z3.If(first, i, s[f"aki{k}"])
        t["akx"] = z3.Or(s["akx"], z3.Or([z3.And(ack_ok, old <= k, k < new, log[1][k][0] >= since, s[f"ak{k}"],
                                                 z3.Or(s[f"ake{k}"] != log[1][k][0], s[f"aki{k}"] != log[1][k][1]))
                                          for k in range(self.L)]))
        grow = new > s["cn"]
        for k in range(self.L):
            at = z3.And(grow, s["cn"] <= k, k < new)
            t[f"ce_{k}"] = z3.If(at, log[1][k][0], s[f"ce_{k}"])
            t[f"ci_{k}"] = z3.If(at, log[1][k][1], s[f"ci_{k}"])
        t["cn"] = z3.If(grow, new, s["cn"])
        t[f"hw{r}"] = new
        return t

    def ctrl_alter(self, s, r):
        """ReplicationModel._do_ctrl_alter."""
        pd = s[f"pd{r}"]
        prop = self.pmask(pd)
        added = prop & ~s["ci"]
        ok = z3.And(s["cl"] == r, s["ce"] == s[f"ep{r}"], s["cp"] == s[f"pep{r}"], z3.Not(self.stale(pd)),
                    z3.And([z3.Implies(self.bit(added, f), s[f"al{f}"]) for f in range(self.n)]))
        bad = dict(s)
        bad[f"pd{r}"] = z3.BitVecVal(0, self.n + 2)
        good = dict(s)
        good.update(ci=prop, cel=self.new_elr(s["ci"], prop, s["cel"]), cp=s["cp"] + 1)
        good[f"pd{r}"] = self.widen(prop, applied=True)
        return self.ite(ok, good, bad)

    def crash(self, s, r):
        """ReplicationModel._do_crash."""
        t = dict(s)
        t[f"al{r}"] = z3.BoolVal(False)
        t["hc"] = s["hc"] + 1
        inisr = self.bit(s["ci"], r)
        isr = s["ci"] & self.M(~(1 << r) & ((1 << self.n) - 1))
        ldr = z3.If(s["cl"] == r, z3.IntVal(-1), s["cl"])
        u = dict(t)
        u.update(cl=ldr, ce=s["ce"] + 1, ci=isr, cel=self.new_elr(s["ci"], isr, s["cel"]), cp=s["cp"] + 1)
        u = self.add_req(u, ldr, s["ce"] + 1, isr, s["cp"] + 1)
        return self.ite(inisr, u, t)

    def restart(self, s, r, keep, lossy):
        """ReplicationModel._do_restart."""
        n = self.n
        t = dict(s)
        log = self.log_of(s, r)
        klog = self.cut_log(log, z3.IntVal(keep))
        hw = z3.If(s[f"hw{r}"] < keep, s[f"hw{r}"], keep)
        bitr = self.M(1 << r)
        in_ce = (s["ci"] | s["cel"]) & bitr != 0
        t["hl"] = z3.If(lossy, s["hl"] + 1, s["hl"])
        t["ci"] = z3.If(z3.And(lossy, in_ce), s["ci"] & ~bitr, s["ci"])
        t["cel"] = z3.If(z3.And(lossy, in_ce), s["cel"] & ~bitr, s["cel"])
        cep = z3.If(s["cc"] > s[f"cep{r}"], s["cc"], s[f"cep{r}"])
        # a pending AlterPartition (not yet applied) that adds r now carries a stale broker epoch
        for x in range(n):
            pd = s[f"pd{x}"]
            mark = z3.And(pd != 0, z3.Not(self.applied(pd)), self.bit(self.pmask(pd) & ~s[f"isr{x}"], r))
            t[f"pd{x}"] = z3.If(mark, pd | z3.BitVecVal(1 << (n + 1), n + 2), pd)
        base = dict(t)
        self.set_log(base, r, klog)
        base.update({f"al{r}": z3.BoolVal(True), f"hw{r}": hw, f"cep{r}": cep, f"ldr{r}": z3.IntVal(-1),
                     f"tr{r}": z3.BoolVal(True), f"isr{r}": self.M(0), f"pd{r}": z3.BitVecVal(0, n + 2),
                     f"leso{r}": z3.IntVal(-1), f"since{r}": z3.IntVal(-1)})
        ldr = z3.If(t["cl"] == r, z3.IntVal(-1), t["cl"])
        adopt = self.become(base, dict(base), r, ldr, t["ce"], t["ci"], t["cp"], cep)
        return self.ite(t["ce"] >= s[f"ep{r}"], adopt, base)

    def elect(self, s, r):
        """ReplicationModel._do_elect."""
        bitr = self.M(1 << r)
        inisr = self.bit(s["ci"], r)
        isr = z3.If(inisr, s["ci"], bitr)
        elr = z3.If(inisr, s["cel"], s["cel"] & ~bitr)
        t = dict(s)
        t.update(cl=z3.IntVal(r), ce=s["ce"] + 1, ci=isr, cel=elr, cp=s["cp"] + 1)
        return self.add_req(t, z3.IntVal(r), s["ce"] + 1, isr, s["cp"] + 1)

    def elect_unclean(self, s, r):
        """ReplicationModel._do_elect_unclean."""
        t = dict(s)
        t.update(cl=z3.IntVal(r), ce=s["ce"] + 1, ci=self.M(1 << r), cel=self.M(0), cp=s["cp"] + 1, hu=s["hu"] + 1)
        return self.add_req(t, z3.IntVal(r), s["ce"] + 1, self.M(1 << r), s["cp"] + 1)

    def failover(self, s):
        """ReplicationModel._do_ctrl_failover: the old controller becomes a zombie; its requests are
        now of an older controller generation (their slots are marked old: applied only through
        apply_stale, which covers them)."""
        t = dict(s)
        t.update(zh=z3.BoolVal(True), zl=s["cl"], ze=s["ce"], zi=s["ci"], cc=s["cc"] + 1, hf=s["hf"] + 1)
        for r in range(self.n):
            t[f"cep{r}"] = z3.If(s[f"al{r}"], s["cc"] + 1, s[f"cep{r}"])
        for e in range(self.Q):
            t[f"qo{e}"] = s[f"qh{e}"]
        return t

    def transition(self, s, t):
        return z3.Or([z3.And(g, self.same(t, nxt)) for _, _, g, nxt in self.actions(s)])

    # --- initial state and budgets -----------------------------------------------------------------
    def budgets_ok(self):
        """The budgets' domain: any values the model accepts within the encoding's bounds."""
        b = self.bud
        lo = 1 if self.min1 else 2
        return z3.And(b["maxrec"] >= 0, b["maxrec"] <= self.L, b["maxep"] >= 0, b["maxep"] <= self.E,
                      b["maxcr"] >= 0, b["maxlo"] >= 0, b["maxal"] >= 0, b["maxfo"] >= 0,
                      b["maxun"] >= 0 if self.unclean else b["maxun"] == 0,
                      b["minisr"] >= lo, b["minisr"] <= self.n, b["initisr"] >= 1, b["initisr"] <= self.n)

    def pin(self, params: dict):
        """Budgets equal to a model/replication.py parameter dict (for BMC and cross-checks)."""
        b = self.bud
        p = {k: v[0] for k, v in R.PARAMS.items()}
        p.update(params)
        n = self.n
        return z3.And(b["maxrec"] == int(p["records"]), b["maxep"] == int(p["epochs"]), b["maxcr"] == int(p["crashes"]),
                      b["maxlo"] == int(p["lossy"]), b["maxal"] == int(p["alters"]), b["maxfo"] == int(p["ctrl_failovers"]),
                      b["maxun"] == (int(p["unclean"]) if self.unclean else 0),
                      b["minisr"] == min(int(p["min_isr"]), n), b["initisr"] == (int(p["init_isr"]) or n))

    def init(self, s):
        """ReplicationModel.init_states(): replica 0 leads epoch 0 with an initial ISR of `initisr` replicas."""
        n = self.n
        isr = self.M(0)
        for k in range(1, n + 1):
            isr = z3.If(self.bud["initisr"] == k, self.M((1 << k) - 1), isr)
        c = [self.budgets_ok(), s["cl"] == 0, s["ce"] == 0, s["ci"] == isr, s["cel"] == 0, s["cp"] == 0, s["cc"] == 0,
             s["qh0"], z3.Not(s["qo0"]), s["ql0"] == 0, s["qi0"] == isr, s["qp0"] == 0, z3.Not(s["zh"]), s["zl"] == 0, s["ze"] == 0,
             s["zi"] == 0, s["nx"] == 1, s["cn"] == 0, z3.Not(s["akx"])]
        for e in range(1, self.Q):
            c += [z3.Not(s[f"qh{e}"]), z3.Not(s[f"qo{e}"]), s[f"ql{e}"] == 0, s[f"qi{e}"] == 0, s[f"qp{e}"] == 0]
        for k in range(self.L):
            c += [s[f"ce_{k}"] == 0, s[f"ci_{k}"] == 0, z3.Not(s[f"ak{k}"]), s[f"ake{k}"] == 0, s[f"aki{k}"] == 0]
        c += [s[x] == 0 for x in ("hc", "hl", "hu", "ha", "hf")]
        for r in range(n):
            c += [s[f"al{r}"], s[f"len{r}"] == 0, s[f"hw{r}"] == 0, s[f"ep{r}"] == 0, s[f"pep{r}"] == 0,
                  s[f"cep{r}"] == 0, s[f"ldr{r}"] == 0, z3.Not(s[f"tr{r}"]), s[f"pd{r}"] == 0]
            c += [z3.And(s[f"le{r}_{k}"] == 0, s[f"li{r}_{k}"] == 0) for k in range(self.L)]
            if r == 0:
                c += [s["isr0"] == isr, s["leso0"] == 0, s["since0"] == 0]
            else:
                c += [s[f"isr{r}"] == 0, s[f"leso{r}"] == -1, s[f"since{r}"] == -1]
        return z3.And(c)

    # --- the invariants (invariants/replication.py check_dur / check_lcc) -------------------------
    def rec_at(self, log, k, rec):
        """log[k] == rec (k concrete)."""
        return z3.And(k < log[0], log[1][k][0] == rec[0], log[1][k][1] == rec[1])

    def dur(self, s):
        """check_dur: every acked record is in the controller's leader's log at its offset (when there
        is a leader) and on some replica."""
        out = []
        for k in range(self.L):
            rec = (s[f"ake{k}"], s[f"aki{k}"])
            in_leader = z3.And([z3.Implies(s["cl"] == r, self.rec_at(self.log_of(s, r), k, rec)) for r in range(self.n)])
            somewhere = z3.Or([self.rec_at(self.log_of(s, r), k, rec) for r in range(self.n)])
            out.append(z3.Implies(s[f"ak{k}"], z3.And(in_leader, somewhere)))
        return z3.And(out)

    def lcc(self, s):
        """check_lcc: every running member of the controller's ISR or ELR holds the committed prefix."""
        out = []
        for r in range(self.n):
            log = self.log_of(s, r)
            holds = z3.And([z3.Implies(k < s["cn"], self.rec_at(log, k, (s[f"ce_{k}"], s[f"ci_{k}"])))
                            for k in range(self.L)])
            out.append(z3.Implies(z3.And(self.bit(s["ci"] | s["cel"], r), s[f"al{r}"]), holds))
        return z3.And(out)

    def assumption(self, prop):
        """I-DUR only holds while lossy restarts stay below MinISR (invariants/replication.py check_dur):
        its proof covers the budgets with lossy < MinISR; I-LCC assumes nothing."""
        return self.bud["maxlo"] < self.min_isr() if prop == "i-dur" else z3.BoolVal(True)

    def goal(self, prop, s):
        return z3.And(self.dur(s), z3.Not(s["akx"])) if prop == "i-dur" else self.lcc(s)

    def bad(self, prop, s):
        """The explicit invariant's violation (BMC target)."""
        return z3.Not(self.dur(s) if prop == "i-dur" else self.lcc(s))


# --- mapping to/from the Python model's states ------------------------------------------------------
def values_of(state, n: int, L: int = LOG, E: int = EPOCHS) -> dict:
    """A model/replication.py state (`R.State`) as the encoding's field values (abstractions as documented)."""
    c = state.controller
    v = {}
    for r, rep in enumerate(state.replicas):
        log = rep.log
        if len(log) > L:
            raise ValueError(f"log of {len(log)} records exceeds the encoding's bound {L}")
        v[f"al{r}"], v[f"len{r}"] = rep.alive, len(log)
        for k in range(L):
            rec = log[k] if k < len(log) else R.Record(0, 0)
            v[f"le{r}_{k}"], v[f"li{r}_{k}"] = rec.epoch, rec.id
        alter = rep.alter
        pd = alter.isr | (1 << n if alter.applied else 0) | (1 << (n + 1) if alter.stale else 0) if alter.isr else 0
        v.update({f"hw{r}": rep.hw, f"ep{r}": rep.leader_epoch, f"pep{r}": rep.partition_epoch,
                  f"cep{r}": rep.controller_epoch, f"ldr{r}": rep.leader, f"tr{r}": rep.must_truncate,
                  f"isr{r}": rep.isr, f"pd{r}": pd, f"leso{r}": rep.leso, f"since{r}": rep.leading_since})
    v.update(cl=c.leader, ce=c.leader_epoch, ci=c.isr, cel=c.elr, cp=c.partition_epoch, cc=c.controller_epoch)
    slots = {}
    for q in state.requests:
        # one request per leader epoch <= the controller's comes from the controller (the latest
        # generation's); the others (a zombie controller's) are covered by `apply_stale`
        if q.leader_epoch <= c.leader_epoch and (q.leader_epoch not in slots
                                                 or q.controller_epoch > slots[q.leader_epoch].controller_epoch):
            if not 0 <= q.leader_epoch < E + 2:
                raise ValueError(f"request epoch {q.leader_epoch} not representable")
            slots[q.leader_epoch] = q
    for e in range(E + 2):
        q = slots.get(e, R.LeaderAndIsr(0, e, 0, 0, c.controller_epoch))
        v.update({f"qh{e}": e in slots, f"qo{e}": q.controller_epoch < c.controller_epoch, f"ql{e}": q.leader,
                  f"qi{e}": q.isr, f"qp{e}": q.partition_epoch})
    z = state.zombie
    if z is None:
        v.update(zh=False, zl=0, ze=0, zi=0)
    else:
        v.update(zh=True, zl=z.leader, ze=z.leader_epoch, zi=z.isr)
    committed = state.committed
    v["nx"], v["cn"] = state.next_record, len(committed)
    first, conflict = {}, False
    for a in state.acked:
        if a.offset in first and first[a.offset] != a.record:
            conflict = True
        first.setdefault(a.offset, a.record)
    none = R.Record(0, 0)
    for k in range(L):
        rec = committed[k] if k < len(committed) else none
        v[f"ce_{k}"], v[f"ci_{k}"] = rec.epoch, rec.id
        v[f"ak{k}"] = k in first
        v[f"ake{k}"], v[f"aki{k}"] = first.get(k, none).epoch, first.get(k, none).id
    v["akx"] = conflict
    sp = state.spent
    v.update(hc=sp.crashes, hl=sp.lossy, hu=sp.unclean, ha=sp.alters, hf=sp.failovers)
    return v


def model_values(enc: Enc, model, s: dict) -> dict:
    return default_decode(model, {name: s[name] for name, _ in enc.fields()})


def describe_values(v: dict, n: int, L: int = LOG, E: int = EPOCHS) -> dict:
    """Readable form of a field-value dict (names as ReplicationModel.describe)."""
    def ids(mask):
        return [i for i in range(n) if mask >> i & 1]

    def log(r):
        return [f"{v[f'li{r}_{k}']}@e{v[f'le{r}_{k}']}" for k in range(min(max(v[f"len{r}"], 0), L))]
    return {
        "controller": {"leader": v["cl"], "leader_epoch": v["ce"], "isr": ids(v["ci"]), "elr": ids(v["cel"]),
                       "partition_epoch": v["cp"], "controller_epoch": v["cc"]},
        "replicas": [{"id": r, "alive": v[f"al{r}"], "log": log(r), "hw": v[f"hw{r}"], "leader_epoch": v[f"ep{r}"],
                      "partition_epoch": v[f"pep{r}"], "controller_epoch": v[f"cep{r}"], "leader": v[f"ldr{r}"],
                      "must_truncate": v[f"tr{r}"], "isr": ids(v[f"isr{r}"]),
                      "pending_isr": ids(v[f"pd{r}"] & ((1 << n) - 1)) if v[f"pd{r}"] else None,
                      "leso": v[f"leso{r}"], "since": v[f"since{r}"]} for r in range(n)],
        "requests": [{"leader": v[f"ql{e}"], "leader_epoch": e, "isr": ids(v[f"qi{e}"]), "partition_epoch": v[f"qp{e}"]}
                     for e in range(E + 2) if v[f"qh{e}"]],
        "zombie_controller": {"leader": v["zl"], "leader_epoch": v["ze"]} if v["zh"] else None,
        "committed": [f"{v[f'ci_{k}']}@e{v[f'ce_{k}']}" for k in range(min(max(v["cn"], 0), L))],
        "acked": [f"{v[f'aki{k}']}@{k}" for k in range(L) if v[f"ak{k}"]],
        "next_record": v["nx"],
    }


def _tactic_solver():
    """Equation solving first: successors are defined by equalities that `solve-eqs` eliminates."""
    return z3.Then("simplify", "solve-eqs", "elim-uncnstr", "simplify", "smt").solver()


# --- BMC traces replayed in the explicit model ---------------------------------------------------------
def python_action(state, action):
    """The model/replication.py action for an encoding action over the Python `state`."""
    if action[0] == "apply":
        _, r, e = action
        for i, q in enumerate(state.requests):
            if q.leader_epoch == e and q.controller_epoch == state.controller.controller_epoch:
                return ("apply", r, i)
        raise ValueError(f"no request of leader epoch {e} from the current controller")
    if action[0] == "apply_stale":
        raise ValueError("a stale request was applied: not replayable from the encoding's state alone")
    return tuple(action)


def replay(model, z3_trace: list, L: int = LOG, E: int = EPOCHS):
    """Execute a BMC trace (encoding actions) in the explicit model: [(python action, state)] from
    the initial state; raises ValueError if a step is not enabled or lands elsewhere than Z3 said."""
    s = model.init_states()[0]
    out = [(None, s)]
    for step in z3_trace[1:]:
        a = python_action(s, tuple(step["action"]))
        if a not in model.actions(s):
            raise ValueError(f"{a} is not enabled in the explicit model")
        s = model.step(s, a)
        if step.get("values") is not None and values_of(s, model.n, L, E) != step["values"]:
            raise ValueError(f"after {a} the explicit model's state differs from the Z3 trace")
        out.append((a, s))
    return out


def bmc_params(behaviours: frozenset, n: int) -> dict:
    """The model parameters BMC pins the budgets to: the bug zoo's hunting bounds of the behaviour."""
    p = {k: v[0] for k, v in R.PARAMS.items()}
    for b in sorted(behaviours):
        if b in R.HUNT_PARAMS:
            p.update(R.HUNT_PARAMS[b][0])
    p.update(replicas=n, symmetry=False)
    p["records"] = min(int(p["records"]), LOG)
    p["epochs"] = min(int(p["epochs"]), EPOCHS)
    return p


class _Pinned:
    """An encoding whose budgets are the values of one parameter dict (for bmc()): the budget constants
    are substituted and simplified away, and actions whose guard is then false are dropped."""

    def __init__(self, enc: Enc, params: dict):
        self.enc, self.params = enc, params
        sol = z3.Solver()
        sol.add(enc.pin(params))
        sol.check()
        m = sol.model()
        self.subst = [(c, m.eval(c, model_completion=True)) for c in enc.bud.values()]

    def _fix(self, term):
        return z3.simplify(z3.substitute(term, *self.subst))

    def state(self, name):
        return self.enc.state(name)

    def init(self, s):
        return self._fix(z3.And(self.enc.init(s), self.enc.pin(self.params)))

    def actions(self, s):
        out = []
        for label, action, guard, nxt in self.enc.actions(s):
            g = self._fix(guard)
            if not z3.is_false(g):
                out.append((label, action, g, {k: self._fix(v) for k, v in nxt.items()}))
        return out

    def same(self, t, nxt):
        return self.enc.same(t, nxt)


def find_violation(prop: str, behaviours: frozenset, n: int, k: int, work: int = None):
    """Shortest trace (<= k steps) from the initial state to a state violating `prop`, replayed in
    model/replication.py. Returns (status, counterexample dict | reason)."""
    from kverify.invariants import replication as I
    from kverify.model.proofs.bmc import bmc

    params = bmc_params(behaviours, n)
    L, E = max(1, int(params["records"])), int(params["epochs"])     # the pinned budgets bound logs and epochs
    enc = Enc(n, behaviours, L, E)
    res = bmc(_Pinned(enc, params), k, bad_state=lambda s: enc.bad(prop, s),
              decode=lambda m, s: model_values(enc, m, s), work=work or BMC_WORK, fresh_solver=_tactic_solver)
    if res.status != "falsified":
        return res.status, (f"no violation within {k} steps" if res.status == "clean"
                            else f"depth {res.depth}: {res.reason}")
    model = R.make(params, behaviours)
    steps = [dict(st, values=st["state"]) for st in res.trace]
    path = replay(model, steps, L, E)
    check = {"i-dur": I.check_dur, "i-lcc": I.check_lcc}[prop]
    msg = check(model.view(path[-1][1]))
    if msg is None:
        raise AssertionError(f"BMC trace for {prop} replays but the explicit model's invariant holds")
    trace = [{"action": None if a is None else list(a), "label": "initial state" if a is None else st["label"],
              "state": model.describe(s)} for (a, s), st in zip(path, res.trace)]
    return "falsified", {"kind": "bmc", "depth": res.depth, "replicas": n, "params": params,
                         "violation": msg, "trace": trace}


# --- the strengthening -------------------------------------------------------------------------------
def strengthening(enc: Enc, s: dict, extra: bool = True) -> dict:
    """Named conjuncts that, with the property, form an inductive invariant of the correct model."""
    n, L, b = enc.n, enc.L, enc.bud
    out = {}
    dom = [b["maxrec"] >= 0, b["maxrec"] <= L, s["nx"] >= 1, s["nx"] <= b["maxrec"] + 1, s["cn"] >= 0,
           s["cn"] <= s["nx"] - 1, s["ce"] >= 0, s["ce"] <= b["maxep"] + 1, s["ce"] <= s["cp"], s["cc"] == s["hf"], s["hf"] <= b["maxfo"], s["hc"] >= 0, s["hc"] <= b["maxcr"],
           s["ha"] >= 0, s["ha"] <= b["maxal"], s["hu"] >= 0, s["hu"] <= b["maxun"], s["cc"] >= 0, s["cl"] >= -1, s["cl"] < n]
    for r in range(n):
        dom += [s[f"len{r}"] >= 0, s[f"len{r}"] <= s["nx"] - 1, s[f"hw{r}"] >= 0, s[f"hw{r}"] <= s[f"len{r}"],
                s[f"ldr{r}"] >= -1, s[f"ldr{r}"] < n, s[f"ep{r}"] >= 0, s[f"ep{r}"] <= s["ce"],
                s[f"cep{r}"] >= 0, s[f"cep{r}"] <= s["cc"]]
    out["domains"] = z3.And(dom)
    if not extra:
        return out
    def ent(r, k):
        return (s[f"le{r}_{k}"], s[f"li{r}_{k}"])
    def com(k):
        return (s[f"ce_{k}"], s[f"ci_{k}"])
    def eq(a, c):
        return z3.And(a[0] == c[0], a[1] == c[1])
    rng = []
    for r in range(n):
        for k in range(L):
            rng.append(z3.Implies(k < s[f"len{r}"], z3.And(s[f"li{r}_{k}"] >= 1, s[f"li{r}_{k}"] < s["nx"],
                                                           s[f"le{r}_{k}"] >= 0, s[f"le{r}_{k}"] <= s[f"ep{r}"],
                                                           *([s[f"le{r}_{k - 1}"] <= s[f"le{r}_{k}"],
                                                              s[f"li{r}_{k - 1}"] < s[f"li{r}_{k}"]] if k else []))))
    for k in range(L):
        rng.append(z3.Implies(k < s["cn"], z3.And(s[f"ci_{k}"] >= 1, s[f"ci_{k}"] < s["nx"], s[f"ce_{k}"] >= 0,
                                                   s[f"ce_{k}"] <= s["ce"],
                                                   *([s[f"ce_{k - 1}"] <= s[f"ce_{k}"], s[f"ci_{k - 1}"] < s[f"ci_{k}"]] if k else []))))
    out["records-in-range-and-epoch-ordered"] = z3.And(rng)
    out["electable-replicas-hold-committed"] = z3.And(
        [z3.Implies(enc.bit(s["ci"] | s["cel"], r), z3.And([z3.Implies(k < s["cn"], z3.And(k < s[f"len{r}"], eq(ent(r, k), com(k))))
                                                           for k in range(L)])) for r in range(n)])
    shape = []
    for e in range(enc.Q):
        shape.append(z3.Implies(s[f"qh{e}"], z3.And(e <= s["ce"], s[f"ql{e}"] >= -1, s[f"ql{e}"] < n, s[f"qp{e}"] <= s["cp"],
                                                     s[f"qp{e}"] >= 0, z3.Implies(s[f"ql{e}"] >= 0, enc.has(s[f"qi{e}"], s[f"ql{e}"])))))
    for r in range(n):
        shape.append(z3.If(s[f"ldr{r}"] == r,
                           z3.And(enc.bit(s[f"isr{r}"], r), z3.Not(s[f"tr{r}"]), s[f"leso{r}"] >= 0,
                                  z3.Or(s[f"pd{r}"] == 0, z3.And(enc.bit(enc.pmask(s[f"pd{r}"]), r),
                                                                 enc.popcount(enc.pmask(s[f"pd{r}"]) ^ s[f"isr{r}"]) == 1)), s[f"leso{r}"] <= s[f"len{r}"],
                                  s[f"since{r}"] >= 0, s[f"since{r}"] <= s[f"ep{r}"]),
                           z3.And(s[f"isr{r}"] == 0, s[f"pd{r}"] == 0, s[f"leso{r}"] == -1, s[f"since{r}"] == -1)))
        shape.append(z3.And(s[f"pep{r}"] >= 0, s[f"pep{r}"] <= s["cp"]))
        # a follower stops truncating only against a leader in its own epoch (fetch_ok)
        shape.append(z3.Implies(z3.And(s[f"ldr{r}"] != r, s[f"ldr{r}"] >= 0, z3.Not(s[f"tr{r}"])),
                                enc.field_of(s, s[f"ldr{r}"], "ep") >= s[f"ep{r}"]))
    shape.append(z3.Implies(s["zh"], z3.And(s["ze"] >= 0, s["ze"] <= s["ce"])))
    # every leader epoch up to the controller's has its request (kept across controller failovers)
    shape += [s[f"qh{e}"] == (e <= s["ce"]) for e in range(enc.Q)]
    shape += [s["ql0"] == 0, s["qp0"] == 0]      # replica 0 leads epoch 0 (the initial state)
    out["requests-and-roles-well-formed"] = z3.And(shape)
    out["hw-bounds"] = z3.And([s[f"hw{r}"] <= s["cn"] for r in range(n)])
    out["controller-epoch-known"] = z3.And([z3.Implies(s[f"al{r}"], s[f"cep{r}"] == s["cc"]) for r in range(n)])
    out["controller-leader-in-isr"] = z3.And((s["ci"] & s["cel"]) == 0,
                                             z3.Or(s["cel"] == 0, enc.popcount(s["ci"]) < enc.min_isr()), z3.And(
        [z3.Implies(s["cl"] == r, z3.And(enc.bit(s["ci"], r), s[f"al{r}"])) for r in range(n)]
        + [z3.Implies(enc.bit(s["ci"], r), s[f"al{r}"]) for r in range(n)]))
    out["hw-prefix"] = z3.And([z3.Implies(k < s[f"hw{r}"], eq(ent(r, k), com(k))) for r in range(n) for k in range(L)])
    out["counted-followers-are-prefixes"] = z3.And(
        [z3.Implies(z3.And(s[f"ldr{x}"] == x, enc.counts(s, x, f)),
                    z3.And(s[f"len{f}"] <= s[f"len{x}"],
                           z3.And([z3.Implies(k < s[f"len{f}"], eq(ent(f, k), ent(x, k))) for k in range(L)])))
         for x in range(n) for f in range(n) if f != x])
    # every position holding a record: (present, offset, (epoch, id)); the committed prefix counts as a log
    pos = [(k < s[f"len{r}"], k, ent(r, k)) for r in range(n) for k in range(L)] + [(k < s["cn"], k, com(k)) for k in range(L)]
    uniq = []
    for i, (pa, ka, ra) in enumerate(pos):
        for pb, kb, rb in pos[i + 1:]:
            same_id = z3.And(pa, pb, ra[1] == rb[1])
            uniq.append(z3.Implies(same_id, ra[0] == rb[0]) if ka == kb else z3.Not(same_id))
    out["record-ids-unique"] = z3.And(uniq)
    out["committed-epoch-matching"] = z3.And(
        [z3.Implies(z3.And(k < s[f"len{r}"], k < s["cn"], s[f"le{r}_{k}"] == s[f"ce_{k}"]),
                    z3.And([eq(ent(r, j), com(j)) for j in range(k + 1)]))
         for r in range(n) for k in range(L)])
    out["epoch-matching"] = z3.And(
        [z3.Implies(z3.And(k < s[f"len{a}"], k < s[f"len{c}"], s[f"le{a}_{k}"] == s[f"le{c}_{k}"]),
                    z3.And([eq(ent(a, j), ent(c, j)) for j in range(k + 1)]))
         for a in range(n) for c in range(n) if a < c for k in range(L)])
    out["leader-holds-every-record-of-its-epoch"] = z3.And(
        [z3.Implies(z3.And(s[f"ldr{x}"] == x, k < s[f"len{r}"], s[f"le{r}_{k}"] == s[f"ep{x}"]),
                    z3.And(k < s[f"len{x}"], eq(ent(r, k), ent(x, k))))
         for x in range(n) for r in range(n) if r != x for k in range(L)]
        + [z3.Implies(z3.And(s[f"ldr{x}"] == x, k < s["cn"], s[f"ce_{k}"] == s[f"ep{x}"]),
                      z3.And(k < s[f"len{x}"], eq(com(k), ent(x, k)))) for x in range(n) for k in range(L)])
    def written(ep):
        return z3.And([z3.Implies(z3.And(ep == e, s[f"qh{e}"]), z3.And(s[f"ql{e}"] >= 0,
                                                                     enc.field_of(s, s[f"ql{e}"], "ep") >= e))
                       for e in range(enc.Q)])
    out["records-only-from-their-epochs-leader"] = z3.And(
        [z3.Implies(k < s[f"len{r}"], written(s[f"le{r}_{k}"])) for r in range(n) for k in range(L)]
        + [z3.Implies(k < s["cn"], written(s[f"ce_{k}"])) for k in range(L)])
    def slot(ep, name):
        dflt = {"qh": z3.BoolVal(False), "qi": enc.M(0)}.get(name, z3.IntVal(-2))
        return enc.pick(ep, [s[f"{name}{e}"] for e in range(enc.Q)], dflt)
    out["replicas-follow-their-epochs-request"] = z3.And(
        [z3.Implies(slot(s[f"ep{r}"], "qh"), s[f"ldr{r}"] == slot(s[f"ep{r}"], "ql")) for r in range(n)]
        + [z3.Implies(slot(s["ce"], "qh"), s["cl"] == slot(s["ce"], "ql"))])
    out["one-leader-per-epoch"] = z3.And([z3.Implies(z3.And(s[f"ldr{x}"] == x, s[f"ldr{y}"] == y), s[f"ep{x}"] != s[f"ep{y}"])
                                          for x in range(n) for y in range(x + 1, n)])
    cur = []
    for x in range(n):
        current = z3.And(s["cl"] == x, s[f"ldr{x}"] == x, s[f"ep{x}"] == s["ce"], s[f"al{x}"],
                         enc.popcount(s[f"isr{x}"]) >= enc.min_isr())
        q = enc.quorum(s, x)
        cur.append(z3.Implies(current, z3.And([z3.Implies(z3.And(enc.bit(s["ci"] | s["cel"], m), s[f"al{m}"]),
                                                           enc.bit(q, m)) for m in range(n)])))
    out["current-leader-waits-for-electable"] = z3.And(cur)
    def doomed_by(y, m):
        """member m of leader y's quorum will never again be counted by y: it moved to a later epoch, or
        (y being stale) it is down and not counted (its restart moves it to the controller's epoch)"""
        return z3.Or(s[f"ep{m}"] > s[f"ep{y}"],
                     z3.And(s[f"ep{y}"] < s["ce"], z3.Not(s[f"al{m}"]), z3.Not(enc.counts(s, y, m))))
    def undoomed(y):
        """no member of y's quorum as the controller last accepted it (the proposal once applied) is doomed"""
        pd = s[f"pd{y}"]
        known = z3.If(enc.applied(pd), enc.pmask(pd), s[f"isr{y}"])
        return z3.And([z3.Not(z3.And(enc.bit(known, m), doomed_by(y, m))) for m in range(n) if m != y])
    blocked_free = []
    for y in range(n):
        q = enc.quorum(s, y)
        big = z3.Or(enc.popcount(s[f"isr{y}"]) >= enc.min_isr(),
                    z3.And(enc.applied(s[f"pd{y}"]), enc.popcount(enc.pmask(s[f"pd{y}"])) >= enc.min_isr()))
        free = z3.And(s[f"al{y}"], s[f"ldr{y}"] == y, big, undoomed(y))
        blocked_free.append(z3.Implies(free, z3.And(((s["ci"] | s["cel"]) & ~q) == 0, enc.bit(s["ci"], y))))
    # the same for a leader that has not yet applied its epoch's request (it will lead with that ISR)
    for e in range(enc.Q):
        for y in range(n):
            q = s[f"qi{e}"]
            free = z3.And(s[f"qh{e}"], s[f"ql{e}"] == y, s[f"al{y}"], s[f"ep{y}"] < e, enc.popcount(q) >= enc.min_isr(),
                          *[z3.Not(z3.And(enc.bit(q, m), s[f"ep{m}"] > e)) for m in range(n) if m != y])
            blocked_free.append(z3.Implies(free, z3.And(((s["ci"] | s["cel"]) & ~q) == 0, enc.bit(s["ci"], y))))
    out["unblocked-leader-covers-electable"] = z3.And(blocked_free)
    sync = [z3.Implies(z3.And(s[f"ldr{x}"] == x, enc.applied(s[f"pd{x}"])), s[f"pep{x}"] + 1 <= s["cp"]) for x in range(n)]
    sync += [z3.Implies(z3.And(s[f"ldr{x}"] == x, enc.applied(s[f"pd{x}"]), s[f"qh{e}"], s[f"ep{x}"] < e), s[f"qp{e}"] >= s[f"pep{x}"] + 2)
             for x in range(n) for e in range(enc.Q)]
    cur_q, cur_p = slot(s["ce"], "qi"), slot(s["ce"], "qp")
    unapplied = z3.Or(s["cl"] == -1, *[z3.And(s["cl"] == x, s[f"ep{x}"] < s["ce"]) for x in range(n)])
    sync.append(z3.Implies(unapplied, z3.And(s["cp"] == cur_p, s["ci"] == cur_q)))
    for x in range(n):
        pd = s[f"pd{x}"]
        sync.append(z3.Implies(z3.And(s["cl"] == x, s[f"ep{x}"] == s["ce"]),
                               z3.If(enc.applied(pd), z3.And(s["cp"] == s[f"pep{x}"] + 1, s["ci"] == enc.pmask(pd)),
                                     z3.And(s["cp"] == s[f"pep{x}"], s["ci"] == s[f"isr{x}"]))))
    for y in range(n):
        pd = s[f"pd{y}"]
        nq, np_ = slot(s[f"ep{y}"] + 1, "qi"), slot(s[f"ep{y}"] + 1, "qp")
        sync.append(z3.Implies(z3.And(s[f"ldr{y}"] == y, s[f"ep{y}"] < s["ce"]),
                               z3.If(enc.applied(pd), z3.And(np_ == s[f"pep{y}"] + 2, (nq & ~enc.pmask(pd)) == 0),
                                     z3.And(np_ == s[f"pep{y}"] + 1, (nq & ~s[f"isr{y}"]) == 0))))
    for e in range(enc.Q - 1):
        sync.append(z3.Implies(s[f"qh{e + 1}"], s[f"qp{e}"] < s[f"qp{e + 1}"]))
        idle = z3.Or(s[f"ql{e}"] == -1, *[z3.And(s[f"ql{e}"] == y, s[f"ep{y}"] < e) for y in range(n)])
        sync.append(z3.Implies(z3.And(s[f"qh{e + 1}"], idle),
                               z3.And(s[f"qp{e + 1}"] == s[f"qp{e}"] + 1,
                                      z3.Or((s[f"qi{e + 1}"] & ~s[f"qi{e}"]) == 0,
                                            z3.And(s[f"qi{e}"] == 0, z3.Or([z3.And(s[f"ql{e + 1}"] == r, s[f"qi{e + 1}"] == enc.M(1 << r))
                                                                           for r in range(n)]))))))
    sync += [z3.Implies(s[f"ldr{y}"] == y, s[f"pep{y}"] >= slot(s[f"ep{y}"], "qp")) for y in range(n)]
    sync += [z3.Implies(z3.And(s[f"ldr{y}"] == y, s[f"pep{y}"] == slot(s[f"ep{y}"], "qp")), s[f"isr{y}"] == slot(s[f"ep{y}"], "qi"))
             for y in range(n)]
    for e in range(enc.Q - 1):
        for y in range(n):
            sync.append(z3.Implies(z3.And(s[f"qh{e + 1}"], s[f"ql{e}"] == y, s[f"ql{e + 1}"] == -1),
                                   z3.And(z3.Or(z3.Not(s[f"al{y}"]), s[f"ep{y}"] > e), z3.Not(enc.bit(s[f"qi{e + 1}"], y)))))
    out["controller-isr-follows-its-leader"] = z3.And(sync)
    cover, adds = [], []
    for x in range(n):
        current = z3.And(s["cl"] == x, s[f"ep{x}"] == s["ce"], s[f"ldr{x}"] == x)
        cover.append(z3.Implies(current, z3.Or(s["cn"] <= s[f"leso{x}"], s["cn"] <= s[f"hw{x}"])))
        pd = s[f"pd{x}"]
        proposing = z3.And(current, pd != 0, z3.Not(enc.applied(pd)), z3.Not(enc.stale(pd)))
        for f in range(n):
            if f != x:
                adds.append(z3.Implies(z3.And(proposing, enc.bit(enc.pmask(pd) & ~s[f"isr{x}"], f)),
                                       z3.And(enc.counts(s, x, f), s[f"len{f}"] >= s[f"hw{x}"], s[f"len{f}"] >= s[f"leso{x}"])))
    out["current-leader-covers-committed"] = z3.And(cover)
    def holds_committed(x):
        return z3.And([z3.Implies(k < s["cn"], z3.And(k < s[f"len{x}"], eq(com(k), ent(x, k)))) for k in range(L)])
    unb = []
    pending_unblocked = {}
    for y in range(n):
        unblocked = z3.And(s[f"al{y}"], s[f"ldr{y}"] == y, undoomed(y))
        unb.append(z3.Implies(unblocked, holds_committed(y)))
        unb.append(z3.Implies(s[f"ldr{y}"] == y, slot(s[f"since{y}"], "ql") == y))
        cases = []
        for e in range(enc.Q):
            q = s[f"qi{e}"]
            cases.append(z3.And(s[f"qh{e}"], s[f"ql{e}"] == y, s[f"al{y}"], s[f"ep{y}"] < e,
                                *[z3.Not(z3.And(enc.bit(q, m), s[f"ep{m}"] > e)) for m in range(n) if m != y]))
        pending_unblocked[y] = z3.Or(cases)
        unb.append(z3.Implies(pending_unblocked[y], holds_committed(y)))
    # a leader that such a future leader follows (and may truncate to) holds the committed prefix too
    unb += [z3.Implies(z3.And(s[f"al{y}"], s[f"ldr{y}"] == y, s[f"ldr{f}"] == y, s[f"ep{f}"] == s[f"ep{y}"],
                              pending_unblocked[f]), holds_committed(y))
            for y in range(n) for f in range(n) if f != y]
    out["unblocked-leader-holds-committed"] = z3.And(unb)
    serve = []
    for e in range(enc.Q):
        for x in range(n):
            leads_e = z3.And(s[f"qh{e}"], s[f"ql{e}"] == x, s[f"al{x}"],
                             z3.Or(s[f"ep{x}"] < e, z3.And(s[f"ep{x}"] == e, s[f"ldr{x}"] == x)))
            lagging = z3.Or([z3.And(s[f"al{f}"], z3.Or(enc.bit(s["ci"] | s["cel"], f), pending_unblocked[f]), s[f"ep{f}"] <= e)
                             for f in range(n) if f != x])
            serve.append(z3.Implies(z3.And(leads_e, lagging), holds_committed(x)))
    out["leader-of-a-lagging-electable-holds-committed"] = z3.And(serve)
    sup = []
    for y in range(n):
        pd = s[f"pd{y}"]
        known = z3.If(enc.applied(pd), enc.pmask(pd), s[f"isr{y}"])
        moved = [z3.And(enc.bit(known, m), z3.Or(s[f"ep{m}"] > s[f"ep{y}"], z3.Not(s[f"al{m}"]),
                                                 *[z3.And(s[f"ep{y}"] < e, e <= s["ce"], s[f"ql{e}"] == m) for e in range(enc.Q)]))
                 for m in range(n) if m != y]
        sup.append(z3.Implies(z3.And(s[f"al{y}"], s[f"ldr{y}"] == y, s[f"ep{y}"] < s["ce"]), z3.Or(moved)))
        for e in range(enc.Q):       # a leader that has not applied its request yet would lead with its ISR
            q = s[f"qi{e}"]
            moved = [z3.And(enc.bit(q, m), z3.Or(s[f"ep{m}"] > e, z3.Not(s[f"al{m}"]),
                                                 *[z3.And(e < e2, e2 <= s["ce"], s[f"ql{e2}"] == m) for e2 in range(enc.Q)]))
                     for m in range(n) if m != y]
            sup.append(z3.Implies(z3.And(s[f"al{y}"], s[f"qh{e}"], s[f"ql{e}"] == y, s[f"ep{y}"] < e, e < s["ce"]),
                                  z3.Or(moved)))
    out["stale-leader-was-superseded"] = z3.And(sup)
    out["isr-members-were-in-later-requests"] = z3.And(
        [z3.Implies(z3.And(enc.bit(s["ci"], m), s[f"ep{m}"] < e, e <= s["ce"]),
                    z3.Or(enc.bit(s[f"qi{e}"], m), *[z3.And(e <= e2, e2 <= s["ce"], s[f"ql{e2}"] == m) for e2 in range(enc.Q)]))
         for m in range(n) for e in range(enc.Q)])
    lagging_in_isr = []
    for y in range(n):
        pd = s[f"pd{y}"]
        for mask in (s[f"isr{y}"], enc.pmask(pd)):
            for m in range(n):
                if m != y:
                    lagging_in_isr.append(z3.Implies(z3.And(s[f"ldr{y}"] == y, enc.bit(mask, m), s[f"ep{m}"] < s[f"ep{y}"]),
                                                     enc.bit(slot(s[f"ep{y}"], "qi"), m)))
    out["leader-isr-lagging-members-were-in-its-request"] = z3.And(lagging_in_isr)
    elr = []
    for m in range(n):
        joined = []
        for e1 in range(enc.Q):
            # m left the ISR at epoch e1: shrunk out by e1's leader (which applied e1), or it crashed, which
            # created request e1 (without m, below MinISR) from the ISR its predecessor's leader last had
            shrunk = z3.Or([z3.And(s[f"ql{e1}"] == z, s[f"ep{z}"] >= e1,
                                   z3.Implies(z3.And(s[f"ldr{z}"] == z, s[f"ep{z}"] == e1), enc.popcount(
                                       z3.If(enc.applied(s[f"pd{z}"]), enc.pmask(s[f"pd{z}"]), s[f"isr{z}"])) < enc.min_isr()))
                            for z in range(n)])
            crashed = z3.BoolVal(False)
            if e1 >= 1:
                p = e1 - 1
                unapplied = z3.Or(s[f"ql{p}"] == -1, *[z3.And(s[f"ql{p}"] == z, s[f"ep{z}"] < p) for z in range(n)])
                before = z3.And(z3.Implies(unapplied, enc.bit(s[f"qi{p}"], m)),
                                *[z3.Implies(z3.And(s[f"ql{p}"] == z, s[f"ldr{z}"] == z, s[f"ep{z}"] == p),
                                             enc.bit(z3.If(enc.applied(s[f"pd{z}"]), enc.pmask(s[f"pd{z}"]), s[f"isr{z}"]), m))
                                  for z in range(n)])
                crashed = z3.And(z3.Not(enc.bit(s[f"qi{e1}"], m)), enc.popcount(s[f"qi{e1}"]) < enc.min_isr(),
                                 z3.Or(z3.Not(s[f"al{m}"]), s[f"ep{m}"] >= e1), before)
            in_force = z3.And(s[f"qh{e1}"], z3.Or(shrunk, crashed))
            small_since = z3.And([z3.Implies(z3.And(e1 < e2, e2 <= s["ce"]), enc.popcount(s[f"qi{e2}"]) < enc.min_isr())
                                  for e2 in range(enc.Q)]
                                 + [z3.Implies(z3.And(s[f"ldr{z}"] == z, e1 <= s[f"ep{z}"]), z3.Or(
                                     enc.popcount(z3.If(enc.applied(s[f"pd{z}"]), enc.pmask(s[f"pd{z}"]), s[f"isr{z}"])) < enc.min_isr(),
                                     z3.And(s[f"pep{z}"] == slot(s[f"ep{z}"], "qp"), z3.Not(enc.applied(s[f"pd{z}"])))))
                                    for z in range(n)])
            joined.append(z3.And(in_force, small_since))
        elr.append(z3.Implies(enc.bit(s["cel"], m), z3.Or(joined)))
    out["elr-members-joined-while-the-isr-stayed-small"] = z3.And(elr)
    out["accepted-shrink-left-electable"] = z3.And(
        [z3.Implies(z3.And(s[f"ldr{y}"] == y, enc.applied(s[f"pd{y}"]), enc.bit(s[f"isr{y}"] & ~enc.pmask(s[f"pd{y}"]), m),
                           enc.popcount(enc.pmask(s[f"pd{y}"])) >= enc.min_isr(), undoomed(y)),
                    z3.Not(enc.bit(s["ci"] | s["cel"], m)))
         for y in range(n) for m in range(n) if m != y])
    acked = []
    for k in range(L):
        acked.append(z3.Implies(s[f"ak{k}"], z3.And(k < s["cn"], s[f"ake{k}"] == s[f"ce_{k}"], s[f"aki{k}"] == s[f"ci_{k}"])))
    out["acked-are-committed"] = z3.And(acked + [z3.Not(s["akx"])])
    ever = z3.Or(s["cn"] > 0, *[z3.And(s[f"qh{e}"], enc.popcount(s[f"qi{e}"]) >= enc.min_isr()) for e in range(enc.Q)],
                 *[z3.And(s[f"ldr{y}"] == y, z3.Or(enc.popcount(s[f"isr{y}"]) >= enc.min_isr(),
                                                    z3.And(enc.applied(s[f"pd{y}"]), enc.popcount(enc.pmask(s[f"pd{y}"])) >= enc.min_isr())))
                   for y in range(n)])
    out["electable-count"] = z3.And(s["hl"] >= 0, s["hl"] <= b["maxlo"],
                                    z3.Implies(ever, enc.popcount(s["ci"] | s["cel"]) + s["hl"] >= enc.min_isr()))
    out["leader-of-an-electable-follower-holds-committed"] = z3.And(
        [z3.Implies(z3.And(s[f"al{x}"], s[f"ldr{x}"] == x, s[f"ldr{f}"] == x, s[f"ep{f}"] == s[f"ep{x}"], s[f"al{f}"],
                           enc.bit(s["ci"] | s["cel"], f)), holds_committed(x))
         for x in range(n) for f in range(n) if f != x])
    def led_by(x, ep):
        return z3.And(s[f"ldr{x}"] == x, s[f"since{x}"] <= ep, ep <= s[f"ep{x}"], slot(ep, "ql") == x)
    out["leader-holds-records-of-its-leadership"] = z3.And(
        [z3.Implies(z3.And(k < s[f"len{r}"], led_by(x, s[f"le{r}_{k}"])), z3.And(k < s[f"len{x}"], eq(ent(r, k), ent(x, k))))
         for x in range(n) for r in range(n) if r != x for k in range(L)]
        + [z3.Implies(z3.And(k < s["cn"], led_by(x, s[f"ce_{k}"])), z3.And(k < s[f"len{x}"], eq(com(k), ent(x, k))))
           for x in range(n) for k in range(L)])
    out["leader-epoch-start-offset"] = z3.And(
        [z3.Implies(z3.And(s[f"ldr{x}"] == x, k < s[f"len{x}"]),
                    z3.If(k < s[f"leso{x}"], s[f"le{x}_{k}"] < s[f"ep{x}"], s[f"le{x}_{k}"] == s[f"ep{x}"]))
         for x in range(n) for k in range(L)])
    out["proposed-additions-caught-up"] = z3.And(adds)
    return out


STRENGTHENING_NAMES = ("domains", "records-in-range-and-epoch-ordered", "electable-replicas-hold-committed",
                       "requests-and-roles-well-formed", "hw-bounds", "controller-epoch-known",
                       "controller-leader-in-isr", "hw-prefix",
                       "counted-followers-are-prefixes", "record-ids-unique",
                       "committed-epoch-matching", "epoch-matching",
                       "leader-holds-every-record-of-its-epoch",
                       "records-only-from-their-epochs-leader",
                       "replicas-follow-their-epochs-request", "one-leader-per-epoch",
                       "current-leader-waits-for-electable",
                       "unblocked-leader-covers-electable",
                       "controller-isr-follows-its-leader", "current-leader-covers-committed",
                       "unblocked-leader-holds-committed",
                       "leader-of-a-lagging-electable-holds-committed",
                       "stale-leader-was-superseded", "isr-members-were-in-later-requests",
                       "leader-isr-lagging-members-were-in-its-request",
                       "elr-members-joined-while-the-isr-stayed-small",
                       "accepted-shrink-left-electable", "acked-are-committed",
                       "electable-count", "leader-of-an-electable-follower-holds-committed",
                       "leader-holds-records-of-its-leadership", "leader-epoch-start-offset",
                       "proposed-additions-caught-up")


# Per query, Z3 resource units (deterministic; kverify.model.proofs.limit), 10x the largest query measured by
# bench/prove_work.py (14:45-14:55 UTC): induction 5,304,989 (3 replicas); BMC 68,459,094 (unclean-election, 3 replicas).
WORK = 60_000_000
BMC_WORK = 700_000_000


def _solver(work: int = None):
    from kverify.model.proofs import limit

    return limit(_tactic_solver(), work or WORK)


def check_inductive(prop: str, n: int, behaviours: frozenset = frozenset(), work: int = None,
                    names: tuple = None, assume: bool = True):
    """Prove `prop` plus the strengthening inductive (1-induction) for n replicas. ("proved", None) |
    ("falsified", cti dict) | ("unknown", reason). `assume=False` drops the I-DUR assumption
    lossy < MinISR (tests show it is needed)."""
    enc = Enc(n, behaviours)
    s, t = enc.state("s"), enc.state("t")
    S, St = strengthening(enc, s), strengthening(enc, t)
    if names is not None:
        S = {k: v for k, v in S.items() if k in names}
        St = {k: v for k, v in St.items() if k in names}
    goal_s = dict(S, property=enc.goal(prop, s))
    goal_t = dict(St, property=enc.goal(prop, t))
    assume = enc.assumption(prop) if assume else z3.BoolVal(True)
    sol = _solver(work)
    sol.add(enc.init(s), assume, z3.Not(z3.And(list(goal_s.values()))))
    r = sol.check()
    if r == z3.unknown:
        return "unknown", f"initiation: {sol.reason_unknown()}"
    if r == z3.sat:
        m = sol.model()
        bad = [k for k, g in goal_s.items() if z3.is_false(m.eval(g, model_completion=True))]
        return "falsified", {"kind": "initiation", "broken": bad, "replicas": n,
                             "state": describe_values(model_values(enc, m, s), n)}
    hyp = list(goal_s.values()) + [enc.budgets_ok(), assume]
    for label, action, guard, nxt in enc.actions(s):
        sol = _solver(work)
        sol.add(*hyp)
        sol.add(guard, enc.same(t, nxt), z3.Not(z3.And(list(goal_t.values()))))
        r = sol.check()
        if r == z3.unknown:
            return "unknown", f"{label}: {sol.reason_unknown()}"
        if r == z3.sat:
            m = sol.model()
            bad = [k for k, g in goal_t.items() if z3.is_false(m.eval(g, model_completion=True))]
            return "falsified", {"kind": "consecution", "action": label, "broken": bad, "replicas": n,
                                 "trace": [{"action": None, "label": "a state satisfying the property and strengthening",
                                            "state": describe_values(model_values(enc, m, s), n)},
                                           {"action": list(action), "label": label,
                                            "state": describe_values(model_values(enc, m, t), n)}]}
    return "proved", None


BMC_DEPTH = 10


def _run(prop: str, breaking: frozenset, replicas: tuple = REPLICAS):
    def run(behaviours: frozenset) -> Result:
        rel = frozenset(behaviours) & R.SUPPORTS
        if rel & breaking:
            n = 3 if B.UNCLEAN_ELECTION in rel else 2       # the smallest cluster where BMC finds it
            status, info = find_violation(prop, rel, n, BMC_DEPTH)
            if status == "falsified":
                return Result("falsified", f"BMC: {info['violation']} after {info['depth']} steps from the initial "
                                           f"state ({n} replicas, {', '.join(sorted(rel))}); replayed in the explicit model",
                              info)
            return Result("unknown", f"BMC ({n} replicas, {', '.join(sorted(rel))}): {info}")
        for n in replicas:
            status, info = check_inductive(prop, n, rel)
            if status == "unknown":
                return Result("unknown", f"{n} replicas: {info}")
            if status == "falsified":
                where = info.get("action") or "the initial state"
                return Result("unknown", f"not inductive ({n} replicas) at {where}: breaks {', '.join(info['broken'])} "
                                         "(a counterexample to induction, not a reachable violation)", info)
        cluster = f"{min(replicas)}..{max(replicas)} replicas" if len(replicas) > 1 else f"{replicas[0]} replicas"
        assumption = ", assuming lossy restarts < MinISR" if prop == "i-dur" else ""
        return Result("proved", f"1-induction: inductive for {cluster}, logs <= {LOG} records, leader epochs <= {EPOCHS + 1}, "
                                f"MinISR >= {1 if B.ISR_SHRINKS_TO_LEADER in rel else 2}, any crash/lossy/alter/failover "
                                f"budgets{assumption}; strengthening ({len(STRENGTHENING_NAMES)} conjuncts): "
                                f"{', '.join(STRENGTHENING_NAMES)}")
    return run


I_DUR_BREAKING = frozenset({B.UNCLEAN_ELECTION, B.TRUNCATE_TO_HW, B.ISR_SHRINKS_TO_LEADER})
I_LCC_BREAKING = frozenset({B.UNCLEAN_ELECTION, B.TRUNCATE_TO_HW})
# The I-LCC strengthening is stated for MinISR >= 2 (KIP-966's ELR); with isr-shrinks-to-leader-min-isr-1
# (MinISR 1, which BMC finds no I-LCC violation for) it is not inductive, so that behaviour is left out:
# the obligation then claims nothing (`unknown`) instead of a proof it does not have.
I_LCC_ENCODED = ENCODED - {B.ISR_SHRINKS_TO_LEADER}


def obligations() -> list[Obligation]:
    return [
        Obligation("replication-i-dur",
                   "replication model: every acks=all-acknowledged record is in the controller's leader's log at its "
                   "offset and on some replica (while lossy restarts < MinISR)", _run("i-dur", I_DUR_BREAKING),
                   I_DUR_BREAKING, model_behaviours=R.SUPPORTS, encodes=ENCODED,
                   small=_run("i-dur", I_DUR_BREAKING, REPLICAS[:1])),
        Obligation("replication-i-lcc",
                   "replication model: every running member of the controller's ISR or ELR holds every record below "
                   "the true HW", _run("i-lcc", I_LCC_BREAKING), I_LCC_BREAKING,
                   model_behaviours=R.SUPPORTS, encodes=I_LCC_ENCODED, small=_run("i-lcc", I_LCC_BREAKING, REPLICAS[:1])),
    ]


def open_obligations() -> list[Obligation]:
    """Obligations of this module whose inductive proof is not closed: none any more."""
    return []
