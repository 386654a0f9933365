"""`--engine processes` (model/search/parallel.py): the multi-process search gives the in-process
explorer's answers on every model and world at small bounds, with and without a behaviour switched on
(distinct states, transitions, depth, states per level, deadlocks, `sometimes`, the state-graph
figures and `recoverable`, violations with the very same shortest traces), with the explorer's hash
or the stable fingerprints; a `--max-states` cut keeps exactly the in-process explorer's first N
states and says it is partial; the CLI flags refuse bad input with one line."""
import json

import pytest

from kverify.model import registry
from kverify.model.explore import explore
from kverify.model.search.parallel import explore_processes

CASES = [
    ("group", {"members": 2, "partitions": 1, "events": 1, "commits": 1}, []),
    ("group", {"members": 2, "partitions": 1, "events": 2, "commits": 1}, ["no-generation-bump"]),
    ("group-world", {"events": 1}, []),
    ("group-world", {"events": 1}, ["leader-not-reelected"]),
    ("replication", {"replicas": 2, "records": 1}, []),
    ("replication", {"replicas": 2, "records": 1}, ["hw-ignores-min-isr"]),
    ("offsets", {"replicas": 2, "records": 1, "epochs": 2, "min_isr": 1}, []),
    ("replication-world", {"records": 1, "failovers": 0}, []),
    ("offsets-world", {"brokers": 2, "min_isr": 1}, []),
    ("assignor-rounds", {"members": 1, "max_members": 2, "max_events": 2, "max_rounds": 2}, []),
    ("assignor-rounds", {"members": 1, "max_members": 2, "max_events": 2, "max_rounds": 2}, ["kafka-12984-double-claim"]),
    ("consumer-group", {"members": 1, "topics": 1}, []),
    ("consumer-group", {"members": 1, "topics": 1}, ["kafka-20442-empty-group-assignment-epoch"]),
    ("consumer-group-world", {"members": 1}, []),
    ("consumer-group-world", {"perturbations": 0, "grow": False}, ["kafka-16147-lost-partition-epoch"]),
    ("offsets", {"replicas": 2, "records": 1, "epochs": 2, "min_isr": 1}, ["truncate-to-hw"]),
]
# bounds where `recoverable` fails (the trace to the first unrecoverable state must be the in-process one)
UNRECOVERABLE = [
    ("group", {"members": 2, "partitions": 1, "events": 2, "faults": 1, "commits": 1}, ["kafka-12890-no-sync-barrier"]),
    ("group-world", {"members": 1, "events": 2, "faults": 1, "losses": 1, "ticks": 0, "request_timeouts": False,
                     "settle_ticks": 12}, []),
]


def answers(res) -> dict:
    """What two engines must agree on."""
    return {"distinct": res.distinct_states, "transitions": res.transitions, "depth": res.max_depth,
            "per_depth": res.states_per_depth, "deadlocks": res.deadlocks, "sometimes": res.sometimes,
            "complete": res.complete, "covered_depth": res.covered_depth,
            "graph": res.graph.to_json() if res.graph is not None else None,
            "violations": [(f.invariant, f.init_index, list(f.actions)) for f in res.violations]}


def case_id(case) -> str:
    name, _, beh = case
    return name + ("+" + beh[0] if beh else "")


def test_every_registered_model_is_covered():
    assert {c[0] for c in CASES} == set(registry.names())


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_processes_engine_gives_the_in_process_answers(case):
    name, params, beh = case
    ref = explore(registry.build(name, params, beh))
    got = explore_processes(registry.build(name, params, beh), workers=2)
    assert answers(got) == answers(ref)
    assert got.distinct_states > 1
    if beh:
        assert got.violations, "the switched-on behaviour must be caught"
    else:
        assert got.graph.analysed and got.graph.edges > 0, "recoverability is checked, not skipped"


@pytest.mark.parametrize("case", UNRECOVERABLE, ids=case_id)
def test_processes_engine_finds_the_in_process_unrecoverable_states(case):
    name, params, beh = case
    ref = explore(registry.build(name, params, beh))
    got = explore_processes(registry.build(name, params, beh), workers=3)
    assert answers(got) == answers(ref)
    assert got.graph.unrecoverable > 0 and "recoverable" in [f.invariant for f in got.violations]


def test_three_workers_and_symmetry_off_agree_too():
    name, params, beh = CASES[3]
    ref = explore(registry.build(name, params, beh), symmetry=False)
    got = explore_processes(registry.build(name, params, beh), workers=3, symmetry=False)
    assert answers(got) == answers(ref)


@pytest.mark.parametrize("case", [c for c in CASES if not c[2]], ids=case_id)
def test_stable_fingerprints_give_the_same_answers(case):
    name, params, beh = case
    ref = explore(registry.build(name, params, beh), graph=False)
    got = explore_processes(registry.build(name, params, beh), workers=2, stable=True, graph_limit=0)
    assert answers(got) == answers(ref)


def test_the_graph_limit_is_the_in_process_one():
    name, params, beh = CASES[4]                 # replication: about 4k states
    ref = explore(registry.build(name, params, beh), graph_limit=1000)
    got = explore_processes(registry.build(name, params, beh), workers=2, graph_limit=1000)
    assert answers(got) == answers(ref) and not got.graph.analysed and "more than 1000" in got.graph.note


@pytest.mark.parametrize("cap", [37, 500, 1234])
def test_a_state_budget_cut_keeps_the_in_process_first_states_and_says_it_is_partial(cap):
    def build():
        return registry.build("replication", {"replicas": 2, "records": 1})
    ref = explore(build(), max_states=cap)
    got = explore_processes(build(), workers=2, max_states=cap)
    assert not got.complete and got.stopped == "max-states" and got.distinct_states == cap == ref.distinct_states
    assert got.covered_depth == ref.covered_depth and got.unexpanded > 0
    assert got.sometimes == ref.sometimes and got.violations == [] and not got.graph.analysed
    assert got.states_per_depth == ref.states_per_depth and got.max_depth == ref.max_depth
    assert "stopped before it was complete" in got.graph.note


def test_stop_on_first_reports_the_first_violation_and_stops():
    name, params, beh = CASES[5]                 # replication with hw-ignores-min-isr
    ref = explore(registry.build(name, params, beh))
    got = explore_processes(registry.build(name, params, beh), workers=2, stop_on_first=True)
    assert not got.complete and got.stopped == "violation" and got.distinct_states < ref.distinct_states
    first = min(ref.violations, key=lambda f: len(f.actions))
    assert [(f.invariant, f.actions) for f in got.violations][0] == (first.invariant, first.actions)


def _cli(capsys, *argv):
    from kverify.cli import main

    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_processes_engine_matches_inline_and_writes_the_record(capsys, tmp_path):
    base = ["explore", "group", "--param", "members=2", "--param", "partitions=1", "--param", "events=2",
            "--param", "commits=1", "--behaviour", "no-generation-bump", "--json", "--quiet"]
    rc1, out1, _ = _cli(capsys, *base, "--graph-limit", "0", "--out", str(tmp_path / "a"))
    rc2, out2, _ = _cli(capsys, *base, "--engine", "processes", "--workers", "2", "--out", str(tmp_path / "b"))
    a, b = json.loads(out1), json.loads(out2)
    assert rc1 == rc2 == 1
    for k in ("distinct_states", "transitions", "max_depth", "deadlocks", "sometimes", "complete"):
        assert a[k] == b[k], k
    assert [(v["invariant"], v["actions"]) for v in a["violations"]] == [(v["invariant"], v["actions"]) for v in b["violations"]]
    record = json.load(open(b["violations"][0]["file"]))
    assert record["invariant"] == "generation-monotonicity"


@pytest.mark.parametrize("argv, needle", [
    (["--engine", "processes", "--workers", "0"], "--workers must be at least 1"),
    (["--engine", "processes", "--partitions", "2"], "--engine spark only"),
    (["--engine", "spark", "--master", "nonsense"], "not a Spark master URL"),
    (["--engine", "spark", "--workers", "2"], "--engine processes only"),
    (["--engine", "processes", "--graph", "g.dot"], "only --engine inline"),
])
def test_cli_bad_engine_flags_exit_2_with_one_line(capsys, argv, needle):
    rc, out, err = _cli(capsys, "explore", "group", *argv)
    assert rc == 2
    assert needle in err and len(err.strip().splitlines()) == 1


def test_a_key_is_its_trace_and_the_plan_moves_chunks_off_a_loaded_shard():
    from kverify.model.search import shard as sh

    key = 3
    for k in (0, 7, sh.RADIX - 1, 2):
        key = key * sh.RADIX + k
    assert sh.path_of(key, 4) == (3, [0, 7, sh.RADIX - 1, 2]) and sh.path_of(5, 0) == (5, [])
    assert sh.plan({(0, 0): 10, (1, 0): 10}, 2) == {}                       # balanced: nothing moves
    load = {(0, c): 10 for c in range(8)}                                    # every state on shard 0
    moves = sh.plan(load, 2)
    assert moves == sh.plan(dict(reversed(list(load.items()))), 2)           # deterministic
    assert set(moves.values()) == {1} and sum(load[pc] for pc in moves) == 40
    assert sh.plan({(0, 0): 50, (1, 0): 1}, 2) == {}                         # a shard keeps its first chunk
    assert all(len(c) <= sh.CHUNK for c in sh.chunks_of(list(range(5 * sh.CHUNK + 1))))
    assert len(sh.chunks_of(list(range(160)))) == sh.SPLIT
