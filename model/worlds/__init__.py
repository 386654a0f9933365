"""System worlds: the reference implementation (impl/) behind the `Protocol` interface.

A world wraps real components (the group coordinator, consumer members, brokers) and the network
between them as a transition system, so the same engines that explore the abstract models
(explorer, walker, Hypothesis, refinement) explore the implementation at small sizes.
"""


class KeyedState:
    """Base of every world state: the state holds copies of mutable components, and is equal and
    hashed by a key computed once from their snapshots (`_compute_key`), so the engines can treat
    it as the immutable value the Protocol interface asks for. Subclasses define `_key` and `_hash`
    slots/attributes initialised to None."""

    __slots__ = ()

    def _compute_key(self):
        raise TypeError(f"{type(self).__name__} must define _compute_key()")

    def key(self):
        k = self._key
        if k is None:
            k = self._key = self._compute_key()
        return k

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash(self.key())
        return h

    def __eq__(self, other):
        return type(other) is type(self) and (self is other or (hash(self) == hash(other)
                                                                and self.key() == other.key()))
