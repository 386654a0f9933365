"""`Broker`: the reference group coordinator served on the Kafka wire protocol.

One asyncio loop (in the foreground for the CLI, or on a thread of its own for tests) owns every
socket, the broker clock and the pure `GroupCoordinator` (impl/ stays free of sockets, threads and
wall clock): the clock follows the wall clock (`clock="real"`) or moves only on request
(`clock="manual"`, by `advance` or the control request of `control.py`), and every move calls
`GroupCoordinator.advance`. As in Kafka, a connection's requests are handled one at a time: the next
is read only after the previous one was answered, so a parked JoinGroup/SyncGroup holds its
connection until `handle`/`advance` returns its `Reply`, which `route` sends to the right
connection and correlation id. KIP-848 groups are served by impl/consumer's coordinator beside the
classic one (consumer_api.py); both see the same clock.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import heapq
import itertools
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Optional

from kverify.impl.consumer import ConsumerCoordinatorConfig, ConsumerGroupCoordinator
from kverify.impl.coordinator import CoordinatorConfig, GroupCoordinator, MemoryOffsetsLog
from kverify.wire import codec, consumer_api, control, data_api, group_api
from kverify.wire.faults import Faults
from kverify.wire.partition_log import Topics
from kverify.wire.trace import Tracer

HANDLERS = {**data_api.HANDLERS, **group_api.HANDLERS, **consumer_api.HANDLERS}
DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024      # Kafka's socket.request.max.bytes
_QUEUE_HIGH = 64                                   # stop reading a connection with this many requests queued


@dataclass
class BrokerConfig:
    host: str = "127.0.0.1"
    port: int = 0
    topics: dict = field(default_factory=lambda: {"t0": 3})
    behaviours: frozenset = frozenset()
    faults: str = ""
    seed: int = 0
    trace_path: Optional[str] = None
    clock: str = "real"                            # "real" | "manual"
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    group_min_session_timeout_ms: int = 6000       # Kafka defaults; tests lower them
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    offsets_partitions: int = 50
    coordinator: dict = field(default_factory=dict)   # any other CoordinatorConfig field: value (overrides)
    consumer: dict = field(default_factory=dict)      # ConsumerCoordinatorConfig fields (KIP-848 groups)


class Ctx:
    """One request in flight: where and how its response goes."""
    __slots__ = ("conn", "corr", "api", "version", "client_id", "host", "done")

    def __init__(self, conn, corr, api, version, client_id):
        self.conn, self.corr, self.api, self.version = conn, corr, api, version
        self.client_id, self.host, self.done = client_id, conn.host, False


class Connection(asyncio.Protocol):
    def __init__(self, broker, conn_id):
        self.broker, self.id = broker, conn_id
        self.buf = bytearray()
        self.queue = collections.deque()
        self.busy = self.pumping = self.closed = self.paused = False
        self.transport = None
        self.host, self.peer = "?", "?"
        self.client_id = None

    # asyncio callbacks
    def connection_made(self, transport):
        self.transport = transport
        addr = transport.get_extra_info("peername") or ("?", 0)
        self.host, self.peer = str(addr[0]), f"{addr[0]}:{addr[1]}"
        self.broker.conns[self.id] = self
        self.broker.trace("open", self)

    def data_received(self, data):
        if self.closed:
            return
        buf = self.buf
        buf += data
        limit = self.broker.config.max_request_bytes
        while len(buf) >= 4:
            size = int.from_bytes(buf[:4], "big", signed=True)
            if size < 0 or size > limit:
                self.close(f"request size {size} outside 0..{limit}")
                return
            if len(buf) < 4 + size:
                break
            self.queue.append(bytes(buf[4:4 + size]))
            del buf[:4 + size]
        if len(self.queue) >= _QUEUE_HIGH and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        self.pump()

    def connection_lost(self, exc):
        if not self.closed:
            self.closed = True
            self.broker.trace("close", self)
        self.broker.conns.pop(self.id, None)

    # request flow
    def pump(self):
        if self.pumping:
            return
        self.pumping = True
        try:
            while not self.busy and self.queue and not self.closed:
                self.busy = True
                self.broker.process(self, self.queue.popleft())
            if self.paused and len(self.queue) < _QUEUE_HIGH // 2 and not self.closed:
                self.paused = False
                self.transport.resume_reading()
        finally:
            self.pumping = False

    def release(self):
        self.busy = False
        self.pump()

    def close(self, reason=None):
        if self.closed:
            return
        self.closed = True
        self.broker.trace("close", self, fault=reason)
        self.transport.close()


class Broker:
    def __init__(self, config: Optional[BrokerConfig] = None):
        self.config = c = config or BrokerConfig()
        self.log = MemoryOffsetsLog()
        self.coordinator_config = CoordinatorConfig(**{
            "group_min_session_timeout_ms": c.group_min_session_timeout_ms,
            "group_max_session_timeout_ms": c.group_max_session_timeout_ms,
            "group_initial_rebalance_delay_ms": c.group_initial_rebalance_delay_ms,
            "offsets_partitions": c.offsets_partitions, "member_id_seed": c.seed, **c.coordinator})
        self.coordinator = GroupCoordinator(self.coordinator_config, behaviours=c.behaviours, log=self.log)
        self.topics = Topics(c.topics)
        self.consumer_coordinator = ConsumerGroupCoordinator(
            ConsumerCoordinatorConfig(**{"start_ms": self.coordinator_config.start_ms, **c.consumer}),
            behaviours=c.behaviours, topics=dict(c.topics))
        self.tracer = Tracer(c.trace_path)
        self.listeners = self.tracer.listeners
        self.faults = Faults(c.faults, c.seed, codec.BY_NAME)
        self.conns: dict = {}
        self.pending: dict = {}                     # broker cid -> (Ctx, answer)
        self.killed: set = set()                    # client ids treated as crashed processes
        self.handled = 0                            # non-control requests whose handler has run
        self.errors: list = []                      # internal errors (a bug of ours): tests assert none
        self._cids = itertools.count(1)
        self._conn_ids = itertools.count(1)
        self._clock_actions: list = []              # heap of (broker clock ms, seq, fn)
        self._seq = itertools.count()
        self._fetches: dict = {}
        self._epoch = 0
        self.producer_ids = 0
        self._pause_until = None
        self._loop = None
        self._server = None
        self._thread = None
        self._tick_handle = None
        self.port = None
        self.advertised_host = c.host
        self._schedule_timed_faults()

    # ---- life cycle ------------------------------------------------------------------------------
    async def _open(self):
        self._loop = asyncio.get_running_loop()
        self._wall = self._loop.time()
        self._server = await self._loop.create_server(
            lambda: Connection(self, next(self._conn_ids)), self.config.host, self.config.port)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.tracer.active:
            self.tracer.emit(self.coordinator.now, "start", None, None, body={
                "config": self.config_json(), "behaviours": sorted(self.config.behaviours), "topics": dict(self.config.topics),
                "port": self.port, "seed": self.config.seed, "clock": self.config.clock})
        self._tick()

    def start(self) -> int:
        """Serve on a thread of its own; returns the port."""
        ready = concurrent.futures.Future()

        def run():
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                ready.set_exception(exc)
                loop.close()
                return
            ready.set_result(self.port)
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="kverify-broker", daemon=True)
        self._thread.start()
        return ready.result(timeout=30)

    def stop(self):
        if self._thread is not None and self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        self._thread = None
        self.tracer.close()

    async def _shutdown(self):
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        for conn in list(self.conns.values()):
            conn.close("broker stopped")
        self._server.close()
        await self._server.wait_closed()
        self.tracer.flush()

    def serve_forever(self, on_ready=None):
        """Serve in the foreground until interrupted (the CLI)."""
        async def main():
            await self._open()
            stop = asyncio.Event()
            for sig in (signal.SIGTERM, signal.SIGINT):
                try:
                    self._loop.add_signal_handler(sig, stop.set)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass
            if on_ready is not None:
                on_ready(self.port)
            try:
                await stop.wait()
            finally:
                await self._shutdown()
        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            pass
        finally:
            self.tracer.close()

    def call(self, fn, *args):
        """Run fn(*args) on the broker's loop and return its result (from any thread)."""
        loop = self._loop
        if self._thread is None or loop is None or not loop.is_running() \
                or threading.current_thread() is self._thread:
            return fn(*args)
        fut = concurrent.futures.Future()

        def run():
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                fut.set_exception(exc)
        loop.call_soon_threadsafe(run)
        return fut.result(timeout=30)

    # thread-safe equivalents of the control request
    def advance(self, ms: int) -> int:
        return self.call(self._advance_clock, int(ms))

    def set_faults(self, spec: str) -> None:
        self.call(self._set_faults, spec)

    def kill_client(self, client_id: str) -> None:
        """Crash a client process as the broker sees it: its connections close and every later
        connection of that client id is closed at its first request (so it can neither leave the
        group nor heartbeat; its membership ends by session timeout)."""
        self.call(self._kill, client_id)

    def _kill(self, client_id):
        self.killed.add(client_id)
        self.trace_fault(f"kill {client_id}")
        for conn in list(self.conns.values()):
            if conn.client_id == client_id:
                conn.close(f"client {client_id!r} was killed")

    def failover(self, ms: int = 1000, load: int = 500) -> None:
        self.call(self._failover, int(ms), int(load))

    def config_json(self) -> dict:
        """The coordinator's configuration as JSON values (tuples as lists)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self.coordinator_config).items()}

    @property
    def clock_ms(self) -> int:
        return self.coordinator.now

    # ---- clock -----------------------------------------------------------------------------------
    def _sync_clock(self):
        if self.config.clock != "real" or self._loop is None:
            return
        now = self._loop.time()
        elapsed = int((now - self._wall) * 1000)
        if elapsed <= 0:
            return
        self._wall += elapsed / 1000.0
        if self._pause_until is not None:
            if now < self._pause_until:
                return
            self._pause_until = None
        self._advance_clock(elapsed)

    def _advance_clock(self, ms: int) -> int:
        target = self.coordinator.now + max(0, ms)
        while self._clock_actions and self._clock_actions[0][0] <= target:
            at, _s, fn = heapq.heappop(self._clock_actions)
            if at > self.coordinator.now:
                self._coord_advance(at - self.coordinator.now)
            fn()
        if target > self.coordinator.now:
            self._coord_advance(target - self.coordinator.now)
        return self.coordinator.now

    def _coord_advance(self, ms):
        replies = self.coordinator.advance(ms)
        replies += self.consumer_coordinator.advance(ms)
        if self.tracer.active:
            self.tracer.emit(self.coordinator.now, "clock", None, None, body={"advance": ms})
        self.route(replies)

    def _at(self, at_ms, fn):
        heapq.heappush(self._clock_actions, (at_ms, next(self._seq), fn))

    def _tick(self):
        self._sync_clock()
        if self.config.clock == "real":
            delay = 0.05
            nd = self.coordinator.next_deadline()
            if nd is not None:
                delay = min(delay, max(0.002, (nd - self.coordinator.now + 1) / 1000.0))
            if self._clock_actions:
                delay = min(delay, max(0.002, (self._clock_actions[0][0] - self.coordinator.now) / 1000.0))
            self._tick_handle = self._loop.call_later(delay, self._tick)

    # ---- faults ----------------------------------------------------------------------------------
    def _set_faults(self, spec):
        self.faults.set(spec)
        self._clock_actions = [a for a in self._clock_actions if not getattr(a[2], "timed_fault", False)]
        heapq.heapify(self._clock_actions)
        self._schedule_timed_faults()

    def _schedule_timed_faults(self):
        for rule in self.faults.timed:
            def fire(rule=rule):
                if rule.kind == "failover":
                    self._failover(rule.ms, rule.load)
                else:
                    self._pause(rule.ms)
            fire.timed_fault = True
            self._at(rule.at, fire)
        self.faults.timed = []

    def _pause(self, ms):
        self.trace_fault(f"pause {ms}ms")
        if self._loop is not None:
            self._pause_until = self._loop.time() + ms / 1000.0

    def _failover(self, ms, load):
        """The coordinator resigns every offsets partition, then is elected again and reloads them
        from its committed offsets log (impl's on_resignation / on_election). KIP-848 groups: the
        consumer coordinator is unloaded at the resignation and loaded at the election (no separate
        load-in-progress phase)."""
        c = self.coordinator
        self._epoch += 1
        epoch = self._epoch
        parts = sorted(c.owned_partitions())
        self.trace_fault(f"failover: NOT_COORDINATOR {ms}ms, COORDINATOR_LOAD_IN_PROGRESS {load}ms",
                         {"op": "resign", "partitions": parts, "epoch": epoch})
        for p in parts:
            self.route(c.on_resignation(p, epoch))
        self.consumer_coordinator.unload()          # KIP-848 groups: NOT_COORDINATOR until the election

        def loading():
            self.trace_fault("failover: loading", {"op": "loading", "partitions": parts})
            for p in parts:
                c.internal.set_partition_loading(p)

        def elected():
            self._epoch += 1
            for p in parts:
                self.route(c.on_election(p, self._epoch, self.log.records(p)))
            self.consumer_coordinator.load()
            self.trace_fault("failover: groups and offsets reloaded",
                             {"op": "elect", "partitions": parts, "epoch": self._epoch})
        now = c.now
        self._at(now + ms, loading)
        self._at(now + ms + load, elected)

    # ---- requests --------------------------------------------------------------------------------
    def process(self, conn, frame):
        self._sync_clock()
        try:
            key, version, corr = codec.peek(frame)
        except codec.BadRequest as exc:
            conn.close(str(exc))
            return
        if key == control.CONTROL_KEY:
            self._control(conn, frame)
            return
        api = codec.APIS.get(key)
        if api is None:
            conn.close(f"unknown api key {key}")
            return
        if not api.min_version <= version <= api.max_version:
            if key == codec.API_VERSIONS_KEY:      # KIP-511: answer v0 with the versions we serve
                ctx = Ctx(conn, corr, api, 0, None)
                self.trace("in", conn, api, version, corr, body={})
                self.respond(ctx, data_api.api_versions_fields(0, codec.error_code("UNSUPPORTED_VERSION")))
            else:
                conn.close(f"unsupported version {version} of {api.name}")
            return
        try:
            client_id, body = codec.decode_request(api, version, frame)
        except codec.BadRequest as exc:
            conn.close(str(exc))
            return
        ctx = Ctx(conn, corr, api, version, client_id)
        conn.client_id = ctx.client_id
        if ctx.client_id in self.killed:
            conn.close(f"client {ctx.client_id!r} was killed")
            return
        if self.tracer.active:
            self.trace("in", conn, api, version, corr, ctx.client_id, body)
        try:
            HANDLERS[api.name](self, ctx, body)
            self.handled += 1
        except Exception as exc:  # noqa: BLE001 - a bug of ours must not take the broker down
            self.errors.append(f"{api.name} v{version}: {type(exc).__name__}: {exc}")
            print(f"kverify broker: internal error on {api.name} v{version}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            conn.close(f"internal error: {type(exc).__name__}")

    def submit(self, ctx, make, answer, coordinator=None):
        """Hand a coordinator request (made with a fresh broker cid) over; its answer is routed."""
        cid = next(self._cids)
        self.pending[cid] = (ctx, answer)
        self.route((coordinator or self.coordinator).handle(make(cid)))

    def ask(self, make, coordinator=None):
        """Synchronous coordinator call (never parked): returns the response; other replies are routed."""
        cid = next(self._cids)
        mine = None
        others = []
        for r in (coordinator or self.coordinator).handle(make(cid)):
            if r.correlation_id == cid:
                mine = r.response
            else:
                others.append(r)
        self.route(others)
        if mine is None:
            raise RuntimeError("the coordinator parked a request that is never parked")
        return mine

    def route(self, replies):
        for r in replies:
            entry = self.pending.pop(r.correlation_id, None)
            if entry is not None:
                ctx, answer = entry
                self.respond(ctx, answer(r.response))

    def respond(self, ctx, fields):
        if ctx.done:
            return
        ctx.done = True
        conn = ctx.conn
        if conn.closed:
            return
        rule = self.faults.on_response(ctx.api.name, self.coordinator.now) if self.faults.response_rules else None
        if rule is None:
            self._send(ctx, fields)
        elif rule.kind == "delay":
            self.trace("fault", conn, ctx.api, ctx.version, ctx.corr, fault=rule.text())
            self._loop.call_later(rule.ms / 1000.0, self._send, ctx, fields)
        elif rule.kind == "drop":
            self.trace("fault", conn, ctx.api, ctx.version, ctx.corr, fault=rule.text())
            conn.release()
        else:
            conn.close(rule.text())

    def _send(self, ctx, fields):
        conn = ctx.conn
        if conn.closed:
            return
        try:
            msg = codec.build(ctx.api.response, ctx.version, fields)
            data = codec.frame_response(ctx.api, ctx.version, ctx.corr, msg)
        except Exception as exc:  # noqa: BLE001 - a bug of ours
            self.errors.append(f"encoding {ctx.api.name} v{ctx.version}: {type(exc).__name__}: {exc}")
            conn.close(f"internal error encoding {ctx.api.name}")
            return
        conn.transport.write(data)
        if self.tracer.active:
            self.trace("out", conn, ctx.api, ctx.version, ctx.corr, ctx.client_id, msg)
        conn.release()

    def no_response(self, ctx):
        """acks=0 produce: nothing is sent back."""
        ctx.done = True
        ctx.conn.release()

    def park_fetch(self, ctx, wait_ms, render):
        key = next(self._seq)
        handle = self._loop.call_later(wait_ms / 1000.0, self._finish_fetch, key)
        self._fetches[key] = (ctx, render, handle)

    def _finish_fetch(self, key):
        entry = self._fetches.pop(key, None)
        if entry is not None:
            ctx, render, handle = entry
            handle.cancel()
            if not ctx.conn.closed:
                self.respond(ctx, render())

    def wake_fetches(self):
        for key in list(self._fetches):
            self._finish_fetch(key)

    # ---- control ---------------------------------------------------------------------------------
    def _control(self, conn, frame):
        corr = -1
        try:
            corr, op = control.decode_request(frame)
            answer = self._control_op(op)
            err = 0
        except Exception as exc:  # noqa: BLE001 - a bad control request gets INVALID_REQUEST
            answer, err = {"error": f"{type(exc).__name__}: {exc}"}, control.INVALID_REQUEST
        answer["clock_ms"] = self.coordinator.now
        answer["handled"] = self.handled
        answer["config"] = self.config_json()
        self.trace("fault", conn, None, 0, corr, fault=f"control {answer}")
        conn.transport.write(control.encode_response(corr, err, answer))
        conn.release()

    def _control_op(self, op):
        kind = op.get("op")
        if kind == "advance":
            ms = int(op["ms"])
            if ms < 0:
                raise ValueError("ms must be >= 0")
            self._advance_clock(ms)
        elif kind == "clock":
            pass
        elif kind == "faults":
            self._set_faults(str(op.get("spec", "")))
        elif kind == "failover":
            self._failover(int(op.get("ms", 1000)), int(op.get("load", 500)))
        elif kind == "pause":
            self._pause(int(op.get("ms", 1 << 30)))
        elif kind == "kill":
            self._kill(str(op["client_id"]))
        elif kind == "resume":
            self._pause_until = None
        else:
            raise ValueError(f"unknown control op {kind!r}")
        return {"op": kind}

    # ---- trace -----------------------------------------------------------------------------------
    def trace(self, direction, conn, api=None, version=None, corr=None, client_id=None, body=None, fault=None):
        t = self.tracer
        if t.listeners or t.active:
            t.emit(self.coordinator.now, direction, conn.id, conn.peer,
                             api.name if api is not None else None, api.key if api is not None else None,
                             version, corr, client_id, body, fault)

    def trace_fault(self, text, body=None):
        """A broker-wide fault event; `body` says what was done to the coordinator (for replay):
        {"op": "resign"|"elect", "partitions", "epoch"} (on_resignation/on_election with the log's
        records) or {"op": "loading", "partitions"} (internal.set_partition_loading)."""
        if self.tracer.active:
            self.tracer.emit(self.coordinator.now, "fault", None, None, body=body, fault=text)
