"""Which checks of a `kverify verify` profile can see a mutation of a given line of `impl/`.

Why: running a whole profile per mutant is what makes a mutation benchmark unaffordable (ci: minutes of
CPU per mutant). A check that never executes a line cannot observe a mutation of that line: its run is
deterministic (fixed seed, count budgets) and identical on the mutant. So each check is run ONCE under
coverage.py on the unmutated tree (one process per check: import-time lines such as module constants,
`def` lines and class bodies are recorded exactly for the checks that import the module), and a mutant
is then judged by the checks that executed the statement it changes, and only by them. These runs are
also the benchmark's baseline: every check's verdict on the unmutated tree is recorded, and a check that
FAILs there makes a kill rate meaningless.

A mutated line is "executed by" a check when the check executed any line of the innermost statement
holding it (a compound statement's header only: `if`/`while`/`for`/`with`/`def` lines, decorators
included); a line outside every statement falls back to "any line of the file" (imported at all).
Checks whose Python code runs in processes coverage cannot follow are mapped through `TWINS`.
"""
from __future__ import annotations

import ast
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys

# A check whose work runs in processes coverage.py does not follow (Spark's Python workers), mapped to an
# in-process check that builds the same model: spark:group walks the `group` model (model/group.py, which
# imports no impl module), exactly what walk:group runs in process.
TWINS = {"spark:group": "walk:group"}


def statement_lines(source: str, line: int) -> range:
    """The lines whose execution means the statement holding `line` ran (see the module docstring)."""
    tree = ast.parse(source)
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = body[0].lineno - 1           # a compound statement: its header (and decorators)
        if first <= line <= max(first, last) and (best is None or (max(first, last) - first) < (best[1] - best[0])):
            best = (first, max(first, last))
    return range(best[0], best[1] + 1) if best else range(0)


def enclosing_function(source: str, line: int) -> str:
    """Qualified name (Class.method, outer.inner) of the innermost def holding `line`; "" at module level."""
    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    node.lineno <= line <= node.end_lineno:
                name = prefix + node.name
                inner = walk(node.body, name + ".")
                return inner or (name if not isinstance(node, ast.ClassDef) else "")
        return ""
    return walk(ast.parse(source).body, "")


def changed_lines(original: str, mutated: str) -> list:
    """1-based lines of `original` that the mutation replaced or deleted (or the line an insertion follows)."""
    out = []
    sm = difflib.SequenceMatcher(a=original.splitlines(), b=mutated.splitlines(), autojunk=False)
    for tag, i1, i2, _j1, _j2 in sm.get_opcodes():
        if tag != "equal":
            out.extend(range(i1 + 1, i2 + 1) if i2 > i1 else [max(i1, 1)])
    return out


def checks_executing(cov_map: dict, rel_path: str, source: str, lines: list) -> list:
    """The checks (in `cov_map`'s order) that executed a statement holding one of `lines` of `rel_path`."""
    wanted = set()
    for ln in lines:
        region = statement_lines(source, ln)
        wanted.update(region if len(region) else ())
    out = []
    for check, files in cov_map.items():
        ran = set(files.get(rel_path, ()))
        if (ran & wanted) if wanted else ran:
            out.append(check)
    return out


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def check_names(venv_python: str, work: str, profile: str) -> list:
    code = ("from kverify.suite import plan; import sys; "
            f"print('\\n'.join(c.name for c in plan({profile!r})))")
    out = subprocess.run([venv_python, "-c", code], cwd=work, check=True, capture_output=True, text=True).stdout
    return [n for n in out.splitlines() if n]


# Runs `kverify` as `python -m kverify.cli` does and, at exit, lists the files of the modules the process loaded.
# Forked workers (the z3 check's) end through os._exit, which skips atexit: they list theirs there.
RUNNER = """import atexit, importlib.util, json, os, runpy, sys
MAIN = importlib.util.find_spec("kverify.cli").origin      # run as __main__: not in sys.modules at exit
def _loaded():
    with open(os.path.join(os.environ["KVERIFY_MAP_LOADED"], f"loaded-{os.getpid()}.json"), "w") as fh:
        json.dump(sorted({os.path.realpath(m.__file__) for m in list(sys.modules.values())
                          if isinstance(getattr(m, "__file__", None), str)} | {os.path.realpath(MAIN)}), fh)
def _exit(code, _real=os._exit):
    try:
        _loaded()
    finally:
        _real(code)
os._exit = _exit
atexit.register(_loaded)
sys.argv[0] = "kverify"
runpy.run_module("kverify.cli", run_name="__main__", alter_sys=True)
"""


def _coverage_run(venv_python: str, work: str, profile: str, seed: int, check: str, data_dir: str):
    shutil.rmtree(data_dir, ignore_errors=True)          # no data of an earlier build in the same copy
    os.makedirs(data_dir)
    rc = os.path.join(data_dir, ".coveragerc")
    with open(rc, "w") as fh:
        fh.write(f"[run]\nparallel = True\nconcurrency = multiprocessing\nsource = {os.path.join(work, 'impl')}\n"
                 f"data_file = {os.path.join(data_dir, '.coverage')}\n")
    runner = os.path.join(data_dir, "run_kverify.py")
    with open(runner, "w") as fh:
        fh.write(RUNNER)
    cmd = [venv_python, "-m", "coverage", "run", f"--rcfile={rc}", runner, "verify", "--profile", profile,
           "--seed", str(seed), "--only", check + "$", "--out", os.path.join(data_dir, "verify-out"), "--json"]
    env = dict(os.environ, COVERAGE_PROCESS_START=rc, KVERIFY_MAP_LOADED=data_dir)
    return subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True), rc


def _lines_of(venv_python: str, work: str, rc: str, data_dir: str) -> dict:
    subprocess.run([venv_python, "-m", "coverage", "combine", f"--rcfile={rc}", "-q"], cwd=work, check=True,
                   capture_output=True)
    code = ("import coverage, json, sys; d = coverage.CoverageData(basename=sys.argv[1]); d.read(); "
            "print(json.dumps({f: sorted(d.lines(f) or ()) for f in d.measured_files()}))")
    out = subprocess.run([venv_python, "-c", code, os.path.join(data_dir, ".coverage")], cwd=data_dir, check=True,
                         capture_output=True, text=True).stdout
    impl = os.path.realpath(os.path.join(work, "impl"))
    return {os.path.relpath(os.path.realpath(f), work): lines for f, lines in json.loads(out).items()
            if os.path.realpath(f).startswith(impl + os.sep)}


def _sha(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def _loaded_files(work: str, data_dir: str) -> dict:
    """{path in the tree: content hash} of the tree's Python files the check's process loaded (not the venv's)."""
    files = set()
    for name in os.listdir(data_dir):
        if name.startswith("loaded-") and name.endswith(".json"):
            with open(os.path.join(data_dir, name)) as fh:
                files.update(json.load(fh))
    top = os.path.realpath(work) + os.sep
    venv = os.path.join(top, ".venv") + os.sep
    return {os.path.relpath(f, top): _sha(f) for f in files
            if f.startswith(top) and not f.startswith(venv) and os.path.isfile(f)}


def reusable(old: dict, check: str, global_key: str, work: str) -> bool:
    """Whether `old` (an earlier map of the same profile and seed) still says what `check` executes in this tree:
    same global key (the names of the tree's Python files, the contents of its other inputs: a new module or a
    changed scenario can change what any check discovers) and every Python file the check loaded unchanged. The
    check's run is deterministic, so it then executes the same lines of impl/ (a module it did not load cannot run;
    one that would now be loaded is imported by a file that changed)."""
    loaded = old.get("loaded", {}).get(check)
    if old.get("global") != global_key or not loaded or check not in old.get("checks", {}):
        return False
    for rel, digest in loaded.items():
        path = os.path.join(work, rel)
        if not os.path.isfile(path) or _sha(path) != digest:
            return False
    return True


def build(venv_python: str, work: str, profile: str, seed: int, jobs: int = 1, log=print, reuse=None,
          global_key: str = "") -> dict:
    """{"checks": {check: {"impl/x.py": [lines]}}, "verdicts": {check: verdict}, "loaded": {check: {file: hash}},
    "global": global_key, "cpu": {check: CPU seconds under coverage}}: one coverage run per check, `jobs` at a
    time, in the profile's order; a check that `reusable` says an earlier map `reuse` still describes is taken
    from it instead of run."""
    names = check_names(venv_python, work, profile)
    root = os.path.join(work, "coverage-map", profile)
    lines, verdicts, loaded, cpu = {}, {}, {}, {}
    for name in names:
        if reuse and name not in TWINS and reusable(reuse, name, global_key, work):
            lines[name], verdicts[name] = reuse["checks"][name], reuse["verdicts"][name]
            loaded[name] = reuse["loaded"][name]
            if name in reuse.get("cpu", {}):
                cpu[name] = reuse["cpu"][name]
            log(f"  map {profile}: {name:<42} {verdicts[name]:<13} (unchanged: taken from the earlier map)")
    pending, running = [n for n in names if n not in TWINS and n not in lines], []
    while pending or running:
        while pending and len(running) < jobs:
            name = pending.pop(0)
            d = os.path.join(root, _safe(name))
            proc, rc = _coverage_run(venv_python, work, profile, seed, name, d)
            running.append((name, proc, rc, d))
        name, proc, rc, d = running.pop(0)
        out = proc.stdout.read()
        _pid, status, usage = os.wait4(proc.pid, 0)          # this check's CPU, its worker processes included
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu[name] = round(usage.ru_utime + usage.ru_stime, 2)
        try:
            verdicts[name] = json.loads(out)["checks"][0]["verdict"]
        except (ValueError, KeyError, IndexError):
            verdicts[name] = f"no summary (exit {proc.returncode})"
        lines[name] = _lines_of(venv_python, work, rc, d)
        loaded[name] = _loaded_files(work, d)
        log(f"  map {profile}: {name:<42} {verdicts[name]:<13} {sum(map(len, lines[name].values())):>6} impl lines")
    for name, twin in TWINS.items():
        if name in names:
            lines[name], verdicts[name] = lines.get(twin, {}), f"(as {twin})"
            if twin in cpu:
                cpu[name] = cpu[twin]
    return {"profile": profile, "seed": seed, "checks": {n: lines[n] for n in names}, "verdicts": verdicts,
            "loaded": loaded, "global": global_key, "cpu": cpu}


if __name__ == "__main__":        # print the checks that execute FILE:LINE, from a map kept by bench/mutation.py
    with open(sys.argv[1]) as fh:
        m = json.load(fh)["checks"]
    rel, ln = sys.argv[2].rsplit(":", 1)
    with open(rel) as fh:
        print(checks_executing(m, rel, fh.read(), [int(ln)]))
