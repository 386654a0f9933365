"""A resolved pattern stays resolved while another member subscribes to it (issue 17, surviving mutant).

Why it exists: impl/consumer/regex.py `update_status` deletes the resolution of the regex a member leaves only when
that member was its last subscriber (GroupMetadataManager.maybeUpdateRegularExpressions: numSubscribedMembers == 1).
The mutant `if old or ...` deletes it whenever a member leaves any regex, so the other subscribers resolve to nothing
and lose their partitions until a later refresh. No check saw it: the `regex` perturbation needs three of them (two
members onto the pattern, one off it). consumer-group-world's `start_pattern` starts both clients on the pattern, and
the step property `resolved-pattern-kept` (invariants/consumer_group.py) names the loss in the step it happens; the
ci/deep check `explore:consumer-group-world/shared-pattern` searches that bound completely (102,181 states, PASS on
the correct code, FAIL with the mutant, shown with `kverify verify --profile ci --only` on a copy).
"""
from kverify.impl.consumer import regex as RX
from kverify.invariants.consumer_group import CGView, resolved_pattern_kept
from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.walk import replay
from kverify.suite import providers as P

import planted_mutants

CHECK = "explore:consumer-group-world/shared-pattern"
BOUND = {"start_pattern": True, "failover": False, "grow": False}

# name -> (module, function, original text, mutated text, what it does)
MUTANTS = {
    # impl/consumer/regex.py:45 update_status, ReplaceAndWithOr
    "regex-deleted-with-other-subscribers": (
        RX, "update_status", "if old and group.num_subscribed_members(old) == 1",
        "if old or group.num_subscribed_members(old) == 1",
        "a member leaving a regex deletes its resolution although other members still subscribe to it"),
}


def _pv(*patterns):
    return CGView(0, 0, 0, (), (), (), (1,), 1, (), patterns=patterns)


def test_resolved_pattern_kept_on_views():
    kept = _pv(("t.*", 2, True))
    assert resolved_pattern_kept(kept, _pv(("t.*", 1, True))) is None          # one member left it, still resolved
    assert resolved_pattern_kept(kept, _pv(("t.*", 0, False))) is None         # its last subscriber left: deleted
    assert resolved_pattern_kept(_pv(("t.*", 1, False)), _pv(("t.*", 2, False))) is None   # never resolved yet
    assert resolved_pattern_kept(kept, _pv(("t.*", 1, False))) == (
        "pattern 't.*' was resolved and 1 member(s) still subscribe to it, but its resolution is gone")


def test_the_check_runs_in_ci_and_deep_at_the_start_pattern_bound():
    assert CHECK in [c.name for c in P.variants("ci")] and CHECK in [c.name for c in P.variants("deep")]
    model, bounds, caps = P.EXPLORE_VARIANTS[CHECK]
    assert model == "consumer-group-world" and bounds["ci"] == BOUND and caps["ci"] >= 102_181


def test_start_pattern_is_off_by_default_and_subscribes_both_clients_to_the_pattern():
    assert registry.build("consumer-group-world", {}).params["start_pattern"] is False
    w = registry.build("consumer-group-world", BOUND)
    s = w.init_states()[0]
    for a in [("start", 0), ("start", 1)]:
        s = w.step(s, a)
    assert [c.subscription_regex for c in s.clients] == ["t.*", "t.*"]
    assert [c.subscription for c in s.clients] == [(), ()]


def test_the_mutant_is_caught_and_the_same_trace_is_clean_on_the_reference(monkeypatch):
    reference = explore(registry.build("consumer-group-world", BOUND), stop_on_first=True, max_states=3000,
                        graph=False)
    assert not reference.violations, reference.violations[0].violation
    planted_mutants.plant_function(monkeypatch, "regex-deleted-with-other-subscribers", MUTANTS)
    bad = explore(registry.build("consumer-group-world", BOUND), stop_on_first=True, max_states=3000, graph=False)
    assert bad.violations, "the mutant went unnoticed"
    found = bad.violations[0]
    assert found.violation.invariant == "resolved-pattern-kept", found.violation
    names = [a[0] for a in found.actions]
    assert names.count("start") == 2 and "subscribe" in names and names[-1] == "deliver"
    monkeypatch.undo()                                        # the reference code again: the same steps break nothing
    w = registry.build("consumer-group-world", BOUND)
    _states, violation = replay(w, found.actions, found.init_index)
    assert violation is None, violation
