"""The generic bounded model checker (model/proofs/bmc.py) on toy encodings: a counter whose bug is
reachable at exactly depth 3 is found there (shortest trace, named actions), a correct counter is
clean, step predicates see the action's extra items."""
import z3

from kverify.model.proofs.bmc import bmc


class Counter:
    """x starts at 0; `inc` adds 1 while x < limit, `reset` sets 0; `buggy`: inc at x == 2 jumps to 7."""

    def __init__(self, limit: int = 5, buggy: bool = False):
        self.limit, self.buggy = limit, buggy

    def state(self, name):
        return {"x": z3.Int(f"x_{name}")}

    def init(self, s):
        return s["x"] == 0

    def actions(self, s):
        x = s["x"]
        step = z3.If(z3.And(x == 2, z3.BoolVal(self.buggy)), z3.IntVal(7), x + 1)
        return [("inc", ("inc",), x < self.limit, {"x": step}, "grows"),
                ("reset", ("reset",), x > 0, {"x": z3.IntVal(0)}, "shrinks")]

    def same(self, t, nxt):
        return t["x"] == nxt["x"]


def over_limit(enc):
    return lambda s: s["x"] > enc.limit


def test_bug_found_at_exactly_depth_3():
    enc = Counter(buggy=True)
    res = bmc(enc, 6, bad_state=over_limit(enc))
    assert res.status == "falsified" and res.depth == 3 and res.violation == "state"
    assert [st["action"] for st in res.trace] == [None, ["inc"], ["inc"], ["inc"]]
    assert [st["state"]["x"] for st in res.trace] == [0, 1, 2, 7]
    assert res.trace[0]["label"] == "initial state"


def test_bug_beyond_the_bound_is_clean_not_falsified():
    enc = Counter(buggy=True)
    assert bmc(enc, 2, bad_state=over_limit(enc)).status == "clean"


def test_correct_counter_is_clean():
    enc = Counter()
    res = bmc(enc, 8, bad_state=over_limit(enc))
    assert res.status == "clean" and res.bound == 8 and res.trace == []


def test_bad_step_sees_the_extra_items():
    """A step predicate reading the fifth tuple item: 'a shrinking step only from x <= 2' fails at
    depth 4 (inc, inc, inc, then reset from 3)."""
    enc = Counter()

    def bad_step(s, t, act):
        return z3.And(z3.BoolVal(act[4] == "shrinks"), s["x"] > 2)

    res = bmc(enc, 6, bad_step=bad_step)
    assert res.status == "falsified" and res.depth == 4 and res.violation == "step"
    assert res.trace[-1]["action"] == ["reset"] and res.trace[-2]["state"]["x"] == 3


def test_bad_initial_state_is_depth_0():
    enc = Counter()
    res = bmc(enc, 3, bad_state=lambda s: s["x"] == 0)
    assert res.status == "falsified" and res.depth == 0 and len(res.trace) == 1


def test_custom_decode_and_counterexample_shape():
    enc = Counter(buggy=True)
    res = bmc(enc, 4, bad_state=over_limit(enc),
              decode=lambda m, s: {"value": m.eval(s["x"], model_completion=True).as_long()})
    cx = res.as_counterexample()
    assert cx["kind"] == "bmc" and cx["depth"] == 3 and cx["trace"][-1]["state"] == {"value": 7}
