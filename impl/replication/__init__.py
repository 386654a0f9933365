"""Replication, ISR, high watermark and the controller (issue #4): a deterministic, copyable model
of a Kafka cluster whose every message and decision is an explicit step.

Entry point: `Cluster` (cluster.py). Building blocks: `ReplicaLog` (log.py), `Replica` (replica.py),
the store and controller view (controller.py), the controller's decisions (controller_ops.py),
election rules (elections.py), placement (placement.py), wire messages (messages.py), the steps as
data for model checkers (steps.py), and `__consumer_offsets` hosting the group coordinator
(offsets_topic.py, imported on demand because it depends on impl/coordinator).
"""
from kverify.impl.replication.cluster import (BrokerView, Cluster, ClusterView, ControllerError, PartitionView,
                                              ProduceResult, ReplicaView)
from kverify.impl.replication.config import ReplicationConfig
from kverify.impl.replication.placement import InvalidReplicationFactor, assign_replicas

__all__ = ["Cluster", "ClusterView", "ReplicaView", "PartitionView", "BrokerView", "ProduceResult",
           "ControllerError", "ReplicationConfig", "assign_replicas", "InvalidReplicationFactor"]
