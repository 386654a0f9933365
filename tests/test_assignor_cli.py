"""`kverify assign`: JSON lines in, one answer per line out, error answers and exit 2 for bad lines."""
import io
import json

from kverify.cli import main

P1 = {"id": "p1", "assignor": "range", "topics": {"t0": 3, "t1": 2},
      "members": [{"id": "c0", "topics": ["t0", "t1"], "owned": [["t0", 0]], "generation": 5, "instance_id": None},
                  {"id": "c1", "topics": ["t0"], "owned": None, "generation": None, "instance_id": None}]}


def test_assign_reads_a_file_and_writes_one_answer_per_line(tmp_path, capsys):
    f = tmp_path / "problems.jsonl"
    f.write_text(json.dumps(P1) + "\n\n" + json.dumps(dict(P1, id="p2", assignor="roundrobin")) + "\n")
    assert main(["assign", "--input", str(f)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["p1", "p2"]
    assert json.loads(lines[0])["assignment"] == {"c0": [["t0", 0], ["t0", 1], ["t1", 0], ["t1", 1]], "c1": [["t0", 2]]}


def test_assign_from_stdin_with_assignor_override(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(P1) + "\n"))
    assert main(["assign", "--assignor", "roundrobin"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["assignment"] == {"c0": [["t0", 0], ["t0", 2], ["t1", 0], ["t1", 1]], "c1": [["t0", 1]]}


def test_bad_lines_get_error_answers_in_place_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("not json\n" + json.dumps(dict(P1, assignor="nope")) + "\n"
                                                 + json.dumps(P1) + "\n"))
    assert main(["assign"]) == 2
    captured = capsys.readouterr()
    out = [json.loads(x) for x in captured.out.strip().splitlines()]
    assert "not valid JSON" in out[0]["error"] and "unknown assignor" in out[1]["error"]
    assert out[2]["id"] == "p1" and "assignment" in out[2]
    assert "line 1" in captured.err and "line 2" in captured.err


def test_json_flag_collects_answers(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(P1) + "\n"))
    assert main(["assign", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["errors"] == 0 and out["answers"][0]["id"] == "p1"


def test_usage_errors_are_one_line_exit_2(tmp_path, capsys):
    assert main(["assign", "--input", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["assign", "--assignor", "nope"]) == 2
    assert main(["assign", "--behaviour", "no-such-behaviour"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "cannot read" in err[0] and "unknown assignor" in err[1]


def test_assignor_behaviours_are_listed(capsys):
    assert main(["behaviours", "--component", "assignor", "--json"]) == 0
    names = {b["name"] for b in json.loads(capsys.readouterr().out)["behaviours"]}
    assert names == {"kafka-12984-double-claim", "kafka-14639-stale-owner-ignored"}


def test_cli_reproduces_issue_seed_examples(monkeypatch, capsys):
    def m(i, topics):
        return {"id": i, "topics": topics, "owned": None, "generation": None, "instance_id": None}

    problems = [
        {"id": "range", "assignor": "range", "topics": {"t1": 4}, "members": [m(c, ["t1"]) for c in ("c0", "c1", "c2")]},
        {"id": "rr", "assignor": "roundrobin", "topics": {"t0": 3, "t1": 3},
         "members": [m("C0", ["t0", "t1"]), m("C1", ["t0", "t1"])]},
        {"id": "sticky", "assignor": "sticky", "topics": {"t0": 1, "t1": 2, "t2": 3},
         "members": [m("C0", ["t0"]), m("C1", ["t0", "t1"]), m("C2", ["t0", "t1", "t2"])]},
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(p) + "\n" for p in problems)))
    assert main(["assign"]) == 0
    out = [json.loads(x)["assignment"] for x in capsys.readouterr().out.strip().splitlines()]
    assert out[0] == {"c0": [["t1", 0], ["t1", 1]], "c1": [["t1", 2]], "c2": [["t1", 3]]}
    assert out[1] == {"C0": [["t0", 0], ["t0", 2], ["t1", 1]], "C1": [["t0", 1], ["t1", 0], ["t1", 2]]}
    assert out[2] == {"C0": [["t0", 0]], "C1": [["t1", 0], ["t1", 1]], "C2": [["t2", 0], ["t2", 1], ["t2", 2]]}
