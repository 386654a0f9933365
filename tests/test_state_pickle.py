"""States of every model and world survive plain `pickle` (the multi-process and Spark explorers move
frontier chunks between processes): the copy is equal, has the same fingerprint, the same enabled
actions, the same successors and the same invariant verdicts, in a process that never saw the
original. And the stable fingerprints (model/search/shard.py) are equal in interpreters with
different string-hash seeds, where the explorer's `hash` is not."""
import json
import os
import pickle
import subprocess
import sys

import pytest

from kverify.model import registry
from kverify.model.search import shard as sh

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sample(name: str, per_level: int = 25, levels: int = 8) -> list:
    """Up to per_level states of each of the first levels of the model's default bound, reached by
    the shard's own expansion (caches filled as the explorer fills them)."""
    p = registry.build(name, {}, [])
    m = sh.Model(p, True)
    items = [(i, 0, 0, 0, s) for i, s in enumerate(p.init_states())]
    out = [it[4] for it in items]
    for d in range(1, levels):
        nxt = []
        for it in items[:per_level]:
            for t in (p.step(it[4], a) for a in list(p.actions(it[4]))[:4]):
                [inv.check(t) for inv in p.state_invariants]
                p.is_quiescent_good(t)
                p.fingerprint(t)
                nxt.append((0, 0, 0, 0, t))
        items = nxt
        out.extend(it[4] for it in items[:per_level])
    return p, m, out


@pytest.mark.parametrize("name", registry.names())
def test_states_round_trip_through_plain_pickle(name):
    p, m, states = sample(name)
    blob = pickle.dumps(states, protocol=pickle.HIGHEST_PROTOCOL)
    code = (f"import pickle, sys, json\nfrom kverify.model import registry\nfrom kverify.model.search import shard as sh\n"
            f"p = registry.build({name!r}, {{}}, [])\nm = sh.Model(p, True, stable=True)\n"
            f"states = pickle.loads(sys.stdin.buffer.read())\n"
            f"print(json.dumps([[m.owner(s)[0], [repr(a) for a in p.actions(s)],"
            f" [inv.check(s) for inv in p.state_invariants], p.is_quiescent_good(s)] for s in states]))\n")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    there = json.loads(out.stdout)
    stable = sh.Model(p, True, stable=True)
    here = [[stable.owner(s)[0], [repr(a) for a in p.actions(s)], [inv.check(s) for inv in p.state_invariants],
             p.is_quiescent_good(s)] for s in states]
    assert there == here
    for s in states[:40]:
        t = pickle.loads(pickle.dumps(s))
        assert t == s and p.fingerprint(t) == p.fingerprint(s)
        assert [p.fingerprint(p.step(t, a)) for a in p.actions(t)] == [p.fingerprint(p.step(s, a)) for a in p.actions(s)]


def test_stable_fingerprints_do_not_depend_on_the_hash_seed_where_hash_does():
    code = ("import sys\nfrom kverify.model import registry\nfrom kverify.model.search import shard as sh\n"
            "p = registry.build('group-world', {}, [])\ns = p.init_states()[0]\nt = p.step(s, list(p.actions(s))[0])\n"
            "print(sh.stable_fingerprint(p.canonical(t)), hash(p.canonical(t)))\n")
    runs = []
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, timeout=300,
                             env=dict(os.environ, PYTHONHASHSEED=seed))
        assert out.returncode == 0, out.stderr.decode()[-2000:]
        runs.append(out.stdout.split())
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] != runs[1][1]            # the explorer's hash is not (the world's states hold strings)
