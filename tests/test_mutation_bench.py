"""The pieces bench/mutation.py relies on to judge a mutant by the checks that execute it, and nothing less:
the statement a mutated line belongs to, the lines a mutation changes, the check selection from a coverage
map, `kverify verify --only NAME$` (exact) and `--fail-fast`, and the committed list of equivalent mutants."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import mutation_map as M  # noqa: E402

SRC = '''\
LIMIT = 3


@decorate(
    2)
def f(a,
      b):
    if (a <= LIMIT and
            b):
        return 1
    x = [a,
         b]
    return x
'''


def test_a_mutated_line_maps_to_its_whole_statement_or_header():
    assert list(M.statement_lines(SRC, 1)) == [1]
    assert list(M.statement_lines(SRC, 5)) == [4, 5, 6, 7]         # decorator argument: the def header runs it
    assert list(M.statement_lines(SRC, 9)) == [8, 9]                # second line of an `if` condition
    assert list(M.statement_lines(SRC, 10)) == [10]                 # the body, not the header
    assert list(M.statement_lines(SRC, 12)) == [11, 12]
    assert list(M.statement_lines(SRC, 2)) == []                    # a blank line: no statement


def test_changed_lines_name_the_original_lines():
    mutated = SRC.replace("a <= LIMIT", "a < LIMIT")
    assert M.changed_lines(SRC, mutated) == [8]
    assert M.changed_lines(SRC, SRC.replace("    return x\n", "")) == [13]


def test_only_the_checks_that_executed_the_statement_are_selected():
    cov = {"a": {"impl/m.py": [1, 4, 8]}, "b": {"impl/m.py": [1, 10]}, "c": {"impl/other.py": [1]},
           "d": {"impl/m.py": [9]}}
    assert M.checks_executing(cov, "impl/m.py", SRC, [9]) == ["a", "d"]     # the `if` ran in a and in d
    assert M.checks_executing(cov, "impl/m.py", SRC, [10]) == ["b"]
    assert M.checks_executing(cov, "impl/m.py", SRC, [13]) == []            # nobody returned x: unreached
    assert M.checks_executing(cov, "impl/m.py", SRC, [2]) == ["a", "b", "d"]  # no statement: importers


def kv(*args, cwd):
    return subprocess.run([sys.executable, "-m", "kverify", *args], capture_output=True, text=True, cwd=cwd)


def test_verify_only_exact_name_and_fail_fast(tmp_path):
    out = tmp_path / "r"
    r = kv("verify", "--profile", "quick", "--seed", "1", "--out", str(out), "--only", "walk:group",
           "--behaviour", "stale-generation-commit", "--fail-fast", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    checks = {c["name"]: c for c in json.loads((out / "summary.json").read_text())["checks"]}
    assert checks["walk:group"]["verdict"] == "FAIL"
    assert checks["walk:group-world"]["verdict"] == "INCONCLUSIVE"
    assert checks["walk:group-world"]["summary"] == "not run: --fail-fast"
    r = kv("verify", "--profile", "quick", "--seed", "1", "--out", str(out), "--only", "walk:group$", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [c["name"] for c in json.loads((out / "summary.json").read_text())["checks"]] == ["walk:group"]
    r = kv("verify", "--only", "walk:group$", "--fail-fast", "--baseline", cwd=tmp_path)
    assert r.returncode == 2 and "--fail-fast" in r.stderr


def test_every_listed_equivalent_mutant_names_a_real_line_and_a_reason():
    import mutation

    for e in mutation.load_equivalents():
        with open(os.path.join(ROOT, e["file"]), encoding="utf-8") as fh:
            lines = [ln.strip() for ln in fh]
        assert e["line"] in lines, f"stale entry (line no longer in {e['file']}): {e['line']}"
        assert e["mutant"] != e["line"] and len(e["reason"]) > 40
        if "function" in e:
            source = "".join(open(os.path.join(ROOT, e["file"]), encoding="utf-8"))
            where = {M.enclosing_function(source, n) for n, ln in enumerate(lines, 1) if ln == e["line"]}
            assert e["function"] in where, f"stale entry ({e['line']} not in {e['function']})"


def test_a_not_protocol_entry_is_judged_as_its_own_column():
    """Code in impl/ that is no protocol logic (a test-side oracle, a dead import fallback) is listed with kind
    "not-protocol", which load_equivalents accepts beside "equivalent" (and nothing else)."""
    import mutation

    kinds = [e.get("kind", "equivalent") for e in mutation.load_equivalents()]
    assert set(kinds) == {"equivalent", "not-protocol"} and kinds.count("not-protocol") >= 5


def _row(col, file="impl/coordinator/group.py", line=1):
    return {"file": file, "lineno": line, "operator": "NumberReplacer", "occurrence": line, "line": "a = 1",
            "mutant": "a = 2", "column": col, "detail": ""}


def test_figures_count_timeouts_as_kills_unreached_as_survivors_and_leave_out_equivalents_and_invalid():
    import mutation_report as mutation

    rows = [_row("killed"), _row("timeout"), _row("survived"), _row("unreached"), _row("equivalent"), _row("error"),
            _row("incompetent"), _row("not-protocol")]
    f = mutation.figures(rows)
    assert (f["dead"], f["judged"], f["timeout"], f["unreached"], f["not-protocol"]) == (2, 4, 1, 1, 1)
    assert f["rate"] == 50.0
    assert mutation.component(_row("killed", "impl/replication/replica.py")) == "replication"


def test_previous_rows_carry_only_kills_of_the_same_mutant(tmp_path, capsys):
    import mutation
    import mutation_report

    rows = [_row("killed", line=1), _row("survived", line=2), _row("unreached", line=3)]
    assert mutation_report.carried_kill(rows, _row("survived", line=1)) is rows[0]
    assert mutation_report.carried_kill(rows, _row("survived", line=2)) is None
    assert mutation_report.carried_kill(rows, dict(_row("survived", line=1), mutant="a = 3")) is None  # impl/ changed
    path = tmp_path / "rows.json"
    mutation_report.save_rows(str(path), type("A", (), {"profile": "quick", "seed": 7, "sample": 3})(), rows)
    assert mutation.main(["--from-rows", str(path), "--markdown", str(tmp_path / "s.md")]) == 0
    page = (tmp_path / "s.md").read_text()
    assert "33.3%" in page and ":2:NumberReplacer:2" in page and ":1:NumberReplacer:1" not in page
    assert "kill rate 1/3" in capsys.readouterr().out


def test_the_map_key_covers_what_checks_read_and_nothing_else():
    import mutation

    assert mutation.map_input("impl/replication/replica.py") and mutation.map_input("tests/scenarios/x.json")
    assert not any(map(mutation.map_input, ("tests/test_x.py", "docs/a.txt", "bench/mutation.py", "README.md")))


def test_a_map_entry_is_reused_only_while_every_file_its_check_loaded_is_unchanged(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")
    data = tmp_path / "data"
    data.mkdir()
    runner = data / "run.py"                   # the runner's listing, on a stand-in for kverify.cli
    runner.write_text(M.RUNNER.replace("kverify.cli", "a"))
    subprocess.run([sys.executable, str(runner)], cwd=tmp_path, check=True,
                   env=dict(os.environ, KVERIFY_MAP_LOADED=str(data), PYTHONPATH=str(tmp_path)))
    loaded = M._loaded_files(str(tmp_path), str(data))
    assert set(loaded) == {"a.py"}, loaded                # b.py was not loaded: its edits do not matter
    old = {"checks": {"c": {}}, "verdicts": {"c": "PASS"}, "loaded": {"c": loaded}, "global": "g"}
    (tmp_path / "b.py").write_text("y = 2\n")
    assert M.reusable(old, "c", "g", str(tmp_path))
    assert not M.reusable(old, "c", "other global key", str(tmp_path))
    assert not M.reusable(old, "d", "g", str(tmp_path))
    (tmp_path / "a.py").write_text("x = 2\n")
    assert not M.reusable(old, "c", "g", str(tmp_path))


def test_an_equivalent_entry_can_name_its_function_when_a_line_is_written_twice():
    import mutation

    assert M.enclosing_function(SRC, 10) == "f" and M.enclosing_function(SRC, 1) == ""
    assert M.enclosing_function("class C:\n    def m(self):\n        def g():\n            return 1\n", 4) == "C.m.g"
    d = dict(_row("survived"), function="C.keep")
    entry = {"file": d["file"], "operator": d["operator"], "line": d["line"], "mutant": d["mutant"], "reason": "r"}
    assert mutation.is_listed(d, [entry]) is entry
    assert mutation.is_listed(d, [dict(entry, function="C.keep")]) is not None
    assert mutation.is_listed(d, [dict(entry, function="C.other")]) is None


def test_a_mutant_run_is_stopped_by_its_cpu_budget_not_by_the_clock():
    import mutation

    done, spent, _ = mutation.run_with_cpu_budget([sys.executable, "-c", "print('ok')"], ROOT, 30)
    assert done.returncode == 0 and done.stdout.strip() == "ok" and spent < 30
    loop = "import os\nos.fork()\nwhile True: pass\n"          # two busy processes: the group's CPU is summed
    done, spent, _ = mutation.run_with_cpu_budget([sys.executable, "-c", loop], ROOT, 1.0)
    assert done.returncode is None and spent > 1.0


def test_a_mutant_run_growing_without_bound_is_stopped_by_the_memory_cap():
    import mutation

    grow = "import time\nx = []\nwhile True:\n    x.append(bytearray(2**20))\n    time.sleep(0.001)\n"
    done, spent, peak = mutation.run_with_cpu_budget([sys.executable, "-c", grow], ROOT, 60, memory_cap=200 * 2**20)
    assert done.returncode is None and peak > 200 * 2**20 and spent < 60
