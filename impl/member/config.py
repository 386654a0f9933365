"""Static configuration of one consumer member (what a Java consumer reads from its properties).

Kept apart from the member's state so copies of a member share it: a model checker copies members
millions of times, and none of these values change while a member runs (a new subscription is
part of the state, see `Member.subscribe`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

EAGER = "EAGER"
COOPERATIVE = "COOPERATIVE"

# Built-in assignors that support Kafka's COOPERATIVE rebalance protocol (CooperativeStickyAssignor
# is the only one; range, roundrobin and sticky are EAGER-only).
COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})


class ConfigError(ValueError):
    """An impossible member configuration (one-line message)."""


@dataclass(frozen=True)
class MemberConfig:
    group_id: str
    topics: tuple = ()                      # initial subscription (topic names)
    assignors: tuple = ("range",)           # partition.assignment.strategy, in preference order
    instance_id: Optional[str] = None       # group.instance.id: set = static member
    client_id: str = "consumer"
    session_timeout_ms: int = 45000         # session.timeout.ms (default since 3.0)
    rebalance_timeout_ms: int = 300000      # max.poll.interval.ms, sent as the rebalance timeout
    heartbeat_interval_ms: int = 3000       # heartbeat.interval.ms
    request_timeout_ms: int = 30000         # request.timeout.ms
    retry_backoff_ms: int = 100             # retry.backoff.ms
    cluster: tuple = ()                     # ((topic, partition count), ...) metadata the leader assigns from
    commit_on_revoke: bool = False          # the application's onPartitionsRevoked commits synchronously
    auto_commit_interval_ms: Optional[int] = None   # enable.auto.commit=true with this interval; None = off
    fetch_per_poll: int = 1                 # records consumed per poll() from each consuming partition
    max_offset: Optional[int] = None        # log end offset of every partition (None = unbounded)
    record_events: bool = True              # keep a readable journal (`Member.events`); off for checkers
    correlation_base: int = 0               # correlation ids are correlation_base + 1, + 2, ...

    def __post_init__(self):
        if not self.group_id:
            raise ConfigError("group_id must be a non-empty string")
        if not self.assignors:
            raise ConfigError("at least one assignor is required")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError("heartbeat_interval_ms must be lower than session_timeout_ms")
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "assignors", tuple(self.assignors))
        object.__setattr__(self, "cluster", tuple(sorted((str(t), int(n)) for t, n in dict(self.cluster).items())))

    @property
    def rebalance_protocol(self) -> str:
        """Kafka keeps the highest protocol every configured assignor supports."""
        return COOPERATIVE if all(a in COOPERATIVE_ASSIGNORS for a in self.assignors) else EAGER

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    @property
    def join_timeout_ms(self) -> int:
        """JoinGroup request timeout: max(request.timeout.ms, rebalance timeout + 5000)."""
        return max(self.request_timeout_ms, self.rebalance_timeout_ms + 5000)
