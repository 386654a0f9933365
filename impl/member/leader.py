"""What the elected leader does between JoinGroup and SyncGroup (ConsumerCoordinator.onLeaderElected).

It decodes every member's subscription, turns them into one assignment problem in issue 3's format,
runs the assignor the coordinator selected (`kverify.impl.assignors.assign`, never a private copy)
and encodes each member's share for the SyncGroup request. Kept apart from the member so the
translation between the wire content and the assignor's problem can be tested on its own.
"""
from __future__ import annotations

from kverify.impl.member.codec import CodecError, decode_subscription, encode_assignment


class LeaderError(ValueError):
    """The leader cannot produce an assignment (Kafka throws out of poll(); one-line message)."""


def build_problem(problem_id: str, protocol_name: str, members, cluster) -> dict:
    """The assignment problem for JoinGroup `members` ((member_id, instance_id, metadata) values).

    Owned partitions and their generation come from the subscription's v2 fields, except for the
    eager `sticky` assignor, which (as Kafka's StickyAssignor) reads them from its user data: an
    eager member has revoked everything before joining, so its owned list is empty."""
    existing = dict(cluster)
    topics, rows = set(), []
    for m in members:
        try:
            sub = decode_subscription(m.metadata)
        except CodecError as exc:
            raise LeaderError(f"member {m.member_id!r}: {exc}") from None
        topics.update(sub.topics)
        if protocol_name == "sticky":
            if sub.user_data is None:
                owned, gen = None, None
            else:
                owned, gen = [list(tp) for tp in sub.user_data[0]], sub.user_data[1]
        elif sub.generation < 0 and not sub.owned:
            owned, gen = None, None
        else:
            owned, gen = [list(tp) for tp in sub.owned], sub.generation
        rows.append({"id": m.member_id, "topics": list(sub.topics), "owned": owned, "generation": gen,
                     "instance_id": m.group_instance_id})
    return {"id": problem_id, "assignor": protocol_name,
            "topics": {t: existing[t] for t in sorted(topics) if t in existing},
            "members": rows}


def perform_assignment(group_id: str, generation_id: int, leader_id: str, protocol_name: str,
                       members, cluster) -> tuple:
    """((member_id, assignment bytes), ...) sorted by member id, for the leader's SyncGroup."""
    from kverify.impl.assignors import assign

    problem = build_problem(f"{group_id}/{generation_id}/{leader_id}", protocol_name, members, cluster)
    answer = assign(problem)
    if "error" in answer:
        raise LeaderError(f"assignor {protocol_name} failed: {answer['error']}")
    shares = answer.get("assignment", {})
    ids = {m.member_id for m in members}
    unknown = sorted(set(shares) - ids)
    if unknown:
        raise LeaderError(f"assignor {protocol_name} assigned to members not in the group: {unknown}")
    return tuple((mid, encode_assignment(tuple((t, int(p)) for t, p in shares.get(mid, ()))))
                 for mid in sorted(ids))
