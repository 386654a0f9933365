"""Certification of KIP-848 server-side assignors: the built-in uniform and range (Kafka 4.0), and an external
program speaking consumer-protocol problems, with stickiness judged against the current target assignment."""
import os
import sys

from kverify.certify.check import check_property, run_check
from kverify.certify.consumer import consumer_problem
from kverify.certify.targets import make_target
from kverify.cli import main

HERE = os.path.join(os.path.dirname(__file__), "external_assignors")
SERVER_RR = f"{sys.executable} {os.path.join(HERE, 'server_roundrobin.py')}"


def test_builtin_server_side_assignors_hold_their_claims():
    for name in ("consumer:uniform", "consumer:range"):
        verdicts = run_check(make_target(name), seed=3, examples=40)
        claimed = [v for v in verdicts if v.claimed]
        assert claimed and all(v.holds and v.judged > 0 for v in claimed), \
            {v.name: v.message for v in claimed if not v.holds}


def test_uniform_stickiness_gap_of_kafka_4_0_is_found_and_reported():
    """Kafka 4.0's homogeneous builder may move a partition of a balanced group (KAFKA-18688): the sticky
    property (not claimed for that reason) finds it against the current target assignment."""
    v = check_property(make_target("consumer:uniform"), "sticky", seed=5, examples=100)
    assert not v.claimed and "KAFKA-18688" in v.reason
    assert not v.holds and "identical subscriptions" in v.message
    members = consumer_problem(v.counterexample["problem"], "uniform")["members"]
    assert any(m["assigned"] for m in members)       # judged against a target assignment


def test_external_server_side_program_gets_consumer_problems(tmp_path):
    target = make_target(None, SERVER_RR, timeout=10, protocol="consumer")
    try:
        verdicts = {v.name: v for v in run_check(target, seed=2, examples=40,
                                                   properties=["answers", "complete", "exclusive", "sticky"])}
    finally:
        target.close()
    assert verdicts["answers"].holds and verdicts["complete"].holds and verdicts["exclusive"].holds
    assert not verdicts["sticky"].holds and "keeps" in verdicts["sticky"].message


def test_cli_certifies_a_server_side_assignor(capsys, tmp_path):
    rc = main(["assignor", "check", "consumer:uniform", "--seed", "1", "--examples", "10", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "all claimed properties hold" in out and "sticky" in out
    assert main(["assignor", "check", "range", "--protocol", "consumer"]) == 2
