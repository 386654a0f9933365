"""`kverify behaviours`: list every historical behaviour of every component."""
from kverify import behaviours as B
from kverify.cli import emit_json

NAME = "behaviours"
HELP = "list the historical behaviours (real Kafka bugs) each component can switch on"


def add_arguments(parser):
    parser.add_argument("--component", help="only this component's behaviours")


def run(args) -> int:
    items = B.all_behaviours()
    if args.component:
        items = [b for b in items if b.component == args.component]
    if args.json:
        emit_json({"behaviours": [{"name": b.name, "component": b.component, "reference": b.reference,
                                   "description": b.description} for b in items]})
        return 0
    if not items:
        print("no behaviours declared")
        return 0
    w = max(len(b.name) for b in items)
    for b in items:
        print(f"{b.name:<{w}}  {b.component:<12} {b.reference:<14} {b.description}")
    return 0
