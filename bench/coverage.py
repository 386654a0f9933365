"""Which functions of the reference implementation (`impl/`) a `kverify verify` profile executes.

Why: a gate only guards the code it runs. A bug planted in code no check executes (for instance the
partition reassignment step, impl/replication/controller_ops.py `reassignment_step`, before the
replication world reached it) passes every profile. This benchmark runs a profile under coverage.py
(worker processes included), maps executed lines onto the functions of `impl/`, and prints, per
component and in total, how many functions ran; then the functions that did not run, in three groups:
`EXCUSED` (not protocol logic: test doubles and oracles, introspection, historical-behaviour branches; each
with its reason), `NOT_MODELLED` (protocol code no world reaches yet, each with what a world would need),
and any other (named nowhere: the work left; none for `ci` when this was written).

Usage: .venv/bin/python bench/coverage.py [--profile quick|ci] [--seed S] [--keep DIR] [--list] [--only PREFIX]
       .venv/bin/python bench/coverage.py --report-only DIR [DIR ...] [--list]   (data kept by --keep; a union)
Exit 0 always (a benchmark prints figures; it does not gate).
"""
from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMPL = os.path.join(ROOT, "impl")

# functions no gate needs to execute, each with its reason (qualified as component/module.py:Class.function;
# `module.py:*` excuses a whole module, `*.__repr__` every __repr__). Only code that is not protocol logic is
# excused here (test doubles and oracles, introspection, historical-behaviour branches); protocol code that no
# world reaches yet is in NOT_MODELLED with what it would take; anything in neither is listed by --list.
EXCUSED = {
    "*.__repr__": "debugging text of a value; no protocol decision reads it",
    "replication/steps.py:enabled_steps": "the generic step list of tests; worlds list "
                                          "their own actions and share only `controller_upkeep` with it",
    "replication/steps.py:apply": "the generic step dispatcher of tests "
                                  "(see enabled_steps)",
    "replication/invariant_view.py:violations": "a one-call helper for tests/test_replication_invariants.py; "
                                                "worlds bind the same invariant objects through repl_view/epoch_view",
    "replication/cluster.py:Cluster.missing_acked": "repl's own test-side oracle (tests/test_replication_*); "
                                                    "gates judge with invariants/replication.py",
    "replication/cluster.py:Cluster.inconsistent_reads": "repl's own test-side oracle (see missing_acked)",
    "replication/cluster.py:Cluster.epoch_cache_faults": "repl's own test-side oracle (see missing_acked)",
    "replication/cluster.py:Cluster.log_mismatches": "repl's own test-side oracle (see missing_acked)",
    "replication/offsets_topic.py:OffsetsTopicWorld.run": "a scripted driver for tests (offsets-world steps the "
                                                          "cluster itself)",
    "replication/offsets_topic.py:OffsetsTopicWorld.replicate_all": "a scripted driver for tests (see run)",
    "replication/offsets_topic.py:OffsetsTopicWorld.advance": "a scripted driver for tests (see run)",
    # --- test doubles, test-side oracles and setup hooks (tests/ use them; no world needs them) ---
    "coordinator/offsets_log.py:*": "the in-memory OffsetsLog test doubles of tests/ and the conformance harness; "
                                    "worlds append through the replicated __consumer_offsets (impl/replication/"
                                    "offsets_topic.py) or with no log",
    "consumer/checks.py:*": "KIP-848 test-side predicates of tests/test_consumer_*; gates judge with "
                            "invariants/consumer_group.py through consumer-group-world's CGView",
    "consumer/assignor_port.py:PreparedAssignor.__init__": "Kafka's MockPartitionAssignor analogue, for the "
                                                           "transcribed GroupMetadataManagerTest cases in tests/",
    "consumer/assignor_port.py:PreparedAssignor.prepare": "test assignor (see PreparedAssignor.__init__)",
    "consumer/assignor_port.py:PreparedAssignor.assign": "test assignor (see PreparedAssignor.__init__)",
    "consumer/assignor_port.py:BalancedAssignor.__init__": "test assignor of tests/test_consumer_*; the world plugs "
                                                           "the real uniform/range or the model's round-robin",
    "consumer/assignor_port.py:BalancedAssignor.assign": "test assignor (see BalancedAssignor.__init__)",
    "consumer/coordinator.py:ConsumerGroupCoordinator.seed_group": "setup hook (Kafka tests' ConsumerGroupBuilder) of "
                                                                   "tests/; worlds start from an empty group",
    "coordinator/internal.py:CoordinatorInternals.set_active": "setup hook of tests/test_coordinator_join.py "
                                                               "(a coordinator that is not active)",
    "coordinator/partition.py:java_math_abs": "partitionFor's Math.abs variant: only with the historical behaviour "
                                              "MATH_ABS_COORDINATOR switched on (tests/test_partition_for.py, zoo)",
    "coordinator/partition.py:java_rem": "see java_math_abs (same behaviour branch)",
    # --- introspection read by tests, the wire broker or reports, never by a protocol decision ---
    "timer.py:Timer.deadline": "introspection for tests/test_timer.py; the coordinators read next_deadline/entries",
    "timer.py:Timer.payload": "introspection for tests (see deadline)",
    "timer.py:Timer.__len__": "introspection for tests (see deadline)",
    "timer.py:Timer._compact": "heap garbage collection once > 64 entries and 4x the live tasks; the bounded worlds "
                               "never hold that many timers (tests/test_timer.py drives it)",
    "coordinator/coordinator.py:GroupCoordinator.group_ids": "introspection (the wire broker's ListGroups glue, tests)",
    "coordinator/coordinator.py:GroupCoordinator.next_deadline": "introspection for drivers that jump time (the wire "
                                                                 "broker); group-world reads the timer entries",
    "coordinator/views.py:GroupView.num_new_members": "read-only view field for conformance scenarios' expect_group "
                                                      "(none of tests/scenarios names it) and tests",
    "coordinator/views.py:GroupView.dynamic_member_ids": "read-only view field for conformance expect_group (none of "
                                                         "tests/scenarios names it) and the wire conformance",
    "consumer/coordinator.py:ConsumerGroupCoordinator.group_ids": "introspection (the wire broker, tests)",
    "consumer/coordinator.py:ConsumerGroupCoordinator.offsets": "introspection for tests; the world reads offsets "
                                                                "through OffsetFetch",
    "consumer/coordinator.py:ConsumerGroupCoordinator.timers": "introspection for tests; the world keys time by "
                                                               "next_deadline",
    "consumer/views.py:ConsumerGroupView.target_of": "view helper of tests/consumer_harness.py and tests",
    "consumer/client.py:ConsumerMember.snapshot": "the world keys clients by its own canonical fields, not this "
                                                  "snapshot (tests compare snapshots)",
    "replication/cluster.py:Cluster.snapshot": "tests compare clusters with it; worlds key states by "
                                               "replication_world._key_of (message ids abstracted)",
    "replication/offsets_topic.py:OffsetsTopicWorld.snapshot": "tests compare worlds with it; offsets-world keys "
                                                               "states itself (see Cluster.snapshot)",
    "replication/cluster.py:Cluster.describe": "the ClusterView of tests and reports; worlds map states through "
                                               "invariant_view.py",
    "replication/cluster.py:Cluster.state": "a one-line accessor of tests/ (impl reads store.states)",
    "replication/cluster.py:Cluster.pending": "in-flight message filter of tests/ (worlds list cluster.net)",
    "replication/cluster.py:Cluster.consume": "a consumer read of tests/test_replication_*; no world consumes (the "
                                              "invariants read logs and HW directly)",
    "replication/placement.py:assign_replicas": "Kafka's rack-unaware default placement, used by create_topic "
                                                "without an explicit assignment (tests); worlds fix the assignment so "
                                                "that states are canonical",
    "assignors/java_order.py:topic_partition_hash": "TopicPartition.hashCode, checked in "
                                                    "tests/test_assignors_reference.py; the assignors order by strings",
    "assignors/java_order.py:JavaHashSet.__contains__": "Java collection method kept for completeness of the port; "
                                                        "no assignor path of the certified scenarios calls it",
    "assignors/java_order.py:JavaHashSet.__len__": "see JavaHashSet.__contains__",
    "assignors/java_order.py:JavaHashSet.first": "see JavaHashSet.__contains__",
    "assignors/java_order.py:JavaHashSet.remove": "see JavaHashSet.__contains__ (sticky_general removes through "
                                                  "_Movements, see NOT_MODELLED)",
    "assignors/java_order.py:JavaHashMap.capacity": "table size introspection for "
                                                    "tests/test_consumer_assignors_java_order.py",
    "assignors/java_order.py:JavaHashMap.__iter__": "see JavaHashSet.__contains__",
    "assignors/problem.py:Member.to_json": "serialisation of an assignor problem for reports and the CLI",
    "assignors/problem.py:Problem.to_json": "serialisation of an assignor problem for reports and the CLI",
    "assignors/problem.py:Problem.partitions_of": "accessor for kverify/certify generators and tests",
    "assignors/legacy_range.py:*": "the pre-0.9 ZooKeeper-era rebalance, a historical reference no supported client "
                                   "uses; certified on demand (`kverify assignor check legacy-range`), not gated",
    "consumer/assignors/__init__.py:assign_ordered": "the ordered-answer entry of the CLI and tests; the gate "
                                                     "certifies through `assign`",
    "consumer/assignors/__init__.py:_pid": "error path of assign_ordered (see there)",
    "consumer/assignors/assignment_maps.py:ordered": "Kafka's map iteration order for assign_ordered (see there)",
    "consumer/assignors/spec.py:TopicDescriber.racks_for_partition": "Kafka interface method; no assignor here is "
                                                                      "rack-aware, so nothing calls it",
    # --- code of historical behaviours: runs only with the behaviour switched on (kverify zoo, --behaviour) ---
    "assignors/sticky.py:_StickyCore._resolve_claims_before_3_5": "historical behaviours double-claim / "
                                                                  "stale-owner-ignored only (the zoo runs them)",
    "replication/controller.py:Store.leader_write_isr": "pre-2.7 ISR writes by the leader "
                                                        "(config isr_writes_by_leader, historical; tests and the zoo)",
    "replication/replica.py:Replica.apply_isr_write": "pre-2.7 ISR writes by the leader (see Store.leader_write_isr)",
    "replication/log.py:ReplicaLog.legacy_end_offset_for": "behaviour ofle-offset-only (pre-KIP-279) only; the "
                                                           "abstract replication model hunts it",
}

# Protocol code no world reaches yet, each with what a world would need to reach it: named, counted apart from
# EXCUSED, and the work left (a world parameter or an action).
NOT_MODELLED = {
    "coordinator/subscription.py:encode_subscription": "the coordinator-side encoder, used when group-world's "
        "members would subscribe with raw metadata; the member encodes through impl/member/codec.py",
    "consumer/describe.py:DescribeHandling._handle_describe": "ConsumerGroupDescribe: no client of "
        "consumer-group-world describes the group (read-only; wire tests cover it)",
    "consumer/describe.py:DescribeHandling._described": "see _handle_describe",
    "consumer/topics.py:TopicsImage.by_id": "read by describe only (see _handle_describe)",
    "consumer/topics.py:TopicsImage.name_of": "read by describe only (see _handle_describe)",
    "consumer/group.py:ConsumerGroup.static_member": "static membership (group.instance.id): consumer-group-world "
        "has dynamic members only",
    "consumer/reconciliation.py:_strip_unsubscribed": "a member owning partitions of a topic it no longer "
        "subscribes to while the target still names them; consumer-group-world's subscription changes have not "
        "reached it at the ci bounds",
    "consumer/client.py:ConsumerMember.commit": "an application commitAsync: the world's clients commit only "
        "automatically (before revoking and leaving)",
    "consumer/client.py:ConsumerMember._resend_reconcile_commit": "a lost reconcile-time commit answer: the world "
        "loses heartbeat answers only",
    "consumer/client.py:ConsumerMember._transition_to_fatal": "a fatal heartbeat error (e.g. an unsupported "
        "assignor): the world's requests are always well-formed",
    "member/member.py:Member.member_id": "a property read by tests and the harness (group-world reads generation)",
    "member/member.py:Member.heartbeat": "an explicit heartbeat call: group-world's members heartbeat from poll/tick",
    "member/member.py:Member.subscribe": "a subscription change: group-world has one fixed topic",
    "member/member.py:Member.set_cluster": "a metadata change: group-world's topic never changes",
    "member/member.py:Member._on_leave_response": "a LeaveGroup answer reaching its member: group-world drops the "
        "member's connection on leave",
    "member/member.py:Member._die": "a fatal JoinGroup/SyncGroup error (inconsistent protocol, a failing assignor): "
        "group-world's members share one protocol",
    "assignors/sticky_general.py:_Movements._remove_record": "a partition moved twice in one general sticky "
        "balance: not among the ci certification's scenarios (tests/test_assignors_* reach it)",
}


def excused(key: str, table: dict = EXCUSED) -> bool:
    """Is `component/module.py:qualified.name` in `table` (exactly, by its module's `*`, or as a __repr__)?"""
    module, _, qual = key.partition(":")
    return key in table or f"{module}:*" in table or (qual.endswith(".__repr__") and "*.__repr__" in table)


def functions_of(path: str) -> list:
    """[(qualified name, first body line, last line)] of every function and method in a module."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = child.body
                first = body[0]
                if (isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
                        and isinstance(first.value.value, str) and len(body) > 1):
                    first = body[1]             # a docstring is not executed code
                out.append((prefix + child.name, first.lineno, child.end_lineno))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(tree, "")
    return out


def run_profile(profile: str, seed: int | None, data_dir: str, only=()) -> int:
    rc = os.path.join(data_dir, ".coveragerc")
    with open(rc, "w") as fh:
        fh.write(f"[run]\nparallel = True\nconcurrency = multiprocessing\nsource = {IMPL}\n"
                 f"data_file = {os.path.join(data_dir, '.coverage')}\n")
    out_dir = os.path.join(data_dir, "verify-out")
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "kverify.cli", "verify",
           "--profile", profile, "--out", out_dir]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    for prefix in only:
        cmd += ["--only", prefix]
    env = dict(os.environ, COVERAGE_PROCESS_START=rc)
    print("$ " + " ".join(cmd[3:]), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env)
    subprocess.run([sys.executable, "-m", "coverage", "combine", f"--rcfile={rc}", "-q"], cwd=ROOT, check=True)
    return proc.returncode


def _coverage_module():
    """coverage.py itself: run as `python bench/coverage.py`, this file's folder comes first on sys.path
    and `import coverage` would find this very script."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        sys.modules.pop("coverage", None)
        import coverage
    finally:
        sys.path[:] = saved
    return coverage


def executed_lines(data_dir: str) -> dict:
    coverage = _coverage_module()

    data = coverage.CoverageData(basename=os.path.join(data_dir, ".coverage"))
    data.read()
    return {os.path.realpath(f): set(data.lines(f) or ()) for f in data.measured_files()}


def report(lines_by_file: dict, show_list: bool) -> None:
    per_component = defaultdict(lambda: [0, 0])
    missing, not_modelled = [], []
    n_excused = 0
    for dirpath, _dirs, files in sorted(os.walk(IMPL)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, IMPL)
            component = rel.split(os.sep)[0] if os.sep in rel else "(top)"
            ran = lines_by_file.get(os.path.realpath(path), set())
            for qual, first, last in functions_of(path):
                key = f"{rel}:{qual}"
                hit = any(first <= ln <= last for ln in ran)
                per_component[component][1] += 1
                if hit:
                    per_component[component][0] += 1
                elif excused(key):
                    n_excused += 1
                elif excused(key, NOT_MODELLED):
                    not_modelled.append(key)
                else:
                    missing.append(key)
    total_hit = sum(h for h, _ in per_component.values())
    total = sum(n for _, n in per_component.values())
    print(f"{'component':<16}{'functions run':>16}")
    for comp, (hit, n) in sorted(per_component.items()):
        print(f"{comp:<16}{hit:>8} / {n:<5} {100.0 * hit / max(n, 1):5.1f}%")
    print(f"{'total':<16}{total_hit:>8} / {total:<5} {100.0 * total_hit / max(total, 1):5.1f}%")
    print(f"not run but excused (not protocol logic; reasons in bench/coverage.py EXCUSED): {n_excused}")
    print(f"not run, not modelled by any world yet (what it needs: bench/coverage.py NOT_MODELLED): {len(not_modelled)}")
    print(f"not run and not named: {len(missing)}")
    if show_list:
        for key in not_modelled:
            print(f"  not modelled: {key}: {NOT_MODELLED[key]}")
        for key in missing:
            print(f"  not run: {key}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick", choices=("quick", "ci", "deep"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", metavar="DIR", help="keep the coverage data here (default: a temporary folder)")
    ap.add_argument("--list", action="store_true", help="list every function that did not run")
    ap.add_argument("--report-only", metavar="DIR", nargs="+",
                    help="do not run a profile: report the data kept by --keep in DIR (several: their union, e.g. "
                         "a profile's runs with disjoint --only)")
    ap.add_argument("--only", action="append", default=[], metavar="PREFIX",
                    help="run only the profile's checks whose name starts with PREFIX (repeatable; the figure is "
                         "then that of those checks, not of the profile)")
    args = ap.parse_args(argv)
    if args.report_only:
        merged: dict = {}
        for d in args.report_only:
            for path, lines in executed_lines(d).items():
                merged.setdefault(path, set()).update(lines)
        report(merged, args.list)
        return 0
    data_dir = args.keep or tempfile.mkdtemp(prefix="kverify-coverage-")
    os.makedirs(data_dir, exist_ok=True)
    rc = run_profile(args.profile, args.seed, data_dir, args.only)
    print(f"kverify verify --profile {args.profile} exited {rc}")
    report(executed_lines(data_dir), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
