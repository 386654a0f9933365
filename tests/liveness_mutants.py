"""Deliberately broken controllers for the liveness tests (applied with pytest's monkeypatch).

Why it exists: tests/test_liveness.py and tests/test_planted_bugs.py plant the same controller bug;
written once here. Each mutant is the reference method with one change, marked `planted`."""
from kverify.impl.replication import elections
from kverify.impl.replication.controller_ops import ControllerOps


def _offline_election_guard_inverted(self, ctrl, tp, failed):
    unclean = self.settings.unclean_election

    def decide(cur):
        live = ctrl.live_set()
        if cur.leader not in live:          # planted: `in` inverted, so a failed leader is never replaced
            return None
        pick = elections.offline(ctrl.assignments[tp], cur.isr, live, unclean)
        if pick is not None:
            leader, isr = pick
            return leader, cur.leader_epoch + 1, isr
        if cur.leader < 0:
            return None
        isr = tuple(r for r in cur.isr if r != cur.leader) or cur.isr
        return -1, cur.leader_epoch + 1, isr

    st = self._write(ctrl, tp, decide)
    if st is not None:
        self._announce(ctrl, tp, st, self._live_replicas(ctrl, tp))
    return st


def never_fails_over(monkeypatch) -> None:
    """A controller that never fails a partition over to a live in-sync replica."""
    monkeypatch.setattr(ControllerOps, "_offline_election", _offline_election_guard_inverted)
