"""Coordinator conformance scenarios over the Kafka wire protocol against `kverify broker` (in-process, port 0):
the same verdict as in-process on every runnable scenario, every coordinator behaviour caught over the wire,
non-runnable scenarios reported as such (never passed), and the CLI `--bootstrap` path."""
import glob
import os

import pytest

from kverify import behaviours as B
from kverify.cli import main
from kverify.conformance.format import load_file
from kverify.conformance.runner import run_all
from kverify.wire.conformance import Target, broker_coordinator_config, not_runnable, zero_hash_prefix
from kverify.impl.coordinator.partition import java_string_hash
from kverify.wire.server import Broker, BrokerConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = sorted(glob.glob(os.path.join(ROOT, "tests", "scenarios", "*.jsonl")))
SCENARIOS = [sc for f in FILES for sc in load_file(f)]


class _Running:
    def __init__(self, behaviours=(), **coordinator):
        cfg = {**broker_coordinator_config(), **coordinator}
        self.coordinator = cfg
        self.b = Broker(BrokerConfig(clock="manual", topics={"t0": 3}, behaviours=frozenset(behaviours),
                                     coordinator=cfg))

    def __enter__(self):
        self.port = self.b.start()
        return self

    def __exit__(self, *exc):
        self.b.stop()
        assert self.b.errors == []

    def target(self):
        cfg = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.coordinator.items()}
        return Target("127.0.0.1", self.port, broker_config=cfg)


def _wire(target, scenarios):
    return run_all(scenarios, adapter_factory=target, runnable=lambda sc: not_runnable(sc, target.versions,
                                                                                       target.config))


def test_runnable_scenarios_agree_with_in_process():
    with _Running() as r:
        t = r.target()
        assert t.controlled and "control request" in t.clock_mode
        wire = _wire(t, SCENARIOS)
    local = {o.id: o.passed for o in run_all(SCENARIOS).outcomes}
    ran = [o for o in wire.outcomes if o.runnable]
    assert len(ran) >= 50, f"only {len(ran)} scenarios runnable over the wire"
    assert [o.line_text() for o in ran if o.passed != local[o.id]] == []
    skipped = [o for o in wire.outcomes if not o.runnable]
    assert skipped and all(not o.passed and o.message for o in skipped)
    assert all(o.line_text().startswith("NOT RUNNABLE OVER THE WIRE") for o in skipped)
    assert wire.failed == 0 and wire.passed == len(ran)


def _special(behaviour):
    """Scenarios that need a broker configured like them (the behaviour's only failing scenario is one of those)."""
    for sc in SCENARIOS:
        if behaviour == "math-abs-coordinator" and sc.config["offsets_partitions"] == 50:
            return sc
        if behaviour == "kafka-13636-expire-while-rebalancing" and sc.config["offsets_expiration_enabled"]:
            return sc
    return None


BEHAVIOURS = ["kafka-12890-no-sync-barrier", "kafka-13636-expire-while-rebalancing",
              "kafka-8500-duplicate-static-member", "kafka-9801-static-replace-in-completing",
              "leader-not-reelected", "math-abs-coordinator", "no-generation-bump", "stale-generation-commit"]


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_each_coordinator_behaviour_fails_a_scenario_over_the_wire(behaviour):
    special = _special(behaviour)
    if special is not None:
        keys = ("offsets_partitions", "offsets_expiration_enabled", "offsets_retention_ms",
                "offsets_retention_check_interval_ms")
        cfg = {k: special.config[k] for k in keys}
        cfg["owned_partitions"] = tuple(special.config["owned_partitions"])
        scenarios = [special]
    else:
        cfg, scenarios = {}, SCENARIOS
    with _Running([behaviour], **cfg) as r:
        wire = _wire(r.target(), scenarios)
    failed = [o for o in wire.outcomes if o.runnable and not o.passed]
    assert failed, f"{behaviour}: no scenario fails over the wire"
    local = {o.id: o.passed for o in run_all(scenarios, behaviours=frozenset([behaviour])).outcomes}
    assert all(local[o.id] is False for o in failed)


def test_every_coordinator_behaviour_is_in_the_list_above():
    assert sorted(b.name for b in B.by_component("coordinator")) == sorted(BEHAVIOURS)


def test_every_request_op_has_a_wire_api():
    from kverify.conformance.format import REQUEST_OPS
    from kverify.wire.conformance import API_OF

    assert set(API_OF) == set(REQUEST_OPS)


def test_renamed_groups_hash_like_the_originals():
    p = zero_hash_prefix("kv1-s1-")
    assert java_string_hash(p) == 0
    for g in ("groupId", "otherGroup", "polygenelubricants", "deadGroupId"):
        assert java_string_hash(p + g) == java_string_hash(g)


def test_cli_bootstrap_reports_not_runnable_and_agrees(capsys):
    join = [f for f in FILES if f.endswith("join.jsonl")][0]
    status = [f for f in FILES if f.endswith("coordinator_status.jsonl")][0]
    with _Running() as r:
        code = main(["coordinator", "run", "--bootstrap", f"127.0.0.1:{r.port}", join, status])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "NOT RUNNABLE OVER THE WIRE" in out and "PASS " in out and "FAIL" not in out
    assert "clock: control request (kverify broker)" in out


def test_cli_bootstrap_fails_under_a_behaviour(capsys):
    join = [f for f in FILES if f.endswith("join.jsonl")][0]
    with _Running(["no-generation-bump"]) as r:
        code = main(["coordinator", "run", "--json", "--bootstrap", f"127.0.0.1:{r.port}", join])
    import json

    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["failed"] >= 1 and data["not_runnable"] >= 1


@pytest.mark.parametrize("argv,needle", [
    (["--bootstrap", "nohostport"], "HOST:PORT"),
    (["--bootstrap", "127.0.0.1:0"], "HOST:PORT"),
    (["--bootstrap", "127.0.0.1:1", "--behaviour", "no-generation-bump"], "broker's own behaviours"),
    (["--bootstrap", "127.0.0.1:1"], "cannot talk to the broker"),
])
def test_cli_bootstrap_bad_usage(argv, needle, capsys):
    code = main(["coordinator", "run"] + argv + [FILES[0]])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
