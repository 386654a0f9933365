"""Which functions of the reference implementation (`impl/`) a `kverify verify` profile executes.

Why: a gate only guards the code it runs. A bug planted in code no check executes (for instance the
partition reassignment step, impl/replication/controller_ops.py `reassignment_step`, before the
replication world reached it) passes every profile. This benchmark runs a profile under coverage.py
(worker processes included), maps executed lines onto the functions of `impl/`, and prints, per
component and in total, how many functions ran; then every function that did not run, except those in
`EXCUSED` (each with the reason it is not a gate's business), so the list is the work left.

Usage: .venv/bin/python bench/coverage.py [--profile quick|ci] [--seed S] [--keep DIR] [--list] [--only PREFIX]
       .venv/bin/python bench/coverage.py --report-only DIR [--list]   (the data of an earlier --keep DIR)
Exit 0 always (a benchmark prints figures; it does not gate).
"""
from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMPL = os.path.join(ROOT, "impl")

# functions no gate needs to execute, each with its reason (qualified as component/module.py:Class.function;
# `module.py:*` excuses a whole module, `*.__repr__` every __repr__). Only code that is not protocol logic is
# excused here; protocol code that no profile runs yet is listed by --list as the work left (see the report).
_DRIVER = "a test/benchmark driver around the component, not protocol logic (tests/ exercise it)"
EXCUSED = {
    "coordinator/harness.py:*": _DRIVER,
    "member/harness.py:*": _DRIVER,
    "consumer/harness.py:*": _DRIVER,
    "fifo_driver.py:*": _DRIVER + " (the FIFO delivery the member and consumer harnesses share)",
    "*.__repr__": "debugging text of a value; no protocol decision reads it",
    "replication/steps.py:enabled_steps": "the generic step list of tests and bench/replication_steps.py; worlds list "
                                          "their own actions and share only `controller_upkeep` with it",
    "replication/steps.py:apply": "the generic step dispatcher of tests and bench/replication_steps.py "
                                  "(see enabled_steps)",
    "replication/invariant_view.py:violations": "a one-call helper for tests/test_replication_invariants.py; "
                                                "worlds bind the same invariant objects through repl_view/epoch_view",
    "replication/cluster.py:Cluster.missing_acked": "repl's own test-side oracle (tests/test_replication_*); "
                                                    "gates judge with invariants/replication.py",
    "replication/cluster.py:Cluster.inconsistent_reads": "repl's own test-side oracle (see missing_acked)",
    "replication/cluster.py:Cluster.epoch_cache_faults": "repl's own test-side oracle (see missing_acked)",
    "replication/cluster.py:Cluster.log_mismatches": "repl's own test-side oracle (see missing_acked)",
    "replication/offsets_topic.py:OffsetsTopicWorld.run": "a scripted driver for tests (offsets-world steps the "
                                                          "cluster itself)",
    "replication/offsets_topic.py:OffsetsTopicWorld.replicate_all": "a scripted driver for tests (see run)",
    "replication/offsets_topic.py:OffsetsTopicWorld.advance": "a scripted driver for tests (see run)",
}


def excused(key: str) -> bool:
    """Is `component/module.py:qualified.name` excused (exactly, by its module's `*`, or as a __repr__)?"""
    module, _, qual = key.partition(":")
    return key in EXCUSED or f"{module}:*" in EXCUSED or (qual.endswith(".__repr__") and "*.__repr__" in EXCUSED)


def functions_of(path: str) -> list:
    """[(qualified name, first body line, last line)] of every function and method in a module."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = child.body
                first = body[0]
                if (isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
                        and isinstance(first.value.value, str) and len(body) > 1):
                    first = body[1]             # a docstring is not executed code
                out.append((prefix + child.name, first.lineno, child.end_lineno))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(tree, "")
    return out


def run_profile(profile: str, seed: int | None, data_dir: str, only=()) -> int:
    rc = os.path.join(data_dir, ".coveragerc")
    with open(rc, "w") as fh:
        fh.write(f"[run]\nparallel = True\nconcurrency = multiprocessing\nsource = {IMPL}\n"
                 f"data_file = {os.path.join(data_dir, '.coverage')}\n")
    out_dir = os.path.join(data_dir, "verify-out")
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "kverify.cli", "verify",
           "--profile", profile, "--out", out_dir]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    for prefix in only:
        cmd += ["--only", prefix]
    env = dict(os.environ, COVERAGE_PROCESS_START=rc)
    print("$ " + " ".join(cmd[3:]), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env)
    subprocess.run([sys.executable, "-m", "coverage", "combine", f"--rcfile={rc}", "-q"], cwd=ROOT, check=True)
    return proc.returncode


def _coverage_module():
    """coverage.py itself: run as `python bench/coverage.py`, this file's folder comes first on sys.path
    and `import coverage` would find this very script."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        sys.modules.pop("coverage", None)
        import coverage
    finally:
        sys.path[:] = saved
    return coverage


def executed_lines(data_dir: str) -> dict:
    coverage = _coverage_module()

    data = coverage.CoverageData(basename=os.path.join(data_dir, ".coverage"))
    data.read()
    return {os.path.realpath(f): set(data.lines(f) or ()) for f in data.measured_files()}


def report(lines_by_file: dict, show_list: bool) -> None:
    per_component = defaultdict(lambda: [0, 0])
    missing = []
    n_excused = 0
    for dirpath, _dirs, files in sorted(os.walk(IMPL)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, IMPL)
            component = rel.split(os.sep)[0] if os.sep in rel else "(top)"
            ran = lines_by_file.get(os.path.realpath(path), set())
            for qual, first, last in functions_of(path):
                key = f"{rel}:{qual}"
                hit = any(first <= ln <= last for ln in ran)
                per_component[component][1] += 1
                if hit:
                    per_component[component][0] += 1
                elif excused(key):
                    n_excused += 1
                else:
                    missing.append(key)
    total_hit = sum(h for h, _ in per_component.values())
    total = sum(n for _, n in per_component.values())
    print(f"{'component':<16}{'functions run':>16}")
    for comp, (hit, n) in sorted(per_component.items()):
        print(f"{comp:<16}{hit:>8} / {n:<5} {100.0 * hit / max(n, 1):5.1f}%")
    print(f"{'total':<16}{total_hit:>8} / {total:<5} {100.0 * total_hit / max(total, 1):5.1f}%")
    print(f"not run but excused (reasons in bench/coverage.py EXCUSED): {n_excused}; not run and not excused: "
          f"{len(missing)}")
    if show_list:
        for key in missing:
            print(f"  not run: {key}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick", choices=("quick", "ci", "deep"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", metavar="DIR", help="keep the coverage data here (default: a temporary folder)")
    ap.add_argument("--list", action="store_true", help="list every function that did not run")
    ap.add_argument("--report-only", metavar="DIR", help="do not run a profile: report the data kept in DIR by --keep")
    ap.add_argument("--only", action="append", default=[], metavar="PREFIX",
                    help="run only the profile's checks whose name starts with PREFIX (repeatable; the figure is "
                         "then that of those checks, not of the profile)")
    args = ap.parse_args(argv)
    if args.report_only:
        report(executed_lines(args.report_only), args.list)
        return 0
    data_dir = args.keep or tempfile.mkdtemp(prefix="kverify-coverage-")
    os.makedirs(data_dir, exist_ok=True)
    rc = run_profile(args.profile, args.seed, data_dir, args.only)
    print(f"kverify verify --profile {args.profile} exited {rc}")
    report(executed_lines(data_dir), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
