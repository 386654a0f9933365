"""The abstract KIP-848 model `consumer-group`: clean at a small bound, each historical behaviour a
shortest counterexample, each invariant broken by a behaviour or a deliberate mutant."""
import subprocess
import sys

import pytest

from kverify.invariants import consumer_group as I
from kverify.model import consumer_group as CG
from kverify.model import registry
from kverify.model.actions import Action, ActionTable
from kverify.model.explore import explore
from kverify.model.walk import replay

# 18k states, a few seconds with the state graph (recoverability)
SMALL = {"perturbations": 1, "losses": 0, "commits": 1, "grow": False}


def build(params=None, behaviours=()):
    return registry.build("consumer-group", {**SMALL, **(params or {})}, behaviours)


def found(res) -> dict:
    return {f.violation.invariant: f for f in res.violations}


def test_small_bound_is_complete_clean_recoverable_and_not_vacuous():
    res = explore(build(), graph=True)
    assert res.complete and not res.violations, [f.violation for f in res.violations]
    assert not res.vacuous and set(res.sometimes) == {"group-stable", "revocation", "unreleased",
                                                      "stable-after-perturbation"}
    assert res.graph is not None and res.graph.unrecoverable == 0


def test_metadata_growth_and_lost_answers_stay_clean():
    res = explore(build({"grow": True, "losses": 1, "commits": 0, "perturbations": 1}), graph=False)
    assert res.complete and not res.violations, [f.violation for f in res.violations]


def test_spec_is_declared_and_registry_refuses_other_behaviours():
    spec = registry.spec_for("consumer-group")
    assert spec.supports == CG.SUPPORTS and set(spec.hunt_params) == set(CG.SUPPORTS)
    assert spec.action_names == CG.ACTIONS.names()
    with pytest.raises(registry.ModelError):
        registry.build("consumer-group", {}, ["no-generation-bump"])


def test_bad_parameter_is_one_line_exit_2():
    for args in (["--param", "members=9"], ["--param", "grow=maybe"], ["--behaviour", "stale-generation-commit"]):
        r = subprocess.run([sys.executable, "-m", "kverify", "explore", "consumer-group", *args],
                           capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


# --- historical behaviours: shortest counterexamples at their hunt bounds ---------------------------
EXPECTED = {
    I.B16147: ("partition-epochs-name-owners", 6),
    I.B19974: ("epoch-follows-target", 9),
    I.B19449: ("unreleased-waits-for-another", 9),
    I.B19233: ("rejoin-accepted", 6),
    I.B20442: ("empty-group-epochs-agree", 2),
    I.B19335: ("client-epochs-valid", 9),
}


@pytest.mark.parametrize("behaviour", sorted(EXPECTED))
def test_behaviour_gives_a_shortest_counterexample_that_replays(behaviour):
    params, engine = registry.spec_for("consumer-group").hunt_params[behaviour]
    assert engine == "explorer"
    proto = registry.build("consumer-group", params, [behaviour])
    res = explore(proto, graph=False, stop_on_first=True)
    invariant, length = EXPECTED[behaviour]
    f = res.violations[0]
    assert (f.violation.invariant, len(f.actions)) == (invariant, length), (f.violation, f.actions)
    _, violation = replay(proto, f.actions, init_index=f.init_index)
    assert violation is not None and violation.invariant == invariant
    # the correct model at the same bound is clean
    clean = explore(registry.build("consumer-group", params, ()), graph=False)
    assert clean.complete and not clean.violations


def test_invariants_declare_the_behaviours_that_break_them():
    broken = {inv.name: set(inv.broken_by) for inv in build().invariants()}
    for behaviour, (invariant, _) in EXPECTED.items():
        assert behaviour in broken[invariant]


# --- deliberate mutants for the invariants no historical behaviour breaks ---------------------------
def with_update(name, update):
    return ActionTable([Action(a.name, a.guard, update if a.name == name else a.update, a.domain, a.fault)
                        for a in CG.ACTIONS.actions])


def violated(monkeypatch, params=None, **patches):
    for attr, value in patches.items():
        monkeypatch.setattr(CG, attr, value)
    return found(explore(build(params), graph=False))


def test_target_legal_broken_by_an_assignor_ignoring_subscriptions(monkeypatch):
    def everything(g, topics, members):
        out = {m.member_id: 0 for m in members}
        k = 0
        for t, n in enumerate(topics):
            for p in range(n):
                out[members[k % len(members)].member_id] |= 1 << (t * g.pmax + p)
                k += 1
        return tuple(CG.Target(mid, mask) for mid, mask in sorted(out.items()))
    assert "target-legal" in violated(monkeypatch, assign=everything)


def test_clients_single_owner_broken_by_a_client_that_keeps_revoked_partitions_and_hides_them(monkeypatch):
    def hoard(g, s, m):
        c = s.clients[m]
        return s._replace(clients=CG._set(s.clients, m, c._replace(state=CG.ACKNOWLEDGING,
                                                                   owned=c.owned | c.assignment)))
    orig = CG.reported_owned

    def lie(c):                     # ... and reports only what it was told to keep
        o = orig(c)
        return None if o is None else o & c.assignment
    assert "clients-single-owner" in violated(monkeypatch, ACTIONS=with_update("reconcile", hoard), reported_owned=lie)


def test_stable_group_holds_target_broken_by_unreleased_members_called_stable(monkeypatch):
    orig = CG.next_assignment

    def eager(g, m, epoch, target_epoch, target, pe, owned, subscribed_parts):
        out = orig(g, m, epoch, target_epoch, target, pe, owned, subscribed_parts)
        return out._replace(state=CG.M_STABLE) if out.state == CG.UNRELEASED else out
    assert "stable-group-holds-target" in violated(monkeypatch, next_assignment=eager)


def test_epochs_bounded_broken_by_an_epoch_past_the_group_epoch(monkeypatch):
    def ahead(m, epoch):
        return m._replace(previous_member_epoch=m.member_epoch, member_epoch=epoch + 1)
    assert "epochs-bounded" in violated(monkeypatch, update_epoch=ahead)


def test_epochs_monotonic_broken_by_an_epoch_going_back(monkeypatch):
    def back(m, epoch):
        new = epoch if epoch != m.member_epoch else max(0, epoch - 1)
        return m._replace(previous_member_epoch=m.member_epoch, member_epoch=new)
    assert "epochs-monotonic" in violated(monkeypatch, update_epoch=back)


def test_commits_at_current_epoch_broken_by_accepting_stale_epochs(monkeypatch):
    def any_epoch(group, mid, sent):
        return CG.NONE if CG.find(group.members, mid) is not None else CG.UNKNOWN
    assert "commits-at-current-epoch" in violated(monkeypatch, {"perturbations": 0},
                                                  commit_verdict=any_epoch)


def test_every_invariant_is_covered_by_a_behaviour_or_a_mutant_test():
    mutants = {"target-legal", "clients-single-owner", "stable-group-holds-target", "epochs-bounded",
               "epochs-monotonic", "commits-at-current-epoch"}
    assert mutants | {inv for inv, _ in EXPECTED.values()} == set(I.NAMES)


def test_describe_and_arrows_render_a_trace():
    proto = build()
    s = proto.init_states()[0]
    for a in (("heartbeat", 0), ("heartbeat", 1), ("receive", 0)):
        assert a in proto.actions(s)
        s = proto.step(s, a)
        assert proto.arrow(a)[0] in proto.participants()
    d = proto.describe(s)
    assert d["group"]["group_epoch"] == 2 and d["clients"]["slot0"]["state"] == "RECONCILING"
    assert d["clients"]["slot0"]["assignment"] == ["t0p0", "t1p0"]
