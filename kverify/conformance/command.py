"""`kverify coordinator run`: run scenario files against the reference coordinator.

Separate from `kverify/commands/coordinator.py` (a small dispatcher other sub-commands join) so the
command's options, output lines and JSON shape live next to the runner they present.
"""
from __future__ import annotations

from kverify import behaviours as B
from kverify.cli import UsageError, emit_json
from kverify.conformance.format import FormatError, load_file
from kverify.conformance.runner import run_all

HELP = ("run JSON-lines coordinator conformance scenarios (coordinator-scenarios.md) against the reference "
        "coordinator, or over the Kafka protocol against a broker (--bootstrap)")
BOOTSTRAP_HELP = (
    "run the scenarios over the wire against the broker at HOST:PORT: each scenario's requests become real Kafka "
    "requests (its own group ids). Clock steps (`advance`) are kverify broker's control request when the broker "
    "answers it (start it with `kverify broker --clock manual` and the scenario config, see the README); against any "
    "other broker they are waits of that many milliseconds. Scenarios that need coordinator internals (setup hooks, "
    "introspection beyond DescribeGroups, mocked log errors, exceptions) are reported as NOT RUNNABLE OVER THE WIRE, "
    "never as passed. The broker's own --behaviour settings apply (--behaviour is refused here)")


def add_arguments(p) -> None:
    p.add_argument("files", nargs="*", metavar="FILE.jsonl", help="scenario files (one scenario per line)")
    p.add_argument("--only", nargs="+", action="extend", default=[], metavar="ID", help="run only these scenario ids")
    p.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                   help="switch on a historical coordinator behaviour (repeatable; see `kverify behaviours`)")
    p.add_argument("--bootstrap", metavar="HOST:PORT", default=None, help=BOOTSTRAP_HELP)
    p.add_argument("--settle-ms", type=int, default=300, metavar="MS",
                   help="with --bootstrap against a broker without kverify's control request: how long to wait for "
                        "an answer before calling a request parked (default 300)")


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
    if args.bootstrap:
        return _run_wire(args, scenarios, only, behaviours)
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


def parse_bootstrap(text: str) -> tuple:
    host, sep, port = (text or "").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--bootstrap: expected HOST:PORT, got {text!r}")
    return host, int(port)


def _run_wire(args, scenarios, only, behaviours) -> int:
    from kverify.wire.client import WireError
    from kverify.wire.conformance import Target, not_runnable

    if behaviours:
        raise UsageError("--behaviour applies to the in-process coordinator; over --bootstrap the broker's own "
                         "behaviours apply (e.g. `kverify broker --behaviour NAME`)")
    if args.settle_ms < 0:
        raise UsageError("--settle-ms must be >= 0")
    host, port = parse_bootstrap(args.bootstrap)
    try:
        target = Target(host, port, settle=args.settle_ms / 1000.0)
    except (OSError, WireError) as exc:
        raise UsageError(f"--bootstrap {args.bootstrap}: cannot talk to the broker ({exc})") from None
    summary = run_all(scenarios, only=only or None, adapter_factory=target,
                      runnable=lambda sc: not_runnable(sc, target.versions, target.config))
    ran = summary.total - summary.not_runnable
    if args.json:
        emit_json({"scenarios": [o.as_json() for o in summary.outcomes], "passed": summary.passed,
                   "failed": summary.failed, "not_runnable": summary.not_runnable, "total": summary.total,
                   "bootstrap": args.bootstrap, "clock": target.clock_mode})
    else:
        for o in summary.outcomes:
            print(o.line_text())
        print(f"{summary.passed}/{ran} runnable scenarios passed over the wire at {args.bootstrap} "
              f"({summary.not_runnable} of {summary.total} not runnable over the wire; clock: {target.clock_mode})")
    return 0 if summary.failed == 0 and ran > 0 else 1
