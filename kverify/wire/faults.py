"""Scripted and seeded faults of `kverify broker --faults SPEC`.

    SPEC  := RULE (";" RULE)*          RULE := KIND [":" KEY=VALUE ("," KEY=VALUE)*]
    delay     ms=N [api=NAME] [p=P] [from=T] [until=T] [count=K]   hold the response N wall ms
    drop      [api=NAME] [p=P] [from=T] [until=T] [count=K]        never send the response
    close     [api=NAME] [p=P] [from=T] [until=T] [count=K]        close the connection instead of answering
    failover  at=T [ms=N] [load=M]   at broker clock T: the coordinator resigns every offsets partition
                                     (groups unloaded, NOT_COORDINATOR for N ms, default 1000), then
                                     loads them (COORDINATOR_LOAD_IN_PROGRESS for M ms, default 500) and
                                     reloads groups and offsets from its committed offsets log
    pause     at=T ms=N              at broker clock T the clock stands still for N wall ms

`api` is a Kafka API name (JoinGroup, Heartbeat, ...) or `*` (default); `p` the probability (drawn
from the broker's seeded generator, default 1); `from`/`until` a window of broker clock ms;
`count` the most times the rule fires. Rules are tried in order; the first that fires wins.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Optional

from kverify.cli import UsageError

RESPONSE_KINDS = ("delay", "drop", "close")
TIMED_KINDS = ("failover", "pause")
_INT_KEYS = {"ms", "from", "until", "count", "at", "load"}


@dataclass
class Rule:
    kind: str
    api: str = "*"
    p: float = 1.0
    start: int = 0
    until: Optional[int] = None
    count: Optional[int] = None
    ms: Optional[int] = None
    at: Optional[int] = None
    load: int = 500
    fired: int = field(default=0)

    def text(self) -> str:
        if self.kind == "failover":
            return f"failover at={self.at} ms={self.ms} load={self.load}"
        if self.kind == "pause":
            return f"pause at={self.at} ms={self.ms}"
        return self.kind + (f" {self.ms}ms" if self.kind == "delay" else "") + f" api={self.api}"


def parse(spec: str, api_names=()) -> list:
    """Rules of a SPEC; UsageError (one line) on anything malformed."""
    rules = []
    for raw in (spec or "").split(";"):
        raw = raw.strip()
        if not raw:
            continue
        kind, _, rest = raw.partition(":")
        kind = kind.strip()
        if kind not in RESPONSE_KINDS + TIMED_KINDS:
            raise UsageError(f"--faults: unknown fault kind {kind!r} (delay, drop, close, failover, pause)")
        rule = Rule(kind)
        for item in filter(None, (x.strip() for x in rest.split(","))):
            key, eq, value = item.partition("=")
            if not eq:
                raise UsageError(f"--faults: {item!r} in {raw!r} is not KEY=VALUE")
            try:
                if key in _INT_KEYS:
                    v = int(value)
                    if v < 0:
                        raise ValueError
                    setattr(rule, {"from": "start"}.get(key, key), v)
                elif key == "p":
                    rule.p = float(value)
                    if not 0.0 <= rule.p <= 1.0:
                        raise ValueError
                elif key == "api":
                    if value != "*" and api_names and value not in api_names:
                        raise UsageError(f"--faults: unknown api {value!r} in {raw!r}")
                    rule.api = value
                else:
                    raise UsageError(f"--faults: unknown key {key!r} in {raw!r}")
            except ValueError:
                raise UsageError(f"--faults: bad value {value!r} for {key} in {raw!r}") from None
        if kind == "delay" and rule.ms is None:
            raise UsageError(f"--faults: {raw!r} needs ms=N")
        if kind in TIMED_KINDS:
            if rule.at is None:
                raise UsageError(f"--faults: {raw!r} needs at=T (broker clock ms)")
            if kind == "pause" and rule.ms is None:
                raise UsageError(f"--faults: {raw!r} needs ms=N")
            if kind == "failover" and rule.ms is None:
                rule.ms = 1000
        rules.append(rule)
    return rules


class Faults:
    """Decides, response by response, whether a response fault fires; lists the timed faults due."""

    def __init__(self, spec: str = "", seed: int = 0, api_names=()):
        self.rng = random.Random(seed)
        self.api_names = tuple(api_names)
        self.set(spec)

    def set(self, spec: str) -> None:
        rules = parse(spec, self.api_names)
        self.response_rules = [r for r in rules if r.kind in RESPONSE_KINDS]
        self.timed = sorted((r for r in rules if r.kind in TIMED_KINDS), key=lambda r: r.at)

    def on_response(self, api: str, clock_ms: int):
        """The rule that fires for this response, or None."""
        for r in self.response_rules:
            if r.api != "*" and r.api != api:
                continue
            if clock_ms < r.start or (r.until is not None and clock_ms >= r.until):
                continue
            if r.count is not None and r.fired >= r.count:
                continue
            if r.p < 1.0 and self.rng.random() >= r.p:
                continue
            r.fired += 1
            return r
        return None

    def due(self, clock_ms: int) -> list:
        """Timed rules whose time has come (each returned once)."""
        out = []
        while self.timed and self.timed[0].at <= clock_ms:
            out.append(self.timed.pop(0))
        return out

    def next_at(self):
        return self.timed[0].at if self.timed else None
