"""pytest plugin: a running `kverify broker` with faults and online checks, for a client library's own tests.

Why: the people who write Kafka clients test them against a broker; this hands their test suite the
reference coordinator on a free port (127.0.0.1, port 0), whose online checks (kverify/wire/checks.py)
watch every message, and fails the test when a check breaks, naming the counterexample report
(JSON/MD/HTML with the sequence diagram of the real messages; `kverify replay` re-runs it).

Use (once kverify is installed the plugin is registered through the `pytest11` entry point; without it
add `pytest_plugins = ["kverify.testing"]` to your root conftest.py):

    @pytest.mark.kverify_broker(topics={"t0": 6}, faults="drop:api=Heartbeat,p=0.1", seed=7)
    def test_my_consumer(kverify_broker):
        consumer = MyConsumer(bootstrap=kverify_broker.bootstrap, group="g", client_id="c1")
        ...   # the test fails at teardown if the broker saw an unsafe assignment, commit or fetch

Marker keywords: `topics`, `behaviours` (historical coordinator bugs, `kverify behaviours`), `faults`
(the broker's `--faults` grammar), `seed` (printed), `clock` ("real" or "manual"), `coordinator`
(CoordinatorConfig overrides), `expect_violations=True` (do not fail; the test inspects
`kverify_broker.violations` itself). Defaults suit fast client tests: session timeouts down to 10 ms
allowed, no initial rebalance delay. Consumers must use distinct client ids for the fetch check.
"""
from __future__ import annotations

import os
import tempfile
from typing import Optional

import pytest

FAST_COORDINATOR = {"group_min_session_timeout_ms": 10, "group_initial_rebalance_delay_ms": 0}


class RunningBroker:
    """A started broker with online checks; also a context manager (stops it)."""

    def __init__(self, topics=None, behaviours=(), faults: str = "", seed: int = 0, clock: str = "real",
                 coordinator: Optional[dict] = None, report_dir: Optional[str] = None, trace_path: Optional[str] = None):
        from kverify.wire.record import attach
        from kverify.wire.server import Broker, BrokerConfig

        cfg = BrokerConfig(topics=dict(topics or {"t0": 6}), behaviours=frozenset(behaviours), faults=faults,
                           seed=seed, clock=clock, trace_path=trace_path,
                           coordinator={**FAST_COORDINATOR, **(coordinator or {})})
        self.seed = seed
        self.report_dir = report_dir or tempfile.mkdtemp(prefix="kverify-broker-")
        self.broker = Broker(cfg)
        self.recorder = attach(self.broker, self.report_dir)
        self.port = self.broker.start()
        self.host = "127.0.0.1"
        self.stopped = False

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def sync(self) -> None:
        """Wait until the broker thread has finished what it is doing (a response reaches the client just before
        the broker traces and checks it)."""
        if not self.stopped:
            self.broker.call(lambda: None)

    @property
    def violations(self) -> list:
        self.sync()
        return list(self.recorder.violations)

    @property
    def reports(self) -> list:
        self.sync()
        return list(self.recorder.reports)

    # the broker's in-process controls (thread-safe)
    def advance(self, ms: int) -> int:
        return self.broker.advance(ms)

    def set_faults(self, spec: str) -> None:
        self.broker.set_faults(spec)

    def failover(self, ms: int = 1000, load: int = 500) -> None:
        self.broker.failover(ms, load)

    def kill(self, client_id: str) -> None:
        self.broker.kill_client(client_id)

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.broker.stop()

    def problems(self) -> list:
        """One line per broken property (with its report) and per internal error of the broker or the checks."""
        self.sync()
        out = [f"{v.line()} [report: {os.path.join(self.report_dir, v.invariant, 'counterexample.html')}]"
               for v in self.recorder.violations]
        out += [f"kverify broker internal error: {e}" for e in self.broker.errors]
        out += [f"kverify online checks internal error: {e}" for e in self.recorder.errors]
        return out

    def check(self) -> None:
        """AssertionError listing every problem (seed included), if any."""
        lines = self.problems()
        if lines:
            raise AssertionError(f"kverify broker (seed {self.seed}) saw {len(lines)} problem(s):\n  " +
                                 "\n  ".join(lines))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def start_broker(**options) -> RunningBroker:
    """A RunningBroker outside pytest fixtures (same keywords as the marker)."""
    return RunningBroker(**options)


def pytest_configure(config):
    config.addinivalue_line("markers", "kverify_broker(**options): options of the `kverify_broker` fixture "
                                       "(topics, behaviours, faults, seed, clock, coordinator, expect_violations)")


@pytest.fixture
def kverify_broker(request, tmp_path):
    """A running kverify broker (127.0.0.1, free port) with online checks; fails the test on a violation."""
    marker = request.node.get_closest_marker("kverify_broker")
    options = dict(marker.kwargs) if marker else {}
    expect = bool(options.pop("expect_violations", False))
    options.setdefault("report_dir", str(tmp_path / "kverify-reports"))
    rb = RunningBroker(**options)
    print(f"kverify broker at {rb.bootstrap} (seed {rb.seed})")
    try:
        yield rb
    finally:
        rb.stop()
    if not expect:
        lines = rb.problems()
        if lines:
            pytest.fail(f"kverify broker (seed {rb.seed}) saw {len(lines)} problem(s):\n  " + "\n  ".join(lines),
                        pytrace=False)
