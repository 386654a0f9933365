"""The providers of checks for `kverify verify`, cheapest first. Each takes a profile name and
returns `Check`s; every check runs a real engine and returns a verdict (nothing is skipped
silently: a check that cannot run in this installation says so and fails). Budgets and bounds come
from kverify/suite/profiles.py (counts only); a check is PASS only when it ran complete, INCONCLUSIVE
when a budget, a bound or the user's --max-seconds cut it short (its summary says what was covered
and what cut it), FAIL when something broke, a step raised included."""
from __future__ import annotations

import os

from kverify.suite import Check, CheckResult, Context
from kverify.suite import profiles
from kverify.suite.verdicts import FAIL, INCONCLUSIVE, PASS, explore_outcome

# Every registered model is explored and walked (a new model is in the gate the day it is registered);
# Hypothesis drives all but the abstract models below. MODELS / WORLDS: a fixed list instead (tests).
ABSTRACT = ("group", "replication", "offsets")
MODELS = None
WORLDS = None
# classic client-side assignors, then KIP-848's server-side ones (certified against the target assignment)
ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky", "consumer:uniform", "consumer:range")
SHRINK_BUDGET = 2000          # candidate replays when shrinking a walk's finding
SCENARIOS_DIR = os.path.join("tests", "scenarios")


def models() -> tuple:
    from kverify.model import registry

    return tuple(MODELS) if MODELS is not None else tuple(registry.ENTRIES)


def worlds() -> tuple:
    return tuple(WORLDS) if WORLDS is not None else tuple(m for m in models() if m not in ABSTRACT)


def _model_behaviours(ctx: Context, name: str) -> frozenset:
    from kverify.model import registry

    return ctx.behaviours & registry.supports(name)


def _walk_params(name: str) -> dict:
    """A model's bounds for random walks (its spec's `walk_params`: bounds under which short random
    runs reach every `sometimes` property, e.g. time jumps a walker can take)."""
    from kverify.model import registry

    return dict(registry.spec_for(name).walk_params)


def _build(ctx: Context, name: str, walk: bool = False):
    """The model at the profile's bounds; for random runs (walks, Hypothesis), the model's walk bounds first."""
    from kverify.model import registry

    params = _walk_params(name) if walk else {}
    params.update(profiles.params(ctx.profile, name))
    return registry.build(name, params, _model_behaviours(ctx, name))


def _report_violation(ctx, proto, name, violation, actions, init_index, engine, seed=None) -> dict:
    from kverify.reports.record import from_trace
    from kverify.reports.writer import signature, slug, write_report

    cx = from_trace(proto, actions, violation, engine=engine, seed=seed, init_index=init_index, model_name=name)
    path = write_report(cx, os.path.join(ctx.out_dir, slug(f"{engine}-{name}-{violation.invariant}")))
    return {"invariant": violation.invariant, "signature": signature(cx), "report": path,
            "message": violation.message}


def _fail(name, category, viol: list, summary: str, covered: dict, figures=None) -> CheckResult:
    return CheckResult(name, category, FAIL, summary, reports=[v["report"] for v in viol if v["report"]],
                       violations=viol, covered=covered, figures=figures or {})


# --- assignor certification ------------------------------------------------------------------
def _assignor_check(assignor: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.certify.check import run_check
        from kverify.certify.targets import make_target
        from kverify.model import registry  # noqa: F401  (behaviours validated by verify)

        from kverify.certify.check import safe_name
        from kverify.certify.consumer import PREFIX

        # the historical assignor behaviours live in the classic assignors only
        beh = frozenset(b for b in ctx.behaviours if _is_assignor_behaviour(b)) if not assignor.startswith(PREFIX) \
            else frozenset()
        target = make_target(assignor, behaviours=beh)
        try:
            verdicts = run_check(target, ctx.seed, profiles.budget(ctx.profile).examples,
                                 out_dir=os.path.join(ctx.out_dir, f"assignor-{safe_name(assignor)}"))
        finally:
            target.close()
        failed = [v for v in verdicts if v.claimed and not v.holds]
        viol = [{"invariant": v.name, "signature": _assignor_signature(assignor, v), "report": v.path,
                 "message": v.message} for v in failed]
        # a claimed property judged on no problem at all (every one refused) says nothing: INCONCLUSIVE
        undecided = [v.name for v in verdicts if v.claimed and v.holds and getattr(v, "inconclusive", False)]
        held = sum(1 for v in verdicts if v.claimed and v.holds) - len(undecided)
        unclaimed = [v.name for v in verdicts if not v.claimed]
        examples = {v.name: v.examples for v in verdicts}
        covered = {"examples": sum(examples.values())}
        check = f"assignor:{assignor}"
        if failed:
            return _fail(check, "assignor", viol, "; ".join(f"{v.name}: {v.message}" for v in failed), covered,
                         {"examples": examples})
        summary = (f"{held} claimed properties hold" + (f" ({', '.join(unclaimed)} not claimed)" if unclaimed else "")
                   + f", {covered['examples']:,} scenarios")
        if undecided:
            return CheckResult(check, "assignor", INCONCLUSIVE,
                               summary + f"; judged on no problem: {', '.join(undecided)}", covered=covered,
                               figures={"examples": examples}, cut="no answered problem for " + ", ".join(undecided))
        return CheckResult(check, "assignor", PASS, summary, figures={"examples": examples}, covered=covered)
    return run


def _is_assignor_behaviour(name: str) -> bool:
    from kverify import behaviours as B

    return B.get(name).component == "assignor"


def _assignor_signature(assignor, verdict) -> str:
    import hashlib
    import json

    blob = json.dumps([assignor, verdict.name, verdict.counterexample], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def assignors(profile: str) -> list:
    return [Check(f"assignor:{a}", "assignor", _assignor_check(a)) for a in ASSIGNORS]


# --- conformance scenarios ---------------------------------------------------------------------
def _conformance(ctx: Context) -> CheckResult:
    import glob

    from kverify.conformance.format import load_file
    from kverify.conformance.runner import run_all

    files = sorted(glob.glob(os.path.join(SCENARIOS_DIR, "*.jsonl")))
    if not files:
        return CheckResult("conformance:coordinator", "conformance", FAIL,
                           f"no scenario files under {SCENARIOS_DIR} (run from a kverify checkout)")
    scenarios = [sc for f in files for sc in load_file(f)]
    results = run_all(scenarios, behaviours=frozenset(b for b in ctx.behaviours if _component(b) == "coordinator")).outcomes
    failed = [r for r in results if not r.passed]
    summary = (f"{len(results)} coordinator scenarios pass" if not failed
               else f"{len(failed)}/{len(results)} scenarios fail, first: {failed[0].id}")
    return CheckResult("conformance:coordinator", "conformance", FAIL if failed else PASS, summary,
                       violations=[{"invariant": "conformance", "signature": r.id, "report": "",
                                    "message": f"{r.id} fails"} for r in failed],
                       covered={"scenarios": len(results)})


def _component(name):
    from kverify import behaviours as B

    return B.get(name).component


def _table_verdict(name: str, invariant: str, what: str, unit: str, n: int, bad: list) -> CheckResult:
    """PASS when the implementation agrees with every one of `n` recorded Kafka/Java facts, else FAIL per line."""
    if bad:
        return CheckResult(name, "conformance", FAIL, f"{len(bad)} of {n} {what} differ, first: {bad[0]}",
                           violations=[{"invariant": invariant, "signature": m.split()[0], "report": "",
                                        "message": m} for m in bad], covered={unit: n})
    return CheckResult(name, "conformance", PASS, f"{n} {what} agree", covered={unit: n})


def _java_order(ctx: Context) -> CheckResult:
    """impl/assignors/java_order.py against String.hashCode / HashMap / HashSet orders JDK 17 printed."""
    from kverify.conformance import java_order as J

    cases = J.load()
    return _table_verdict("conformance:java-order", "java-order", "Java vectors", "vectors", J.count(cases), J.mismatches(cases))


def _kafka_defaults(ctx: Context) -> CheckResult:
    """The config classes' defaults against Kafka's (tests/scenarios/kafka_defaults.json)."""
    from kverify.conformance import defaults as D

    rows = D.load()
    return _table_verdict("conformance:kafka-defaults", "kafka-default", "config defaults", "defaults", len(rows),
                          D.mismatches(rows))


def _replica_placement(ctx: Context) -> CheckResult:
    """impl/replication/placement.py against Kafka's rack-unaware placement (tests/scenarios/replica_placement.json)."""
    from kverify.conformance import placement as PL

    vectors = PL.load()
    return _table_verdict("conformance:replica-placement", "replica-placement", "placement vectors", "vectors",
                          len(vectors), PL.mismatches(vectors))


def conformance(profile: str) -> list:
    return [Check("conformance:coordinator", "conformance", _conformance),
            Check("conformance:java-order", "conformance", _java_order),
            Check("conformance:kafka-defaults", "conformance", _kafka_defaults),
            Check("conformance:replica-placement", "conformance", _replica_placement)]


# --- Z3 ------------------------------------------------------------------------------------------
def _prove_in_order(names: list, behaviours: frozenset, size: str = "full", work_scale: float = 1.0,
                    max_seconds=None) -> list:
    from kverify.model.proofs import budget, by_name

    with budget(scale=work_scale, max_seconds=max_seconds, size=size):
        return [by_name(name).check(behaviours) for name in names]


def _z3(ctx: Context) -> CheckResult:
    """The profile's Z3 obligations (profiles.z3_plan: which ones, at which size), split over two worker
    processes (independent, CPU-bound). Every query is bounded by a count of Z3's resource units, so
    the verdict does not depend on the machine's load; only the user's --max-seconds adds a wall-clock
    deadline (what it cuts is `unknown`: INCONCLUSIVE). The split is fixed, each worker proving its
    share in order: a Z3 model (hence a counterexample trace and its baseline signature) and the
    work count can depend on what the process solved before, so no work stealing."""
    from concurrent.futures import ProcessPoolExecutor

    from kverify.model.proofs import all_obligations, to_record
    from kverify.reports.writer import signature, slug, write_report

    plan = profiles.z3_plan(ctx.profile)
    every = all_obligations()
    obligations = [ob for ob in every if plan.only is None or ob.name in plan.only]
    names = [ob.name for ob in obligations]
    shares = [names[0::2], names[1::2]]
    left = ctx.remaining()
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = [pool.submit(_prove_in_order, share, ctx.behaviours, plan.size, plan.work_scale, left)
                for share in shares]
        by_name = {}
        for share, fut in zip(shares, done):
            by_name.update(zip(share, fut.result()))
    results = [by_name[n] for n in names]
    bad, reports, viol, per, work, uncovered, undecided = [], [], [], {}, {}, [], []
    for ob, res in zip(obligations, results):
        per[ob.name] = res.seconds
        work[ob.name] = res.work
        expected = ob.expected(ctx.behaviours)
        if res.status == "falsified":
            cx = to_record(ob, res, ctx.behaviours)
            path = write_report(cx, os.path.join(ctx.out_dir, slug("z3-" + ob.name)))
            reports.append(path)
            viol.append({"invariant": ob.name, "signature": signature(cx), "report": path, "message": res.detail})
        if res.status == "unknown" and expected == "unknown":
            uncovered.append(ob.name)     # a switched-on behaviour its encoding does not cover: it claims nothing
        elif res.status == "unknown":
            undecided.append(ob.name)     # the solver gave up (work budget or --max-seconds): not a proof, not a failure
        elif res.status != "proved":
            bad.append(f"{ob.name} {res.status} (expected {expected})")
    n = len(per)
    verdict = FAIL if bad else INCONCLUSIVE if undecided else PASS
    scope = "" if plan.only is None and plan.size == "full" else \
        f" ({ctx.profile}: {n} of {len(every)} obligations, size {plan.size})"
    return CheckResult("z3:obligations", "z3", verdict,
                       f"{n - len(bad) - len(uncovered) - len(undecided)}/{n} obligations proved{scope}"
                       + (f"; not covered by the encoding: {', '.join(uncovered)}" if uncovered else "")
                       + (f"; undecided (solver gave up): {', '.join(undecided)}" if undecided else "")
                       + (f"; {'; '.join(bad)}" if bad else ""), reports=reports, violations=viol,
                       figures={"seconds_per_obligation": per, "work_per_obligation": work},
                       covered={"obligations": n, "obligations_in_suite": len(every)},
                       cut="solver gave up on " + ", ".join(undecided) if undecided else "")


def z3(profile: str) -> list:
    return [Check("z3:obligations", "z3", _z3)]


# --- exhaustive exploration -----------------------------------------------------------------------
def _explore_check(name: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.model.explore import explore

        proto = _build(ctx, name)
        cap = profiles.explore_states(ctx.profile, name)
        graph_limit = profiles.graph_limit(ctx.profile, name)
        left = ctx.remaining()
        res = explore(proto, max_states=cap, max_seconds=None if left is None else max(left, 0.001), graph=True,
                      graph_limit=graph_limit)
        return explore_verdict(ctx, proto, name, res, cap, graph_limit)
    return run


def explore_verdict(ctx: Context, proto, name: str, res, cap, graph_limit) -> CheckResult:
    """PASS: the search finished, reached every `sometimes`, and the state graph was analysed for
    recoverability; FAIL: a violation (a raising step included), a never-reached `sometimes` in a
    complete search, or unrecoverable states; INCONCLUSIVE otherwise, naming what cut it."""
    viol = [_report_violation(ctx, proto, name, f.violation, f.actions, f.init_index, "explore")
            for f in res.violations]
    covered = {"states": res.distinct_states, "transitions": res.transitions, "depth": res.max_depth}
    figures = {"states_per_depth": dict(res.states_per_depth)} if getattr(res, "states_per_depth", None) else {}
    figures["distinct_states"] = {"states": res.distinct_states}
    check = f"explore:{name}"
    verdict, reason = explore_outcome(res)
    if verdict == FAIL:
        return _fail(check, "explore", viol, reason, covered, figures)
    scope = f"{res.distinct_states:,} distinct states, {res.transitions:,} transitions, depth {res.max_depth}"
    if not res.complete:
        why = {"max-states": f"the state budget ({cap:,} states)",
               "max-seconds": "--max-seconds"}.get(res.stopped, res.stopped or "an unknown bound")
        unreached = sorted(n for n, d in res.sometimes.items() if d is None)
        more = f"; not yet reached: {', '.join(unreached)}" if unreached else ""
        depth = getattr(res, "covered_depth", None)
        if depth is not None:
            covered["covered_depth"] = depth
        within = f" (every state within depth {depth} checked)" if depth is not None else ""
        return CheckResult(check, "explore", INCONCLUSIVE,
                           f"{scope}{within}; cut by {why} before the search finished{more}",
                           covered=covered, figures=figures, cut=why)
    if verdict == INCONCLUSIVE:
        return CheckResult(check, "explore", INCONCLUSIVE, f"{scope}, complete, no violation; {reason}",
                           covered=covered, figures=figures, cut=f"state graph over {graph_limit:,} states")
    return CheckResult(check, "explore", PASS, f"{scope}, complete, no violation, recoverable",
                       covered=covered, figures=figures)


def explorer(profile: str) -> list:
    return [_or_broken(f"explore:{m}", "explore", m, _explore_check) for m in models()]


# --- exhaustive exploration at variant bounds (paths of impl/ the default bounds never take) ------------
# check name -> (model, parameters per profile over the model's defaults, distinct-state cap per profile). Each is
# judged like `explore:<model>` (invariants, every `sometimes`, recoverability: `explore_verdict`); each reaches
# functions of impl/ no other check executes (bench/coverage.py measures it). Caps: about twice the size measured
# (16:30 UTC), so a bound that grows is INCONCLUSIVE (a failure under --strict) instead of silently slow.
# A profile absent from a check's parameters does not run it.
EXPLORE_VARIANTS = {
    # controlled shutdown (ControllerOps.controlled_shutdown, elections.controlled_shutdown) then a clean stop
    # (flush, stop) and a restart; 3 brokers so the shut-down leader has a successor outside (569 states)
    "explore:replication-world/shutdown": (
        "replication-world", {p: {"brokers": 3, "rf": 2, "shutdowns": 1, "crashes": 0, "failovers": 0}
                              for p in ("quick", "ci", "deep")}, {"quick": 1_500, "ci": 1_500, "deep": None}),
    # a lossy crash (unflushed suffix lost: ReplicaLog.lose_unflushed) after flushes (Cluster.flush), min ISR 1 so
    # a record commits with one copy flushed or not (955 states)
    "explore:replication-world/lossy": (
        "replication-world", {p: {"lossy": 1, "crashes": 1, "min_isr": 1, "failovers": 0} for p in ("ci", "deep")},
        {"ci": 2_500, "deep": None}),
    # a lost controller-plane message (Cluster.drop) and time passing past replica.lag.time.max.ms (Cluster.advance:
    # the leader shrinks the ISR) (11,571 states)
    "explore:replication-world/lost-and-late": (
        "replication-world", {p: {"drops": 1, "ticks": 1, "failovers": 0} for p in ("ci", "deep")},
        {"ci": 25_000, "deep": None}),
    # time passing in jumps of half replica.lag.time.max.ms (500 of 1000 ms, so a follower can be exactly at the limit),
    # two records: a follower that fetched up to the leader's log end lately stays in the ISR, one that did not is
    # shrunk out (Replica.lagging_isr_members; isr-shrink-only-lagging, isr-shrink-drops-lagging) (514 states); ci: a
    # fourth jump and a crash, so a leader with a higher id than its follower lags one out (10,758 states)
    "explore:replication-world/lag": (
        "replication-world", {"quick": {"ticks": 3, "tick_ms": 500, "records": 2, "crashes": 0, "failovers": 0},
                              **{p: {"ticks": 4, "tick_ms": 500, "records": 1, "crashes": 1, "failovers": 0}
                                 for p in ("ci", "deep")}}, {"quick": 1_000, "ci": 25_000, "deep": None}),
    # both replicas crash before the controller processes either: one batch of failures, the leader's with no live
    # in-sync replica left (ControllerOps._offline_election's leaderless write; leaderless-write-drops-only-leader)
    # (no record; quick: 2 crashes, 1,200 states; ci: a third crash, so broker 2 can lead when both fail, 11,184)
    "explore:replication-world/double-crash": (
        "replication-world", {"quick": {"crashes": 2, "failovers": 0, "records": 0},
                              **{p: {"crashes": 3, "failovers": 0, "records": 0} for p in ("ci", "deep")}},
        {"quick": 2_500, "ci": 25_000, "deep": None}),
    # a follower's fetch answer left in flight across two leader changes (the leader crashes, the follower leads,
    # the old leader rejoins and wins a preferred election): the follower, a follower again in the new epoch, must
    # drop the answer to its fetch of the first epoch (Replica.handle_fetch_response, KIP-320); applied, its record
    # sits below the new leader's committed one (i-lcc at depth 17) (2 brokers, min ISR 1: 21,731 states)
    "explore:replication-world/stale-fetch": (
        "replication-world", {p: {"fetch": "mixed", "acks": "1", "records": 2, "preferred": 1, "min_isr": 1,
                                  "failovers": 0} for p in ("quick", "ci", "deep")},
        {"quick": 45_000, "ci": 45_000, "deep": None}),
    # a follower in controlled shutdown leaves the ISR (a new leader epoch, the same leader) before it is told: it
    # keeps fetching in the old epoch, which the leader must fence (FENCED_LEADER_EPOCH, KIP-320) while it appends in
    # the new one (min ISR 1); served, the follower holds a record of an epoch it does not know (follower-epoch-known,
    # depth 4) (2 brokers: 522 states)
    "explore:replication-world/fenced-fetch": (
        "replication-world", {p: {"shutdowns": 1, "crashes": 0, "failovers": 0, "min_isr": 1}
                              for p in ("quick", "ci", "deep")}, {"quick": 1_200, "ci": 1_200, "deep": None}),
    # the offsets partition's leader resigns while it runs (a preferred election): its coordinator unloads the
    # group (PartitionLoading.on_resignation) and the new leader loads it (7,057 states)
    "explore:offsets-world/preferred": (
        "offsets-world", {"quick": {"preferred": 1, "brokers": 2}, **{p: {"preferred": 1} for p in ("ci", "deep")}},
        {"quick": 1_200, "ci": 15_000, "deep": None}),     # quick: 2 brokers (561 states)
    # transactional offset commits: TxnOffsetCommit staged, the commit marker written to the offsets partition and
    # settled by the coordinator (complete_transaction), staged offsets and markers replayed by a loading leader
    # (7,907 states)
    "explore:offsets-world/transactions": (
        "offsets-world", {p: {"txn": True} for p in ("quick", "ci", "deep")},
        {"quick": 16_000, "ci": 16_000, "deep": None}),
    # a second commit of the same partition, no crash: the later append stays the committed offset, plain after plain
    # (OffsetHandling._finish_commit_store) and, with `mixed`, transactional after transactional or a plain commit
    # sent while the transaction's offset is staged (_settle_txn) (42 and 176 states)
    "explore:offsets-world/recommit": (
        "offsets-world", {p: {"commits": 2, "crashes": 0} for p in ("quick", "ci", "deep")},
        {"quick": 200, "ci": 200, "deep": None}),
    # two new consumer processes (one client.id) send their first JoinGroup to the offsets partition's leader while a
    # crash moves it to the other broker: the two coordinators' MEMBER_ID_REQUIRED answers must hand out two ids
    # (GroupCoordinator._generate_member_id, per-broker seeds; member-id-never-reused), and a broker that crashed and
    # won the partition back by a preferred election must not repeat its own old ids (2 brokers, 4,673 states)
    "explore:offsets-world/member-ids": (
        "offsets-world", {p: {"brokers": 2, "joins": 2, "preferred": 1} for p in ("quick", "ci", "deep")},
        {"quick": 9_000, "ci": 9_000, "deep": None}),
    "explore:offsets-world/txn-recommit": (
        "offsets-world", {p: {"txn": True, "mixed": True, "commits": 2, "crashes": 0} for p in ("quick", "ci", "deep")},
        {"quick": 400, "ci": 400, "deep": None}),
    # the classic member: auto-commit before revoking (joinPrepare's commit; 334 states), and an application
    # committing synchronously in onPartitionsRevoked (a blocked revocation retried and resumed; 10,440 states)
    "explore:group-world/auto-commit": (
        "group-world", {p: {"auto_commit_ms": 1000, "commits": 0, "faults": 0} for p in ("quick", "ci", "deep")},
        {"quick": 1_000, "ci": 1_000, "deep": None}),
    # EAGER auto-commit with records left to consume after joinPrepare's commit (log end 2): the member must stop
    # consuming the partitions it is about to revoke while that commit is in flight (ConsumerCoordinator.onJoinPrepare
    # marks them pending revocation, KAFKA-14196), else the next owner consumes again what was consumed after the
    # commit (handover-committed); two time jumps let it poll (consume) while that commit is in flight (10,890 states)
    "explore:group-world/auto-commit-handover": (
        "group-world", {p: {"auto_commit_ms": 60_000, "max_offset": 2, "commits": 0, "events": 2, "faults": 0,
                            "ticks": 2} for p in ("quick", "ci", "deep")},
        {"quick": 20_000, "ci": 20_000, "deep": None}),
    # one member, a crash or pause and a lost message with request timeouts as time targets: the member waiting
    # for the lost answer times out and recovers (Member.tick's expiry); request.timeout.ms 10 s, below the JoinGroup's
    # max(request timeout, rebalance timeout + 5 s) = 25 s, as with Kafka's defaults (30 s vs 305 s); a paused member
    # fenced while its OffsetCommit is lost rejoins and fetches its positions while still awaiting that commit
    # (fetch-beside-pending-commit: neither given up before request.timeout.ms nor waited for) (4,154 states)
    "explore:group-world/lost-request": (
        "group-world", {p: {"members": 1, "events": 2, "faults": 1, "losses": 1, "ticks": 0, "request_timeouts": True,
                            "settle_ticks": 12, "request_ms": 10_000} for p in ("quick", "ci", "deep")},
        {"quick": 12_000, "ci": 12_000, "deep": None}),
    # static membership: a crashed process's late JoinGroup takes its group.instance.id back from its restarted
    # successor (a static replacement), whose next heartbeat is answered FENCED_INSTANCE_ID: the successor must stop
    # (Member._on_heartbeat_response; fenced-gives-up-generation) (2,150 states)
    # one member and six time jumps: it heartbeats at 3 s intervals while none of its heartbeats is delivered, its own
    # session timer (10 s without an answer) marks the coordinator unknown and fails the heartbeats in flight, and the
    # coordinator's session expiry 1 ms later is the next time jump: the member, still in its generation, must not
    # heartbeat before retry.backoff.ms (AbstractCoordinator.HeartbeatThread; heartbeat-backoff) (15,259 states)
    "explore:group-world/heartbeat-backoff": (
        "group-world", {p: {"members": 1, "events": 1, "faults": 0, "ticks": 6} for p in ("quick", "ci", "deep")},
        {"quick": 30_000, "ci": 30_000, "deep": None}),
    "explore:group-world/static-fenced": (
        "group-world", {p: {"members": 1, "static": True, "ticks": 2} for p in ("quick", "ci", "deep")},
        {"quick": 5_000, "ci": 5_000, "deep": None}),
    # the same world searched by two forked worker processes (model/search/parallel.py): states cross a process
    # boundary as pickles, as they do on Spark, so a comparison by identity (`is`) that holds only for objects built in
    # one process (an interned literal) is found: a member comparing an unpickled in-flight request's kind by identity
    # sends a second OffsetFetch (offset-fetch-not-repeated) (173 states)
    "explore:group-world/processes": (
        "group-world", {p: {"members": 1, "events": 3, "faults": 0} for p in ("quick", "ci", "deep")},
        {"quick": 1_000, "ci": 1_000, "deep": None}),
    "explore:group-world/commit-on-revoke": (
        "group-world", {p: {"commit_on_revoke": True, "commits": 0} for p in ("ci", "deep")},
        {"ci": 25_000, "deep": None}),
    # KIP-848 regular-expression subscriptions (impl/consumer/regex.py, the coordinator's asynchronous resolution,
    # ConsumerMember.subscribe_regex) (19,358 states; quick: one member, 198 states)
    "explore:consumer-group-world/regex": (
        "consumer-group-world", {"quick": {"regex": True, "failover": False, "grow": False, "members": 1},
                                 **{p: {"regex": True, "failover": False, "grow": False} for p in ("ci", "deep")}},
        {"quick": 2_000, "ci": 40_000, "deep": None}),
    # both clients subscribe to the pattern t.* (start_pattern) and one may leave it for names: the group keeps the
    # pattern's resolution for the other (regex.update_status deletes it only with its last subscriber;
    # resolved-pattern-kept) (102,181 states, ~22 s CPU; too big for quick: the last resolution's age is in the key)
    "explore:consumer-group-world/shared-pattern": (
        "consumer-group-world", {p: {"start_pattern": True, "failover": False, "grow": False} for p in ("ci", "deep")},
        {"ci": 200_000, "deep": None}),
    # lost heartbeat answers: the client's request fails (ConsumerMember.on_failure) and it heartbeats again
    # (29,090 states)
    "explore:consumer-group-world/losses": (
        "consumer-group-world", {p: {"losses": 1, "failover": False, "grow": False} for p in ("ci", "deep")},
        {"ci": 60_000, "deep": None}),
    # one KIP-848 client, two topics (a subscription change revokes one), searched by two forked worker processes:
    # its in-flight requests cross the process boundary as pickles, so a kind compared by identity
    # (ConsumerMember.on_response `is "heartbeat"`) is found as in group-world/processes (137 states)
    "explore:consumer-group-world/processes": (
        "consumer-group-world", {p: {"topics": 2, "failover": False, "grow": False, "members": 1}
                                 for p in ("quick", "ci", "deep")}, {"quick": 400, "ci": 400, "deep": None}),
    # poll stalls (`poll_stall`): a client's application misses a poll past max.poll.interval, the client leaves
    # (a leave heartbeat whose answer it ignores: ignoreResponse) and goes STALE, then polls again before or after that
    # answer; with a second perturbation (`stall`) the leave arrives after the session expired and its
    # UNKNOWN_MEMBER_ID answer reaches the rejoining client, which it must not fence (stale-leave-answer-ignored;
    # ConsumerMember.on_response). One member, two topics (quick: 1,225 states; ci/deep with failover and growth:
    # 3,656)
    "explore:consumer-group-world/poll-stall": (
        "consumer-group-world", {"quick": {"poll_stall": True, "perturbations": 2, "members": 1, "topics": 2,
                                           "failover": False, "grow": False},
                                 **{p: {"poll_stall": True, "perturbations": 2, "members": 1, "topics": 2}
                                    for p in ("ci", "deep")}}, {"quick": 2_500, "ci": 7_500, "deep": None}),
    # the same with two members, the other rebalancing while one goes stale (ci: one perturbation, 12,378 states;
    # deep: two, without failover and growth, 73,752 states)
    "explore:consumer-group-world/poll-stall-pair": (
        "consumer-group-world", {"ci": {"poll_stall": True},
                                 "deep": {"poll_stall": True, "perturbations": 2, "failover": False, "grow": False}},
        {"ci": 25_000, "deep": None}),
}


# variants searched on two worker processes instead of in this one (same answers, states pickled between them)
ON_WORKER_PROCESSES = frozenset({"explore:group-world/processes", "explore:consumer-group-world/processes"})


def _bounded_protocol(ctx: Context, entry) -> tuple:
    """(model, protocol, state cap, seconds left) of a table entry (model, {profile: params}, {profile: cap}):
    the profile's parameters of the model with the entry's bounds over them, and the run's behaviours."""
    from kverify.model import registry

    model, bounds, caps = entry
    params = profiles.params(ctx.profile, model)
    params.update(bounds[ctx.profile])
    proto = registry.build(model, params, _model_behaviours(ctx, model))
    return model, proto, caps.get(ctx.profile), ctx.remaining()


def _variant_check(check: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.model.explore import explore

        model, proto, cap, left = _bounded_protocol(ctx, EXPLORE_VARIANTS[check])
        limit = max(cap or 0, profiles.graph_limit(ctx.profile, model))    # the whole graph of a finished search
        seconds = None if left is None else max(left, 0.001)
        if check in ON_WORKER_PROCESSES:
            from kverify.model.search.parallel import explore_processes

            res = explore_processes(proto, workers=2, max_states=cap, max_seconds=seconds, graph_limit=limit)
        else:
            res = explore(proto, max_states=cap, max_seconds=seconds, graph=True, graph_limit=limit)
        out = explore_verdict(ctx, proto, model, res, cap, limit)
        out.name = check
        return out
    return run


def variants(profile: str) -> list:
    return [_or_broken(name, "explore", model, lambda _m, name=name: _variant_check(name))
            for name, (model, bounds, _c) in EXPLORE_VARIANTS.items() if profile in bounds]


# --- liveness under fairness (L1; model/search/liveness.py) --------------------------------------
# check name -> (model, bound over the model's profile parameters, distinct-state cap per profile). The caps
# are about twice the measured size, so a model that grows (or a controller step that never converges:
# a reassignment that bumps the leader epoch forever) is INCONCLUSIVE, a failure under --strict.
LIVENESS_CHECKS = {
    # the quick failover bound with leader epochs from 1000 (a long-lived partition; past CPython's small-int cache)
    # and every message delivered decoded, as off the wire: a follower must accept an OffsetsForLeaderEpoch answer
    # whose echoed epoch equals its own (a comparison by identity discards them all, so it truncates forever and
    # never rejoins the ISR: replica-rejoins-isr) (799 states, as at base 0)
    "liveness:replication-world/large-epochs": ("replication-world",
                                                {p: {"failovers": 0, "init_isr": 1, "epoch_base": 1000}
                                                 for p in ("quick", "ci", "deep")},
                                                {"quick": 4_000, "ci": 4_000, "deep": None}),
    # a data-broker crash and a controller failover (quick: the crash alone, a follower starting outside the ISR)
    "liveness:replication-world/failover": ("replication-world",
                                            {"quick": {"failovers": 0, "init_isr": 1}, "ci": {}, "deep": {}},
                                            {"quick": 4_000, "ci": 75_000, "deep": None}),
    # ci: a follower that starts outside the ISR joins it (AlterPartition) while brokers crash
    "liveness:replication-world/late-replica": ("replication-world", {p: {"failovers": 0, "init_isr": 1}
                                                                      for p in ("ci", "deep")},
                                                {"ci": 4_000, "deep": None}),
    # KIP-903: a follower that starts outside the ISR, min ISR 1 and one lossy crash: an ISR expansion proposed with
    # the follower's broker epoch before its lossy restart must be refused (ControllerOps._on_alter_partition),
    # else it joins the ISR without the committed record (i-lcc); the restarted replica rejoins (8,245 states)
    "liveness:replication-world/late-lossy": ("replication-world", {p: {"failovers": 0, "init_isr": 1, "min_isr": 1,
                                                                        "lossy": 1} for p in ("quick", "ci", "deep")},
                                              {"quick": 16_000, "ci": 16_000, "deep": None}),
    # the partition reassignment path (impl/replication/controller_ops.py reassignment_step) with one move:
    # quick moves a one-replica partition to the other broker (557 states); ci/deep move one of two replicas
    # among three brokers (13,304 states: waiting for the new replica to join the ISR needs two replicas)
    "liveness:replication-world/reassign": (
        "replication-world", dict({p: {"brokers": 3, "rf": 2, "reassignments": 1, "crashes": 0, "records": 0,
                                       "failovers": 0, "preferred": 0} for p in ("ci", "deep")},
                                  quick={"brokers": 2, "rf": 1, "min_isr": 1, "reassignments": 1, "crashes": 0,
                                         "records": 0, "failovers": 0, "preferred": 0}),
        {"quick": 3_000, "ci": 30_000, "deep": None}),
    # an acknowledged commit is served again after the offsets partition's leader fails (2,497 states)
    "liveness:offsets-world": ("offsets-world", {p: {} for p in ("quick", "ci", "deep")},
                               {"quick": 6_000, "ci": 6_000, "deep": None}),
    # the group reaches Stable with exactly its running members (one crash or pause; 10,423 states)
    "liveness:group-world": ("group-world", {p: {"commits": 0} for p in ("ci", "deep")},
                             {"ci": 25_000, "deep": None}),
}


def _liveness_check(check: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.model.search.liveness import check_liveness

        model, proto, cap, left = _bounded_protocol(ctx, LIVENESS_CHECKS[check])
        res = check_liveness(proto, max_states=cap, max_seconds=None if left is None else max(left, 0.001))
        return liveness_verdict(ctx, proto, check, model, res, cap)
    return run


def liveness_verdict(ctx: Context, proto, check: str, model: str, res, cap) -> CheckResult:
    """PASS: the whole state graph was searched (invariants checked on the way) and analysed, every
    property's premise was triggered somewhere, and no reachable state leaves one pending forever under
    fair moves; FAIL: a lasso, a broken invariant or a raising step; INCONCLUSIVE: the search was cut,
    the graph too large, or a premise never triggered (vacuous)."""
    from kverify.model.search.liveness import lasso_record
    from kverify.reports.writer import signature, slug, write_report

    covered = {"states": res.states, "transitions": res.transitions, "fair_edges": res.fair_edges,
               "depth": res.depth, "properties": len(res.properties)}
    viol = [_report_violation(ctx, proto, model, v, acts, init, "explore") for v, init, acts in res.findings]
    for lasso in res.lassos:
        cx = lasso_record(proto, lasso, model_name=model)
        path = write_report(cx, os.path.join(ctx.out_dir, slug(f"{check}-{lasso.violation.invariant}")))
        viol.append({"invariant": lasso.violation.invariant, "signature": signature(cx), "report": path,
                     "message": lasso.violation.message})
    if viol:
        return _fail(check, "liveness", viol, "; ".join(f"{v['invariant']}: {v['message']}" for v in viol), covered)
    scope = f"{res.states:,} states, {res.fair_edges:,} fair moves, properties {', '.join(res.properties)}"
    if not res.analysed:
        cut = res.note or "not analysed"
        if res.stopped == "max-states":
            cut = f"the state budget ({cap:,} states) before the search finished"
        return CheckResult(check, "liveness", INCONCLUSIVE, f"{scope}; cut by {cut}", covered=covered, cut=cut)
    idle = [n for n, hit in res.triggered.items() if not hit]
    if idle:
        return CheckResult(check, "liveness", INCONCLUSIVE,
                           f"{scope}, complete; premise never triggered (vacuous): {', '.join(idle)}",
                           covered=covered, cut="premise never triggered: " + ", ".join(idle))
    return CheckResult(check, "liveness", PASS,
                       f"{scope}, complete, invariants hold; each property is discharged from every reachable "
                       "state by fair moves", covered=covered)


def liveness(profile: str) -> list:
    return [_or_broken(name, "liveness", model, lambda _m, name=name: _liveness_check(name))
            for name, (model, bounds, _c) in LIVENESS_CHECKS.items() if profile in bounds]


# --- Hypothesis state machines --------------------------------------------------------------------
def _machine_check(name: str):
    def run(ctx: Context) -> CheckResult:
        from kverify.stateful_tests.machine import run_machine_report

        proto = _build(ctx, name, walk=True)       # random runs, like walks: the model's walk bounds
        b = profiles.budget(ctx.profile)
        # no example database: the same seed must give the same run on every machine
        out = run_machine_report(name, protocol=proto, seed=ctx.seed, profile=ctx.profile, database=False,
                                 stop_at=ctx.deadline, max_examples=b.machine_examples,
                                 stateful_step_count=b.machine_steps)
        return machine_verdict(ctx, proto, name, out, b)
    return run


def machine_verdict(ctx: Context, proto, name: str, out, b) -> CheckResult:
    check = f"hypothesis:{name}"
    covered = {"examples": out.examples, "steps": out.steps, "rules": len(out.rules)}
    scope = (f"{out.examples:,} examples, {out.steps:,} steps (budget {b.machine_examples} x {b.machine_steps}), "
             f"{len(out.rules)} rules, seed {ctx.seed}")
    if out.finding is not None:
        f = out.finding
        v = _report_violation(ctx, proto, name, f.violation, f.trace, f.init_index, "hypothesis", ctx.seed)
        return _fail(check, "stateful", [v], f"{v['invariant']} after {len(f.trace)} steps: {v['message']}", covered)
    if out.cut:
        return CheckResult(check, "stateful", INCONCLUSIVE, f"{scope}; cut by --max-seconds, no violation",
                           covered=covered, cut="--max-seconds")
    if out.unreached:
        return CheckResult(check, "stateful", INCONCLUSIVE,
                           f"{scope}, no violation; never reached {', '.join(out.unreached)}",
                           covered=covered, cut="sometimes never reached: " + ", ".join(out.unreached))
    return CheckResult(check, "stateful", PASS, f"{scope}, every sometimes reached ({len(out.reached)}), no violation",
                       covered=covered)


def stateful(profile: str) -> list:
    return [_or_broken(f"hypothesis:{w}", "stateful", w, _machine_check) for w in worlds()]


# --- random walks ---------------------------------------------------------------------------------
def _walk_check(name: str):
    def run(ctx: Context) -> CheckResult:
        return walk_check(ctx, _build(ctx, name, walk=True), name)
    return run


def walk_check(ctx: Context, proto, name: str) -> CheckResult:
    """Seeded walks (seeds ctx.seed, ctx.seed+1, ...) of at most `walk_steps` steps until `walk_total`
    steps are taken; while a `sometimes` property is still unreached, up to `walk_stretch` times as
    many (counted: the same on every machine). The first violation, deadlock or crash is shrunk and
    reported."""
    from collections import Counter

    from kverify.invariants.core import Violation
    from kverify.model.shrink import DEADLOCK, shrink_trace
    from kverify.model.walk import initial_index, walk

    b = profiles.budget(ctx.profile)
    check = f"walk:{name}"
    coverage: Counter = Counter()
    reached: set = set()
    wanted = [s.name for s in proto.sometimes()]
    runs = steps = 0
    cut = ""
    while steps < b.walk_total * b.walk_stretch:
        if steps >= b.walk_total and reached.issuperset(wanted):
            break
        if ctx.out_of_time():
            cut = "--max-seconds"
            break
        seed = ctx.seed + runs
        res = walk(proto, seed, b.walk_steps, record_trace=True)
        runs += 1
        steps += max(res.steps, 1)      # a walk that cannot move still counts, so the loop ends
        coverage.update(res.actions)
        reached |= res.reached
        found = res.violation
        if found is None and res.deadlock:
            found = Violation(DEADLOCK, "no action is enabled in a state that must not be terminal", res.steps)
        if found is not None:
            init = initial_index(proto, seed)
            try:
                sh = shrink_trace(proto, res.trace, found.invariant, init, budget=SHRINK_BUDGET)
                found, trace = sh.violation, sh.actions
            except Exception:        # not reproducible by replay (e.g. a nondeterministic step): report it as found
                trace = res.trace[:found.step_index] if found.invariant != DEADLOCK else res.trace
            v = _report_violation(ctx, proto, name, found, trace, init, "walk", seed)
            return _fail(check, "random", [v], f"{v['invariant']} in run {runs} (seed {seed}): {v['message']}",
                         {"runs": runs, "steps": steps}, {"action_coverage": dict(sorted(coverage.items()))})
    covered = {"runs": runs, "steps": steps, "sometimes_reached": len(reached & set(wanted)),
               "sometimes": len(wanted)}
    figures = {"action_coverage": dict(sorted(coverage.items()))}
    scope = (f"{runs:,} runs, {steps:,} steps (budget {b.walk_total:,} steps, runs of <= {b.walk_steps}), "
             f"seeds {ctx.seed}..{ctx.seed + runs - 1}")
    missed = [w for w in wanted if w not in reached]
    if cut:
        return CheckResult(check, "random", INCONCLUSIVE, f"{scope}; cut by --max-seconds, no violation",
                           covered=covered, figures=figures, cut=cut)
    if missed:
        # no vacuous pass: a run that never reached a `sometimes` property did not exercise what it claims
        return CheckResult(check, "random", INCONCLUSIVE,
                           f"{scope}, no violation; never reached {', '.join(missed)} (budget stretched {b.walk_stretch}x)",
                           covered=covered, figures=figures, cut="sometimes never reached: " + ", ".join(missed))
    return CheckResult(check, "random", PASS, f"{scope}, every sometimes reached ({len(wanted)}), no violation",
                       covered=covered, figures=figures)


def random_runs(profile: str) -> list:
    return [_or_broken(f"walk:{m}", "random", m, _walk_check) for m in models()]


# --- Spark ----------------------------------------------------------------------------------------
def _spark(ctx: Context) -> CheckResult:
    """Seeded walks of the group model fanned out on Spark (local[*]): exactly-once accounting, no
    violation, and the throughput over the run (plotted in index.html)."""
    from kverify.spark.runner import SimConfig, simulate
    from kverify.spark.world import resolve

    name, runs = "group", profiles.budget(ctx.profile).spark_runs
    world = resolve(name, {}, sorted(_model_behaviours(ctx, name)), steps=100)
    out = os.path.join(ctx.out_dir, "spark-group")
    try:
        res = simulate(SimConfig(world=world, runs=runs, out=out, seed=ctx.seed, engine="spark", progress=False))
    except Exception as exc:   # Java or Spark missing/broken: a failing check that says why
        return CheckResult("spark:group", "random", FAIL, f"Spark run could not start: {exc}")
    sm = res.summary
    series, prev = {}, (0.0, 0)
    for t, steps in res.timeline:
        if t > prev[0]:
            series[f"{t:.1f}s"] = round((steps - prev[1]) / (t - prev[0]))
            prev = (t, steps)
    viol = [{"invariant": r["invariant"], "signature": f"spark-{r['invariant']}-{r.get('seed')}",
             "report": r.get("path", ""), "message": f"{r.get('runs')} runs"} for r in sm["reports"] if "invariant" in r]
    covered = {"runs": sm["runs_completed"], "steps": sm["steps"],
               "abstract_states": sm["distinct_abstract_states"]}
    figures = {"steps_per_second": series, "action_coverage": sm.get("actions", {})}
    scope = (f"{sm['runs_completed']:,}/{sm['runs_requested']:,} runs, {sm['steps']:,} steps, "
             f"{sm['distinct_abstract_states']:,} abstract states")
    if sm["violations"] or viol:
        return _fail("spark:group", "random", viol, f"{scope}, violations {sm['violations']}", covered, figures)
    if sm["runs_completed"] != sm["runs_requested"]:
        return CheckResult("spark:group", "random", INCONCLUSIVE, f"{scope}: not every run completed",
                           covered=covered, figures=figures, cut="runs not completed")
    return CheckResult("spark:group", "random", PASS, f"{scope}, no violation", covered=covered, figures=figures)


def spark(profile: str) -> list:
    return [Check("spark:group", "random", _spark)] if profiles.budget(profile).spark_runs else []


def _or_broken(check_name: str, category: str, model: str, make) -> Check:
    """The check for `model`, or a failing check saying why the model cannot be loaded."""
    import importlib

    from kverify.model import registry

    try:
        importlib.import_module(registry.ENTRIES[model].module)
    except ImportError as exc:
        msg = f"model {model!r} is registered but its module does not import: {exc}"
        return Check(check_name, category, lambda ctx: CheckResult(check_name, category, FAIL, msg))
    return Check(check_name, category, make(model))


from kverify.suite.liveness_walks import liveness_walks  # noqa: E402  (walks judging liveness: liveness:walk/*)

ALL = [assignors, conformance, z3, explorer, variants, liveness, stateful, random_runs, liveness_walks, spark]
