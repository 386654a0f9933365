"""KIP-848's server-side uniform assignor: picks the homogeneous or the heterogeneous builder.

Follows Kafka 4.0's `UniformAssignor.assign`: an empty group gets an empty assignment; otherwise the
group's subscription type (computed by the coordinator, `ModernGroup.subscriptionType`) selects
`UniformHomogeneousAssignmentBuilder` or `UniformHeterogeneousAssignmentBuilder`. Not rack-aware at 4.0.
"""
from __future__ import annotations

from kverify.impl.consumer.assignors.spec import HOMOGENEOUS
from kverify.impl.consumer.assignors.uniform_heterogeneous import assign_heterogeneous
from kverify.impl.consumer.assignors.uniform_homogeneous import assign_homogeneous


def assign_uniform(group, describer) -> dict:
    if not group.member_ids:
        return {}
    if group.subscription_type == HOMOGENEOUS:
        return assign_homogeneous(group, describer)
    return assign_heterogeneous(group, describer)
