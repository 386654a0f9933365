"""Historical behaviours of the group coordinator (off by default), one line each.

Each name re-creates a real Kafka bug in `impl/coordinator` (see the tests named
`tests/test_coordinator_behaviours.py`); the reference is the JIRA (or KIP) it re-creates.
"""
from kverify.behaviours import declare

C = "coordinator"
STALE_GENERATION_COMMIT = declare(
    "stale-generation-commit", C, "KAFKA-9365",
    "an offset commit carrying an older generation is accepted instead of ILLEGAL_GENERATION, as TxnOffsetCommit was before KIP-447: a fenced zombie's commit lands")
NO_GENERATION_BUMP = declare(
    "no-generation-bump", C, "KAFKA-2720",
    "a completed join phase keeps the old generation id, so two memberships share one generation")
MATH_ABS_COORDINATOR = declare(
    "math-abs-coordinator", C, "KAFKA-1469",
    "partitionFor uses Java Math.abs instead of Utils.abs: an id hashing to Integer.MIN_VALUE gets a negative partition")
LEADER_NOT_REELECTED = declare(
    "leader-not-reelected", C, "KAFKA-8220",
    "the leader is never re-elected: after it leaves, expires or fails to rejoin, leaderId still names it and no rejoined member runs the assignment")
NO_SYNC_BARRIER = declare(
    "kafka-12890-no-sync-barrier", C, "KAFKA-12890",
    "no pending-sync (DelayedSync) barrier: a member that heartbeats but never syncs keeps the group in CompletingRebalance")
STATIC_REPLACE_IN_COMPLETING = declare(
    "kafka-9801-static-replace-in-completing", C, "KAFKA-9801",
    "a static member replaced during CompletingRebalance does not force a rebalance and gets an empty assignment")
DUPLICATE_STATIC_MEMBER = declare(
    "kafka-8500-duplicate-static-member", C, "KAFKA-8500",
    "static member id replacement only in Stable: two processes with one group.instance.id both stay in the group")
EXPIRE_WHILE_REBALANCING = declare(
    "kafka-13636-expire-while-rebalancing", C, "KAFKA-13636",
    "offset expiry applies the unsubscribed-topic rule to rebalancing consumer groups and deletes live offsets")
