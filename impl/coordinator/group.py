"""Mutable group and member metadata of the coordinator (Kafka's GroupMetadata/MemberMetadata).

Only the coordinator mutates these objects; everybody else sees them through `views.py`.
A parked JoinGroup/SyncGroup is represented by the correlation id of the request whose response
is owed (`awaiting_join` / `awaiting_sync`), never by a closure, so that `copy()` is a few dict
copies and `snapshot()` is a tuple. Iteration order of `members` is insertion order; Kafka uses
hash-map order where it picks "any" member (leader fallback, protocol vote ties), which the
digest (§13.3) treats as unspecified.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kverify.impl.coordinator.states import EMPTY, IllegalStateError, check_transition


class CommittedOffset(NamedTuple):
    """An offset as the group holds it: Kafka's OffsetAndMetadata plus the order of its log append
    (`append_order` stands in for the record's log offset, used to keep the newer of two writes)."""
    offset: int
    leader_epoch: Optional[int]
    metadata: str
    commit_timestamp: int
    expire_timestamp: Optional[int] = None
    append_order: int = -1


def select_protocol(member_protocols) -> str:
    """Kafka's `selectProtocol` over the members' ordered protocol lists: candidates are the
    names every member lists; each member votes for its first candidate; most votes wins. A tie
    goes to the protocol whose first vote came first in member order (Kafka: hash-map order,
    unspecified, digest §3.6.4)."""
    lists = list(member_protocols)
    if not lists:
        raise IllegalStateError("Cannot select protocol for empty group")
    candidates = set(name for name, _ in lists[0])
    for ps in lists[1:]:
        candidates &= set(name for name, _ in ps)
    votes: dict = {}
    for ps in lists:
        vote = next((name for name, _ in ps if name in candidates), None)
        if vote is None:
            raise IllegalStateError("Member does not support any of the candidate protocols")
        votes[vote] = votes.get(vote, 0) + 1
    best, best_n = None, -1
    for name, n in votes.items():
        if n > best_n:
            best, best_n = name, n
    return best


class Member:
    __slots__ = ("member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
                 "session_timeout_ms", "protocol_type", "protocols", "assignment", "is_new",
                 "awaiting_join", "awaiting_sync")

    def __init__(self, member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                 session_timeout_ms, protocol_type, protocols):
        self.member_id: str = member_id
        self.group_instance_id: Optional[str] = group_instance_id
        self.client_id: str = client_id
        self.client_host: str = client_host
        self.rebalance_timeout_ms: int = rebalance_timeout_ms
        self.session_timeout_ms: int = session_timeout_ms
        self.protocol_type: str = protocol_type
        self.protocols: tuple = tuple(protocols)      # ((name, metadata bytes), ...) in preference order
        self.assignment: bytes = b""
        self.is_new: bool = False
        self.awaiting_join: Optional[int] = None       # correlation id of the parked JoinGroup
        self.awaiting_sync: Optional[int] = None       # correlation id of the parked SyncGroup

    def copy(self) -> "Member":
        m = Member.__new__(Member)
        m.member_id = self.member_id
        m.group_instance_id = self.group_instance_id
        m.client_id = self.client_id
        m.client_host = self.client_host
        m.rebalance_timeout_ms = self.rebalance_timeout_ms
        m.session_timeout_ms = self.session_timeout_ms
        m.protocol_type = self.protocol_type
        m.protocols = self.protocols
        m.assignment = self.assignment
        m.is_new = self.is_new
        m.awaiting_join = self.awaiting_join
        m.awaiting_sync = self.awaiting_sync
        return m

    def snapshot(self) -> tuple:
        return (self.member_id, self.group_instance_id, self.client_id, self.client_host,
                self.rebalance_timeout_ms, self.session_timeout_ms, self.protocol_type, self.protocols,
                self.assignment, self.is_new, self.awaiting_join, self.awaiting_sync)

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    def metadata(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise IllegalStateError(f"Member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols) -> bool:
        """Same protocols, same order, same metadata bytes (`MemberMetadata.matches`)."""
        return tuple(protocols) == self.protocols

    def satisfied_heartbeat(self) -> bool:
        """`hasSatisfiedHeartbeat` at a moment when no heartbeat is being completed (digest §5.3)."""
        return (not self.is_new) and (self.awaiting_join is not None or self.awaiting_sync is not None)


class Group:
    __slots__ = ("group_id", "state", "state_timestamp", "generation_id", "protocol_type", "protocol_name",
                 "leader_id", "members", "static_members", "pending_members", "pending_sync_members",
                 "num_awaiting_join", "supported_protocols", "new_member_added", "subscribed_topics",
                 "offsets", "pending_offsets", "pending_txn_offsets", "incarnation")

    def __init__(self, group_id: str, state: str = EMPTY, now: Optional[int] = None):
        self.group_id = group_id
        self.state = state
        self.state_timestamp: Optional[int] = now
        self.generation_id = 0
        self.protocol_type: Optional[str] = None
        self.protocol_name: Optional[str] = None
        self.leader_id: Optional[str] = None
        self.members: dict = {}                 # member id -> Member (insertion order)
        self.static_members: dict = {}          # group.instance.id -> member id
        self.pending_members: set = set()
        self.pending_sync_members: set = set()
        self.num_awaiting_join = 0
        self.supported_protocols: dict = {}     # protocol name -> number of members listing it
        self.new_member_added = False
        self.subscribed_topics: Optional[frozenset] = None
        self.offsets: dict = {}                 # TopicPartition -> CommittedOffset
        self.pending_offsets: dict = {}         # TopicPartition -> CommittedOffset staged, append pending
        self.pending_txn_offsets: dict = {}     # producer id -> {TopicPartition: (CommittedOffset, appended)}
        self.incarnation = 0                    # which group object this is (Kafka holds object refs)

    # ---- copy / compare -----------------------------------------------------------------------
    def copy(self) -> "Group":
        g = Group.__new__(Group)
        g.group_id = self.group_id
        g.state = self.state
        g.state_timestamp = self.state_timestamp
        g.generation_id = self.generation_id
        g.protocol_type = self.protocol_type
        g.protocol_name = self.protocol_name
        g.leader_id = self.leader_id
        g.members = {k: m.copy() for k, m in self.members.items()}
        g.static_members = dict(self.static_members)
        g.pending_members = set(self.pending_members)
        g.pending_sync_members = set(self.pending_sync_members)
        g.num_awaiting_join = self.num_awaiting_join
        g.supported_protocols = dict(self.supported_protocols)
        g.new_member_added = self.new_member_added
        g.subscribed_topics = self.subscribed_topics
        g.offsets = dict(self.offsets)
        g.pending_offsets = dict(self.pending_offsets)
        g.pending_txn_offsets = {pid: dict(p) for pid, p in self.pending_txn_offsets.items()}
        g.incarnation = self.incarnation
        return g

    def snapshot(self) -> tuple:
        return (self.group_id, self.state, self.state_timestamp, self.generation_id, self.protocol_type,
                self.protocol_name, self.leader_id, tuple(m.snapshot() for m in self.members.values()),
                tuple(sorted(self.static_members.items())), tuple(sorted(self.pending_members)),
                tuple(sorted(self.pending_sync_members)), self.new_member_added,
                None if self.subscribed_topics is None else tuple(sorted(self.subscribed_topics)),
                tuple(sorted(self.offsets.items())), tuple(sorted(self.pending_offsets.items())),
                tuple(sorted((pid, tuple(sorted(p.items()))) for pid, p in self.pending_txn_offsets.items())))

    # ---- state --------------------------------------------------------------------------------
    def transition_to(self, target: str, now: int) -> None:
        check_transition(self.group_id, self.state, target)
        self.state = target
        self.state_timestamp = now

    # ---- membership ---------------------------------------------------------------------------
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_members

    def supports_protocols(self, protocol_type: str, protocol_names) -> bool:
        if self.state == EMPTY:
            return bool(protocol_type) and bool(protocol_names)
        n = len(self.members)
        return self.protocol_type == protocol_type and any(
            self.supported_protocols.get(p, 0) == n for p in protocol_names)

    def select_protocol(self) -> str:
        return select_protocol([m.protocols for m in self.members.values()])

    def _inc_protocols(self, protocols) -> None:
        sp = self.supported_protocols
        for name, _ in protocols:
            sp[name] = sp.get(name, 0) + 1

    def _dec_protocols(self, protocols) -> None:
        sp = self.supported_protocols
        for name, _ in protocols:
            c = sp.get(name, 0) - 1
            if c > 0:
                sp[name] = c
            else:
                sp.pop(name, None)

    def add(self, member: Member, awaiting_join: Optional[int] = None, allow_duplicate_static: bool = False) -> None:
        """`GroupMetadata.add`: register a member (first one fixes protocolType; leader if none)."""
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members and not allow_duplicate_static:
                raise IllegalStateError(
                    f"Static member with groupInstanceId={member.group_instance_id} cannot be added to "
                    f"group {self.group_id} since it is already a member")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._inc_protocols(member.protocols)
        member.awaiting_join = awaiting_join
        if awaiting_join is not None:
            self.num_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str, reelect_leader: bool = True) -> Optional[Member]:
        """`GroupMetadata.remove`: drop a member (and pending / pending-sync entries); if it led
        the group the leader becomes the first remaining member, or None."""
        m = self.members.pop(member_id, None)
        if m is not None:
            self._dec_protocols(m.protocols)
            if m.awaiting_join is not None:
                self.num_awaiting_join -= 1
            if m.group_instance_id is not None and self.static_members.get(m.group_instance_id) == member_id:
                del self.static_members[m.group_instance_id]
        if self.leader_id == member_id and reelect_leader:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)
        return m

    def update_member(self, member: Member, protocols, rebalance_timeout_ms, session_timeout_ms,
                      awaiting_join: Optional[int]) -> None:
        """`GroupMetadata.updateMember`: new protocols/timeouts; (re)park or unpark its JoinGroup."""
        self._dec_protocols(member.protocols)
        self._inc_protocols(protocols)
        member.protocols = tuple(protocols)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if awaiting_join is not None and member.awaiting_join is None:
            self.num_awaiting_join += 1
        elif awaiting_join is None and member.awaiting_join is not None:
            self.num_awaiting_join -= 1
        member.awaiting_join = awaiting_join

    def take_join(self, member: Member) -> Optional[int]:
        """Unpark the member's JoinGroup (`maybeInvokeJoinCallback`); returns its correlation id."""
        cid = member.awaiting_join
        if cid is not None:
            member.awaiting_join = None
            self.num_awaiting_join -= 1
        return cid

    def take_sync(self, member: Member) -> Optional[int]:
        cid = member.awaiting_sync
        member.awaiting_sync = None
        return cid

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str):
        """`replaceStaticMember`: re-key the member; returns (member, parked join cid, parked sync cid)
        so the caller can fence the old id's parked requests with FENCED_INSTANCE_ID."""
        m = self.members.pop(old_id, None)
        if m is None:
            raise IllegalStateError(f"Cannot replace non-existing member id {old_id}")
        join_cid = self.take_join(m)
        sync_cid = self.take_sync(m)
        m.member_id = new_id
        self.members[new_id] = m
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        return m, join_cid, sync_cid

    def maybe_elect_new_joined_leader(self, keep_departed_leader: bool = False) -> bool:
        """Keep the leader if it rejoined, otherwise any rejoined member; False if none rejoined.
        `keep_departed_leader` (behaviour leader-not-reelected): the leader id is left in place,
        whether or not that member rejoined or is still a member, as long as some member rejoined."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join is not None:
            return True
        if keep_departed_leader:
            return any(m.awaiting_join is not None for m in self.members.values())
        for mid, m in self.members.items():
            if m.awaiting_join is not None:
                self.leader_id = mid
                return True
        return False

    def has_offsets(self) -> bool:
        return bool(self.offsets) or bool(self.pending_offsets) or bool(self.pending_txn_offsets)

    def has_pending_commit(self, tp) -> bool:
        """A regular or transactional commit of `tp` is not settled yet (OffsetFetch requireStable)."""
        return tp in self.pending_offsets or any(tp in p for p in self.pending_txn_offsets.values())
