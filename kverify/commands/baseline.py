"""`kverify baseline update`: record the violations of a verification run as known, so that
`kverify verify --baseline` fails only on new ones."""
import glob
import json
import os

from kverify.cli import UsageError, add_json_flag, emit_json

NAME = "baseline"
HELP = "manage the baseline of known violations for `kverify verify --baseline`"


def add_arguments(parser):
    subs = parser.add_subparsers(dest="baseline_command", metavar="SUBCOMMAND", parser_class=type(parser))
    up = subs.add_parser("update", help="write the baseline from a run's summary.json (default: the newest run)")
    up.add_argument("--run", help="a run folder (with summary.json) or a summary.json file")
    up.add_argument("--file", default="kverify-baseline.json", help="baseline file to write")
    add_json_flag(up)


def _newest_run() -> str:
    runs = sorted(glob.glob(os.path.join("reports", "out", "*", "summary.json")), key=os.path.getmtime)
    if not runs:
        raise UsageError("no run found under reports/out/; run `kverify verify` first or pass --run")
    return runs[-1]


def run(args) -> int:
    if args.baseline_command != "update":
        raise UsageError("kverify baseline: expected the sub-command `update`")
    src = args.run or _newest_run()
    if os.path.isdir(src):
        src = os.path.join(src, "summary.json")
    try:
        with open(src, encoding="utf-8") as fh:
            summary = json.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{src}: no such file") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{src}: not valid JSON ({exc.msg})") from None
    violations = sorted({(v["invariant"], v["signature"], c["name"]) for c in summary.get("checks", [])
                         for v in c.get("violations", [])})
    data = {"violations": [{"invariant": i, "signature": s, "check": c} for i, s, c in violations],
            "from": src}
    with open(args.file, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    if args.json:
        emit_json(data)
    else:
        print(f"wrote {args.file}: {len(violations)} known violation(s) from {src}")
    return 0
