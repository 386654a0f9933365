"""Expectation checks of the scenario format (section 6): response fields and group introspection.

Each check returns a list of `Mismatch(field, expected, actual)`; empty = the expectation holds.
Kept separate from the runner so the semantics of every expectation field sit in one table-like
place that can be read against the format document.
"""
from __future__ import annotations

from typing import Any, NamedTuple


class Mismatch(NamedTuple):
    field: str
    expected: Any
    actual: Any


def _set_key(xs):
    return sorted(xs, key=lambda x: (x is not None, "" if x is None else str(x)))


def check_response(kind: str, resp: dict, exp: dict) -> list[Mismatch]:
    """Compare a delivered (normalized) response with the resolved expectation fields."""
    out = []

    def eq(name, actual):
        if exp[name] != actual:
            out.append(Mismatch(name, exp[name], actual))

    for k, want in exp.items():
        if k in ("error", "member_id", "generation_id", "leader_id", "skip_assignment", "protocol_type",
                 "protocol_name", "assignment", "state", "protocol"):
            eq(k, resp.get(k))
        elif k in ("member_id_not", "leader_id_not", "generation_id_not"):
            actual = resp.get(k[:-4])
            if actual == want:
                out.append(Mismatch(k, f"anything but {want!r}", actual))
        elif k == "member_id_prefix":
            if not str(resp.get("member_id", "")).startswith(want):
                out.append(Mismatch(k, f"starts with {want!r}", resp.get("member_id")))
        elif k == "members_count":
            eq(k, len(resp["members"]))
        elif k == "member_instance_ids":
            actual = _set_key({m["group_instance_id"] for m in resp["members"]})
            if set(want) != set(actual):
                out.append(Mismatch(k, _set_key(set(want)), actual))
        elif k == "member_errors":
            eq(k, [m["error"] for m in resp["members"]])
        elif k == "partition_errors":
            eq(k, resp["partition_errors"])
        elif k == "partitions":
            got = resp["partitions"]
            for tp, sub in want.items():
                if tp not in got:
                    out.append(Mismatch(f"partitions[{tp}]", sub, "absent"))
                    continue
                for sk, sv in sub.items():
                    if got[tp].get(sk) != sv:
                        out.append(Mismatch(f"partitions[{tp}].{sk}", sv, got[tp].get(sk)))
        elif k == "partitions_exact":
            if set(want) != set(resp["partitions"]):
                out.append(Mismatch(k, sorted(want), sorted(resp["partitions"])))
        elif k == "partition_count":
            eq(k, len(resp["partitions"]))
        elif k == "all_partition_errors":
            bad = {tp: p["error"] for tp, p in resp["partitions"].items() if p["error"] != want}
            if bad:
                out.append(Mismatch(k, want, bad))
        elif k == "member_ids":
            eq(k, [m["member_id"] for m in resp["members"]])
        elif k == "instance_ids":
            eq(k, [m["group_instance_id"] for m in resp["members"] if m["group_instance_id"] is not None])
        elif k == "member_ids_contain":
            ids = [m["member_id"] for m in resp["members"]]
            missing = [x for x in want if x not in ids]
            if missing:
                out.append(Mismatch(k, want, ids))
        elif k in ("members_metadata_all_empty", "members_assignment_all_empty"):
            sub = "metadata" if "metadata" in k else "assignment"
            eq(k, all(m[sub] == "" for m in resp["members"]))
        elif k == "first_member_id":
            eq(k, resp["members"][0]["member_id"] if resp["members"] else None)
        elif k == "groups_count":
            eq(k, len(resp["groups"]))
        elif k == "groups":
            eq(k, resp["groups"])
        elif k == "results":
            got = dict((g, e) for g, e in resp["results"])
            if None in got or got != want:
                out.append(Mismatch(k, want, {("null" if g is None else g): e for g, e in resp["results"]}))
        elif k == "results_contain":
            got = dict((g, e) for g, e in resp["results"])
            for g, e in want.items():
                if got.get(g, "absent") != e:
                    out.append(Mismatch(f"results[{g}]", e, got.get(g, "absent")))
        elif k == "results_null_key":
            if len(resp["results"]) != 1 or resp["results"][0][0] is not None or resp["results"][0][1] != want:
                out.append(Mismatch(k, {"null": want}, {("null" if g is None else g): e for g, e in resp["results"]}))
        else:
            raise ValueError(f"no check for expect field {k}")
    return out


def check_raised(raised, exp: dict) -> list[Mismatch]:
    """`raises` / `message_contains` on a request that should have thrown synchronously."""
    if raised is None:
        return [Mismatch("raises", exp["raises"], "no exception")]
    cls, msg = raised
    out = []
    if cls != exp["raises"]:
        out.append(Mismatch("raises", exp["raises"], cls))
    for part in exp.get("message_contains", ()):
        if part not in msg:
            out.append(Mismatch("message_contains", part, msg))
    return out


def _members(view) -> dict:
    return dict(view.members)


def check_group(view, exp: dict) -> list[Mismatch]:
    """`expect_group` against the coordinator's read-only GroupView (None = not in the cache)."""
    out = []
    if "exists" in exp:
        if (view is not None) != exp["exists"]:
            return [Mismatch("exists", exp["exists"], view is not None)]
        if view is None:
            return out
    if view is None:
        return [Mismatch("exists", True, False)]
    members = _members(view)
    static = dict(view.static_members)
    pending = set(view.pending_members)
    new = {mid for mid, m in members.items() if m.is_new}

    def eq(name, actual):
        if exp[name] != actual:
            out.append(Mismatch(name, exp[name], actual))

    def seteq(name, actual):
        if set(exp[name]) != set(actual):
            out.append(Mismatch(name, sorted(set(exp[name])), sorted(set(actual))))

    for k, want in exp.items():
        if k == "exists":
            continue
        if k == "state":
            eq(k, view.state)
        elif k == "generation_id":
            eq(k, view.generation_id)
        elif k == "member_count":
            eq(k, len(members))
        elif k == "member_ids":
            seteq(k, members)
        elif k == "has_members":
            missing = [x for x in want if x not in members]
            if missing:
                out.append(Mismatch(k, missing, sorted(members)))
        elif k == "lacks_members":
            present = [x for x in want if x in members]
            if present:
                out.append(Mismatch(k, f"none of {want}", sorted(members)))
        elif k == "dynamic_member_ids":
            seteq(k, [mid for mid, m in members.items() if m.group_instance_id is None])
        elif k == "dynamic_member_count":
            eq(k, sum(1 for m in members.values() if m.group_instance_id is None))
        elif k == "static_instance_ids":
            seteq(k, static)
        elif k == "has_static_instances":
            missing = [x for x in want if x not in static]
            if missing:
                out.append(Mismatch(k, missing, sorted(static)))
        elif k == "lacks_static_instances":
            present = [x for x in want if x in static]
            if present:
                out.append(Mismatch(k, f"none of {want}", sorted(static)))
        elif k == "num_pending":
            eq(k, len(pending))
        elif k == "num_new_members":
            eq(k, len(new))
        elif k == "new_members_exclude":
            bad = [x for x in want if x in new]
            if bad:
                out.append(Mismatch(k, f"none of {want} new", sorted(new)))
        elif k == "leader_id":
            eq(k, view.leader_id)
        elif k == "leader_id_not_null":
            eq(k, view.leader_id is not None)
        elif k == "select_protocol":
            eq(k, _select(view))
        elif k == "select_protocol_not_in":
            sel = _select(view)
            if sel in want:
                out.append(Mismatch(k, f"not in {want}", sel))
        elif k in ("all_members_session_timeout_ms", "all_members_rebalance_timeout_ms"):
            attr = k[len("all_members_"):]
            values = sorted({getattr(m, attr) for m in members.values()})
            eq(k, values[0] if len(values) == 1 else values)
        else:
            raise ValueError(f"no check for expect_group field {k}")
    return out


def _select(view):
    try:
        return view.select_protocol()
    except Exception as exc:  # selecting with no members is an error in Kafka too
        return f"<{type(exc).__name__}: {exc}>"


def format_mismatches(ms: list[Mismatch]) -> str:
    return "; ".join(f"{m.field}: expected {m.expected!r}, got {m.actual!r}" for m in ms)
