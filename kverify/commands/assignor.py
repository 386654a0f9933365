"""`kverify assignor check TARGET`: certify a partition assignor, property by property.

TARGET is a built-in assignor (range, roundrobin, sticky, cooperative-sticky, legacy-range; KIP-848's
server-side consumer:uniform and consumer:range),
`module:attribute` (a Python object with `assign(problem: dict) -> dict`, see
`kverify.certify`), a client library's assignor (`kafka-python:range|roundrobin|sticky|
cooperative-sticky`, `aiokafka:range|roundrobin|sticky`), or `--command "CMD ..."` (a program
answering issue 3's JSON lines on stdin/stdout). Exit 0 when every claimed property holds,
1 when one fails, 2 for bad usage, 3 when a claimed property could not be judged (the target answered
none of its problems) and none failed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from kverify.cli import UsageError, add_json_flag, emit_json

NAME = "assignor"
HELP = "certify a partition assignor (built-in, Python object, external program, client library)"
DEFAULT_EXAMPLES = 500


def add_arguments(parser):
    subs = parser.add_subparsers(dest="assignor_command", metavar="SUBCOMMAND", parser_class=type(parser))
    import kverify.certify as certify

    interface = certify.__doc__.split("\n\n")[2]
    c = subs.add_parser("check", help="check complete/exclusive/.../robust on generated problems",
                        description=__doc__.split("\n\n")[1] + "\n\n" + interface,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("target", nargs="?", metavar="TARGET",
                   help="built-in name, module:attribute, kafka-python:NAME or aiokafka:NAME")
    c.add_argument("--command", metavar="CMD", help="external assignor program speaking JSON lines")
    c.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                   help="per-answer timeout for --command (default 5)")
    c.add_argument("--protocol", choices=("classic", "consumer"), default="classic",
                   help="consumer: the --command program is a KIP-848 server-side assignor answering "
                        "consumer-protocol problems (members' `assigned` = the current target assignment)")
    c.add_argument("--cooperative", action="store_true",
                   help="the --command program follows the cooperative protocol (claims cooperative-safe)")
    c.add_argument("--seed", type=int, default=None, help="random seed (printed; same seed, same problems)")
    c.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N",
                   help=f"problems (scenarios) per property (default {DEFAULT_EXAMPLES})")
    c.add_argument("--max-members", type=int, default=5, metavar="N", help="largest group generated (default 5)")
    c.add_argument("--property", action="append", default=[], metavar="NAME",
                   help="check only this property (repeatable)")
    c.add_argument("--claims", metavar="P1,P2|PRESET",
                   help="properties the target claims (default: its declaration), or a preset for the usual kinds "
                        "of assignor: eager (range/round-robin-like), balanced, sticky, cooperative (implies "
                        "--cooperative)")
    c.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                   help="switch on a historical assignor behaviour of a built-in target (repeatable)")
    c.add_argument("--out", metavar="DIR", help="report folder (default reports/out/assignor-check/<target>/)")
    add_json_flag(c)
    c.set_defaults(_run=run)


def _fmt_cx(v) -> list:
    import json

    cx = v.counterexample
    lines = [f"    violation: {v.message}",
             f"    smallest problem (round {cx['rounds'] - 1} of its scenario): {json.dumps(cx['problem'])}",
             f"    answer: {json.dumps(cx['answer'])}"]
    if v.path:
        lines.append(f"    written to {v.path}")
    return lines


def run(args) -> int:
    from kverify.behaviours import validate
    from kverify.certify.check import run_check, safe_name
    from kverify.certify.properties import ORDER
    from kverify.certify.targets import TargetError, make_target

    if getattr(args, "assignor_command", None) != "check":
        raise UsageError("kverify assignor: missing sub-command (use `kverify assignor check TARGET`)")
    if (args.target is None) == (args.command is None):
        raise UsageError("kverify assignor check: give exactly one of TARGET or --command CMD")
    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if not 1 <= args.max_members <= 8:
        raise UsageError("--max-members must be between 1 and 8")
    for p in args.property:
        if p not in ORDER:
            raise UsageError(f"unknown property {p!r} (known: {', '.join(ORDER)})")
    behaviours = validate(args.behaviour, component="assignor")
    claims = None if args.claims is None else [c.strip() for c in args.claims.split(",") if c.strip()]
    if claims == ["cooperative"]:
        args.cooperative = True
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    try:
        target = make_target(args.target, args.command, timeout=args.timeout, cooperative=args.cooperative,
                             behaviours=behaviours, claims=claims, protocol=args.protocol)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    out = args.out or os.path.join("reports", "out", "assignor-check", safe_name(target.name))
    quiet = args.json
    if not quiet:
        print(f"kverify assignor check {target.name}  seed={seed}  examples/property={args.examples}", flush=True)
        if target.note:
            print(f"  note: {target.note}")
    else:
        print(f"seed={seed}", file=sys.stderr)
    started = time.monotonic()
    try:
        verdicts = run_check(target, seed, args.examples, args.property or None, out, args.max_members)
    finally:
        target.close()
    failed = [v for v in verdicts if v.claimed and not v.holds]
    unsure = [v for v in verdicts if v.claimed and v.inconclusive]
    code = 1 if failed else (3 if unsure else 0)
    if quiet:
        emit_json({"target": target.name, "seed": seed, "properties": {v.name: v.to_json() for v in verdicts}})
        return code
    for v in verdicts:
        tag = "" if v.claimed else f"  (not claimed: {v.reason})"
        refused = f" ({v.refused} unanswered, not judged)" if v.refused and v.name != "answers" else ""
        print(f"  {v.name:<17} {v.status:<12} {v.examples:>5} examples {v.judged:>6} problems{refused}{tag}")
        if v.scope:
            print(f"    scope: {v.scope}")
            if v.outside and v.outside["rounds"]:
                ex = v.outside["example"]
                print(f"    outside the scope: {v.outside['rounds']} round(s) fell short, e.g. {ex['violation']}")
        if not v.holds:
            print("\n".join(_fmt_cx(v)))
    took = time.monotonic() - started
    if failed:
        verdict = "FAILED: " + ", ".join(v.name for v in failed)
    elif unsure:
        verdict = "INCONCLUSIVE (no answered problem to judge): " + ", ".join(v.name for v in unsure)
    else:
        verdict = "all claimed properties hold"
    print(f"{verdict}  ({took:.1f}s, seed {seed})")
    return code
