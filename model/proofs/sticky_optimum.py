"""The sticky optimum: on the assignor certification's small problems with identical subscriptions
(where Kafka's constrained algorithm applies), the reference sticky assignor keeps as many owned
partitions as any complete, exclusive, balanced assignment can.

The problems are the certification's own: scenarios drawn by kverify/certify/scenarios.py (family
"stale", so members also come back with an older round's claims), played round by round against the
reference sticky assignor with certify's `play`, each round's answer becoming the next round's owned
partitions. Hypothesis draws them derandomized, so the set is the same at every run. The optimum of
each problem is certify's own Z3 Optimize model (`kverify.certify.optimum._z3_optimum`: maximise the
kept claims subject to every subscribed partition having exactly one subscribed owner and sizes
differing by at most one), and the kept count is certify's `kept_count` over `effective_owners`.
"""
from __future__ import annotations

from kverify.model.proofs import Obligation, Result, size

ASSIGNOR = "sticky"
SCENARIOS = 40
SMALL_SCENARIOS = 6        # size "small" (the quick profile)
MAX_MEMBERS = 5
STALE_OWNER_IGNORED = "kafka-14639-stale-owner-ignored"


def certification_scenarios(count: int = SCENARIOS, max_members: int = MAX_MEMBERS) -> list:
    """`count` scenarios of the certification's generator, derandomized (the same list every run),
    restricted to identical subscriptions (the generator's `same` branch) with at least one `stale` event
    (a member coming back with an older round's owned partitions: what the obligation's behaviour is about;
    later rounds have owned partitions to keep)."""
    from hypothesis import HealthCheck, Phase, given, settings

    from kverify.certify.scenarios import scenarios

    out: list = []

    @settings(max_examples=count * 10, database=None, deadline=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(scenarios(family="stale", max_members=max_members))
    def collect(sc):
        subs = {tuple(sorted(m["topics"])) for m in sc["members"]}
        joins = {tuple(sorted(e[1])) for e in sc["events"] if e[0] == "join"}
        resub = any(e[0] == "resubscribe" for e in sc["events"])
        stale = any(e[0] == "stale" for e in sc["events"])
        if len(out) < count and stale and len(subs | joins) == 1 and not resub:
            out.append(sc)

    collect()
    return out


def problems(behaviours: frozenset = frozenset(), count: int = SCENARIOS) -> list:
    """(problem, answer) for every round of the scenarios with identical subscriptions."""
    from kverify.certify.check import identical_subscriptions
    from kverify.certify.scenarios import play
    from kverify.impl.assignors import assign

    rounds: list = []

    def solve(problem):
        return assign(problem, ASSIGNOR, behaviours)

    def on_round(index, problem, answer):
        if identical_subscriptions(problem) and "assignment" in answer:
            rounds.append((problem, answer))

    for sc in certification_scenarios(count):
        play(sc, solve, False, on_round)
    return rounds


def kept_and_optimum(problem: dict, answer: dict) -> tuple[int, int]:
    from kverify.certify.optimum import _z3_optimum
    from kverify.certify.properties import assignment_of, effective_owners, kept_count, subscribed_partitions

    parts = subscribed_partitions(problem)
    live = {tp: who for tp, who in effective_owners(problem).items() if tp in set(parts)}
    return kept_count(problem, assignment_of(answer)), _z3_optimum(problem, live, parts)


def _run(behaviours: frozenset) -> Result:
    count = SMALL_SCENARIOS if size() == "small" else SCENARIOS
    rounds = problems(behaviours, count)
    if not rounds:
        return Result("unknown", "no certification problem with identical subscriptions was drawn")
    judged = 0
    for problem, answer in rounds:
        kept, best = kept_and_optimum(problem, answer)
        judged += 1
        if kept < best:
            return Result("falsified", f"problem {problem['id']}: {ASSIGNOR} keeps {kept} owned partition(s), "
                                       f"Z3's optimum under the balance constraint keeps {best}",
                          {"problem": problem, "answer": answer, "kept": kept, "optimum": best})
        if kept > best:
            return Result("unknown", f"problem {problem['id']}: keeps {kept} > Z3 optimum {best} "
                                     "(the answer is not complete/exclusive/balanced)",
                          {"problem": problem, "answer": answer, "kept": kept, "optimum": best})
    return Result("proved", f"{ASSIGNOR} keeps the Z3 optimum on all {judged} rounds of {count} certification "
                            f"scenarios (family stale, <= {MAX_MEMBERS} members, identical subscriptions)")


def obligations() -> list[Obligation]:
    return [Obligation("sticky-optimum",
                       "with identical subscriptions, the sticky assignor keeps the maximum number of owned partitions "
                       "any balanced assignment can keep (Z3 Optimize), on the certification's small problems",
                       _run, frozenset({STALE_OWNER_IGNORED}))]
