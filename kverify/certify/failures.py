"""The two ways a certification target can let us down, as exceptions every target module raises.

Why it exists: targets.py builds targets from the command line and the target kinds (external
programs, client-library adapters) raise these; keeping them in a leaf module means no target kind
imports targets.py back (no import cycle).
"""
from __future__ import annotations


class TargetFailure(Exception):
    """The target gave no usable answer: `kind` is crash | hang | malformed | error."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class TargetError(ValueError):
    """A target that cannot be set up (unknown name, missing library): one-line message."""
