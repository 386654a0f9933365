"""The reference KIP-848 consumer group coordinator: requests in, replies out, time an input.

Why it exists: it is kverify's executable reading of Kafka 4.x's group-coordinator module for
`group.protocol=consumer` groups, used by tests, worlds (K3) and the wire server (W1). It follows
GroupMetadataManager.consumerGroupHeartbeat (+ throwIfConsumerGroupHeartbeatRequestIsInvalid,
throwIfConsumerGroupMemberEpochIsInvalid, getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember,
hasMemberSubscriptionChanged, updateTargetAssignment, maybeReconcile, consumerGroupLeave,
consumerGroupStaticMemberGroupLeave, consumerGroupFenceMember, replaceMember, the session and
rebalance timeouts, onLoaded), with ConsumerGroupDescribe in describe.py and OffsetCommit/OffsetFetch
(OffsetMetadataManager, member-epoch validation) in offsets.py. Reference: apache/kafka at commit
1eb7644349cb (trunk, Oct 2024, the 4.0 line) for the handlers, with the later fixes of 4.1/4.2
read from their pull requests: KAFKA-19431 (subscription consistency), KAFKA-19449, KAFKA-19974,
KAFKA-19233, KAFKA-20442 (each can be switched back on: impl/consumer/behaviours.py).

Regular-expression subscriptions are resolved asynchronously (regex.py: a timer of
config.regex_resolution_ms stands for Kafka's executor). Simplifications (documented deviations): no
classic-protocol members in consumer groups and no online upgrade/downgrade; subscription metadata
is the sorted (name, id, partitions) of subscribed topics instead of Kafka's metadata hash (equal
exactly when the hash is, barring hash collisions); a manual commit (epoch < 0) to an unknown group creates an empty consumer group
(Kafka creates a "simple" classic group); records are applied in Kafka's record order right after
the handler computed them (no __consumer_offsets log: `load()` finds the state a replay would).

API: `handle(request) -> [Reply]`, `advance(ms) -> [Reply]` (always [] today: timers fence members
but answer nobody), `set_topics({name: partitions}, topic_ids=None)`, `unload()` / `load()` (a
coordinator failover: NOT_COORDINATOR while unloaded, timers rescheduled on load as onLoaded),
`copy()`, hashable `snapshot()`, `group(group_id) -> ConsumerGroupView | None`, `offsets(group_id)`,
`next_deadline()`. An empty member id on a join is accepted and a deterministic id generated
(ConsumerGroupHeartbeat v0; v1 clients, Kafka 4.0, always send their own, KIP-1082).
"""
from __future__ import annotations

from typing import Optional

from kverify.impl.consumer import behaviours as B
from kverify.impl.consumer import regex as RX
from kverify.impl.consumer.assignment import EMPTY, from_by_topic, to_topic_partitions
from kverify.impl.consumer.assignor_port import (HAVE_KAFKA_ASSIGNORS, GroupSpec, MemberSpec,
                                                 PartitionAssignorError, TopicDescriber, default_assignors)
from kverify.impl.consumer.config import ConsumerCoordinatorConfig
from kverify.impl.consumer.describe import DescribeHandling
from kverify.impl.consumer.group import ConsumerGroup
from kverify.impl.consumer.group_member import ConsumerGroupMember, MemberState
from kverify.impl.consumer.messages import (
    LEAVE_GROUP_MEMBER_EPOCH as LEAVE, LEAVE_GROUP_STATIC_MEMBER_EPOCH as STATIC_LEAVE,
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, DescribedGroup, Errors as E, OffsetCommitRequest, OffsetCommitResponse,
    OffsetFetchRequest, OffsetFetchResponse, Reply)
from kverify.impl.consumer.offsets import OffsetHandling
from kverify.impl.consumer.reconciliation import FencedMemberEpoch, reconcile
from kverify.impl.consumer.topics import TopicsImage
from kverify.impl.consumer.views import ConsumerGroupView, view_of
from kverify.impl.timer import Timer


class ApiError(Exception):
    """An ApiException thrown by a handler: nothing it computed is applied."""

    def __init__(self, error: str, message: str = ""):
        super().__init__(message)
        self.error = error
        self.message = message


class ConsumerGroupCoordinator(DescribeHandling, OffsetHandling):
    def __init__(self, config: Optional[ConsumerCoordinatorConfig] = None, behaviours=frozenset(),
                 assignors: Optional[dict] = None, topics=None, topic_ids: Optional[dict] = None):
        """`assignors`: {name: object with .assign(GroupSpec, TopicDescriber)} (insertion order: the
        first is the default unless config.default_assignor says otherwise); `topics`: a TopicsImage
        or {name: partitions} (ids from `topic_ids` or derived)."""
        self.config = config = config or ConsumerCoordinatorConfig()
        self.behaviours = frozenset(behaviours or ())
        self._set_flags()
        self.assignors = dict(assignors) if assignors is not None else default_assignors()
        self.default_assignor = config.default_assignor or next(iter(self.assignors))
        self._timer = Timer(self._fire, config.start_ms)
        self._groups: dict = {}
        self._offsets: dict = {}           # group_id -> {TopicPartition: OffsetAndMetadata}
        self._topics = topics if isinstance(topics, TopicsImage) else TopicsImage.of(topics or {}, topic_ids)
        self._member_counter = 0
        self._active = True
        self._new_topics_version = 0       # lastMetadataImageWithNewTopics
        self._out: list = []

    def _set_flags(self):
        b = self.behaviours
        self._lost_epoch = B.LOST_PARTITION_EPOCH in b
        self._unrevoked_bump = B.UNREVOKED_EPOCH_BUMP in b
        self._own_revocation_unreleased = B.OWN_REVOCATION_UNRELEASED in b
        self._no_epoch_zero_rejoin = B.NO_EPOCH_ZERO_REJOIN in b
        self._empty_epoch_lag = B.EMPTY_GROUP_ASSIGNMENT_EPOCH in b
        self._regex_removal_no_bump = B.REGEX_REMOVAL_NO_BUMP in b

    # ---- public API ------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self._timer.now

    @property
    def topics(self) -> TopicsImage:
        return self._topics

    def handle(self, request) -> list:
        handler = _HANDLERS.get(type(request))
        if handler is None:
            raise TypeError(f"not a consumer group coordinator request: {type(request).__name__}")
        self._out = out = []
        if not self._active:
            out.append(Reply(request.correlation_id, _not_coordinator(request)))
            return out
        handler(self, request)
        return out

    def seed_group(self, group_id: str, group_epoch: int, members=(), targets=None,
                   assignment_epoch: Optional[int] = None, resolved_regexes: Optional[dict] = None) -> None:
        """Setup hook kept out of the request path (Kafka tests' ConsumerGroupBuilder): a group as its
        records would replay it. `members`: ConsumerGroupMember values (insertion order kept);
        `targets`: {member_id: frozenset((topic_id, p))}; no timer is scheduled (as in those tests)."""
        g = ConsumerGroup(group_id, self._lost_epoch)
        g.resolved_regexes = {rx: frozenset(ts) for rx, ts in (resolved_regexes or {}).items()}
        names = set()
        for m in members:
            g.update_member(m)
            names.update(g.subscribed_names_of(m))
        for mid, a in (targets or {}).items():
            g.set_target(mid, frozenset(a))
        g.subscription_metadata = self._topics.subscription_metadata(names)
        g.group_epoch = group_epoch
        g.assignment_epoch = group_epoch if assignment_epoch is None else assignment_epoch
        self._groups[group_id] = g

    @property
    def active(self) -> bool:
        return self._active

    def unload(self) -> None:
        """This coordinator loses the __consumer_offsets partition: every request is answered
        NOT_COORDINATOR and the timers are dropped (the state stays, as in the log)."""
        self._active = False
        for _, key, _ in self._timer.entries():
            self._timer.cancel(key)

    def load(self) -> None:
        """The partition is (re)loaded here: GroupMetadataManager.onLoaded schedules every member's
        session timeout and the rebalance timeout of members in UNREVOKED_PARTITIONS, from now."""
        self._active = True
        for gid in sorted(self._groups):
            self._groups[gid].metadata_deadline = (0, 0)      # soft state starts EMPTY after a load
            for m in self._groups[gid].members.values():
                self._timer.schedule(("session", gid, m.member_id), self.config.session_timeout_ms, None)
                if m.state == MemberState.UNREVOKED_PARTITIONS:
                    self._timer.schedule(("rebalance", gid, m.member_id), m.rebalance_timeout_ms, m.member_epoch)

    def advance(self, ms: int) -> list:
        self._out = out = []
        self._timer.advance(ms)
        return out

    def set_topics(self, partitions, topic_ids: Optional[dict] = None) -> None:
        """A new metadata image (topics created, grown or deleted): onNewMetadataImage. Groups see it
        at their next heartbeat; offsets of deleted topics are removed (onPartitionsDeleted)."""
        new = partitions if isinstance(partitions, TopicsImage) else TopicsImage.of(
            partitions, topic_ids or {t.name: t.topic_id for t in self._topics.topics})
        old_names = {t.name for t in self._topics.topics}
        gone = old_names - {t.name for t in new.topics}
        if {t.name for t in new.topics} - old_names:
            self._new_topics_version += 1         # regexes are refreshed at the next heartbeat
        changed = self._topics.changed_names(new)
        for g in self._groups.values():           # requestMetadataRefresh for subscribed groups
            if any(changed & g.subscribed_names_of(m) for m in g.members.values()):
                g.metadata_deadline = (0, 0)
        self._topics = new
        if gone:
            for offsets in self._offsets.values():
                for tp in [tp for tp in offsets if tp.topic in gone]:
                    del offsets[tp]

    def group(self, group_id: str) -> Optional[ConsumerGroupView]:
        g = self._groups.get(group_id)
        return None if g is None else view_of(g)

    def group_ids(self) -> list:
        return sorted(self._groups)

    def offsets(self, group_id: str) -> dict:
        return dict(self._offsets.get(group_id, {}))

    def next_deadline(self):
        return self._timer.next_deadline()

    def timers(self) -> list:
        """Live timers in firing order: [(deadline, key, payload)]; keys ("session"|"rebalance", gid, mid)."""
        return self._timer.entries()

    def copy(self) -> "ConsumerGroupCoordinator":
        c = ConsumerGroupCoordinator.__new__(ConsumerGroupCoordinator)
        c.config = self.config
        c.behaviours = self.behaviours
        c._set_flags()
        c.assignors = self.assignors
        c.default_assignor = self.default_assignor
        c._timer = self._timer.copy(c._fire)
        c._groups = {gid: g.copy() for gid, g in self._groups.items()}
        c._offsets = {gid: dict(o) for gid, o in self._offsets.items()}
        c._topics = self._topics
        c._member_counter = self._member_counter
        c._active = self._active
        c._new_topics_version = self._new_topics_version
        c._out = []
        return c

    def snapshot(self) -> tuple:
        return (self._timer.snapshot(),
                tuple(self._groups[g].snapshot() for g in sorted(self._groups)),
                tuple((g, tuple(sorted(o.items()))) for g, o in sorted(self._offsets.items())),
                self._topics, self._member_counter, self._active, self._new_topics_version)

    # ---- ConsumerGroupHeartbeat ------------------------------------------------------------------
    def _handle_heartbeat(self, req: ConsumerGroupHeartbeatRequest) -> None:
        try:
            self._validate_heartbeat(req)
            if req.member_epoch in (LEAVE, STATIC_LEAVE):
                resp = self._leave(req)
            else:
                resp = self._heartbeat(req)
        except ApiError as e:
            resp = ConsumerGroupHeartbeatResponse(error=e.error, error_message=e.message or None)
        self._out.append(Reply(req.correlation_id, resp))

    def _validate_heartbeat(self, req) -> None:
        """throwIfConsumerGroupHeartbeatRequestIsInvalid."""
        def empty(v):
            return v is not None and v.strip() == ""
        if req.group_id is None or empty(req.group_id):
            raise ApiError(E.INVALID_REQUEST, "GroupId can't be empty.")
        if empty(req.instance_id):
            raise ApiError(E.INVALID_REQUEST, "InstanceId can't be empty.")
        if empty(req.rack_id):
            raise ApiError(E.INVALID_REQUEST, "RackId can't be empty.")
        epoch = req.member_epoch
        if epoch > 0 or epoch == LEAVE:
            if not req.member_id:
                raise ApiError(E.INVALID_REQUEST, "MemberId can't be empty.")
        elif epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise ApiError(E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if req.topic_partitions is None or len(req.topic_partitions) != 0:
                raise ApiError(E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if not req.subscribed_topic_names and not req.subscribed_topic_regex:
                raise ApiError(E.INVALID_REQUEST,
                               "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif epoch == STATIC_LEAVE:
            if not req.member_id:
                raise ApiError(E.INVALID_REQUEST, "MemberId can't be empty.")
            if req.instance_id is None:
                raise ApiError(E.INVALID_REQUEST, "InstanceId can't be null.")
        else:
            raise ApiError(E.INVALID_REQUEST, "MemberEpoch is invalid.")
        if req.server_assignor is not None and req.server_assignor not in self.assignors:
            raise ApiError(E.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {req.server_assignor} is not supported. "
                           f"Supported assignors: {', '.join(self.assignors)}.")

    def _validate_member_epoch(self, member, received, owned_raw) -> None:
        """throwIfConsumerGroupMemberEpochIsInvalid (with the KAFKA-19233 fix: epoch 0 rejoins)."""
        if received == 0 and not self._no_epoch_zero_rejoin:
            return
        if received > member.member_epoch:
            raise ApiError(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a greater member epoch "
                           f"({received}) than the one known by the group coordinator ({member.member_epoch}). "
                           "The member must abandon all its partitions and rejoin.")
        if received < member.member_epoch:
            if received != member.previous_member_epoch or not _is_subset(owned_raw, member.assigned):
                raise ApiError(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a smaller member "
                               f"epoch ({received}) than the one known by the group coordinator "
                               f"({member.member_epoch}). The member must abandon all its partitions and rejoin.")

    def _heartbeat(self, req) -> ConsumerGroupHeartbeatResponse:
        gid = req.group_id
        create = req.member_epoch == 0
        group = self._groups.get(gid)
        is_new_group = group is None
        if group is None:
            if not create:
                raise ApiError(E.GROUP_ID_NOT_FOUND, f"Consumer group {gid} not found.")
            group = ConsumerGroup(gid, self._lost_epoch)
        max_size = self.config.max_size
        if max_size is not None and len(group.members) >= max_size and (
                not req.member_id or req.member_id not in group.members):
            raise ApiError(E.GROUP_MAX_SIZE_REACHED,
                           f"The consumer group has reached its maximum capacity of {max_size} members.")
        member_id = req.member_id
        generated = False
        if not member_id:
            generated = True
            member_id = f"member-{self._member_counter + 1}"
        owned_raw = req.topic_partitions
        owned = None if owned_raw is None else frozenset(
            (tp.topic_id, p) for tp in owned_raw for p in tp.partitions)
        replaced = None
        if req.instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                if not create:
                    raise ApiError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {gid}.")
                member = ConsumerGroupMember(member_id)
            else:
                self._validate_member_epoch(member, req.member_epoch, owned_raw)
        else:
            existing = group.static_member(req.instance_id)
            if create:
                if existing is None:
                    member = group.members.get(member_id) or ConsumerGroupMember(member_id)
                else:
                    if existing.member_epoch != STATIC_LEAVE:
                        raise ApiError(E.UNRELEASED_INSTANCE_ID,
                                       f"Static member {member_id} with instance id {req.instance_id} cannot "
                                       f"join the group because the instance id is owned by {existing.member_id} member.")
                    member = existing._replace(member_id=member_id, member_epoch=0, previous_member_epoch=0)
                    replaced = existing
            else:
                if existing is None:
                    raise ApiError(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
                if existing.member_id != member_id:
                    raise ApiError(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                                   f"{req.instance_id} was fenced by member {existing.member_id}.")
                self._validate_member_epoch(existing, req.member_epoch, owned_raw)
                member = existing

        # 1. The member's new subscription (ConsumerGroupMember.Builder.maybeUpdate*).
        updated = member._replace(
            instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            server_assignor_name=(req.server_assignor if req.server_assignor is not None
                                  else member.server_assignor_name),
            subscribed_topic_names=(tuple(sorted(set(req.subscribed_topic_names)))
                                    if req.subscribed_topic_names is not None else member.subscribed_topic_names),
            subscribed_topic_regex=(req.subscribed_topic_regex if req.subscribed_topic_regex is not None
                                    else member.subscribed_topic_regex),
            client_id=req.client_id, client_host=req.client_host)
        names_changed = updated != member and updated.subscribed_topic_names != member.subscribed_topic_names
        status, refresh, drop_regex = RX.update_status(group, member, updated, not self._regex_removal_no_bump)
        if refresh and not RX.is_valid(updated.subscribed_topic_regex):
            raise ApiError(E.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex `{updated.subscribed_topic_regex}` "
                           "is not a valid regular expression.")
        resolved = {rx: ts for rx, ts in group.resolved_regexes.items() if rx != drop_regex}
        bump = group.group_epoch == 0 or names_changed or status == RX.REGEX_UPDATED_AND_RESOLVED
        excluded = {member.member_id} | ({replaced.member_id} if replaced is not None else set())
        sub_meta, deadline = group.subscription_metadata, None
        if bump or group.has_metadata_expired(self.now):
            # updateSubscriptionMetadata: recomputed when the subscription changed or a refresh is due.
            names = set(_names_of(updated, resolved))
            for mid, m in group.members.items():
                if mid not in excluded:
                    names.update(_names_of(m, resolved))
            sub_meta = self._topics.subscription_metadata(names)
            if sub_meta != group.subscription_metadata:
                bump = True
        group_epoch = group.group_epoch + (1 if bump else 0)
        if bump or group.has_metadata_expired(self.now):
            deadline = (self.now + self.config.metadata_refresh_interval_ms, group_epoch)

        # 2. The target assignment, if the group epoch moved past it.
        new_targets = None
        if group_epoch > group.assignment_epoch:
            new_targets = self._compute_target(group, group_epoch, member, updated, replaced, sub_meta, resolved)
            target_epoch = group_epoch
            target = new_targets.get(updated.member_id, EMPTY)
        else:
            target_epoch = group.assignment_epoch
            target = group.target_of(updated.member_id, updated.instance_id)

        # 3. Reconcile the member toward the target (maybeReconcile), forcing its assignment to be
        # consistent with its subscription (assignmentIsSubscriptionConsistent, KAFKA-19431).
        subscribed_ids = self._topics.ids_of(_names_of(updated, resolved))
        reconciled = updated
        enforce = any(t not in subscribed_ids for t, _ in updated.assigned)
        if enforce or not updated.is_reconciled_to(target_epoch):
            try:
                reconciled = reconcile(updated, target_epoch, target, group.current_partition_epoch, owned,
                                       subscribed_ids, enforce, self._unrevoked_bump,
                                       self._own_revocation_unreleased)
            except FencedMemberEpoch as e:
                raise ApiError(E.FENCED_MEMBER_EPOCH, str(e)) from None

        # ---- apply, in Kafka's record order ----
        if is_new_group:
            self._groups[gid] = group
        if generated:
            self._member_counter += 1
        if replaced is not None:
            old_target = group.target_of(replaced.member_id)
            group.remove_member(replaced.member_id)
            group.update_member(member)
            group.set_target(member.member_id, old_target)
        if updated != member:
            group.update_member(updated)
        if drop_regex is not None:
            group.resolved_regexes.pop(drop_regex, None)
        if deadline is not None:
            group.metadata_deadline = deadline
        group.subscription_metadata = sub_meta
        group.group_epoch = group_epoch
        if new_targets is not None:
            for mid, a in new_targets.items():
                if group.target.get(mid) != a:
                    group.set_target(mid, a)
            group.assignment_epoch = group_epoch
        if reconciled != updated:
            group.update_member(reconciled)
            key = ("rebalance", gid, reconciled.member_id)
            if reconciled.state == MemberState.UNREVOKED_PARTITIONS:
                self._timer.schedule(key, reconciled.rebalance_timeout_ms, reconciled.member_epoch)
            else:
                self._timer.cancel(key)
        self._timer.schedule(("session", gid, member_id), self.config.session_timeout_ms, None)
        self._maybe_refresh_regexes(group, refresh)

        full = req.member_epoch == 0 or (req.rebalance_timeout_ms != -1 and (
            req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
            and req.topic_partitions is not None)
        assignment = None
        if full or reconciled.assigned != member.assigned:
            assignment = to_topic_partitions(reconciled.assigned)
        return ConsumerGroupHeartbeatResponse(
            error=E.NONE, member_id=reconciled.member_id, member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self.config.heartbeat_interval_ms, assignment=assignment)

    def _compute_target(self, group, group_epoch, member, updated, replaced, sub_meta, resolved) -> dict:
        """updateTargetAssignment + TargetAssignmentBuilder.build: the whole group's new target."""
        name = group.preferred_server_assignor(member, updated) or self.default_assignor
        assignor = self.assignors[name]
        specs = {}
        for mid, m in group.members.items():
            if (replaced is not None and mid == replaced.member_id) or mid == updated.member_id:
                continue
            specs[mid] = self._member_spec(m, group.target.get(mid, EMPTY), resolved)
        own = group.target.get(updated.member_id, EMPTY)
        if updated.instance_id is not None:
            prev = group.static_members.get(updated.instance_id)
            if prev is not None and prev != updated.member_id:
                own = group.target.get(prev, EMPTY)
        specs[updated.member_id] = self._member_spec(updated, own, resolved)
        # TargetAssignmentBuilder's HashMap: the group's members are put (a replaced static member
        # too, then removed), then the updated member.
        order = list(group.members) + ([] if updated.member_id in group.members else [updated.member_id])
        describer = TopicDescriber({tid: n for _, tid, n in sub_meta})
        try:
            result = assignor.assign(GroupSpec(members=specs, member_order=tuple(order)), describer)
        except PartitionAssignorError as e:
            raise ApiError(E.UNKNOWN_SERVER_ERROR, f"Failed to compute a new target assignment for epoch "
                           f"{group_epoch}: {e}.") from None
        return {mid: from_by_topic(result.get(mid, {})) for mid in specs}

    def _member_spec(self, m, target, resolved) -> MemberSpec:
        """MemberSubscriptionAndAssignmentImpl: subscribed ids in the order of the member's HashSet of
        names (TopicIds), current target as {topic_id: partitions}."""
        assigned: dict = {}
        for t, p in sorted(target):
            assigned.setdefault(t, set()).add(p)
        assigned = {t: frozenset(ps) for t, ps in assigned.items()}
        if HAVE_KAFKA_ASSIGNORS:
            ids = {t.name: t.topic_id for t in self._topics.topics}
            return MemberSpec.from_names(sorted(_names_of(m, resolved)), ids, rack=m.rack_id,
                                         instance_id=m.instance_id, assigned=assigned)
        return MemberSpec(rack=m.rack_id, instance_id=m.instance_id,
                          subscribed=self._topics.ids_of(_names_of(m, resolved)), assigned=assigned)

    def _leave(self, req) -> ConsumerGroupHeartbeatResponse:
        """consumerGroupLeave / consumerGroupStaticMemberGroupLeave."""
        group = self._groups.get(req.group_id)
        if group is None:
            raise ApiError(E.GROUP_ID_NOT_FOUND, f"Consumer group {req.group_id} not found.")
        if req.instance_id is None:
            member = group.members.get(req.member_id)
            if member is None:
                raise ApiError(E.UNKNOWN_MEMBER_ID,
                               f"Member {req.member_id} is not a member of group {req.group_id}.")
        else:
            member = group.static_member(req.instance_id)
            if member is None:
                raise ApiError(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
            if member.member_id != req.member_id:
                raise ApiError(E.FENCED_INSTANCE_ID, f"Static member {req.member_id} with instance id "
                               f"{req.instance_id} was fenced by member {member.member_id}.")
            if req.member_epoch == STATIC_LEAVE:
                group.update_member(member._replace(member_epoch=STATIC_LEAVE, pending_revocation=frozenset()))
                return ConsumerGroupHeartbeatResponse(member_id=member.member_id, member_epoch=STATIC_LEAVE)
        self._fence(group, member)
        return ConsumerGroupHeartbeatResponse(member_id=req.member_id, member_epoch=req.member_epoch)

    def _fence(self, group, member) -> None:
        """consumerGroupFenceMember: remove, bump the group epoch, cancel the member's timers."""
        group.remove_member(member.member_id)
        rx = member.subscribed_topic_regex
        if rx and group.num_subscribed_members(rx) == 0:
            group.resolved_regexes.pop(rx, None)
        names = set()
        for m in group.members.values():
            names.update(group.subscribed_names_of(m))
        group.subscription_metadata = self._topics.subscription_metadata(names)
        group.group_epoch += 1
        if not group.members and not self._empty_epoch_lag:
            group.assignment_epoch = group.group_epoch     # KAFKA-20442 fix
        self._timer.cancel(("session", group.group_id, member.member_id))
        self._timer.cancel(("rebalance", group.group_id, member.member_id))

    # ---- regular expressions (regex.py) ----------------------------------------------------------
    def _maybe_refresh_regexes(self, group, required: bool) -> None:
        """maybeUpdateRegularExpressions' second half: start an asynchronous resolution (a timer of
        config.regex_resolution_ms) when a regex is new or unresolved, topics were created, or the
        refresh interval elapsed; never twice at once, nor within 10 s of the last one."""
        regexes = group.subscribed_regexes()
        if not regexes:
            return
        key = ("regex", group.group_id, "")
        if self._timer.has(key):
            return
        last = group.last_regex_refresh_ms
        if last >= 0 and self.now <= last + RX.BATCH_REFRESH_MIN_INTERVAL_MS:
            return
        required = (required or any(rx not in group.resolved_regexes for rx in regexes)
                    or group.regex_topics_version < self._new_topics_version
                    or (last >= 0 and self.now > last + self.config.regex_refresh_interval_ms))
        if required:
            self._timer.schedule(key, self.config.regex_resolution_ms, None)

    def _on_regexes_resolved(self, group) -> None:
        """handleRegularExpressionsResult: store the resolutions; a changed one bumps the group epoch."""
        names = [t.name for t in self._topics.topics]
        bump = False
        for rx in sorted(group.subscribed_regexes()):
            topics = RX.resolve(rx, names)
            if group.resolved_regexes.get(rx, frozenset()) != topics:
                bump = True
            group.resolved_regexes[rx] = topics
        group.last_regex_refresh_ms = self.now
        group.regex_topics_version = self._new_topics_version
        subscribed = set()
        for m in group.members.values():
            subscribed.update(group.subscribed_names_of(m))
        meta = self._topics.subscription_metadata(subscribed)
        if meta != group.subscription_metadata:
            bump = True
        if bump:
            group.group_epoch += 1
            group.subscription_metadata = meta
            group.metadata_deadline = (self.now + self.config.metadata_refresh_interval_ms, group.group_epoch)

    # ---- timers ----------------------------------------------------------------------------------
    def _fire(self, key, payload) -> None:
        kind, gid, mid = key
        group = self._groups.get(gid)
        if group is None:
            return
        if kind == "regex":
            self._on_regexes_resolved(group)
            return
        member = group.members.get(mid)
        if member is None:
            return
        if kind == "session":
            self._fence(group, member)
        elif kind == "rebalance" and member.member_epoch == payload:
            self._fence(group, member)

def _names_of(member, resolved: dict) -> frozenset:
    """The member's subscribed names plus its regex's resolution (unresolved: nothing)."""
    names = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        names |= resolved.get(member.subscribed_topic_regex, frozenset())
    return frozenset(names)


def _not_coordinator(request):
    e = E.NOT_COORDINATOR
    if isinstance(request, ConsumerGroupHeartbeatRequest):
        return ConsumerGroupHeartbeatResponse(error=e)
    if isinstance(request, ConsumerGroupDescribeRequest):
        return ConsumerGroupDescribeResponse(tuple(DescribedGroup(e, None, g) for g in request.group_ids))
    if isinstance(request, OffsetCommitRequest):
        return OffsetCommitResponse(tuple((tp, e) for tp, _ in request.offsets))
    return OffsetFetchResponse(e)


def _is_subset(owned_raw, assigned: frozenset) -> bool:
    """GroupMetadataManager.isSubset: None is not a subset; a listed topic must be assigned."""
    if owned_raw is None:
        return False
    topics = {t for t, _ in assigned}
    for tp in owned_raw:
        if tp.topic_id not in topics:
            return False
        for p in tp.partitions:
            if (tp.topic_id, p) not in assigned:
                return False
    return True


_HANDLERS = {
    ConsumerGroupHeartbeatRequest: ConsumerGroupCoordinator._handle_heartbeat,
    ConsumerGroupDescribeRequest: ConsumerGroupCoordinator._handle_describe,
    OffsetCommitRequest: ConsumerGroupCoordinator._handle_offset_commit,
    OffsetFetchRequest: ConsumerGroupCoordinator._handle_offset_fetch,
}
