"""bench/vs_tlc.py: its command line and its large bounds, without running TLC or a search.

The benchmark itself takes an hour (>= 1 M states per spec on both engines); these tests check that
it refuses bad input, says (never silently skips) that the time-to-bug rows were not run without a
local copy of the public specs, and that each large bound is a shipped .cfg marked large whose
constants are a bound of its model.
"""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from kverify.tla import cfg as cfgmod
from kverify.tla import models

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("vs_tlc", os.path.join(ROOT, "bench", "vs_tlc.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vs_tlc"] = mod          # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_bug_rows_are_reported_as_not_run_without_the_public_specs(bench, capsys, monkeypatch):
    monkeypatch.setattr(bench, "bug_rows", lambda *a: pytest.fail("the bug rows ran without --kafka-specification"))
    assert bench.main(["--only", "bugs"]) == 0
    out = capsys.readouterr().out
    assert "time-to-bug rows: NOT RUN: give --kafka-specification DIR" in out
    assert "large-bound rows: not run (--only)" in out


def test_missing_or_incomplete_public_spec_copy_is_a_usage_error(bench, capsys, tmp_path):
    assert bench.main(["--only", "bugs", "--kafka-specification", str(tmp_path / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "Kip101.tla").write_text("---- MODULE Kip101 ----\n====\n")
    assert bench.main(["--only", "bugs", "--kafka-specification", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "KafkaTruncateToHighWatermark.tla" in err and "Kip101.tla" not in err.split(": no ", 1)[1]


def test_unknown_section_or_model_is_a_usage_error(bench, capsys):
    assert bench.main(["--only", "small,huge"]) == 2
    assert "unknown section(s) huge" in capsys.readouterr().err
    assert bench.main(["--only", "large", "--model", "nosuch"]) == 2
    assert "no large bound" in capsys.readouterr().err


def test_quick_runs_only_the_small_section(bench):
    args = bench.parse_args(["--quick"])
    assert args.sections == ("small",)
    assert bench.parse_args([]).sections == ("small", "large", "bugs")


def test_large_bounds_are_shipped_marked_large_and_parse(bench):
    assert sorted(m for m, _ in bench.LARGE) == sorted(models.SPEC_OF)
    for model, name in bench.LARGE:
        path = os.path.join(os.path.dirname(models.spec_file(model)), name)
        assert models.is_large(path), name
        assert path not in models.small_cfg_files(model)
        b = cfgmod.bound(model, cfgmod.parse_file(path))
        assert not b.symmetry and not b.behaviours, name


def test_bug_cfg_names_their_constants(bench, tmp_path):
    path, lines = bench.bug_cfg(bench.BUGS[2], str(tmp_path))
    text = open(path, encoding="utf-8").read()
    assert "Replicas = {r1, r2, r3}" in text and "INVARIANT StrongIsr" in text
    assert {b.behaviour for b in bench.BUGS} == {"truncate-to-hw", "ofle-offset-only", "no-fetch-epoch-fencing"}
