"""`--engine spark` (kverify/spark/explore.py): the level-synchronous search on Spark (local[2], one
session for the pytest process, tests/conftest.py) gives the in-process explorer's answers on every
model and world at small bounds, with and without a behaviour switched on (distinct states,
transitions, depth, states per level, deadlocks, `sometimes`, the state-graph figures and
`recoverable`, the very same shortest traces re-executed from the states' order keys), with
the explorer's hash or the stable fingerprints; a `--max-states` cut is the in-process one; the CLI
writes the usual counterexample record."""
import json

import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.protocol import action_to_json
from conftest import SPARK_MASTER, spark_test_conf
from test_parallel_explore import answers, case_id

pytestmark = pytest.mark.slow                # two Spark jobs a level: about a second each on a loaded machine

MASTER = SPARK_MASTER                       # local[2]
# One case a model, with a behaviour where the model's case catches one, plus a bound where `recoverable`
# fails. A Spark search costs about one job per level per exchange (two a level) and one per backward
# round of `recoverable`, whatever the states: so each bound is a small
# one with few levels (in-process depth in the comment) that still catches its behaviour (the in-process
# shortest traces compared), still analyses its state graph, or still has unrecoverable states.
# (tests/test_parallel_explore.py runs the worker-process engine on the larger CASES.)
SPARK_CASES = [
    ("group", {"members": 2, "partitions": 1, "events": 2, "commits": 1}, ["no-generation-bump"]),          # depth 4
    ("group-world", {"events": 1}, ["no-generation-bump"]),                                                # depth 5
    ("replication", {"replicas": 2, "records": 1, "epochs": 1, "alters": 0, "lossy": 0, "unclean": 0},
     ["hw-ignores-min-isr"]),                                                                              # depth 10
    ("offsets", {"replicas": 2, "records": 1, "epochs": 1, "min_isr": 1, "unclean": 0, "joins": 0},
     ["truncate-to-hw"]),                                                                                  # depth 9
    ("assignor-rounds", {"members": 1, "max_members": 2, "max_events": 2, "max_rounds": 2},
     ["kafka-12984-double-claim"]),                                                                        # depth 4
    ("consumer-group", {"members": 1, "topics": 1, "losses": 0, "commits": 0},
     ["kafka-20442-empty-group-assignment-epoch"]),                                                        # depth 9
    ("consumer-group-world", {"members": 1, "perturbations": 1, "grow": False, "failover": False, "auto_commit": False},
     ["kafka-20442-empty-group-assignment-epoch"]),                                                        # depth 10
    ("replication-world", {"records": 0, "failovers": 0}, []),                                             # depth 8
    ("offsets-world", {"brokers": 2, "min_isr": 1}, []),                                                   # depth 13
]
UNRECOVERABLE = ("group", {"members": 2, "partitions": 1, "events": 1, "faults": 1, "commits": 1},
                 ["kafka-12890-no-sync-barrier"])                                                          # depth 11
SPARK_CASES.append(UNRECOVERABLE)


@pytest.fixture
def spark(spark_process_session):
    """The process's local session (tests/conftest.py), started by the first test that needs it."""
    from kverify.spark import session

    return session.get(MASTER, spark_test_conf(), app="kverify-explore")


def _spark(name, params, beh, **kw):
    from kverify.spark.explore import explore_spark

    return explore_spark(name, {k: str(v) for k, v in params.items()}, beh, master=MASTER, conf=spark_test_conf(),
                         **kw)


def test_spark_cases_cover_every_model():
    assert {c[0] for c in SPARK_CASES} == set(registry.names())


@pytest.mark.parametrize("case", SPARK_CASES, ids=case_id)
def test_spark_engine_gives_the_in_process_answers(spark, case):
    name, params, beh = case
    ref = explore(registry.build(name, params, beh))
    # two partitions on local[2]: one wave of tasks a stage (a third partition waits for a core: ~30% more time);
    # the unrecoverable case (traces, the backward fixpoint) and the CLI test below keep three
    got, drv = _spark(name, params, beh, partitions=3 if case == UNRECOVERABLE else 2)
    assert answers(got) == answers(ref)
    assert drv.bytes > 0 and not drv.stable           # local master: the explorer's hash
    if beh:
        assert got.violations
    else:
        assert got.graph.analysed and got.graph.edges > 0, "recoverability is checked, not skipped"
    if case == UNRECOVERABLE:
        assert got.graph.unrecoverable > 0 and "recoverable" in [f.invariant for f in got.violations]


def test_stable_fingerprints_and_a_state_budget_cut_on_spark(spark):
    name, params, beh = "replication", {"replicas": 2, "records": 1}, []
    ref = explore(registry.build(name, params, beh), max_states=700)
    got, drv = _spark(name, params, beh, partitions=2, stable=True, max_states=700)
    assert drv.stable
    cut = ("distinct", "depth", "per_depth", "sometimes", "complete", "covered_depth", "violations", "graph")
    assert {k: answers(got)[k] for k in cut} == {k: answers(ref)[k] for k in cut}   # not transitions: see ARCHITECTURE.md, cuts
    assert not got.complete and got.stopped == "max-states" and got.distinct_states == 700 and got.unexpanded > 0


def test_cli_spark_engine_writes_the_record(spark, capsys, tmp_path):
    from kverify.cli import main

    rc = main(["explore", "group", "--param", "members=2", "--param", "partitions=1", "--param", "events=2",
               "--param", "commits=1", "--behaviour", "no-generation-bump",
               "--engine", "spark", "--master", MASTER, "--partitions", "3", "--json", "--quiet",
               "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    ref = explore(registry.build("group", {"members": 2, "partitions": 1, "events": 2, "commits": 1},
                                 ["no-generation-bump"]), graph=False)
    assert rc == 1
    assert out["distinct_states"] == ref.distinct_states and out["transitions"] == ref.transitions
    (v,) = out["violations"]
    assert v["invariant"] == "generation-monotonicity"
    assert v["actions"] == [action_to_json(a) for a in ref.violations[0].actions]
    assert json.load(open(v["file"]))["invariant"] == "generation-monotonicity"
