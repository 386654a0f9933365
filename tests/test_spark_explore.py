"""`--engine spark` (kverify/spark/explore.py): the level-synchronous search on Spark (local[2], one
session for the module) gives the in-process explorer's answers on every model and world at small
bounds, with and without a behaviour switched on, including the very same shortest traces rebuilt
from the parent links kept on the executors; the CLI writes the usual counterexample record."""
import json

import pytest

from kverify.model import registry
from kverify.model.explore import explore
from test_parallel_explore import CASES, answers, case_id

MASTER = "local[2]"


@pytest.fixture(scope="module")
def spark():
    from kverify.spark import session

    sess = session.get(MASTER, None, app="kverify-explore")
    yield sess
    session.stop()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_spark_engine_gives_the_in_process_answers(spark, case):
    from kverify.spark.explore import explore_spark

    name, params, beh = case
    ref = explore(registry.build(name, params, beh), graph=False)
    got, drv = explore_spark(name, {k: str(v) for k, v in params.items()}, beh, master=MASTER, partitions=2)
    assert answers(got) == answers(ref)
    assert drv.bytes > 0
    if beh:
        assert got.violations


def test_cli_spark_engine_writes_the_record(spark, capsys, tmp_path):
    from kverify.cli import main

    rc = main(["explore", "group-world", "--param", "events=1", "--behaviour", "leader-not-reelected",
               "--engine", "spark", "--master", MASTER, "--partitions", "3", "--json", "--quiet",
               "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    ref = explore(registry.build("group-world", {"events": 1}, ["leader-not-reelected"]), graph=False)
    assert rc == 1
    assert out["distinct_states"] == ref.distinct_states and out["transitions"] == ref.transitions
    (v,) = out["violations"]
    assert v["invariant"] == "leader-in-members" and len(v["actions"]) == len(ref.violations[0].actions)
    assert json.load(open(v["file"]))["invariant"] == "leader-in-members"
