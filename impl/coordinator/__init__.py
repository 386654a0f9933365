"""Reference implementation of Kafka's classic group coordinator (issue #2).

Public API (see docs/ARCHITECTURE.md): `GroupCoordinator`, `CoordinatorConfig`,
`IllegalStateError`, the request/response values in `messages`, `partition_for`.
"""
from kverify.impl.coordinator.config import CoordinatorConfig
from kverify.impl.coordinator.coordinator import GroupCoordinator
from kverify.impl.coordinator.internal import MemberSpec
from kverify.impl.coordinator.offsets_log import DeferredOffsetsLog, MemoryOffsetsLog, OffsetsLog
from kverify.impl.coordinator.partition import partition_for
from kverify.impl.coordinator.states import IllegalStateError
from kverify.impl.coordinator.views import GroupView, MemberView

__all__ = ["GroupCoordinator", "CoordinatorConfig", "IllegalStateError", "MemberSpec", "OffsetsLog",
           "MemoryOffsetsLog", "DeferredOffsetsLog", "partition_for", "GroupView", "MemberView"]
