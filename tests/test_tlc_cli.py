"""`kverify tlc` error paths: one line on stderr and exit 2, with or without Java installed."""
from __future__ import annotations


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
