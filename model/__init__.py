"""The models and the engines that explore them.

Why it exists: the reference implementation (kverify.impl) is too detailed to search exhaustively, so
this package holds abstract models of each protocol (group, replication, offsets) and worlds that put
the implementation behind the same `Protocol` interface (model/protocol.py); the engines (breadth-first
search, seeded walks, refinement, Z3 obligations in model/proofs) drive any of them through it.
"""
