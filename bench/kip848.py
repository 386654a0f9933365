"""KIP-848 exhaustively: the `consumer-group` model beside the public TLA+ spec's published anchor.

Why it exists: the public TLA+ spec of KIP-848 (Vanlightly/kafka-tlaplus,
groupprotocol/consumer_group_protocol_kip_848_v2.tla) is checked by TLC at 2 clients, 2 topics x 1
partition, 1 perturbation (a subscription change, a leave, a crash or a live member's session
expiry): all invariants hold, 9,630,295 distinct states in 8 min 12 s with 2 workers (its authors'
figure; the anchor below). This script explores kverify's abstract model at the bound covering the
same situations (members=2 topics=2 partitions=1 perturbations=1: subscription change, leave, crash,
live session expiry; no lost answers, commits or partition growth, which that spec does not have),
then at the model's defaults (which add them), and prints time and distinct states beside the anchor.
The two state spaces are not comparable state for state (that spec keeps a network of messages,
connection ids and member-id counters; kverify handles a request in the step that sends it and
skips heartbeats that change nothing), so the figures say how long each takes to cover those
situations, nothing more.

    .venv/bin/python bench/kip848.py [--tlc-spec PATH/consumer_group_protocol_kip_848_v2.tla] [--workers 2]

With `--tlc-spec` (a local copy you fetched yourself; this script never downloads anything), TLC
also checks that spec with the .cfg beside it (same name, .cfg) and its time and states are printed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from kverify.model import registry  # noqa: E402
from kverify.model.explore import explore  # noqa: E402

ANCHOR = {"what": "TLC, kafka-tlaplus consumer_group_protocol_kip_848_v2 (2 clients, 2 topics x 1 partition, "
                  "1 perturbation), 2 workers, published", "states": 9_630_295, "seconds": 8 * 60 + 12}
SAME_SITUATIONS = {"members": 2, "topics": 2, "partitions": 1, "perturbations": 1, "losses": 0, "commits": 0,
                   "grow": False}


def run_model(label: str, params: dict) -> dict:
    proto = registry.build("consumer-group", params, ())
    t0 = time.perf_counter()
    res = explore(proto, graph=True, graph_limit=1_000_000)
    secs = time.perf_counter() - t0
    ok = res.complete and not res.violations and not res.vacuous
    return {"what": f"kverify explore consumer-group, {label}", "states": res.distinct_states, "seconds": secs,
            "note": ("complete, no violation, every sometimes reached, recoverable" if ok else
                     f"complete={res.complete} violations={[f.violation.invariant for f in res.violations]} "
                     f"vacuous={res.vacuous}")}


def run_tlc(spec: str, workers: str) -> dict:
    from kverify.tla import runner

    cfg = os.path.splitext(spec)[0] + ".cfg"
    r = runner.run_tlc(spec, cfg, workers=workers, check_deadlock=False)
    return {"what": f"TLC here, {os.path.basename(spec)}, {workers} workers", "states": r.distinct or 0,
            "seconds": r.seconds, "note": "complete" if r.complete else f"violation {r.violation}"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tlc-spec", metavar="PATH", help="local copy of the kafka-tlaplus KIP-848 spec (.tla, .cfg beside)")
    ap.add_argument("--workers", default="2", help="TLC workers (default 2, as the anchor)")
    ap.add_argument("--skip-defaults", action="store_true", help="only the bound of the same situations")
    args = ap.parse_args(argv)
    rows = [dict(ANCHOR, note="not re-run")]
    rows.append(run_model("same situations " + " ".join(f"{k}={v}" for k, v in SAME_SITUATIONS.items()),
                          SAME_SITUATIONS))
    if not args.skip_defaults:
        rows.append(run_model("defaults (+1 lost answer, +1 commit, partition growth)", {}))
    if args.tlc_spec:
        if not os.path.isfile(args.tlc_spec):
            print(f"kip848: no such file: {args.tlc_spec}", file=sys.stderr)
            return 2
        rows.append(run_tlc(args.tlc_spec, args.workers))
    for r in rows:
        rate = r["states"] / r["seconds"] if r["seconds"] else 0
        print(f"{r['states']:>12,} states {r['seconds']:>9.1f} s {rate:>10,.0f} states/s  {r['what']}  [{r['note']}]")
    base = rows[1]
    print(f"same situations: {base['seconds']:.1f} s vs the anchor's {ANCHOR['seconds']} s "
          f"({ANCHOR['seconds'] / max(base['seconds'], 1e-9):.0f}x less time)")
    return 0 if all("violation" not in r["note"] or r is rows[0] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
