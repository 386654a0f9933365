"""`kverify coordinator-partition GROUP_ID`: which __consumer_offsets partition coordinates a group.

Kafka's `Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`, bit-exact with Java's
String.hashCode; with `--behaviour math-abs-coordinator` Java's Math.abs is used instead (a
negative partition for ids hashing to Integer.MIN_VALUE, e.g. "polygenelubricants").
"""
from kverify import behaviours as B
from kverify.cli import UsageError, emit_json

NAME = "coordinator-partition"
HELP = "print the __consumer_offsets partition (coordinator) of a group id"


def add_arguments(parser):
    parser.add_argument("group_id", metavar="GROUP_ID", help="the group id (any Unicode string)")
    parser.add_argument("--partitions", type=int, default=50, metavar="N",
                        help="offsets.topic.num.partitions (default 50)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch on a historical coordinator behaviour (repeatable)")


def run(args) -> int:
    from kverify.impl.coordinator.partition import java_string_hash, partition_for

    if args.partitions <= 0:
        raise UsageError(f"--partitions must be a positive integer, got {args.partitions}")
    try:
        behaviours = B.validate(args.behaviour, component="coordinator")
    except B.UnknownBehaviour as exc:
        raise UsageError(str(exc)) from None
    partition = partition_for(args.group_id, args.partitions, behaviours)
    if args.json:
        emit_json({"group_id": args.group_id, "partitions": args.partitions, "behaviours": sorted(behaviours),
                   "hash": java_string_hash(args.group_id), "partition": partition})
    else:
        print(partition)
    return 0
