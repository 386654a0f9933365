"""Starting (or reusing) the SparkSession a simulation runs on.

One place decides everything about the session: Java (kverify.spark.java), the Python the
executors run (locally this interpreter, unless PYSPARK_PYTHON says otherwise), quiet logs, no web UI, and
shipping kverify to the executors as a zip (kverify.spark.ship) so `--master spark://...` needs no
manual step. A session is reused while the master stays the same and it has every setting asked for
(the tests share one per process; starting a JVM costs about 12 s of CPU).
"""
from __future__ import annotations

import os
import sys

from kverify.spark import java, ship

_LOG4J = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""

_current = {"key": None, "session": None, "zip": None}


def _log4j_file() -> str:
    path = os.path.join(java.default_cache_dir(), "log4j2-kverify.properties")
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != _LOG4J:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_LOG4J)
    return path


def is_local(master: str) -> bool:
    return master.startswith("local")


def default_conf(master: str) -> dict:
    log = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # Python workers start with `python -m pyspark.daemon`, which puts their working directory
        # first on sys.path; run from a kverify checkout, that directory's kverify/ would shadow
        # the shipped zip. PYTHONSAFEPATH (Python 3.11+) keeps it off.
        "spark.executorEnv.PYTHONSAFEPATH": "1",
        "spark.driver.extraJavaOptions": log,
        "spark.executor.extraJavaOptions": log,
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
        "spark.python.worker.reuse": "true",
    }
    if is_local(master):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    return conf


def _reusable(key) -> bool:
    """The running session serves a request on its master whose settings it all has (a request
    without settings takes the running one as it is: in one process that is a test suite, whose
    sessions add performance knobs only)."""
    if _current["key"] is None:
        return False
    master, conf = key
    run_master, run_conf = _current["key"]
    return master == run_master and set(conf) <= set(run_conf)


def get(master: str = "local[*]", conf: dict | None = None, app: str = "kverify-simulate"):
    """A SparkSession on `master` with kverify shipped to its executors."""
    key = (master, tuple(sorted((conf or {}).items())))
    sess = _current["session"]
    if sess is not None and _reusable(key) and sess.sparkContext._jsc is not None:
        return sess
    stop()
    java.ensure()
    # PySpark takes the executors' Python from PYSPARK_PYTHON only: honour the conf key too.
    # Local executors run this very interpreter; on a cluster Spark's default is `python3`.
    if (conf or {}).get("spark.pyspark.python"):
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    elif is_local(master) and "PYSPARK_PYTHON" not in os.environ:
        os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app)
    for k, v in {**default_conf(master), **(conf or {})}.items():
        builder = builder.config(k, v)
    sess = builder.getOrCreate()
    sc = sess.sparkContext
    sc.setLogLevel("ERROR")
    zip_path = ship.build_zip()
    before = list(sys.path)
    sc.addPyFile(zip_path)
    # addPyFile also puts the zip on the driver's sys.path; the driver keeps its own install.
    sys.path[:] = [p for p in sys.path if p in before]
    _current.update(key=key, session=sess, zip=zip_path)
    return sess


def shipped_zip() -> str | None:
    return _current["zip"]


def stop() -> None:
    sess = _current["session"]
    _current.update(key=None, session=None, zip=None)
    if sess is not None:
        sess.stop()
    else:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()
