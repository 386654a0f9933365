"""A tiny deterministic driver wiring KIP-848 consumers to one consumer group coordinator.

Why it exists: tests and examples need the client and the coordinator talking without a world
model: requests travel FIFO and are never lost (unless `drop(name, request)` says so; the client
then sees `on_failure` when `fail_lost()` is called), replies return to the client whose
correlation id they carry (tests/fifo_driver.py, shared with tests/member_harness.py, the classic
protocol's driver), and time moves only through `advance`; the world model (K3) replaces it with a
lossy, reordering network.
"""
from __future__ import annotations

from dataclasses import replace

from kverify.impl.consumer.client import ConsumerMember

from fifo_driver import CID_STRIDE, FifoDriver


class ConsumerHarness(FifoDriver):
    def __init__(self, coordinator, configs: dict, behaviours=frozenset(), observer=None, drop=None,
                 drop_reply=None):
        """`configs`: {name: ClientConfig} (correlation bases are assigned here); `observer(h)` is
        called after every delivered message and every time step; `drop(name, request)` /
        `drop_reply(name, response)` return True to lose that message (the client is told only by
        `fail_lost()`, as a request timeout would)."""
        self.coord = coordinator
        self.observer = observer
        self.drop = drop
        self.drop_reply = drop_reply
        self._init_fifo()
        self.lost_replies = []              # (name, correlation id) whose reply was dropped
        self.members = {}
        names = {t.name: t.topic_id for t in coordinator.topics.topics}
        for i, (name, cfg) in enumerate(configs.items(), start=1):
            topic_names = dict(cfg.topic_names) or {tid: n for n, tid in names.items()}
            self.members[name] = ConsumerMember(replace(cfg, correlation_base=i * CID_STRIDE,
                                                        topic_names=topic_names), behaviours,
                                                now=coordinator.now)

    @property
    def now(self) -> int:
        return self.coord.now

    def act(self, name: str, action: str, *args, deliver: bool = True) -> list:
        reqs = getattr(self.members[name], action)(*args, now=self.now)
        self.send(name, reqs)
        if deliver:
            self.deliver_all()
        return reqs

    def fail_lost(self) -> None:
        """Tell each client its lost requests failed (a request timeout)."""
        lost, self.lost = self.lost, []
        lost = [(n, r.correlation_id) for n, r in lost] + self.lost_replies
        self.lost_replies = []
        for name, cid in lost:
            self.send(name, self.members[name].on_failure(cid, self.now))
        self.deliver_all()

    def route(self, replies) -> None:
        for reply in replies:
            name = self.owner(reply.correlation_id)
            if self.drop_reply is not None and self.drop_reply(name, reply.response):
                self.lost_replies.append((name, reply.correlation_id))
                continue
            self.send(name, self.members[name].on_response(reply.correlation_id, reply.response, self.now))

    def advance(self, ms: int, step: int = 100, poll: bool = True) -> None:
        """Move time in `step`s: coordinator timers, then every live member's tick (and poll)."""
        left = ms
        while left > 0:
            d = min(step, left)
            left -= d
            self.route(self.coord.advance(d))
            if self.observer is not None:
                self.observer(self)
            for name, m in self.members.items():
                self.send(name, m.tick(self.now))
                if poll:
                    self.send(name, m.poll(self.now))
            self.deliver_all()

    # ---- observations ---------------------------------------------------------------------------
    def owned(self) -> dict:
        return {n: m.owned for n, m in self.members.items() if m.alive}

    def stable(self, group_id: str) -> bool:
        """The group is Stable and every live subscribed client is STABLE owning its target."""
        g = self.coord.group(group_id)
        if g is None or g.state != "Stable":
            return False
        live = [m for m in self.members.values() if m.alive and m.state != "UNSUBSCRIBED"]
        return all(m.state == "STABLE" and m.owned == g.target_of(m.member_id) for m in live)
