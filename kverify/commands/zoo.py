"""`kverify zoo [NAME ...]`: switch on each historical behaviour and check that the suite catches
it; exit 0 only when every behaviour asked for is caught (and, with --control, the same engines
find nothing when no behaviour is on)."""
import os
import sys

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.zoo import STATES, WALK_STEPS, hunt

NAME = "zoo"
HELP = "the bug zoo: every historical behaviour must be caught by some invariant"


def add_arguments(parser):
    parser.add_argument("names", nargs="*", metavar="NAME", help="behaviours (default: all)")
    parser.add_argument("--states", type=int, default=STATES,
                        help=f"distinct states per exhaustive search (default {STATES:,}; the way a world declares "
                             "for a behaviour gets ten times more)")
    parser.add_argument("--walk-steps", type=int, default=WALK_STEPS,
                        help=f"random-walk steps per model (default {WALK_STEPS:,})")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="an explicit wall-clock cap per behaviour (a behaviour it cuts is reported as such)")
    parser.add_argument("--seed", type=int, default=0, help="seed for Hypothesis and the walks (default 0)")
    parser.add_argument("--control", action="store_true",
                        help="also run the engines with no behaviour on: they must find nothing")
    parser.add_argument("--out", default=os.path.join("reports", "out", "zoo"), help="report folder")


def run(args) -> int:
    names = args.names or [b.name for b in B.all_behaviours()]
    for n in names:
        B.get(n)
    if args.states <= 0 or args.walk_steps <= 0:
        raise UsageError("--states and --walk-steps must be positive")
    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError("--max-seconds must be positive")
    log = sys.stderr if args.json else sys.stdout
    print(f"kverify zoo --seed {args.seed} --states {args.states} --walk-steps {args.walk_steps} "
          f"({len(names)} behaviours)", file=log, flush=True)
    rows = []
    for n in names + ([None] if args.control else []):
        row = hunt(n, states=args.states, walk_steps=args.walk_steps, max_seconds=args.max_seconds, seed=args.seed,
                   out_dir=args.out)
        rows.append(row)
        if n is None:
            verdict = "no false alarm" if not row.caught else f"FALSE ALARM {row.invariant} ({row.model}, {row.engine})"
            print(f"  control: {verdict}", file=log, flush=True)
        else:
            mark = "caught " if row.caught else "MISSED "
            detail = (f"{row.invariant:<32} {row.engine:<10} {row.model:<18} {row.seconds:6.1f}s  "
                      f"{row.trace_length:3d} steps  {row.report}") if row.caught else row.note
            print(f"  {mark} {row.name:<42} {detail}", file=log, flush=True)
    behaviour_rows = [r for r in rows if r.name != "(none)"]
    control_ok = all(not r.caught for r in rows if r.name == "(none)")
    ok = all(r.caught for r in behaviour_rows) and control_ok
    if args.json:
        out = {"behaviours": [r.to_json() for r in behaviour_rows], "passed": ok}
        if args.control:
            out["control"] = [r.to_json() for r in rows if r.name == "(none)"][0]
        emit_json(out)
    else:
        caught = sum(r.caught for r in behaviour_rows)
        print(f"{caught}/{len(behaviour_rows)} behaviours caught" + ("" if control_ok else "; control run raised a false alarm"))
    return 0 if ok else 1
