"""`kverify replay counterexample.json`: re-execute a recorded counterexample deterministically.

Exit 1 when the invariant still breaks at the same step (the bug is there), 0 when it no longer
does (how a fix is confirmed), 2 for a file that is missing or malformed.
"""
from kverify.cli import UsageError, emit_json
from kverify.reports.record import Counterexample, RecordError
from kverify.reports.replayer import replay_record

NAME = "replay"
HELP = "re-execute a counterexample.json; exit 1 if it still breaks, 0 if it no longer does"


def add_arguments(parser):
    parser.add_argument("file", help="a counterexample.json written by any kverify engine")


def run(args) -> int:
    try:
        cx = Counterexample.load(args.file)
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    outcome = replay_record(cx)
    if args.json:
        emit_json({"file": args.file, "invariant": cx.invariant, "step": cx.violation_step,
                   "reproduced": outcome.reproduced, "message": outcome.message})
    else:
        print(outcome.message)
    return 1 if outcome.reproduced else 0
