"""An assignor in any language: one long-lived process, one JSON line in, one JSON line out.

`--command "CMD ..."` starts CMD once (split like a shell would, no shell involved) and keeps it
for the whole check. Each problem is written as one line to its stdin; one line is read back
from its stdout within `timeout` seconds. A process that exits (crash), stays silent past the
timeout (hang: it is killed) or writes something that is not a JSON object (malformed) is a
finding with its input: `solve` raises `TargetFailure`, and the process is restarted for the
next problem. Its stderr is kept (last lines) to explain a crash.
"""
from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import time

from kverify.certify.properties import ORDER
from kverify.certify.claims import EAGER
from kverify.certify.failures import TargetError, TargetFailure


class CommandTarget:
    protocol = "classic"

    def __init__(self, command: str, timeout: float = 5.0, cooperative: bool = False):
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise TargetError(f"--command: {exc}") from None
        if not self.argv:
            raise TargetError("--command is empty")
        self.name = f"command:{self.argv[0]}"
        self.command = command
        self.timeout = timeout
        self.cooperative = cooperative
        self.member_order_free = True
        self.claims = {p: None for p in ORDER}
        if not cooperative:
            self.claims["cooperative-safe"] = EAGER + " (pass --cooperative if the program is cooperative)"
        self.note = None
        self.proc = None
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            raise TargetError(f"cannot start {self.argv[0]!r}: {exc.strerror}") from None
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(self.proc.stderr.fileno(), False)
        self._buf = b""
        self._err = b""

    def _stderr_tail(self) -> str:
        try:
            chunk = self.proc.stderr.read()
        except (OSError, ValueError):
            chunk = None
        if chunk:
            self._err = (self._err + chunk)[-2000:]
        lines = self._err.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:200] if lines else ""

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for fh in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    fh.close()
                except OSError:
                    pass

    def _fail(self, kind: str, message: str):
        self._kill()
        self.restarts += 1
        self._start()
        raise TargetFailure(kind, message)

    def _read_line(self) -> bytes | None:
        deadline = time.monotonic() + self.timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        sel.register(self.proc.stderr, selectors.EVENT_READ)
        try:
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                for key, _ in sel.select(left):
                    chunk = key.fileobj.read()
                    if key.fileobj is self.proc.stderr:
                        if chunk:
                            self._err = (self._err + chunk)[-2000:]
                        continue
                    if chunk == b"":
                        return b""  # EOF: the process is gone
                    if chunk:
                        self._buf += chunk
            line, _, self._buf = self._buf.partition(b"\n")
            return line
        finally:
            sel.close()

    def _write(self, data: bytes) -> bool:
        """Write the whole line within the timeout (a program that stops reading is a hang)."""
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while view:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return False
                try:
                    n = os.write(fd, view)
                except BlockingIOError:
                    continue
                view = view[n:]
        return True

    def solve(self, problem: dict) -> dict:
        data = (json.dumps(problem) + "\n").encode()
        try:
            written = self._write(data)
        except (BrokenPipeError, OSError):
            code = self.proc.poll()
            self._fail("crash", f"process exited (code {code}) before reading the problem; {self._stderr_tail()}")
        if not written:
            self._fail("hang", f"the program stopped reading its input (not drained within {self.timeout:g}s)")
        line = self._read_line()
        if line is None:
            self._fail("hang", f"no answer within {self.timeout:g}s")
        if line == b"":
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            self._fail("crash", f"process exited (code {code}) without answering; {self._stderr_tail()}")
        try:
            answer = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._fail("malformed", f"answer line is not JSON: {line[:120]!r}")
        if not isinstance(answer, dict):
            self._fail("malformed", f"answer line is not a JSON object: {line[:120]!r}")
        return answer

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self._kill()
        self.proc = None
