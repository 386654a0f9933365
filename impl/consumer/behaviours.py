"""Historical behaviours of KIP-848's consumer group coordinator and client (off by default).

Each name re-creates a real Kafka bug in `impl/consumer` (tests: tests/test_consumer_behaviours.py);
the reference is the JIRA whose fix removed it. Components receive the switched-on names as a
frozenset and turn them into bool attributes at construction (see ConsumerGroupCoordinator).
"""
from kverify.behaviours import declare

C = "consumer-coordinator"
LOST_PARTITION_EPOCH = declare(
    "kafka-16147-lost-partition-epoch", C, "KAFKA-16147",
    "partition epochs are updated per changed set (assigned, then pending revocation): a partition "
    "pending revocation that comes back to the same member loses its epoch, looks free, and is "
    "given to a second member while the first still owns it")
UNREVOKED_EPOCH_BUMP = declare(
    "kafka-19974-unrevoked-epoch-bump", C, "KAFKA-19974",
    "a member leaving UNREVOKED_PARTITIONS is reconciled at member epoch + 1 instead of its epoch: "
    "UNREVOKED->UNREVOKED bumps the epoch, so after a regex change a partition is owned by two "
    "members (one after the other) at the same epoch")
OWN_REVOCATION_UNRELEASED = declare(
    "kafka-19449-own-revocation-unreleased", C, "KAFKA-19449",
    "a partition the member itself still has pending revocation is treated as unreleased (owned by "
    "another member): the member detours through UNRELEASED_PARTITIONS one heartbeat longer")
NO_EPOCH_ZERO_REJOIN = declare(
    "kafka-19233-no-epoch-zero-rejoin", C, "KAFKA-19233",
    "a known member re-joining with member epoch 0 after being fenced is answered "
    "FENCED_MEMBER_EPOCH until its session times out (epoch 0 validated like any stale epoch)")
EMPTY_GROUP_ASSIGNMENT_EPOCH = declare(
    "kafka-20442-empty-group-assignment-epoch", C, "KAFKA-20442",
    "fencing the last member bumps the group epoch but not the assignment epoch: an Empty group "
    "keeps groupEpoch > assignmentEpoch")

REGEX_REMOVAL_NO_BUMP = declare(
    "kafka-19899-regex-removal-no-bump", C, "KAFKA-19899",
    "a member dropping its regex subscription does not bump the group epoch: the target keeps giving "
    "it the regex's partitions, which it no longer takes, and a Stable group leaves them unconsumed")

ALL = frozenset({REGEX_REMOVAL_NO_BUMP, LOST_PARTITION_EPOCH, UNREVOKED_EPOCH_BUMP, OWN_REVOCATION_UNRELEASED,
                 NO_EPOCH_ZERO_REJOIN, EMPTY_GROUP_ASSIGNMENT_EPOCH})

CLIENT = "consumer-client"
NEGATIVE_EPOCH_JOINING = declare(
    "kafka-19335-negative-epoch-joining", CLIENT, "KAFKA-19335",
    "a late answer to the leave heartbeat (epoch -1) reaching a member that re-subscribed sets its "
    "epoch to -1 while JOINING: its join heartbeat is a leave request, answered UNKNOWN_MEMBER_ID (fenced)")
CLIENT_ALL = frozenset({NEGATIVE_EPOCH_JOINING})
