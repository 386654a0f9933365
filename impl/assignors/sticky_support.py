"""Java collection semantics the sticky builders rely on, in one place.

Kafka's sticky code leans on `Map.get(...).size()` throwing on a missing key, on
`List.remove(Object)` removing the first occurrence, and on a list iterator's `remove()`;
mirroring them exactly keeps the reference's answers (and crashes) equal to Kafka's.
"""
from __future__ import annotations

from kverify.impl.assignors.errors import AssignorCrash

DEFAULT_GENERATION = -1


def need(mapping, key, what):
    """`map.get(key).something` in Java: a missing entry is a NullPointerException."""
    try:
        return mapping[key]
    except KeyError:
        raise AssignorCrash(f"NullPointerException: no {what} for {key!r}") from None


def remove_first(lst, item) -> None:
    """Java `List.remove(Object)`: removes the first occurrence, if any."""
    try:
        lst.remove(item)
    except ValueError:
        pass


class JavaIterator:
    """A Java list iterator with `remove()` over a Python list."""

    def __init__(self, lst):
        self.lst = lst
        self.i = 0
        self.can_remove = False

    def has_next(self) -> bool:
        return self.i < len(self.lst)

    def next(self):
        x = self.lst[self.i]
        self.i += 1
        self.can_remove = True
        return x

    def remove(self) -> None:
        if not self.can_remove:
            raise AssignorCrash("IllegalStateException: iterator remove() without next()")
        self.i -= 1
        del self.lst[self.i]
        self.can_remove = False
