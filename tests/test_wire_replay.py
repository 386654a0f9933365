"""`kverify replay` on a counterexample recorded over the wire: the recorded requests re-run in-process on the
reference coordinator with the recorded behaviours and clock steps (exit 1: still breaks; 0: fixed)."""
import json

from kverify.cli import main
from kverify.testing import start_broker
from kverify.wire.client import GroupMember, WireClient


def _zombie_commit(rb):
    """A owns both partitions (gen 1), B joins, A gives t0-1 to B (gen 2), then A commits t0-1 under gen 1."""
    a = GroupMember(WireClient("127.0.0.1", rb.port, client_id="ca"), "g")
    b = GroupMember(WireClient("127.0.0.1", rb.port, client_id="cb"), "g")
    a.finish_join(a.send_join())
    a.finish_sync(a.send_sync({a.member_id: [("t0", 0), ("t0", 1)]}))
    jb = b.send_join()
    rb.sync()
    while a.heartbeat() != "REBALANCE_IN_PROGRESS":
        rb.sync()
    a.finish_join(a.send_join())
    b.finish_join(jb)
    sa = a.send_sync({a.member_id: [("t0", 0)], b.member_id: [("t0", 1)]})
    sb = b.send_sync()
    a.finish_sync(sa)
    b.finish_sync(sb)
    return a.commit({("t0", 1): 42}, generation=1)


def test_replay_cli_reproduces_then_confirms_the_fix(tmp_path, capsys):
    with start_broker(topics={"t0": 2}, behaviours=["stale-generation-commit"], clock="manual",
                      report_dir=str(tmp_path)) as rb:
        assert _zombie_commit(rb) == {("t0", 1): "NONE"}
        assert [v.invariant for v in rb.violations] == ["committed-offset-safety"]
    path = tmp_path / "committed-offset-safety" / "counterexample.json"
    data = json.loads(path.read_text())
    assert data["model"] == "wire" and data["extra"]["replayer"] == "kverify.wire.record:replay"
    assert any(e.get("dir") == "start" for e in data["extra"]["events"])
    assert main(["replay", str(path)]) == 1
    assert "reproduced on the reference coordinator" in capsys.readouterr().out
    data["behaviours"] = []
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(data))
    assert main(["replay", "--json", str(fixed)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reproduced"] is False and "no longer reproduces" in out["message"]


def test_correct_coordinator_fences_the_zombie(tmp_path):
    with start_broker(topics={"t0": 2}, clock="manual", report_dir=str(tmp_path)) as rb:
        assert _zombie_commit(rb) == {("t0", 1): "ILLEGAL_GENERATION"}
        rb.check()
