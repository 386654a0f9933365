"""`kverify explore`: JSON shape, exit codes, counterexample files that replay, one-line errors."""
import json
import os
import subprocess
import sys

from kverify.cli import main

SMALL = ["--param", "partitions=1", "--param", "events=2", "--param", "faults=1", "--param", "commits=1"]


def run_cli(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_report_of_a_clean_run(capsys, tmp_path):
    code, out, _ = run_cli(["explore", "group", *SMALL, "--quiet", "--json", "--out", str(tmp_path)], capsys)
    data = json.loads(out)
    assert code == 0
    for key in ("model", "params", "distinct_states", "transitions", "max_depth", "seconds", "violations",
                "complete", "sometimes", "vacuous", "graph"):
        assert key in data
    assert data["model"] == "group" and data["params"]["partitions"] == 1
    assert data["violations"] == [] and data["complete"] and data["graph"]["unrecoverable"] == 0
    assert data["distinct_states"] > 100 and data["max_depth"] > 5
    assert os.listdir(tmp_path) == []


def test_violation_exits_1_and_writes_a_replayable_counterexample(capsys, tmp_path):
    code, out, _ = run_cli(["explore", "group", *SMALL, "--behaviour", "stale-generation-commit", "--quiet",
                            "--json", "--out", str(tmp_path)], capsys)
    data = json.loads(out)
    assert code == 1
    names = sorted(v["invariant"] for v in data["violations"])
    assert names == ["committed-offset-safety"]
    v = data["violations"][0]
    assert v["trace"][-1] == "commit_arrives(0)" and len(v["trace"]) == 8
    rec = json.loads(open(v["file"]).read())
    assert rec["engine"] == "explore" and rec["behaviours"] == ["stale-generation-commit"]
    assert len(rec["trace"]) == 9 and rec["violation_step"] == 8
    code, out, _ = run_cli(["replay", v["file"]], capsys)
    assert code == 1 and out.startswith("reproduced")


def test_recoverability_counterexample_replays(capsys, tmp_path):
    code, out, _ = run_cli(["explore", "group", *SMALL, "--behaviour", "kafka-12890-no-sync-barrier",
                            "--quiet", "--out", str(tmp_path)], capsys)
    assert code == 1 and "VIOLATION recoverable" in out
    for name in ("recoverable", "deadlock"):
        path = tmp_path / name / "counterexample.json"
        code, out, _ = run_cli(["replay", str(path)], capsys)
        assert code == 1 and out.startswith("reproduced"), (name, out)
    # the same trace against the correct model no longer reproduces
    rec = json.loads((tmp_path / "recoverable" / "counterexample.json").read_text())
    rec["behaviours"] = []
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(rec))
    code, out, _ = run_cli(["replay", str(fixed)], capsys)
    assert code == 0 and "no longer reproduces" in out


def test_graph_export_and_partial_runs(capsys, tmp_path):
    dot = tmp_path / "g.dot"
    code, out, _ = run_cli(["explore", "group", "--param", "members=1", "--param", "partitions=1", "--quiet",
                            "--graph", str(dot), "--out", str(tmp_path)], capsys)
    assert code == 0 and "state graph written" in out
    assert dot.read_text().startswith("digraph group {")
    code, out, _ = run_cli(["explore", "group", "--max-states", "50", "--quiet", "--json"], capsys)
    data = json.loads(out)
    assert code == 3 and not data["complete"] and data["stopped"] == "max-states" and data["distinct_states"] == 50
    assert data["vacuous"] == [] and data["verdict"] == "INCONCLUSIVE" and "max-states" in data["reason"]


def test_symmetry_flag_changes_the_count(capsys):
    counts = []
    for flag in ("--symmetry", "--no-symmetry"):
        # replication: replicas are interchangeable (an election picks any eligible one); the group
        # model has no symmetry (slot order decides assignment and leader)
        code, out, _ = run_cli(["explore", "replication", "--param", "records=1", "--param", "epochs=1", flag,
                                "--quiet", "--json", "--graph-limit", "0"], capsys)
        data = json.loads(out)
        # complete, but recoverability unchecked (--graph-limit 0): never PASS
        assert code == 3 and data["complete"] and data["verdict"] == "INCONCLUSIVE", data["reason"]
        assert "recoverability not checked" in data["reason"]
        counts.append(data["distinct_states"])
    assert counts[0] < counts[1]


def test_bad_usage_is_one_line_exit_2():
    for args in (["nope"], ["group", "--param", "foo=1"], ["group", "--param", "members=x"],
                 ["group", "--param", "members=0"], ["group", "--behaviour", "no-such-thing"],
                 ["group", "--behaviour", "math-abs-coordinator"], ["group", "--max-states", "0"], []):
        r = subprocess.run([sys.executable, "-m", "kverify", "explore", *args], capture_output=True, text=True)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, (args, r.stderr)


def test_a_cut_run_says_what_cut_it_and_what_it_covered(capsys, tmp_path):
    code, out, _ = run_cli(["explore", "group", *SMALL, "--max-states", "60", "--quiet", "--json", "--out", str(tmp_path)],
                           capsys)
    data = json.loads(out)
    assert code == 3 and not data["complete"] and data["stopped"] == "max-states" and data["distinct_states"] == 60
    assert 0 < data["covered_depth"] < data["max_depth"] and data["unexpanded"] > 0
    assert data["expanded"] + data["unexpanded"] <= 60
    code, out, _ = run_cli(["explore", "group", *SMALL, "--max-states", "60", "--quiet", "--out", str(tmp_path)], capsys)
    assert f"every state within depth {data['covered_depth']} checked" in out
    assert out.splitlines()[-1] == "INCONCLUSIVE: cut by max-states before the search finished" and code == 3


def test_a_bad_parameter_value_is_one_line_exit_2(capsys):
    code, out, err = run_cli(["explore", "group-world", "--param", "members=9"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "members=9 must be between 1 and 8" in err
