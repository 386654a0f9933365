"""DescribeGroups, ListGroups and DeleteGroups (digest §7.6). A mixin of `GroupCoordinator`."""
from __future__ import annotations

from kverify.impl.coordinator.messages import (
    DeleteGroupsResponse, DescribedMember, DescribeGroupsResponse, Errors as E, ListGroupsResponse)
from kverify.impl.coordinator.states import DEAD, EMPTY, STABLE, IllegalStateError


class GroupAdministration:
    def _group_absent_error(self, group_id):
        """`groupNotExists`: GROUP_ID_NOT_FOUND when this coordinator owns the group's partition."""
        return E.GROUP_ID_NOT_FOUND if self._partition(group_id) in self._owned else E.NOT_COORDINATOR

    def _handle_describe(self, req):
        cid = req.correlation_id
        err = self._validate_status(req.group_id, allow_empty_id=True)
        if err is not None:
            self._emit(cid, DescribeGroupsResponse(err, "", "", "", ()))
            return
        group = self._groups.get(req.group_id)
        if group is None:
            self._emit(cid, DescribeGroupsResponse(E.NONE, DEAD, "", "", ()))
            return
        ptype = group.protocol_type or ""
        if group.state == STABLE:
            pname = group.protocol_name
            if pname is None:
                raise IllegalStateError("Invalid null group protocol for stable group")
            members = tuple(DescribedMember(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                            m.metadata(pname), m.assignment) for m in group.members.values())
            self._emit(cid, DescribeGroupsResponse(E.NONE, STABLE, ptype, pname, members))
        else:
            members = tuple(DescribedMember(m.member_id, m.group_instance_id, m.client_id, m.client_host, b"", b"")
                            for m in group.members.values())
            self._emit(cid, DescribeGroupsResponse(E.NONE, group.state, ptype, "", members))

    def _handle_list(self, req):
        cid = req.correlation_id
        if not self._active:
            self._emit(cid, ListGroupsResponse(E.COORDINATOR_NOT_AVAILABLE, ()))
            return
        err = E.COORDINATOR_LOAD_IN_PROGRESS if self._loading else E.NONE
        states = set(req.states)
        groups = tuple((gid, g.protocol_type or "", g.state) for gid, g in sorted(self._groups.items())
                       if not states or g.state in states)
        self._emit(cid, ListGroupsResponse(err, groups))

    def _handle_delete_groups(self, req):
        cid = req.correlation_id
        errors, order, eligible = {}, [], []
        for gid in req.groups:
            if gid in errors or any(gid == g for g in order):
                continue
            order.append(gid)
            err = self._validate_status(gid, allow_empty_id=True)
            if err is not None:
                errors[gid] = err
                continue
            group = self._groups.get(gid)
            if group is None or group.state == DEAD:
                errors[gid] = self._group_absent_error(gid)
            elif group.state == EMPTY:
                self._transition(group, DEAD)
                eligible.append(group)
            else:
                errors[gid] = E.NON_EMPTY_GROUP
        if eligible:
            self._cleanup_group_metadata(eligible, lambda g: self._remove_offsets(g, set(g.offsets) | set(g.pending_offsets)))
            for g in eligible:
                errors[g.group_id] = E.NONE
        self._emit(cid, DeleteGroupsResponse(tuple((gid, errors[gid]) for gid in order)))
