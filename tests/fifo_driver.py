"""FIFO, loss-free delivery between named clients and one coordinator (test/example drivers).

Why it exists: the classic-protocol driver (tests/member_harness.py) and the KIP-848 driver
(tests/consumer_harness.py) move messages the same way: each client i issues correlation ids from
i * CID_STRIDE, requests queue in the order clients emit them, the coordinator handles them one at
a time, and each reply goes to the client whose correlation id it carries. That rule is written
once here; each driver keeps only what differs (how a reply is handed over, which clients tick).
A test helper: it lives in tests/, outside the reference implementation the gate judges.
"""
from __future__ import annotations

from collections import deque

CID_STRIDE = 1_000_000          # client i (1-based, insertion order) uses ids i*CID_STRIDE + 1, + 2, ...


class FifoDriver:
    """Mixin. The driver sets `coord` (has `handle(request) -> [Reply]`), `members` (name -> client,
    in insertion order), `observer` (None or a callable taking the driver), `drop` (None or
    `drop(name, request) -> bool`) and calls `_init_fifo()`; it defines `route(replies)`."""

    def _init_fifo(self) -> None:
        self.requests = deque()          # (client name, request) not yet delivered
        self.delivered = []              # (client name, request, [responses]) in delivery order
        self.lost = []                   # (client name, request) lost through `drop`

    def owner(self, correlation_id: int) -> str:
        """The name of the client that issued `correlation_id`."""
        return list(self.members)[correlation_id // CID_STRIDE - 1]

    def send(self, name: str, requests) -> None:
        """Queue `requests` of client `name`, except those `drop` loses (the client is not told)."""
        for r in requests:
            if self.drop is not None and self.drop(name, r):
                self.lost.append((name, r))
            else:
                self.requests.append((name, r))

    def deliver_all(self, max_messages: int = 100_000) -> int:
        """Deliver queued requests FIFO (and the requests their replies cause) until none is left;
        returns how many were delivered."""
        n = 0
        while self.requests:
            n += 1
            if n > max_messages:
                raise RuntimeError(f"more than {max_messages} messages without quiescence")
            name, req = self.requests.popleft()
            replies = self.coord.handle(req)
            self.delivered.append((name, req, [r.response for r in replies]))
            self.route(replies)
            if self.observer is not None:
                self.observer(self)
        return n
