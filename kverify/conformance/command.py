"""`kverify coordinator run`: run scenario files against the reference coordinator.

Separate from `kverify/commands/coordinator.py` (a small dispatcher other sub-commands join) so the
command's options, output lines and JSON shape live next to the runner they present.
"""
from __future__ import annotations

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.conformance.format import FormatError, load_file
from kverify.conformance.runner import run_all

HELP = "run JSON-lines coordinator conformance scenarios (coordinator-scenarios.md) against the reference coordinator"


def add_arguments(p) -> None:
    p.add_argument("files", nargs="*", metavar="FILE.jsonl", help="scenario files (one scenario per line)")
    p.add_argument("--only", nargs="+", action="extend", default=[], metavar="ID", help="run only these scenario ids")
    p.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                   help="switch on a historical coordinator behaviour (repeatable; see `kverify behaviours`)")


def run(args) -> int:
    try:
        behaviours = B.validate(args.behaviour, component="coordinator")
    except B.UnknownBehaviour as exc:
        raise UsageError(str(exc)) from None
    # `--only A B FILE.jsonl` swallows the files into --only: give them back (ids never end in .jsonl)
    files = list(args.files) + [x for x in args.only if x.endswith(".jsonl")]
    args.only = [x for x in args.only if not x.endswith(".jsonl")]
    if not files:
        raise UsageError("kverify coordinator run: give at least one FILE.jsonl")
    scenarios, seen = [], {}
    for path in files:
        try:
            loaded = load_file(path)
        except FormatError as exc:
            raise UsageError(str(exc)) from None
        for sc in loaded:
            if sc.id in seen:
                raise UsageError(f"{path}:{sc.line}: scenario {sc.id!r} also defined in {seen[sc.id]}")
            seen[sc.id] = f"{sc.path}:{sc.line}"
            scenarios.append(sc)
    only = set(args.only)
    unknown = sorted(only - set(seen))
    if unknown:
        raise UsageError(f"--only: no scenario with id {unknown[0]!r} in the given files")
    summary = run_all(scenarios, behaviours=behaviours, only=only or None)
    if args.json:
        emit_json({"scenarios": [o.as_json() for o in summary.outcomes], "passed": summary.passed,
                   "total": summary.total, "behaviours": sorted(behaviours)})
    else:
        for o in summary.outcomes:
            print(o.line_text())
        extra = f" (behaviours: {', '.join(sorted(behaviours))})" if behaviours else ""
        print(f"{summary.passed}/{summary.total} scenarios passed{extra}")
    return 0 if summary.passed == summary.total else 1
