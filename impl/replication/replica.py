"""One broker's replica of one partition: the leader side (appends, follower fetch state, ISR
changes through AlterPartition, high watermark, acks=all purgatory) and the follower side
(truncation by leader epoch, fetching).

This is the data plane of issue #4. It owns no network: each handler returns the messages it wants
sent and the produce requests it completed, and the cluster puts them on the wire, so every step
stays an explicit, interleavable call.
"""
from __future__ import annotations

from kverify.impl.replication import messages as M
from kverify.impl.replication.log import UNDEFINED, ReplicaLog

OFFLINE = "offline"
LEADER = "leader"
FOLLOWER = "follower"
# follower fetch states
IDLE = "idle"              # no leader to follow
TRUNCATING = "truncating"  # must settle its log end with OffsetsForLeaderEpoch before fetching
FETCHING = "fetching"

# follower state kept by a leader: [leo, last_caught_up_ms, leader_leo_at_last_fetch, last_fetch_ms, broker_epoch]
_LEO, _LCU, _LAST_LEADER_LEO, _LAST_FETCH, _BEPOCH = range(5)


class Replica:
    __slots__ = ("broker", "tp", "log", "hw", "hw_checkpoint", "role", "leader", "leader_epoch",
                 "partition_epoch", "replicas", "isr", "pending_isr", "leso", "followers", "waiting",
                 "fstate", "broker_epoch", "alter_blocked", "epochs_applied")

    def __init__(self, broker: int, tp: tuple, broker_epoch: int = -1):
        self.broker = broker
        self.tp = tp
        self.log = ReplicaLog()
        self.hw = 0
        self.hw_checkpoint = 0
        self.role = OFFLINE
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: tuple = ()
        self.isr: tuple = ()
        self.pending_isr: tuple | None = None
        self.leso = -1
        self.followers: dict[int, list] = {}
        self.waiting: list[tuple[int, int]] = []   # (produce id, offset the HW must reach)
        self.fstate = IDLE
        self.broker_epoch = broker_epoch
        self.alter_blocked = False   # a proposal was refused as stale: wait for a new LeaderAndIsr
        self.epochs_applied = (-1, -1)   # (leader, partition) epoch last applied; kept across restarts

    # ================================================================ shared
    def copy(self) -> "Replica":
        r = Replica.__new__(Replica)
        r.broker = self.broker
        r.tp = self.tp
        r.log = self.log.copy()
        r.hw = self.hw
        r.hw_checkpoint = self.hw_checkpoint
        r.role = self.role
        r.leader = self.leader
        r.leader_epoch = self.leader_epoch
        r.partition_epoch = self.partition_epoch
        r.replicas = self.replicas
        r.isr = self.isr
        r.pending_isr = self.pending_isr
        r.leso = self.leso
        r.followers = {k: list(v) for k, v in self.followers.items()}
        r.waiting = list(self.waiting)
        r.fstate = self.fstate
        r.broker_epoch = self.broker_epoch
        r.alter_blocked = self.alter_blocked
        r.epochs_applied = self.epochs_applied
        return r

    def snapshot(self) -> tuple:
        return (self.broker, self.tp, self.log.snapshot(), self.hw, self.hw_checkpoint, self.role,
                self.leader, self.leader_epoch, self.partition_epoch, self.replicas, self.isr,
                self.pending_isr, self.leso,
                tuple(sorted((k, tuple(v)) for k, v in self.followers.items())),
                tuple(self.waiting), self.fstate, self.broker_epoch, self.alter_blocked, self.epochs_applied)

    def flush(self) -> None:
        self.log.flush()
        self.hw_checkpoint = self.hw

    def restart(self, lossy: bool, broker_epoch: int) -> list[tuple[int, str]]:
        """In-memory state is gone; a lossy restart also loses the unflushed log suffix."""
        dropped = [(pid, "DISCONNECTED") for pid, _ in self.waiting]
        if lossy:
            self.log.lose_unflushed()
            self.hw = min(self.hw_checkpoint, self.log.leo)
        self.hw = min(self.hw, self.log.leo)
        self.role = OFFLINE
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.isr = ()
        self.pending_isr = None
        self.leso = -1
        self.followers = {}
        self.waiting = []
        self.fstate = IDLE
        self.broker_epoch = broker_epoch
        self.alter_blocked = False
        return dropped

    # ================================================================ becoming leader / follower
    def become_leader(self, msg: M.LeaderAndIsr, now: int, settings) -> list[tuple[int, str]]:
        """Apply a LeaderAndIsr naming this replica leader (epoch already checked by the broker)."""
        new_epoch = msg.leader_epoch != self.leader_epoch or self.role != LEADER
        self.epochs_applied = (msg.leader_epoch, msg.partition_epoch)
        self.role = LEADER
        self.leader = self.broker
        self.leader_epoch = msg.leader_epoch
        self.partition_epoch = msg.partition_epoch
        self.replicas = msg.replicas
        self.isr = msg.isr
        self.pending_isr = None
        self.alter_blocked = False
        self.fstate = IDLE
        if new_epoch:
            # KAFKA-7415: record where the new epoch starts before any append
            self.log.assign_epoch_start(msg.leader_epoch, self.log.leo)
            self.leso = self.log.leo
            # followers must fetch again in this epoch before they count (their LEO becomes unknown)
            self.followers = {r: [-1, now if r in msg.isr else 0, -1, -1, -1]
                              for r in msg.replicas if r != self.broker}
        else:
            for r in msg.replicas:
                if r != self.broker and r not in self.followers:
                    self.followers[r] = [-1, 0, -1, -1, -1]
        self.maybe_increment_hw(settings)
        return self.complete_waiting(settings)

    def become_follower(self, msg: M.LeaderAndIsr, settings) -> list[tuple[int, str]]:
        failed = [(pid, M.NOT_LEADER_OR_FOLLOWER) for pid, _ in self.waiting]
        prev_role, prev_leader = self.role, self.leader
        self.epochs_applied = (msg.leader_epoch, msg.partition_epoch)
        self.waiting = []
        self.role = FOLLOWER
        self.leader = msg.leader
        self.leader_epoch = msg.leader_epoch
        self.partition_epoch = msg.partition_epoch
        self.replicas = msg.replicas
        self.isr = msg.isr
        self.pending_isr = None
        self.alter_blocked = False
        self.followers = {}
        self.leso = -1
        if msg.leader < 0:
            self.fstate = IDLE
        elif settings.truncate_to_hw:
            # pre KIP-101: cut the log back to the local high watermark and fetch from there
            self.log.truncate_to(self.hw)
            self.fstate = FETCHING
        elif (settings.skip_truncate_same_leader and prev_role == FOLLOWER and prev_leader == msg.leader
              and self.fstate == FETCHING):
            pass  # KAFKA-7164: same leader id, so no truncation is attempted
        else:
            self.fstate = TRUNCATING
        self.hw = min(self.hw, self.log.leo)
        return failed

    def become_offline(self) -> list[tuple[int, str]]:
        failed = [(pid, M.NOT_LEADER_OR_FOLLOWER) for pid, _ in self.waiting]
        self.waiting = []
        self.role = OFFLINE
        self.fstate = IDLE
        self.followers = {}
        self.pending_isr = None
        self.alter_blocked = False
        return failed

    # ================================================================ leader side
    def maximal_isr(self, settings) -> tuple:
        if self.pending_isr is None or settings.no_maximal_isr:
            return self.isr
        return tuple(sorted(set(self.isr) | set(self.pending_isr)))

    def under_min_isr(self, settings) -> bool:
        return len(self.isr) < settings.effective_min_isr(len(self.replicas))

    def maybe_increment_hw(self, settings) -> bool:
        if self.role != LEADER:
            return False
        if not settings.hw_ignores_min_isr and self.under_min_isr(settings):
            return False  # KAFKA-15583: no HW progress while under min ISR
        candidate = self.log.leo
        followers = self.followers
        for r in self.maximal_isr(settings):
            if r != self.broker:
                f = followers.get(r)
                leo = f[_LEO] if f is not None else -1
                if leo < candidate:
                    candidate = leo
        if candidate > self.hw:
            self.hw = candidate
            return True
        return False

    def complete_waiting(self, settings) -> list[tuple[int, str]]:
        if not self.waiting:
            return []
        done, keep = [], []
        enough = len(self.maximal_isr(settings)) >= settings.effective_min_isr(len(self.replicas))
        for pid, required in self.waiting:
            if self.hw >= required:
                done.append((pid, M.NONE if enough else M.NOT_ENOUGH_REPLICAS_AFTER_APPEND))
            else:
                keep.append((pid, required))
        self.waiting = keep
        return done

    def append_as_leader(self, value, acks: int, pid: int, settings) -> tuple[str | None, int, list]:
        """Leader append. Returns (error, offset, completed): error None = acks=all request parked."""
        if self.role != LEADER:
            return M.NOT_LEADER_OR_FOLLOWER, -1, []
        if acks == -1 and self.under_min_isr(settings):
            return M.NOT_ENOUGH_REPLICAS, -1, []
        off = self.log.append(self.leader_epoch, value)
        err = M.NONE
        if acks == -1:
            self.waiting.append((pid, off + 1))
            err = None
        self.maybe_increment_hw(settings)
        return err, off, self.complete_waiting(settings)

    def _check_epoch(self, current_leader_epoch: int, settings) -> str:
        if self.role != LEADER:
            return M.NOT_LEADER_OR_FOLLOWER
        if settings.no_fetch_epoch_fencing:
            return M.NONE
        if current_leader_epoch < self.leader_epoch:
            return M.FENCED_LEADER_EPOCH
        if current_leader_epoch > self.leader_epoch:
            return M.UNKNOWN_LEADER_EPOCH
        return M.NONE

    def handle_fetch(self, req: M.Fetch, now: int, settings, eligible):
        """Serve a follower fetch. Returns (response, AlterPartition new-ISR proposal or None, completed)."""
        err = self._check_epoch(req.current_leader_epoch, settings)
        if err == M.NONE and req.replica_id not in self.followers:
            err = M.NOT_LEADER_OR_FOLLOWER
        log = self.log
        if err == M.NONE and req.fetch_offset > log.leo:
            err = M.OFFSET_OUT_OF_RANGE
        if err != M.NONE:
            return M.FetchResponse(self.tp, err, req.fetch_offset, req.current_leader_epoch, (), self.hw), None, []
        hw_at_read = self.hw
        limit = settings.config.fetch_max_records
        records = log.read(req.fetch_offset, req.fetch_offset + limit if limit else None)
        f = self.followers[req.replica_id]
        if settings.no_broker_epoch_check or req.broker_epoch >= f[_BEPOCH]:
            leader_leo = log.leo
            if req.fetch_offset >= leader_leo:
                f[_LCU] = now
            elif f[_LAST_LEADER_LEO] >= 0 and req.fetch_offset >= f[_LAST_LEADER_LEO]:
                f[_LCU] = f[_LAST_FETCH]
            f[_LEO] = req.fetch_offset
            f[_LAST_LEADER_LEO] = leader_leo
            f[_LAST_FETCH] = now
            f[_BEPOCH] = req.broker_epoch
        proposal = self._maybe_expand(req.replica_id, settings, eligible)
        self.maybe_increment_hw(settings)
        resp = M.FetchResponse(self.tp, M.NONE, req.fetch_offset, req.current_leader_epoch, records, hw_at_read)
        return resp, proposal, self.complete_waiting(settings)

    def _maybe_expand(self, rid: int, settings, eligible):
        if self.pending_isr is not None or rid in self.isr:
            return None
        f = self.followers[rid]
        leo = f[_LEO]
        if leo < self.hw:
            return None
        if not settings.expand_without_epoch_start and leo < self.leso:
            return None  # KAFKA-7128: must have reached the start of the leader's epoch
        if not eligible(rid):
            return None
        self.pending_isr = self.isr + (rid,)
        return self.pending_isr

    def lagging_isr_members(self, now: int, settings) -> list:
        """The followers in the ISR not caught up for replica.lag.time.max.ms (reads only)."""
        lag = settings.config.replica_lag_time_max_ms
        leo = self.log.leo
        out = []
        for r in self.isr:
            if r == self.broker:
                continue
            f = self.followers.get(r)
            if f is None or (f[_LEO] != leo and now - f[_LCU] > lag):
                out.append(r)
        return out

    def maybe_shrink(self, now: int, settings):
        """The periodic ISR check: propose dropping followers not caught up for replica.lag.time.max.ms."""
        if self.role != LEADER or self.pending_isr is not None:
            return None
        out = self.lagging_isr_members(now, settings)
        if not out:
            return None
        self.pending_isr = tuple(r for r in self.isr if r not in out)
        return self.pending_isr

    def follower_broker_epoch(self, rid: int) -> int:
        if rid == self.broker:
            return self.broker_epoch
        f = self.followers.get(rid)
        return f[_BEPOCH] if f is not None else -1

    def handle_alter_response(self, resp: M.AlterPartitionResponse, settings) -> list[tuple[int, str]]:
        """Kafka's Partition.handleAlterPartitionError: commit on success; roll back to the committed
        ISR only when the controller certainly did not apply it (INELIGIBLE_REPLICA); on a stale
        partition or leader epoch keep using the maximal ISR until a new LeaderAndIsr arrives; on
        anything else keep the proposal so the ISR task retries it."""
        if self.role != LEADER or self.pending_isr is None:
            return []
        if resp.error == M.NONE:
            if resp.leader_epoch == self.leader_epoch and resp.leader == self.broker:
                self.isr = resp.isr
                self.partition_epoch = resp.partition_epoch
                self.epochs_applied = (self.leader_epoch, resp.partition_epoch)
                self.pending_isr = None
        elif resp.error == M.INELIGIBLE_REPLICA:
            self.pending_isr = None
        elif resp.error in (M.INVALID_UPDATE_VERSION, M.FENCED_LEADER_EPOCH):
            self.alter_blocked = True
        self.maybe_increment_hw(settings)
        return self.complete_waiting(settings)

    def apply_isr_write(self, state, settings) -> list[tuple[int, str]]:
        """Outcome of the leader's own conditional ISR write (pre-2.7): adopt it, or keep the old ISR."""
        if state is not None:
            self.isr = state.isr
            self.partition_epoch = state.version
            self.epochs_applied = (self.leader_epoch, state.version)
        self.pending_isr = None
        self.maybe_increment_hw(settings)
        return self.complete_waiting(settings)

    def handle_offsets_for_leader_epoch(self, req: M.OffsetsForLeaderEpoch, settings):
        err = self._check_epoch(req.current_leader_epoch, settings)
        if err != M.NONE:
            return M.OffsetsForLeaderEpochResponse(self.tp, err, req.current_leader_epoch, UNDEFINED, UNDEFINED)
        if settings.ofle_offset_only:
            epoch, end = UNDEFINED, self.log.legacy_end_offset_for(req.leader_epoch)
        else:
            epoch, end = self.log.end_offset_for(req.leader_epoch)
        return M.OffsetsForLeaderEpochResponse(self.tp, M.NONE, req.current_leader_epoch, epoch, end)

    # ================================================================ follower side
    def next_request(self):
        """The request this follower would send to its leader now (None if it has none to send)."""
        if self.role != FOLLOWER or self.leader < 0 or self.fstate == IDLE:
            return None
        if self.fstate == TRUNCATING:
            if self.log.leo == 0:
                self.fstate = FETCHING
            else:
                return M.OffsetsForLeaderEpoch(self.tp, self.broker, self.log.latest_epoch(), self.leader_epoch)
        return M.Fetch(self.tp, self.broker, self.log.leo, self.log.last_record_epoch(), self.leader_epoch,
                       self.broker_epoch)

    def handle_fetch_response(self, resp: M.FetchResponse, settings) -> bool:
        if self.role != FOLLOWER or self.fstate != FETCHING:
            return False
        if not settings.no_fetch_epoch_fencing and resp.request_leader_epoch != self.leader_epoch:
            return False  # answer to a fetch from an earlier epoch
        if resp.fetch_offset != self.log.leo:
            return False
        if resp.error == M.OFFSET_OUT_OF_RANGE:
            self.fstate = TRUNCATING
            return True
        if resp.error != M.NONE:
            return False
        if resp.records:
            self.log.append_records(resp.records)
        self.hw = min(resp.high_watermark, self.log.leo)
        return True

    def handle_offsets_response(self, resp: M.OffsetsForLeaderEpochResponse, settings) -> bool:
        if self.role != FOLLOWER or self.fstate != TRUNCATING:
            return False
        if resp.request_leader_epoch != self.leader_epoch or resp.error != M.NONE:
            return False
        log = self.log
        done = True
        if resp.end_offset == UNDEFINED:
            target = self.hw                       # no usable answer: fall back to the high watermark
        elif settings.ofle_offset_only or resp.leader_epoch == UNDEFINED:
            target = min(resp.end_offset, log.leo)  # pre KIP-279: an offset only
        else:
            f_epoch, f_end = log.end_offset_for(resp.leader_epoch)
            if f_end == UNDEFINED:
                target = 0
            elif f_epoch == resp.leader_epoch:
                target = min(resp.end_offset, f_end, log.leo)
            else:  # the follower does not know the leader's epoch: cut to its own end and ask again
                target = min(f_end, log.leo)
                done = False
        log.truncate_to(target)
        self.hw = min(self.hw, log.leo)
        if done:
            self.fstate = FETCHING
        return True
