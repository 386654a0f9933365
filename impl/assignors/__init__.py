"""Reference partition assignors: exact re-implementations of Kafka's client-side assignors.

`assign(problem)` takes one problem in issue 3's format (a dict, see `problem.py`) and returns
the answer dict `{"id", "assignment": {member: [[topic, partition], ...]}}` or, for a malformed
problem or an unknown assignor, `{"id", "error": "one line"}`. The consumer member calls it
when it leads a group; `kverify assign` and `kverify assignor check` call it too.
Built-in names: range, roundrobin, sticky, cooperative-sticky, legacy-range.
"""
from __future__ import annotations

from kverify.impl.assignors.errors import AssignorCrash
from kverify.impl.assignors.problem import (Problem, ProblemError, answer_json, error_json,
                                            parse_problem)


def _registry() -> dict:
    from kverify.impl.assignors.legacy_range import LegacyRangeAssignor
    from kverify.impl.assignors.range_assignor import RangeAssignor
    from kverify.impl.assignors.round_robin import RoundRobinAssignor

    reg = {"range": RangeAssignor, "roundrobin": RoundRobinAssignor, "legacy-range": LegacyRangeAssignor}
    try:
        from kverify.impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
    except ImportError:  # pragma: no cover - only while sticky.py is being written
        return reg
    reg["sticky"] = StickyAssignor
    reg["cooperative-sticky"] = CooperativeStickyAssignor
    return reg


def names() -> list:
    """Built-in assignor names, in a fixed order."""
    order = ["range", "roundrobin", "sticky", "cooperative-sticky", "legacy-range"]
    reg = _registry()
    return [n for n in order if n in reg]


def get(name: str, behaviours=frozenset()):
    """A built-in assignor object (with `.name`, `.cooperative`, `.assign(Problem) -> dict`)."""
    reg = _registry()
    if name not in reg:
        raise ProblemError(f"unknown assignor {name!r} (built-in: {', '.join(names())})")
    return reg[name](behaviours=frozenset(behaviours))


def solve(problem: Problem, assignor: str | None = None, behaviours=frozenset()) -> dict:
    """Assignment {member id: [(topic, partition), ...]} for a parsed problem; raises ProblemError."""
    name = assignor or problem.assignor
    if not name:
        raise ProblemError("no assignor named (set 'assignor' in the problem)")
    return get(name, behaviours).assign(problem)


def assign(problem: dict, assignor: str | None = None, behaviours=frozenset()) -> dict:
    """Answer one problem dict in issue 3's format. Never raises for bad input: a malformed
    problem, or one on which Kafka's own assignor throws (AssignorCrash), gets an error answer."""
    pid = problem.get("id") if isinstance(problem, dict) else None
    try:
        parsed = parse_problem(problem)
        return answer_json(parsed.id, solve(parsed, assignor, behaviours), parsed.members)
    except (ProblemError, AssignorCrash) as exc:
        return error_json(pid, str(exc))


__all__ = ["AssignorCrash", "assign", "solve", "get", "names", "parse_problem", "Problem", "ProblemError"]
