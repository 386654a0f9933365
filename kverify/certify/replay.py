"""`kverify replay` for assignor-certification records: re-ask the target the recorded problem and
judge the property again (reproduced = the answer still breaks it)."""
from __future__ import annotations


def replay_record(cx) -> tuple[bool, str]:
    from kverify.certify.check import judge
    from kverify.certify.targets import TargetFailure, make_target

    spec = cx.model.split(":", 1)[1]
    command = cx.extra.get("command")
    target = make_target(None if command else spec, command=command, behaviours=frozenset(cx.behaviours))
    try:
        problem = cx.extra["problem"]
        try:
            answer = target.solve(problem)
        except TargetFailure as exc:
            answer = exc
        verdict = judge(cx.invariant, target, problem, answer)
    finally:
        target.close()
    if verdict is None:
        return False, f"no longer reproduces: {cx.invariant} holds for the recorded problem"
    return True, f"reproduced: {cx.invariant} still fails on the recorded problem: {verdict}"
