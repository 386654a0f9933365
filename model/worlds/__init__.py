"""System worlds: the reference implementation (impl/) behind the `Protocol` interface.

A world wraps real components (the group coordinator, consumer members, brokers) and the network
between them as a transition system, so the same engines that explore the abstract models
(explorer, walker, Hypothesis, refinement) explore the implementation at small sizes.
"""
