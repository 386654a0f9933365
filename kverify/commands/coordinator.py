"""`kverify coordinator ...`: a small dispatcher for the coordinator's sub-commands.

Each sub-command lives in its own module exposing HELP, `add_arguments(parser)` and `run(args)`;
add one by adding it to `SUBCOMMANDS`.
"""
import argparse

from kverify.cli import add_json_flag

NAME = "coordinator"
HELP = "reference group coordinator tools (conformance scenarios: `kverify coordinator run`)"

SUBCOMMANDS = {
    "run": "kverify.conformance.command",
}


def _module(path):
    import importlib

    return importlib.import_module(path)


def add_arguments(parser):
    subs = parser.add_subparsers(dest="coordinator_command", metavar="SUBCOMMAND", parser_class=type(parser))
    for name, path in SUBCOMMANDS.items():
        mod = _module(path)
        sp = subs.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
        # SUPPRESS: an absent sub-command --json must not overwrite `kverify coordinator --json run ...`
        sp.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="machine-readable output on stdout")
        add_json_flag(sp)
        sp.set_defaults(_coordinator_run=mod.run)


def run(args) -> int:
    fn = getattr(args, "_coordinator_run", None)
    if fn is None:
        from kverify.cli import UsageError

        raise UsageError(f"kverify coordinator: choose a sub-command ({', '.join(SUBCOMMANDS)})")
    return fn(args)
