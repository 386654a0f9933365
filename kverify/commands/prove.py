"""`kverify prove [NAME ...]`: the Z3 obligations, each proved, falsified (with a counterexample
record) or unknown. Every solver query is bounded by Z3's deterministic work count (the same verdict on
any machine); `--max-seconds` adds the user's wall-clock cap, and what it cuts is unknown. Exit 1 when an obligation that should hold is not proved, or one that a
switched-on behaviour should break is not falsified."""
import os
import time

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.model.proofs import all_obligations, budget, to_record

NAME = "prove"
HELP = "prove invariants inductive with Z3 (or show the counterexample)"


def add_arguments(parser):
    parser.add_argument("names", nargs="*", metavar="NAME", help="obligations to run (default: all)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical behaviour (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the obligations and exit")
    parser.add_argument("--open", action="store_true",
                        help="also run the obligations whose inductive proof is still open (none at present; "
                             "they are always run when named)")
    parser.add_argument("--max-seconds", type=float, default=None, metavar="S",
                        help="wall-clock cap over the whole run (default: none; every query is bounded by a "
                             "deterministic work count instead); an obligation it cuts is reported unknown")
    parser.add_argument("--size", choices=("full", "small"), default="full",
                        help="full (default, what the ci profile proves) or small (the quick profile's sizes)")
    parser.add_argument("--out", default=os.path.join("reports", "out", "prove"),
                        help="folder for counterexample reports (default reports/out/prove)")


def run(args) -> int:
    behaviours = B.validate(args.behaviour)
    obligations = all_obligations(include_open=True)
    known = {o.name for o in obligations}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        raise UsageError(f"unknown obligation {unknown[0]!r}; known: {', '.join(sorted(known))}")
    default = {o.name for o in all_obligations(include_open=args.open)}
    chosen = [o for o in obligations if o.name in args.names or (not args.names and o.name in default)]
    if args.list:
        if args.json:
            emit_json({"obligations": [{"name": o.name, "statement": o.statement} for o in chosen]})
        else:
            for o in chosen:
                print(f"{o.name:<40} {o.statement}")
        return 0
    from kverify.reports.writer import slug, write_report

    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError("--max-seconds must be positive")
    rows, ok = [], True
    deadline = None if args.max_seconds is None else time.perf_counter() + args.max_seconds
    for ob in chosen:
        left = None if deadline is None else max(0.001, deadline - time.perf_counter())
        with budget(max_seconds=left, size=args.size):
            res = ob.check(behaviours)
        expected = ob.expected(behaviours)
        good = res.status == expected
        ok &= good
        report = None
        if res.status == "falsified":
            report = write_report(to_record(ob, res, behaviours), os.path.join(args.out, slug(ob.name)))
        rows.append({"name": ob.name, "statement": ob.statement, "status": res.status, "expected": expected,
                     "seconds": res.seconds, "work": res.work, "detail": res.detail, "counterexample": res.counterexample,
                     "report": report})
        if not args.json:
            mark = "ok " if good else "BAD"
            print(f"{mark} {res.status:<9} {ob.name:<40} {res.seconds:6.2f}s {res.work:>14,d} work  {res.detail}"
                  + (f"  [report: {report}]" if report else ""))
    if args.json:
        emit_json({"behaviours": sorted(behaviours), "obligations": rows, "passed": ok})
    return 0 if ok else 1
