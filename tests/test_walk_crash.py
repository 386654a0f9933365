"""A step that raises is a finding, not the end of the engine: the walker (plain and memoised)
reports the violation `exception` at the step that raised, replay reproduces it at the same step,
and shrinking keeps a crash trace only while it crashes at the same site."""
import verdict_toys
from kverify.model.shrink import shrink_trace
from kverify.model.walk import EXCEPTION, crash_site, replay, walk


def toy(**kw):
    params = {k: v[0] for k, v in verdict_toys.PARAMS.items()}
    params.update(kw)
    return verdict_toys.make(params, frozenset())


def test_walk_reports_a_raising_step_with_its_trace():
    proto = toy(limit=6, crash_at=2)
    res = walk(proto, 3, 40, record_trace=True)
    v = res.violation
    assert v is not None and v.invariant == EXCEPTION
    assert v.message.startswith("ZeroDivisionError: ") and "verdict_toys.py" in v.message and "in step" in v.message
    assert v.step_index == len(res.trace) == res.steps           # the step that raised is the last one
    states, again = replay(proto, res.trace)
    assert again == v and states[-1] == 2                         # replay crashes at the same step


def test_the_memoised_walker_reports_the_same_crash():
    plain = walk(toy(limit=6, crash_at=2), 5, 40, record_trace=True)
    proto = toy(limit=6, crash_at=2)
    proto.memo_safe = True
    memo = walk(proto, 5, 40, record_trace=True)
    assert memo.violation == plain.violation and memo.trace == plain.trace


def test_a_raising_check_is_blamed_on_the_state_it_checks():
    proto = toy(limit=6)
    proto.check_state = lambda s, i=0: 1 / 0 if s == 3 else None
    res = walk(proto, 1, 60, record_trace=True)
    assert res.violation.invariant == EXCEPTION and res.violation.step_index == res.steps
    assert replay(proto, res.trace)[1] == res.violation


def test_shrinking_keeps_the_crash_site():
    proto = toy(limit=6, crash_at=2)
    long = [("skip", 0), ("inc", 1), ("skip", 0), ("skip", 0), ("inc", 1), ("skip", 0), ("inc", 1)]
    _, v = replay(proto, long)
    assert v.invariant == EXCEPTION
    sh = shrink_trace(proto, long, EXCEPTION)
    assert sh.actions == [("inc", 1), ("inc", 1), ("skip", 0)] and crash_site(sh.violation) == crash_site(v)
    assert sh.minimal
