"""The KIP-848 model's assignment-legality and epoch invariants with Z3: inductive proofs, and
falsification by bounded model checking with the trace replayed in the model.

Why it exists: exhaustive search (model/consumer_group.py) covers its budgets; an inductive proof
covers every budget and every epoch value. The encoding below is model/consumer_group.py's
transition relation written symbolically, one `enc_<action>` per entry of its ActionTable
(`ACTIONS`); `Enc` refuses to exist when an action has no encoding or an encoding no action.

Bound of the encoding: 2 client slots, TOPICS topics of one partition each (partition t is the
bit t), no partition growth (`grow=False`: `add_partition` is encoded with guard FALSE), symbolic
budgets, epochs and incarnations. The coordinator's member of slot s (if any) always has the
client's current member id s + 2 x incarnation (a crashed client restarts only after its member is
gone), so members are per slot, and the assignor's member-id order is the incarnations' order.
Slots without a member, "none" answers/commits and unsent owned lists hold zeros (`values_of`).
tests/test_proofs_consumer_group.py checks the encoding against the model: every transition the
Python model takes at small bounds is the encoding's, and every action it refuses is refused.

Statuses (as model/proofs/group_inductive.py): `proved` = the property, with the strengthening
lemmas below, is inductive (no state satisfying them has a successor violating them); `falsified`
= BMC found a trace from the initial state and model/consumer_group.py replayed it to the same
violation; otherwise `unknown` with the counterexample to induction.

Figures (wall clock on the shared 2-core machine under load ~11): the six properties are proved on
the correct model in 0.4-2 s each; under their breaking behaviours BMC (budgets: 1 perturbation, 2
lost answers; 2 perturbations for client-epochs-valid) falsifies empty-group-epochs-agree
(kafka-20442, depth 2, < 1 s), partition-epochs-name-owners (kafka-16147, depth 5, ~5 s),
client-epochs-valid (kafka-19335, depth 7, ~27 s) and epoch-follows-target (kafka-19974, depth 9,
25-40 s), each trace replayed by model/consumer_group.py to the same invariant. kafka-19449 and
kafka-19233 break step invariants about answers (unreleased-waits-for-another, rejoin-accepted) that
are not encoded here; with them on, the six properties are still proved.
"""
from __future__ import annotations

import z3

from kverify.invariants import consumer_group as I
from kverify.model import consumer_group as CG
from kverify.model.proofs import Obligation, Result
from kverify.model.proofs.bmc import bmc

N = 2                    # client slots
TOPICS = 2               # topics of one partition each
W = TOPICS               # partition bits (= topic bits: one partition per topic)
UNSUB, JOINING, RECONCILING, ACK, STABLE, LEAVING, DOWN = range(7)
ERR = {CG.NONE: 0, CG.FENCED: 1, CG.UNKNOWN: 2}
MST, MUNREV, MUNREL = I.M_STABLE, I.UNREVOKED, I.UNRELEASED
SLOT_KEYS = ("present", "ms", "me", "mp", "asg", "pend", "msub", "tgt",
             "cs", "inc", "ce", "own", "cas", "csub", "rep", "repv", "ap", "aerr", "aep", "aas", "infl",
             "cp", "cep", "cparts")
BOOL_KEYS = {"present", "repv", "ap", "infl", "cp"}
BV_KEYS = {"asg", "pend", "msub", "tgt", "own", "cas", "csub", "rep", "aas", "cparts"}
GLOBAL_KEYS = ("ge", "ae", "pe0", "pe1", "meta", "pert", "loss", "com")


def bv(x):
    return z3.BitVecVal(x, W)


ZERO = bv(0)
ALL = bv((1 << TOPICS) - 1)


def _kind(key):
    base = key.rstrip("0123456789")
    return "bool" if base in BOOL_KEYS else "bv" if base in BV_KEYS or base == "meta" else "int"


class Enc:
    """Symbolic consumer-group model (2 slots, TOPICS x 1 partition) under a set of behaviours."""

    def __init__(self, behaviours: frozenset = frozenset()):
        b = frozenset(behaviours)
        self.lost_epoch = I.B16147 in b
        self.unrevoked_bump = I.B19974 in b
        self.own_unreleased = I.B19449 in b
        self.no_zero_rejoin = I.B19233 in b
        self.empty_lag = I.B20442 in b
        self.negative_epoch_joining = I.B19335 in b
        missing = sorted(n for n in CG.ACTIONS.names() if not hasattr(self, "enc_" + n))
        extra = sorted(n[4:] for n in dir(self) if n.startswith("enc_") and n[4:] not in CG.ACTIONS.names())
        if missing or extra:
            raise ValueError(f"encoding and ActionTable differ: not encoded {missing}, not actions {extra}")

    # --- states ----------------------------------------------------------------------------------
    @staticmethod
    def keys():
        return list(GLOBAL_KEYS) + [f"{k}{s}" for s in range(N) for k in SLOT_KEYS]

    def state(self, name: str) -> dict:
        out = {}
        for k in self.keys():
            kind = _kind(k)
            out[k] = (z3.Bool(f"{name}_{k}") if kind == "bool" else z3.BitVec(f"{name}_{k}", W) if kind == "bv"
                      else z3.Int(f"{name}_{k}"))
        return out

    def init(self, s, params=None) -> z3.BoolRef:
        p = params or {}
        cs = [s["ge"] == 0, s["ae"] == 0, s["pe0"] == -1, s["pe1"] == -1, s["meta"] == ZERO,
              s["pert"] == p.get("perturbations", s["pert"]), s["loss"] == p.get("losses", s["loss"]),
              s["com"] == p.get("commits", s["com"]), s["pert"] >= 0, s["loss"] >= 0, s["com"] >= 0]
        for i in range(N):
            v = {k: s[f"{k}{i}"] for k in SLOT_KEYS}
            cs += [z3.Not(v["present"]), v["ms"] == 0, v["me"] == 0, v["mp"] == 0, v["asg"] == ZERO,
                   v["pend"] == ZERO, v["msub"] == ZERO, v["tgt"] == ZERO, v["cs"] == JOINING, v["inc"] == 0,
                   v["ce"] == 0, v["own"] == ZERO, v["cas"] == ZERO, v["csub"] == ALL, v["rep"] == ZERO,
                   z3.Not(v["repv"]), z3.Not(v["ap"]), v["aerr"] == 0, v["aep"] == 0, v["aas"] == ZERO,
                   z3.Not(v["infl"]), z3.Not(v["cp"]), v["cep"] == 0, v["cparts"] == ZERO]
        return z3.And(cs)

    def same(self, t, nxt) -> z3.BoolRef:
        return z3.And([t[k] == nxt[k] for k in self.keys()])

    @staticmethod
    def slot(s, i):
        return {k: s[f"{k}{i}"] for k in SLOT_KEYS}

    @staticmethod
    def put(s, i, **fields):
        out = dict(s)
        for k, v in fields.items():
            out[f"{k}{i}"] = v
        return out

    def pe(self, s, q):
        return s[f"pe{q}"]

    # --- coordinator rules -------------------------------------------------------------------------
    @staticmethod
    def held(m):
        return m["asg"] | m["pend"]

    def assign(self, present, subs, incs):
        """The abstract assignor for two slots (model/consumer_group.py `assign`): partition t goes to
        the (k mod n_t)-th subscriber of topic t in member-id order, k counting earlier topics with
        subscribers. Returns the target bitmask of each slot."""
        first_is_0 = incs[0] <= incs[1]          # member id s + 2 inc: slot 0 first iff inc0 <= inc1
        tg = [ZERO, ZERO]
        k = z3.IntVal(0)
        for t in range(TOPICS):
            bit = bv(1 << t)
            s0 = z3.And(present[0], subs[0] & bit != ZERO)
            s1 = z3.And(present[1], subs[1] & bit != ZERO)
            both = z3.And(s0, s1)
            first0 = z3.If(both, first_is_0, s0)          # the first subscriber is slot 0
            owner0 = z3.If(z3.And(both, k % 2 == 1), z3.Not(first0), first0)
            tg[0] = z3.If(z3.And(s0, owner0), tg[0] | bit, tg[0])
            tg[1] = z3.If(z3.And(s1, z3.Not(owner0)), tg[1] | bit, tg[1])
            k = k + z3.If(z3.Or(s0, s1), 1, 0)
        return tg

    @staticmethod
    def owns_revoked(sent, owned, pending):
        return z3.Or(z3.Not(sent), owned & pending != ZERO)

    @staticmethod
    def upd(m, epoch, **fields):
        out = dict(m, mp=m["me"], me=epoch)
        out.update(fields)
        return out

    @staticmethod
    def ite(c, a: dict, b: dict) -> dict:
        return {k: z3.If(c, a[k], b[k]) for k in a}

    def next_assignment(self, m, epoch, te, target, pe, sent, owned, sp):
        eff = target & sp
        kept = m["asg"] & eff
        torev = m["asg"] & ~kept
        cand = eff & ~kept
        unrel = ZERO
        for q in range(W):
            bit = bv(1 << q)
            cond = z3.And(cand & bit != ZERO, pe[q] != -1,
                          z3.BoolVal(True) if self.own_unreleased else m["pend"] & bit == ZERO)
            unrel = z3.If(cond, unrel | bit, unrel)
        revoke = self.upd(m, epoch, ms=z3.IntVal(MUNREV), asg=kept, pend=torev)
        done = self.upd(m, te, ms=z3.If(unrel != ZERO, MUNREL, MST), asg=kept | (cand & ~unrel), pend=ZERO)
        return self.ite(z3.And(torev != ZERO, self.owns_revoked(sent, owned, torev)), revoke, done)

    def strip(self, m, epoch, sent, owned, sp):
        drop = m["asg"] & ~sp
        pending = m["pend"] | drop
        unrev = self.upd(m, epoch, ms=z3.IntVal(MUNREV), asg=m["asg"] & ~drop, pend=pending)
        keep = self.upd(m, epoch, asg=m["asg"] & ~drop)
        return self.ite(drop == ZERO, m, self.ite(self.owns_revoked(sent, owned, pending), unrev, keep))

    def reconcile(self, m, te, target, pe, sent, owned, sp, enforce):
        stable = self.ite(m["me"] != te, self.next_assignment(m, m["me"], te, target, pe, sent, owned, sp),
                          self.ite(enforce, self.strip(m, m["me"], sent, owned, sp), m))
        bumped = m["me"] + 1 if self.unrevoked_bump else m["me"]
        unrev = self.ite(self.owns_revoked(sent, owned, m["pend"]),
                         self.ite(enforce, self.strip(m, m["me"], sent, owned, sp), m),
                         self.next_assignment(m, bumped, te, target, pe, sent, owned, sp))
        unrel = self.next_assignment(m, m["me"], te, target, pe, sent, owned, sp)
        return self.ite(m["ms"] == MST, stable, self.ite(m["ms"] == MUNREV, unrev, unrel))

    def update_pe(self, pe, old_present, old, new):
        """ConsumerGroup partition epochs (model/consumer_group.py `update_partition_epochs`)."""
        e = new["me"]

        def setq(p, q, old_set, new_set):
            bit = bv(1 << q)
            return z3.If(new_set & bit != ZERO, e, z3.If(old_set & bit != ZERO, -1, p))
        fixed = [setq(pe[q], q, z3.If(old_present, self.held(old), ZERO), self.held(new)) for q in range(W)]
        if not self.lost_epoch:
            return fixed
        out = []
        for q in range(W):
            p1 = z3.If(old["asg"] != new["asg"], setq(pe[q], q, old["asg"], new["asg"]), pe[q])
            p2 = z3.If(old["pend"] != new["pend"], setq(p1, q, old["pend"], new["pend"]), p1)
            out.append(z3.If(old_present, p2, fixed[q]))
        return out

    def fence(self, s, i):
        """consumerGroupFenceMember on slot i's member."""
        m = self.slot(s, i)
        o = self.slot(s, 1 - i)
        out = self.put(s, i, present=z3.BoolVal(False), ms=z3.IntVal(0), me=z3.IntVal(0), mp=z3.IntVal(0),
                       asg=ZERO, pend=ZERO, msub=ZERO, tgt=ZERO)
        for q in range(W):
            out[f"pe{q}"] = z3.If(self.held(m) & bv(1 << q) != ZERO, -1, s[f"pe{q}"])
        out["ge"] = s["ge"] + 1
        out["ae"] = (s["ae"] if self.empty_lag else z3.If(o["present"], s["ae"], s["ge"] + 1))
        out["meta"] = z3.If(o["present"], o["msub"], ZERO)
        return out

    def valid_epoch(self, m, received, sent, owned):
        ok_smaller = z3.And(received == m["mp"], sent, owned & ~m["asg"] == ZERO)
        check = z3.If(received > m["me"], False, z3.If(received < m["me"], ok_smaller, True))
        if self.no_zero_rejoin:
            return check
        return z3.Or(received == 0, check)

    def handle(self, s, i):
        """(group-side successor, answer (err, epoch, assignment), handled-without-error) of slot i's heartbeat."""
        c = self.slot(s, i)
        o = self.slot(s, 1 - i)
        sent = z3.Or(c["ce"] <= 0, z3.Not(c["repv"]), c["own"] != c["rep"])
        owned = c["own"]
        present = c["present"]
        mem = {k: z3.If(present, c[k], v) for k, v in
               (("ms", z3.IntVal(MST)), ("me", z3.IntVal(0)), ("mp", z3.IntVal(0)), ("asg", ZERO), ("pend", ZERO),
                ("msub", ZERO))}
        updated = dict(mem, msub=c["csub"])
        sub_meta = c["csub"] | z3.If(o["present"], o["msub"], ZERO)
        bump = z3.Or(updated["msub"] != mem["msub"], sub_meta != s["meta"])
        ge = s["ge"] + z3.If(bump, 1, 0)
        recompute = ge > s["ae"]
        presents = [z3.BoolVal(True), o["present"]] if i == 0 else [o["present"], z3.BoolVal(True)]
        subs = [c["csub"], o["msub"]] if i == 0 else [o["msub"], c["csub"]]
        incs = [s["inc0"], s["inc1"]]
        tg = self.assign(presents, subs, incs)
        tgt_i = z3.If(recompute, tg[i], c["tgt"])
        tgt_o = z3.If(recompute, tg[1 - i], o["tgt"])
        ae = z3.If(recompute, ge, s["ae"])
        pe = [s[f"pe{q}"] for q in range(W)]
        sp = c["csub"]
        enforce = updated["asg"] & ~sp != ZERO
        rec = self.ite(z3.And(updated["ms"] == MST, updated["me"] == ae), updated,
                       self.reconcile(updated, ae, tgt_i, pe, sent, owned, sp, enforce))
        changed = z3.Or([rec[k] != mem[k] for k in mem])
        new_pe = self.update_pe(pe, present, mem, rec)
        handled = self.put(s, i, present=z3.BoolVal(True), ms=rec["ms"], me=rec["me"], mp=rec["mp"], asg=rec["asg"],
                           pend=rec["pend"], msub=rec["msub"], tgt=tgt_i)
        handled = self.put(handled, 1 - i, tgt=tgt_o)
        handled.update(ge=ge, ae=ae, meta=sub_meta)
        for q in range(W):
            handled[f"pe{q}"] = z3.If(changed, new_pe[q], pe[q])
        leave = c["ce"] == -1
        unknown = z3.Or(z3.And(leave, z3.Not(present)), z3.And(z3.Not(leave), z3.Not(present), c["ce"] != 0))
        fenced = z3.And(z3.Not(leave), present, z3.Not(self.valid_epoch(c, c["ce"], sent, owned)))
        fenced_state = self.fence(s, i)
        group = {k: z3.If(z3.Or(unknown, fenced), s[k], z3.If(leave, fenced_state[k], handled[k])) for k in s}
        err = z3.If(unknown, ERR[CG.UNKNOWN], z3.If(fenced, ERR[CG.FENCED], 0))
        epoch = z3.If(z3.Or(unknown, fenced), 0, z3.If(leave, -1, rec["me"]))
        asg = z3.If(z3.Or(unknown, fenced, leave), ZERO, rec["asg"])
        return group, (err, epoch, asg), sent

    # --- the actions (names as model/consumer_group.py ACTIONS) -----------------------------------
    def enc_heartbeat(self, s, i):
        c = self.slot(s, i)
        group, (err, epoch, asg), sent = self.handle(s, i)
        differs = z3.Or(z3.Or([group[k] != s[k] for k in s]), err != 0, epoch != c["ce"], asg != c["cas"], sent)
        guard = z3.And(z3.Not(c["infl"]), z3.Or(c["cs"] == JOINING, c["cs"] == ACK, c["cs"] == LEAVING,
                                               z3.And(c["cs"] == STABLE, differs)))
        nxt = self.put(group, i, cs=z3.If(c["cs"] == LEAVING, UNSUB, c["cs"]),
                       ap=z3.BoolVal(True), aerr=err, aep=epoch, aas=asg, infl=z3.BoolVal(True),
                       rep=z3.If(sent, c["own"], c["rep"]), repv=z3.Or(sent, c["repv"]))
        return guard, nxt

    def enc_receive(self, s, i):
        c = self.slot(s, i)
        cleared = dict(ap=z3.BoolVal(False), aerr=z3.IntVal(0), aep=z3.IntVal(0), aas=ZERO, infl=z3.BoolVal(False))
        unsubscribed = self.put(s, i, **cleared)
        late_leave = self.put(s, i, ce=c["aep"], **cleared) if self.negative_epoch_joining else unsubscribed
        fenced = self.put(s, i, cs=z3.IntVal(JOINING), ce=z3.IntVal(0), own=ZERO, cas=ZERO, rep=ZERO,
                          repv=z3.BoolVal(False), **cleared)
        fresh = c["aas"] != c["cas"]
        ok = self.put(s, i, cs=z3.If(c["aas"] == c["own"], STABLE, RECONCILING), ce=c["aep"], cas=c["aas"],
                      rep=z3.If(fresh, ZERO, c["rep"]), repv=z3.And(c["repv"], z3.Not(fresh)), **cleared)
        nxt = self.ite(c["cs"] == UNSUB, unsubscribed,
                       self.ite(c["aerr"] != 0, fenced, self.ite(c["aep"] < 0, late_leave, ok)))
        return c["ap"], nxt

    def enc_reconcile(self, s, i):
        c = self.slot(s, i)
        return c["cs"] == RECONCILING, self.put(s, i, cs=z3.IntVal(ACK), own=c["cas"])

    def enc_commit(self, s, i):
        c = self.slot(s, i)
        guard = z3.And(c["own"] != ZERO, z3.Not(c["cp"]), s["com"] > 0, c["cs"] == RECONCILING)
        nxt = self.put(s, i, cp=z3.BoolVal(True), cep=c["ce"], cparts=c["own"])
        nxt["com"] = s["com"] - 1
        return guard, nxt

    def enc_commit_arrives(self, s, i):
        return s[f"cp{i}"], self.put(s, i, cp=z3.BoolVal(False), cep=z3.IntVal(0), cparts=ZERO)

    def accepted(self, s, i):
        c = self.slot(s, i)
        return z3.And(c["cp"], c["present"], c["me"] == c["cep"])

    def enc_expire(self, s, i):
        return z3.And(s[f"cs{i}"] == DOWN, s[f"present{i}"]), self.fence(s, i)

    def enc_restart(self, s, i):
        c = self.slot(s, i)
        nxt = self.put(s, i, cs=z3.IntVal(JOINING), inc=c["inc"] + 1, ce=z3.IntVal(0), own=ZERO, cas=ZERO, csub=ALL,
                       rep=ZERO, repv=z3.BoolVal(False), ap=z3.BoolVal(False), aerr=z3.IntVal(0), aep=z3.IntVal(0),
                       aas=ZERO, infl=z3.BoolVal(False), cp=z3.BoolVal(False), cep=z3.IntVal(0), cparts=ZERO)
        return z3.And(c["cs"] == DOWN, z3.Not(c["present"])), nxt

    def enc_lose(self, s, i):
        nxt = self.put(s, i, ap=z3.BoolVal(False), aerr=z3.IntVal(0), aep=z3.IntVal(0), aas=ZERO,
                       infl=z3.BoolVal(False), rep=ZERO, repv=z3.BoolVal(False))
        nxt["loss"] = s["loss"] - 1
        return z3.And(s[f"ap{i}"], s["loss"] > 0), nxt

    def _perturbed(self, nxt, s):
        nxt = dict(nxt)
        nxt["pert"] = s["pert"] - 1
        return nxt

    @staticmethod
    def live(cs):
        return z3.And(cs >= JOINING, cs <= STABLE)

    def enc_subscribe(self, s, i, ts):
        c = self.slot(s, i)
        guard = z3.And(s["pert"] > 0, self.live(c["cs"]), c["csub"] != bv(ts))
        return guard, self._perturbed(self.put(s, i, csub=bv(ts)), s)

    def enc_leave(self, s, i):
        c = self.slot(s, i)
        guard = z3.And(s["pert"] > 0, c["cs"] == STABLE, c["ce"] > 0, z3.Not(c["infl"]))
        return guard, self._perturbed(self.put(s, i, cs=z3.IntVal(LEAVING), ce=z3.IntVal(-1), own=ZERO, cas=ZERO), s)

    def enc_resubscribe(self, s, i):
        c = self.slot(s, i)
        nxt = self.put(s, i, cs=z3.IntVal(JOINING), ce=z3.IntVal(0), own=ZERO, cas=ZERO, rep=ZERO, repv=z3.BoolVal(False))
        return z3.And(s["pert"] > 0, c["cs"] == UNSUB), self._perturbed(nxt, s)

    def enc_crash(self, s, i):
        c = self.slot(s, i)
        nxt = self.put(s, i, cs=z3.IntVal(DOWN), ce=z3.IntVal(0), own=ZERO, cas=ZERO, rep=ZERO, repv=z3.BoolVal(False),
                       ap=z3.BoolVal(False), aerr=z3.IntVal(0), aep=z3.IntVal(0), aas=ZERO, infl=z3.BoolVal(False),
                       cp=z3.BoolVal(False), cep=z3.IntVal(0), cparts=ZERO)
        return z3.And(s["pert"] > 0, self.live(c["cs"])), self._perturbed(nxt, s)

    def enc_expire_live(self, s, i):
        c = self.slot(s, i)
        guard = z3.And(s["pert"] > 0, c["cs"] != DOWN, c["present"])
        return guard, self._perturbed(self.fence(s, i), s)

    def enc_add_partition(self, s, t):
        return z3.BoolVal(False), dict(s)        # the encoded bound has grow=False

    def actions(self, s):
        """(label, action, guard, next) for every action of the model's table, with its arguments."""
        for a in CG.ACTIONS.actions:
            args_list = ([(t,) for t in range(TOPICS)] if a.name == "add_partition" else
                         [(i, ts) for i in range(N) for ts in range(1, 1 << TOPICS)] if a.name == "subscribe" else
                         [(i,) for i in range(N)])
            for args in args_list:
                guard, nxt = getattr(self, "enc_" + a.name)(s, *args)
                yield (f"{a.name}({', '.join(map(str, args))})", (a.name, *args), guard, nxt)


# --- Python states as encoding values (for the encoding's test and replay) ----------------------------
def values_of(state) -> dict:
    g = state.group
    out = {"ge": g.group_epoch, "ae": g.assignment_epoch, "meta": 0, "pert": state.budget.perturbations,
           "loss": state.budget.losses, "com": state.budget.commits}
    for q in range(W):
        out[f"pe{q}"] = g.partition_epochs[q]
    for t, n in enumerate(g.subscription_metadata):
        if n:
            out["meta"] |= 1 << t
    for i, c in enumerate(state.clients):
        m = CG.find(g.members, c.member_id)
        tgt = CG.target_of(g, c.member_id)
        out.update({f"present{i}": m is not None, f"ms{i}": m.state if m else 0, f"me{i}": m.member_epoch if m else 0,
                    f"mp{i}": m.previous_member_epoch if m else 0, f"asg{i}": m.assigned if m else 0,
                    f"pend{i}": m.pending_revocation if m else 0, f"msub{i}": m.subscribed if m else 0,
                    f"tgt{i}": tgt, f"cs{i}": c.state, f"inc{i}": c.member_id // N, f"ce{i}": c.member_epoch,
                    f"own{i}": c.owned, f"cas{i}": c.assignment, f"csub{i}": c.subscribed,
                    f"rep{i}": 0 if c.reported == CG.NOT_SENT else c.reported, f"repv{i}": c.reported != CG.NOT_SENT,
                    f"ap{i}": c.answer is not None, f"aerr{i}": ERR[c.answer.error] if c.answer else 0,
                    f"aep{i}": c.answer.member_epoch if c.answer else 0, f"aas{i}": c.answer.assignment if c.answer else 0,
                    f"infl{i}": c.inflight, f"cp{i}": c.commit is not None,
                    f"cep{i}": c.commit.member_epoch if c.commit else 0, f"cparts{i}": c.commit.partitions if c.commit else 0})
    return out


def as_terms(values: dict) -> dict:
    out = {}
    for k, v in values.items():
        kind = _kind(k)
        out[k] = z3.BoolVal(v) if kind == "bool" else bv(v) if kind == "bv" else z3.IntVal(v)
    return out


# --- the properties ------------------------------------------------------------------------------------
def target_legal(s):
    cs = [s["tgt0"] & s["tgt1"] == ZERO]
    for i in range(N):
        cs.append(s[f"tgt{i}"] & ~z3.If(s[f"present{i}"], s[f"msub{i}"], ZERO) == ZERO)
    return z3.And(cs)


def epochs_bounded(s):
    cs = [s["ae"] <= s["ge"]]
    for i in range(N):
        cs += [z3.Implies(s[f"present{i}"], s[f"me{i}"] <= s["ge"]), s[f"ce{i}"] <= s["ge"]]
    return z3.And(cs)


def empty_group_epochs_agree(s):
    return z3.Implies(z3.And([z3.Not(s[f"present{i}"]) for i in range(N)]), s["ae"] == s["ge"])


def partition_epochs_name_owners(s):
    cs = [z3.Implies(z3.And(s["present0"], s["present1"]),
                     (s["asg0"] | s["pend0"]) & (s["asg1"] | s["pend1"]) == ZERO)]
    for q in range(W):
        bit = bv(1 << q)
        holders = [z3.And(s[f"present{i}"], (s[f"asg{i}"] | s[f"pend{i}"]) & bit != ZERO) for i in range(N)]
        for i in range(N):
            cs.append(z3.Implies(holders[i], s[f"pe{q}"] == s[f"me{i}"]))
        cs.append(z3.Implies(s[f"pe{q}"] != -1, z3.Or(holders)))
    return z3.And(cs)


def client_epochs_valid(s):
    return z3.And([z3.Implies(Enc.live(s[f"cs{i}"]), s[f"ce{i}"] >= 0) for i in range(N)])


def epoch_follows_target(s, t):
    cs = []
    for i in range(N):
        moved = z3.And(s[f"present{i}"], t[f"present{i}"], s[f"inc{i}"] == t[f"inc{i}"], s[f"me{i}"] != t[f"me{i}"])
        cs.append(z3.Implies(moved, z3.And(t[f"me{i}"] == t["ae"], t[f"ms{i}"] != MUNREV)))
    return z3.And(cs)


def well_formed(s):
    """Shape facts of every encoded state (domains, the zero conventions)."""
    cs = [s["pert"] >= 0, s["loss"] >= 0, s["com"] >= 0, s["ge"] >= 0, s["ae"] >= 0]
    for q in range(W):
        cs.append(s[f"pe{q}"] >= -1)
    for i in range(N):
        cs += [s[f"cs{i}"] >= UNSUB, s[f"cs{i}"] <= DOWN, s[f"ms{i}"] >= 0, s[f"ms{i}"] <= 2, s[f"inc{i}"] >= 0,
               s[f"ce{i}"] >= -1, s[f"aep{i}"] >= -1, s[f"csub{i}"] != ZERO, s[f"aerr{i}"] >= 0, s[f"aerr{i}"] <= 2,
               z3.Implies(z3.Not(s[f"present{i}"]), z3.And(s[f"tgt{i}"] == ZERO, s[f"asg{i}"] == ZERO,
                                                           s[f"pend{i}"] == ZERO, s[f"me{i}"] == 0, s[f"mp{i}"] == 0,
                                                           s[f"ms{i}"] == 0, s[f"msub{i}"] == ZERO)),
               z3.Implies(s[f"present{i}"], z3.And(s[f"me{i}"] >= 0, s[f"mp{i}"] >= 0)),
               z3.Implies(s[f"ap{i}"], s[f"infl{i}"]),
               z3.Implies(s[f"present{i}"], s[f"msub{i}"] & ~s["meta"] == ZERO)]
    return z3.And(cs)


def answers_bounded(s):
    """Answers and client epochs in flight never exceed the group epoch; a member of a slot that is
    not yet subscribed... (lemma for epochs-bounded and empty-group-epochs-agree)."""
    return z3.And([z3.Implies(s[f"ap{i}"], s[f"aep{i}"] <= s["ge"]) for i in range(N)])


def members_at_most_target(s):
    """Member epochs never exceed the assignment epoch (lemma)."""
    return z3.And([z3.Implies(s[f"present{i}"], s[f"me{i}"] <= s["ae"]) for i in range(N)])


def reconciled_within_target(s):
    """A member at the assignment epoch that is not revoking holds only partitions of its target (lemma)."""
    return z3.And([z3.Implies(z3.And(s[f"present{i}"], s[f"me{i}"] == s["ae"], s[f"ms{i}"] != MUNREV),
                              s[f"asg{i}"] & ~s[f"tgt{i}"] == ZERO) for i in range(N)])


def ae_le_ge(s):
    return s["ae"] <= s["ge"]


def unrevoked_below_target(s):
    """A member in UNREVOKED_PARTITIONS is below the assignment epoch (lemma for epochs-bounded)."""
    return z3.And([z3.Implies(z3.And(s[f"present{i}"], s[f"ms{i}"] == MUNREV), s[f"me{i}"] < s["ae"])
                   for i in range(N)])


STATE_PROPS = {"target-legal": target_legal, "epochs-bounded": epochs_bounded,
               "empty-group-epochs-agree": empty_group_epochs_agree,
               "partition-epochs-name-owners": partition_epochs_name_owners,
               "client-epochs-valid": client_epochs_valid}
STEP_PROPS = {"epoch-follows-target": epoch_follows_target}
LEMMAS = {"target-legal": (well_formed, ae_le_ge),
          "epochs-bounded": (well_formed, answers_bounded, members_at_most_target, unrevoked_below_target,
                             reconciled_within_target, target_legal),
          "empty-group-epochs-agree": (well_formed, ae_le_ge),
          "partition-epochs-name-owners": (well_formed,),
          "client-epochs-valid": (well_formed,),
          "epoch-follows-target": (well_formed,)}


def check_inductive(prop: str, behaviours: frozenset, work: int = None):
    """('proved'|'cti'|'unknown', detail, cti dict): the property with its lemmas is inductive."""
    enc = Enc(behaviours)
    s, t = enc.state("s"), enc.state("t")
    lemmas = LEMMAS[prop]
    if prop in STATE_PROPS:
        inv = lambda x: z3.And(STATE_PROPS[prop](x), *[lem(x) for lem in lemmas])  # noqa: E731
    else:
        inv = lambda x: z3.And(*[lem(x) for lem in lemmas])  # noqa: E731
    from kverify.model.proofs import limit

    solver = limit(z3.Solver(), work or WORK)   # per check, deterministic (Z3 resource units)
    solver.add(inv(s))
    for label, action, guard, nxt in enc.actions(s):
        solver.push()
        solver.add(guard, enc.same(t, nxt))
        bad = z3.Not(inv(t)) if prop in STATE_PROPS else z3.Or(z3.Not(inv(t)), z3.Not(STEP_PROPS[prop](s, t)))
        solver.add(bad)
        r = solver.check()
        if r == z3.sat:
            m = solver.model()
            cti = {k: str(m.eval(v, model_completion=True)) for k, v in s.items()}
            solver.pop()
            return "cti", f"not inductive: {label} leaves it from a state satisfying it", {"action": label, "state": cti}
        solver.pop()
        if r == z3.unknown:
            return "unknown", f"solver gave up on {label}: {solver.reason_unknown()}", None
    names = ", ".join(lem.__name__ for lem in lemmas)
    return "proved", f"inductive with {names}, for every budget and epoch (2 slots, {TOPICS} topics x 1 partition)", None


HUNT = {"members": 2, "topics": TOPICS, "partitions": 1, "grow": False, "perturbations": 1, "losses": 2, "commits": 0}


class _Bounded:
    """The encoding with the hunt's budgets fixed in the initial state."""

    def __init__(self, enc, params):
        self.enc, self.params = enc, params

    def state(self, name):
        return self.enc.state(name)

    def init(self, s):
        return self.enc.init(s, self.params)

    def actions(self, s):
        return self.enc.actions(s)

    def same(self, t, nxt):
        return self.enc.same(t, nxt)


# a leave and a second subscription need two perturbations
HUNT_FOR = {"client-epochs-valid": dict(HUNT, perturbations=2)}


def replay_in_model(prop: str, behaviours: frozenset, actions: list):
    from kverify.model import registry

    proto = registry.build("consumer-group", HUNT_FOR.get(prop, HUNT), behaviours)
    inv = next(i for i in proto.invariants() if i.name == prop)
    prev, s = None, proto.init_states()[0]
    for a in actions:
        if a not in proto.actions(s):
            return False, f"{a} is not enabled in model/consumer_group.py there"
        prev, s = s, proto.step(s, a)
    msg = inv.check(s) if inv.kind == "state" else inv.check(prev, actions[-1], s)
    return (True, msg) if msg else (False, f"{prop} holds at the end of the trace in the model")


# Per query, Z3 resource units (deterministic; kverify.model.proofs.limit), 10x the largest query measured by
# bench/prove_work.py (14:45-14:55 UTC): induction 223,233; BMC hunt 60,434,836 (client-epochs-valid, depth 7).
WORK = 3_000_000
HUNT_WORK = 600_000_000


def hunt(prop: str, behaviours: frozenset, depth: int = 10, work: int = None):
    enc = Enc(behaviours)
    if prop in STATE_PROPS:
        bad_state, bad_step = (lambda s: z3.Not(STATE_PROPS[prop](s))), None
    else:
        bad_state, bad_step = None, (lambda s, t, act: z3.Not(STEP_PROPS[prop](s, t)))
    params = HUNT_FOR.get(prop, HUNT)
    res = bmc(_Bounded(enc, params), depth, bad_state, bad_step, work=work or HUNT_WORK)
    where = ", ".join(f"{k} {v}" for k, v in params.items())
    if res.status != "falsified":
        return None, f"BMC {res.status} to depth {res.bound if res.status == 'clean' else res.depth} ({where})"
    actions = [tuple(step["action"]) for step in res.trace[1:]]
    ok, msg = replay_in_model(prop, behaviours, actions)
    if not ok:
        return None, f"BMC trace of depth {res.depth} does not replay: {msg}"
    path = " -> ".join(step["label"] for step in res.trace[1:])
    return dict(res.as_counterexample(), params=params, model_violation=msg), \
        f"reachable in {res.depth} steps ({where}): {path}; model/consumer_group.py: {msg}"


def _run(prop: str, breaking: frozenset):
    def run(behaviours: frozenset) -> Result:
        if breaking & behaviours:
            cx, detail = hunt(prop, behaviours)
            if cx is not None:
                return Result("falsified", detail, cx)
        status, detail, cti = check_inductive(prop, behaviours)
        if status == "proved":
            return Result("proved", detail)
        return Result("unknown", detail, cti)
    return run


BREAKING = {
    "target-legal": frozenset(),
    "epochs-bounded": frozenset(),
    "empty-group-epochs-agree": frozenset({I.B20442}),
    "partition-epochs-name-owners": frozenset({I.B16147}),
    "epoch-follows-target": frozenset({I.B19974}),
    "client-epochs-valid": frozenset({I.B19335}),
}
STATEMENTS = {
    "target-legal": "the target assignment gives each partition to at most one member, only of topics it subscribes to",
    "epochs-bounded": "member epochs (coordinator and client side) and the assignment epoch never exceed the group epoch",
    "empty-group-epochs-agree": "an Empty group has its assignment epoch equal to its group epoch",
    "partition-epochs-name-owners": "a partition epoch names the member holding the partition, and only held ones have one",
    "epoch-follows-target": "a member's epoch moves only to the target epoch, and only after revoking",
    "client-epochs-valid": "a client in the group never has a negative member epoch",
}


def obligations() -> list[Obligation]:
    return [Obligation(f"consumer-group-{prop}", f"KIP-848 model (2 members, {TOPICS} topics x 1 partition, any "
                       f"budget): {STATEMENTS[prop]}", _run(prop, BREAKING[prop]), BREAKING[prop],
                       model_behaviours=CG.SUPPORTS,
                       encodes=frozenset(CG.SUPPORTS))
            for prop in list(STATE_PROPS) + list(STEP_PROPS)]
