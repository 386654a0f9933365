"""The progress bar of a simulation: runs done, steps per second, violations so far.

The inline engine updates it after every run. The Spark engine cannot see inside running tasks:
accumulators arrive when a task ends, so a poller reads them twice a second on the driver and the
bar advances range by range. Accumulators feed only this display -- the accounting in
summary.json comes from the rows themselves (kverify.spark.aggregate).
"""
from __future__ import annotations

import sys
import threading
import time


class Progress:
    def __init__(self, total: int, enabled: bool | None = None):
        from tqdm import tqdm

        # enabled=None: show it when stderr is a terminal (tqdm's own rule).
        self._bar = tqdm(total=total, unit="run", file=sys.stderr, disable=None if enabled is None else not enabled,
                         dynamic_ncols=True, leave=False)
        self._start = self._last = time.perf_counter()
        self.runs = self.steps = self.violations = 0
        self._pending = [0, 0, 0]
        self.timeline: list = []    # [(seconds since start, steps done so far)] as the counts grow

    def start(self) -> None:
        """Restart the clock (and the bar's) when the runs really begin: Spark's start-up is not
        part of the rate."""
        self._start = self._last = time.perf_counter()
        self.timeline = []
        self._bar.reset(total=self._bar.total)

    def set(self, runs: int, steps: int, violations: int) -> None:
        if runs > self.runs:
            self._bar.update(runs - self.runs)
        if steps > self.steps:
            self.timeline.append((round(time.perf_counter() - self._start, 3), steps))
        self.runs, self.steps, self.violations = runs, steps, violations
        rate = steps / max(time.perf_counter() - self._start, 1e-9)
        self._bar.set_postfix_str(f"{rate:,.0f} steps/s, {violations} violations", refresh=False)

    def add(self, steps: int, violated: bool) -> None:
        """One run finished (inline engine); the bar is redrawn at most five times a second."""
        p = self._pending
        p[0] += 1
        p[1] += steps
        p[2] += violated
        now = time.perf_counter()
        if now - self._last >= 0.2:
            self._last = now
            self._flush()

    def _flush(self) -> None:
        p = self._pending
        if p[0]:
            self.set(self.runs + p[0], self.steps + p[1], self.violations + p[2])
            self._pending = [0, 0, 0]

    def close(self) -> None:
        self._flush()
        self._bar.close()


class AccumulatorPoller:
    """Polls Spark accumulators (runs, steps, violations) into a Progress from a driver thread."""

    def __init__(self, progress: Progress, runs_acc, steps_acc, violations_acc, every: float = 0.5):
        self._p, self._accs, self._every = progress, (runs_acc, steps_acc, violations_acc), every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kverify-progress", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._poll()

    def _poll(self):
        self._p.set(*(int(a.value) for a in self._accs))

    def _loop(self):
        while not self._stop.wait(self._every):
            self._poll()
