"""`kverify tlc SPEC --compare` without --config compares every shipped .cfg and fails on any disagreement
(the comparisons themselves are tested in test_tlc_crosscheck.py; here the command's contract)."""
from types import SimpleNamespace

from kverify.cli import main


def _cmp(cfg, ok, states=10):
    return SimpleNamespace(cfg=f"/x/specs/{cfg}", ok=ok, explored=SimpleNamespace(distinct_states=states),
                           differences=[] if ok else ["state sets differ: first differing state <<...>>"],
                           to_json=lambda: {"cfg": cfg, "ok": ok})


def test_every_cfg_is_compared_and_one_disagreement_fails(monkeypatch, capsys):
    from kverify.tla import crosscheck

    seen = {}

    def fake(model, spec, **kw):
        seen["model"] = model
        return [_cmp("OffsetsFailover_a.cfg", True), _cmp("OffsetsFailover_b.cfg", False)]

    monkeypatch.setattr(crosscheck, "compare_all", fake)
    assert main(["tlc", "OffsetsFailover", "--compare"]) == 1
    out = capsys.readouterr().out
    assert seen["model"] == "offsets"
    assert "OffsetsFailover_a.cfg: 10 distinct states: agree" in out
    assert "OffsetsFailover_b.cfg: 10 distinct states: DISAGREE: state sets differ" in out
    monkeypatch.setattr(crosscheck, "compare_all", lambda model, spec, **kw: [_cmp("A.cfg", True)])
    assert main(["tlc", "OffsetsFailover", "--compare"]) == 0


def test_a_config_is_needed_without_compare(capsys):
    assert main(["tlc", "GroupMembership"]) == 2
    assert "--config" in capsys.readouterr().err
