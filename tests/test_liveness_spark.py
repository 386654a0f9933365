"""The walks' bounded responses on Spark (issue 17), in the pytest process's small local session
(tests/conftest.py): seed for seed the same rows and liveness figures as the inline engine, on the
correct replication-world and on the controller that never fails a partition over
(tests/planted_worlds.py, shipped to the executors), whose finding is re-run on the driver and written
as a record that `kverify replay` reproduces."""
import json
import os
import sys

import pytest

from conftest import SPARK_MASTER, spark_test_conf
from kverify.spark import session
from kverify.spark.runner import SimConfig, simulate
from kverify.spark.world import resolve

MASTER = SPARK_MASTER                            # local[2], the session the Spark explorer's tests share
CONF = spark_test_conf()
RUNS, STEPS, SEED, PER_TASK = 12, 60, 5, 6
WALK = {"brokers": "3", "partitions": "2", "crashes": "3"}          # replication-world's walk bounds, in part
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def spark(spark_process_session):
    sess = session.get(MASTER, CONF)
    before = list(sys.path)
    for name in ("planted_mutants.py", "planted_worlds.py"):     # the planted world, for the executors
        sess.sparkContext.addPyFile(os.path.join(HERE, name))
    sys.path[:] = [p for p in sys.path if p in before]           # the driver imports them from tests/
    return sess                                                  # stopped when the process ends


def _both(tmp_path, world_name):
    world = resolve(world_name, WALK, (), STEPS)
    cfg = dict(world=world, runs=RUNS, seed=SEED, per_range=PER_TASK, progress=False)
    on_spark = simulate(SimConfig(out=str(tmp_path / "spark"), engine="spark", master=MASTER, spark_conf=CONF, **cfg))
    inline = simulate(SimConfig(out=str(tmp_path / "inline"), engine="inline", **cfg))
    assert on_spark.totals.comparable() == inline.totals.comparable()
    assert on_spark.summary["liveness"] == inline.summary["liveness"]
    return on_spark, inline


def test_spark_and_inline_agree_on_the_correct_controller(spark, tmp_path):
    on_spark, _ = _both(tmp_path, "replication-world")
    live = on_spark.summary["liveness"]
    assert on_spark.summary["violations"] == {} and on_spark.totals.runs_completed == RUNS
    assert live["properties"]["leader-failover"]["tails"] > 0 and live["tail_steps"] > 0
    assert 0 < live["properties"]["leader-failover"]["longest"] < live["response_bound"]


def test_spark_catches_the_controller_that_never_fails_over(spark, tmp_path):
    from kverify.reports.record import Counterexample
    from kverify.reports.replayer import replay_record

    on_spark, inline = _both(tmp_path, "planted_worlds:never_fails_over")
    assert list(on_spark.summary["violations"]) == ["leader-failover"]
    [rep] = on_spark.summary["reports"]
    assert rep["seed"] == inline.summary["reports"][0]["seed"] and rep["step"] == inline.summary["reports"][0]["step"]
    cx = Counterexample.load(rep["path"])
    assert cx.engine == "spark" and cx.model == "planted_worlds:never_fails_over"
    assert cx.extra["response_bound"] == on_spark.summary["liveness"]["response_bound"]
    assert replay_record(cx).reproduced
    print(json.dumps({"spark": on_spark.summary["violations"], "report": rep}, indent=1))
