"""`kverify prove [NAME ...]`: the Z3 obligations, each proved, falsified (with a counterexample
record) or unknown. Exit 1 when an obligation that should hold is not proved, or one that a
switched-on behaviour should break is not falsified."""
import os

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.model.proofs import all_obligations, to_record

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

    rows, ok = [], True
    for ob in chosen:
        res = ob.check(behaviours)
        expected = ob.expected(behaviours)
        good = res.status == expected
        ok &= good
        report = None
        if res.status == "falsified":
            report = write_report(to_record(ob, res, behaviours), os.path.join(args.out, slug(ob.name)))
        rows.append({"name": ob.name, "statement": ob.statement, "status": res.status, "expected": expected,
                     "seconds": res.seconds, "detail": res.detail, "counterexample": res.counterexample,
                     "report": report})
        if not args.json:
            mark = "ok " if good else "BAD"
            print(f"{mark} {res.status:<9} {ob.name:<40} {res.seconds:6.2f}s  {res.detail}"
                  + (f"  [report: {report}]" if report else ""))
    if args.json:
        emit_json({"behaviours": sorted(behaviours), "obligations": rows, "passed": ok})
    return 0 if ok else 1
