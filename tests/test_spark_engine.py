"""The Spark engine, with one local session for the module (JVM start-up costs seconds):
same results as inline, Parquet output, exactly-once accounting under a task failing once and
under duplicate rows, the shipped package, and -- last -- a real standalone cluster (master and
worker on 127.0.0.1 from pyspark's own jars) whose result must equal local[*]'s for the same seeds.

The cluster's executors run this venv's base interpreter (kverify is not installed there) and must
import kverify from the zip the driver ships. The cluster processes are started at the beginning
(they boot while the local tests run), every wait is bounded, and both are stopped at the end."""
import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from kverify.cli import main
from kverify.spark import aggregate, java, session
from kverify.spark.runner import SUMMARY_KEYS, SimConfig, SparkJobError, run_rows_schema, simulate
from kverify.spark.task import FaultInjection, RunRow
from kverify.spark.world import resolve

TOY = "kverify.spark.toy_counter:make"
MASTER = "local[*,2]"     # all cores; a failed task is retried once (plain local[N] never retries)
RUNS, STEPS, SEED, PER_TASK = 2000, 30, 11, 500
ENGINE_SPECIFIC = {"steps_per_second", "engine", "master", "elapsed_seconds"}
START_TIMEOUT = 120
# Start-up is most of these tests' cost on 2 shared cores: C1-only JIT and no whole-stage code
# generation make a fresh JVM answer small queries sooner (performance knobs only, no semantics).
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
TEST_CONF = {"spark.driver.extraJavaOptions": f"{FAST_JVM} -Dlog4j2.configurationFile=file:{session._log4j_file()}",
             "spark.executor.extraJavaOptions": FAST_JVM,
             "spark.sql.codegen.wholeStage": "false", "spark.sql.shuffle.partitions": "2"}


# --- a standalone cluster, booting in the background --------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, tmp):
        from pyspark.find_spark_home import _find_spark_home

        home = _find_spark_home()
        self.spark_class = os.path.join(home, "bin", "spark-class")
        self.env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
                        SPARK_DAEMON_JAVA_OPTS=FAST_JVM)
        setup = java.locate(self.env)
        if setup.java_home:
            self.env["JAVA_HOME"] = setup.java_home
        self.tmp, self.port = tmp, _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs = []
        self.master_log, self.worker_log = tmp / "master.log", tmp / "worker.log"
        self._spawn("org.apache.spark.deploy.master.Master", ["--host", "127.0.0.1", "--port", str(self.port),
                                                             "--webui-port", str(_free_port())], self.master_log)
        self.worker_started = False

    def _spawn(self, cls, args, log):
        self.procs.append(subprocess.Popen([self.spark_class, cls, *args], env=self.env, stdout=log.open("w"),
                                           stderr=subprocess.STDOUT, start_new_session=True))

    def _wait(self, ready, what):
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            for p in self.procs:
                if p.poll() is not None:
                    raise AssertionError(f"{what}: a cluster process exited with {p.returncode}: "
                                         f"{self.master_log.read_text()[-1500:]} {self._worker_text()[-1500:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not ready after {START_TIMEOUT}s")
            time.sleep(0.3)

    def _worker_text(self):
        return self.worker_log.read_text() if self.worker_log.exists() else ""

    def start_worker(self):
        def master_up():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0

        self._wait(master_up, "master")
        self._spawn("org.apache.spark.deploy.worker.Worker",
                    [self.url, "--host", "127.0.0.1", "--cores", "2", "--memory", "1g",
                     "--webui-port", str(_free_port()), "--work-dir", str(self.tmp / "work")], self.worker_log)
        self.worker_started = True

    def wait_ready(self):
        if not self.worker_started:
            self.start_worker()
        self._wait(lambda: "Successfully registered with master" in self._worker_text(), "worker")

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=20)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        yield c
    finally:
        session.stop()
        c.stop()
    assert all(p.poll() is not None for p in c.procs)


@pytest.fixture(scope="module")
def spark(cluster):
    return session.get(MASTER, TEST_CONF)


@pytest.fixture(scope="module")
def local_cli_run(spark, cluster, tmp_path_factory):
    """The reference run: `kverify simulate` on local[*] through the CLI."""
    cluster.start_worker()          # the master has booted meanwhile; let the worker boot during the tests
    out = str(tmp_path_factory.mktemp("local") / "out")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["simulate", TOY, "--runs", str(RUNS), "--steps", str(STEPS), "--seed", str(SEED),
                   "--param", "cap=9", "--seeds-per-task", str(PER_TASK), "--master", MASTER, "--out", out,
                   "--json", "--no-progress", *[f"--conf={k}={v}" for k, v in TEST_CONF.items()]])
    return rc, json.loads(buf.getvalue()), out


def _cfg(tmp_path, name, engine, master=MASTER, **kw):
    world = resolve(TOY, {"cap": "9"}, (), STEPS)
    kw.setdefault("spark_conf", TEST_CONF)
    return SimConfig(world=world, runs=RUNS, out=str(tmp_path / name), seed=SEED, engine=engine,
                     master=master, per_range=PER_TASK, progress=False, **kw)


def test_cli_spark_engine_equals_inline_and_writes_parquet(spark, local_cli_run, tmp_path):
    rc, printed, out = local_cli_run
    inline = simulate(_cfg(tmp_path, "inline", "inline"))
    assert rc == 1 and list(printed) == list(SUMMARY_KEYS)
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert {k: summary[k] for k in SUMMARY_KEYS} == printed
    assert summary["engine"] == "spark" and summary["steps_per_second"] > 0
    for key in set(summary) - ENGINE_SPECIFIC - {"reports"}:
        assert summary[key] == inline.summary[key], key
    assert summary["runs_requested"] == summary["runs_completed"] == RUNS
    assert summary["violations"]["sum-within-cap"] > 0 and summary["distinct_abstract_states_exact"]
    strip = lambda reps: [{k: v for k, v in r.items() if k not in ("path", "replay")} for r in reps]  # noqa: E731
    assert strip(summary["reports"]) == strip(inline.summary["reports"])
    assert json.load(open(summary["reports"][0]["path"]))["engine"] == "spark"
    assert spark.read.parquet(os.path.join(out, "runs")).count() == RUNS
    viol = spark.read.parquet(os.path.join(out, "violations")).collect()
    assert [(r["invariant"], r["runs"]) for r in viol] == list(inline.totals.violations.items())
    actions = {r["action"]: r["fired"] for r in spark.read.parquet(os.path.join(out, "actions")).collect()}
    assert actions == inline.totals.actions


def test_a_task_failing_once_neither_loses_nor_doubles_a_seed(spark, local_cli_run, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    res = simulate(_cfg(tmp_path, "retry", "spark", fault=FaultInjection(str(markers), ranges=(0, 2))))
    # both ranges really failed once: their first attempt left a marker, emitted half its rows, raised
    assert sorted(os.listdir(markers)) == ["range-0.failed-0", "range-2.failed-0"]
    s = res.summary
    assert s["runs_requested"] == s["runs_completed"] == RUNS
    assert s["rows_received"] == RUNS and s["duplicate_rows_dropped"] == 0
    reference = json.load(open(os.path.join(local_cli_run[2], "summary.json")))
    for key in set(s) - ENGINE_SPECIFIC - {"reports"}:
        assert s[key] == reference[key], key


def test_a_task_failing_every_attempt_fails_the_run_with_one_line(spark, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    cfg = _cfg(tmp_path, "doomed", "spark", fault=FaultInjection(str(markers), ranges=(1,), failures=2))
    cfg.runs = 1000
    with pytest.raises(SparkJobError) as exc:
        simulate(cfg)
    assert "\n" not in str(exc.value) and "InjectedFailure: injected failure in seed range 1" in str(exc.value)
    assert sorted(os.listdir(markers)) == ["range-1.failed-0", "range-1.failed-1"]


def test_dataframe_accounting_drops_duplicates_and_shows_lost_seeds(spark):
    rows = [RunRow(0, 5, None, None, False, {"inc": 5}, ["g"], [1, 2]),
            RunRow(1, 3, "x", 3, False, {"inc": 3}, [], [3]),
            RunRow(1, 3, "x", 3, False, {"inc": 3}, [], [3]),      # a speculative duplicate
            RunRow(3, 2, None, None, True, {"dec": 2}, [], []),    # a deadlock
            RunRow(50, 1, None, None, False, {"inc": 1}, [], [9])]  # outside the requested range
    df = spark.createDataFrame(rows, run_rows_schema())
    # exact_limit=0 takes the approximate distinct count (large runs); the exact one is what the
    # CLI test above compares with the inline engine
    t = aggregate.from_dataframe(df, 0, 4, exact_limit=0)
    want = aggregate.from_rows(rows, 0, 4)
    assert t.comparable() == want.comparable() and not t.distinct_exact
    assert (t.rows, t.runs_completed, t.duplicate_rows, t.foreign_rows) == (5, 3, 1, 1)  # seed 2 is lost
    assert t.violations == {"deadlock": 1, "x": 1} and t.steps == 10 and t.reached == ["g"]
    assert t.distinct_abstract_states == 3


def test_executors_import_the_shipped_zip(spark):
    zip_path = session.shipped_zip()
    assert zip_path and os.path.exists(zip_path)
    where = spark.sparkContext.parallelize([0], 1).map(
        lambda _: __import__("kverify.spark.task", fromlist=["x"]).__file__).collect()[0]
    assert os.path.basename(zip_path) in where


def test_standalone_cluster_equals_local(cluster, local_cli_run, tmp_path, monkeypatch):
    # Executors run the venv's base interpreter: in this repository's setup kverify is not installed
    # there, so they can only import it from the shipped zip (checked below either way).
    base_python = getattr(sys, "_base_executable", sys.executable)
    monkeypatch.setenv("PYSPARK_PYTHON", base_python)
    cluster.wait_ready()
    conf = {**TEST_CONF, "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": "512m", "spark.cores.max": "2"}
    res = simulate(_cfg(tmp_path, "cluster", "spark", master=cluster.url, spark_conf=conf))
    sc = session.get(cluster.url, conf).sparkContext
    assert sc.master == cluster.url
    where = sc.parallelize([0], 1).map(lambda _: __import__("kverify").__file__).collect()[0]
    assert os.path.basename(session.shipped_zip()) in where
    local = json.load(open(os.path.join(local_cli_run[2], "summary.json")))
    for key in set(local) - ENGINE_SPECIFIC - {"reports"}:
        assert res.summary[key] == local[key], key
    assert res.summary["runs_requested"] == res.summary["runs_completed"] == RUNS
    assert res.summary["violations"] and res.summary["master"] == cluster.url
