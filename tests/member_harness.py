"""A tiny deterministic driver wiring members to one coordinator, for tests and examples.

Messages travel FIFO and are never lost (unless a test stages a loss with `drop`): requests queue in
the order members emit them, each is handled by the coordinator, and every reply goes back to the
member whose correlation id it carries (tests/fifo_driver.py, shared with the KIP-848 driver). Time
moves only through `advance`. The world model (issue #5) replaces this with a
nondeterministic lossy network; nothing in `Member` depends on this delivery order.
"""
from __future__ import annotations

from dataclasses import replace

from kverify.impl.member.member import Member

from fifo_driver import CID_STRIDE, FifoDriver


class Harness(FifoDriver):
    def __init__(self, coordinator, configs, behaviours=frozenset(), observer=None, drop=None):
        """`configs`: {name: MemberConfig}; names keep their insertion order for every step.
        `observer(harness)`, if given, is called after every delivered message and timer step;
        `drop(name, request) -> bool`, if given, loses the requests it returns True for (a test's
        way to stage one specific network fault; the member is not told, as with a real loss)."""
        self.coord = coordinator
        self.observer = observer
        self.drop = drop
        self._init_fifo()
        self.members = {}
        for i, (name, cfg) in enumerate(configs.items(), start=1):
            self.members[name] = Member(replace(cfg, correlation_base=i * CID_STRIDE), behaviours,
                                        now=coordinator.now)
        self.started = set()             # members whose application has called start()/restart()
        self.no_poll = set()             # started members whose poll thread is stalled (ticks only)
        self.dropped_replies = 0         # replies for a member that ignored them (crashed, stale)

    @property
    def now(self) -> int:
        return self.coord.now

    # ---- member actions -----------------------------------------------------------------------
    def act(self, name: str, action: str, *args, deliver: bool = True, **kwargs) -> list:
        """Call `members[name].<action>(*args, now=now)`, queue its requests, deliver everything.
        A member takes part in `advance`/`poll_all` only after its "start" (or "restart")."""
        if action in ("start", "restart"):
            self.started.add(name)
        reqs = getattr(self.members[name], action)(*args, now=self.now, **kwargs)
        self.send(name, reqs)
        if deliver:
            self.deliver_all()
        return reqs

    def poll_all(self, deliver: bool = True):
        for name in self.members:
            if name in self.started:
                self.act(name, "poll", deliver=False)
        if deliver:
            self.deliver_all()

    # ---- delivery (deliver_all: FifoDriver) and time ----------------------------------------------
    def route(self, replies):
        """Hand each coordinator reply to the member whose correlation id it carries."""
        for reply in replies:
            name = self.owner(reply.correlation_id)
            m = self.members[name]
            if not m.wants(reply.correlation_id):
                self.dropped_replies += 1
            self.send(name, m.on_response(reply.correlation_id, reply.response, now=self.now))

    def advance(self, ms: int, step: int = 100, poll: bool = True):
        """Move time by `ms` in `step`s: coordinator timers, then every member's tick (and poll)."""
        left = ms
        while left > 0:
            d = min(step, left)
            left -= d
            self.route(self.coord.advance(d))
            if self.observer is not None:
                self.observer(self)
            for name, m in self.members.items():
                if name not in self.started:
                    continue
                self.send(name, m.tick(self.now))
                if poll and name not in self.no_poll:
                    self.send(name, m.poll(self.now))
            self.deliver_all()

    # ---- observations -------------------------------------------------------------------------
    def consuming(self) -> dict:
        return {name: frozenset(m.consuming) for name, m in self.members.items()}

    def live(self) -> dict:
        """Started members whose process runs (not crashed, closed or dead of a fatal error)."""
        return {n: m for n, m in self.members.items() if n in self.started and m.alive}

    def stable(self) -> bool:
        """Every live member is STABLE with nothing left to rejoin for."""
        live = list(self.live().values())
        return bool(live) and all(m.state == "STABLE" and not m.rejoin_needed and m.join_cid is None
                                  and m.blocked is None for m in live)
