"""The order tests reach pytest-xdist in (issue 17: `make test` on 2 cores), and one shared Spark session.

`--dist worksteal` first hands each worker one contiguous block of the collection (equal counts, in
order), then moves tests from the END of a busy worker's queue to an idle one. So a long test that
sits late in its block, or two long tests in one block, decide the run's wall time. This hook lays
out the blocks before xdist cuts them: the heavy units (weights below, a static list: the order is
deterministic and the same on every worker, as xdist requires) are dealt to the blocks longest
first, each to the least loaded block, and lead their block; the other tests keep their collection
order. A unit is one test, or a whole module when the test uses a module-scoped fixture (splitting
it would set the fixture up once more on the other worker), or the tests sharing one parameter set
in a module listed in SHARED_BY_PARAMS (their work is done once per process and reused), or every
test using a fixture of SHARED_FIXTURES, whatever its module (the Spark session: one JVM, not two). Without
xdist, nothing moves. Which tests run and what they assert is untouched. Below: the Spark session the
Spark explorer and liveness tests share.
"""
from __future__ import annotations

import pytest

# Relative cost of the long tests (seconds; only the order matters). Two clocks: the Spark tests' and the last three
# entries are `pytest --durations` wall seconds (setup + call) on a loaded 2-core machine (Spark's cost is in its
# JVM and Python workers, which no CPU clock of the test process sees); the others are issue 17's measurement, the
# CPU seconds of the test run alone in one pytest process (time.process_time plus waited children such as TLC's
# JVMs; +-30% between runs on the shared machine). Keyed by node id, or by node id without its parameters for a
# whole parametrised test. A test missing here weighs nothing: refresh the list when a test becomes long
# (tests/test_xdist_layout.py checks every key names an existing test function).
WEIGHTS = {
    # each bound: TLC + the explorer (1 to 8 s, and one 16 s)
    "tests/test_tlc_crosscheck.py::test_tlc_agrees_with_explorer": 5,
    "tests/test_tlc_crosscheck.py::test_tlc_agrees_with_explorer[offsets-OffsetsFailover_r2_unclean.cfg]": 16,
    "tests/test_tlc_crosscheck.py::test_each_spec_has_three_bounds_one_with_a_behaviour": 2,
    "tests/test_tlc_crosscheck.py::test_changed_behaviour_only_rule_is_reported_with_its_first_differing_state": 5,
    # the Spark explorer's cases (issue 17's smaller bounds, two partitions): their durations in one run beside the
    # two tests below, on that scale; with tests/test_liveness_spark.py they are one unit (SHARED_FIXTURES)
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[group+kafka-12890-no-sync-barrier]": 44,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[offsets-world]": 28,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers"
    "[consumer-group-world+kafka-20442-empty-group-assignment-epoch]": 26,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers"
    "[consumer-group+kafka-20442-empty-group-assignment-epoch]": 21,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[replication+hw-ignores-min-isr]": 20,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[replication-world]": 19,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[offsets+truncate-to-hw]": 19,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[group+no-generation-bump]": 15,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers"
    "[assignor-rounds+kafka-12984-double-claim]": 14,
    "tests/test_spark_explore.py::test_spark_engine_gives_the_in_process_answers[group-world+no-generation-bump]": 13,
    "tests/test_spark_explore.py::test_stable_fingerprints_and_a_state_budget_cut_on_spark": 15,
    "tests/test_spark_explore.py::test_cli_spark_engine_writes_the_record": 13,
    "tests/test_spark_engine.py::test_cli_spark_engine_equals_inline_and_writes_parquet": 50,
    "tests/test_spark_engine.py::test_standalone_cluster_equals_local": 42,
    "tests/test_spark_engine.py::test_dataframe_accounting_drops_duplicates_and_shows_lost_seeds": 13,
    "tests/test_spark_engine.py::test_a_task_failing_once_neither_loses_nor_doubles_a_seed": 8,
    "tests/test_liveness_spark.py::test_spark_and_inline_agree_on_the_correct_controller": 18,
    "tests/test_liveness_spark.py::test_spark_catches_the_controller_that_never_fails_over": 8,
    "tests/test_zoo.py::test_every_behaviour_is_caught_and_its_report_replays": 20,
    "tests/test_replication_world.py::test_walker_then_shrinker_catch_behaviour_and_not_the_correct_cluster"
    "[no-fetch-epoch-fencing]": 21,
    "tests/test_replication_world.py::test_explorer_catches_behaviour_and_not_the_correct_cluster"
    "[expand-without-epoch-start]": 6,
    "tests/test_replication_world.py::test_explorer_catches_behaviour_and_not_the_correct_cluster"
    "[no-broker-epoch-check]": 3,
    "tests/test_replication_world.py::test_default_bounds_are_explored_exhaustively_without_violation": 7,
    "tests/test_replication_world.py::test_hypothesis_machine_finds_nothing_on_the_correct_world_and_catches_a_behaviour": 4,
    "tests/test_replication_world.py::test_walk_memo_gives_the_same_traces_and_verdicts[correct]": 3,
    # the Z3 tests (Z3 runs in-process)
    "tests/test_proofs_replication.py::test_each_breaking_behaviour_is_falsified_by_a_replayed_trace"
    "[replication-i-dur-unclean-election]": 50,
    "tests/test_proofs_replication.py::test_each_breaking_behaviour_is_falsified_by_a_replayed_trace"
    "[replication-i-lcc-unclean-election]": 30,
    "tests/test_proofs_replication.py::test_each_breaking_behaviour_is_falsified_by_a_replayed_trace"
    "[replication-i-dur-isr-shrinks-to-leader-min-isr-1]": 16,
    "tests/test_proofs_replication.py::test_each_breaking_behaviour_is_falsified_by_a_replayed_trace"
    "[replication-i-dur-truncate-to-hw]": 6,
    "tests/test_proofs_replication.py::test_correct_model_is_proved_by_1_induction_with_the_named_strengthening"
    "[replication-i-lcc]": 18,
    "tests/test_proofs_replication.py::test_correct_model_is_proved_by_1_induction_with_the_named_strengthening"
    "[replication-i-dur]": 17,
    "tests/test_proofs.py::test_obligation_proved_on_correct_suite[group-generation-monotonicity]": 13,
    "tests/test_proofs.py::test_obligation_proved_on_correct_suite[group-committed-offset-safety]": 12,
    "tests/test_proofs.py::test_obligation_proved_on_correct_suite[group-exclusive-ownership]": 6,
    "tests/test_proofs_consumer_group.py::test_breaking_behaviour_is_falsified_by_a_replayed_trace"
    "[consumer-group-epoch-follows-target-kafka-19974-unrevoked-epoch-bump-9]": 20,
    "tests/test_proofs_consumer_group.py::test_breaking_behaviour_is_falsified_by_a_replayed_trace"
    "[consumer-group-client-epochs-valid-kafka-19335-negative-epoch-joining-7]": 20,
    "tests/test_proofs_group.py::test_every_python_transition_is_a_z3_transition_and_back[2m-unclean-election]": 7,
    "tests/test_proofs_group.py::test_every_python_transition_is_a_z3_transition_and_back[3m-correct]": 6,
    "tests/test_planted_bugs.py::test_reassignment_dropping_old_replicas_early_is_caught_at_the_profile_bound": 15,
    "tests/test_group_world.py::test_default_bounds_with_a_fault_explore_exhaustively_without_violation": 13,
    "tests/test_group_model.py::test_three_members_explore_exhaustively_without_violation": 11,
    "tests/test_replication_model.py::test_controller_failover_with_zombie_is_safe_without_the_behaviour": 5,
    # wall seconds (see above)
    "tests/test_coverage_profiles.py::test_the_transactions_variant_settles_staged_offsets_and_catches_a_lost_settlement": 13,
    "tests/test_wire_clients_faults.py::test_confluent_kafka_group_under_a_seeded_fault_schedule[range]": 13,
    "tests/test_wire_clients.py::test_confluent_kafka_group_survives_a_killed_member_and_a_failover[range]": 10,
}
# modules whose tests with equal parameters share one computation per process (tests/test_tlc_crosscheck.py:
# both tests of a bound read one comparison): such tests travel together
SHARED_BY_PARAMS = ("tests/test_tlc_crosscheck.py",)
# session fixtures whose set-up is the cost (the local Spark session: a JVM, its Python workers and their
# imports): every test using one travels with the others, whichever module it is in, so one worker starts it
SHARED_FIXTURES = ("spark_process_session",)


def weight(nodeid: str) -> float:
    w = WEIGHTS.get(nodeid)
    if w is None:
        w = WEIGHTS.get(nodeid.split("[", 1)[0], 0)
    return w


def _module_scoped(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope == "module" for defs in info.name2fixturedefs.values())


def _unit_key(item):
    path = item.nodeid.split("::", 1)[0]
    used = getattr(item, "fixturenames", ())
    for name in SHARED_FIXTURES:
        if name in used:
            return ("fixture", name)
    if path in SHARED_BY_PARAMS and "[" in item.nodeid:
        return (path, "params", item.nodeid.split("[", 1)[1])
    if _module_scoped(item):
        return (path, "module")
    return (path, "test", item.nodeid)


def block_sizes(n_items: int, n_workers: int) -> list:
    """The counts worksteal's first distribution gives each worker (xdist/scheduler/worksteal.py)."""
    sizes, left = [], n_items
    for i in range(n_workers):
        take = left // (n_workers - i)
        sizes.append(take)
        left -= take
    return sizes


def layout(items: list, n_workers: int, weigh=weight, unit_key=_unit_key) -> list:
    """`items` reordered into `n_workers` consecutive blocks with the heavy units dealt out first."""
    units: dict = {}
    for it in items:
        units.setdefault(unit_key(it), []).append(it)
    heavy = [(sum(weigh(it.nodeid) for it in members), k) for k, members in units.items()]
    heavy = [(w, k) for w, k in heavy if w > 0]
    if not heavy or n_workers < 2:
        return items
    sizes = block_sizes(len(items), n_workers)
    blocks = [[] for _ in sizes]
    load = [0.0] * n_workers
    order = {k: i for i, k in enumerate(units)}
    for w, k in sorted(heavy, key=lambda wk: (-wk[0], order[wk[1]])):
        members = units[k]
        fits = [b for b in range(n_workers) if len(blocks[b]) + len(members) <= sizes[b]]
        b = min(fits or range(n_workers), key=lambda b: (load[b], b))
        blocks[b].extend(members)
        load[b] += w
    heavy_keys = {k for _, k in heavy}
    rest = [it for k, members in units.items() if k not in heavy_keys for it in members]
    for b in range(n_workers):
        room = max(sizes[b] - len(blocks[b]), 0) if b < n_workers - 1 else len(rest)
        blocks[b].extend(rest[:room])
        rest = rest[room:]
    return [it for block in blocks for it in block]


def pytest_collection_modifyitems(session, config, items):
    workerinput = getattr(config, "workerinput", None)
    if not workerinput:
        return                                            # not an xdist worker: collection order
    # (xdist sets a worker's own `dist` option to "no": the blocks are laid out for `make test`'s
    # worksteal whatever the mode; under another mode they are merely an order)
    items[:] = layout(items, int(workerinput["workercount"]))


# --- one local Spark session per pytest process ---------------------------------------------------
# tests/test_spark_explore.py and tests/test_liveness_spark.py run on this master with these settings
# (performance knobs only: a C1-only JIT and serial GC start a JVM with about 5 s less CPU, no
# whole-stage code generation, two shuffle partitions for tiny DataFrames), so they share the session
# a worker started first instead of starting a JVM a module (about 12 s of CPU each).
SPARK_MASTER = "local[2]"
_FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_test_conf() -> dict:
    from kverify.spark import session

    return {"spark.driver.extraJavaOptions": f"{_FAST_JVM} -Dlog4j2.configurationFile=file:{session._log4j_file()}",
            "spark.executor.extraJavaOptions": _FAST_JVM,
            "spark.sql.codegen.wholeStage": "false", "spark.sql.shuffle.partitions": "2"}


@pytest.fixture(scope="session")
def spark_process_session():
    """Stops the shared session when the pytest process ends (tests get it through `session.get`,
    which restarts it if a test in between needed another master)."""
    from kverify.spark import session

    yield
    session.stop()
