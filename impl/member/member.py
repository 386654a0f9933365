"""The consumer member: Kafka's client-side group state machine as a pure, steppable value.

Re-creates what `AbstractCoordinator` + `ConsumerCoordinator` (Java consumer 3.6) do, without
threads, sockets or clocks, so a model checker can interleave N members with the coordinator and a
lossy network. Every input is a method call that returns the requests to send (messages of
`kverify.impl.coordinator.messages`, each with a correlation id chosen by this member):

    start / poll        the application's poll loop (join if needed, fetch positions, consume)
    tick(now)           the heartbeat thread and the network client's timers
    heartbeat           send a heartbeat now (a model checker's shortcut for "the interval elapsed")
    commit(offsets)     commitSync/commitAsync: one attempt, the outcome lands in `commit_results`
    on_response(cid, r) a response arrives; unknown/stale correlation ids are ignored
    on_disconnect       the connection to the coordinator broke: every in-flight request fails
    leave / crash / restart / subscribe / set_cluster

Modelling choices (each one a deliberate simplification, listed so nobody mistakes it for Kafka):
* FindCoordinator is instantaneous: after NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / a disconnect
  the coordinator is "unknown" and the next `poll` or `tick` rediscovers it (one step later).
* An exception the Java consumer throws out of poll() for a non-retriable error (FENCED_INSTANCE_ID,
  GROUP_MAX_SIZE_REACHED, an assignor failure, an unusable assignment, ...) is treated as the
  application dying: the member stops sending (like a crash, no LeaveGroup) and `fatal` names it.
* Retry back-off is "until the next poll"; errors Kafka retries immediately (UNKNOWN_MEMBER_ID,
  ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, MEMBER_ID_REQUIRED) are retried inside `on_response`.
* Commits: the application commits with `commit()`; with `config.commit_on_revoke` its
  onPartitionsRevoked callback commits synchronously (the poll thread blocks, retrying retriable
  failures for up to 60 s, while the heartbeat thread keeps running); with
  `config.auto_commit_interval_ms` poll() auto-commits every interval, onJoinPrepare first sends an
  async commit and waits for it (up to the rebalance timeout; EAGER partitions are marked pending
  revocation meanwhile, KAFKA-14196) and close() commits before leaving.
* "consuming" = owned partitions whose fetch position is known (OffsetFetch answered) and that are
  not pending revocation; poll() advances each by `fetch_per_poll` records. Callbacks: revoked/lost
  stop consumption at once, assigned starts it after the position is fetched.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.coordinator.messages import (
    Errors as E, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, LeaveGroupResponse, MemberIdentity, OffsetAndMetadata, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse, TopicPartition)
from kverify.impl.member import behaviours as MB
from kverify.impl.member.codec import CodecError, decode_assignment, encode_subscription
from kverify.impl.member.config import COOPERATIVE, MemberConfig
from kverify.impl.member.leader import LeaderError, perform_assignment

PROTOCOL_TYPE = "consumer"
DEFAULT_API_TIMEOUT_MS = 60000          # default.api.timeout.ms: how long commitSync keeps retrying


class MemberState:
    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"


class Generation(NamedTuple):
    generation_id: int
    member_id: str
    protocol_name: Optional[str]


NO_GENERATION = Generation(-1, "", None)


class InFlight(NamedTuple):
    """A request this member sent and still waits for (what Kafka keeps in its response handler)."""
    kind: str               # "join" | "sync" | "heartbeat" | "commit" | "fetch" | "leave"
    sent: Generation        # the generation when sent (Kafka's `sentGeneration`)
    sent_at: int
    payload: tuple          # commit: (offsets, purpose); fetch: partitions; others: ()


class Blocked(NamedTuple):
    """The poll thread is inside a rebalance callback, blocked in commitSync."""
    phase: str              # "prepare" (onJoinPrepare) | "complete" (onJoinComplete)
    revoked: tuple          # partitions being revoked
    assigned: tuple         # phase "complete": the new assignment to install afterwards
    offsets: tuple          # ((TopicPartition, offset), ...) being committed
    deadline: int           # stop retrying retriable failures at this time
    cid: Optional[int]      # the commit in flight, None = resend at the next poll


# error classes of Kafka's handlers
_JOIN_FATAL = frozenset({E.FENCED_INSTANCE_ID, E.INCONSISTENT_GROUP_PROTOCOL, E.INVALID_SESSION_TIMEOUT,
                         E.INVALID_GROUP_ID, "GROUP_AUTHORIZATION_FAILED", E.GROUP_MAX_SIZE_REACHED,
                         "UNSUPPORTED_VERSION"})
_COORDINATOR_GONE = frozenset({E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR})
_IMMEDIATE_RETRY = frozenset({E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION, E.REBALANCE_IN_PROGRESS,
                              E.MEMBER_ID_REQUIRED})
DISCONNECT = "DISCONNECT"               # pseudo error: the request failed because the connection broke

_SLOTS = ("config", "_b_13891", "_b_12983", "_b_unowned", "_b_14196",
          "now", "next_cid", "incarnation", "closed", "crashed", "fatal",
          "state", "generation", "rejoin_needed", "needs_join_prepare", "join_cid",
          "subscription", "joined_subscription", "cluster", "assignment_snapshot", "is_leader",
          "owned", "positions", "stale_positions", "sticky_memory", "coordinator_known",
          "hb_deadline", "session_deadline", "poll_deadline", "inflight", "blocked",
          "auto_commit_deadline", "prepare_commit", "join_prepare_deadline", "pending_revocation",
          "events", "commit_results")


class Member:
    """One consumer process (and, after `restart`, its next incarnations). See the module docstring."""
    __slots__ = _SLOTS

    def __init__(self, config: MemberConfig, behaviours=frozenset(), now: int = 0):
        self.config = config
        behaviours = frozenset(behaviours)
        self._b_13891 = MB.SYNC_REBALANCE_RESETS_GENERATION in behaviours
        self._b_12983 = MB.JOIN_PREPARE_ONCE in behaviours
        self._b_unowned = MB.COMMIT_UNOWNED in behaviours
        self._b_14196 = MB.NO_PENDING_REVOCATION in behaviours
        self.now = now
        self.next_cid = config.correlation_base + 1
        self.incarnation = 0
        self.events = ()
        self.commit_results = ()
        self._fresh_process()

    def _fresh_process(self):
        """State of a newly started consumer process (KafkaConsumer constructed + subscribed)."""
        c = self.config
        self.closed = False
        self.crashed = False
        self.fatal = None
        self.state = MemberState.UNJOINED
        self.generation = NO_GENERATION
        self.rejoin_needed = True
        self.needs_join_prepare = True
        self.join_cid = None
        self.subscription = tuple(c.topics)
        self.joined_subscription = None
        self.cluster = c.cluster
        self.assignment_snapshot = None
        self.is_leader = False
        self.owned = frozenset()
        self.positions = {}
        self.stale_positions = {}
        self.sticky_memory = None
        self.coordinator_known = True
        self.hb_deadline = self.now + c.heartbeat_interval_ms
        self.session_deadline = self.now + c.session_timeout_ms
        self.poll_deadline = self.now + c.rebalance_timeout_ms
        self.inflight = {}
        self.blocked = None
        self.auto_commit_deadline = self.now + (c.auto_commit_interval_ms or 0)
        self.prepare_commit = None           # onJoinPrepare's auto-commit: (cid, outcome or None)
        self.join_prepare_deadline = None    # Kafka's joinPrepareTimer
        self.pending_revocation = frozenset()

    # ---- copies and fingerprints --------------------------------------------------------------
    def copy(self) -> "Member":
        """Independent copy: every field is immutable except the three dicts, which are copied
        (the field-by-field assignment is generated from _SLOTS once, see `_make_copier`)."""
        return _copy_member(self)

    def snapshot(self) -> tuple:
        """Hashable; equal snapshots <=> equal state (the journal and commit log are left out)."""
        return (self.now, self.next_cid, self.incarnation, self.closed, self.crashed, self.fatal,
                self.state, self.generation, self.rejoin_needed, self.needs_join_prepare,
                self.join_cid, self.subscription, self.joined_subscription, self.cluster,
                self.assignment_snapshot, self.is_leader, tuple(sorted(self.owned)),
                tuple(sorted(self.positions.items())), tuple(sorted(self.stale_positions.items())),
                self.sticky_memory, self.coordinator_known, self.hb_deadline, self.session_deadline,
                self.poll_deadline, tuple(sorted(self.inflight.items())), self.blocked,
                self.auto_commit_deadline, self.prepare_commit, self.join_prepare_deadline,
                tuple(sorted(self.pending_revocation)))

    def __repr__(self):
        return (f"Member({self.config.client_id} {self.state} gen={self.generation.generation_id} "
                f"id={self.generation.member_id!r} owned={sorted(map(str, self.owned))})")

    # ---- observers ----------------------------------------------------------------------------
    @property
    def member_id(self) -> str:
        return self.generation.member_id

    @property
    def alive(self) -> bool:
        return not self.closed and self.fatal is None

    @property
    def consuming(self) -> frozenset:
        """Partitions this process fetches and processes records of right now."""
        if not self.alive:
            return frozenset()
        return frozenset(tp for tp in self.owned if tp in self.positions and tp not in self.pending_revocation)

    @property
    def protocol(self) -> str:
        return self.config.rebalance_protocol

    def wants(self, correlation_id: int) -> bool:
        """True if a response with this correlation id would be handled (not ignored)."""
        return self.alive and correlation_id in self.inflight

    def generation_if_stable(self) -> Optional[Generation]:
        return self.generation if self.state == MemberState.STABLE else None

    # ---- inputs -------------------------------------------------------------------------------
    def start(self, now: Optional[int] = None) -> list:
        """The application subscribed and calls poll() for the first time."""
        return self.poll(now)

    def poll(self, now: Optional[int] = None) -> list:
        """One call of KafkaConsumer.poll(): rejoin if needed, fetch positions, consume."""
        if not self.alive:
            return []
        self._clock(now)
        self.poll_deadline = self.now + self.config.rebalance_timeout_ms
        self._rediscover()
        if self.blocked is not None:
            return self._retry_blocked_commit()
        out = self._join_if_needed()
        if self.blocked is None:
            out += self._maybe_auto_commit()
            out += self._fetch_positions()
            self._consume()
        return out

    def tick(self, now: int) -> list:
        """Time passes: request timeouts, then one round of the heartbeat thread."""
        if not self.alive:
            return []
        self._clock(now)
        out = []
        c = self.config
        expired = [cid for cid, f in self.inflight.items()
                   if self.now >= f.sent_at + (c.join_timeout_ms if f.kind == "join" else c.request_timeout_ms)]
        if expired:
            self._note(f"request {min(expired)} timed out: disconnecting")
            out += self.on_disconnect()
        if not self._heartbeat_enabled() or not self.alive:
            return out
        if not self.coordinator_known:
            self._rediscover()
        elif self.now >= self.session_deadline:
            self._note("session timed out without a heartbeat response: coordinator marked unknown")
            out += self._mark_coordinator_unknown()
        elif self.now >= self.poll_deadline:
            self._note("poll timeout expired (max.poll.interval.ms): leaving the group")
            out += self._maybe_leave_group()
        elif self.now >= self.hb_deadline:
            out += self._send_heartbeat()
        return out

    def heartbeat(self, now: Optional[int] = None) -> list:
        """Send a heartbeat now if the heartbeat thread is running (COMPLETING_REBALANCE/STABLE)."""
        if not self.alive:
            return []
        self._clock(now)
        if not self._heartbeat_enabled():
            return []
        self._rediscover()
        return self._send_heartbeat()

    def commit(self, offsets=None, now: Optional[int] = None) -> list:
        """commitSync()/commitAsync(offsets): one attempt. `offsets` maps TopicPartition -> offset;
        None = the position of every assigned partition that has one (commitSync()'s allConsumed)."""
        if not self.alive or self.blocked is not None:
            return []
        self._clock(now)
        self._rediscover()
        if offsets is None:
            offsets = dict(self._all_consumed())
            if self._b_unowned:
                for tp, off in self.stale_positions.items():
                    offsets.setdefault(tp, off)
        req = self._commit_request(tuple(sorted(dict(offsets).items())), "user")
        return [req] if req is not None else []

    def subscribe(self, topics, now: Optional[int] = None) -> list:
        """KafkaConsumer.subscribe(topics): the next poll rejoins if the subscription changed."""
        if not self.alive:
            return []
        self._clock(now)
        self.subscription = tuple(topics)
        return []

    def set_cluster(self, cluster, now: Optional[int] = None) -> list:
        """New topic metadata; a leader whose assignment used other metadata rejoins (next poll)."""
        if not self.alive:
            return []
        self._clock(now)
        self.cluster = tuple(sorted((str(t), int(n)) for t, n in dict(cluster).items()))
        return []

    def leave(self, now: Optional[int] = None) -> list:
        """KafkaConsumer.close(): onLeavePrepare, then LeaveGroup (dynamic members only), then gone."""
        if not self.alive:
            self.closed = True
            return []
        self._clock(now)
        out = []
        if self.config.auto_commit_interval_ms is not None:      # maybeAutoCommitOffsetsSync
            req = self._commit_request(self._all_consumed(), "auto-close")
            if req is not None:
                out.append(req)
        dropped = tuple(sorted(self.owned))
        if dropped:
            if self._generation_reset_or_no_member() or self._rebalance_in_progress():
                self._note(f"lost {_fmt(dropped)} (leaving)")
            else:
                self._note(f"revoked {_fmt(dropped)} (leaving)")
                if self.config.commit_on_revoke:
                    offs = tuple((tp, self.positions[tp]) for tp in dropped if tp in self.positions)
                    req = self._commit_request(offs, "leave") if offs else None
                    if req is not None:
                        out.append(req)
            self._drop(dropped)
        out += self._maybe_leave_group(reason="the consumer is being closed")
        self.closed = True
        self.inflight = {}
        self.blocked = None
        return out

    def crash(self, now: Optional[int] = None) -> list:
        """The process dies: no callbacks, no LeaveGroup; in-flight responses will be ignored."""
        self._clock(now)
        if self.alive:
            self._note("crashed")
        self.closed = True
        self.crashed = True
        self.inflight = {}
        self.blocked = None
        return []

    def restart(self, now: Optional[int] = None) -> list:
        """A new process with the same configuration (same group.instance.id) starts and polls."""
        self._clock(now)
        if self.alive:
            self.crash()
        self.incarnation += 1
        self._fresh_process()
        self._note(f"restarted (incarnation {self.incarnation})")
        return self.poll()

    def on_disconnect(self, now: Optional[int] = None) -> list:
        """The connection to the coordinator broke: mark it unknown, fail every in-flight request."""
        if not self.alive:
            return []
        self._clock(now)
        return self._mark_coordinator_unknown()

    def on_response(self, correlation_id: int, response, now: Optional[int] = None) -> list:
        """Handle a response; a correlation id this member no longer waits for is ignored."""
        if not self.alive:
            return []
        self._clock(now)
        f = self.inflight.pop(correlation_id, None)
        if f is None:
            return []
        handler = _HANDLERS.get((f.kind, type(response)))
        if handler is None:
            raise TypeError(f"{type(response).__name__} is not a response to a {f.kind} request")
        return handler(self, correlation_id, f, response)

    # ---- the join loop (AbstractCoordinator.joinGroupIfNeeded) --------------------------------
    def _rejoin_needed_or_pending(self) -> bool:
        if self.is_leader and self.assignment_snapshot is not None and self.assignment_snapshot != self.cluster:
            self._request_rejoin("cached metadata has changed")
        if self.joined_subscription is not None and self.joined_subscription != self.subscription:
            self._request_rejoin("subscription has changed")
        return self.rejoin_needed or self.join_cid is not None

    def _join_if_needed(self) -> list:
        if not self.alive or self.blocked is not None or not self.coordinator_known:
            return []
        if not self._rejoin_needed_or_pending():
            return []
        out = []
        if self.needs_join_prepare:
            self.needs_join_prepare = False
            ready = self._auto_commit_before_revoking(out)
            if not ready:
                self.needs_join_prepare = True
                return out
            out += self._on_join_prepare()
            if self.blocked is not None:
                return out
        if self.join_cid is None:
            out.append(self._send_join())
        return out

    def _send_join(self) -> JoinGroupRequest:
        c = self.config
        self.state = MemberState.PREPARING_REBALANCE
        self.joined_subscription = self.subscription
        owned = tuple(sorted(self.owned))
        protocols = tuple(
            (name, encode_subscription(self.subscription, owned, self.generation.generation_id,
                                       self.sticky_memory if name == "sticky" else None))
            for name in c.assignors)
        cid = self._cid()
        req = JoinGroupRequest(
            group_id=c.group_id, member_id=self.generation.member_id, group_instance_id=c.instance_id,
            protocol_type=PROTOCOL_TYPE, protocols=protocols, session_timeout_ms=c.session_timeout_ms,
            rebalance_timeout_ms=c.rebalance_timeout_ms, require_known_member_id=c.instance_id is None,
            support_skipping_assignment=True, client_id=c.client_id, correlation_id=cid)
        self.inflight[cid] = InFlight("join", self.generation, self.now, ())
        self.join_cid = cid
        self._note(f"JoinGroup cid={cid} member={self.generation.member_id!r} gen={self.generation.generation_id} owned={_fmt(owned)}")
        return req

    def _join_failed(self, error: str) -> list:
        """The join future failed (joinGroupIfNeeded's failure branch)."""
        self.join_cid = None
        self._request_rejoin(f"rebalance failed due to {error}")
        if error in _IMMEDIATE_RETRY:
            return self._join_if_needed()
        return []               # retriable: back off until the next poll

    def _on_join_response(self, cid, f: InFlight, r: JoinGroupResponse) -> list:
        err = r.error
        self.join_cid = None
        if err == E.NONE:
            if r.protocol_type is not None and r.protocol_type != PROTOCOL_TYPE:
                return self._die(E.INCONSISTENT_GROUP_PROTOCOL)
            if self.state != MemberState.PREPARING_REBALANCE:
                return self._join_failed("UNJOINED_GROUP")
            self.state = MemberState.COMPLETING_REBALANCE
            self._reset_heartbeat_timers()
            self.generation = Generation(r.generation_id, r.member_id, r.protocol_name)
            self._note(f"joined gen={r.generation_id} id={r.member_id!r} protocol={r.protocol_name} leader={r.leader_id == r.member_id}")
            assignments = ()
            if r.leader_id == r.member_id:
                try:
                    assignments = self._on_leader_elected(r)
                except LeaderError as exc:
                    return self._die(f"leader assignment failed: {exc}")
            return [self._send_sync(assignments)]
        if err == E.UNKNOWN_MEMBER_ID:
            if self.generation == f.sent:
                self._reset(reset_member_id=True, reason="UNKNOWN_MEMBER_ID from JoinGroup")
            return self._join_failed(err)
        if err in _COORDINATOR_GONE:
            out = self._mark_coordinator_unknown()
            return out + self._join_failed(err)
        if err == E.MEMBER_ID_REQUIRED:
            self.generation = Generation(-1, r.member_id, None)
            return self._join_failed(err)
        if err in (E.REBALANCE_IN_PROGRESS, E.COORDINATOR_LOAD_IN_PROGRESS):
            return self._join_failed(err)
        return self._die(err if err in _JOIN_FATAL else f"unexpected JoinGroup error {err}")

    def _on_leader_elected(self, r: JoinGroupResponse) -> tuple:
        if r.protocol_name not in self.config.assignors:
            raise LeaderError(f"coordinator selected invalid assignment protocol {r.protocol_name!r}")
        self.is_leader = True
        self.assignment_snapshot = self.cluster
        if r.skip_assignment:
            self._note("static leader skips the assignment (keeps the stored one)")
            return ()
        return perform_assignment(self.config.group_id, r.generation_id, r.member_id, r.protocol_name,
                                  r.members, self.cluster)

    def _send_sync(self, assignments: tuple) -> SyncGroupRequest:
        c = self.config
        cid = self._cid()
        req = SyncGroupRequest(
            group_id=c.group_id, generation_id=self.generation.generation_id,
            member_id=self.generation.member_id, group_instance_id=c.instance_id,
            protocol_type=PROTOCOL_TYPE, protocol_name=self.generation.protocol_name,
            assignments=assignments, correlation_id=cid)
        self.inflight[cid] = InFlight("sync", self.generation, self.now, ())
        self.join_cid = cid
        return req

    def _on_sync_response(self, cid, f: InFlight, r: SyncGroupResponse) -> list:
        err = r.error
        self.join_cid = None
        if err == E.NONE:
            if r.protocol_type is not None and r.protocol_type != PROTOCOL_TYPE:
                return self._die(E.INCONSISTENT_GROUP_PROTOCOL)
            g = self.generation
            if not _generation_reset(g) and self.state == MemberState.COMPLETING_REBALANCE:
                if r.protocol_name is not None and r.protocol_name != g.protocol_name:
                    return self._die(E.INCONSISTENT_GROUP_PROTOCOL)
                self.state = MemberState.STABLE
                self.rejoin_needed = False
                self._note(f"synced gen={g.generation_id}")
                return self._on_join_complete(r.assignment)
            return self._join_failed(E.ILLEGAL_GENERATION)
        if err == E.REBALANCE_IN_PROGRESS:
            if self._b_13891:
                self._reset(reset_member_id=False, reason="REBALANCE_IN_PROGRESS from SyncGroup (KAFKA-13891)")
            return self._join_failed(err)
        if err in (E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION):
            if self.generation == f.sent:
                self._reset(reset_member_id=err == E.UNKNOWN_MEMBER_ID, reason=f"{err} from SyncGroup")
            return self._join_failed(err)
        if err in _COORDINATOR_GONE:
            out = self._mark_coordinator_unknown()
            return out + self._join_failed(err)
        return self._die(err if err in (E.FENCED_INSTANCE_ID, "GROUP_AUTHORIZATION_FAILED")
                         else f"unexpected SyncGroup error {err}")

    # ---- rebalance callbacks (ConsumerCoordinator.onJoinPrepare / onJoinComplete) -------------
    def _auto_commit_before_revoking(self, out: list) -> bool:
        """onJoinPrepare's first half with auto-commit: send an async commit of everything consumed
        and wait for it (until the rebalance timeout); False = not done yet, retry at the next poll."""
        if self.config.auto_commit_interval_ms is None:
            return True
        if self.join_prepare_deadline is None:
            self.join_prepare_deadline = self.now + self.config.rebalance_timeout_ms
        if self.prepare_commit is None:
            if self.protocol != COOPERATIVE and not self._b_14196:
                self.pending_revocation = self.owned
            req = self._commit_request(self._all_consumed(), "auto-prepare")
            if req is None:
                return self._prepare_commit_finished(self.commit_results[-1][2])
            out.append(req)
            self.prepare_commit = (req.correlation_id, None)
        outcome = self.prepare_commit[1]
        if self.now >= self.join_prepare_deadline:
            self._note("auto-commit before revocation timed out (joinPrepare timer): continuing")
            return self._prepare_commit_finished("timeout")
        if outcome is None:
            return False
        if outcome.startswith("retriable:"):
            self.prepare_commit = None
            return False
        return self._prepare_commit_finished(outcome)

    def _prepare_commit_finished(self, outcome: str) -> bool:
        self.prepare_commit = None
        self.join_prepare_deadline = None
        return True

    def _maybe_auto_commit(self) -> list:
        """ConsumerCoordinator.maybeAutoCommitOffsetsAsync at the end of each poll."""
        interval = self.config.auto_commit_interval_ms
        if interval is None or self.now < self.auto_commit_deadline:
            return []
        self.auto_commit_deadline = self.now + interval
        req = self._commit_request(self._all_consumed(), "auto")
        return [req] if req is not None else []

    def _all_consumed(self) -> tuple:
        """SubscriptionState.allConsumed: the position of every assigned partition that has one."""
        return tuple(sorted((tp, off) for tp, off in self.positions.items() if tp in self.owned))

    def _on_join_prepare(self) -> list:
        self.pending_revocation = frozenset()
        self.is_leader = False
        self.assignment_snapshot = None
        owned = tuple(sorted(self.owned))
        if self._generation_reset_or_no_member():
            if owned:
                self._note(f"lost {_fmt(owned)} (generation or member id was reset)")
                self._drop(owned, lost=True)
            return []
        if self.protocol == COOPERATIVE:
            revoked = tuple(tp for tp in owned if tp.topic not in self.subscription)
        else:
            revoked = owned
        if not revoked:
            return []
        req = self._callback_commit("prepare", revoked, ())
        if req is not None:
            return [req]
        self._finish_prepare(revoked)
        return []

    def _finish_prepare(self, revoked: tuple):
        self._note(f"revoked {_fmt(revoked)} (onJoinPrepare)")
        self._drop(revoked)

    def _on_join_complete(self, assignment_bytes: bytes) -> list:
        if len(assignment_bytes) < 2:
            return self._die(f"assignment of {len(assignment_bytes)} bytes from SyncGroup (not an assignment)")
        try:
            assigned = decode_assignment(assignment_bytes)
        except CodecError as exc:
            return self._die(f"unreadable assignment: {exc}")
        if any(tp.topic not in self.subscription for tp in assigned):
            self._note("assignment does not match the subscription: rejoining")
            self._request_rejoin("received assignment does not match the current subscription")
            self.needs_join_prepare = True
            return []
        revoked = ()
        if self.protocol == COOPERATIVE:
            revoked = tuple(sorted(self.owned - frozenset(assigned)))
            if revoked:
                req = self._callback_commit("complete", revoked, assigned)
                if req is not None:
                    return [req]
        self._finish_complete(revoked, assigned)
        return []

    def _finish_complete(self, revoked: tuple, assigned: tuple):
        if revoked:
            self._note(f"revoked {_fmt(revoked)} (onJoinComplete)")
            self._drop(revoked)
            self._request_rejoin("need to revoke partitions and re-join")
        self.sticky_memory = (tuple(assigned), self.generation.generation_id)
        if self.config.auto_commit_interval_ms is not None:
            self.auto_commit_deadline = self.now + self.config.auto_commit_interval_ms
        added = tuple(tp for tp in assigned if tp not in self.owned)
        self.owned = frozenset(assigned)
        for tp in list(self.positions):
            if tp not in self.owned:
                self._forget_position(tp)
        self._note(f"assigned {_fmt(added)} (now owns {_fmt(assigned)})")
        self.needs_join_prepare = True

    def _callback_commit(self, phase: str, revoked: tuple, assigned: tuple):
        """onPartitionsRevoked with commit_on_revoke: start a blocking commitSync, or None."""
        if not self.config.commit_on_revoke:
            return None
        offsets = tuple((tp, self.positions[tp]) for tp in revoked if tp in self.positions)
        if not offsets:
            return None
        req = self._commit_request(offsets, "revoke")
        if req is None:
            return None
        self.blocked = Blocked(phase, revoked, tuple(assigned), offsets,
                               self.now + DEFAULT_API_TIMEOUT_MS, req.correlation_id)
        return req

    def _retry_blocked_commit(self) -> list:
        b = self.blocked
        if b.cid is not None:
            return []
        if self.now >= b.deadline:
            return self._resume_blocked()
        req = self._commit_request(b.offsets, "revoke")
        if req is None:
            return self._resume_blocked()
        self.blocked = b._replace(cid=req.correlation_id)
        return [req]

    def _resume_blocked(self) -> list:
        b, self.blocked = self.blocked, None
        if b.phase == "prepare":
            self._finish_prepare(b.revoked)
            if self.join_cid is None and self.coordinator_known and self.alive:
                return [self._send_join()]
            return []
        self._finish_complete(b.revoked, b.assigned)
        return []

    # ---- heartbeats ---------------------------------------------------------------------------
    def _heartbeat_enabled(self) -> bool:
        return self.state in (MemberState.COMPLETING_REBALANCE, MemberState.STABLE)

    def _reset_heartbeat_timers(self):
        c = self.config
        self.session_deadline = self.now + c.session_timeout_ms
        self.poll_deadline = self.now + c.rebalance_timeout_ms
        self.hb_deadline = self.now + c.heartbeat_interval_ms

    def _send_heartbeat(self) -> list:
        if not self.coordinator_known:
            return []
        c = self.config
        self.hb_deadline = self.now + c.heartbeat_interval_ms
        cid = self._cid()
        g = self.generation
        self.inflight[cid] = InFlight("heartbeat", g, self.now, ())
        return [HeartbeatRequest(group_id=c.group_id, generation_id=g.generation_id, member_id=g.member_id,
                                 group_instance_id=c.instance_id, correlation_id=cid)]

    def _on_heartbeat_response(self, cid, f: InFlight, r: HeartbeatResponse) -> list:
        err = r.error
        if err == E.NONE:
            self._receive_heartbeat()
            return []
        if err in _COORDINATOR_GONE:
            out = self._mark_coordinator_unknown()
            self._fail_heartbeat()
            return out
        if err == E.REBALANCE_IN_PROGRESS:
            if self.state == MemberState.STABLE:
                self._request_rejoin("group is already rebalancing")
            self._receive_heartbeat()
            return []
        if err in (E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID):
            if self.generation == f.sent:
                self._reset(reset_member_id=err != E.ILLEGAL_GENERATION, reason=f"{err} from Heartbeat")
                if err == E.FENCED_INSTANCE_ID:
                    return self._die(err)
                self._fail_heartbeat()
            else:
                self._receive_heartbeat()
            return []
        if err == "GROUP_AUTHORIZATION_FAILED":
            return self._die(err)
        self._fail_heartbeat()
        return []

    def _receive_heartbeat(self):
        self.session_deadline = self.now + self.config.session_timeout_ms

    def _fail_heartbeat(self):
        self.hb_deadline = self.now + self.config.retry_backoff_ms

    # ---- commits and positions ----------------------------------------------------------------
    def _commit_request(self, offsets: tuple, purpose: str):
        """ConsumerCoordinator.sendOffsetCommitRequest: a request, or None after a local failure."""
        if not offsets:
            self._commit_result(None, purpose, "ok-empty")
            return None
        g = self.generation_if_stable()
        if g is None:
            outcome = "rebalance-in-progress" if self._rebalance_in_progress() else "commit-failed"
            self._commit_result(None, purpose, outcome + " (local)")
            return None
        if not self.coordinator_known:
            self._commit_result(None, purpose, "retriable:COORDINATOR_NOT_AVAILABLE (local)")
            return None
        c = self.config
        cid = self._cid()
        self.inflight[cid] = InFlight("commit", g, self.now, (offsets, purpose))
        self._note(f"OffsetCommit cid={cid} gen={g.generation_id} {', '.join(f'{tp}@{o}' for tp, o in offsets)}")
        return OffsetCommitRequest(
            group_id=c.group_id, generation_id=g.generation_id, member_id=g.member_id,
            group_instance_id=c.instance_id,
            offsets=tuple((tp, OffsetAndMetadata(off)) for tp, off in offsets), correlation_id=cid)

    def _on_commit_response(self, cid, f: InFlight, r: OffsetCommitResponse) -> list:
        offsets, purpose = f.payload
        outcome = "ok"
        out = []
        for _tp, err in r.partition_errors:
            if err == E.NONE:
                continue
            if err in (E.COORDINATOR_LOAD_IN_PROGRESS, E.UNKNOWN_TOPIC_OR_PARTITION):
                outcome = f"retriable:{err}"
            elif err in _COORDINATOR_GONE or err == E.REQUEST_TIMED_OUT:
                out += self._mark_coordinator_unknown()
                outcome = f"retriable:{err}"
            elif err == E.FENCED_INSTANCE_ID:
                if self.generation == f.sent:
                    self._commit_result(cid, purpose, "fenced")
                    return out + self._die(err)
                outcome = ("rebalance-in-progress" if self.state == MemberState.PREPARING_REBALANCE
                           else "commit-failed")
            elif err == E.REBALANCE_IN_PROGRESS:
                self._request_rejoin("offset commit failed since group is already rebalancing")
                outcome = "rebalance-in-progress"
            elif err in (E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION):
                if self.generation != f.sent and self.state == MemberState.PREPARING_REBALANCE:
                    outcome = "rebalance-in-progress"
                else:
                    self._reset(reset_member_id=err != E.ILLEGAL_GENERATION, reason=f"{err} from OffsetCommit")
                    outcome = "commit-failed"
            else:
                outcome = f"failed:{err}"
            break
        self._commit_result(cid, purpose, outcome)
        return out + self._commit_done(cid, outcome, purpose)

    def _commit_done(self, cid, outcome: str, purpose: str) -> list:
        if self.prepare_commit is not None and self.prepare_commit[0] == cid:
            self.prepare_commit = (cid, outcome)
        if outcome.startswith("retriable:") and purpose == "auto":
            self.auto_commit_deadline = self.now + self.config.retry_backoff_ms
        b = self.blocked
        if b is None or b.cid != cid or not self.alive:
            return []
        if outcome.startswith("retriable:") and self.now < b.deadline:
            self.blocked = b._replace(cid=None)          # commitSync retries at the next poll
            return []
        return self._resume_blocked()

    def _commit_result(self, cid, purpose, outcome):
        self.commit_results = self.commit_results + ((cid, purpose, outcome),)
        self._note(f"commit {purpose} cid={cid}: {outcome}")

    def _fetch_positions(self) -> list:
        missing = tuple(sorted(tp for tp in self.owned if tp not in self.positions))
        if not missing or not self.coordinator_known:
            return []
        if any(f.kind == "fetch" for f in self.inflight.values()):
            return []
        cid = self._cid()
        self.inflight[cid] = InFlight("fetch", self.generation, self.now, missing)
        return [OffsetFetchRequest(group_id=self.config.group_id, partitions=missing, require_stable=True,
                                   correlation_id=cid)]

    def _on_fetch_response(self, cid, f: InFlight, r: OffsetFetchResponse) -> list:
        if r.error != E.NONE:
            if r.error in _COORDINATOR_GONE:
                return self._mark_coordinator_unknown()
            return []
        for p in r.partitions:
            tp = TopicPartition(*p.partition)
            if p.error != E.NONE or tp not in self.owned or tp in self.positions:
                continue
            self.positions[tp] = p.offset if p.offset >= 0 else 0       # auto.offset.reset=earliest
            self.stale_positions.pop(tp, None)
            self._note(f"position {tp}={self.positions[tp]} (consuming)")
        return []

    def _consume(self):
        n, cap = self.config.fetch_per_poll, self.config.max_offset
        if n <= 0:
            return
        for tp in self.consuming:
            pos = self.positions[tp] + n
            self.positions[tp] = pos if cap is None else min(pos, cap)

    def _drop(self, partitions, lost: bool = False):
        self.owned = self.owned - frozenset(partitions)
        for tp in partitions:
            self._forget_position(tp, keep=not lost)

    def _forget_position(self, tp, keep: bool = True):
        pos = self.positions.pop(tp, None)
        if keep and self._b_unowned and pos is not None:
            self.stale_positions[tp] = pos

    def _on_leave_response(self, cid, f, r: LeaveGroupResponse) -> list:
        return []

    # ---- shared helpers -----------------------------------------------------------------------
    def _maybe_leave_group(self, reason: str = "consumer poll timeout has expired") -> list:
        out = []
        c = self.config
        if (not c.is_static and self.coordinator_known and self.state != MemberState.UNJOINED
                and self.generation.member_id):
            cid = self._cid()
            self.inflight[cid] = InFlight("leave", self.generation, self.now, ())
            self._note(f"LeaveGroup cid={cid} ({reason})")
            out.append(LeaveGroupRequest(group_id=c.group_id,
                                         members=(MemberIdentity(self.generation.member_id, None),),
                                         correlation_id=cid))
        self._reset(reset_member_id=True, reason="consumer pro-actively leaving the group")
        return out

    def _reset(self, reset_member_id: bool, reason: str):
        """AbstractCoordinator.resetStateAndRejoin."""
        self.state = MemberState.UNJOINED
        self.generation = NO_GENERATION if reset_member_id else Generation(-1, self.generation.member_id, None)
        self.rejoin_needed = True
        if not self._b_12983:
            self.needs_join_prepare = True
        self._note(f"reset generation{' and member id' if reset_member_id else ''}: {reason}")

    def _request_rejoin(self, reason: str):
        if not self.rejoin_needed:
            self._note(f"rejoin requested: {reason}")
        self.rejoin_needed = True

    def _mark_coordinator_unknown(self) -> list:
        """Forget the coordinator and disconnect: every in-flight request fails."""
        if not self.coordinator_known:
            return []
        self.coordinator_known = False
        failed = sorted(self.inflight.items())
        self.inflight = {}
        out = []
        for cid, f in failed:
            if f.kind in ("join", "sync"):
                if self.join_cid == cid:
                    out += self._join_failed(DISCONNECT)
            elif f.kind == "heartbeat":
                self._fail_heartbeat()
            elif f.kind == "commit":
                self._commit_result(cid, f.payload[1], f"retriable:{DISCONNECT}")
                out += self._commit_done(cid, f"retriable:{DISCONNECT}", f.payload[1])
        return out

    def _rediscover(self):
        if not self.coordinator_known and self.alive:
            self.coordinator_known = True
            self.session_deadline = self.now + self.config.session_timeout_ms
            self._note("coordinator rediscovered")

    def _die(self, error: str) -> list:
        self.fatal = error
        self.inflight = {}
        self.blocked = None
        self._note(f"FATAL {error}: the application stops")
        return []

    def _generation_reset_or_no_member(self) -> bool:
        return self.generation.generation_id == -1 or self.generation.member_id == ""

    def _rebalance_in_progress(self) -> bool:
        return self.state in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)

    def _cid(self) -> int:
        cid = self.next_cid
        self.next_cid += 1
        return cid

    def _clock(self, now):
        if now is not None and now > self.now:
            self.now = now

    def _note(self, text: str):
        if self.config.record_events:
            self.events = self.events + (f"{self.now} {self.config.client_id}: {text}",)


def _generation_reset(g: Generation) -> bool:
    return g.generation_id == -1 and g.protocol_name is None


def _fmt(partitions) -> str:
    return "[" + ",".join(str(tp) for tp in sorted(partitions)) + "]"


def _make_copier(cls, slots, mutable):
    """A copy function with one plain assignment per slot (no getattr/setattr loop: member copies
    are on the hot path of every world step); `mutable` fields get a shallow `dict` copy."""
    lines = ["def copy(src):", "    m = new(cls)"]
    for name in slots:
        lines.append(f"    m.{name} = dict(src.{name})" if name in mutable else f"    m.{name} = src.{name}")
    lines.append("    return m")
    env = {"new": object.__new__, "cls": cls}
    exec("\n".join(lines), env)      # the source is built from the slot names above only
    return env["copy"]


_copy_member = _make_copier(Member, _SLOTS, ("positions", "stale_positions", "inflight"))

_HANDLERS = {
    ("join", JoinGroupResponse): Member._on_join_response,
    ("sync", SyncGroupResponse): Member._on_sync_response,
    ("heartbeat", HeartbeatResponse): Member._on_heartbeat_response,
    ("commit", OffsetCommitResponse): Member._on_commit_response,
    ("fetch", OffsetFetchResponse): Member._on_fetch_response,
    ("leave", LeaveGroupResponse): Member._on_leave_response,
}
