"""`kverify broker`: serve the reference group coordinator on the Kafka wire protocol (issue 15).

The first line printed is `kverify broker listening on HOST:PORT seed=S` (so `--port 0` works);
the server runs until interrupted (SIGINT/SIGTERM), with the online checks of kverify/wire/checks.py
over its traffic (exit 1 if they found a violation). See kverify/wire/ for the server itself.
"""
import argparse
import random
import sys

from kverify.cli import UsageError, emit_json

NAME = "broker"
SERVED_COMPONENTS = ("coordinator", "consumer-coordinator")   # classic and KIP-848 group coordinators
HELP = "serve the reference group coordinator on the Kafka wire protocol (real clients connect to it)"


def _faults_help():
    from kverify.wire import faults
    return faults.__doc__.split("\n\n", 1)[1].split("\n\n`api`")[0]


def add_arguments(parser):
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = HELP + "\n\nfault SPEC grammar (--faults):\n" + _faults_help() + (
        "\n\n`api` is a Kafka API name or `*`; `p` a probability drawn from the --seed generator; "
        "`from`/`until` a window of broker clock ms; `count` the most times a rule fires.\n"
        "Example: --faults 'delay:api=Heartbeat,ms=300,p=0.2;failover:at=5000,ms=1000,load=500'\n\n"
        "control request (admin-only): private API key 32000, see kverify/wire/control.py "
        "(advance the clock, switch faults, failover).")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=9092, help="port; 0 picks a free one (default 9092)")
    parser.add_argument("--topics", default="t0:3", help="topics and partition counts: t0:3,t1:2 (default t0:3)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical behaviour of the classic or KIP-848 coordinator (repeatable; "
                             "`kverify behaviours`)")
    parser.add_argument("--faults", default="", metavar="SPEC", help="scripted/seeded faults (grammar above)")
    parser.add_argument("--trace", metavar="FILE", help="write every request and response as JSON lines")
    parser.add_argument("--seed", type=int, help="seed of the fault generator and member ids (printed)")
    parser.add_argument("--clock", choices=("real", "manual"), default="real",
                        help="real: the broker clock follows the wall clock; manual: only the control request moves it")
    parser.add_argument("--min-session-timeout-ms", type=int, default=6000,
                        help="group.min.session.timeout.ms (default 6000)")
    parser.add_argument("--max-session-timeout-ms", type=int, default=1800000,
                        help="group.max.session.timeout.ms (default 1800000)")
    parser.add_argument("--initial-rebalance-delay-ms", type=int, default=3000,
                        help="group.initial.rebalance.delay.ms (default 3000)")
    parser.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                        help="any CoordinatorConfig field (impl/coordinator/config.py), value as JSON "
                             "(e.g. offsets_partitions=2, owned_partitions=[0], offsets_expiration_enabled=false)")
    parser.add_argument("--consumer-config", action="append", default=[], metavar="KEY=VALUE",
                        help="a ConsumerCoordinatorConfig field of the KIP-848 coordinator (impl/consumer/config.py), "
                             "e.g. session_timeout_ms=10000, heartbeat_interval_ms=500")
    parser.add_argument("--reports", metavar="DIR",
                        help="write each violation of the online checks as a counterexample record under DIR "
                             "(without it violations are still checked and printed on stderr)")
    parser.add_argument("--no-checks", action="store_true", help="do not run the online checks")
    parser.add_argument("--max-request-bytes", type=int, default=100 * 1024 * 1024,
                        help="socket.request.max.bytes: larger frames close the connection")


def parse_topics(text: str) -> dict:
    topics = {}
    for item in filter(None, (x.strip() for x in (text or "").split(","))):
        name, sep, n = item.rpartition(":")
        if not sep or not name or not n.isdigit() or int(n) < 1:
            raise UsageError(f"--topics: {item!r} is not NAME:PARTITIONS (PARTITIONS >= 1)")
        if not all(ch.isalnum() or ch in "._-" for ch in name) or len(name) > 249:
            raise UsageError(f"--topics: {name!r} is not a legal Kafka topic name")
        topics[name] = int(n)
    if not topics:
        raise UsageError("--topics: at least one topic is needed")
    return topics


def parse_config(items, config_class=None, flag="--config") -> dict:
    """--config KEY=VALUE items -> {CoordinatorConfig field: value} (JSON values, lists as tuples)."""
    import dataclasses
    import json

    from kverify.impl.coordinator import CoordinatorConfig

    CoordinatorConfig = config_class or CoordinatorConfig
    fields = {f.name for f in dataclasses.fields(CoordinatorConfig)}
    out = {}
    for item in items or ():
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or key not in fields:
            raise UsageError(f"{flag}: {item!r} is not FIELD=VALUE with FIELD one of {', '.join(sorted(fields))}")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        default = {f.name: f.default for f in dataclasses.fields(CoordinatorConfig)}[key]
        if isinstance(default, (int, bool)) and type(value) is not type(default):
            raise UsageError(f"{flag}: {key} needs a {type(default).__name__}, not {raw!r}")
        out[key] = tuple(value) if isinstance(value, list) else value
    try:
        CoordinatorConfig(**out)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{flag}: {exc}") from None
    return out


def _consumer_config_class():
    from kverify.impl.consumer import ConsumerCoordinatorConfig
    return ConsumerCoordinatorConfig


def config_from_args(args):
    from kverify import behaviours as B
    from kverify.wire.faults import parse
    from kverify.wire.server import BrokerConfig
    from kverify.wire import codec

    try:
        behaviours = B.validate(args.behaviour)
    except B.UnknownBehaviour as exc:
        raise UsageError(str(exc)) from None
    for name in sorted(behaviours):
        if B.get(name).component not in SERVED_COMPONENTS:
            raise UsageError(f"--behaviour {name}: a {B.get(name).component} behaviour; the broker runs "
                             f"{' and '.join(SERVED_COMPONENTS)} behaviours only")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not in 0..65535")
    if args.min_session_timeout_ms < 0 or args.min_session_timeout_ms > args.max_session_timeout_ms:
        raise UsageError("--min-session-timeout-ms must be >= 0 and <= --max-session-timeout-ms")
    if args.initial_rebalance_delay_ms < 0 or args.max_request_bytes < 8:
        raise UsageError("--initial-rebalance-delay-ms must be >= 0 and --max-request-bytes >= 8")
    parse(args.faults, codec.BY_NAME)       # raises UsageError on a bad SPEC
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    return BrokerConfig(host=args.host, port=args.port, topics=parse_topics(args.topics), behaviours=behaviours,
                        faults=args.faults, seed=seed, trace_path=args.trace, clock=args.clock,
                        max_request_bytes=args.max_request_bytes,
                        group_min_session_timeout_ms=args.min_session_timeout_ms,
                        group_max_session_timeout_ms=args.max_session_timeout_ms,
                        group_initial_rebalance_delay_ms=args.initial_rebalance_delay_ms,
                        coordinator=parse_config(args.config),
                        consumer=parse_config(args.consumer_config, _consumer_config_class(), "--consumer-config"))


def run(args) -> int:
    from kverify.wire.server import Broker

    config = config_from_args(args)
    try:
        broker = Broker(config)
    except OSError as exc:
        raise UsageError(f"--trace: {exc.strerror}: {exc.filename}") from None

    rec = None
    if not args.no_checks:
        from kverify.wire.record import attach

        rec = attach(broker, args.reports)
        printed = [0]

        def announce(_event):
            found = rec.violations
            while printed[0] < len(found):
                print(f"kverify broker: violation: {found[printed[0]].line()}", file=sys.stderr, flush=True)
                printed[0] += 1
        broker.listeners.append(announce)

    def ready(port):
        if args.json:
            emit_json({"host": config.host, "port": port, "seed": config.seed,
                       "topics": config.topics, "behaviours": sorted(config.behaviours)})
        else:
            print(f"kverify broker listening on {config.host}:{port} seed={config.seed}")
        sys.stdout.flush()

    try:
        broker.serve_forever(on_ready=ready)
    except OSError as exc:
        raise UsageError(f"cannot listen on {config.host}:{config.port}: {exc.strerror}") from None
    if rec is not None and rec.violations:
        for path in getattr(rec, "reports", ()) or ():
            print(f"kverify broker: counterexample written to {path}", file=sys.stderr)
        return 1
    return 0
