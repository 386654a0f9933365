"""Historical behaviours of the consumer member (off by default), one line each."""
from kverify.behaviours import declare

M = "member"
SYNC_REBALANCE_RESETS_GENERATION = declare(
    "kafka-13891-sync-rebalance-reset-generation", M, "KAFKA-13891",
    "SyncGroup REBALANCE_IN_PROGRESS resets the generation (3.3.0-3.3.1): the next onJoinPrepare "
    "declares every owned partition lost (KAFKA-14016)")
JOIN_PREPARE_ONCE = declare(
    "kafka-12983-join-prepare-once", M, "KAFKA-12983",
    "onJoinPrepare runs once per rebalance: a member id reset mid-rebalance rejoins still owning and "
    "consuming its partitions without the lost callback")
COMMIT_UNOWNED = declare(
    "commit-unowned-partitions", M, "client-fault",
    "a faulty application keeps the positions of partitions it gave up and commits them with its "
    "later commits (Kafka's coordinator never checks which partitions a commit names)")
NO_PENDING_REVOCATION = declare(
    "kafka-14196-no-pending-revocation", M, "KAFKA-14196",
    "EAGER + auto-commit: partitions are not marked pending revocation while onJoinPrepare's async "
    "commit is in flight, so records consumed meanwhile are never committed (duplicates after the rebalance)")
