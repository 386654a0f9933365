"""Abstract model of a group's coordinator state on the replicated __consumer_offsets partition.

Why it exists: the group model treats the coordinator's storage as perfect; here the storage is the
replication model (`model/replication.py`, reused as is: same rules, same behaviours), and the
coordinator is whichever replica leads the offsets partition. It checks that coordinator failover,
by clean or unclean election, never loses what was acknowledged (offset commits) or delivered
(assignments), while allowing what Kafka legitimately loses (coordinator.md §8.4-8.6,
replication.md facts 64-67).

The coordinator layer on top of the replication state:
- a replica that becomes leader of the partition loads the group from its whole log (to the LEO,
  fact 65): generation and assignment of the last group record, offsets of the last commit records;
- `join`: a join phase completes in memory: generation + 1 with a new assignment, not yet persisted;
- `sync`: the leader's SyncGroup persists (generation, assignment) with acks=all; the assignment is
  *delivered* to the members when that append is acknowledged (the HW passes it);
- `commit(p)`: an offset commit appends (p, next offset) with acks=all; acknowledged when the HW
  passes it;
- losing leadership (a newer LeaderAndIsr, a crash, or another replica loading the group) unloads it;
  a generation completed in memory but never persisted is then lost and its number will be reused:
  allowed, because nobody received an assignment under it.
Only a replica that becomes leader in the controller's *current* epoch loads the group: that is the
coordinator FindCoordinator sends members to. A replica acting on a stale LeaderAndIsr (a zombie
leader) does not take the group over, and a deposed coordinator that has not yet heard is not
modelled serving (its writes could not be acknowledged past the new leader anyway).

Invariants: the replication invariants, `generation-monotonicity` and `valid-state-transition` of
`invariants/group.py` (over a `GroupView` mapping), and `acked-commit-durable` of
`invariants/offsets.py`.
"""
from __future__ import annotations

from kverify.invariants import group as G
from kverify.invariants.core import Sometimes
from kverify.invariants.offsets import OffsetsView
from kverify.model import replication as R
from kverify.model.protocol import Protocol

SUPPORTS = R.SUPPORTS

# ("rs", "replication"): a field holding a whole replication state (kverify/tla/models.py convention)
STATE_FIELDS = (("rs", "replication"), "coord", "payloads", "hist")
ACTION_NAMES = (R.ACTION_NAMES - {"write"}) | {"join", "sync", "commit"}

PARAMS = {
    "replicas": (3, "replicas of the offsets partition (2-3)"),
    "records": (2, "records the coordinator may append (group records + commits)"),
    "epochs": (2, "highest leader epoch of the offsets partition"),
    "min_isr": (2, "min.insync.replicas of __consumer_offsets"),
    "init_isr": (0, "size of the initial ISR (0 = every replica)"),
    "alters": (0, "ISR changes leaders may propose"),
    "crashes": (1, "replica crashes allowed"),
    "lossy": (0, "restarts that lose a log suffix allowed"),
    "ctrl_failovers": (0, "controller failovers allowed"),
    "unclean": (1, "unclean elections allowed (only with behaviour unclean-election)"),
    "joins": (1, "join phases that may complete (each makes a new generation)"),
    "partitions": (1, "data partitions whose offsets the group commits (1-2)"),
    "symmetry": (True, "reduce states by permuting interchangeable replicas"),
}

# Assignments of 2 data partitions over 2 members (per member a partition bitmask), in the order
# successive joins produce them: every join yields a different assignment.
ASSIGNMENTS = ((0b01, 0b10), (0b10, 0b01), (0b11, 0b00), (0b00, 0b11))

# coord tuple: (owner replica or -1, generation in memory, pending assignment index or -1,
#               loads so far, assignment index of `generation` or -1)
O_OWNER, O_GEN, O_PEND, O_LOADS, O_ASG = range(5)
# history tuple: (joins so far, next offset per partition, lost generations ((gen, asg), ...))
X_JOINS, X_NEXT, X_LOST = range(3)
GROUP, COMMIT = "g", "o"


class OffsetsModel(Protocol):
    name = "offsets"

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        self.params = dict(params)
        self.behaviours = frozenset(behaviours)
        rp = {k: params[k] for k in R.PARAMS if k in params}
        self.repl = R.ReplicationModel(rp, behaviours)
        self.n = self.repl.n
        self.max_joins = int(params["joins"])
        if not 0 <= self.max_joins <= len(ASSIGNMENTS):
            raise ValueError(f"offsets: joins must be between 0 and {len(ASSIGNMENTS)}, got {self.max_joins}")
        self._gv_cache = [None, None, None, None]
        self.parts = int(params["partitions"])
        if not 1 <= self.parts <= 2:
            raise ValueError(f"offsets: partitions must be 1 or 2, got {self.parts}")
        from kverify.invariants import offsets as O
        from kverify.invariants import replication as I
        group_invs = {inv.name: inv for inv in G.group_invariants(self.group_view, self.group_step_views)}
        self._invs = (I.bind(I.ALL, self.repl_view, self.repl_epoch_view)
                      + (O.bind(self.offsets_view), group_invs["generation-monotonicity"],
                         group_invs["valid-state-transition"]))

    # --- states ------------------------------------------------------------------------------------
    def init_states(self):
        rs = self.repl.init_states()[0]
        coord = (0, 0, -1, 1, -1)          # replica 0 leads and has loaded the (empty) group
        return [(rs, coord, (), (0, (0,) * self.parts, ()))]

    def _can_append(self, rs, r) -> bool:
        rep = rs[0][r]
        return rs[4][R.H_NEXT] <= self.repl.max_records and R.popcount(rep[R.ISR]) >= self.repl.min_isr

    def actions(self, s):
        rs, coord, payloads, hist = s
        out = [a for a in self.repl.actions(rs) if a[0] != "write"]
        o = coord[O_OWNER]
        if o >= 0 and rs[0][o][R.ALIVE] and rs[0][o][R.LDR] == o:
            if coord[O_PEND] < 0 and hist[X_JOINS] < self.max_joins:
                out.append(("join", o))
            if self._can_append(rs, o):
                if coord[O_PEND] >= 0:
                    out.append(("sync", o))
                for p in range(self.parts):
                    out.append(("commit", o, p))
        return out

    def step(self, s, a):
        rs, coord, payloads, hist = s
        name = a[0]
        if name == "join":
            coord = coord[:O_GEN] + (coord[O_GEN] + 1, hist[X_JOINS]) + coord[O_LOADS:]
            hist = (hist[X_JOINS] + 1,) + hist[1:]
            return (rs, coord, payloads, hist)
        if name == "sync":
            rs = self.repl.step(rs, ("write", a[1]))
            payloads = payloads + ((GROUP, coord[O_GEN], coord[O_PEND]),)
            coord = coord[:O_PEND] + (-1, coord[O_LOADS], coord[O_PEND])
            return (rs, coord, payloads, hist)
        if name == "commit":
            p = a[2]
            nxt = hist[X_NEXT]
            value = nxt[p] + 1
            rs = self.repl.step(rs, ("write", a[1]))
            payloads = payloads + ((COMMIT, p, value),)
            hist = (hist[X_JOINS], nxt[:p] + (value,) + nxt[p + 1:], hist[X_LOST])
            return (rs, coord, payloads, hist)
        # a replication action, then the coordinator follows leadership
        before = rs
        rs = self.repl.step(rs, a)
        o = coord[O_OWNER]
        if name == "apply":
            r = a[1]
            ctrl = rs[1]
            if (rs[0][r][R.LDR] == r and before[0][r][R.LDR] != r
                    and ctrl[R.C_LDR] == r and rs[0][r][R.EP] == ctrl[R.C_EP]):
                coord, hist = self._unload(coord, hist)
                gen, asg = self._load(rs[0][r][R.LOG], payloads)
                coord = (r, gen, -1, coord[O_LOADS] + 1, asg)
                return (rs, coord, payloads, hist)
        if o >= 0 and (not rs[0][o][R.ALIVE] or rs[0][o][R.LDR] != o):
            coord, hist = self._unload(coord, hist)
        return (rs, coord, payloads, hist)

    @staticmethod
    def _unload(coord, hist):
        if coord[O_OWNER] < 0:
            return coord, hist
        if coord[O_PEND] >= 0:     # completed in memory, never persisted: lost (number reused later)
            lost = tuple(sorted(hist[X_LOST] + ((coord[O_GEN], coord[O_PEND]),)))
            hist = hist[:X_LOST] + (lost,)
        return (-1, coord[O_GEN], -1, coord[O_LOADS], coord[O_ASG]), hist

    @staticmethod
    def _load(log, payloads):
        gen, asg = 0, -1
        for rec in log:
            pl = payloads[rec[1] - 1]
            if pl[0] == GROUP:
                gen, asg = pl[1], pl[2]
        return gen, asg

    # --- views ---------------------------------------------------------------------------------------
    def repl_view(self, s):
        return self.repl.view(s[0])

    def repl_epoch_view(self, s):
        return self.repl.epoch_view(s[0])

    def _acked_payloads(self, s):
        payloads = s[2]
        return [(o, rec, payloads[rec[1] - 1]) for o, rec in s[0][4][R.H_ACKED]]

    def delivered(self, s) -> tuple:
        return tuple(sorted({(pl[1], ASSIGNMENTS[pl[2]]) for _, _, pl in self._acked_payloads(s) if pl[0] == GROUP}))

    def acked_offsets(self, s) -> tuple:
        acked = [0] * self.parts
        for _, _, pl in self._acked_payloads(s):
            if pl[0] == COMMIT and pl[2] > acked[pl[1]]:
                acked[pl[1]] = pl[2]
        return tuple(acked)

    def served_offsets(self, s) -> tuple:
        rs, coord, payloads = s[0], s[1], s[2]
        served = [0] * self.parts
        o = coord[O_OWNER]
        if o < 0:
            return tuple(served)
        for rec in rs[0][o][R.LOG]:
            pl = payloads[rec[1] - 1]
            if pl[0] == COMMIT:
                served[pl[1]] = pl[2]
        return tuple(served)

    def is_current(self, s) -> bool:
        rs, coord = s[0], s[1]
        o = coord[O_OWNER]
        ctrl = rs[1]
        return o >= 0 and ctrl[R.C_LDR] == o and rs[0][o][R.EP] == ctrl[R.C_EP]

    def offsets_view(self, s):
        return OffsetsView(s[1][O_OWNER], self.is_current(s), self.served_offsets(s), self.acked_offsets(s))

    def group_view(self, s):
        """The group as `invariants/group.py` sees it: no member processes here (clients = ())."""
        c = self._gv_cache
        if c[0] is s:
            return c[1]
        if c[2] is s:
            return c[3]
        v = self._group_view(s)
        c[2], c[3], c[0], c[1] = c[0], c[1], s, v
        return v

    def _group_view(self, s):
        coord = s[1]
        if coord[O_OWNER] < 0:
            state = G.DEAD
        elif coord[O_PEND] >= 0:
            state = G.COMPLETING
        elif coord[O_GEN] > 0:
            state = G.STABLE
        else:
            state = G.EMPTY
        asg = ASSIGNMENTS[coord[O_ASG]] if coord[O_ASG] >= 0 and coord[O_PEND] < 0 else None
        offsets = self.served_offsets(s)
        return G.GroupView(epoch=coord[O_LOADS], state=state, generation=coord[O_GEN], leader=-1, members=0,
                           assignment=asg, offsets=offsets, clients=(), delivered=self.delivered(s))

    def group_step_views(self, prev, action, nxt):
        a, b = self.group_view(prev), self.group_view(nxt)
        if action[0] == "join":
            b = b._replace(passed=(G.PREPARING,))
        return a, b

    # --- properties --------------------------------------------------------------------------------
    def invariants(self):
        return self._invs

    def sometimes(self):
        props = [
            Sometimes("commit-survives-failover",
                      "an acknowledged commit is served by a coordinator on another broker than its writer",
                      self._commit_survives),
        ]
        if self.max_joins >= 2 and self.repl.max_crashes + self.repl.max_epoch >= 2:
            props.append(Sometimes("lost-generation-reused",
                                   "a generation completed in memory is lost by a failover and its number delivered again",
                                   self._lost_reused))
        if self.repl.max_unclean:
            props.append(Sometimes("unclean-election", "an unclean election of the offsets partition happens",
                                   lambda s: s[0][4][R.H_UNCLEAN] > 0))
        return tuple(props)

    def _commit_survives(self, s) -> bool:
        if not self.is_current(s):
            return False
        rs = s[0]
        o = s[1][O_OWNER]
        served = self.served_offsets(s)
        for _, rec, pl in self._acked_payloads(s):
            if pl[0] == COMMIT and served[pl[1]] >= pl[2]:
                writers = {q[0] for q in rs[2] if q[1] == rec[0]}
                if o not in writers:
                    return True
        return False

    def _lost_reused(self, s) -> bool:
        lost = s[3][X_LOST]
        if not lost:
            return False
        delivered = self.delivered(s)
        return any(g == lg and asg != ASSIGNMENTS[la] for lg, la in lost for g, asg in delivered)

    def is_fault(self, action) -> bool:
        return self.repl.is_fault(action)

    def is_quiescent_good(self, s) -> bool:
        return self.repl.is_quiescent_good(s[0])

    def participants(self):
        return self.repl.participants()

    def arrow(self, action):
        if action[0] in ("join", "sync", "commit"):
            return (f"broker {action[1]}", f"broker {action[1]}")
        return self.repl.arrow(action)

    def describe(self, s) -> dict:
        rs, coord, payloads, hist = s
        d = self.repl.describe(rs)
        for rep in d["replicas"]:
            rep["log"] = [_fmt_payload(payloads[rec[1] - 1]) + f"@e{rec[0]}" for rec in rs[0][rep["id"]][R.LOG]]
        d["coordinator"] = {"broker": coord[O_OWNER], "generation": coord[O_GEN],
                            "unpersisted_assignment": None if coord[O_PEND] < 0 else list(ASSIGNMENTS[coord[O_PEND]]),
                            "loads": coord[O_LOADS], "served": list(self.served_offsets(s))}
        d["acked_offsets"] = list(self.acked_offsets(s))
        d["delivered"] = [[g, list(a)] for g, a in self.delivered(s)]
        d["lost_generations"] = [[g, list(ASSIGNMENTS[a])] for g, a in hist[X_LOST]]
        return d

    # --- symmetry ----------------------------------------------------------------------------------
    def canonical(self, s):
        if not self.repl.use_symmetry:
            return s
        rs, coord, payloads, hist = s
        o = coord[O_OWNER]
        extra = [1 if i == o else 0 for i in range(self.n)]
        best = None
        for p, mm in self.repl.candidates(rs, extra):
            t = (self.repl.permute(rs, p, mm), coord if o < 0 or mm is None else (p[o],) + coord[1:],
                 payloads, hist)
            if best is None or t < best:
                best = t
        return best

    def fingerprint(self, s) -> int:
        return hash(self.canonical(s))


def _fmt_payload(pl) -> str:
    if pl[0] == GROUP:
        return f"group(gen {pl[1]}, {list(ASSIGNMENTS[pl[2]])})"
    return f"commit(p{pl[1]}={pl[2]})"


def make(params: dict, behaviours: frozenset = frozenset()) -> OffsetsModel:
    return OffsetsModel(params, behaviours)
