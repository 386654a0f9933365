"""The consumer's side of KIP-848: the membership state machine of the Java consumer.

Why it exists: worlds and tests need a faithful client to drive the coordinator; its safety
duties (revoke before acknowledging, carry the member epoch on commits, rejoin at epoch 0 after
being fenced) are what the clients' invariants check. It follows, in the Kafka source at commit
1eb7644349cb (4.0 line): clients/.../consumer/internals/MemberState.java (state names and valid
transitions), AbstractMembershipManager (processAssignmentReceived, maybeReconcile,
revokeAndAssign, transitionToFenced, transitionToJoining, leaveGroup, transitionToSendingLeaveGroup,
onHeartbeatRequestGenerated, shouldHeartbeatNow, shouldSkipHeartbeat), ConsumerMembershipManager
(onHeartbeatSuccess, signalReconciliationStarted = auto-commit of all consumed offsets before
reconciling, retried on STALE_MEMBER_EPOCH), ConsumerHeartbeatRequestManager.HeartbeatState
(fields sent only when changed; reset after any failure) and AbstractHeartbeatRequestManager
(onErrorResponse: which errors fence, which are fatal, which retry).

Pure and deterministic: every input (`start`, `poll`, `tick`, `subscribe`, `subscribe_regex`, `commit`, `leave`,
`on_response`, `on_failure`, `crash`, `restart`), given `now`, returns the requests to send.
Callbacks (onPartitionsRevoked/Assigned/Lost) complete synchronously. The member id is chosen
by the client (KIP-1082, Kafka 4.0). The poll timer (max.poll.interval.ms = the rebalance timeout)
is checked when the client heartbeats: expired, it leaves and goes STALE until the next `poll`; that leave is
sent with ignoreResponse and no longer counts as a heartbeat in flight (heartbeatRequestState.reset(): "we can
join before or after receiving the response"), and neither its answer nor its failure changes the client. Not
modelled: topic-name resolution through metadata requests (the config's
`topic_names` resolves ids), commit retries other than the reconciliation's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from kverify.impl.consumer import behaviours as B
from kverify.impl.consumer.assignment import to_topic_partitions
from kverify.impl.consumer.messages import (
    LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerGroupHeartbeatRequest,
    Errors as E, OffsetAndMetadata, OffsetCommitRequest, OffsetFetchRequest, TopicPartition)


class MemberState:
    """clients/.../consumer/internals/MemberState.java (checked against the source)."""
    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"
    RECONCILING = "RECONCILING"
    ACKNOWLEDGING = "ACKNOWLEDGING"
    STABLE = "STABLE"
    FENCED = "FENCED"
    PREPARE_LEAVING = "PREPARE_LEAVING"
    LEAVING = "LEAVING"
    FATAL = "FATAL"
    STALE = "STALE"


S = MemberState
# MemberState's static block: state -> the states it may be entered from.
VALID_PREVIOUS = {
    S.STABLE: (S.JOINING, S.ACKNOWLEDGING, S.RECONCILING),
    S.RECONCILING: (S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING),
    S.ACKNOWLEDGING: (S.RECONCILING,),
    S.FATAL: (S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING, S.UNSUBSCRIBED),
    S.FENCED: (S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING),
    S.JOINING: (S.FENCED, S.UNSUBSCRIBED, S.STALE),
    S.PREPARE_LEAVING: (S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED),
    S.LEAVING: (S.PREPARE_LEAVING,),
    S.UNSUBSCRIBED: (S.PREPARE_LEAVING, S.LEAVING, S.FENCED),
    S.STALE: (S.LEAVING,),
}
FATAL_ERRORS = frozenset({E.GROUP_AUTHORIZATION_FAILED, E.INVALID_REQUEST, E.GROUP_MAX_SIZE_REACHED,
                          E.UNSUPPORTED_ASSIGNOR, E.UNSUPPORTED_VERSION, E.UNRELEASED_INSTANCE_ID,
                          E.FENCED_INSTANCE_ID})
RETRIABLE_ERRORS = frozenset({E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS})


class IllegalTransition(RuntimeError):
    """MemberState forbids the transition (IllegalStateException in the Java client)."""


@dataclass(frozen=True)
class ClientConfig:
    group_id: str
    member_id: str                              # client-generated (KIP-1082)
    topics: tuple = ()                          # subscription used by start()
    topic_names: dict = field(default_factory=dict)   # {topic_id: name} to resolve assignments
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    server_assignor: Optional[str] = None
    rebalance_timeout_ms: int = 300000          # max.poll.interval.ms (also the poll timer)
    auto_commit: bool = True                    # enable.auto.commit (commit before reconciling, leaving)
    auto_commit_interval_ms: Optional[int] = 5000   # auto.commit.interval.ms; None = no periodic commit
    retry_backoff_ms: int = 100
    client_id: str = "consumer"
    correlation_base: int = 0


class InFlight(NamedTuple):
    kind: str                 # "heartbeat" | "commit" | "fetch" | "ignored" (sent with ignoreResponse: no answer awaited)
    sent_epoch: int
    sent_at: int
    purpose: str              # heartbeat: "join"|"beat"|"leave"; commit: "user"|"reconcile"|"leave"; fetch: "positions";
                              # ignored: "leave-stale"
    payload: tuple            # commit: ((tp, offset), ...); fetch: (tp, ...)


class ConsumerMember:
    """One consumer process using group.protocol=consumer."""

    def __init__(self, config: ClientConfig, behaviours=frozenset(), now: int = 0):
        self.config = config
        self.behaviours = frozenset(behaviours or ())
        self._negative_epoch_joining = B.NEGATIVE_EPOCH_JOINING in self.behaviours
        self.alive = True
        self.incarnation = 0
        self._reset_process(now)

    def _reset_process(self, now: int) -> None:
        c = self.config
        self.member_id = c.member_id if self.incarnation == 0 else f"{c.member_id}-r{self.incarnation}"
        self.state = S.UNSUBSCRIBED
        self.member_epoch = 0
        self.subscription: tuple = ()
        self.subscription_regex: Optional[str] = None   # subscribe(SubscriptionPattern)
        self.subscription_updated = False
        self.owned: frozenset = frozenset()      # currentAssignment.partitions ((topic_id, p))
        self.local_epoch = -1                    # currentAssignment.localEpoch (NONE = -1)
        self.target: Optional[frozenset] = None  # currentTargetAssignment (None = none yet)
        self.target_epoch = -1                   # its local epoch
        self.reconciling: Optional[tuple] = None  # (target, target_epoch, commit cid or None)
        self.positions: dict = {}                # (topic_id, p) -> next offset to consume
        self.awaiting_positions: frozenset = frozenset()
        self.sent: Optional[tuple] = None        # HeartbeatState.SentFields (None = reset)
        self.inflight: dict = {}                 # cid -> InFlight
        if self.incarnation == 0:                # correlation ids keep growing across restarts
            self.next_cid = c.correlation_base + 1
        self.heartbeat_interval_ms = 0
        self.next_heartbeat_at = now             # heartbeat timer / backoff
        self.fatal_error: Optional[str] = None
        self.fenced_count = 0
        self.last_poll_at = now                  # the poll timer (max.poll.interval.ms)
        self.next_auto_commit_at = now + (c.auto_commit_interval_ms or 0)
        self.poll_timer_expired = False
        self.events: list = []                   # journal: (now, text); excluded from snapshot
        self.commit_results: list = []           # (cid, purpose, sent epoch, error); excluded

    # ---- application inputs ---------------------------------------------------------------------
    def start(self, now: int) -> list:
        """consumer.subscribe(config.topics) followed by the first poll()."""
        self.subscribe(self.config.topics, now)
        return self.poll(now)

    def subscribe(self, topics, now: int) -> list:
        """consumer.subscribe: AbstractMembershipManager.onSubscriptionUpdated."""
        if not self.alive:
            return []
        self.subscription = tuple(sorted(set(topics)))
        self.subscription_regex = None
        self.subscription_updated = True
        return []

    def subscribe_regex(self, pattern: str, now: int) -> list:
        """consumer.subscribe(SubscriptionPattern): the coordinator resolves the RE2/J pattern."""
        if not self.alive:
            return []
        self.subscription = ()
        self.subscription_regex = pattern
        self.subscription_updated = True
        return []

    def poll(self, now: int) -> list:
        """consumer.poll: onConsumerPoll (join if subscribed), consume one record per owned
        partition whose position is known, then the heartbeat manager's poll."""
        if not self.alive or not (self.subscription or self.subscription_regex):
            return []                                         # Java: IllegalStateException, not subscribed
        self.last_poll_at = now                               # resetPollTimer
        if self.state == S.STALE:                             # maybeRejoinStaleMember
            self.poll_timer_expired = False
            self._transition_to_joining()
        if self.subscription_updated:                         # onConsumerPoll
            self.subscription_updated = False
            if self.state == S.UNSUBSCRIBED:
                self._transition_to_joining()
        for tp in sorted(self.owned):
            if tp in self.positions:
                self.positions[tp] += 1
        return self._maybe_auto_commit(now) + self._maybe_heartbeat(now)

    def tick(self, now: int) -> list:
        """Time passed (the background thread): send a heartbeat if one is due."""
        if not self.alive:
            return []
        return self._maybe_auto_commit(now) + self._maybe_heartbeat(now)

    def _maybe_auto_commit(self, now: int) -> list:
        """CommitRequestManager's auto-commit timer: commitAsync of all consumed positions with the
        current member epoch every auto.commit.interval.ms while in the group (not retried)."""
        c = self.config
        if not (c.auto_commit and c.auto_commit_interval_ms) or now < self.next_auto_commit_at:
            return []
        self.next_auto_commit_at = now + c.auto_commit_interval_ms
        if self.state not in (S.STABLE, S.RECONCILING, S.ACKNOWLEDGING) or not self.positions:
            return []
        if any(i.kind == "commit" and i.purpose == "auto" for i in self.inflight.values()):
            return []
        return [self._commit_request(dict(sorted(self.positions.items())), "auto", now)]

    def commit(self, offsets=None, now: int = 0) -> list:
        """commitAsync: `offsets` {(topic_id, p): offset} or None = all consumed positions."""
        if not self.alive or self.state in (S.FATAL,):
            return []
        offsets = dict(sorted(self.positions.items())) if offsets is None else dict(offsets)
        if not offsets:
            return []
        return [self._commit_request(offsets, "user", now)]

    def leave(self, now: int) -> list:
        """consumer.unsubscribe()/close(): leaveGroup (PREPARE_LEAVING -> LEAVING -> send -> UNSUBSCRIBED)."""
        if not self.alive:
            return []
        out = []
        if self.state in (S.UNSUBSCRIBED, S.FENCED, S.FATAL, S.STALE):
            if self.state == S.FENCED:
                self._clear_assignment()
                self._to(S.UNSUBSCRIBED)
            self.subscription, self.subscription_regex = (), None
            return out
        if self.state in (S.PREPARE_LEAVING, S.LEAVING):
            return out
        self._to(S.PREPARE_LEAVING)
        self.reconciling = None
        if self.config.auto_commit and self.positions:
            out.append(self._commit_request(dict(sorted(self.positions.items())), "leave", now))
        # onPartitionsRevoked completes synchronously; then clear and send the leave heartbeat.
        self.subscription, self.subscription_regex = (), None
        self._clear_assignment()
        self._transition_to_sending_leave()
        out += self._maybe_heartbeat(now)
        return out

    def crash(self, now: int) -> list:
        """The process dies: nothing is sent, every in-flight answer is lost."""
        self.alive = False
        self.inflight = {}
        self._note(now, "crash")
        return []

    def restart(self, now: int) -> list:
        """A new process with the same config (static members keep their instance id; a dynamic
        member gets a new member id), subscribing and polling at once."""
        self.incarnation += 1
        self.alive = True
        self._reset_process(now)
        return self.start(now)

    # ---- network inputs -------------------------------------------------------------------------
    def wants(self, cid: int) -> bool:
        return self.alive and cid in self.inflight

    def on_response(self, cid: int, response, now: int) -> list:
        if not self.alive:
            return []
        inf = self.inflight.pop(cid, None)
        if inf is None:
            return []
        if inf.kind == "ignored":
            out = []                                           # sent with ignoreResponse
        elif inf.kind == "heartbeat":
            out = self._on_heartbeat_response(inf, response, now)
        elif inf.kind == "commit":
            out = self._on_commit_response(cid, inf, response, now)
        else:
            out = self._on_fetch_response(inf, response, now)
        return out + self._maybe_heartbeat(now)

    def on_failure(self, cid: int, now: int) -> list:
        """The request got no answer (lost, timed out, disconnected): a retriable failure."""
        if not self.alive:
            return []
        inf = self.inflight.pop(cid, None)
        if inf is None:
            return []
        out = []
        if inf.kind == "ignored":
            pass                                               # sent with ignoreResponse
        elif inf.kind == "heartbeat":
            # AbstractHeartbeatRequestManager.onFailure (retriable): reset sent fields, back off.
            self.sent = None
            self.next_heartbeat_at = now + self.config.retry_backoff_ms
            self._note(now, f"heartbeat {cid} failed")
        elif inf.kind == "commit":
            self.commit_results.append((cid, inf.purpose, inf.sent_epoch, "REQUEST_TIMED_OUT"))
            if inf.purpose == "reconcile" and self.reconciling is not None and self.reconciling[2] == cid:
                out += self._resend_reconcile_commit(now)
        else:
            if self.state not in (S.UNSUBSCRIBED, S.FATAL, S.FENCED, S.STALE):
                out.append(self._fetch_request(inf.payload, now))
        return out + self._maybe_heartbeat(now)

    # ---- heartbeats -----------------------------------------------------------------------------
    def should_heartbeat_now(self) -> bool:
        return self.state in (S.ACKNOWLEDGING, S.LEAVING, S.JOINING)

    def should_skip_heartbeat(self) -> bool:
        return self.state in (S.UNSUBSCRIBED, S.FATAL, S.STALE, S.FENCED)

    def heartbeat_in_flight(self) -> bool:
        return any(i.kind == "heartbeat" for i in self.inflight.values())

    def next_wakeup(self) -> Optional[int]:
        """When `tick` would next send something (None: only an input can make it send)."""
        if not self.alive or self.should_skip_heartbeat():
            return None
        poll_deadline = self.last_poll_at + self.config.rebalance_timeout_ms
        if self.config.auto_commit and self.config.auto_commit_interval_ms and self.positions:
            poll_deadline = min(poll_deadline, self.next_auto_commit_at)
        if self.heartbeat_in_flight() or self.state in (S.PREPARE_LEAVING, S.LEAVING):
            return None if self.state in (S.PREPARE_LEAVING, S.LEAVING) else poll_deadline
        return min(self.next_heartbeat_at, poll_deadline)

    def _maybe_heartbeat(self, now: int) -> list:
        if self.should_skip_heartbeat():
            return []
        if (now - self.last_poll_at >= self.config.rebalance_timeout_ms
                and self.state not in (S.PREPARE_LEAVING, S.LEAVING)):
            return self._leave_on_expired_poll_timer(now)
        inflight = self.heartbeat_in_flight()
        now_needed = self.should_heartbeat_now() and not inflight
        if not now_needed and (inflight or now < self.next_heartbeat_at):
            return []
        req = self._build_heartbeat(now)
        self.next_heartbeat_at = now + self.heartbeat_interval_ms
        out = [req]
        # onHeartbeatRequestGenerated
        if self.state == S.ACKNOWLEDGING:
            if self._target_reconciled():
                self._to(S.STABLE)
            else:
                self._to(S.RECONCILING)
                out += self._maybe_reconcile(now)
        elif self.state == S.LEAVING:
            self._to(S.UNSUBSCRIBED)
        return out

    def _build_heartbeat(self, now: int) -> ConsumerGroupHeartbeatRequest:
        """ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData."""
        c = self.config
        send_all = self.state == S.JOINING
        sent = self.sent or (-1, None, None, None, None)
        rebalance = subs = assignor = parts = regex = None
        if send_all or sent[0] != c.rebalance_timeout_ms:
            rebalance = c.rebalance_timeout_ms
        if send_all or sent[1] != self.subscription:
            subs = self.subscription
        rx = self.subscription_regex or ""
        if (send_all and rx) or (not send_all and rx != (sent[4] or "")):
            regex = rx                                        # "" clears a regex no longer used
        if c.server_assignor is not None and (send_all or sent[2] != c.server_assignor):
            assignor = c.server_assignor
        local = (self.local_epoch, self.owned)
        if send_all or sent[3] != local:
            parts = to_topic_partitions(self.owned)
        self.sent = (c.rebalance_timeout_ms if rebalance is not None else sent[0],
                     self.subscription if subs is not None else sent[1],
                     assignor if assignor is not None else sent[2],
                     local if parts is not None else sent[3],
                     regex if regex is not None else sent[4])
        purpose = "leave" if self.state == S.LEAVING else ("join" if self.state == S.JOINING else "beat")
        cid = self._cid()
        self.inflight[cid] = InFlight("heartbeat", self.member_epoch, now, purpose, ())
        return ConsumerGroupHeartbeatRequest(
            group_id=c.group_id, member_id=self.member_id, member_epoch=self.member_epoch,
            instance_id=c.instance_id, rack_id=c.rack_id if send_all else None,
            rebalance_timeout_ms=-1 if rebalance is None else rebalance,
            subscribed_topic_names=subs, subscribed_topic_regex=regex, server_assignor=assignor,
            topic_partitions=parts,
            client_id=c.client_id, correlation_id=cid)

    def _on_heartbeat_response(self, inf, resp, now) -> list:
        err = resp.error
        if err == E.NONE:
            if resp.heartbeat_interval_ms:
                self.heartbeat_interval_ms = resp.heartbeat_interval_ms
            self.next_heartbeat_at = now + self.heartbeat_interval_ms
            return self._on_heartbeat_success(resp, now)
        # onErrorResponse
        self.sent = None
        self.next_heartbeat_at = now + self.config.retry_backoff_ms
        if self.state in (S.UNSUBSCRIBED, S.STALE):
            return []
        if err in (E.FENCED_MEMBER_EPOCH, E.UNKNOWN_MEMBER_ID):
            self.next_heartbeat_at = now
            return self._transition_to_fenced(now, err)
        if err in RETRIABLE_ERRORS:
            # Java skips the backoff for NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE but must first
            # find the coordinator again (a round trip); the retry backoff stands for that here.
            return []
        self._transition_to_fatal(now, err)
        return []

    def _on_heartbeat_success(self, resp, now) -> list:
        """ConsumerMembershipManager.onHeartbeatSuccess."""
        if self.state in (S.LEAVING, S.UNSUBSCRIBED, S.FENCED, S.FATAL, S.STALE):
            return []
        if resp.member_epoch < 0 and not self._negative_epoch_joining:
            return []     # KAFKA-19335's fix: a leave's answer never gives an active member its epoch
        if resp.member_id is not None:
            self.member_id = resp.member_id
        self.member_epoch = resp.member_epoch
        if resp.assignment is None:
            return []
        if self.state not in VALID_PREVIOUS[S.RECONCILING]:      # canHandleNewAssignment
            return []
        new_target = frozenset((tp.topic_id, p) for tp in resp.assignment for p in tp.partitions)
        if self.target != new_target:
            self.target = new_target
            self.target_epoch += 1
        if not self._target_reconciled():
            self._to(S.RECONCILING)
            return self._maybe_reconcile(now)
        if self.state in (S.RECONCILING, S.JOINING):
            self._to(S.STABLE)
        return []

    def _leave_on_expired_poll_timer(self, now) -> list:
        """AbstractHeartbeatRequestManager.poll with an expired poll timer: leave (answer ignored),
        then STALE (partitions lost) until the application polls again."""
        self._note(now, "poll timer expired: leaving the group")
        self.poll_timer_expired = True
        self._to(S.PREPARE_LEAVING)
        self.reconciling = None
        self._transition_to_sending_leave()
        req = self._build_heartbeat(now)
        self.inflight[req.correlation_id] = self.inflight[req.correlation_id]._replace(kind="ignored", purpose="leave-stale")
        self.sent = None
        self._to(S.STALE)                                      # onHeartbeatRequestGenerated -> transitionToStale
        self._clear_assignment()
        return [req]

    # ---- reconciliation ---------------------------------------------------------------------------
    def _target_reconciled(self) -> bool:
        """currentAssignment.equals(currentTargetAssignment): partitions and local epoch."""
        return (self.local_epoch, self.owned) == (self.target_epoch, self.target or frozenset())

    def _maybe_reconcile(self, now) -> list:
        """AbstractMembershipManager.maybeReconcile: commit (auto), revoke, assign, then ACKNOWLEDGING."""
        if self.state != S.RECONCILING or self._target_reconciled() or self.reconciling is not None:
            return []
        target = self.target or frozenset()
        if self.local_epoch != -1 and target == self.owned:
            self.local_epoch = self.target_epoch            # same partitions, new local epoch: ack
            self._to(S.ACKNOWLEDGING)
            return []
        if self.config.auto_commit and self.positions:
            req = self._commit_request(dict(sorted(self.positions.items())), "reconcile", now)
            self.reconciling = (target, self.target_epoch, req.correlation_id)
            return [req]
        self.reconciling = (target, self.target_epoch, None)
        return self._revoke_and_assign(now)

    def _resend_reconcile_commit(self, now) -> list:
        target, tepoch, _ = self.reconciling
        if self.state != S.RECONCILING:
            self.reconciling = None
            return []
        req = self._commit_request(dict(sorted(self.positions.items())), "reconcile", now)
        self.reconciling = (target, tepoch, req.correlation_id)
        return [req]

    def _revoke_and_assign(self, now) -> list:
        target, tepoch, _ = self.reconciling
        self.reconciling = None
        if self.state != S.RECONCILING:                       # maybeAbortReconciliation
            return []
        revoked = self.owned - target
        added = target - self.owned
        for tp in revoked:                                    # onPartitionsRevoked
            self.positions.pop(tp, None)
        self.awaiting_positions = (self.awaiting_positions - revoked) | added
        self.owned = target
        self.local_epoch = tepoch
        self._note(now, f"reconciled: revoked {sorted(revoked)} added {sorted(added)} at epoch {self.member_epoch}")
        self._to(S.ACKNOWLEDGING)
        out = []
        if added:
            out.append(self._fetch_request(tuple(sorted(added)), now))
        return out

    # ---- commits and fetches ----------------------------------------------------------------------
    def _name(self, topic_id) -> str:
        return self.config.topic_names.get(topic_id, topic_id)

    def _commit_request(self, offsets: dict, purpose: str, now) -> OffsetCommitRequest:
        cid = self._cid()
        payload = tuple(sorted(offsets.items()))
        self.inflight[cid] = InFlight("commit", self.member_epoch, now, purpose, payload)
        return OffsetCommitRequest(
            group_id=self.config.group_id, generation_id_or_member_epoch=self.member_epoch,
            member_id=self.member_id, group_instance_id=self.config.instance_id,
            offsets=tuple((TopicPartition(self._name(t), p), OffsetAndMetadata(o)) for (t, p), o in payload),
            correlation_id=cid)

    def _on_commit_response(self, cid, inf, resp, now) -> list:
        errors = {tp: e for tp, e in resp.partition_errors}
        first = next(iter(errors.values()), E.NONE)
        self.commit_results.append((cid, inf.purpose, inf.sent_epoch, first))
        if inf.purpose == "reconcile" and self.reconciling is not None and self.reconciling[2] == cid:
            if first == E.STALE_MEMBER_EPOCH and self.state == S.RECONCILING and self.member_epoch != inf.sent_epoch:
                return self._resend_reconcile_commit(now)        # retried with the latest epoch
            return self._revoke_and_assign(now)
        return []

    def _fetch_request(self, partitions: tuple, now) -> OffsetFetchRequest:
        cid = self._cid()
        self.inflight[cid] = InFlight("fetch", self.member_epoch, now, "positions", partitions)
        return OffsetFetchRequest(group_id=self.config.group_id, member_id=self.member_id,
                                  member_epoch=self.member_epoch,
                                  partitions=tuple(TopicPartition(self._name(t), p) for t, p in partitions),
                                  correlation_id=cid)

    def _on_fetch_response(self, inf, resp, now) -> list:
        if resp.error != E.NONE:
            if resp.error == E.STALE_MEMBER_EPOCH and self.state not in (S.UNSUBSCRIBED, S.FATAL, S.FENCED):
                return [self._fetch_request(inf.payload, now)]    # retried with the latest epoch
            return []
        by_name = {(p.partition.topic, p.partition.partition): p.offset for p in resp.partitions}
        for tp in inf.payload:
            if tp in self.owned and tp in self.awaiting_positions:
                off = by_name.get((self._name(tp[0]), tp[1]), -1)
                self.positions[tp] = off if off >= 0 else 0
        self.awaiting_positions = self.awaiting_positions - frozenset(inf.payload)
        return []

    # ---- transitions ------------------------------------------------------------------------------
    def _to(self, state: str) -> None:
        if state != self.state and self.state not in VALID_PREVIOUS[state]:
            raise IllegalTransition(f"Invalid state transition from {self.state} to {state}")
        self.state = state

    def _clear_assignment(self) -> None:
        self.owned = frozenset()
        self.local_epoch = -1
        self.positions = {}
        self.awaiting_positions = frozenset()

    def _transition_to_joining(self) -> None:
        if self.state == S.FATAL:
            return
        self.member_epoch = 0
        self._to(S.JOINING)
        self.target = None
        self.target_epoch = -1
        self.reconciling = None

    def _transition_to_fenced(self, now, err) -> list:
        if self.state == S.PREPARE_LEAVING:
            self._transition_to_sending_leave()
            self._to(S.UNSUBSCRIBED)
            return []
        if self.state == S.LEAVING:
            self._to(S.UNSUBSCRIBED)
            return []
        if self.state == S.UNSUBSCRIBED:
            return []
        self._to(S.FENCED)
        self.fenced_count += 1
        self.member_epoch = 0
        self.reconciling = None
        self._note(now, f"fenced ({err}): partitions lost {sorted(self.owned)}")
        self._clear_assignment()                              # onPartitionsLost, synchronous
        self._transition_to_joining()
        return []

    def _transition_to_fatal(self, now, err) -> None:
        self._to(S.FATAL)
        self.fatal_error = err
        self.reconciling = None
        self._clear_assignment()
        self._note(now, f"fatal: {err}")

    def _transition_to_sending_leave(self) -> None:
        if self.state in (S.FATAL, S.UNSUBSCRIBED):
            return
        static = self.config.instance_id is not None
        self.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH if static else LEAVE_GROUP_MEMBER_EPOCH
        self.owned = frozenset()
        self.local_epoch = -1
        self._to(S.LEAVING)

    # ---- plumbing ---------------------------------------------------------------------------------
    def _cid(self) -> int:
        cid = self.next_cid
        self.next_cid += 1
        return cid

    def _note(self, now, text) -> None:
        self.events.append((now, text))

    def copy(self) -> "ConsumerMember":
        m = ConsumerMember.__new__(ConsumerMember)
        m.__dict__.update(self.__dict__)
        m.positions = dict(self.positions)
        m.inflight = dict(self.inflight)
        m.events = list(self.events)
        m.commit_results = list(self.commit_results)
        return m

    def snapshot(self) -> tuple:
        """Hashable; excludes the journals `events` and `commit_results`."""
        return (self.alive, self.incarnation, self.member_id, self.state, self.member_epoch, self.subscription,
                self.subscription_regex,
                self.subscription_updated, self.owned, self.local_epoch, self.target, self.target_epoch,
                self.reconciling, tuple(sorted(self.positions.items())), self.awaiting_positions, self.sent,
                tuple(sorted(self.inflight.items())), self.next_cid, self.heartbeat_interval_ms,
                self.next_heartbeat_at, self.fatal_error, self.fenced_count, self.last_poll_at,
                self.next_auto_commit_at,
                self.poll_timer_expired)
