"""Historical behaviours of the sticky assignors (off by default), one line each.

Both re-create the claim-resolution step (`allSubscriptionsEqual`) of older Kafka clients."""
from kverify.behaviours import declare

A = "assignor"
DOUBLE_CLAIM = declare(
    "kafka-12984-double-claim", A, "KAFKA-12984",
    "claims carry no generation and are not cross-checked (pre-3.0): a member that missed a rebalance and the "
    "partition's new owner both keep it")
STALE_OWNER_IGNORED = declare(
    "kafka-14639-stale-owner-ignored", A, "KAFKA-14639",
    "only members of the highest generation keep their claims (3.0-3.4): a stale owner's partition goes to a new "
    "owner in the same round, without revocation")
