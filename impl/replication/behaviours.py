"""Historical behaviours of replication and the controller (off by default), one line each.

Names are the ones issue #4 lists; the reference digest (`replication.md` §8, fact 87) calls
them with underscores. Two are seeds with no Kafka release behind them ("model-only seed"):
Kafka's preferred election has required ISR membership since 0.8 (PreferredReplicaPartitionLeaderSelector),
and reassignment has always waited for the new replicas to join the ISR before removing old ones.
"""
from kverify.behaviours import declare

R = "replication"
K = "controller"
TRUNCATE_TO_HW = declare("truncate-to-hw", R, "KIP-101",
                         "become-follower truncates the log to the local high watermark instead of using leader epochs")
OFLE_OFFSET_ONLY = declare("ofle-offset-only", R, "KIP-279",
                           "OffsetsForLeaderEpoch answers only the start offset of the next higher epoch (or falls back to HW)")
SKIP_TRUNCATE_SAME_LEADER = declare("skip-truncate-same-leader", R, "KAFKA-7164",
                                    "a follower skips truncation when the leader id is unchanged across leader epochs")
NO_FETCH_EPOCH_FENCING = declare("no-fetch-epoch-fencing", R, "KIP-320",
                                 "fetch and truncation ignore the current leader epoch (no FENCED_LEADER_EPOCH)")
EXPAND_WITHOUT_EPOCH_START = declare("expand-without-epoch-start", R, "KAFKA-7128",
                                     "ISR expansion needs only LEO >= HW, not LEO >= the leader's epoch start offset")
NO_MAXIMAL_ISR = declare("no-maximal-isr", R, "KIP-497",
                         "HW and acks are computed over the committed ISR only while an ISR expansion is in flight")
NO_BROKER_EPOCH_CHECK = declare("no-broker-epoch-check", K, "KIP-903",
                                "AlterPartition accepts a replica whose broker epoch is stale (restarted with a shorter log)")
UNCLEAN_ELECTION = declare("unclean-election", K, "KIP-106",
                           "with no live ISR member, the first live assigned replica is elected (unclean.leader.election.enable=true)")
ISR_SHRINKS_TO_LEADER = declare("isr-shrinks-to-leader-min-isr-1", R, "KAFKA-1555",
                                "min.insync.replicas effectively 1: the ISR may shrink to the leader alone and acks=all still succeeds (Jepsen 2013)")
HW_IGNORES_MIN_ISR = declare("hw-ignores-min-isr", R, "KAFKA-15583",
                             "the leader advances the HW even while the ISR is smaller than min.insync.replicas")
STALE_CONTROLLER_ACCEPTED = declare("stale-controller-accepted", K, "KAFKA-1188, KAFKA-6082",
                                    "a zombie controller (older controller epoch) still writes partition state and brokers apply its LeaderAndIsr")
HW_BEFORE_TRUNCATE = declare("kafka-14704-hw-before-truncate", R, "KAFKA-14704",
                             "a follower that must truncate applies the leader's HW from the diverging fetch response "
                             "before truncating, exposing its uncommitted records below that HW until it truncates (fix: apache/kafka#13230)")
PREFERRED_OUTSIDE_ISR = declare("preferred-election-outside-isr", K, "model-only seed",
                                "preferred replica election picks AR[0] even when it is not in the ISR (Kafka always required ISR membership)")
REASSIGNMENT_DROPS_EARLY = declare("reassignment-drops-old-replicas-early", K, "model-only seed",
                                   "reassignment removes the old replicas without waiting for the new ones to join the ISR (Kafka waits, OAR/RAR steps)")
