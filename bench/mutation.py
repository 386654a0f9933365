"""Detection power of `kverify verify`: the kill rate of a seeded random sample of mutants of `impl/`.

Why: a gate is only as good as the bugs it catches. This benchmark lets a maintained mutation tool
(cosmic-ray, from PyPI) plant one small bug at a time in the reference implementation (a flipped
comparison, a changed constant, `and` for `or`, ...) and runs `kverify verify --profile P` on each:
exit 1 (the gate fails) kills the mutant; exit 0 or 3 (nothing failed the gate) lets it survive. It
prints the kill rate and every survivor (file:line, operator, the line before and after), so each can be
killed by a new property or named equivalent in bench/mutation_equivalents.json (with its reason).

Affordable on 2 cores: each check of the profile is run once under coverage.py on the unmutated tree
(bench/mutation_map.py; these runs are also the baseline); a mutant is then judged by
`kverify verify --only CHECK$ ... --fail-fast` over exactly the checks that execute the statement it
changes, in the profile's order, stopping at the first that fails the gate. A mutant no check executes
survives without a run (column `unreached`: its survivors say so). A mutant that is not valid Python (cosmic-ray
writes `x == not 1` for `x == -1`) is `incompetent`: not run, left out of the rate (a crash at import would
otherwise count as a kill). A mutant whose run uses more CPU than its budget (10x what its checks took in the
baseline, at least 60 s; CPU, not wall time, so the load does not decide) is stopped and killed in the rate, as is
usual in mutation testing (an endless loop), but counted in its own column, `timeout` (so is a run whose processes
hold more than MEMORY_CAP resident, a mutant growing without bound, and cosmic-ray's wall `--timeout`, a last resort).
Mutants listed equivalent are left out of the rate's denominator and printed with their reason (not run
unless --run-equivalents; one that is then killed is reported as wrongly listed); an entry of kind "not-protocol"
(test-side code that lives in impl/) is left out the same way but counted in its own column.

Isolation: cosmic-ray edits files in place, so the run happens in a copy of the work tree (tracked and
untracked, not ignored files) with its own virtual environment whose only package is that copy
(editable, no dependencies); the dependencies come from this checkout's .venv through a .pth file. The
checkout itself is never modified. The coverage map is kept in --map-cache, keyed by the profile, the
seed and a hash of the copied tree (docs/, bench/, Markdown and tests/ other than tests/scenarios excluded), so a
second sample reuses it; after an edit, a check is run again only if a file its process loaded changed (or a
Python file was added or removed, or a non-Python input changed): mutation_map.reusable.

Each judged mutant is saved at once in a rows file (--rows; by default in --workdir): `--from-rows` reports a
saved run again (with `--markdown FILE`: the survivors as a Markdown table), and `--previous ROWS` re-judges a
sample on the current tree carrying over its kills (a new property can only turn a survivor into a kill; the
map of the current tree decides which checks run each of the others).

Usage: .venv/bin/python bench/mutation.py [--profile quick|ci] [--sample N] [--seed S] [--workdir DIR]
                                            [--timeout SECONDS] [--jobs N] [--keep-tree] [--module-path impl]
                                            [--mutants FILE:LINE:OPERATOR:OCCURRENCE ...] [--no-map] [--fresh-map]
                                            [--drop-failing]
                                            [--previous ROWS] [--rows FILE] [--markdown FILE] [--from-rows ROWS]
       --keep-tree --mutants ...: re-judge some mutants of the same sample (e.g. the survivors, after a new
       property) in the same copy, with the same map. Killed mutants need no re-run: adding a property can
       only turn a PASS into a FAIL.
Goal (issue 17): the ci profile kills at least 90% of a random sample, the quick profile at least 75%.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutation_map  # noqa: E402  (bench/ is not a package)
from mutation_report import carried_kill, markdown, mutant_key, report, save_rows  # noqa: E402

EQUIVALENTS = os.path.join(ROOT, "bench", "mutation_equivalents.json")
MARK = "kverify-mutant:"          # the test command's output lines the report reads back
PRISTINE = ".pristine"            # the unmutated impl/ inside the work copy


def tracked_files() -> list:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                         capture_output=True).stdout.decode().split("\0")
    return sorted(rel for rel in out if rel and os.path.isfile(os.path.join(ROOT, rel)))


def map_input(rel: str) -> bool:
    """Whether a file can change what a check of `kverify verify` executes: not docs/, bench/, tests/ (except the
    scenarios the conformance checks read) nor Markdown."""
    top = rel.split("/")[0]
    if rel.endswith(".md") or top in ("docs", "bench"):
        return False
    return top != "tests" or rel.startswith("tests/scenarios/")


def tree_hash(files: list) -> str:
    h = hashlib.sha256()
    for rel in files:
        if not map_input(rel):
            continue
        with open(os.path.join(ROOT, rel), "rb") as fh:
            h.update(rel.encode() + b"\0" + hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


def global_key(files: list) -> str:
    """What can change any check's run (see mutation_map.reusable): the names of the tree's Python files (a new
    module can be discovered) and the contents of its other inputs (scenarios, specs, configuration)."""
    h = hashlib.sha256()
    for rel in files:
        if map_input(rel):
            h.update(rel.encode() + b"\0")
            if not rel.endswith(".py"):
                with open(os.path.join(ROOT, rel), "rb") as fh:
                    h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


def earlier_map(cache: str, profile: str, seed: int):
    """The newest map of this profile and seed that records what each check loaded (for mutation_map.reusable)."""
    best = None
    for name in os.listdir(cache):
        if name.startswith(f"{profile}-{seed}-") and name.endswith(".json"):
            path = os.path.join(cache, name)
            if best is None or os.path.getmtime(path) > os.path.getmtime(best):
                best = path
    if best:
        with open(best) as fh:
            data = json.load(fh)
        if data.get("loaded"):
            return best, data
    return None, None


def copy_tree(dst: str, files: list, module_path: str) -> None:
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    for rel in files:
        out = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), out)
    shutil.copytree(os.path.join(dst, module_path), os.path.join(dst, PRISTINE, module_path))


def make_venv(work: str) -> str:
    """A venv holding only the copy of kverify (editable); dependencies from this checkout's .venv."""
    venv = os.path.join(work, ".venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]          # the venv this script runs in
    with open(os.path.join(site, "zz_kverify_deps.pth"), "w") as fh:
        fh.write(ours + "\n")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", work],
                   check=True, cwd=work, capture_output=True)
    return venv


# --- the test command cosmic-ray runs on each mutant --------------------------------------------------------
def as_test_command(work: str) -> int:
    """Find the mutated file (against the pristine copy), run the checks that execute the change, exit 1 if the
    gate fails (killed), 0 otherwise (survived). Prints MARK lines the report reads back."""
    with open(os.path.join(work, "mutation-state.json")) as fh:
        state = json.load(fh)
    cov = None
    if state["map"]:
        with open(state["map"]) as fh:
            cov = json.load(fh)["checks"]
    pristine = os.path.join(work, PRISTINE)
    changed = []
    for dirpath, _dirs, names in os.walk(os.path.join(pristine, state["module_path"])):
        for name in names:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, name), pristine)
                with open(os.path.join(pristine, rel)) as a, open(os.path.join(work, rel)) as b:
                    before, after = a.read(), b.read()
                if before != after:
                    changed.append((rel, before, after))
    if len(changed) != 1:
        print(f"{MARK} error: {len(changed)} mutated files")
        return 2
    rel, before, after = changed[0]
    checks = state["all_checks"] if cov is None else mutation_map.checks_executing(
        cov, rel, before, mutation_map.changed_lines(before, after))
    if not checks:
        print(f"{MARK} unreached (no check executes the mutated statement)")
        return 0
    kverify = os.path.join(work, ".venv", "bin", "kverify")
    cmd = [kverify, "verify", "--profile", state["profile"], "--seed", str(state["seed"]), "--fail-fast",
           "--out", os.path.join(work, "verify-out")] + [a for c in checks for a in ("--only", c + "$")]
    base = state.get("cpu") or {}
    budget = (max(CPU_FLOOR, CPU_FACTOR * sum(base.get(c, 0.0) for c in checks)) if all(c in base for c in checks)
              else CPU_DEFAULT[state["profile"]])
    proc, spent, peak = run_with_cpu_budget(cmd, work, budget)
    failed = [ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("  FAIL ") or (
        state["strict"] and ln.startswith("  INCONCLUSIVE ") and "not run: --fail-fast" not in ln)]
    print(f"{MARK} ran {len(checks)} checks: {' '.join(checks)}")
    if proc.returncode is None and peak > MEMORY_CAP:
        print(f"{MARK} timeout: stopped at {peak / 2**30:.1f} GiB resident, over the memory cap of "
              f"{MEMORY_CAP / 2**30:.0f} GiB (after {spent:.0f} s CPU)")
        return 1
    if proc.returncode is None:
        print(f"{MARK} timeout: stopped after {spent:.0f} s CPU, over its budget of {budget:.0f} s "
              f"({CPU_FACTOR}x its checks' CPU in the baseline, at least {CPU_FLOOR} s)")
        return 1
    if proc.returncode == 1:
        print(f"{MARK} killed-by {failed[0] if failed else '(exit 1: ' + proc.stderr.strip()[-200:] + ')'}")
        return 1
    if proc.returncode in (0, 3):
        return 0
    print(f"{MARK} error: kverify verify exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return 2


# A mutant's run may loop forever (`while x in s` for `while x not in s`). Its budget is CPU time, not wall time (the
# machine's load does not change it): CPU_FACTOR times what its checks took in the baseline (under coverage, which
# is slower than the run itself), at least CPU_FLOOR; without baseline figures (a map of an older bench), a fixed one.
CPU_FACTOR, CPU_FLOOR = 10, 60
CPU_DEFAULT = {"quick": 120, "ci": 900}      # about 2.5x and 3.5x a whole profile (47 s and 258 s CPU)
# A mutant may also grow without bound (`2 ** n` for `2 + n` on a clock): a run whose process tree holds more than
# MEMORY_CAP resident is stopped like one over its CPU budget (column `timeout`), before it swaps the machine.
MEMORY_CAP = 6 * 2**30


def _tree_stats(pid: int, read) -> int:
    """Sum of `read(pid)` over a process and its live descendants (Linux /proc); a process gone meanwhile
    counts 0."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += read(p)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def _ticks(p: int) -> int:
    with open(f"/proc/{p}/stat") as fh:
        f = fh.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in f[11:15])                # utime stime cutime cstime


def _resident(p: int) -> int:
    with open(f"/proc/{p}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and its live descendants."""
    return _tree_stats(pid, _resident)


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process, its reaped children and its live descendants."""
    return _tree_stats(pid, _ticks) / os.sysconf("SC_CLK_TCK")


def run_with_cpu_budget(cmd: list, cwd: str, budget: float, memory_cap: int = None):
    """Run `cmd` (its own process group); kill the group once it has used `budget` CPU seconds or holds more
    than `memory_cap` bytes resident (default MEMORY_CAP). Returns the CompletedProcess (returncode None when
    stopped), the CPU seconds it used and the peak resident bytes seen."""
    import tempfile

    cap = MEMORY_CAP if memory_cap is None else memory_cap
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True, start_new_session=True)
        spent, peak, stopped = 0.0, 0, False
        while proc.poll() is None:
            time.sleep(0.5)
            spent = max(spent, tree_cpu(proc.pid))
            peak = max(peak, tree_rss(proc.pid))
            if spent > budget or peak > cap:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                stopped = True
        out.seek(0)
        err.seek(0)
        return (subprocess.CompletedProcess(cmd, None if stopped else proc.returncode, out.read(), err.read()),
                spent, peak)


# --- sampling and running -------------------------------------------------------------------------------------
def load_equivalents() -> list:
    with open(EQUIVALENTS, encoding="utf-8") as fh:
        data = json.load(fh)
    for e in data["equivalent"]:
        missing = {"file", "operator", "line", "mutant", "reason"} - set(e)
        if missing:
            raise SystemExit(f"{EQUIVALENTS}: an entry lacks {sorted(missing)}: {e}")
        if e.get("kind", "equivalent") not in ("equivalent", "not-protocol"):
            raise SystemExit(f"{EQUIVALENTS}: kind must be equivalent or not-protocol: {e}")
    return data["equivalent"]


def describe(work: str, spec) -> dict:
    """file, line, operator and the changed line before/after, computed with cosmic-ray's own mutator."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    path = os.path.join(work, PRISTINE, str(spec.module_path))
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    op = cosmic_ray.plugins.get_operator(spec.operator_name)(**(spec.operator_args or {}))
    mutated = mutate_code(source, op, spec.occurrence) or source
    lines = mutation_map.changed_lines(source, mutated)
    a, b = source.splitlines(), mutated.splitlines()
    first = lines[0] if lines else spec.start_pos[0]
    after = b[first - 1].strip() if first - 1 < len(b) and len(a) == len(b) else "(lines removed or added)"
    try:
        compile(mutated, path, "exec")
        broken = ""
    except SyntaxError as e:                     # e.g. `donor == not 1`: the program does not exist, nothing to kill
        broken = f"SyntaxError: {e.msg}"
    return {"file": str(spec.module_path), "lineno": first, "operator": spec.operator_name.split("/")[-1],
            "occurrence": spec.occurrence, "line": a[first - 1].strip() if first - 1 < len(a) else "",
            "mutant": after, "function": mutation_map.enclosing_function(source, first), "broken": broken}


def is_listed(d: dict, equivalents: list):
    """The entry naming this mutant: same file, operator, text before and after, and (when the entry names one,
    for a line written the same way in two places) the same enclosing function."""
    for e in equivalents:
        if (e["file"], e["operator"], e["line"], e["mutant"]) == (d["file"], d["operator"], d["line"], d["mutant"]) \
                and e.get("function", d.get("function")) == d.get("function"):
            return e
    return None


def sample(session: str, n: int, seed: int) -> tuple:
    """A seeded random sample of `n` of the session's work items, in a stable order (file, position, operator)."""
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(session, WorkDB.Mode.open) as db:
        items = sorted(db.work_items, key=lambda w: (str(w.mutations[0].module_path), w.mutations[0].start_pos,
                                                             w.mutations[0].operator_name, w.mutations[0].occurrence))
    return random.Random(seed).sample(items, min(n, len(items))), len(items)


def classify(result) -> tuple:
    """(column, detail) of a cosmic-ray WorkResult from our test command's output."""
    from cosmic_ray.work_item import TestOutcome

    out = result.output or ""
    marks = [ln[len(MARK):].strip() for ln in out.splitlines() if ln.startswith(MARK)]
    if result.test_outcome == TestOutcome.KILLED and out == "timeout":
        return "timeout", "cosmic-ray's wall-clock --timeout"
    if result.test_outcome == TestOutcome.KILLED and any(m.startswith("timeout") for m in marks):
        return "timeout", next(m[len("timeout: "):] for m in marks if m.startswith("timeout"))
    if any(m.startswith("error") for m in marks) or result.test_outcome not in (TestOutcome.KILLED,
                                                                                  TestOutcome.SURVIVED):
        return "error", (marks or [out.strip()[-300:]])[-1]
    if result.test_outcome == TestOutcome.KILLED:
        return "killed", next((m[len("killed-by "):] for m in marks if m.startswith("killed-by ")), "?")
    if any(m.startswith("unreached") for m in marks):
        return "unreached", "no check executes the statement"
    return "survived", next((m for m in marks if m.startswith("ran ")), "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick", choices=("quick", "ci"))
    ap.add_argument("--sample", type=int, default=40, help="mutants in the random sample (default 40)")
    ap.add_argument("--seed", type=int, default=1729, help="sample seed and kverify seed (default 1729)")
    ap.add_argument("--workdir", default=os.path.join("/tmp", "kverify-mutation"))
    ap.add_argument("--map-cache", default=os.path.join("/tmp", "kverify-mutation-maps"),
                    help="folder keeping coverage maps between runs")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per-mutant timeout (seconds; default 1800)")
    ap.add_argument("--jobs", type=int, default=1, help="coverage runs at a time while building the map")
    ap.add_argument("--module-path", default="impl")
    ap.add_argument("--keep-tree", action="store_true",
                    help="reuse the copy (and its venv) an earlier run left in --workdir instead of copying again")
    ap.add_argument("--fresh-map", action="store_true",
                    help="run every check under coverage, reusing nothing of an earlier map")
    ap.add_argument("--drop-failing", action="store_true",
                    help="judge without the checks that fail on the unmutated tree (listed) instead of refusing")
    ap.add_argument("--no-map", action="store_true",
                    help="no coverage map: every mutant runs every check of the profile (with --fail-fast)")
    ap.add_argument("--mutants", nargs="+", metavar="FILE:LINE:OPERATOR:OCCURRENCE",
                    help="run only these mutants of the seeded sample (as the report prints them), e.g. survivors")
    ap.add_argument("--run-equivalents", action="store_true", help="run the mutants listed equivalent as well")
    ap.add_argument("--previous", metavar="ROWS.json",
                    help="rows of an earlier run of this sample: its killed mutants are carried over, not re-run")
    ap.add_argument("--from-rows", metavar="ROWS.json", help="only report a saved run (its rows file)")
    ap.add_argument("--rows", metavar="FILE", help="where to keep the judged mutants (default: in --workdir)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the survivors and the figures as Markdown")
    ap.add_argument("--as-test-command", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    work = os.path.abspath(args.workdir)
    if args.as_test_command:
        return as_test_command(work)
    if args.from_rows:                      # print (and --markdown) the figures of a saved run, without running
        with open(args.from_rows) as fh:
            saved = json.load(fh)
        args.profile, args.seed = saved["profile"], saved["seed"]
        report(saved["rows"], args, 0.0)
        if args.markdown:
            with open(args.markdown, "w", encoding="utf-8") as fh:
                fh.write(markdown(saved["rows"], args))
        return 0
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    print(f"bench/mutation.py: profile={args.profile} sample={args.sample} seed={args.seed} "
          f"load={os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    equivalents = load_equivalents()
    if args.keep_tree and os.path.exists(os.path.join(work, "tree-hash.txt")):
        print(f"--keep-tree: mutating the copy already in {work}", flush=True)
    else:
        files = tracked_files()
        copy_tree(work, files, args.module_path)
        make_venv(work)
        with open(os.path.join(work, "tree-hash.txt"), "w") as fh:
            fh.write(f"{tree_hash(files)} {global_key(files)}")
    with open(os.path.join(work, "tree-hash.txt")) as fh:
        digest, gkey = (fh.read().split() + [""])[:2]
    py = os.path.join(work, ".venv", "bin", "python")
    os.makedirs(args.map_cache, exist_ok=True)
    map_path = os.path.join(args.map_cache, f"{args.profile}-{args.seed}-{digest}.json")
    started = time.monotonic()
    if args.no_map:
        map_path = None
        names = mutation_map.check_names(py, work, args.profile)
    elif not os.path.exists(map_path):
        print(f"building the coverage map (one run per check, the baseline): {map_path}", flush=True)
        old_path, old_map = (None, None) if args.fresh_map else earlier_map(args.map_cache, args.profile, args.seed)
        if old_path:
            print(f"  checks whose loaded files are unchanged are taken from {old_path}", flush=True)
        data = mutation_map.build(py, work, args.profile, args.seed, args.jobs,
                                  log=lambda s: print(s, flush=True), reuse=old_map, global_key=gkey)
        with open(map_path, "w") as fh:
            json.dump(data, fh)
    if map_path:
        with open(map_path) as fh:
            data = json.load(fh)
        names = list(data["checks"])
        failing = {c: v for c, v in data["verdicts"].items() if v == "FAIL" or v.startswith("no summary") or (
            args.profile == "ci" and v == "INCONCLUSIVE")}          # ci is strict: INCONCLUSIVE fails its gate too
        if failing and not args.drop_failing:
            print(f"baseline: checks fail the gate on the unmutated tree ({failing}); no kill rate can be measured")
            return 1
        if failing:                         # --drop-failing: judged without them (they cannot tell a mutant apart)
            print(f"baseline: DROPPED, failing the gate on the unmutated tree: {failing}", flush=True)
            data["checks"] = {c: v for c, v in data["checks"].items() if c not in failing}
            names = list(data["checks"])
            map_path = os.path.join(work, "coverage-map-without-failing.json")
            with open(map_path, "w") as fh:
                json.dump(data, fh)
    else:
        print("--no-map: no baseline run (the gate's own runs on this tree are the baseline)", flush=True)
    strict = args.profile == "ci"
    with open(os.path.join(work, "mutation-state.json"), "w") as fh:
        json.dump({"map": map_path, "all_checks": names, "profile": args.profile, "seed": args.seed, "strict": strict,
                   "module_path": args.module_path, "cpu": data.get("cpu", {}) if map_path else {}}, fh)
    cfg = os.path.join(work, "mutation.toml")
    with open(cfg, "w") as fh:
        fh.write(f'[cosmic-ray]\nmodule-path = "{args.module_path}"\ntimeout = {args.timeout}\n'
                 f'excluded-modules = []\ntest-command = "{sys.executable} {os.path.abspath(__file__)} '
                 f'--as-test-command --workdir {work}"\n\n[cosmic-ray.distributor]\nname = "local"\n')
    session = os.path.join(work, "session.sqlite")
    cr = os.path.join(os.path.dirname(sys.executable), "cosmic-ray")
    if not (args.keep_tree and os.path.exists(session)):      # the mutants of an unchanged impl/ are the same
        subprocess.run([cr, "init", cfg, session], check=True, cwd=work)
    chosen, total = sample(session, args.sample, args.seed)
    print(f"{total} mutants of {args.module_path}/; a sample of {len(chosen)} (seed {args.seed})", flush=True)
    carried = []
    if args.previous:
        with open(args.previous) as fh:
            old = json.load(fh)
        if (old["profile"], old["seed"]) != (args.profile, args.seed):
            raise SystemExit(f"--previous: {args.previous} is a {old['profile']} run with seed {old['seed']}")
        carried = old["rows"]
    if args.mutants:
        keys = {tuple(m.rsplit(":", 3)) for m in args.mutants}
        found = {}
        for w in chosen:
            d = describe(work, w.mutations[0])
            found[w.job_id] = (d["file"], str(d["lineno"]), d["operator"], str(d["occurrence"]))
        missing = keys - set(found.values())
        if missing:                 # impl/ changed since the run that printed them: the sample is not the same
            raise SystemExit(f"--mutants: not in this sample: {sorted(':'.join(k) for k in missing)}")
        chosen = [w for w in chosen if found[w.job_id] in keys]
        print(f"--mutants: {len(chosen)} of them", flush=True)
    with open(cfg) as fh:
        command = fh.read().split('test-command = "')[1].split('"')[0]
    rows = []
    rows_path = args.rows or os.path.join(work, f"rows-{args.profile}-{args.seed}.json")
    os.chdir(work)
    for i, item in enumerate(chosen, 1):
        spec = item.mutations[0]
        d = describe(work, spec)
        listed = is_listed(d, equivalents)
        t0 = time.monotonic()
        before = carried_kill(carried, d)
        if d["broken"]:
            col, detail = "incompetent", d["broken"]
        elif before:
            col, detail = before["column"], before["detail"] + " (earlier run)"
        elif listed and not args.run_equivalents:
            col, detail = listed.get("kind", "equivalent"), listed["reason"]
        else:
            result = mutate_and_test(item.mutations, command, args.timeout)
            with use_db(session, WorkDB.Mode.open) as db:
                db.set_result(item.job_id, result)
            col, detail = classify(result)
            if listed:
                col, detail = (listed.get("kind", "equivalent"), listed["reason"]) if col in ("survived", "unreached") else (
                    "wrongly-listed", f"listed equivalent but {col}: {detail}")
        d.update(column=col, detail=detail)
        rows.append(d)
        print(f"  [{i:>3}/{len(chosen)}] {col:<10} {mutant_key(d)}  {detail}  ({time.monotonic() - t0:.0f} s)",
              flush=True)
        save_rows(rows_path, args, rows)
    report(rows, args, time.monotonic() - started)
    print(f"rows: {rows_path}")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(markdown(rows, args))
        print(f"survivors (Markdown): {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
