"""`kverify assign`: answer assignment problems (issue 3's JSON-lines format) with a built-in assignor.

One problem per input line, one answer per output line, in order. A malformed line or an unknown
assignor gets an error answer `{"id": ..., "error": "..."}` on its line (so a pipeline stays in
step), a one-line note on stderr, and exit code 2 at the end.
"""
from __future__ import annotations

import json
import sys

from kverify.cli import UsageError, emit_json

NAME = "assign"
HELP = "answer partition-assignment problems (JSON lines) with a reference assignor"


def add_arguments(parser):
    parser.add_argument("--input", default="-", metavar="FILE|-", help="JSON-lines problems (default: stdin)")
    parser.add_argument("--assignor", metavar="NAME",
                        help="use this assignor for every problem (default: each problem's 'assignor')")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical assignor behaviour (repeatable; see `kverify behaviours`)")


def _lines(path):
    if path == "-":
        yield from sys.stdin
        return
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
    with fh:
        yield from fh


def run(args) -> int:
    from kverify.behaviours import validate
    from kverify.impl.assignors import assign, get, names

    behaviours = validate(args.behaviour, component="assignor")
    if args.assignor is not None and args.assignor not in names():
        raise UsageError(f"unknown assignor {args.assignor!r} (built-in: {', '.join(names())})")
    if args.assignor is not None:
        get(args.assignor, behaviours)
    bad = 0
    answers = []
    for lineno, line in enumerate(_lines(args.input), 1):
        if not line.strip():
            continue
        try:
            problem = json.loads(line)
        except json.JSONDecodeError as exc:
            answer = {"id": None, "error": f"not valid JSON ({exc.msg})"}
        else:
            answer = assign(problem, args.assignor, behaviours)
        if "error" in answer:
            bad += 1
            print(f"kverify: error: line {lineno}: {answer['error']}", file=sys.stderr)
        if args.json:
            answers.append(answer)
        else:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    if args.json:
        emit_json({"answers": answers, "errors": bad})
    return 2 if bad else 0
