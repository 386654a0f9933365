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
