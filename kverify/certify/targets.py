"""What `kverify assignor check` can certify, behind one small interface.

A target has a `name`, `cooperative` (it follows the cooperative protocol), `member_order_free`
(its answer must not depend on the order members are listed in), `claims` {property: reason
it is not claimed, or None when claimed}, `solve(problem) -> answer dict` (raises
`TargetFailure` when it crashes, hangs or answers garbage) and `close()`.
"""
from __future__ import annotations

import importlib

from kverify.certify.properties import ORDER


class TargetFailure(Exception):
    """The target gave no usable answer: `kind` is crash | hang | malformed | error."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class TargetError(ValueError):
    """A target that cannot be set up (unknown name, missing library): one-line message."""


EAGER = "eager protocol: members revoke everything before each rebalance, nothing moves while owned"
NOT_STICKY = "ignores previous ownership by design"

ROBUST_STICKY = ("Kafka 3.9's sticky assignors throw IllegalStateException or assign a partition twice when owned "
                 "partition numbers exceed a re-created topic's count, and can give partitions to a member "
                 "subscribed to nothing (both reproduced faithfully)")

BUILTIN_CLAIMS = {
    "range": {"balanced": "range balances topic by topic among each topic's subscribers, not across topics",
              "sticky": NOT_STICKY, "cooperative-safe": EAGER},
    "roundrobin": {"balanced": "round-robin deals over all members; with different subscriptions counts can "
                               "differ by more than one", "sticky": NOT_STICKY, "cooperative-safe": EAGER},
    "legacy-range": {"balanced": "blocks of ceil(P/C) can leave the last consumers short or empty",
                     "subscribed-only": "pre-0.9 blocks assume identical subscriptions",
                     "sticky": NOT_STICKY, "cooperative-safe": EAGER},
    "sticky": {"robust": ROBUST_STICKY, "cooperative-safe": EAGER},
    "cooperative-sticky": {"robust": ROBUST_STICKY},
}
ORDER_FREE = {"range", "roundrobin", "legacy-range"}
STICKY_SCOPE = ("claimed where every member subscribes to the same topics (Kafka's constrained algorithm); "
                "with different subscriptions Kafka's general algorithm is a greedy heuristic that can give up "
                "a partition the optimum keeps, so gaps there are reported, not failed")
ORDER_NOTE = ("member order not required: Kafka's sticky assignors walk a HashMap whose collision order "
              "follows the coordinator's member order")


def _all_claimed(cooperative: bool) -> dict:
    claims = {p: None for p in ORDER}
    if not cooperative:
        claims["cooperative-safe"] = EAGER
    return claims


class BuiltinTarget:
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
        self.claims = _all_claimed(self.cooperative)
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
                cooperative: bool = False, behaviours=frozenset(), claims=None):
    """Build the target named on the command line (raises TargetError)."""
    from kverify.impl.assignors import names

    if command is not None:
        from kverify.certify.external import CommandTarget

        target = CommandTarget(command, timeout=timeout, cooperative=cooperative)
    elif spec in names():
        target = BuiltinTarget(spec, behaviours)
    elif spec and spec.split(":", 1)[0] in ("kafka-python", "aiokafka"):
        from kverify.certify.adapters import adapter_target

        target = adapter_target(spec)
    elif spec and ":" in spec:
        target = PythonTarget(spec)
    else:
        raise TargetError(f"unknown target {spec!r} (built-in: {', '.join(names())}; or module:attribute, "
                          "kafka-python:NAME, aiokafka:NAME, --command CMD)")
    if behaviours and not isinstance(target, BuiltinTarget):
        raise TargetError("--behaviour applies to built-in assignors only")
    if claims is not None:
        unknown = set(claims) - set(ORDER)
        if unknown:
            raise TargetError(f"unknown property {sorted(unknown)[0]!r} in --claims (known: {', '.join(ORDER)})")
        target.claims = {p: (None if p in claims else "left out by --claims") for p in ORDER}
    return target
