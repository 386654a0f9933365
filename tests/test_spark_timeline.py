"""A simulation records its throughput over the run (SimResult.timeline), which the run index
plots as steps per second; the spark:group check of `kverify verify --profile ci` relies on it."""
from kverify.spark.runner import SimConfig, simulate
from kverify.spark.world import resolve
from kverify.suite import profiles
from kverify.suite.providers import spark


def test_timeline_is_monotone_and_ends_at_the_total(tmp_path):
    world = resolve("kverify.spark.toy_counter:make", {}, (), 30)
    res = simulate(SimConfig(world=world, runs=3000, out=str(tmp_path), engine="inline", progress=False))
    tl = res.timeline
    assert tl, "no throughput samples"
    times = [t for t, _ in tl]
    steps = [s for _, s in tl]
    assert times == sorted(times) and steps == sorted(steps)
    assert steps[-1] == res.summary["steps"]


def test_spark_check_only_in_long_profiles():
    assert spark("quick") == [] and [c.name for c in spark("ci")] == ["spark:group"]
    assert profiles.budget("ci").spark_runs >= 10_000 and profiles.budget("quick").spark_runs == 0
