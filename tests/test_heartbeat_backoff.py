"""A member waits retry.backoff.ms after a failed heartbeat before its next one (group-world heartbeat-backoff).

Kafka's AbstractCoordinator.HeartbeatThread: on a failed heartbeat (Heartbeat.failHeartbeat: an error answer, a request
timeout, the session timer expiring without an answer) the next heartbeat waits retryBackoffMs; the member stays in its
generation. The surviving mutant of Member._fail_heartbeat (`+` -> `&`) heartbeats again at once; the quick check
explore:group-world/heartbeat-backoff finds it (its own session timer fails the heartbeats in flight, the coordinator's
session expiry 1 ms later is the next time jump) and passes on the correct code."""
import inspect

from kverify.impl.member import member as classic_member
from kverify.suite import providers as P

import planted_mutants

CHECK = "explore:group-world/heartbeat-backoff"
SURVIVORS = {
    # Member._fail_heartbeat, ReplaceBinaryOperator_Add_BitAnd: the deadline becomes now & backoff (<= now)
    "heartbeat-backoff-bitand": (classic_member, "Member", "_fail_heartbeat",
                                 "self.hb_deadline = self.now + self.config.retry_backoff_ms",
                                 "self.hb_deadline = self.now & self.config.retry_backoff_ms",
                                 "after a failed heartbeat the member heartbeats again at once, not after retry.backoff.ms"),
}


def test_the_planted_survivor_changes_its_method():
    module, cls, method, old, new, _what = SURVIVORS["heartbeat-backoff-bitand"]
    assert inspect.getsource(getattr(getattr(module, cls), method)).count(old) == 1 and old != new


def test_the_check_is_in_quick_and_ci():
    for profile in ("quick", "ci"):
        assert CHECK in [c.name for c in P.variants(profile)]


def test_heartbeat_right_after_a_failed_one_is_caught(tmp_path, monkeypatch):
    bad = planted_mutants.variant_catches(monkeypatch, tmp_path, CHECK, "heartbeat-backoff-bitand", SURVIVORS,
                                          "heartbeat-backoff")
    assert "1 ms after its previous heartbeat failed" in bad.summary, bad.summary
