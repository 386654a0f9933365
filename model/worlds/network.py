"""The network of a world as an immutable value: per-client queues of in-flight messages.

Why it exists: a world explores message delivery as nondeterministic actions (deliver, receive,
lose, delay = not yet), so the messages in flight must be part of its hashable state. Each client
slot has one connection to the server: a queue of requests (client -> server) and a queue of
responses (server -> client), each entry `(correlation_id, message)` in send order (requests also
carry the number of the client's connection they were sent on). With `fifo` (TCP) only the oldest
request of each connection can be delivered or lost (after a reconnect, requests still in flight on
the old connection may arrive after newer ones), and only the oldest response; without `fifo` any
entry can (arbitrary reordering). Messages of different clients always interleave freely.
"""
from __future__ import annotations

from typing import NamedTuple

REQ, RESP = "req", "resp"


class Net(NamedTuple):
    requests: tuple     # per slot: ((cid, request), ...)
    responses: tuple    # per slot: ((cid, response), ...)

    @staticmethod
    def empty(n: int) -> "Net":
        return Net(((),) * n, ((),) * n)

    def send(self, slot: int, requests, conn: int = 0) -> "Net":
        if not requests:
            return self
        q = self.requests[slot] + tuple((r.correlation_id, r, conn) for r in requests)
        return Net(_set(self.requests, slot, q), self.responses)

    def reply(self, slot: int, cid: int, response) -> "Net":
        q = self.responses[slot] + ((cid, response),)
        return Net(self.requests, _set(self.responses, slot, q))

    def deliverable(self, kind: str, slot: int, fifo: bool) -> tuple:
        """Correlation ids of `kind` messages of `slot` that may be delivered (or lost) now."""
        q = self.requests[slot] if kind == REQ else self.responses[slot]
        if not q:
            return ()
        if not fifo:
            return tuple(sorted(e[0] for e in q))
        if kind == RESP:
            return (q[0][0],)
        heads, conns = [], set()
        for e in q:
            if e[2] not in conns:
                conns.add(e[2])
                heads.append(e[0])
        return tuple(heads)

    def take(self, kind: str, slot: int, cid: int):
        """(message, net without it)."""
        queues = self.requests if kind == REQ else self.responses
        q = queues[slot]
        for i, e in enumerate(q):
            c, msg = e[0], e[1]
            if c == cid:
                rest = _set(queues, slot, q[:i] + q[i + 1:])
                return msg, (Net(rest, self.responses) if kind == REQ else Net(self.requests, rest))
        raise KeyError(f"no {kind} {cid} in flight for slot {slot}")

    def drop_requests(self, slot: int) -> "Net":
        if not self.requests[slot]:
            return self
        return Net(_set(self.requests, slot, ()), self.responses)

    def drop_responses(self, slot: int, keep) -> "Net":
        """Keep only the responses of `slot` whose cid satisfies `keep` (the others would be ignored)."""
        q = self.responses[slot]
        if not q:
            return self
        kept = tuple(e for e in q if keep(e[0]))
        if len(kept) == len(q):
            return self
        return Net(self.requests, _set(self.responses, slot, kept))

    def size(self) -> int:
        return sum(map(len, self.requests)) + sum(map(len, self.responses))

    def idle(self) -> bool:
        """Nothing in flight."""
        return not (any(self.requests) or any(self.responses))


def _set(t: tuple, i: int, value) -> tuple:
    return t[:i] + (value,) + t[i + 1:]
