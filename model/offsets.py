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

State: `OffsetsState` below (the replication state of the offsets partition as `storage`, then the
coordinator layer); actions: the replication actions except `write` (each followed by the
coordinator following leadership), then `join`, `sync`, `commit` -- one disjunct each in
specs/OffsetsFailover.tla.

Invariants: the replication invariants, `generation-monotonicity` and `valid-state-transition` of
`invariants/group.py` (over a `GroupView` mapping), and `acked-commit-durable` of
`invariants/offsets.py`.
"""

from __future__ import annotations

from typing import NamedTuple

from kverify.invariants import group as G
from kverify.invariants.core import Sometimes
from kverify.invariants.offsets import OffsetsView
from kverify.model import replication as R
from kverify.model.actions import Action, ActionTable
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param
from kverify.tla import values as V

SUPPORTS = R.SUPPORTS

PARAMS = {
    "replicas": Param(3, "replicas of the offsets partition (2-3)", lo=2, hi=3),
    "records": Param(2, "records the coordinator may append (group records + commits)", lo=0),
    "epochs": Param(2, "highest leader epoch of the offsets partition", lo=0),
    "min_isr": Param(2, "min.insync.replicas of __consumer_offsets", lo=1),
    "init_isr": Param(0, "size of the initial ISR (0 = every replica)", lo=0),
    "alters": Param(0, "ISR changes leaders may propose", lo=0),
    "crashes": Param(1, "replica crashes allowed", lo=0),
    "lossy": Param(0, "restarts that lose a log suffix allowed", lo=0),
    "ctrl_failovers": Param(0, "controller failovers allowed", lo=0),
    "unclean": Param(1, "unclean elections allowed (only with behaviour unclean-election)", lo=0),
    "joins": Param(1, "join phases that may complete (each makes a new generation)", lo=0, hi=4),
    "partitions": Param(1, "data partitions whose offsets the group commits (1-2)", lo=1, hi=2),
    "symmetry": Param(True, "reduce states by permuting interchangeable replicas"),
}

# Assignments of 2 data partitions over 2 members (per member a partition bitmask), in the order
# successive joins produce them: every join yields a different assignment.
ASSIGNMENTS = ((0b01, 0b10), (0b10, 0b01), (0b11, 0b00), (0b00, 0b11))
NONE = -1
GROUP, COMMIT = "g", "o"      # payload kinds (the kind is the first field: payloads of both kinds compare)


class Coordinator(NamedTuple):
    """The group as the coordinator has it in memory."""
    owner: int          # replica whose coordinator has the group loaded, NONE
    generation: int
    pending: int        # assignment index of a join completed in memory, not yet persisted, NONE
    loads: int          # loads so far (each one a new coordinator epoch)
    assignment: int     # assignment index of `generation` (as persisted or loaded), NONE


class GroupRecord(NamedTuple):
    """What a SyncGroup appended: the generation and its assignment."""
    kind: str           # GROUP
    generation: int
    assignment: int     # index into ASSIGNMENTS


class OffsetCommit(NamedTuple):
    """What an OffsetCommit appended: the next offset of one data partition."""
    kind: str           # COMMIT
    partition: int
    offset: int


class LostGeneration(NamedTuple):
    generation: int
    assignment: int


class OffsetsState(NamedTuple):
    storage: R.State        # the __consumer_offsets partition (the replication model's state)
    coordinator: Coordinator
    payloads: tuple         # record id - 1 -> GroupRecord | OffsetCommit
    joins: int              # join phases completed so far
    next_offset: tuple      # per data partition: the offset the last commit wrote (0: none)
    lost: tuple             # sorted LostGenerations: completed in memory, lost by an unload


# Names of a state's top-level fields ((field, model): a whole state of another model, whose fields
# become TLA+ variables) and every action name (the TLA+ cross-check reads them).
STATE_FIELDS = (("storage", "replication"),) + OffsetsState._fields[1:]


def _payload(s: OffsetsState, rec: R.Record):
    return s.payloads[rec.id - 1]


# --- the coordinator follows leadership of the offsets partition ---------------------------------
def _unload(c: Coordinator, lost: tuple):
    """The group leaves memory; a generation completed in memory but never persisted is lost (its
    number will be reused: allowed, nobody received an assignment under it)."""
    if c.owner < 0:
        return c, lost
    if c.pending >= 0:
        lost = tuple(sorted(lost + (LostGeneration(c.generation, c.pending),)))
    return Coordinator(NONE, c.generation, NONE, c.loads, c.assignment), lost


def _load(s: OffsetsState, log) -> tuple:
    """(generation, assignment) of the last group record of a log (fact 65: loaded to the LEO)."""
    gen, asg = 0, NONE
    for rec in log:
        pl = _payload(s, rec)
        if pl.kind == GROUP:
            gen, asg = pl.generation, pl.assignment
    return gen, asg


_new = tuple.__new__        # builds a NamedTuple from its fields in declaration order (no Python-level __new__)


def _follow(m, s: OffsetsState, name: str, args: tuple, storage: R.State) -> OffsetsState:
    """After a replication action: a replica that newly leads in the controller's current epoch loads
    the group (only `apply` makes a leader); an owner that crashed or stopped leading unloads it."""
    c, lost = s.coordinator, s.lost
    if name == "apply":
        r = args[0]
        rep, ctrl = storage.replicas[r], storage.controller
        if (rep.leader == r and s.storage.replicas[r].leader != r
                and ctrl.leader == r and rep.leader_epoch == ctrl.leader_epoch):
            c, lost = _unload(c, lost)
            gen, asg = _load(s, rep.log)
            c = _new(Coordinator, (r, gen, NONE, c.loads + 1, asg))
            return _new(OffsetsState, (storage, c, s.payloads, s.joins, s.next_offset, lost))
    o = c.owner
    if o >= 0:
        rep = storage.replicas[o]
        if not (rep.alive and rep.leader == o):
            c, lost = _unload(c, lost)
    return _new(OffsetsState, (storage, c, s.payloads, s.joins, s.next_offset, lost))


def _storage_action(a: Action) -> Action:
    """A replication action on the offsets partition, then the coordinator follows leadership. Its
    domain is the replication actions of that name enabled on the partition (the replication table's
    compiled enumeration, run once per state: `OffsetsModel.storage_enabled`), the same tuples as
    this action's (same name, same arguments), so the compiled enumerator need not test its guard,
    the replication guard, again, nor build them anew."""
    name, guard, update = a.name, a.guard, a.update

    def domain(m, s):
        return (m._storage_enabled if m._storage_for is s else m.storage_enabled(s)).get(name, ())

    return Action(name,
                  lambda m, s, *args: guard(m.repl, s.storage, *args),
                  lambda m, s, *args: _follow(m, s, name, args, update(m.repl, s.storage, *args)),
                  domain, fault=a.fault, doc=a.doc, domain_enabled=True, domain_actions=True)


# --- the group's own actions --------------------------------------------------------------------
def _owner(m, s):
    """The coordinator's replica (none when no replica has the group loaded); its guards ask whether
    it still serves. One expression, so that the compiled enumerator inlines it."""
    return m.owner_args[s.coordinator.owner + 1]


def _owner_partitions(m, s):
    """(the coordinator's replica, data partition) for every data partition."""
    return m.owner_partition_args[s.coordinator.owner + 1]


def _can_append(m, s: OffsetsState, o: int) -> bool:
    """The coordinator's append is accepted (acks=all): R.write's guard on the owner."""
    return R.write_guard(m.repl, s.storage, o)


def _serves(s: OffsetsState, o: int) -> bool:
    """Replica o has the group loaded, runs, and still believes it leads the partition."""
    return s.coordinator.owner == o and s.storage.replicas[o].alive and s.storage.replicas[o].leader == o


def join_guard(m, s, o):
    """A join phase completes in memory (needs no append)."""
    return _serves(s, o) and s.coordinator.pending < 0 and s.joins < m.max_joins


def join(m, s, o):
    storage, c, payloads, joins, next_offset, lost = s
    c = _new(Coordinator, (c.owner, c.generation + 1, joins, c.loads, c.assignment))      # pending: this join
    return _new(OffsetsState, (storage, c, payloads, joins + 1, next_offset, lost))


def sync_guard(m, s, o):
    """The leader's SyncGroup persists the new generation and its assignment (acks=all)."""
    return _serves(s, o) and s.coordinator.pending >= 0 and _can_append(m, s, o)


def sync(m, s, o):
    storage, c, payloads, joins, next_offset, lost = s
    record = _new(GroupRecord, (GROUP, c.generation, c.pending))
    c = _new(Coordinator, (c.owner, c.generation, NONE, c.loads, c.pending))      # the pending assignment persisted
    return _new(OffsetsState, (R.write(m.repl, storage, o), c, payloads + (record,), joins, next_offset, lost))


def commit_guard(m, s, o, p):
    """An offset commit for data partition p appends its next offset (acks=all)."""
    return _serves(s, o) and 0 <= p < m.parts and _can_append(m, s, o)


def commit(m, s, o, p):
    storage, c, payloads, joins, next_offset, lost = s
    offset = next_offset[p] + 1
    return _new(OffsetsState, (R.write(m.repl, storage, o), c, payloads + (_new(OffsetCommit, (COMMIT, p, offset)),),
                               joins, next_offset[:p] + (offset,) + next_offset[p + 1:], lost))


ACTIONS = ActionTable([_storage_action(a) for a in R.ACTIONS.actions if a.name != "write"] + [
    Action("join", join_guard, join, _owner),
    Action("sync", sync_guard, sync, _owner),
    Action("commit", commit_guard, commit, _owner_partitions),
])
ACTION_NAMES = ACTIONS.names()


class OffsetsModel(Protocol):
    name = "offsets"

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        self.params = dict(params)             # complete and validated by the registry (SPEC below)
        self.behaviours = frozenset(behaviours)
        rp = {k: params[k] for k in R.PARAMS if k in params}
        self.repl = R.ReplicationModel(rp, behaviours)
        self.n = self.repl.n
        self.max_joins = params["joins"]                 # at most len(ASSIGNMENTS)
        self.parts = params["partitions"]
        self._gv_cache = [None, None]       # the last two (coordinator, payloads, acked, log, view)
        self._gsv_last = (None, None, None, None)    # (nxt, prev, action, step views) of the last transition
        self._storage_for, self._storage_enabled = None, None
        # per owner + 1 (NONE first): the replica marked as the coordinator's for symmetry (`canonical`),
        # and the domains of join/sync/commit
        self.owner_marks = tuple(tuple(1 if i == o else 0 for i in range(self.n)) for o in range(-1, self.n))
        self.owner_args = ((),) + tuple(((o,),) for o in range(self.n))
        self.owner_partition_args = ((),) + tuple(tuple((o, p) for p in range(self.parts)) for o in range(self.n))
        self.action_table = ACTIONS
        from kverify.invariants import offsets as O
        from kverify.invariants import replication as I
        group_invs = {inv.name: inv for inv in G.group_invariants(self.group_view, self.group_step_views)}
        self._invs = (I.bind(I.ALL, self.repl_view, self.repl_epoch_view)
                      + (O.bind(self.offsets_view), group_invs["generation-monotonicity"],
                         group_invs["valid-state-transition"]))

    # --- states and actions --------------------------------------------------------------------------
    def init_states(self):
        """Replica 0 leads and has loaded the (empty) group."""
        return [OffsetsState(self.repl.init_states()[0], Coordinator(0, 0, NONE, 1, NONE), (), 0,
                             (0,) * self.parts, ())]

    def actions(self, s):
        return self.action_table.enabled(self, s)

    def step(self, s, a):
        return self.action_table.updates[a[0]](self, s, *a[1:])     # ActionTable.step, one call fewer

    def is_fault(self, action) -> bool:
        return self.action_table.is_fault(action)

    def storage_enabled(self, s) -> dict:
        """The replication actions enabled on the offsets partition, `{name: [action, ...]}` in the
        replication table's order (cached for the state being enumerated)."""
        if self._storage_for is s:
            return self._storage_enabled
        by_name: dict = {}
        for action in self.repl.actions(s.storage):
            same = by_name.get(action[0])
            if same is None:
                by_name[action[0]] = [action]
            else:
                same.append(action)
        self._storage_for, self._storage_enabled = s, by_name
        return by_name

    # --- views ---------------------------------------------------------------------------------------
    def repl_view(self, s):
        return self.repl.view(s.storage)

    def repl_epoch_view(self, s):
        return self.repl.epoch_view(s.storage)

    def _acked_payloads(self, s):
        return [(a, _payload(s, a.record)) for a in s.storage.acked]

    def delivered(self, s) -> tuple:
        return tuple(sorted({(pl.generation, ASSIGNMENTS[pl.assignment])
                             for _, pl in self._acked_payloads(s) if pl.kind == GROUP}))

    def acked_offsets(self, s) -> tuple:
        acked = [0] * self.parts
        for _, pl in self._acked_payloads(s):
            if pl.kind == COMMIT and pl.offset > acked[pl.partition]:
                acked[pl.partition] = pl.offset
        return tuple(acked)

    def served_offsets(self, s) -> tuple:
        served = [0] * self.parts
        o = s.coordinator.owner
        if o < 0:
            return tuple(served)
        for rec in s.storage.replicas[o].log:
            pl = _payload(s, rec)
            if pl.kind == COMMIT:
                served[pl.partition] = pl.offset
        return tuple(served)

    def is_current(self, s) -> bool:
        o = s.coordinator.owner
        ctrl = s.storage.controller
        return o >= 0 and ctrl.leader == o and s.storage.replicas[o].leader_epoch == ctrl.leader_epoch

    def offsets_view(self, s):
        return OffsetsView(s.coordinator.owner, self.is_current(s), self.served_offsets(s), self.acked_offsets(s))

    def group_view(self, s):
        """The group as `invariants/group.py` sees it: no member processes here (clients = ()). It is
        a function of the coordinator, the payloads, the acknowledged records and the coordinator's
        log alone, so the last two views are reused while those are the same objects (as after most
        replication steps: a follower's fetch or a LeaderAndIsr leaves them untouched)."""
        c = s.coordinator
        storage = s.storage
        log = storage.replicas[c.owner].log if c.owner >= 0 else None
        payloads, acked = s.payloads, storage.acked
        last, before = self._gv_cache
        if last is not None and last[0] is c and last[1] is payloads and last[2] is acked and last[3] is log:
            return last[4]
        if before is not None and before[0] is c and before[1] is payloads and before[2] is acked and before[3] is log:
            self._gv_cache = [before, last]
            return before[4]
        v = self._group_view(s)
        self._gv_cache = [(c, payloads, acked, log, v), last]
        return v

    def _group_view(self, s):
        c = s.coordinator
        if c.owner < 0:
            state = G.DEAD
        elif c.pending >= 0:
            state = G.COMPLETING
        elif c.generation > 0:
            state = G.STABLE
        else:
            state = G.EMPTY
        asg = ASSIGNMENTS[c.assignment] if c.assignment >= 0 and c.pending < 0 else None
        return G.GroupView(epoch=c.loads, state=state, generation=c.generation, leader=-1, members=0,
                           assignment=asg, offsets=self.served_offsets(s), clients=(), delivered=self.delivered(s))

    def group_step_views(self, prev, action, nxt):
        """(view of prev, view of nxt) of a transition; both group step invariants ask for the same
        transition one after the other, so the last answer is kept."""
        last = self._gsv_last
        if last[0] is nxt and last[1] is prev and last[2] is action:
            return last[3]
        a, b = self.group_view(prev), self.group_view(nxt)
        if action[0] == "join":
            b = b._replace(passed=(G.PREPARING,))
        self._gsv_last = (nxt, prev, action, (a, b))
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
                                   lambda s: s.storage.spent.unclean > 0))
        return tuple(props)

    def _commit_survives(self, s) -> bool:
        if not self.is_current(s):
            return False
        o = s.coordinator.owner
        served = self.served_offsets(s)
        for a, pl in self._acked_payloads(s):
            if pl.kind == COMMIT and served[pl.partition] >= pl.offset:
                writers = {q.leader for q in s.storage.requests if q.leader_epoch == a.record.epoch}
                if o not in writers:
                    return True
        return False

    def _lost_reused(self, s) -> bool:
        if not s.lost:
            return False
        delivered = self.delivered(s)
        return any(g == x.generation and asg != ASSIGNMENTS[x.assignment] for x in s.lost for g, asg in delivered)

    def is_quiescent_good(self, s) -> bool:
        return self.repl.is_quiescent_good(s.storage)

    def participants(self):
        return self.repl.participants()

    def arrow(self, action):
        if action[0] in ("join", "sync", "commit"):
            return (f"broker {action[1]}", f"broker {action[1]}")
        return self.repl.arrow(action)

    def describe(self, s) -> dict:
        d = self.repl.describe(s.storage)
        for rep in d["replicas"]:
            rep["log"] = [_fmt_payload(_payload(s, rec)) + f"@e{rec.epoch}"
                          for rec in s.storage.replicas[rep["id"]].log]
        c = s.coordinator
        d["coordinator"] = {"broker": c.owner, "generation": c.generation,
                            "unpersisted_assignment": None if c.pending < 0 else list(ASSIGNMENTS[c.pending]),
                            "loads": c.loads, "served": list(self.served_offsets(s))}
        d["acked_offsets"] = list(self.acked_offsets(s))
        d["delivered"] = [[g, list(a)] for g, a in self.delivered(s)]
        d["lost_generations"] = [[x.generation, list(ASSIGNMENTS[x.assignment])] for x in s.lost]
        return d

    def tla_state(self, s) -> dict:
        """The state as specs/OffsetsFailover.tla's variables."""
        function, record = V.function, V.record
        out = self.repl.tla_state(s.storage)
        c = s.coordinator
        out["coordinator"] = record(owner=c.owner, generation=c.generation, pending=c.pending, loads=c.loads,
                                    assignment=c.assignment)
        out["payloads"] = tuple(record(kind="group", generation=pl.generation, assignment=pl.assignment)
                                if pl.kind == GROUP else record(kind="commit", partition=pl.partition, offset=pl.offset)
                                for pl in s.payloads)
        out["joins"] = s.joins
        out["nextOffset"] = function(dict(enumerate(s.next_offset)))
        out["lost"] = frozenset(record(generation=x.generation, assignment=x.assignment) for x in s.lost)
        return out

    # --- symmetry ----------------------------------------------------------------------------------
    def canonical(self, s, named: bool = True):
        """The least image of `s` over the replication model's candidate relabellings, the coordinator's
        replica marked (`named=False`: as plain tuples, see ReplicationModel._permute)."""
        if not self.repl.use_symmetry:
            return s
        c = s.coordinator
        o = c.owner
        best = None
        for p, mm in self.repl.candidates(s.storage, self.owner_marks[o + 1]):
            if mm is None:
                t = s
            else:
                nc = c
                if o >= 0:
                    nc = (p[o], c.generation, c.pending, c.loads, c.assignment)
                    if named:
                        nc = _new(Coordinator, nc)
                t = (self.repl._permute(s.storage, p, mm, named), nc, s.payloads, s.joins, s.next_offset, s.lost)
                if named:
                    t = _new(OffsetsState, t)
            if best is None or t < best:
                best = t
        return best

    def fingerprint(self, s) -> int:
        """hash(canonical(s)), hashed on the plain-tuple image (the same value)."""
        return hash(self.canonical(s, False))


def _fmt_payload(pl) -> str:
    if pl.kind == GROUP:
        return f"group(gen {pl.generation}, {list(ASSIGNMENTS[pl.assignment])})"
    return f"commit(p{pl.partition}={pl.offset})"


def make(params: dict, behaviours: frozenset = frozenset()) -> OffsetsModel:
    return OffsetsModel(params, behaviours)


def tla_state(proto: OffsetsModel, s: OffsetsState) -> dict:
    """The state as specs/OffsetsFailover.tla's variables (kverify/tla/values.py forms)."""
    return proto.tla_state(s)


SPEC = ModelSpec(name="offsets", make=make, params=PARAMS, supports=SUPPORTS, check=R.check_params,
                 state_fields=STATE_FIELDS, action_names=ACTION_NAMES, tla_state=tla_state)
