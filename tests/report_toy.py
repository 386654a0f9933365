"""A tiny protocol for the report tests: a member sends numbered messages to a coordinator that
may lose one; the invariant says the coordinator never skips a number. `lossy=True` breaks it."""
from kverify.invariants.core import Invariant, Sometimes
from kverify.model.protocol import Protocol

PARAMS = {"limit": (4, "messages to send"), "lossy": (False, "the network may lose a message")}


class Toy(Protocol):
    name = "toy"

    def __init__(self, params, behaviours=frozenset()):
        self.params = dict(params)
        self.behaviours = behaviours
        self.limit = params["limit"]
        self.lossy = params["lossy"]

    def init_states(self):
        return [(0, 0)]  # (sent, received)

    def actions(self, s):
        sent, recv = s
        if sent < self.limit:
            yield ("send", "<script>alert(1)</script>", sent)
            if self.lossy:
                yield ("lose", "<script>alert(1)</script>", sent)

    def step(self, s, a):
        sent, recv = s
        return (sent + 1, recv + 1) if a[0] == "send" else (sent + 1, recv)

    def invariants(self):
        return [Invariant("no-gap", "every message sent is received",
                          lambda s: None if s[0] == s[1] else f"sent {s[0]} but received {s[1]}")]

    def sometimes(self):
        return [Sometimes("all-sent", "all messages sent", lambda s: s[0] == self.limit)]

    def is_fault(self, a):
        return a[0] == "lose"

    def participants(self):
        return ["<script>alert(1)</script>", "coordinator"]

    def arrow(self, a):
        return (a[1], "coordinator") if a[0] == "send" else (a[1], a[1])

    def describe(self, s):
        return {"coordinator": {"received": s[1]}, "members": {"<script>alert(1)</script>": {"sent": s[0]}}}


def make(params, behaviours):
    return Toy(params, behaviours)
