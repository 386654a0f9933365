"""Each certification property on hand-made answers: holds on a good one, fails on a bad one."""
import pytest

from kverify.certify import properties as P
from kverify.certify.optimum import best_kept
from kverify.certify.scenarios import Group


def m(mid, topics, owned=None, generation=None):
    return {"id": mid, "topics": topics, "owned": owned, "generation": generation, "instance_id": None}


PROBLEM = {"id": "p", "topics": {"t": 4}, "members": [m("a", ["t"], [["t", 0], ["t", 1]], 3), m("b", ["t"], [["t", 2], ["t", 3]], 3)]}


def ans(**assignment):
    return {"id": "p", "assignment": {k: [list(x) for x in v] for k, v in assignment.items()}}


GOOD = ans(a=[("t", 0), ("t", 1)], b=[("t", 2), ("t", 3)])


@pytest.mark.parametrize("name", ["complete", "exclusive", "subscribed-only", "no-ghosts", "balanced", "sticky",
                                  "cooperative-safe"])
def test_good_answer_satisfies_every_property(name):
    assert P.CHECKS[name](PROBLEM, GOOD) is None


@pytest.mark.parametrize("name, bad, fragment", [
    ("complete", ans(a=[("t", 0), ("t", 1)], b=[("t", 2)]), "t-3"),
    ("exclusive", ans(a=[("t", 0), ("t", 1), ("t", 3)], b=[("t", 2), ("t", 3)]), "t-3"),
    ("subscribed-only", ans(a=[("t", 0), ("t", 1), ("u", 0)], b=[("t", 2), ("t", 3)]), "u-0"),
    ("no-ghosts", ans(a=[("t", 0), ("t", 1), ("t", 9)], b=[("t", 2), ("t", 3)]), "t-9"),
    ("no-ghosts", ans(a=[("t", 0), ("t", 1)], b=[("t", 2), ("t", 3)], z=[]), "not asked"),
    ("no-ghosts", ans(a=[("t", 0), ("t", 1), ("t", 2), ("t", 3)]), "leaves out"),
    ("balanced", ans(a=[("t", 0), ("t", 1), ("t", 2), ("t", 3)], b=[]), "could take"),
    ("sticky", ans(a=[("t", 2), ("t", 3)], b=[("t", 0), ("t", 1)]), "gap 4"),
    ("cooperative-safe", ans(a=[("t", 0), ("t", 1), ("t", 2)], b=[("t", 3)]), "t-2 goes to a"),
])
def test_bad_answer_breaks_the_property(name, bad, fragment):
    msg = P.CHECKS[name](PROBLEM, bad)
    assert msg is not None and fragment in msg


def test_cooperative_complete_and_balanced_allow_partitions_in_flight():
    withheld = ans(a=[("t", 0)], b=[("t", 2), ("t", 3)])  # t-1 being revoked from a
    assert P.check_complete(PROBLEM, withheld, cooperative=True) is None
    assert P.check_complete(PROBLEM, withheld, cooperative=False) is not None
    assert P.check_balanced(PROBLEM, withheld, cooperative=True) is None


def test_well_formed_rejects_errors_wrong_ids_and_bad_partitions():
    assert "error" in P.well_formed(PROBLEM, {"id": "p", "error": "boom"})
    assert "id" in P.well_formed(PROBLEM, {"id": "q", "assignment": {}})
    assert "malformed partition" in P.well_formed(PROBLEM, {"id": "p", "assignment": {"a": [["t", "0"]]}})
    assert P.well_formed(PROBLEM, GOOD) is None


def test_effective_owner_is_highest_generation_and_ties_mean_nobody():
    p = {"id": 1, "topics": {"t": 2}, "members": [m("a", ["t"], [["t", 0], ["t", 1]], 4), m("b", ["t"], [["t", 0]], 5),
                                                  m("c", ["t"], [["t", 1]], 4)]}
    assert P.effective_owners(p) == {("t", 0): "b"}


def test_optimum_identical_formula_and_z3_agree_on_a_small_problem():
    # identical subscriptions: a owns 3 of 4, b none -> a keeps 2 at best
    p = {"id": 1, "topics": {"t": 4}, "members": [m("a", ["t"], [["t", 0], ["t", 1], ["t", 2]], 1), m("b", ["t"], [], 1)]}
    assert best_kept(p, 0) == (2, "identical subscriptions, exact formula")
    # same problem with b also subscribing to an extra topic forces Z3
    q = {"id": 1, "topics": {"t": 4, "u": 1},
         "members": [m("a", ["t"], [["t", 0], ["t", 1], ["t", 2]], 1), m("b", ["t", "u"], [], 1)]}
    best, how = best_kept(q, 0)
    assert how == "Z3 optimum" and best == 3   # a keeps all 3, b takes t-3 and u-0: 3 vs 2 is balanced


def test_scenario_group_feeds_answers_back_with_generations():
    g = Group({"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"], "instance_id": None}], "events": []})
    first = g.problem("r0")
    assert first["members"][0]["owned"] is None and first["members"][0]["generation"] is None
    g.settle(first, {"a": [("t", 0), ("t", 1)]})
    g.apply(["join", ["t"]])
    second = g.problem("r1")
    assert second["members"][0]["owned"] == [["t", 0], ["t", 1]] and second["members"][0]["generation"] == 1
    assert second["members"][1]["owned"] is None
