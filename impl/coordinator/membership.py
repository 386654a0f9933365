"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup of the classic protocol, and the rebalance
machinery behind them (Kafka 3.6 `GroupCoordinator.scala`; digest §3-§6).

A mixin of `GroupCoordinator`: it uses the coordinator's `_groups`, `_timer`, `_emit`, `_store`
and status checks. Kafka's purgatories are modelled with timer keys:
  ("hb", group, member)   heartbeat / session expiry (payload: is the member still pending?)
  ("join", group)         DelayedJoin
  ("ijoin", group)        InitialDelayedJoin (payload: (this wait, remaining budget))
  ("sync", group)         DelayedSync, the pending-sync barrier (payload: generation)
A delayed operation that Kafka would "complete" (tryComplete true) is cancelled here; one whose
later expiry has no effect is cancelled too, which changes no observable outcome.
"""
from __future__ import annotations

from kverify.impl.coordinator.group import Member
from kverify.impl.coordinator.messages import (
    Errors as E, JoinGroupMember, JoinGroupResponse, HeartbeatResponse, LeaveGroupResponse,
    LeaveMemberResponse, SyncGroupResponse)
from kverify.impl.coordinator.states import (
    COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE, IllegalStateError, can_rebalance)
from kverify.impl.coordinator.subscription import decode_subscription_topics


def map_group_append_error(error: str) -> str:
    """Raw append error of a group-metadata write -> response error (Scala 3.6, digest §4.4)."""
    if error in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return E.COORDINATOR_NOT_AVAILABLE
    if error in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    if error == E.REQUEST_TIMED_OUT:
        return E.REBALANCE_IN_PROGRESS
    if error in (E.MESSAGE_TOO_LARGE, E.RECORD_LIST_TOO_LARGE, E.INVALID_FETCH_SIZE):
        return E.UNKNOWN_SERVER_ERROR
    return error


class MembershipHandling:
    # ---- shared helpers ------------------------------------------------------------------------
    def _validate_member(self, group, member_id, instance_id):
        """`validateCurrentMember` (digest §3.3.3)."""
        if instance_id is not None:
            current = group.static_members.get(instance_id)
            if current is None:
                return E.UNKNOWN_MEMBER_ID
            if current != member_id:
                return E.FENCED_INSTANCE_ID
        if member_id not in group.members:
            return E.UNKNOWN_MEMBER_ID
        return None

    def _schedule_heartbeat(self, group, member, timeout_ms=None):
        """`completeAndScheduleNextHeartbeatExpiration`: a member whose heartbeat is satisfied at
        once (parked in Join/Sync and not new) gets no watch at all, as in Kafka's purgatory."""
        key = ("hb", group.group_id, member.member_id)
        if member.satisfied_heartbeat():
            self._timer.cancel(key)
        else:
            self._timer.schedule(key, member.session_timeout_ms if timeout_ms is None else timeout_ms, False)

    def _cancel_heartbeat(self, group, member_id):
        self._timer.cancel(("hb", group.group_id, member_id))

    def _remove_group_member(self, group, member_id):
        return group.remove(member_id, reelect_leader=not self._leader_not_reelected)

    def _current_member_metadata(self, group):
        if group.state in (DEAD, PREPARING_REBALANCE):
            raise IllegalStateError(f"Cannot obtain member metadata for group in state {group.state}")
        name = group.protocol_name
        return tuple(JoinGroupMember(mid, m.group_instance_id, m.metadata(name)) for mid, m in group.members.items())

    def _join_ok(self, group, member_id, leader_id, members=(), skip=False):
        return JoinGroupResponse(E.NONE, member_id, group.generation_id, group.protocol_type,
                                 group.protocol_name, leader_id or "", skip, members)

    # ---- JoinGroup ------------------------------------------------------------------------------
    def _handle_join(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=False)
        if err is not None:
            self._emit(cid, JoinGroupResponse(err, req.member_id))
            return
        cfg = self.config
        if not (cfg.group_min_session_timeout_ms <= req.session_timeout_ms <= cfg.group_max_session_timeout_ms):
            self._emit(cid, JoinGroupResponse(E.INVALID_SESSION_TIMEOUT, req.member_id))
            return
        unknown = req.member_id == ""
        group = self._groups.get(req.group_id)
        if group is None:
            if not unknown:
                self._emit(cid, JoinGroupResponse(E.UNKNOWN_MEMBER_ID, req.member_id))
                return
            group = self._add_new_group(req.group_id)
        if not self._accept_joining_member(group, req.member_id):
            if req.member_id in group.members:
                self._remove_group_member(group, req.member_id)
                self._cancel_heartbeat(group, req.member_id)
            else:
                group.pending_members.discard(req.member_id)
            self._emit(cid, JoinGroupResponse(E.GROUP_MAX_SIZE_REACHED, ""))
        elif unknown:
            self._new_member_join(group, req)
        else:
            self._current_member_join(group, req)
        if group.state == PREPARING_REBALANCE:
            self._try_complete_join(group)

    def _accept_joining_member(self, group, member_id) -> bool:
        st = group.state
        if st in (EMPTY, DEAD):
            return True
        m = group.members.get(member_id)
        if st == PREPARING_REBALANCE:
            return (m is not None and m.awaiting_join is not None) or group.num_awaiting_join < self.config.group_max_size
        return m is not None or len(group.members) < self.config.group_max_size

    def _new_member_join(self, group, req):
        cid = req.correlation_id
        if group.state == DEAD:
            self._emit(cid, JoinGroupResponse(E.COORDINATOR_NOT_AVAILABLE, ""))
            return
        if not group.supports_protocols(req.protocol_type, {name for name, _ in req.protocols}):
            self._emit(cid, JoinGroupResponse(E.INCONSISTENT_GROUP_PROTOCOL, ""))
            return
        new_id = self._generate_member_id(req.client_id, req.group_instance_id)
        iid = req.group_instance_id
        if iid is not None:
            if iid in group.static_members:
                if self._duplicate_static_member and group.state != STABLE:
                    self._add_member_and_rebalance(group, req, new_id, iid, allow_duplicate_static=True)
                else:
                    self._update_static_member_and_rebalance(group, group.static_members[iid], new_id, req)
            else:
                self._add_member_and_rebalance(group, req, new_id, iid)
        elif req.require_known_member_id:
            group.pending_members.add(new_id)
            self._timer.schedule(("hb", group.group_id, new_id), req.session_timeout_ms, True)
            self._emit(cid, JoinGroupResponse(E.MEMBER_ID_REQUIRED, new_id))
        else:
            self._add_member_and_rebalance(group, req, new_id, None)

    def _current_member_join(self, group, req):
        cid, mid = req.correlation_id, req.member_id
        if group.state == DEAD:
            self._emit(cid, JoinGroupResponse(E.COORDINATOR_NOT_AVAILABLE, mid))
            return
        if not group.supports_protocols(req.protocol_type, {name for name, _ in req.protocols}):
            self._emit(cid, JoinGroupResponse(E.INCONSISTENT_GROUP_PROTOCOL, mid))
            return
        if mid in group.pending_members:
            if req.group_instance_id is not None:
                raise IllegalStateError(
                    f"Received unexpected JoinGroup with groupInstanceId={req.group_instance_id} "
                    f"for pending member with memberId={mid}")
            self._add_member_and_rebalance(group, req, mid, None)
            return
        err = self._validate_member(group, mid, req.group_instance_id)
        if err is not None:
            self._emit(cid, JoinGroupResponse(err, mid))
            return
        member = group.members[mid]
        st = group.state
        if st == PREPARING_REBALANCE:
            self._update_member_and_rebalance(group, member, req)
        elif st == COMPLETING_REBALANCE:
            if member.matches(req.protocols):
                members = self._current_member_metadata(group) if group.leader_id == mid else ()
                self._emit(cid, self._join_ok(group, mid, group.leader_id, members))
            else:
                self._update_member_and_rebalance(group, member, req)
        elif st == STABLE:
            if group.leader_id == mid or not member.matches(req.protocols):
                self._update_member_and_rebalance(group, member, req)
            else:
                self._emit(cid, self._join_ok(group, mid, group.leader_id))
        else:
            self._emit(cid, JoinGroupResponse(E.UNKNOWN_MEMBER_ID, mid))

    def _add_member_and_rebalance(self, group, req, member_id, instance_id, allow_duplicate_static=False):
        m = Member(member_id, instance_id, req.client_id, req.client_host, req.rebalance_timeout_ms,
                   req.session_timeout_ms, req.protocol_type, req.protocols)
        m.is_new = True
        if group.state == PREPARING_REBALANCE and group.generation_id == 0:
            group.new_member_added = True
        group.add(m, req.correlation_id, allow_duplicate_static=allow_duplicate_static)
        self._schedule_heartbeat(group, m, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(group)

    def _update_member_and_rebalance(self, group, member, req):
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms,
                            req.correlation_id)
        self._maybe_prepare_rebalance(group)

    def _update_static_member_and_rebalance(self, group, old_id, new_id, req):
        iid = req.group_instance_id
        current_leader = group.leader_id
        member, join_cid, sync_cid = group.replace_static_member(iid, old_id, new_id)
        if join_cid is not None:
            self._emit(join_cid, JoinGroupResponse(E.FENCED_INSTANCE_ID, old_id))
        if sync_cid is not None:
            self._emit(sync_cid, SyncGroupResponse(E.FENCED_INSTANCE_ID))
        self._cancel_heartbeat(group, old_id)
        self._schedule_heartbeat(group, member)
        old_timeouts = (member.rebalance_timeout_ms, member.session_timeout_ms)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms,
                            req.correlation_id)
        # Kafka 3.6 reads the "old" protocols only after updateMember, so a failed persistence
        # restores the old timeouts but keeps the new protocols; reproduced as is.
        old = (member.protocols,) + old_timeouts
        st = group.state
        if st == STABLE:
            if group.protocol_name == group.select_protocol():
                assignment = {mid: m.assignment for mid, m in group.members.items()}
                cont = ("static", group.group_id, group.incarnation, iid, old_id, new_id, old, current_leader,
                        req.correlation_id, req.support_skipping_assignment,
                        (group.generation_id, group.protocol_type, group.protocol_name, group.leader_id,
                         self._current_member_metadata(group) if group.leader_id == new_id else ()))
                self._store(self._partition(group.group_id), (self._group_record(group, assignment),), cont)
            else:
                self._maybe_prepare_rebalance(group)
        elif st == COMPLETING_REBALANCE:
            if self._static_replace_in_completing:
                cid = group.take_join(member)
                self._emit(cid, self._join_ok(group, new_id, current_leader))
            else:
                self._maybe_prepare_rebalance(group)
        elif st == PREPARING_REBALANCE:
            pass
        else:
            raise IllegalStateError(
                f"Group {group.group_id} was not supposed to be in the state {st} when the unknown "
                f"static member {iid} rejoins.")

    def _finish_static_store(self, cont, error):
        (_, gid, inc, iid, old_id, new_id, old, current_leader, cid, skip, at_call) = cont
        group = self._live_group(gid, inc)
        mapped = E.NONE if error == E.NONE else map_group_append_error(error)
        if mapped != E.NONE:
            gen, ptype, pname = at_call[:3]
            if group is not None:
                member = group.members.get(new_id)
                if member is not None:
                    group.update_member(member, old[0], old[1], old[2], None)
                    member, _, _ = group.replace_static_member(iid, new_id, old_id)
                    self._cancel_heartbeat(group, new_id)
                    self._schedule_heartbeat(group, member)
                gen, ptype, pname = group.generation_id, group.protocol_type, group.protocol_name
            self._emit(cid, JoinGroupResponse(mapped, "", gen, ptype, pname, current_leader or "", False, ()))
            return
        if group is None:
            # the group object was unloaded meanwhile: Kafka still answers through the detached
            # object, whose fields are those of the moment the append was issued
            gen, ptype, pname, leader, members = at_call
            is_leader = skip and leader == new_id
            self._emit(cid, JoinGroupResponse(E.NONE, new_id, gen, ptype, pname,
                                              (leader if skip else current_leader) or "", is_leader,
                                              members if is_leader else ()))
            return
        member = group.members.get(new_id)
        if member is None or member.awaiting_join is None:
            return
        if skip:
            is_leader = group.leader_id == new_id
            members = self._current_member_metadata(group) if is_leader else ()
            resp = self._join_ok(group, new_id, group.leader_id, members, skip=is_leader)
        else:
            resp = self._join_ok(group, new_id, current_leader)
        self._emit(group.take_join(member), resp)

    # ---- rebalance --------------------------------------------------------------------------------
    def _maybe_prepare_rebalance(self, group):
        if can_rebalance(group.state):
            self._prepare_rebalance(group)

    def _prepare_rebalance(self, group):
        if group.state == COMPLETING_REBALANCE:
            self._reset_and_propagate_assignment_error(group, E.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        if group.state == EMPTY:
            d = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - d, 0)
            self._transition(group, PREPARING_REBALANCE)
            self._timer.schedule(("ijoin", group.group_id), d, (d, remaining))
        else:
            timeout = group.rebalance_timeout_ms()
            self._transition(group, PREPARING_REBALANCE)
            self._watch_join(group, timeout)

    def _watch_join(self, group, timeout):
        """tryCompleteElseWatch of a DelayedJoin."""
        key = ("join", group.group_id)
        if group.has_all_members_joined():
            self._timer.cancel(key)
            self._on_complete_join(group)
        else:
            self._timer.schedule(key, timeout, None)

    def _try_complete_join(self, group):
        """checkAndComplete on the join key: only a regular DelayedJoin can complete early."""
        key = ("join", group.group_id)
        if self._timer.has(key) and group.has_all_members_joined():
            self._timer.cancel(key)
            self._on_complete_join(group)

    def _on_join_timer(self, group):
        self._on_complete_join(group)

    def _on_initial_join_timer(self, group, payload):
        delay, remaining = payload
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            d = min(self.config.group_initial_rebalance_delay_ms, remaining)
            self._timer.schedule(("ijoin", group.group_id), d, (d, max(remaining - delay, 0)))
        else:
            self._on_complete_join(group)

    def _on_complete_join(self, group):
        gid = group.group_id
        for m in [m for m in group.members.values() if m.awaiting_join is None and not m.is_static]:
            self._remove_group_member(group, m.member_id)
            self._cancel_heartbeat(group, m.member_id)
        if group.state == DEAD:
            return
        if not group.maybe_elect_new_joined_leader(self._leader_not_reelected) and group.members:
            self._watch_join(group, group.rebalance_timeout_ms())
            return
        self._init_next_generation(group)
        if group.state == EMPTY:
            self._store(self._partition(gid), (self._group_record(group, {}),), ("ignore",))
            return
        leader_members = None
        for m in list(group.members.values()):
            cid = group.take_join(m)
            if cid is not None:
                if group.leader_id == m.member_id:
                    if leader_members is None:
                        leader_members = self._current_member_metadata(group)
                    members = leader_members
                else:
                    members = ()
                self._emit(cid, self._join_ok(group, m.member_id, group.leader_id, members))
            self._schedule_heartbeat(group, m)
            m.is_new = False
            group.pending_sync_members.add(m.member_id)
        self._schedule_pending_sync(group)

    def _init_next_generation(self, group):
        if not self._no_generation_bump:
            group.generation_id += 1
        if group.members:
            group.protocol_name = group.select_protocol()
            group.subscribed_topics = self._compute_subscribed_topics(group)
            self._transition(group, COMPLETING_REBALANCE)
        else:
            group.protocol_name = None
            group.subscribed_topics = self._compute_subscribed_topics(group)
            self._transition(group, EMPTY)
        group.pending_sync_members.clear()

    @staticmethod
    def _compute_subscribed_topics(group):
        if group.protocol_type != "consumer":
            return None
        if not group.members:
            return frozenset()
        if group.protocol_name is None:
            return None
        topics = set()
        for m in group.members.values():
            t = decode_subscription_topics(m.metadata(group.protocol_name))
            if t is None:
                return None
            topics |= t
        return frozenset(topics)

    # ---- pending-sync barrier (DelayedSync) -------------------------------------------------------
    def _schedule_pending_sync(self, group):
        if self._no_sync_barrier:
            return
        key = ("sync", group.group_id)
        if group.state in (DEAD, EMPTY, PREPARING_REBALANCE) or not group.pending_sync_members:
            self._timer.cancel(key)
        else:
            self._timer.schedule(key, group.rebalance_timeout_ms(), group.generation_id)

    def _remove_sync_expiration(self, group):
        group.pending_sync_members.clear()
        self._timer.cancel(("sync", group.group_id))

    def _remove_pending_sync_member(self, group, member_id):
        group.pending_sync_members.discard(member_id)
        if not group.pending_sync_members:
            self._timer.cancel(("sync", group.group_id))

    def _on_sync_timer(self, group, generation):
        if generation != group.generation_id:
            return
        if group.state in (COMPLETING_REBALANCE, STABLE) and group.pending_sync_members:
            pending = group.pending_sync_members
            ordered = [mid for mid in group.members if mid in pending]
            ordered += sorted(pending.difference(ordered))
            for mid in ordered:
                self._remove_group_member(group, mid)
                self._cancel_heartbeat(group, mid)
            self._prepare_rebalance(group)

    # ---- assignment propagation -------------------------------------------------------------------
    def _reset_and_propagate_assignment_error(self, group, error):
        for m in group.members.values():
            m.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group, error):
        ok = error == E.NONE
        ptype = group.protocol_type if ok else None
        pname = group.protocol_name if ok else None
        for m in list(group.members.values()):
            cid = group.take_sync(m)
            if cid is not None:
                self._emit(cid, SyncGroupResponse(error, ptype, pname, m.assignment))
                self._schedule_heartbeat(group, m)

    # ---- SyncGroup -------------------------------------------------------------------------------
    def _handle_sync(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=False)
        if err == E.COORDINATOR_LOAD_IN_PROGRESS:
            self._emit(cid, SyncGroupResponse(E.REBALANCE_IN_PROGRESS))
            return
        if err is not None:
            self._emit(cid, SyncGroupResponse(err))
            return
        group = self._groups.get(req.group_id)
        if group is None:
            self._emit(cid, SyncGroupResponse(E.UNKNOWN_MEMBER_ID))
            return
        if group.state == DEAD:
            err = E.COORDINATOR_NOT_AVAILABLE
        else:
            err = self._validate_member(group, req.member_id, req.group_instance_id)
            if err is None:
                if req.generation_id != group.generation_id:
                    err = E.ILLEGAL_GENERATION
                elif req.protocol_type is not None and group.protocol_type != req.protocol_type:
                    err = E.INCONSISTENT_GROUP_PROTOCOL
                elif req.protocol_name is not None and group.protocol_name != req.protocol_name:
                    err = E.INCONSISTENT_GROUP_PROTOCOL
        if err is not None:
            self._emit(cid, SyncGroupResponse(err))
            return
        st = group.state
        mid = req.member_id
        if st == EMPTY:
            self._emit(cid, SyncGroupResponse(E.UNKNOWN_MEMBER_ID))
        elif st == PREPARING_REBALANCE:
            self._emit(cid, SyncGroupResponse(E.REBALANCE_IN_PROGRESS))
        elif st == COMPLETING_REBALANCE:
            group.members[mid].awaiting_sync = cid
            self._remove_pending_sync_member(group, mid)
            if group.leader_id == mid:
                given = dict(req.assignments)
                assignment = {m: given.get(m, b"") for m in group.members}
                cont = ("sync", group.group_id, group.incarnation, group.generation_id,
                        tuple(assignment.items()))
                self._store(self._partition(group.group_id), (self._group_record(group, assignment),), cont)
        elif st == STABLE:
            self._remove_pending_sync_member(group, mid)
            member = group.members[mid]
            self._emit(cid, SyncGroupResponse(E.NONE, group.protocol_type, group.protocol_name, member.assignment))
            self._schedule_heartbeat(group, member)
        else:
            raise IllegalStateError(f"Reached unexpected condition for Dead group {group.group_id}")

    def _finish_sync_store(self, cont, error):
        _, gid, inc, generation, assignment = cont
        group = self._live_group(gid, inc)
        if group is None or group.state != COMPLETING_REBALANCE or group.generation_id != generation:
            return
        if error != E.NONE:
            self._reset_and_propagate_assignment_error(group, map_group_append_error(error))
            self._maybe_prepare_rebalance(group)
        else:
            given = dict(assignment)
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            self._propagate_assignment(group, E.NONE)
            self._transition(group, STABLE)

    # ---- Heartbeat -------------------------------------------------------------------------------
    def _handle_heartbeat(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=False)
        if err is not None:
            self._emit(cid, HeartbeatResponse(E.NONE if err == E.COORDINATOR_LOAD_IN_PROGRESS else err))
            return
        group = self._groups.get(req.group_id)
        if group is None:
            self._emit(cid, HeartbeatResponse(E.UNKNOWN_MEMBER_ID))
            return
        if group.state == DEAD:
            self._emit(cid, HeartbeatResponse(E.COORDINATOR_NOT_AVAILABLE))
            return
        err = self._validate_member(group, req.member_id, req.group_instance_id)
        if err is None and req.generation_id != group.generation_id:
            err = E.ILLEGAL_GENERATION
        if err is None:
            st = group.state
            if st == EMPTY:
                err = E.UNKNOWN_MEMBER_ID
            else:
                self._schedule_heartbeat(group, group.members[req.member_id])
                err = E.REBALANCE_IN_PROGRESS if st == PREPARING_REBALANCE else E.NONE
        self._emit(cid, HeartbeatResponse(err))

    def _on_heartbeat_timer(self, group, member_id, is_pending):
        if group.state == DEAD:
            return
        if is_pending:
            self._remove_pending_member_and_update(group, member_id)
            return
        m = group.members.get(member_id)
        if m is not None and not m.satisfied_heartbeat():
            self._remove_member_and_update(group, m)

    # ---- removal ---------------------------------------------------------------------------------
    def _remove_pending_member_and_update(self, group, member_id):
        self._remove_group_member(group, member_id)
        if group.state == PREPARING_REBALANCE:
            self._try_complete_join(group)

    def _remove_member_and_update(self, group, member):
        cid = group.take_join(member)
        if cid is not None:
            self._emit(cid, JoinGroupResponse(E.UNKNOWN_MEMBER_ID, ""))
        self._remove_group_member(group, member.member_id)
        st = group.state
        if st in (STABLE, COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group)
        elif st == PREPARING_REBALANCE:
            self._try_complete_join(group)

    # ---- LeaveGroup ------------------------------------------------------------------------------
    def _handle_leave(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=False)
        if err is not None:
            self._emit(cid, LeaveGroupResponse(err, ()))
            return
        group = self._groups.get(req.group_id)
        if group is None:
            self._emit(cid, LeaveGroupResponse(E.NONE, tuple(
                LeaveMemberResponse(m.member_id, m.group_instance_id, E.UNKNOWN_MEMBER_ID) for m in req.members)))
            return
        if group.state == DEAD:
            self._emit(cid, LeaveGroupResponse(E.COORDINATOR_NOT_AVAILABLE, ()))
            return
        results = []
        for ident in req.members:
            mid, iid = ident.member_id, ident.group_instance_id
            if mid == "":
                current = group.static_members.get(iid) if iid is not None else None
                if current is not None:
                    self._remove_current_member(group, current)
                    err = E.NONE
                else:
                    err = E.UNKNOWN_MEMBER_ID
            elif mid in group.pending_members:
                self._remove_pending_member_and_update(group, mid)
                err = E.NONE
            else:
                err = self._validate_member(group, mid, iid)
                if err is None:
                    self._remove_current_member(group, mid)
                    err = E.NONE
            results.append(LeaveMemberResponse(mid, iid, err))
        self._emit(cid, LeaveGroupResponse(E.NONE, tuple(results)))

    def _remove_current_member(self, group, member_id):
        self._remove_member_and_update(group, group.members[member_id])
        self._cancel_heartbeat(group, member_id)
