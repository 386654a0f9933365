"""Abstract model of one Kafka partition's replication: logs with leader epochs, HW, ISR, elections.

Why it exists: the replication invariants (I-DUR, I-LC, I-LCC, I-LM, I-HWM, I-RQS, I-EPOCH, see
`invariants/replication.py`) are checked exhaustively here, at bounds small enough for BFS, and each
historical behaviour of `impl/replication/behaviours.py` that makes sense at this level is a switch
that brings back the hole it re-creates (reference `replication.md` tables 86-87).

What is modelled (one partition, replicas 0..n-1, all of them assigned replicas):
- a ZooKeeper-era controller (leader, leader epoch, ISR, partition epoch, controller epoch) with the
  KIP-966 eligible-leader-replica set (ELR) and unclean-shutdown detection, which is the fixed
  protocol: the ISR may become empty, a replica removed while the ISR is below MinISR moves to the ELR,
  a replica that restarts having lost part of its log leaves ISR and ELR;
- LeaderAndIsr requests kept in a set, as in J. Gustafson's TLA+ (`KafkaReplication.tla`): a replica
  can apply any request whose leader epoch is higher than its own, which models delay, loss,
  duplication and reordering; each carries the controller epoch of its sender;
- per replica: log of records `(leader_epoch, record_id)`, HW, known leader epoch, partition epoch and
  controller epoch, believed leader, a "must truncate before fetching" flag; a leader also keeps its
  committed ISR, at most one AlterPartition in flight, and its epoch start offset (LESO);
- followers truncate with OffsetsForLeaderEpoch (KIP-279 lookup, fenced by the current leader epoch,
  KIP-320) and fetch one record at a time; as in Kafka since KAFKA-10554, a follower whose log
  still diverges after truncating (the leader would answer its fetch with a diverging epoch) keeps
  truncating instead of fetching and is not counted by the leader (KAFKA-13141);
- the leader advances the HW to the minimum LEO over its maximal ISR (KIP-497) only while its ISR has
  MinISR members (KAFKA-15583), and acknowledges the acks=all writes of its uninterrupted leadership
  when the HW passes them (NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR is too small);
- faults: crashes (the controller removes the replica from the ISR at once, ZK watch), clean or lossy
  restarts (the log loses a suffix), leader changes while the old leader still runs (zombies),
  controller failover with a zombie controller that can send one LeaderAndIsr from its stale view.

Bounds: `epochs` caps the elections that move a live leader and the controller's ISR shrinks; a
partition left without a leader may still get one recovery election, so that "a good state stays
reachable once faults stop" is not an artefact of the bound.

Abstractions: the leader reads follower LEOs directly instead of through fetch positions; the lag
timer is replaced by "a follower whose LEO differs from the leader's may be shrunk out"; a restarted
replica adopts the controller's current state at once (it registers and receives it); ELR changes
that do not touch the ISR do not bump the partition epoch.

Switches (behaviours) that live here: truncate-to-hw, ofle-offset-only, skip-truncate-same-leader,
no-fetch-epoch-fencing, expand-without-epoch-start, no-maximal-isr, no-broker-epoch-check (an
AlterPartition proposed before a follower's restart still adds it), unclean-election,
isr-shrinks-to-leader-min-isr-1 (MinISR becomes 1), hw-ignores-min-isr, stale-controller-accepted,
kafka-14704-hw-before-truncate (a follower that must truncate may first take the leader's HW, action
`fetch_hw`: the HW the diverging fetch response carries, applied before the truncation).
Behaviours that live only in impl/replication, and why: preferred-election-outside-isr and
reassignment-drops-old-replicas-early need an ordered replica list, preferred elections and
reassignment, which this model abstracts away (an election picks any eligible replica, the replica
set is fixed).
"""
from __future__ import annotations

from itertools import permutations

from kverify.impl.replication import behaviours as B
from kverify.invariants.replication import ControllerView, EpochView, ReplicaView, ReplView
from kverify.model.protocol import Protocol

SUPPORTS = frozenset({
    B.TRUNCATE_TO_HW, B.OFLE_OFFSET_ONLY, B.SKIP_TRUNCATE_SAME_LEADER, B.NO_FETCH_EPOCH_FENCING,
    B.EXPAND_WITHOUT_EPOCH_START, B.NO_MAXIMAL_ISR, B.NO_BROKER_EPOCH_CHECK, B.UNCLEAN_ELECTION,
    B.ISR_SHRINKS_TO_LEADER, B.HW_IGNORES_MIN_ISR, B.STALE_CONTROLLER_ACCEPTED, B.HW_BEFORE_TRUNCATE,
})

# Bounds under which the explorer reaches each behaviour's shortest counterexample in seconds (the bug
# zoo builds the model with them when hunting that behaviour; tests/test_replication_model.py proves
# each row and that the same bounds are clean with the switch off).
_SMALL = {"records": 1, "epochs": 1, "alters": 2}
_TWO_RECORDS = {"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0}
HUNT_PARAMS = {
    B.TRUNCATE_TO_HW: (_SMALL, "explore"),
    B.ISR_SHRINKS_TO_LEADER: (_SMALL, "explore"),
    B.HW_IGNORES_MIN_ISR: (_SMALL, "explore"),
    B.NO_MAXIMAL_ISR: (_SMALL, "explore"),
    B.EXPAND_WITHOUT_EPOCH_START: (_SMALL, "explore"),
    B.NO_BROKER_EPOCH_CHECK: (_SMALL, "explore"),
    B.UNCLEAN_ELECTION: ({"records": 1, "epochs": 2, "crashes": 2, "lossy": 0, "alters": 0, "init_isr": 2}, "explore"),
    B.OFLE_OFFSET_ONLY: (_TWO_RECORDS, "explore"),
    B.SKIP_TRUNCATE_SAME_LEADER: (_TWO_RECORDS, "explore"),
    B.NO_FETCH_EPOCH_FENCING: (_TWO_RECORDS, "explore"),
    B.STALE_CONTROLLER_ACCEPTED: ({"records": 1, "epochs": 2, "ctrl_failovers": 1, "alters": 2, "crashes": 0,
                                   "lossy": 0}, "explore"),
    B.HW_BEFORE_TRUNCATE: ({"records": 2, "epochs": 1, "alters": 1, "crashes": 0, "lossy": 0}, "explore"),
}

# Names of a state's top-level fields, in order, and every action name `actions()` can yield
# (the TLA+ cross-check of specs/Replication.tla reads them).
STATE_FIELDS = ("reps", "ctrl", "reqs", "zombie", "hist")
ACTION_NAMES = frozenset({"restart", "apply", "write", "inc_hw", "alter_resp", "ctrl_alter", "shrink", "expand",
                          "truncate", "fetch", "fetch_hw", "crash", "elect", "elect_unclean", "ctrl_failover",
                          "zombie_elect"})

PARAMS = {
    "replicas": (3, "number of replicas (2-3)"),
    "records": (2, "records the producers may write in total"),
    "epochs": (2, "highest leader epoch the controller may assign (+1 for a recovery election)"),
    "min_isr": (2, "min.insync.replicas (capped at the number of replicas)"),
    "init_isr": (0, "size of the initial ISR (0 = every replica); replica 0 leads epoch 0"),
    "alters": (1, "ISR changes (AlterPartition proposals) leaders may make"),
    "crashes": (1, "replica crashes allowed"),
    "lossy": (1, "restarts that lose a log suffix allowed"),
    "ctrl_failovers": (0, "controller failovers allowed (each leaves a zombie controller)"),
    "unclean": (1, "unclean elections allowed (only with behaviour unclean-election)"),
    "symmetry": (True, "reduce states by permuting interchangeable replicas"),
}

# replica tuple fields
ALIVE, LOG, HW, EP, PEP, CEP, LDR, TRUNC, ISR, PEND, LESO, SINCE = range(12)
# SINCE: the leader epoch since which the replica has led without interruption (-1: not leading);
# its produce requests of those epochs are still waiting for the HW (Kafka fails them only when
# the replica stops leading)
# controller tuple fields
C_LDR, C_EP, C_ISR, C_ELR, C_PEP, C_CEP = range(6)
# history tuple fields
H_NEXT, H_COMMITTED, H_ACKED, H_CRASHES, H_LOSSY, H_UNCLEAN, H_ALTERS, H_FAILOVERS = range(8)
APPLIED = 1 << 8        # flag on a pending AlterPartition already applied by the controller
STALE = 1 << 9          # flag: a replica it adds restarted since (its broker epoch is stale, KIP-903)
MASK = APPLIED - 1
NO_LEADER = -1


def popcount(x: int) -> int:
    return bin(x).count("1")


def epoch_entries(log) -> list:
    """The leader-epoch cache derived from a log: [(epoch, start_offset)] in log order."""
    out = []
    last = None
    for off, rec in enumerate(log):
        if rec[0] != last:
            out.append((rec[0], off))
            last = rec[0]
    return out


def leader_entries(rep) -> list:
    """A leader's epoch cache: its records' epochs plus (current epoch -> LESO) (KAFKA-7415)."""
    ents = epoch_entries(rep[LOG])
    if rep[LESO] >= 0 and (not ents or ents[-1][0] < rep[EP]):
        ents.append((rep[EP], rep[LESO]))
    return ents


def end_offset_for(ents, leo, e):
    """KIP-279 OffsetsForLeaderEpoch on the leader: (largest epoch <= e, its end offset), or None
    (UNDEFINED) when e is above every cached epoch or the cache is empty."""
    if not ents:
        return None
    if e == ents[-1][0]:
        return (e, leo)
    floor = None
    for ep, start in ents:
        if ep > e:
            return (floor if floor is not None else e, start)
        floor = ep
    return None


def end_offset_only(ents, leo, e):
    """Pre-KIP-279 answer (KIP-101): only an offset; None (fall back to the HW) when e is above
    every cached epoch or below the first one."""
    if not ents:
        return None
    if e == ents[-1][0]:
        return leo
    if e < ents[0][0]:
        return None
    for ep, start in ents:
        if ep > e:
            return start
    return None


def truncation_point(flog, fhw, lrep, offset_only: bool) -> int:
    """Where a follower with log `flog` and HW `fhw` truncates to against leader `lrep`."""
    leo = len(flog)
    if not leo:
        return 0
    lents = leader_entries(lrep)
    lleo = len(lrep[LOG])
    fents = epoch_entries(flog)
    if offset_only:
        ans = end_offset_only(lents, lleo, fents[-1][0])
        return min(fhw, leo) if ans is None else min(ans, leo)
    e = fents[-1][0]
    while True:
        ans = end_offset_for(lents, lleo, e)
        if ans is None:
            return min(fhw, leo)
        le, lend = ans
        fend = None
        for i, (ep, start) in enumerate(fents):
            if ep == le:
                fend = fents[i + 1][1] if i + 1 < len(fents) else leo
                break
        if fend is not None:
            return min(fend, lend, leo)
        lower = [ep for ep, _ in fents if ep < le]
        if not lower:      # the follower tracks no smaller epoch: Kafka truncates to the leader's offset
            return min(lend, leo)
        e = lower[-1]


class ReplicationModel(Protocol):
    name = "replication"

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        self.params = dict(params)
        self.behaviours = frozenset(behaviours)
        n = int(params["replicas"])
        if not 2 <= n <= 3:
            raise ValueError(f"replication: replicas must be 2 or 3, got {n}")
        for key in ("records", "epochs", "alters", "crashes", "lossy", "ctrl_failovers", "unclean"):
            if int(params[key]) < 0:
                raise ValueError(f"replication: {key} must be >= 0, got {params[key]}")
        if int(params["min_isr"]) < 1:
            raise ValueError(f"replication: min_isr must be >= 1, got {params['min_isr']}")
        self.n = n
        self.all_mask = (1 << n) - 1
        self.max_records = int(params["records"])
        self.max_epoch = int(params["epochs"])
        b = self.behaviours
        self.b_trunc_hw = B.TRUNCATE_TO_HW in b
        self.b_offset_only = B.OFLE_OFFSET_ONLY in b
        self.b_skip_same = B.SKIP_TRUNCATE_SAME_LEADER in b
        self.b_no_fence = B.NO_FETCH_EPOCH_FENCING in b
        self.b_no_leso = B.EXPAND_WITHOUT_EPOCH_START in b
        self.b_no_maximal = B.NO_MAXIMAL_ISR in b
        self.b_unclean = B.UNCLEAN_ELECTION in b
        self.b_hw_ignores = B.HW_IGNORES_MIN_ISR in b
        self.b_stale_ctrl = B.STALE_CONTROLLER_ACCEPTED in b
        self.b_hw_before_truncate = B.HW_BEFORE_TRUNCATE in b
        self.min_isr = min(int(params["min_isr"]), n)
        if B.ISR_SHRINKS_TO_LEADER in b:
            self.min_isr = 1
        self.max_crashes = int(params["crashes"])
        self.max_alters = int(params["alters"])
        self.b_no_broker_epoch = B.NO_BROKER_EPOCH_CHECK in b
        self.max_lossy = int(params["lossy"])
        self.max_failovers = int(params["ctrl_failovers"])
        self.max_unclean = int(params["unclean"]) if self.b_unclean else 0
        init_isr = int(params["init_isr"]) or n
        if not 1 <= init_isr <= n:
            raise ValueError(f"replication: init_isr must be between 1 and {n}, got {init_isr}")
        self.init_isr = init_isr
        self.use_symmetry = bool(params.get("symmetry", True))
        ident = tuple(range(n))
        self._all_perms = [(p, None if p == ident else [self._map_mask(p, m) for m in range(1 << n)])
                           for p in permutations(range(n))]
        self._inverse = {p: tuple(sorted(range(n), key=lambda i: p[i])) for p, _ in self._all_perms}
        self._by_order = {self._inverse[p]: (p, mm) for p, mm in self._all_perms}
        self._pid = {p: list(p) + [-1] for p, _ in self._all_perms}
        self._view_cache = [None, None, None, None, None, None]
        self._ev_cache = [None, None, None, None]

    # --- initial state -----------------------------------------------------------------------------
    def init_states(self):
        isr = (1 << self.init_isr) - 1
        reps = []
        for r in range(self.n):
            if r == 0:
                reps.append((True, (), 0, 0, 0, 0, 0, False, isr, 0, 0, 0))
            else:
                reps.append((True, (), 0, 0, 0, 0, 0, False, 0, 0, -1, -1))
        ctrl = (0, 0, isr, 0, 0, 0)
        reqs = ((0, 0, isr, 0, 0),)
        hist = (1, (), (), 0, 0, 0, 0, 0)
        return [(tuple(reps), ctrl, reqs, None, hist)]

    # --- helpers -----------------------------------------------------------------------------------
    def quorum(self, rep) -> int:
        """The replicas a leader waits for (HW, acks): its maximal ISR (committed ∪ proposed)."""
        pend = rep[PEND]
        if pend and not self.b_no_maximal:
            return rep[ISR] | (pend & MASK)
        return rep[ISR]

    def _counts(self, reps, r, f) -> bool:
        """Whether leader r knows follower f's LEO (f fetched from r in r's epoch, after truncating)."""
        fr = reps[f]
        if fr[LDR] != r or fr[TRUNC]:
            return False
        return self.b_no_fence or fr[EP] == reps[r][EP]

    def _fetch_ok(self, reps, f) -> bool:
        fr = reps[f]
        ldr = fr[LDR]
        if ldr < 0 or ldr == f or not fr[ALIVE]:
            return False
        lr = reps[ldr]
        if not lr[ALIVE] or lr[LDR] != ldr:
            return False
        return self.b_no_fence or lr[EP] == fr[EP]

    def _hw_candidate(self, reps, r) -> int:
        rep = reps[r]
        cand = len(rep[LOG])
        q = self.quorum(rep) & ~(1 << r)
        f = 0
        while q:
            if q & 1:
                leo = len(reps[f][LOG]) if self._counts(reps, r, f) else 0
                if leo < cand:
                    cand = leo
            q >>= 1
            f += 1
        return cand

    # --- actions -----------------------------------------------------------------------------------
    def actions(self, s):
        reps, ctrl, reqs, zombie, hist = s
        n = self.n
        out = []
        qldr, qep, qisr, qelr = ctrl[C_LDR], ctrl[C_EP], ctrl[C_ISR], ctrl[C_ELR]
        for r in range(n):
            rep = reps[r]
            if not rep[ALIVE]:
                if self.max_lossy > hist[H_LOSSY]:
                    for keep in range(len(rep[LOG])):
                        out.append(("restart", r, keep))
                out.append(("restart", r, len(rep[LOG])))
                continue
            # LeaderAndIsr requests
            for i, q in enumerate(reqs):
                if q[1] > rep[EP] and (self.b_stale_ctrl or q[4] >= rep[CEP]):
                    out.append(("apply", r, i))
            if rep[LDR] == r:
                if hist[H_NEXT] <= self.max_records and popcount(rep[ISR]) >= self.min_isr:
                    out.append(("write", r))
                if self.b_hw_ignores or popcount(rep[ISR]) >= self.min_isr:
                    if self._hw_candidate(reps, r) > rep[HW]:
                        out.append(("inc_hw", r))
                pend = rep[PEND]
                if pend & APPLIED:
                    out.append(("alter_resp", r))
                elif pend:
                    out.append(("ctrl_alter", r))
                elif hist[H_ALTERS] < self.max_alters:
                    isr = rep[ISR]
                    leo = len(rep[LOG])
                    for f in range(n):
                        if f == r:
                            continue
                        fr = reps[f]
                        if isr >> f & 1:
                            if not (fr[ALIVE] and self._counts(reps, r, f) and len(fr[LOG]) == leo):
                                out.append(("shrink", r, f))
                        elif fr[ALIVE] and self._counts(reps, r, f):
                            fleo = len(fr[LOG])
                            if fleo >= rep[HW] and (self.b_no_leso or fleo >= rep[LESO]):
                                out.append(("expand", r, f))
            else:
                if rep[TRUNC]:
                    if self._fetch_ok(reps, r):
                        cut, done = self._truncation(reps, r)
                        if done or cut < len(rep[LOG]):
                            out.append(("truncate", r))
                        if self.b_hw_before_truncate and fetched_hw(reps[rep[LDR]], len(rep[LOG])) != rep[HW]:
                            out.append(("fetch_hw", r))
                elif self._fetch_ok(reps, r):
                    lr = reps[rep[LDR]]
                    flen = len(rep[LOG])
                    newlen = flen + 1 if flen < len(lr[LOG]) else flen
                    if newlen != flen or fetched_hw(lr, newlen) != rep[HW]:
                        out.append(("fetch", r))
            if hist[H_CRASHES] < self.max_crashes and (not (qisr >> r & 1) or qep < self.max_epoch):
                out.append(("crash", r))
        # controller: `epochs` bounds the elections that perturb a live leader; an offline partition
        # may always get one recovery election (so recoverability is not an artefact of the bound)
        if qep < self.max_epoch or (qldr == NO_LEADER and qep == self.max_epoch):
            for r in range(n):
                if r == qldr or not reps[r][ALIVE]:
                    continue
                if qisr >> r & 1 or (not qisr and qelr >> r & 1):
                    out.append(("elect", r))
            if (self.max_unclean > hist[H_UNCLEAN] and qldr == NO_LEADER
                    and not any(reps[r][ALIVE] for r in range(n) if (qisr | qelr) >> r & 1)):
                for r in range(n):
                    if reps[r][ALIVE]:
                        out.append(("elect_unclean", r))
        if hist[H_FAILOVERS] < self.max_failovers:
            out.append(("ctrl_failover",))
        if zombie is not None and zombie[1] < self.max_epoch:
            for r in range(n):
                if r != zombie[0] and zombie[2] >> r & 1 and reps[r][ALIVE]:
                    out.append(("zombie_elect", r))
        return out

    def step(self, s, a):
        reps, ctrl, reqs, zombie, hist = s
        name = a[0]
        fn = getattr(self, "_do_" + name)
        return fn(reps, ctrl, reqs, zombie, hist, *a[1:])

    # each _do_* returns the successor state
    def _do_write(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        rec = (rep[EP], hist[H_NEXT])
        nrep = rep[:LOG] + (rep[LOG] + (rec,),) + rep[LOG + 1:]
        hist = (hist[H_NEXT] + 1,) + hist[1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _do_inc_hw(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        new = self._hw_candidate(reps, r)
        old = rep[HW]
        log = rep[LOG]
        acked = hist[H_ACKED]
        if popcount(self.quorum(rep)) >= self.min_isr:
            since = rep[SINCE]
            add = tuple((o, log[o]) for o in range(old, new) if log[o][0] >= since)
            if add:
                acked = acked + add
        committed = hist[H_COMMITTED]
        if new > len(committed):
            committed = committed + log[len(committed):new]
        hist = (hist[H_NEXT], committed, acked) + hist[3:]
        nrep = rep[:HW] + (new,) + rep[HW + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _do_shrink(self, reps, ctrl, reqs, zombie, hist, r, f):
        rep = reps[r]
        nrep = rep[:PEND] + ((rep[ISR] & ~(1 << f)),) + rep[PEND + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, _bump(hist, H_ALTERS))

    def _do_expand(self, reps, ctrl, reqs, zombie, hist, r, f):
        rep = reps[r]
        nrep = rep[:PEND] + ((rep[ISR] | (1 << f)),) + rep[PEND + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, _bump(hist, H_ALTERS))

    def _do_ctrl_alter(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        prop = rep[PEND] & MASK
        added = prop & ~ctrl[C_ISR]
        ok = (ctrl[C_LDR] == r and ctrl[C_EP] == rep[EP] and ctrl[C_PEP] == rep[PEP]
              and not rep[PEND] & STALE
              and all(reps[f][ALIVE] for f in range(self.n) if added >> f & 1))
        if not ok:   # FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION / INELIGIBLE_REPLICA: roll back
            nrep = rep[:PEND] + (0,) + rep[PEND + 1:]
            return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)
        elr = self._new_elr(ctrl[C_ISR], prop, ctrl[C_ELR])
        nctrl = (ctrl[C_LDR], ctrl[C_EP], prop, elr, ctrl[C_PEP] + 1, ctrl[C_CEP])
        nrep = rep[:PEND] + (prop | APPLIED,) + rep[PEND + 1:]
        return (_put(reps, r, nrep), nctrl, reqs, zombie, hist)

    def _new_elr(self, old_isr, new_isr, elr):
        """KIP-966: members removed while the ISR is below MinISR join the ELR; ISR >= MinISR clears it;
        ELR and ISR stay disjoint."""
        if popcount(new_isr) >= self.min_isr:
            return 0
        return (elr | (old_isr & ~new_isr)) & ~new_isr

    def _do_alter_resp(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        nrep = rep[:PEP] + (rep[PEP] + 1,) + rep[PEP + 1:ISR] + (rep[PEND] & MASK, 0) + rep[PEND + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _truncation(self, reps, r):
        """(cut, done) of follower r against its leader: where it truncates, and whether the leader
        stops reporting a diverging epoch afterwards (KAFKA-10554: otherwise the follower keeps
        truncating instead of fetching, and the leader does not count it, KAFKA-13141)."""
        rep = reps[r]
        lrep = reps[rep[LDR]]
        cut = truncation_point(rep[LOG], rep[HW], lrep, self.b_offset_only)
        if self.b_offset_only or cut == 0:
            return cut, True
        ef = rep[LOG][cut - 1][0]
        ans = end_offset_for(leader_entries(lrep), len(lrep[LOG]), ef)
        return cut, ans is not None and ans[0] == ef and ans[1] >= cut

    def _do_truncate(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        cut, done = self._truncation(reps, r)
        nrep = _truncated(rep, cut)
        if not done:
            nrep = nrep[:TRUNC] + (True,) + nrep[TRUNC + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _do_fetch(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        lr = reps[rep[LDR]]
        log = rep[LOG]
        if len(log) < len(lr[LOG]):
            log = log + (lr[LOG][len(log)],)
        nrep = rep[:LOG] + (log, fetched_hw(lr, len(log))) + rep[HW + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _do_fetch_hw(self, reps, ctrl, reqs, zombie, hist, r):
        """KAFKA-14704: the diverging fetch response is processed as data first (no records, but
        the leader's HW is applied) and only then does the follower truncate."""
        rep = reps[r]
        nrep = rep[:HW] + (fetched_hw(reps[rep[LDR]], len(rep[LOG])),) + rep[HW + 1:]
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _become(self, rep, r, ldr, ep, isr, pep, cep):
        """The replica's state after it applies a LeaderAndIsr (leader `ldr`, epoch `ep`)."""
        if ldr == r:
            since = rep[SINCE] if rep[LDR] == r and rep[SINCE] >= 0 else ep
            return (True, rep[LOG], rep[HW], ep, pep, cep, r, False, isr, 0, len(rep[LOG]), since)
        if self.b_trunc_hw:
            cut = min(rep[HW], len(rep[LOG]))
            return (True, rep[LOG][:cut], cut, ep, pep, cep, ldr, False, 0, 0, -1, -1)
        trunc = True
        if self.b_skip_same and ldr == rep[LDR] and ldr != NO_LEADER:
            trunc = rep[TRUNC]
        return (True, rep[LOG], rep[HW], ep, pep, cep, ldr, trunc, 0, 0, -1, -1)

    def _do_apply(self, reps, ctrl, reqs, zombie, hist, r, i):
        rep = reps[r]
        ldr, ep, isr, pep, cep = reqs[i]
        nrep = self._become(rep, r, ldr, ep, isr, pep, max(cep, rep[CEP]))
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _do_crash(self, reps, ctrl, reqs, zombie, hist, r):
        rep = reps[r]
        nrep = (False,) + rep[1:]
        reps = _put(reps, r, nrep)
        hist = hist[:H_CRASHES] + (hist[H_CRASHES] + 1,) + hist[H_CRASHES + 1:]
        if ctrl[C_ISR] >> r & 1:      # the controller sees the session expire: shrink, maybe lose the leader
            isr = ctrl[C_ISR] & ~(1 << r)
            elr = self._new_elr(ctrl[C_ISR], isr, ctrl[C_ELR])
            ldr = NO_LEADER if ctrl[C_LDR] == r else ctrl[C_LDR]
            ctrl = (ldr, ctrl[C_EP] + 1, isr, elr, ctrl[C_PEP] + 1, ctrl[C_CEP])
            reqs = _add_req(reqs, (ldr, ctrl[C_EP], isr, ctrl[C_PEP], ctrl[C_CEP]))
        return (reps, ctrl, reqs, zombie, hist)

    def _do_restart(self, reps, ctrl, reqs, zombie, hist, r, keep):
        rep = reps[r]
        lossy = keep < len(rep[LOG])
        log = rep[LOG][:keep]
        hw = min(rep[HW], keep)
        if lossy:
            hist = hist[:H_LOSSY] + (hist[H_LOSSY] + 1,) + hist[H_LOSSY + 1:]
            bit = 1 << r
            if (ctrl[C_ISR] | ctrl[C_ELR]) & bit:   # unclean shutdown detected (KAFKA-15586)
                ctrl = (ctrl[C_LDR], ctrl[C_EP], ctrl[C_ISR] & ~bit, ctrl[C_ELR] & ~bit) + ctrl[C_PEP:]
        cep = max(rep[CEP], ctrl[C_CEP])
        if not self.b_no_broker_epoch:
            # the restarted broker registers with a new broker epoch: AlterPartitions that add it
            # and were built from its previous incarnation's fetches carry a stale one
            bit = 1 << r
            reps = tuple(x[:PEND] + (x[PEND] | STALE,) + x[PEND + 1:]
                         if x[PEND] and not x[PEND] & APPLIED and (x[PEND] & ~x[ISR]) & bit else x
                         for x in reps)
        if ctrl[C_EP] >= rep[EP]:
            ldr = ctrl[C_LDR]
            base = (True, log, hw, rep[EP], rep[PEP], cep, NO_LEADER, True, 0, 0, -1, -1)
            if ldr == r:     # cannot happen (a crash removes the leader); kept total for safety
                ldr = NO_LEADER
            nrep = self._become(base, r, ldr, ctrl[C_EP], ctrl[C_ISR], ctrl[C_PEP], cep)
        else:
            nrep = (True, log, hw, rep[EP], rep[PEP], cep, NO_LEADER, True, 0, 0, -1, -1)
        return (_put(reps, r, nrep), ctrl, reqs, zombie, hist)

    def _do_elect(self, reps, ctrl, reqs, zombie, hist, r):
        bit = 1 << r
        if ctrl[C_ISR] & bit:
            isr, elr = ctrl[C_ISR], ctrl[C_ELR]
        else:                                   # from the ELR, the ISR being empty
            isr, elr = bit, ctrl[C_ELR] & ~bit
        ctrl = (r, ctrl[C_EP] + 1, isr, elr, ctrl[C_PEP] + 1, ctrl[C_CEP])
        reqs = _add_req(reqs, (r, ctrl[C_EP], isr, ctrl[C_PEP], ctrl[C_CEP]))
        return (reps, ctrl, reqs, zombie, hist)

    def _do_elect_unclean(self, reps, ctrl, reqs, zombie, hist, r):
        isr = 1 << r
        ctrl = (r, ctrl[C_EP] + 1, isr, 0, ctrl[C_PEP] + 1, ctrl[C_CEP])
        reqs = _add_req(reqs, (r, ctrl[C_EP], isr, ctrl[C_PEP], ctrl[C_CEP]))
        hist = hist[:H_UNCLEAN] + (hist[H_UNCLEAN] + 1,) + hist[H_UNCLEAN + 1:]
        return (reps, ctrl, reqs, zombie, hist)

    def _do_ctrl_failover(self, reps, ctrl, reqs, zombie, hist):
        zombie = (ctrl[C_LDR], ctrl[C_EP], ctrl[C_ISR], ctrl[C_PEP], ctrl[C_CEP])
        cep = ctrl[C_CEP] + 1
        ctrl = ctrl[:C_CEP] + (cep,)
        # the new controller sends its epoch to every live broker (UpdateMetadata)
        reps = tuple(rep[:CEP] + (cep,) + rep[CEP + 1:] if rep[ALIVE] else rep for rep in reps)
        hist = _bump(hist, H_FAILOVERS)
        return (reps, ctrl, reqs, zombie, hist)

    def _do_zombie_elect(self, reps, ctrl, reqs, zombie, hist, r):
        _, ep, isr, pep, cep = zombie
        reqs = _add_req(reqs, (r, ep + 1, isr, pep + 1, cep))
        return (reps, ctrl, reqs, None, hist)

    # --- properties --------------------------------------------------------------------------------
    def view(self, s):
        """Map a state onto the shared view of `invariants/replication.py` (cached for the last state)."""
        c = self._view_cache
        if c[0] is s:
            return c[1]
        if c[2] is s:
            return c[3]
        if c[4] is s:
            return c[5]
        reps, ctrl, reqs, zombie, hist = s
        rv = tuple(ReplicaView(rep[ALIVE], rep[LOG], rep[HW], rep[EP], rep[PEP], rep[CEP], rep[LDR],
                               rep[ISR], self.quorum(rep) if rep[LDR] == i else 0)
                   for i, rep in enumerate(reps))
        v = ReplView(rv, ControllerView(*ctrl), hist[H_ACKED], hist[H_COMMITTED], self.min_isr)
        c[4], c[5], c[2], c[3], c[0], c[1] = c[2], c[3], c[0], c[1], s, v
        return v

    def invariants(self):
        from kverify.invariants import replication as I
        return I.bind(I.ALL, self.view, self.epoch_view)

    def epoch_view(self, s):
        c = self._ev_cache
        if c[0] is s:
            return c[1]
        if c[2] is s:
            return c[3]
        k = s[1]
        v = EpochView(tuple(rep[EP:LDR] for rep in s[0]), (k[C_EP], k[C_PEP], k[C_CEP]))
        c[2], c[3], c[0], c[1] = c[0], c[1], s, v
        return v

    def sometimes(self):
        from kverify.invariants import replication as I
        from kverify.invariants.core import Sometimes
        props = [Sometimes("acked-survives-failover",
                           "a record acked with acks=all is held by a later leader that did not write it",
                           self._acked_survives)]
        if self.min_isr >= 2 and (self.max_records or self.max_crashes):
            props.extend(I.bind_sometimes([I.ELR_USED], self.view))
        if self.max_unclean:
            props.append(Sometimes("unclean-election", "an unclean leader election happens",
                                   lambda s: s[4][H_UNCLEAN] > 0))
        return tuple(props)

    def _acked_survives(self, s) -> bool:
        reps, ctrl, reqs = s[0], s[1], s[2]
        ldr = ctrl[C_LDR]
        if ldr == NO_LEADER or reps[ldr][LDR] != ldr:
            return False
        log = reps[ldr][LOG]
        for o, rec in s[4][H_ACKED]:
            writers = {q[0] for q in reqs if q[1] == rec[0]}
            if ldr not in writers and o < len(log) and log[o] == rec:
                return True
        return False

    def unclean_elections(self, s) -> int:
        return s[4][H_UNCLEAN]

    def is_fault(self, action) -> bool:
        return action[0] in ("crash", "elect_unclean", "ctrl_failover", "zombie_elect")

    def is_quiescent_good(self, s) -> bool:
        reps, ctrl = s[0], s[1]
        ldr = ctrl[C_LDR]
        if ldr == NO_LEADER:
            # offline by design: no replica may be elected without losing data (KIP-966)
            return not any(reps[r][ALIVE] for r in range(self.n) if (ctrl[C_ISR] | ctrl[C_ELR]) >> r & 1)
        rep = reps[ldr]
        return rep[LDR] == ldr and rep[EP] == ctrl[C_EP]

    def participants(self):
        return tuple(f"broker {i}" for i in range(self.n)) + ("controller",)

    def arrow(self, action):
        """Who sends what to whom: fetch/truncate go follower -> leader (answered in the same step),
        AlterPartition leader -> controller, LeaderAndIsr controller -> broker."""
        name = action[0]
        ctl = "controller"
        if name in ("apply", "zombie_elect"):
            return (ctl, f"broker {action[1]}")
        if name == "ctrl_alter":
            return (f"broker {action[1]}", ctl)
        if name == "alter_resp":
            return (ctl, f"broker {action[1]}")
        if name in ("elect", "elect_unclean", "ctrl_failover"):
            return (ctl, ctl)
        return (f"broker {action[1]}", f"broker {action[1]}")

    def describe(self, s) -> dict:
        reps, ctrl, reqs, zombie, hist = s
        def ids(mask):
            return [i for i in range(self.n) if mask >> i & 1]
        return {
            "controller": {"leader": ctrl[C_LDR], "leader_epoch": ctrl[C_EP], "isr": ids(ctrl[C_ISR]),
                           "elr": ids(ctrl[C_ELR]), "partition_epoch": ctrl[C_PEP], "controller_epoch": ctrl[C_CEP]},
            "replicas": [{"id": i, "alive": rep[ALIVE], "log": [f"{rid}@e{ep}" for ep, rid in rep[LOG]],
                          "hw": rep[HW], "leader_epoch": rep[EP], "partition_epoch": rep[PEP],
                          "controller_epoch": rep[CEP], "leader": rep[LDR], "must_truncate": rep[TRUNC],
                          **({"isr": ids(rep[ISR]), "pending_isr": ids(rep[PEND] & MASK) if rep[PEND] else None,
                              "pending_applied": bool(rep[PEND] & APPLIED),
                              "leso": rep[LESO]} if rep[LDR] == i else {})}
                         for i, rep in enumerate(reps)],
            "requests": [{"leader": q[0], "leader_epoch": q[1], "isr": ids(q[2]), "partition_epoch": q[3],
                          "controller_epoch": q[4]} for q in reqs],
            "zombie_controller": None if zombie is None else {"leader": zombie[0], "leader_epoch": zombie[1]},
            "acked": [f"{rec[1]}@{o}" for o, rec in hist[H_ACKED]],
            "true_hw": len(hist[H_COMMITTED]),
        }

    # --- symmetry ----------------------------------------------------------------------------------
    @staticmethod
    def _map_mask(p, m):
        out = 0
        for i, j in enumerate(p):
            if m >> i & 1:
                out |= 1 << j
        return out

    def _permute(self, s, p, mm):
        reps, ctrl, reqs, zombie, hist = s
        pid = self._pid[p]           # pid[x] = p[x], pid[-1] = -1
        nreps = [None] * self.n
        for i, rep in enumerate(reps):
            pend = rep[PEND]
            npend = (mm[pend & MASK] | (pend & ~MASK)) if pend else 0
            nreps[p[i]] = rep[:LDR] + (pid[rep[LDR]], rep[TRUNC], mm[rep[ISR]], npend, rep[LESO], rep[SINCE])
        nctrl = (pid[ctrl[C_LDR]], ctrl[C_EP], mm[ctrl[C_ISR]], mm[ctrl[C_ELR]], ctrl[C_PEP], ctrl[C_CEP])
        if len(reqs) == 1:
            q = reqs[0]
            nreqs = ((pid[q[0]], q[1], mm[q[2]], q[3], q[4]),)
        else:
            nreqs = tuple(sorted([(pid[q[0]], q[1], mm[q[2]], q[3], q[4]) for q in reqs]))
        nz = None if zombie is None else (pid[zombie[0]], zombie[1], mm[zombie[2]], zombie[3], zombie[4])
        return (tuple(nreps), nctrl, nreqs, nz, hist)

    def candidates(self, s, extra=None):
        """Relabellings (p: old index -> new index, mask map or None for the identity) that sort the
        replicas by a label-free signature (plus `extra[i]`, for composed models). The set depends
        only on the orbit of `s`, so the least image over it is a canonical representative."""
        reps, ctrl = s[0], s[1]
        qldr, qisr, qelr = ctrl[C_LDR], ctrl[C_ISR], ctrl[C_ELR]
        sigs = [(rep[:LDR], rep[TRUNC], rep[LESO], rep[SINCE], rep[LDR] == i, rep[LDR] == NO_LEADER, i == qldr,
                 qisr >> i & 1, qelr >> i & 1, rep[ISR] >> i & 1, rep[PEND] != 0, extra[i] if extra else 0)
                for i, rep in enumerate(reps)]
        order = sorted(range(self.n), key=sigs.__getitem__)
        for k in range(self.n - 1):
            if sigs[order[k]] == sigs[order[k + 1]]:
                break
        else:
            return (self._by_order[tuple(order)],)
        out = []
        last = self.n - 1
        for p, mm in self._all_perms:
            inv = self._inverse[p]
            for k in range(last):
                if sigs[inv[k]] > sigs[inv[k + 1]]:
                    break
            else:
                out.append((p, mm))
        return out

    def permute(self, s, p, mm):
        return s if mm is None else self._permute(s, p, mm)

    def canonical(self, s):
        if not self.use_symmetry:
            return s
        cands = self.candidates(s)
        if len(cands) == 1:
            p, mm = cands[0]
            return s if mm is None else self._permute(s, p, mm)
        best = None
        for p, mm in cands:
            t = s if mm is None else self._permute(s, p, mm)
            if best is None or t < best:
                best = t
        return best

    def fingerprint(self, s) -> int:
        return hash(self.canonical(s))


def fetched_hw(lrep, leo: int) -> int:
    """The HW a follower whose LEO is `leo` takes from a fetch response of leader `lrep`: the
    leader's HW, capped at that LEO (Kafka's follower `updateHighWatermark`)."""
    return min(lrep[HW], leo)


def _put(reps, r, rep):
    return reps[:r] + (rep,) + reps[r + 1:]


def _truncated(rep, cut):
    return rep[:LOG] + (rep[LOG][:cut], min(rep[HW], cut)) + rep[HW + 1:TRUNC] + (False,) + rep[TRUNC + 1:]


def _bump(hist, i):
    return hist[:i] + (hist[i] + 1,) + hist[i + 1:]


def _add_req(reqs, q):
    """Requests are kept sorted so that equal sets compare equal (and symmetry can sort them)."""
    return tuple(sorted(reqs + (q,)))


def make(params: dict, behaviours: frozenset = frozenset()) -> ReplicationModel:
    return ReplicationModel(params, behaviours)
