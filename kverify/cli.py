"""The `kverify` command line: one sub-command per module in `kverify/commands/`.

A command module defines NAME, HELP, `add_arguments(parser)` and `run(args) -> int`. The frame
adds `--json` to every sub-command, turns bad usage into one line on stderr with exit code 2
(argparse's multi-line usage dump is not shown), and turns `UsageError` raised anywhere into the
same. Exit codes: 0 all good, 1 a property failed / something was found, 2 bad usage or input.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys

import kverify.commands as _commands


class UsageError(Exception):
    """Bad usage or bad input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line instead of a usage dump
        raise UsageError(f"{self.prog}: {message} (see --help)")


def emit_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def _command_modules():
    mods = []
    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            mods.append(importlib.import_module(f"{_commands.__name__}.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kverify", description="Verification suite for Kafka's coordination protocols.")
    parser.add_argument("--version", action="version", version=f"kverify {__import__('kverify').__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in _command_modules():
        sp = subs.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(sp)
        add_json_flag(sp)
        sp.set_defaults(_run=mod.run)
    return parser


def add_json_flag(parser) -> None:
    """Add --json to a parser (and to its sub-parsers, for nested commands)."""
    try:
        parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    except argparse.ArgumentError:
        pass  # the command defined it itself


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            parser.print_help(sys.stderr)
            return 2
        return int(args._run(args) or 0)
    except UsageError as exc:
        print(f"kverify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kverify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # an internal error: one line, the traceback on request
        from kverify.behaviours import UnknownBehaviour
        from kverify.model.registry import ModelError

        if isinstance(exc, (UnknownBehaviour, ModelError)):
            print(f"kverify: error: {exc}", file=sys.stderr)
            return 2
        if os.environ.get("KVERIFY_DEBUG"):
            raise
        print(f"kverify: internal error: {type(exc).__name__}: {exc} (set KVERIFY_DEBUG=1 for the traceback)", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
