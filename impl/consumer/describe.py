"""ConsumerGroupDescribe for KIP-848 groups (GroupMetadataManager.consumerGroupDescribe,
ConsumerGroup.asDescribedGroup, ConsumerGroupMember.asConsumerGroupDescribeMember).

Why it exists: kept apart from the heartbeat path; a mixin of ConsumerGroupCoordinator that reads
`self._groups`, `self._topics`, `self.default_assignor` and writes replies with `self._out`.
"""
from __future__ import annotations

from kverify.impl.consumer.assignment import EMPTY, to_topic_partitions
from kverify.impl.consumer.messages import (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
                                            DescribedGroup, DescribedMember, DescribedTopicPartitions,
                                            Errors as E, Reply)


class DescribeHandling:
    def _handle_describe(self, req: ConsumerGroupDescribeRequest) -> None:
        out = []
        for gid in req.group_ids:
            g = self._groups.get(gid)
            if g is None:
                out.append(DescribedGroup(E.GROUP_ID_NOT_FOUND, f"Group {gid} not found.", gid))
                continue
            members = tuple(DescribedMember(
                m.member_id, m.instance_id, m.rack_id, m.member_epoch, m.client_id, m.client_host,
                m.subscribed_topic_names, m.subscribed_topic_regex or None, self._described(m.assigned),
                self._described(g.target.get(m.member_id, EMPTY))) for m in g.members.values())
            out.append(DescribedGroup(E.NONE, None, gid, g.state, g.group_epoch, g.assignment_epoch,
                                      g.preferred_server_assignor() or self.default_assignor, members))
        self._out.append(Reply(req.correlation_id, ConsumerGroupDescribeResponse(tuple(out))))

    def _described(self, assignment) -> tuple:
        return tuple(DescribedTopicPartitions(tp.topic_id, self._topics.name_of(tp.topic_id) or "", tp.partitions)
                     for tp in to_topic_partitions(assignment))

