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
How to read it (the same layout as specs/Replication.tla, which kverify/tla checks state set against
state set): the state is `State` and its parts (`Replica`, `Controller`, `LeaderAndIsr`,
`AlterPartition`, `Record`, `Acked`, `Spent`), NamedTuples named as the protocol names them; each
action is one guard and one update (`write_guard` / `write`, ...) collected in `ACTIONS`, the
`ActionTable` that `actions()`, `step()` and `is_fault()` read and that the Z3 encoding
(model/proofs/replication_inductive.py) is checked against; its names are the spec's disjuncts
(`inc_hw` <-> `IncHw`). Bounds are the parameters of `SPEC`, checked by the registry.

Behaviours that live only in impl/replication, and why: preferred-election-outside-isr and
reassignment-drops-old-replicas-early need an ordered replica list, preferred elections and
reassignment, which this model abstracts away (an election picks any eligible replica, the replica
set is fixed).
"""

from __future__ import annotations

from itertools import permutations
from operator import attrgetter
from typing import NamedTuple, Optional

from kverify.impl.replication import behaviours as B
from kverify.invariants.replication import ControllerView, EpochView, ReplicaView, ReplView
from kverify.model.actions import Action, ActionTable
from kverify.model.protocol import Protocol
from kverify.model.spec import ModelSpec, Param
from kverify.tla import values as V

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

PARAMS = {
    "replicas": Param(3, "number of replicas (2-3)", lo=2, hi=3),
    "records": Param(2, "records the producers may write in total", lo=0),
    "epochs": Param(2, "highest leader epoch the controller may assign (+1 for a recovery election)", lo=0),
    "min_isr": Param(2, "min.insync.replicas (capped at the number of replicas)", lo=1),
    "init_isr": Param(0, "size of the initial ISR (0 = every replica); replica 0 leads epoch 0", lo=0),
    "alters": Param(1, "ISR changes (AlterPartition proposals) leaders may make", lo=0),
    "crashes": Param(1, "replica crashes allowed", lo=0),
    "lossy": Param(1, "restarts that lose a log suffix allowed", lo=0),
    "ctrl_failovers": Param(0, "controller failovers allowed (each leaves a zombie controller)", lo=0),
    "unclean": Param(1, "unclean elections allowed (only with behaviour unclean-election)", lo=0),
    "symmetry": Param(True, "reduce states by permuting interchangeable replicas"),
}


def check_params(p: dict):
    """The rule across parameters (the registry reports it as a one-line ModelError)."""
    if p["init_isr"] > p["replicas"]:
        return f"init_isr must be between 0 and replicas ({p['replicas']})"
    return None


NO_LEADER = -1


# --- the state, field by field --------------------------------------------------------------------
# Sets of replicas are bitmasks (bit i = replica i), as in the shared views of invariants/replication.py.

class Record(NamedTuple):
    """A log entry: the leader epoch it was appended in and the producer's record id (1, 2, ...)."""
    epoch: int
    id: int


class Acked(NamedTuple):
    """A record acknowledged to an acks=all producer, at its offset."""
    offset: int
    record: Record


class AlterPartition(NamedTuple):
    """A leader's AlterPartition request in flight (at most one, KIP-497)."""
    isr: int            # the proposed ISR
    applied: bool       # the controller applied it; the leader has not heard yet
    stale: bool         # a replica it adds restarted since: its broker epoch is stale (KIP-903)


NO_ALTER = AlterPartition(0, False, False)


class Replica(NamedTuple):
    """One replica as its broker knows it."""
    alive: bool
    log: tuple              # (Record, ...): the record at offset o is log[o]
    hw: int                 # high watermark (exclusive)
    leader_epoch: int
    partition_epoch: int
    controller_epoch: int   # the largest controller epoch it has seen
    leader: int             # the leader it believes in (itself when it leads), NO_LEADER
    must_truncate: bool     # it must truncate (OffsetsForLeaderEpoch) before it fetches
    isr: int                # (leader) its committed ISR
    alter: AlterPartition   # (leader) its AlterPartition in flight, NO_ALTER
    leso: int               # (leader) the start offset of its leader epoch (KAFKA-7415), -1
    leading_since: int      # (leader) the epoch since which it has led without interruption, -1; its
                            # acks=all produce requests of those epochs still wait for the HW (Kafka
                            # fails them only when the replica stops leading)


# The controller's record of the partition has exactly the fields of the invariants' view.
Controller = ControllerView


class LeaderAndIsr(NamedTuple):
    """A LeaderAndIsr request (or the view a deposed controller still holds)."""
    leader: int
    leader_epoch: int
    isr: int
    partition_epoch: int
    controller_epoch: int   # of the controller that sent it


class Spent(NamedTuple):
    """How much of each fault / change budget the behaviour has used (bounds are PARAMS)."""
    crashes: int
    lossy: int
    unclean: int
    alters: int
    failovers: int


class State(NamedTuple):
    replicas: tuple                  # (Replica, ...) indexed by replica id
    controller: Controller
    requests: tuple                  # LeaderAndIsr requests ever sent, sorted (a set)
    zombie: Optional[LeaderAndIsr]   # a deposed controller's view, until it sends its one request
    next_record: int                 # id of the next record a producer writes
    committed: tuple                 # (Record, ...) below the true HW: what consumers may have read
    acked: tuple                     # (Acked, ...) in acknowledgement order
    spent: Spent


# Names of a state's top-level fields and every action name (the TLA+ cross-check reads them).
STATE_FIELDS = State._fields


def request_from(c: Controller) -> LeaderAndIsr:
    """The LeaderAndIsr the controller sends for its current record of the partition."""
    return _new(LeaderAndIsr, (c.leader, c.leader_epoch, c.isr, c.partition_epoch, c.controller_epoch))


def add_request(requests: tuple, q: LeaderAndIsr) -> tuple:
    """Requests are kept sorted so that equal sets compare equal (and symmetry can sort them)."""
    return tuple(sorted(requests + (q,)))


# The fields of a replica that no relabelling changes, in the order symmetry compares them (`candidates`).
_LABEL_FREE = attrgetter("log", "hw", "leader_epoch", "partition_epoch", "controller_epoch", "must_truncate", "leso",
                         "leading_since")

# The fields a replica shows the invariants (ReplicaView, without the quorum) and its epochs (EpochView).
_VIEWED = attrgetter("alive", "log", "hw", "leader_epoch", "partition_epoch", "controller_epoch", "leader", "isr")
_EPOCHS = attrgetter("leader_epoch", "partition_epoch", "controller_epoch")
_LEADER_EPOCH = attrgetter("leader_epoch")

_FINGERPRINTS = 4096          # states whose fingerprint `ReplicationModel.fingerprint` keeps (then starts over)

popcount = int.bit_count      # popcount(mask): how many replicas a bitmask holds (a C call, no Python frame)


# --- leader epoch caches and OffsetsForLeaderEpoch (KIP-101, KIP-279) ------------------------------
def epoch_entries(log) -> list:
    """The leader-epoch cache derived from a log: [(epoch, start_offset)] in log order."""
    out = []
    last = None
    for off, rec in enumerate(log):
        if rec.epoch != last:
            out.append((rec.epoch, off))
            last = rec.epoch
    return out


def leader_entries(rep: Replica) -> list:
    """A leader's epoch cache: its records' epochs plus (current epoch -> LESO) (KAFKA-7415)."""
    ents = epoch_entries(rep.log)
    if rep.leso >= 0 and (not ents or ents[-1][0] < rep.leader_epoch):
        ents.append((rep.leader_epoch, rep.leso))
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


def truncation_point(flog, fhw, lrep: Replica, offset_only: bool) -> int:
    """Where a follower with log `flog` and HW `fhw` truncates to against leader `lrep`."""
    leo = len(flog)
    if not leo:
        return 0
    lents = leader_entries(lrep)
    lleo = len(lrep.log)
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


def fetched_hw(lrep: Replica, leo: int) -> int:
    """The HW a follower whose LEO is `leo` takes from a fetch response of leader `lrep`: the
    leader's HW, capped at that LEO (Kafka's follower `updateHighWatermark`)."""
    return min(lrep.hw, leo)


# Hot updates build named tuples with `_new(Cls, (field, ...))`: every field, by name, in declaration
# order, without the class call's Python-level `__new__` (an exploration builds millions of them).
_new = tuple.__new__
_KEEP = object()


def _put(replicas: tuple, r: int, rep: Replica) -> tuple:
    """`replicas` with replica r replaced."""
    return replicas[:r] + (rep,) + replicas[r + 1:]


def _evolve(s: State, replicas=None, controller=None, requests=None, zombie=_KEEP, next_record=None,
            committed=None, acked=None, spent=None) -> State:
    """`s` with the given fields replaced (State._replace without its per-call overhead; the state
    unpacked in one step rather than read field by field)."""
    replicas0, controller0, requests0, zombie0, next_record0, committed0, acked0, spent0 = s
    return _new(State, (replicas0 if replicas is None else replicas,
                        controller0 if controller is None else controller,
                        requests0 if requests is None else requests,
                        zombie0 if zombie is _KEEP else zombie,
                        next_record0 if next_record is None else next_record,
                        committed0 if committed is None else committed,
                        acked0 if acked is None else acked,
                        spent0 if spent is None else spent))


def _with_replica(s: State, r: int, rep: Replica) -> State:
    """`s` with replica r replaced (the most frequent successor)."""
    replicas, controller, requests, zombie, next_record, committed, acked, spent = s
    return _new(State, (replicas[:r] + (rep,) + replicas[r + 1:], controller, requests, zombie, next_record,
                        committed, acked, spent))


# (The helpers below unpack a tuple once rather than read its fields one by one: on Python 3.11 a
# NamedTuple field read costs about twice an index, and these run for most transitions.)
def _with_log(rep: Replica, log: tuple, hw: int, must_truncate: bool) -> Replica:
    """`rep` with another log, HW and truncation flag (write, fetch, truncate)."""
    alive, _log, _hw, leader_epoch, partition_epoch, controller_epoch, leader, _must_truncate, isr, alter, leso, \
        leading_since = rep
    return _new(Replica, (alive, log, hw, leader_epoch, partition_epoch, controller_epoch, leader, must_truncate, isr,
                          alter, leso, leading_since))


def _with_alter(rep: Replica, alter: AlterPartition) -> Replica:
    """`rep` with another AlterPartition in flight (NO_ALTER: none)."""
    alive, log, hw, leader_epoch, partition_epoch, controller_epoch, leader, must_truncate, isr, _alter, leso, \
        leading_since = rep
    return _new(Replica, (alive, log, hw, leader_epoch, partition_epoch, controller_epoch, leader, must_truncate, isr,
                          alter, leso, leading_since))


def _spend(spent: Spent, crashes=0, lossy=0, unclean=0, alters=0, failovers=0) -> Spent:
    """The budgets used so far plus the given amounts."""
    crashes0, lossy0, unclean0, alters0, failovers0 = spent
    return _new(Spent, (crashes0 + crashes, lossy0 + lossy, unclean0 + unclean, alters0 + alters,
                        failovers0 + failovers))


# --- the actions: one guard and one update each, named as specs/Replication.tla's disjuncts ---------
# Each guard/update takes (model, state, *arguments); `m` is the ReplicationModel (bounds, switches).

# Domains: the candidate arguments of an action in a state, narrowed by role and by budget so that the
# guards run only where they can hold (each guard still states its whole condition;
# tests/test_replication_model.py checks that no guard holds outside its domain). `m.domains(s)`
# computes them in one pass over the replicas, once per state.
class Domains(NamedTuple):
    running: list      # [(r,)] running replicas
    leaders: list      # [(r,)] running replicas that believe they lead
    truncating: list   # [(r,)] running followers that must truncate before they fetch
    fetching: list     # [(r,)] running followers that need not
    proposals: list    # [(leader, other replica)] for leaders that may propose an ISR change
    restarts: list     # [(crashed replica, records it keeps)] (fewer than all: while lossy restarts remain)
    applies: list      # [(running replica, index of a request with a higher leader epoch than its own)]


def _running(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).running


def _leaders(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).leaders


def _truncating(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).truncating


def _fetching(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).fetching


def _proposals(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).proposals


def _restart_domain(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).restarts


def _apply_domain(m, s):
    return (m.domains_of if m.domains_for is s else m.domains(s)).applies


def _zombie_domain(m, s):
    return () if s.zombie is None else m.domains(s).running


def _unclean_domain(m, s):
    return m.domains(s).running if m.max_unclean else ()


def _fetch_hw_domain(m, s):
    return m.domains(s).truncating if m.b_hw_before_truncate else ()


def _failover_domain(m, s):
    return ((),) if m.max_failovers else ()


def restart_guard(m, s, r, keep):
    """A crashed replica restarts with the first `keep` records of its log (fewer: a lossy restart)."""
    rep = s.replicas[r]
    return not rep.alive and 0 <= keep <= len(rep.log) and (keep == len(rep.log) or s.spent.lossy < m.max_lossy)


def restart(m, s, r, keep):
    replicas, c, requests, zombie, next_record, committed, acked, spent = s
    rep = replicas[r]
    bit = 1 << r
    if keep < len(rep.log):
        spent = _spend(spent, lossy=1)
        if (c.isr | c.elr) & bit:        # unclean shutdown detected (KAFKA-15586)
            c = c._replace(isr=c.isr & ~bit, elr=c.elr & ~bit)
    cep = max(rep.controller_epoch, c.controller_epoch)
    if not m.b_no_broker_epoch:
        # the restarted broker registers with a new broker epoch: AlterPartitions that add it
        # and were built from its previous incarnation's fetches carry a stale one
        replicas = _stale_alters(replicas, bit)
    base = _new(Replica, (True, rep.log[:keep], min(rep.hw, keep), rep.leader_epoch, rep.partition_epoch, cep,
                          NO_LEADER, True, 0, NO_ALTER, -1, -1))
    if c.leader_epoch >= rep.leader_epoch:      # it registers and learns the controller's current state
        leader = NO_LEADER if c.leader == r else c.leader   # (a crash removed it as leader already)
        base = m.become(base, r, _new(LeaderAndIsr, (leader, c.leader_epoch, c.isr, c.partition_epoch, cep)))
    return _new(State, (_put(replicas, r, base), c, requests, zombie, next_record, committed, acked, spent))


def _stale_alters(replicas: tuple, bit: int) -> tuple:
    """`replicas` with every AlterPartition in flight (not yet applied) that adds the replica `bit`
    marked stale (the same tuple when there is none, the usual case)."""
    out = None
    for k, x in enumerate(replicas):
        alter = x.alter
        if alter.isr and not alter.applied and (alter.isr & ~x.isr) & bit:
            if out is None:
                out = list(replicas)
            out[k] = _with_alter(x, alter._replace(stale=True))
    return replicas if out is None else tuple(out)


def apply_guard(m, s, r, i):
    """A running replica applies any LeaderAndIsr with a higher leader epoch than its own, from a
    controller at least as recent as the newest it has seen."""
    rep = s.replicas[r]
    q = s.requests[i]
    return (rep.alive and q.leader_epoch > rep.leader_epoch
            and (m.b_stale_ctrl or q.controller_epoch >= rep.controller_epoch))


def apply(m, s, r, i):
    rep = s.replicas[r]
    q = s.requests[i]
    if q.controller_epoch < rep.controller_epoch:      # (stale-controller-accepted) it keeps the newer one
        q = _new(LeaderAndIsr, (q.leader, q.leader_epoch, q.isr, q.partition_epoch, rep.controller_epoch))
    return _with_replica(s, r, m.become(rep, r, q))


def write_guard(m, s, r):
    """An acks=all produce request reaches the leader while its ISR has MinISR members."""
    rep = s.replicas[r]
    return rep.alive and rep.leader == r and s.next_record <= m.max_records and popcount(rep.isr) >= m.min_isr


def write(m, s, r):
    rep = s.replicas[r]
    log = rep.log + (_new(Record, (rep.leader_epoch, s.next_record)),)
    return _evolve(s, replicas=_put(s.replicas, r, _with_log(rep, log, rep.hw, rep.must_truncate)),
                   next_record=s.next_record + 1)


def inc_hw_guard(m, s, r):
    """The leader advances its HW to the lowest LEO of its maximal ISR, while its ISR has MinISR
    members (KAFKA-15583)."""
    rep = s.replicas[r]
    return (rep.alive and rep.leader == r and rep.hw < len(rep.log)     # (the HW never passes its own LEO)
            and (m.b_hw_ignores or popcount(rep.isr) >= m.min_isr) and m.hw_candidate(s.replicas, r) > rep.hw)


def inc_hw(m, s, r):
    rep = s.replicas[r]
    new = m.hw_candidate(s.replicas, r)
    log = rep.log
    acked = s.acked
    if popcount(m.quorum(rep)) >= m.min_isr:       # the produce requests of its leadership complete
        add = tuple(Acked(o, log[o]) for o in range(rep.hw, new) if log[o].epoch >= rep.leading_since)
        if add:
            acked = acked + add
    committed = s.committed
    if new > len(committed):
        committed = committed + log[len(committed):new]
    return _evolve(s, replicas=_put(s.replicas, r, _with_log(rep, log, new, rep.must_truncate)), committed=committed,
                   acked=acked)


def alter_resp_guard(m, s, r):
    """The leader hears that the controller applied its AlterPartition."""
    rep = s.replicas[r]
    return rep.alive and rep.leader == r and rep.alter.applied


def alter_resp(m, s, r):
    rep = s.replicas[r]
    return _with_replica(s, r, _new(Replica, (rep.alive, rep.log, rep.hw, rep.leader_epoch, rep.partition_epoch + 1,
                                              rep.controller_epoch, rep.leader, rep.must_truncate, rep.alter.isr,
                                              NO_ALTER, rep.leso, rep.leading_since)))


def ctrl_alter_guard(m, s, r):
    """The controller handles the leader's AlterPartition."""
    rep = s.replicas[r]
    return rep.alive and rep.leader == r and rep.alter.isr != 0 and not rep.alter.applied


def ctrl_alter(m, s, r):
    rep = s.replicas[r]
    c = s.controller
    prop = rep.alter.isr
    added = prop & ~c.isr
    ok = (c.leader == r and c.leader_epoch == rep.leader_epoch and c.partition_epoch == rep.partition_epoch
          and not rep.alter.stale and all(s.replicas[f].alive for f in range(m.n) if added >> f & 1))
    if not ok:   # FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION / INELIGIBLE_REPLICA: roll back
        return _with_replica(s, r, _with_alter(rep, NO_ALTER))
    c = _new(Controller, (c.leader, c.leader_epoch, prop, m.new_elr(c.isr, prop, c.elr), c.partition_epoch + 1,
                          c.controller_epoch))
    applied = _new(AlterPartition, (prop, True, rep.alter.stale))
    replicas, _c, requests, zombie, next_record, committed, acked, spent = s
    return _new(State, (_put(replicas, r, _with_alter(rep, applied)), c, requests, zombie, next_record, committed,
                        acked, spent))


def may_propose(m, s, rep: Replica, r: int) -> bool:
    """Replica r leads, has no AlterPartition in flight, and the ISR-change budget is not spent."""
    return rep.alive and rep.leader == r and not rep.alter.isr and s.spent.alters < m.max_alters


def shrink_guard(m, s, r, f):
    """The leader proposes to remove from its ISR a follower not caught up with it (the lag timer
    abstracted: any follower whose LEO differs from the leader's, or that it does not hear from)."""
    rep = s.replicas[r]
    fr = s.replicas[f]
    return (may_propose(m, s, rep, r) and f != r and rep.isr >> f & 1 == 1
            and not (fr.alive and m.counts(s.replicas, r, f) and len(fr.log) == len(rep.log)))


def shrink(m, s, r, f):
    replicas, c, requests, zombie, next_record, committed, acked, spent = s
    rep = replicas[r]
    proposal = _new(AlterPartition, (rep.isr & ~(1 << f), False, False))
    return _new(State, (_put(replicas, r, _with_alter(rep, proposal)), c, requests, zombie, next_record, committed,
                        acked, _spend(spent, alters=1)))


def expand_guard(m, s, r, f):
    """The leader proposes to add a follower that caught up to its HW and its epoch start (KIP-101)."""
    rep = s.replicas[r]
    fr = s.replicas[f]
    fleo = len(fr.log)
    return (may_propose(m, s, rep, r) and f != r and rep.isr >> f & 1 == 0 and fr.alive
            and m.counts(s.replicas, r, f) and fleo >= rep.hw and (m.b_no_leso or fleo >= rep.leso))


def expand(m, s, r, f):
    replicas, c, requests, zombie, next_record, committed, acked, spent = s
    rep = replicas[r]
    proposal = _new(AlterPartition, (rep.isr | (1 << f), False, False))
    return _new(State, (_put(replicas, r, _with_alter(rep, proposal)), c, requests, zombie, next_record, committed,
                        acked, _spend(spent, alters=1)))


def truncate_guard(m, s, r):
    """A follower that must truncate asks its leader (OffsetsForLeaderEpoch) and truncates, unless
    that changes nothing."""
    rep = s.replicas[r]
    return rep.must_truncate and m.fetch_ok(s.replicas, r) and m.truncation_changes(s.replicas, r)


def truncate(m, s, r):
    rep = s.replicas[r]
    cut, done = m.truncation(s.replicas, r)
    return _with_replica(s, r, _with_log(rep, rep.log[:cut], min(rep.hw, cut), not done))


def fetch_hw_guard(m, s, r):
    """KAFKA-14704 (behaviour only): a follower that must truncate takes the HW of the diverging
    fetch response before it truncates."""
    rep = s.replicas[r]
    return (m.b_hw_before_truncate and rep.must_truncate and m.fetch_ok(s.replicas, r)
            and fetched_hw(s.replicas[rep.leader], len(rep.log)) != rep.hw)


def fetch_hw(m, s, r):
    rep = s.replicas[r]
    return _with_replica(s, r, _with_log(rep, rep.log, fetched_hw(s.replicas[rep.leader], len(rep.log)),
                                         rep.must_truncate))


def fetch_guard(m, s, r):
    """A follower fetches the next record and the leader's HW, when that changes something."""
    rep = s.replicas[r]
    lr = s.replicas[rep.leader]          # (replicas[-1] when it knows no leader: fetch_ok is then false)
    flen = len(rep.log)
    newlen = flen + 1 if flen < len(lr.log) else flen
    return not rep.must_truncate and m.fetch_ok(s.replicas, r) and (newlen != flen or fetched_hw(lr, newlen) != rep.hw)


def fetch(m, s, r):
    rep = s.replicas[r]
    lr = s.replicas[rep.leader]
    log = rep.log
    if len(log) < len(lr.log):
        log = log + (lr.log[len(log)],)
    return _with_replica(s, r, _with_log(rep, log, fetched_hw(lr, len(log)), rep.must_truncate))


def crash_guard(m, s, r):
    """A running replica crashes; one in the controller's ISR only while the controller may still
    bump the leader epoch for it."""
    c = s.controller
    return (s.spent.crashes < m.max_crashes and s.replicas[r].alive
            and (not c.isr >> r & 1 or c.leader_epoch < m.max_epoch))


def crash(m, s, r):
    replicas, c, requests, zombie, next_record, committed, acked, spent = s
    if c.isr >> r & 1:      # the controller sees the session expire: shrink, maybe lose the leader
        isr = c.isr & ~(1 << r)
        c = _new(Controller, (NO_LEADER if c.leader == r else c.leader, c.leader_epoch + 1, isr,
                              m.new_elr(c.isr, isr, c.elr), c.partition_epoch + 1, c.controller_epoch))
        requests = add_request(requests, request_from(c))
    rep = replicas[r]
    down = _new(Replica, (False, rep.log, rep.hw, rep.leader_epoch, rep.partition_epoch, rep.controller_epoch,
                          rep.leader, rep.must_truncate, rep.isr, rep.alter, rep.leso, rep.leading_since))
    return _new(State, (_put(replicas, r, down), c, requests, zombie, next_record, committed, acked,
                        _spend(spent, crashes=1)))


def _election_allowed(m, c: Controller) -> bool:
    """`epochs` bounds the elections that perturb a live leader; an offline partition may always
    get one recovery election (so recoverability is not an artefact of the bound)."""
    return c.leader_epoch < m.max_epoch or (c.leader == NO_LEADER and c.leader_epoch == m.max_epoch)


def elect_guard(m, s, r):
    """The controller elects a running ISR member, or an ELR member when the ISR is empty (KIP-966)."""
    c = s.controller
    return (r != c.leader and (c.isr >> r & 1 or (not c.isr and c.elr >> r & 1)) and s.replicas[r].alive
            and _election_allowed(m, c))


def elect(m, s, r):
    replicas, c, requests, zombie, next_record, committed, acked, spent = s
    _leader, leader_epoch, isr, elr, partition_epoch, controller_epoch = c
    bit = 1 << r
    if not isr & bit:                       # from the ELR, the ISR being empty
        isr, elr = bit, elr & ~bit
    c = _new(Controller, (r, leader_epoch + 1, isr, elr, partition_epoch + 1, controller_epoch))
    return _new(State, (replicas, c, add_request(requests, request_from(c)), zombie, next_record, committed, acked,
                        spent))


def elect_unclean_guard(m, s, r):
    """(unclean-election) no running ISR/ELR member: the controller elects any running replica."""
    c = s.controller
    return (_election_allowed(m, c) and m.max_unclean > s.spent.unclean and c.leader == NO_LEADER
            and s.replicas[r].alive
            and not any(s.replicas[x].alive for x in range(m.n) if (c.isr | c.elr) >> x & 1))


def elect_unclean(m, s, r):
    c = s.controller
    c = _new(Controller, (r, c.leader_epoch + 1, 1 << r, 0, c.partition_epoch + 1, c.controller_epoch))
    return _evolve(s, controller=c, requests=add_request(s.requests, request_from(c)),
                   spent=_spend(s.spent, unclean=1))


def ctrl_failover_guard(m, s):
    """A new controller takes over; the old one lives on as a zombie with its view."""
    return s.spent.failovers < m.max_failovers


def ctrl_failover(m, s):
    c = s.controller
    cep = c.controller_epoch + 1
    # the new controller sends its epoch to every live broker (UpdateMetadata)
    replicas = tuple(rep._replace(controller_epoch=cep) if rep.alive else rep for rep in s.replicas)
    return _evolve(s, replicas=replicas, controller=c._replace(controller_epoch=cep), zombie=request_from(c),
                   spent=_spend(s.spent, failovers=1))


def zombie_elect_guard(m, s, r):
    """The zombie controller sends one LeaderAndIsr from its stale view, electing another running
    member of the ISR it knows."""
    z = s.zombie
    return (z is not None and z.leader_epoch < m.max_epoch and r != z.leader and z.isr >> r & 1
            and s.replicas[r].alive)


def zombie_elect(m, s, r):
    z = s.zombie
    q = LeaderAndIsr(r, z.leader_epoch + 1, z.isr, z.partition_epoch + 1, z.controller_epoch)
    return _evolve(s, requests=add_request(s.requests, q), zombie=None)


ACTIONS = ActionTable([
    Action("restart", restart_guard, restart, _restart_domain),
    Action("apply", apply_guard, apply, _apply_domain),
    Action("write", write_guard, write, _leaders),
    Action("inc_hw", inc_hw_guard, inc_hw, _leaders),
    Action("alter_resp", alter_resp_guard, alter_resp, _leaders),
    Action("ctrl_alter", ctrl_alter_guard, ctrl_alter, _leaders),
    Action("shrink", shrink_guard, shrink, _proposals),
    Action("expand", expand_guard, expand, _proposals),
    Action("truncate", truncate_guard, truncate, _truncating),
    Action("fetch_hw", fetch_hw_guard, fetch_hw, _fetch_hw_domain),
    Action("fetch", fetch_guard, fetch, _fetching),
    Action("crash", crash_guard, crash, _running, fault=True),
    Action("elect", elect_guard, elect, _running),
    Action("elect_unclean", elect_unclean_guard, elect_unclean, _unclean_domain, fault=True),
    Action("ctrl_failover", ctrl_failover_guard, ctrl_failover, _failover_domain, fault=True),
    Action("zombie_elect", zombie_elect_guard, zombie_elect, _zombie_domain, fault=True),
])
ACTION_NAMES = ACTIONS.names()


class ReplicationModel(Protocol):
    name = "replication"

    def __init__(self, params: dict, behaviours: frozenset = frozenset()):
        self.params = dict(params)             # complete and validated by the registry (SPEC below)
        self.behaviours = frozenset(behaviours)
        n = self.n = params["replicas"]
        self.max_records = params["records"]
        self.max_epoch = params["epochs"]
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
        self.b_no_broker_epoch = B.NO_BROKER_EPOCH_CHECK in b
        self.min_isr = 1 if B.ISR_SHRINKS_TO_LEADER in b else min(params["min_isr"], n)
        self.max_crashes = params["crashes"]
        self.max_alters = params["alters"]
        self.max_lossy = params["lossy"]
        self.max_failovers = params["ctrl_failovers"]
        self.max_unclean = params["unclean"] if self.b_unclean else 0
        self.init_isr = params["init_isr"] or n
        self.use_symmetry = bool(params.get("symmetry", True))
        self.action_table = ACTIONS
        self.domains_for, self.domains_of = None, None      # the state whose Domains were computed last, and them
        self._one = [(r,) for r in range(n)]                                   # domain entries, built once
        self._others = [tuple((r, f) for f in range(n) if f != r) for r in range(n)]
        ident = tuple(range(n))
        self._all_perms = [(p, None if p == ident else [self._map_mask(p, m) for m in range(1 << n)])
                           for p in permutations(range(n))]
        self._inverse = {p: tuple(sorted(range(n), key=lambda i: p[i])) for p, _ in self._all_perms}
        self._by_order = {self._inverse[p]: (p, mm) for p, mm in self._all_perms}
        self._pid = {p: list(p) + [NO_LEADER] for p, _ in self._all_perms}
        self._view_cache = [None, None, None, None, None, None]
        self._fingerprints: dict = {}       # state -> fingerprint, for the last states (`fingerprint`)

    # --- initial state -----------------------------------------------------------------------------
    def init_states(self):
        """Replica 0 leads epoch 0 with the initial ISR; every replica is running with an empty log."""
        isr = (1 << self.init_isr) - 1
        leader = Replica(True, (), 0, 0, 0, 0, 0, False, isr, NO_ALTER, 0, 0)
        follower = Replica(True, (), 0, 0, 0, 0, 0, False, 0, NO_ALTER, -1, -1)
        c = Controller(0, 0, isr, 0, 0, 0)
        return [State((leader,) + (follower,) * (self.n - 1), c, (request_from(c),), None, 1, (), (),
                      Spent(0, 0, 0, 0, 0))]

    # --- actions (the table above) -----------------------------------------------------------------
    def actions(self, s):
        return self.action_table.enabled(self, s)

    def step(self, s, a):
        return self.action_table.updates[a[0]](self, s, *a[1:])     # ActionTable.step, one call fewer

    def is_fault(self, action) -> bool:
        return self.action_table.is_fault(action)

    def replace_action(self, name: str, guard=None, update=None) -> None:
        """Swap one action's guard or update on this model object only (mutants in tests)."""
        from dataclasses import replace as _replace

        old = self.action_table.by_name[name]
        new = _replace(old, guard=guard or old.guard, update=update or old.update)
        self.action_table = ActionTable([new if a.name == name else a for a in self.action_table.actions])

    def domains(self, s: State) -> Domains:
        """The action domains of a state (cached for the state the action table is enumerating)."""
        if self.domains_for is s:
            return self.domains_of
        running, leaders, truncating, fetching, proposals, restarts, applies = [], [], [], [], [], [], []
        requests = s.requests
        # no replica applies a request when it is at the newest epoch
        newest = requests[0].leader_epoch if len(requests) == 1 else max(map(_LEADER_EPOCH, requests))
        lossy_left = s.spent.lossy < self.max_lossy
        one, others = self._one, self._others
        for r, rep in enumerate(s.replicas):
            if not rep.alive:
                leo = len(rep.log)
                restarts.extend([(r, keep) for keep in range(leo + 1)] if lossy_left else [(r, leo)])
                continue
            running.append(one[r])
            epoch = rep.leader_epoch
            if newest > epoch:
                for i, q in enumerate(requests):
                    if q.leader_epoch > epoch:
                        applies.append((r, i))
            if rep.leader == r:
                leaders.append(one[r])
                if may_propose(self, s, rep, r):
                    proposals.extend(others[r])
            elif rep.must_truncate:
                truncating.append(one[r])
            else:
                fetching.append(one[r])
        d = self.domains_of = _new(Domains, (running, leaders, truncating, fetching, proposals, restarts, applies))
        self.domains_for = s
        return d

    # --- rules shared by several actions ----------------------------------------------------------
    def quorum(self, rep: Replica) -> int:
        """The replicas a leader waits for (HW, acks): its maximal ISR (committed ∪ proposed, KIP-497)."""
        proposed = rep.alter.isr
        if proposed and not self.b_no_maximal:
            return rep.isr | proposed
        return rep.isr

    def counts(self, replicas, r: int, f: int) -> bool:
        """Whether leader r knows follower f's LEO (f fetched from r in r's epoch, after truncating)."""
        fr = replicas[f]
        if fr.leader != r or fr.must_truncate:
            return False
        return self.b_no_fence or fr.leader_epoch == replicas[r].leader_epoch

    def fetch_ok(self, replicas, f: int) -> bool:
        """Replica f runs, follows another replica, and its fetch reaches that running leader, which
        accepts its epoch (KIP-320 fencing)."""
        fr = replicas[f]
        ldr = fr.leader
        if ldr < 0 or ldr == f or not fr.alive:
            return False
        lr = replicas[ldr]
        if not lr.alive or lr.leader != ldr:
            return False
        return self.b_no_fence or lr.leader_epoch == fr.leader_epoch

    def hw_candidate(self, replicas, r: int) -> int:
        """The lowest LEO over leader r's maximal ISR (0 for a member it does not hear from)."""
        rep = replicas[r]
        cand = len(rep.log)
        q = self.quorum(rep) & ~(1 << r)
        f = 0
        while q:
            if q & 1:
                leo = len(replicas[f].log) if self.counts(replicas, r, f) else 0
                if leo < cand:
                    cand = leo
            q >>= 1
            f += 1
        return cand

    def new_elr(self, old_isr: int, new_isr: int, elr: int) -> int:
        """KIP-966: members removed while the ISR is below MinISR join the ELR; ISR >= MinISR clears it;
        ELR and ISR stay disjoint."""
        if popcount(new_isr) >= self.min_isr:
            return 0
        return (elr | (old_isr & ~new_isr)) & ~new_isr

    def become(self, rep: Replica, r: int, q: LeaderAndIsr) -> Replica:
        """Replica r after it applies LeaderAndIsr `q`."""
        leader, leader_epoch, isr, partition_epoch, controller_epoch = q
        if leader == r:
            since = rep.leading_since if rep.leader == r and rep.leading_since >= 0 else leader_epoch
            return _new(Replica, (True, rep.log, rep.hw, leader_epoch, partition_epoch, controller_epoch, r,
                                  False, isr, NO_ALTER, len(rep.log), since))
        log, hw, trunc = rep.log, rep.hw, True
        if self.b_trunc_hw:            # truncate-to-hw: pre-KIP-101 followers cut their log at the HW
            hw = min(rep.hw, len(rep.log))
            log, trunc = rep.log[:hw], False
        elif self.b_skip_same and leader == rep.leader and leader != NO_LEADER:
            trunc = rep.must_truncate
        return _new(Replica, (True, log, hw, leader_epoch, partition_epoch, controller_epoch, leader, trunc,
                              0, NO_ALTER, -1, -1))

    def truncation(self, replicas, r: int):
        """(cut, done) of follower r against its leader: where it truncates, and whether the leader
        stops reporting a diverging epoch afterwards (KAFKA-10554: otherwise the follower keeps
        truncating instead of fetching, and the leader does not count it, KAFKA-13141)."""
        rep = replicas[r]
        lrep = replicas[rep.leader]
        cut = truncation_point(rep.log, rep.hw, lrep, self.b_offset_only)
        if self.b_offset_only or cut == 0:
            return cut, True
        ef = rep.log[cut - 1].epoch
        ans = end_offset_for(leader_entries(lrep), len(lrep.log), ef)
        return cut, ans is not None and ans[0] == ef and ans[1] >= cut

    def truncation_changes(self, replicas, r: int) -> bool:
        """Whether follower r's truncation changes anything: it cuts its log or ends the divergence."""
        cut, done = self.truncation(replicas, r)
        return done or cut < len(replicas[r].log)

    # --- properties --------------------------------------------------------------------------------
    def view(self, s: State) -> ReplView:
        """Map a state onto the shared view of `invariants/replication.py` (cached for the last states)."""
        c = self._view_cache
        if c[0] is s:
            return c[1]
        if c[2] is s:
            return c[3]
        if c[4] is s:
            return c[5]
        rv = []
        for i, rep in enumerate(s.replicas):
            rv.append(_new(ReplicaView, _VIEWED(rep) + (self.quorum(rep) if rep.leader == i else 0,)))
        v = _new(ReplView, (tuple(rv), s.controller, s.acked, s.committed, self.min_isr))
        c[4], c[5], c[2], c[3], c[0], c[1] = c[2], c[3], c[0], c[1], s, v
        return v

    def invariants(self):
        from kverify.invariants import replication as I
        return I.bind(I.ALL, self.view, self.epoch_view)

    def epoch_view(self, s: State) -> EpochView:
        """The epochs of a state (the step invariant's view; `bind` keeps the source state's)."""
        return _new(EpochView, (tuple(map(_EPOCHS, s.replicas)), _EPOCHS(s.controller)))

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
                                   lambda s: s.spent.unclean > 0))
        return tuple(props)

    def _acked_survives(self, s: State) -> bool:
        ldr = s.controller.leader
        if ldr == NO_LEADER or s.replicas[ldr].leader != ldr:
            return False
        log = s.replicas[ldr].log
        for a in s.acked:
            writers = {q.leader for q in s.requests if q.leader_epoch == a.record.epoch}
            if ldr not in writers and a.offset < len(log) and log[a.offset] == a.record:
                return True
        return False

    def unclean_elections(self, s: State) -> int:
        return s.spent.unclean

    def is_quiescent_good(self, s: State) -> bool:
        c = s.controller
        if c.leader == NO_LEADER:
            # offline by design: no replica may be elected without losing data (KIP-966)
            return not any(s.replicas[r].alive for r in range(self.n) if (c.isr | c.elr) >> r & 1)
        rep = s.replicas[c.leader]
        return rep.leader == c.leader and rep.leader_epoch == c.leader_epoch

    def participants(self):
        return tuple(f"broker {i}" for i in range(self.n)) + ("controller",)

    def arrow(self, action):
        """Who sends what to whom: fetch/truncate go follower -> leader (answered in the same step),
        AlterPartition leader -> controller, LeaderAndIsr controller -> broker."""
        name, args = action[0], action[1:]
        ctl = "controller"
        if name in ("apply", "zombie_elect", "alter_resp"):
            return (ctl, f"broker {args[0]}")
        if name == "ctrl_alter":
            return (f"broker {args[0]}", ctl)
        if name in ("elect", "elect_unclean", "ctrl_failover"):
            return (ctl, ctl)
        return (f"broker {args[0]}", f"broker {args[0]}")

    def describe(self, s: State) -> dict:
        def ids(mask):
            return [i for i in range(self.n) if mask >> i & 1]
        c = s.controller
        return {
            "controller": {"leader": c.leader, "leader_epoch": c.leader_epoch, "isr": ids(c.isr),
                           "elr": ids(c.elr), "partition_epoch": c.partition_epoch,
                           "controller_epoch": c.controller_epoch},
            "replicas": [{"id": i, "alive": rep.alive, "log": [f"{rec.id}@e{rec.epoch}" for rec in rep.log],
                          "hw": rep.hw, "leader_epoch": rep.leader_epoch, "partition_epoch": rep.partition_epoch,
                          "controller_epoch": rep.controller_epoch, "leader": rep.leader,
                          "must_truncate": rep.must_truncate,
                          **({"isr": ids(rep.isr), "pending_isr": ids(rep.alter.isr) if rep.alter.isr else None,
                              "pending_applied": rep.alter.applied,
                              "leso": rep.leso} if rep.leader == i else {})}
                         for i, rep in enumerate(s.replicas)],
            "requests": [{"leader": q.leader, "leader_epoch": q.leader_epoch, "isr": ids(q.isr),
                          "partition_epoch": q.partition_epoch, "controller_epoch": q.controller_epoch}
                         for q in s.requests],
            "zombie_controller": None if s.zombie is None else {"leader": s.zombie.leader,
                                                               "leader_epoch": s.zombie.leader_epoch},
            "acked": [f"{a.record.id}@{a.offset}" for a in s.acked],
            "true_hw": len(s.committed),
        }

    def tla_state(self, s: State) -> dict:
        """The state as specs/Replication.tla's variables (values in kverify/tla/states.py's form)."""
        bits, function, record = V.bits, V.function, V.record

        def rec(x):
            return record(epoch=x.epoch, id=x.id)

        def req(q):
            return record(leader=q.leader, leaderEpoch=q.leader_epoch, isr=bits(q.isr),
                          partitionEpoch=q.partition_epoch, controllerEpoch=q.controller_epoch)

        def rep(x):
            return record(alive=x.alive, log=tuple(rec(y) for y in x.log), hw=x.hw, leaderEpoch=x.leader_epoch,
                          partitionEpoch=x.partition_epoch, controllerEpoch=x.controller_epoch, leader=x.leader,
                          mustTruncate=x.must_truncate, isr=bits(x.isr), leso=x.leso, leadingSince=x.leading_since,
                          alter=record(isr=bits(x.alter.isr), applied=x.alter.applied, stale=x.alter.stale))

        c = s.controller
        return {"replicas": function({i: rep(x) for i, x in enumerate(s.replicas)}),
                "controller": record(leader=c.leader, leaderEpoch=c.leader_epoch, isr=bits(c.isr), elr=bits(c.elr),
                                     partitionEpoch=c.partition_epoch, controllerEpoch=c.controller_epoch),
                "requests": frozenset(req(q) for q in s.requests),
                "zombie": frozenset() if s.zombie is None else frozenset({req(s.zombie)}),
                "nextRecord": s.next_record,
                "committed": tuple(rec(x) for x in s.committed),
                "acked": tuple(record(offset=a.offset, record=rec(a.record)) for a in s.acked),
                "spent": record(**s.spent._asdict())}

    # --- symmetry ----------------------------------------------------------------------------------
    @staticmethod
    def _map_mask(p, m):
        out = 0
        for i, j in enumerate(p):
            if m >> i & 1:
                out |= 1 << j
        return out

    def _permute(self, s: State, p, mm, named: bool = True):
        """The state with replica i renamed p[i] (`mm` maps bitmasks), each replica unpacked into its
        fields by name; the explorer's hottest path. With `named=False` the same value built as plain
        tuples (a NamedTuple hashes and compares as the tuple of its fields): what `fingerprint`
        hashes, at half the cost."""
        pid = self._pid[p]           # pid[x] = p[x], pid[NO_LEADER] = NO_LEADER
        replicas = s.replicas
        nreps = []
        for i in self._inverse[p]:   # new replica k is old replica inverse[k]
            alive, log, hw, leader_epoch, partition_epoch, controller_epoch, leader, must_truncate, isr, alter, \
                leso, leading_since = replicas[i]
            if alter.isr:
                alter = (mm[alter.isr], alter.applied, alter.stale)
                if named:
                    alter = _new(AlterPartition, alter)
            rep = (alive, log, hw, leader_epoch, partition_epoch, controller_epoch, pid[leader], must_truncate, mm[isr],
                   alter, leso, leading_since)
            nreps.append(_new(Replica, rep) if named else rep)
        c = s.controller
        nc = (pid[c.leader], c.leader_epoch, mm[c.isr], mm[c.elr], c.partition_epoch, c.controller_epoch)
        nreqs = [(pid[q.leader], q.leader_epoch, mm[q.isr], q.partition_epoch, q.controller_epoch) for q in s.requests]
        if len(nreqs) > 1:
            nreqs.sort()
        z = s.zombie
        nz = None if z is None else (pid[z.leader], z.leader_epoch, mm[z.isr], z.partition_epoch, z.controller_epoch)
        if not named:
            return (tuple(nreps), nc, tuple(nreqs), nz, s.next_record, s.committed, s.acked, s.spent)
        return _new(State, (tuple(nreps), _new(Controller, nc), tuple([_new(LeaderAndIsr, q) for q in nreqs]),
                            None if nz is None else _new(LeaderAndIsr, nz), s.next_record, s.committed, s.acked,
                            s.spent))

    def candidates(self, s: State, extra=None):
        """Relabellings (p: old index -> new index, mask map or None for the identity) that sort the
        replicas by a label-free signature (plus `extra[i]`, for composed models). The set depends
        only on the orbit of `s`, so the least image over it is a canonical representative."""
        c = s.controller
        ctrl_leader, ctrl_isr, ctrl_elr = c.leader, c.isr, c.elr
        # leaders first, then the ISR, so that the identity is the usual answer (no relabelling)
        sigs = []
        for i, rep in enumerate(s.replicas):
            leader = rep.leader
            sigs.append((leader != i, i != ctrl_leader, not ctrl_isr >> i & 1, not rep.alive, _LABEL_FREE(rep),
                         leader == NO_LEADER, ctrl_elr >> i & 1, rep.isr >> i & 1, rep.alter.isr != 0,
                         extra[i] if extra else 0))
        n = self.n
        order = sorted(range(n), key=sigs.__getitem__)
        prev = sigs[order[0]]
        for k in order[1:]:            # two equal signatures: several relabellings sort them
            sig = sigs[k]
            if sig == prev:
                break
            prev = sig
        else:
            return (self._by_order[tuple(order)],)
        out = []
        last = n - 1
        for p, mm in self._all_perms:
            inv = self._inverse[p]
            for k in range(last):
                if sigs[inv[k]] > sigs[inv[k + 1]]:
                    break
            else:
                out.append((p, mm))
        return out

    def permute(self, s: State, p, mm) -> State:
        return s if mm is None else self._permute(s, p, mm)

    def canonical(self, s: State, named: bool = True) -> State:
        """The least image of `s` over its candidate relabellings (`named=False`: as plain tuples)."""
        if not self.use_symmetry:
            return s
        cands = self.candidates(s)
        if len(cands) == 1:
            p, mm = cands[0]
            return s if mm is None else self._permute(s, p, mm, named)
        best = None
        for p, mm in cands:
            t = s if mm is None else self._permute(s, p, mm, named)
            if best is None or t < best:
                best = t
        return best

    def fingerprint(self, s: State) -> int:
        """hash(canonical(s)), hashed on the plain-tuple image (the same value). Kept for the last
        states fingerprinted (`_FINGERPRINTS`, keyed by the state itself, so the value is the one
        computed): most transitions lead to a state just reached by another one (records=0: 66% of
        them find their successor kept), and hashing a state costs a tenth of canonicalizing it.
        The states kept cost about 1 MB (records=1: 8 bytes a state over its 110k states; less a
        state in larger runs)."""
        if not self.use_symmetry:
            return hash(s)
        kept = self._fingerprints
        fp = kept.get(s)
        if fp is None:
            fp = hash(self.canonical(s, False))
            if len(kept) >= _FINGERPRINTS:
                kept.clear()
            kept[s] = fp
        return fp


def make(params: dict, behaviours: frozenset = frozenset()) -> ReplicationModel:
    return ReplicationModel(params, behaviours)


def tla_state(proto: ReplicationModel, s: State) -> dict:
    """The state as specs/Replication.tla's variables (kverify/tla/values.py forms)."""
    return proto.tla_state(s)


SPEC = ModelSpec(name="replication", make=make, params=PARAMS, supports=SUPPORTS, check=check_params,
                 hunt_params=HUNT_PARAMS, state_fields=STATE_FIELDS, action_names=ACTION_NAMES, tla_state=tla_state)
