"""KIP-848 message schemas kafka-python 3.0.12 does not ship (ConsumerGroupHeartbeat v0-1, ConsumerGroupDescribe
v0), transcribed field by field from Kafka's clients/src/main/resources/common/message/*.json (apache/kafka
1eb7644349cb, the reference of impl/consumer) so kafka-python's generic codec encodes and decodes them."""

from kafka.protocol.api_message import ApiMessage


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=__name__):
    pass


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=__name__):
    pass


class ConsumerGroupDescribeRequest(ApiMessage, load_json=__name__):
    pass


class ConsumerGroupDescribeResponse(ApiMessage, load_json=__name__):
    pass
