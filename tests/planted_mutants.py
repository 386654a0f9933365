"""Deliberately broken replication and controller code, planted with pytest's monkeypatch (issue 17).

Why it exists: tests/test_liveness.py and tests/test_planted_bugs.py plant the small bugs that passed
`make verify` before the liveness checks and the reassignment bounds existed. Each mutant is the
reference method recompiled from its own source with exactly one change (a flipped comparison, `and`
for `or`, another index), so a mutant cannot drift from the code it mutates: if the original text is no
longer there, planting fails loudly instead of testing something else."""
import inspect
import textwrap

from kverify.impl.coordinator import membership
from kverify.impl.replication import controller_ops, log

# name -> (module, class, method, original text, planted text, what the bug does)
MUTANTS = {
    "never-fails-over": (controller_ops, "ControllerOps", "_offline_election",
                         "if cur.leader in live:", "if cur.leader not in live:",
                         "the controller never fails a partition over to a live in-sync replica"),
    "epoch-cache-first": (log, "ReplicaLog", "latest_epoch", "self.epochs[-1][0]", "self.epochs[0][0]",
                          "the leader-epoch cache answers its first epoch instead of its latest"),
    "isr-accepts-dead-broker": (controller_ops, "ControllerOps", "_on_alter_partition",
                                "if r not in ctrl.live or r in ctrl.shutting_down:", "if r in ctrl.shutting_down:",
                                "the controller accepts a dead (unregistered) broker into an ISR"),
    "reassign-early-drop": (controller_ops, "ControllerOps", "reassignment_step",
                            "if any(r not in st.isr for r in target):", "if all(r not in st.isr for r in target):",
                            "reassignment drops the old replicas once ONE target replica is in the ISR"),
    "reassign-keeps-leader": (controller_ops, "ControllerOps", "reassignment_step",
                              "if st.leader not in target or st.leader not in live:",
                              "if st.leader not in target and st.leader not in live:",
                              "reassignment keeps a live leader that is not a target replica"),
    "reassign-expands-forever": (controller_ops, "ControllerOps", "reassignment_step",
                                 "if ar != union and ar != tuple(target):", "if ar != union or ar != tuple(target):",
                                 "reassignment rewrites the expanded replica set (a new leader epoch) at every step"),
    "coordinator-never-expires-sessions": (membership, "MembershipHandling", "_on_heartbeat_timer",
                                           "if group.state == DEAD:", "if group.state != DEAD:",
                                           "the group coordinator's session timer never removes a member"),
}


def _recompiled(module, owner, attr: str, old: str, new: str, name: str):
    """`owner.attr` recompiled from its own source with the one change, in `module`'s namespace."""
    src = textwrap.dedent(inspect.getsource(getattr(owner, attr)))
    assert src.count(old) == 1, f"mutant {name}: {old!r} is no longer in {attr}"
    namespace = dict(vars(module))
    exec(compile(src.replace(old, new), f"<mutant {name}>", "exec"), namespace)
    return namespace[attr]


def plant(monkeypatch, name: str, table: dict = MUTANTS) -> None:
    """Plant the method mutant `table[name]` = (module, class, method, original text, mutated text, what)."""
    module, cls_name, method, old, new, _what = table[name]
    cls = getattr(module, cls_name)
    monkeypatch.setattr(cls, method, _recompiled(module, cls, method, old, new, name))


def plant_function(monkeypatch, name: str, table: dict) -> None:
    """Plant a module-level function or class mutant `table[name]` = (module, name, original, mutated, what)."""
    module, func, old, new, _what = table[name]
    monkeypatch.setattr(module, func, _recompiled(module, module, func, old, new, name))


def quick_ctx(tmp_path):
    """A `kverify verify` context at the quick profile's seed, writing under tmp_path."""
    from kverify.suite import Context, profiles

    return Context("quick", str(tmp_path), seed=profiles.DEFAULT_SEED, progress=False)


def variant_catches(monkeypatch, tmp_path, check: str, name: str, table: dict, invariant: str):
    """The verify check `check` (an EXPLORE_VARIANTS or LIVENESS_CHECKS entry) PASSes on the correct code at the quick
    profile and FAILs on `invariant` alone with the method mutant `table[name]` planted; returns the FAIL result."""
    from kverify.suite import providers as P
    from kverify.suite.verdicts import FAIL, PASS

    run = P._liveness_check(check) if check in P.LIVENESS_CHECKS else P._variant_check(check)
    ok = run(quick_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, name, table)
    bad = run(quick_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == [invariant], bad.summary
    return bad
