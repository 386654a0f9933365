"""`kverify tlc` error paths: one line on stderr and exit 2, with or without Java installed; and the class archive
that makes TLC's JVM start cheaper (no Java needed to check its bookkeeping)."""
from __future__ import annotations

import os


def _cli(argv, capsys):
    from kverify.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_missing_jar_is_one_line_exit_2(capsys, monkeypatch):
    monkeypatch.setenv("KVERIFY_TLA2TOOLS", "/nonexistent/tla2tools.jar")
    code, out, err = _cli(["tlc", "Replication", "--config", "Replication_r3"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "KVERIFY_TLA2TOOLS" in err


def test_cli_missing_java_is_one_line_exit_2(capsys, monkeypatch):
    monkeypatch.setenv("KVERIFY_JAVA", "/nonexistent/java")
    code, out, err = _cli(["tlc", "Replication", "--config", "Replication_r3"], capsys)
    assert code == 2 and err.count("\n") == 1 and "KVERIFY_JAVA" in err


def test_cli_bad_input_is_exit_2(capsys):
    assert _cli(["tlc", "NoSuchSpec", "--config", "Replication_r3"], capsys)[0] == 2
    assert _cli(["tlc", "Replication", "--config", "no_such_cfg"], capsys)[0] == 2
    assert _cli(["tlc", "Replication", "--config", "Replication_r3", "--workers", "0"], capsys)[0] == 2


def test_tlc_class_archive_is_dumped_once_then_mapped(tmp_path, monkeypatch):
    """Start-up only (kverify/tla/runner.py): the first fast-start run dumps TLC's classes to a file of its own,
    kept under its final name when the JVM ended by itself; later runs map it. A killed run's dump is dropped;
    other JVM flags and KVERIFY_TLC_CDS=0 use no archive."""
    from kverify.tla import runner

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KVERIFY_TLC_CDS", raising=False)
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"jar")
    (ignore, flag), fresh = runner.class_archive_flags("/usr/bin/java", str(jar), runner.FAST_START_FLAGS)
    assert ignore == "-XX:+IgnoreUnrecognizedVMOptions"
    assert flag == f"-XX:ArchiveClassesAtExit={fresh}" and fresh.endswith(".tmp")
    open(fresh, "wb").close()
    runner._keep_archive(fresh, ok=False)                                  # killed: nothing kept
    assert not list((tmp_path / "cache" / "kverify").iterdir())
    assert runner.class_archive_flags("/usr/bin/java", str(jar), runner.FAST_START_FLAGS)[1] == fresh
    open(fresh, "wb").close()
    runner._keep_archive(fresh, ok=True)
    (_, flag), again = runner.class_archive_flags("/usr/bin/java", str(jar), runner.FAST_START_FLAGS)
    kept = fresh.rsplit(".", 3)[0]
    assert again is None and flag == f"-XX:SharedArchiveFile={kept}" and os.path.isfile(kept)
    assert os.path.basename(kept).startswith("tla2tools-") and kept.endswith(".jsa")
    jar.write_bytes(b"another jar")                                       # a changed jar: another archive
    assert runner.class_archive_flags("/usr/bin/java", str(jar), runner.FAST_START_FLAGS)[1] is not None
    assert runner.class_archive_flags("/usr/bin/java", str(jar), runner.BENCH_FLAGS) == ([], None)
    monkeypatch.setenv("KVERIFY_TLC_CDS", "0")
    assert runner.class_archive_flags("/usr/bin/java", str(jar), runner.FAST_START_FLAGS) == ([], None)
