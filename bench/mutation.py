"""Detection power of `kverify verify`: the kill rate of a seeded random sample of mutants of `impl/`.

Why: a gate is only as good as the bugs it catches. This benchmark lets a maintained mutation tool
(cosmic-ray, from PyPI) plant one small bug at a time in the reference implementation (a flipped
comparison, a changed constant, `and` for `or`, ...) and runs `kverify verify --profile P` on each:
exit 1 (a FAIL) kills the mutant; exit 0 or 3 (nothing failed) lets it survive. It prints the kill rate
and every survivor (file, line, operator), so each can be killed by a new property or named equivalent.

Isolation: cosmic-ray edits files in place, so the run happens in a copy of the work tree (tracked and
untracked, not ignored files) with its own virtual environment whose only package is that copy
(editable, no dependencies); the dependencies come from this checkout's .venv through a .pth file. The
checkout itself is never modified.

Usage: .venv/bin/python bench/mutation.py [--profile quick|ci] [--sample N] [--seed S] [--workdir DIR]
                                            [--timeout SECONDS] [--module-path impl]
Goal (issue 17): the ci profile kills at least 90% of a random sample, the quick profile at least 75%.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def copy_tree(dst: str) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src):
            continue
        out = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copy2(src, out)


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
                   check=True, cwd=work)
    return venv


def write_config(work: str, venv: str, profile: str, timeout: float, module_path: str, seed: int) -> str:
    out = os.path.join(work, "verify-out")
    kverify = os.path.join(venv, "bin", "kverify")
    # a mutant survives when nothing FAILED (exit 0, or 3 = only inconclusive checks)
    command = (f"bash -c '{kverify} verify --profile {profile} --seed {seed} --out {out} >/dev/null 2>&1; "
               "rc=$?; [ $rc -eq 0 ] || [ $rc -eq 3 ]'")
    cfg = os.path.join(work, "mutation.toml")
    with open(cfg, "w") as fh:
        fh.write("[cosmic-ray]\n"
                 f'module-path = "{module_path}"\n'
                 f"timeout = {timeout}\n"
                 "excluded-modules = []\n"
                 f'test-command = "{command.replace(chr(34), chr(92) + chr(34))}"\n\n'
                 "[cosmic-ray.distributor]\n"
                 'name = "local"\n')
    return cfg


def sample_work(session: str, n: int, seed: int) -> int:
    """Keep a seeded random sample of `n` work items pending; mark the others skipped (cosmic-ray's API)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(session, WorkDB.Mode.open) as db:
        items = sorted(db.pending_work_items, key=lambda w: w.job_id)
        keep = {w.job_id for w in random.Random(seed).sample(items, min(n, len(items)))}
        db.set_multiple_results([w.job_id for w in items if w.job_id not in keep],
                                WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        return len(items)


def results(session: str) -> list:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome

    out = []
    with use_db(session, WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            m = item.mutations[0]
            out.append((str(m.module_path), m.start_pos[0], m.operator_name, m.occurrence,
                        result.test_outcome.value if result.test_outcome else result.worker_outcome.value))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick", choices=("quick", "ci"))
    ap.add_argument("--sample", type=int, default=40, help="mutants in the random sample (default 40)")
    ap.add_argument("--seed", type=int, default=1729, help="sample seed and kverify seed (default 1729)")
    ap.add_argument("--workdir", default=os.path.join("/tmp", "kverify-mutation"))
    ap.add_argument("--timeout", type=float, default=900.0, help="per-mutant timeout of cosmic-ray (seconds)")
    ap.add_argument("--module-path", default="impl")
    args = ap.parse_args(argv)
    print(f"bench/mutation.py: profile={args.profile} sample={args.sample} seed={args.seed} "
          f"load={os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    work = os.path.abspath(args.workdir)
    copy_tree(work)
    venv = make_venv(work)
    cfg = write_config(work, venv, args.profile, args.timeout, args.module_path, args.seed)
    session = os.path.join(work, "session.sqlite")
    cr = [os.path.join(os.path.dirname(sys.executable), "cosmic-ray")]
    subprocess.run(cr + ["init", cfg, session], check=True, cwd=work)
    total = sample_work(session, args.sample, args.seed)
    print(f"{total} mutants of {args.module_path}/; running a sample of {min(args.sample, total)}", flush=True)
    started = time.monotonic()
    base = subprocess.run(cr + ["baseline", cfg], cwd=work)
    if base.returncode != 0:
        print("baseline: the unmutated copy does not pass the gate; no kill rate can be measured")
        return 1
    subprocess.run(cr + ["exec", cfg, session], check=True, cwd=work)
    rows = results(session)
    killed = [r for r in rows if r[4] == "killed"]
    survived = [r for r in rows if r[4] == "survived"]
    other = [r for r in rows if r[4] not in ("killed", "survived")]
    judged = len(killed) + len(survived)
    rate = 100.0 * len(killed) / judged if judged else 0.0
    print(f"profile {args.profile}: {len(killed)}/{judged} mutants killed = {rate:.1f}% "
          f"({len(other)} incompetent/errored, not counted; {time.monotonic() - started:.0f} s)")
    for path, line, op, occ, _ in sorted(survived):
        print(f"  survived: {path}:{line} {op} #{occ}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
