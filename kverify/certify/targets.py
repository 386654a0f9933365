"""What `kverify assignor check` can certify, behind one small interface.

A target has a `name`, `cooperative` (it follows the cooperative protocol), `member_order_free`
(its answer must not depend on the order members are listed in), `claims` {property: reason
it is not claimed, or None when claimed}, `solve(problem) -> answer dict` (raises
`TargetFailure` when it crashes, hangs or answers garbage) and `close()`.
"""
from __future__ import annotations

import importlib

from kverify.certify.claims import (BUILTIN_CLAIMS, EAGER, ORDER_FREE, ORDER_NOTE, PRESETS, ROBUST_STICKY,  # noqa: F401
                                    STICKY_SCOPE, all_claimed)
from kverify.certify.failures import TargetError, TargetFailure  # noqa: F401  (re-exported)
from kverify.certify.properties import ORDER


class BuiltinTarget:
    protocol = "classic"

    def __init__(self, name: str, behaviours=frozenset()):
        from kverify.impl.assignors import get

        self.assignor = get(name, behaviours)
        self.behaviours = frozenset(behaviours)
        self.name = name
        self.cooperative = self.assignor.cooperative
        self.member_order_free = name in ORDER_FREE
        self.claims = {p: BUILTIN_CLAIMS.get(name, {}).get(p) for p in ORDER}
        self.note = None if self.member_order_free else ORDER_NOTE
        self.scopes = {"sticky": STICKY_SCOPE} if name in ("sticky", "cooperative-sticky") else {}

    def solve(self, problem: dict) -> dict:
        from kverify.impl.assignors import assign

        return assign(problem, self.name, self.behaviours)

    def close(self) -> None:
        pass


class PythonTarget:
    """`module:attribute`: an object (or class) with `assign(problem: dict) -> dict`."""

    protocol = "classic"

    def __init__(self, spec: str):
        mod_name, _, attr = spec.partition(":")
        if not mod_name or not attr:
            raise TargetError(f"target {spec!r} is neither a built-in assignor nor module:attribute")
        try:
            mod = importlib.import_module(mod_name)
        except ImportError as exc:
            raise TargetError(f"cannot import {mod_name!r}: {exc}") from None
        obj = mod
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise TargetError(f"{mod_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        if isinstance(obj, type):
            obj = obj()
        if not callable(getattr(obj, "assign", None)):
            raise TargetError(f"{spec} has no assign(problem) method (see `kverify assignor check --help`)")
        self.obj = obj
        self.name = spec
        self.cooperative = bool(getattr(obj, "cooperative", False))
        self.member_order_free = bool(getattr(obj, "member_order_free", True))
        claimed = getattr(obj, "claims", None)
        self.claims = all_claimed(self.cooperative)
        if claimed is not None:
            claimed = set(claimed)
            self.claims = {p: (None if p in claimed else "not claimed by the target") for p in ORDER}
        self.note = None
        self.scopes = {}

    def solve(self, problem: dict) -> dict:
        try:
            answer = self.obj.assign(problem)
        except Exception as exc:  # the target's own failure is a finding, not ours
            raise TargetFailure("crash", f"{type(exc).__name__}: {exc}"[:300]) from None
        if not isinstance(answer, dict):
            raise TargetFailure("malformed", f"assign() returned {type(answer).__name__}, not a dict")
        return answer

    def close(self) -> None:
        pass


def make_target(spec: str | None, command: str | None = None, timeout: float = 5.0,
                cooperative: bool = False, behaviours=frozenset(), claims=None, protocol: str = "classic"):
    """Build the target named on the command line (raises TargetError). `protocol="consumer"`: the
    --command program is a KIP-848 server-side assignor (consumer-protocol problems)."""
    from kverify.certify.consumer import PREFIX, ConsumerProtocol, ConsumerTarget
    from kverify.impl.assignors import names

    if protocol not in ("classic", "consumer"):
        raise TargetError(f"unknown protocol {protocol!r} (classic or consumer)")
    if protocol == "consumer" and command is None:
        raise TargetError("--protocol consumer goes with --command (built-in server-side assignors are "
                          f"{PREFIX}uniform and {PREFIX}range)")
    if command is not None:
        from kverify.certify.external import CommandTarget

        target = CommandTarget(command, timeout=timeout, cooperative=cooperative and protocol == "classic")
        if protocol == "consumer":
            target = ConsumerProtocol(target)
    elif spec and spec.startswith(PREFIX):
        target = ConsumerTarget(spec)
    elif spec in names():
        target = BuiltinTarget(spec, behaviours)
    elif spec and spec.split(":", 1)[0] in ("kafka-python", "aiokafka"):
        from kverify.certify.adapters import adapter_target

        target = adapter_target(spec)
    elif spec and ":" in spec:
        target = PythonTarget(spec)
    else:
        raise TargetError(f"unknown target {spec!r} (built-in: {', '.join(names())}, {PREFIX}uniform, "
                          f"{PREFIX}range; or module:attribute, "
                          "kafka-python:NAME, aiokafka:NAME, --command CMD)")
    if behaviours and not isinstance(target, BuiltinTarget):
        raise TargetError("--behaviour applies to built-in assignors only")
    if claims is not None:
        if len(claims) == 1 and claims[0] in PRESETS:
            claims = PRESETS[claims[0]]
        unknown = set(claims) - set(ORDER)
        if unknown:
            raise TargetError(f"unknown property {sorted(unknown)[0]!r} in --claims (known: {', '.join(ORDER)}; "
                              f"presets: {', '.join(PRESETS)})")
        target.claims = {p: (None if p in claims else "left out by --claims") for p in ORDER}
    return target
