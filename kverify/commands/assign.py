"""`kverify assign`: answer assignment problems (issue 3's JSON-lines format) with a built-in assignor.

One problem per input line, one answer per output line, in order. A problem with
`"protocol": "consumer"` is a KIP-848 target-assignment problem answered by the server-side assignors
(`uniform`, `range`; kverify.impl.consumer.assignors); `"protocol": "classic"` or none is issue 3's
client-side format. A malformed line or an unknown assignor gets an error answer
`{"id": ..., "error": "..."}` on its line (so a pipeline stays in
step), a one-line note on stderr, and exit code 2 at the end.
"""
from __future__ import annotations

import json
import sys

from kverify.cli import UsageError, emit_json

NAME = "assign"
HELP = ("answer partition-assignment problems (JSON lines) with a reference assignor "
        "(client-side, or KIP-848 server-side for \"protocol\": \"consumer\")")


def add_arguments(parser):
    parser.add_argument("--input", default="-", metavar="FILE|-", help="JSON-lines problems (default: stdin)")
    parser.add_argument("--assignor", metavar="NAME",
                        help="use this assignor for every problem of its protocol (default: each "
                             "problem's 'assignor'); server-side names (uniform, range) apply to \"protocol\": \"consumer\" problems")
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


def _answer(problem, assignor, behaviours, classic_assign, server) -> dict:
    """Route a problem by its "protocol": consumer -> server-side assignors, else the classic ones."""
    protocol = problem.get("protocol") if isinstance(problem, dict) else None
    if protocol == "consumer":
        override = assignor if assignor in server.names() else None
        if assignor is not None and override is None:
            return {"id": problem.get("id"), "error": f"assignor {assignor!r} is not a server-side assignor "
                    f"({', '.join(server.names())})"}
        return server.assign(problem, override)
    if protocol not in (None, "classic"):
        return {"id": problem.get("id"), "error": f"unknown protocol {protocol!r} (classic or consumer)"}
    if protocol == "classic":
        problem = {k: v for k, v in problem.items() if k != "protocol"}
    return classic_assign(problem, assignor, behaviours)


def run(args) -> int:
    from kverify.behaviours import validate
    from kverify.impl.assignors import assign, get, names

    from kverify.impl.consumer import assignors as server

    behaviours = validate(args.behaviour, component="assignor")
    if args.assignor is not None and args.assignor not in names() + server.names():
        raise UsageError(f"unknown assignor {args.assignor!r} (built-in: {', '.join(names())}; "
                         f"server-side, for \"protocol\": \"consumer\": {', '.join(server.names())})")
    if args.assignor is not None and args.assignor in names():
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
            answer = _answer(problem, args.assignor, behaviours, assign, server)
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
