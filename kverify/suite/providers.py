"""The providers of checks for `kverify verify`, in order of cost. Each takes a profile name and
returns a list of `Check`s; a provider whose engine is not part of this build is not listed here
(nothing is silently skipped at run time)."""
from __future__ import annotations

ALL = []
