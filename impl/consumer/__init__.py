"""KIP-848 consumer group protocol (coordinator side, client membership, server-side assignors).

Coordinator: `ConsumerGroupCoordinator` (coordinator.py); client: `ConsumerMember` (client.py);
messages: messages.py; historical behaviours: behaviours.py (FIFO test driver: tests/consumer_harness.py);
server-side assignors: the `assignors` subpackage. Names are imported lazily so that the
subpackages can be imported on their own without cycles.
"""
from importlib import import_module

_EXPORTS = {
    "ConsumerGroupCoordinator": "coordinator", "ConsumerCoordinatorConfig": "config",
    "ConsumerMember": "client", "ClientConfig": "client",
    "TopicsImage": "topics", "ConsumerGroupView": "views", "ConsumerGroupMember": "group_member",
}


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kverify.impl.consumer' has no attribute {name!r}")
    return getattr(import_module(f"kverify.impl.consumer.{module}"), name)
