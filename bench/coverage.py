"""Which functions of the reference implementation (`impl/`) a `kverify verify` profile executes.

Why: a gate only guards the code it runs. A bug planted in code no check executes (for instance the
partition reassignment step, impl/replication/controller_ops.py `reassignment_step`, before the
replication world reached it) passes every profile. This benchmark runs a profile under coverage.py
(worker processes included), maps executed lines onto the functions of `impl/`, and prints, per
component and in total, how many functions ran; then every function that did not run, except those in
`EXCUSED` (each with the reason it is not a gate's business), so the list is the work left.

Usage: .venv/bin/python bench/coverage.py [--profile quick|ci] [--seed S] [--keep DIR] [--list]
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

# functions no gate needs to execute, each with its reason (qualified as component/module.py:Class.function)
EXCUSED = {
}


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


def run_profile(profile: str, seed: int | None, data_dir: str) -> int:
    rc = os.path.join(data_dir, ".coveragerc")
    with open(rc, "w") as fh:
        fh.write(f"[run]\nparallel = True\nconcurrency = multiprocessing\nsource = {IMPL}\n"
                 f"data_file = {os.path.join(data_dir, '.coverage')}\n")
    out_dir = os.path.join(data_dir, "verify-out")
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "kverify.cli", "verify",
           "--profile", profile, "--out", out_dir]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    env = dict(os.environ, COVERAGE_PROCESS_START=rc)
    print("$ " + " ".join(cmd[3:]), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env)
    subprocess.run([sys.executable, "-m", "coverage", "combine", f"--rcfile={rc}", "-q"], cwd=ROOT, check=True)
    return proc.returncode


def executed_lines(data_dir: str) -> dict:
    import coverage

    data = coverage.CoverageData(basename=os.path.join(data_dir, ".coverage"))
    data.read()
    return {os.path.realpath(f): set(data.lines(f) or ()) for f in data.measured_files()}


def report(lines_by_file: dict, show_list: bool) -> None:
    per_component = defaultdict(lambda: [0, 0])
    missing = []
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
                elif key not in EXCUSED:
                    missing.append(key)
    total_hit = sum(h for h, _ in per_component.values())
    total = sum(n for _, n in per_component.values())
    print(f"{'component':<16}{'functions run':>16}")
    for comp, (hit, n) in sorted(per_component.items()):
        print(f"{comp:<16}{hit:>8} / {n:<5} {100.0 * hit / max(n, 1):5.1f}%")
    print(f"{'total':<16}{total_hit:>8} / {total:<5} {100.0 * total_hit / max(total, 1):5.1f}%")
    print(f"excused (with reasons in bench/coverage.py): {len(EXCUSED)}; not run and not excused: {len(missing)}")
    if show_list:
        for key in missing:
            print(f"  not run: {key}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick", choices=("quick", "ci", "deep"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", metavar="DIR", help="keep the coverage data here (default: a temporary folder)")
    ap.add_argument("--list", action="store_true", help="list every function that did not run")
    args = ap.parse_args(argv)
    data_dir = args.keep or tempfile.mkdtemp(prefix="kverify-coverage-")
    os.makedirs(data_dir, exist_ok=True)
    rc = run_profile(args.profile, args.seed, data_dir)
    print(f"kverify verify --profile {args.profile} exited {rc}")
    report(executed_lines(data_dir), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
