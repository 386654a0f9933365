"""Surviving mutants of the group, member, offsets, KIP-848 and assignor code (issue 17), each killed by a new
property or check, which also holds on the correct code.

Every mutant is planted in process the way tests/planted_mutants.py does it (the reference method recompiled
from its own source with exactly the one change cosmic-ray made) and judged by the very `kverify verify` check
that would have to fail on it, at the quick profile's bounds."""
import inspect
import json
import textwrap

import pytest

from kverify.impl.assignors import java_order
from kverify.impl.consumer import client as kip848_client
from kverify.impl.consumer import coordinator as kip848_coordinator
from kverify.impl.consumer.assignors import uniform_heterogeneous
from kverify.impl.coordinator import coordinator as coordinator_module
from kverify.impl.coordinator import loading, membership, offset_handling
from kverify.impl.member import config as classic_config
from kverify.impl.member import member as classic_member
from kverify.invariants.consumer_group import CGView, Leave, leave_commits_consumed, server_assignor_recorded
from kverify.invariants.group import Fence, check_fenced_gives_up_generation
from kverify.model import registry
from kverify.model.explore import explore
from kverify.suite import providers as P
from kverify.suite.verdicts import FAIL, PASS

import planted_mutants

# name -> (module, class, method, original text, mutated text, what it does)
SURVIVORS = {
    # impl/consumer/client.py ConsumerMember.leave, AddNot
    "leave-skips-auto-commit": (kip848_client, "ConsumerMember", "leave",
                                "if self.config.auto_commit and self.positions:",
                                "if not (self.config.auto_commit and self.positions):",
                                "a client leaving with auto-commit on does not commit what it consumed"),
    # impl/consumer/client.py ConsumerMember.leave, ReplaceAndWithOr
    "leave-commits-nothing": (kip848_client, "ConsumerMember", "leave",
                              "if self.config.auto_commit and self.positions:",
                              "if self.config.auto_commit or self.positions:",
                              "a client leaving having consumed nothing sends an OffsetCommit of no partition"),
    # impl/coordinator/offset_handling.py OffsetHandling._finish_commit_store, ReplaceComparisonOperator_Lt_Gt
    "commit-earlier-wins": (offset_handling, "OffsetHandling", "_finish_commit_store",
                            "if cur is None or cur.append_order <= co.append_order:",
                            "if cur is None or cur.append_order > co.append_order:",
                            "an acknowledged second commit of a partition does not replace the first"),
    # impl/coordinator/offset_handling.py OffsetHandling._settle_txn, ReplaceComparisonOperator_Lt_Gt
    "txn-commit-earlier-wins": (offset_handling, "OffsetHandling", "_settle_txn",
                                "if cur is None or cur.append_order < co.append_order:",
                                "if cur is None or cur.append_order > co.append_order:",
                                "a committed transaction's offset does not replace an earlier committed one"),
    # impl/coordinator/offset_handling.py OffsetHandling._settle_txn, ReplaceComparisonOperator_Lt_NotEq
    "txn-settle-overrides-later-commit": (offset_handling, "OffsetHandling", "_settle_txn",
                                          "if cur is None or cur.append_order < co.append_order:",
                                          "if cur is None or cur.append_order != co.append_order:",
                                          "a transaction's marker replaces an offset committed after the transaction's"),
    # impl/coordinator/loading.py PartitionLoading._on_group_unloaded, ReplaceBinaryOperator_Add_Sub
    "unload-member-keys-sub": (loading, "PartitionLoading", "_on_group_unloaded",
                               "list(group.members) + sorted(group.pending_members)",
                               "list(group.members) - sorted(group.pending_members)",
                               "unloading a group raises instead of cancelling its members' heartbeat timers"),
    # impl/member/member.py Member.tick, ReplaceComparisonOperator_GtE_Gt
    "request-times-out-late": (classic_member, "Member", "tick", "if self.now >= f.sent_at", "if self.now > f.sent_at",
                               "a request expires only after request.timeout.ms has passed, not when it is reached"),
    # impl/member/member.py Member.tick, ReplaceComparisonOperator_Eq_NotEq
    "join-timeout-swapped": (classic_member, "Member", "tick", 'if f.kind == "join" else', 'if f.kind != "join" else',
                             "the JoinGroup gets request.timeout.ms and every other request the JoinGroup's timeout"),
    # impl/coordinator/coordinator.py GroupCoordinator._generate_member_id, ReplaceBinaryOperator_BitAnd_Sub
    "member-id-not-a-uuid": (coordinator_module, "GroupCoordinator", "_generate_member_id",
                             "{n & 0xFFFFFFFFF:012x}", "{n - 0xFFFFFFFFF:012x}",
                             "a generated member id whose last UUID group is negative: not Kafka's clientId-UUID"),
    # impl/consumer/coordinator.py ConsumerGroupCoordinator._maybe_refresh_regexes, ReplaceUnaryOperator_Delete_Not
    "regex-never-resolved": (kip848_coordinator, "ConsumerGroupCoordinator", "_maybe_refresh_regexes",
                             "if not regexes:", "if regexes:",
                             "the coordinator never schedules the resolution of a subscribed regex"),
    # impl/consumer/client.py ConsumerMember._build_heartbeat, AddNot
    "server-assignor-never-sent": (kip848_client, "ConsumerMember", "_build_heartbeat",
                                   "if c.server_assignor is not None and", "if not c.server_assignor is not None and",
                                   "the client never sends the server assignor it is configured with"),
    # impl/consumer/assignors/uniform_heterogeneous.py _Balancer.exclude_most_loaded, ReplaceBinaryOperator_Sub_RShift
    "balancer-excludes-wrong-member": (uniform_heterogeneous, "_Balancer", "exclude_most_loaded",
                                       "= order[self.most_end - 1], order[i]", "= order[self.most_end >> 1], order[i]",
                                       "excluding a most loaded member that holds none of the topic corrupts the "
                                       "balancer's order (a member twice, another gone)"),
    # impl/member/member.py Member._on_heartbeat_response, ReplaceComparisonOperator_Eq_LtE
    "fenced-heartbeat-as-rebalance": (classic_member, "Member", "_on_heartbeat_response",
                                      "if err == E.REBALANCE_IN_PROGRESS:", "if err <= E.REBALANCE_IN_PROGRESS:",
                                      "ILLEGAL_GENERATION and FENCED_INSTANCE_ID (sorting before it) are handled as "
                                      "REBALANCE_IN_PROGRESS: the member keeps its generation"),
    # impl/member/member.py Member._fetch_positions, ReplaceComparisonOperator_Eq_Lt
    "fetch-waits-for-commit": (classic_member, "Member", "_fetch_positions", 'if any(f.kind == "fetch" for f in',
                               'if any(f.kind < "fetch" for f in',
                               "a member sends OffsetFetch again while its own is in flight (and waits for an "
                               "OffsetCommit in flight instead)"),
    # impl/member/member.py Member._fetch_positions, ReplaceComparisonOperator_Eq_Is
    "fetch-kind-by-identity": (classic_member, "Member", "_fetch_positions", 'if any(f.kind == "fetch" for f in',
                               'if any(f.kind is "fetch" for f in',
                               "an in-flight OffsetFetch recognised by string identity: one whose kind is an equal "
                               "but distinct string (a state unpickled by another process) is not seen"),
    # impl/coordinator/membership.py MembershipHandling._current_member_join, ReplaceComparisonOperator_Eq_Is
    "rejoining-leader-by-identity": (membership, "MembershipHandling", "_current_member_join",
                                     "if group.leader_id == mid else ()", "if group.leader_id is mid else ()",
                                     "the leader re-sending its JoinGroup in CompletingRebalance gets no member "
                                     "metadata unless its id is the coordinator's own string object"),
    # impl/coordinator/offset_handling.py OffsetHandling._remove_expired_offsets, ReplaceComparisonOperator_GtE_Is
    "expire-timestamp-by-identity": (offset_handling, "OffsetHandling", "_remove_expired_offsets",
                                     "elif now >= co.expire_timestamp:", "elif now is co.expire_timestamp:",
                                     "an offset committed with a retention time never expires after its "
                                     "expireTimestamp"),
    # impl/coordinator/offset_handling.py OffsetHandling._remove_expired_offsets, ReplaceComparisonOperator_GtE_Gt
    "expire-timestamp-exclusive": (offset_handling, "OffsetHandling", "_remove_expired_offsets",
                                   "elif now >= co.expire_timestamp:", "elif now > co.expire_timestamp:",
                                   "an offset is kept by the expiry run that happens exactly at its expireTimestamp"),
    # impl/coordinator/offset_handling.py OffsetHandling.on_partitions_deleted, ReplaceBinaryOperator_BitAnd_Mod
    "deleted-partitions-mod": (offset_handling, "OffsetHandling", "on_partitions_deleted",
                               "targets & (set(g.offsets)", "targets % (set(g.offsets)",
                               "topic deletion raises instead of removing the deleted partitions' offsets"),
    # impl/coordinator/offset_handling.py OffsetHandling.on_partitions_deleted, ReplaceBinaryOperator_BitAnd_BitOr
    "deleted-partitions-or": (offset_handling, "OffsetHandling", "on_partitions_deleted",
                              "targets & (set(g.offsets)", "targets | (set(g.offsets)",
                              "topic deletion removes every offset of every group, not only the deleted ones'"),
}


def plant(monkeypatch, name):
    planted_mutants.plant(monkeypatch, name, SURVIVORS)


_ctx = planted_mutants.quick_ctx


# Mutants of module-level functions and classes: name -> (module, name, original text, mutated text, what it does)
FUNCTION_SURVIVORS = {
    # impl/member/config.py MemberConfig, NumberReplacer (a default no world uses: every world sets its timeouts)
    "session-timeout-default": (classic_config, "MemberConfig", "session_timeout_ms: int = 45000",
                                "session_timeout_ms: int = 45001", "the member's session.timeout.ms default is not Kafka's"),
    # impl/assignors/java_order.py string_hash, NumberReplacer / ReplaceBinaryOperator_*
    "hash-multiplier-32": (java_order, "string_hash", "h = (31 * h +", "h = (32 * h +",
                           "String.hashCode with multiplier 32: another HashMap order of member ids"),
    "hash-low-byte-first": (java_order, "string_hash", "(data[i] << 8) | data[i + 1]", "(data[i] >> 8) | data[i + 1]",
                            "a UTF-16 code unit read without its high byte"),
    "hash-next-unit": (java_order, "string_hash", "data[i + 1]", "data[i - 1]",
                       "a code unit's low byte taken from the previous unit"),
}


def plant_function(monkeypatch, name):
    planted_mutants.plant_function(monkeypatch, name, FUNCTION_SURVIVORS)


@pytest.mark.parametrize("name", sorted(SURVIVORS))
def test_each_planted_survivor_changes_its_method(name):
    module, cls, method, old, new, _what = SURVIVORS[name]
    src = inspect.getsource(getattr(getattr(module, cls), method))
    assert src.count(old) == 1 and old != new


# --- KIP-848: a leaving client auto-commits what it consumed ------------------------------------------------
def _cg(*left):
    return CGView(0, 0, 0, (), (), (), (1,), 1, (), left=left)


def test_leave_commits_consumed_on_views():
    assert leave_commits_consumed(None, _cg()) is None
    assert leave_commits_consumed(None, _cg(Leave(0, 0b1, (0b1,)), Leave(1, 0, ()))) is None
    assert leave_commits_consumed(None, _cg(Leave(1, 0b1, ()))) == (
        "m1 left with auto-commit having consumed {t0p0} but committed {} before its leave heartbeat")
    assert leave_commits_consumed(None, _cg(Leave(0, 0, (0,)))) == "m0 left sending an OffsetCommit of no partition"


@pytest.mark.parametrize("name", ["leave-skips-auto-commit", "leave-commits-nothing"])
def test_leave_without_auto_commit_is_caught_by_leave_commits_consumed(monkeypatch, name):
    """At the quick profile's bound of consumer-group-world (7,353 states), stopping at the first violation."""
    bound = {"failover": False, "grow": False}
    ok = explore(registry.build("consumer-group-world", bound), graph=False)
    assert ok.complete and not ok.violations
    plant(monkeypatch, name)
    bad = explore(registry.build("consumer-group-world", bound), graph=False, stop_on_first=True)
    assert [f.invariant for f in bad.violations] == ["leave-commits-consumed"]


# --- Java's hash order: only Java's own output pins it ------------------------------------------------------
@pytest.mark.parametrize("name", sorted(n for n in FUNCTION_SURVIVORS if n.startswith("hash-")))
def test_java_hash_mutants_are_caught_by_the_jdk17_vectors(tmp_path, monkeypatch, name):
    ok = P._java_order(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS and ok.covered["vectors"] >= 30, ok.summary
    plant_function(monkeypatch, name)
    bad = P._java_order(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert bad.violations[0]["invariant"] == "java-order"


def test_java_order_check_is_in_quick_and_ci():
    for profile in ("quick", "ci"):
        assert "conformance:java-order" in [c.name for c in P.conformance(profile)]


# --- offsets: a later commit of the same partition replaces the committed offset ------------------------------
@pytest.mark.parametrize("name, check", [("commit-earlier-wins", "explore:offsets-world/recommit"),
                                         ("txn-commit-earlier-wins", "explore:offsets-world/txn-recommit"),
                                         ("txn-settle-overrides-later-commit", "explore:offsets-world/txn-recommit")])
def test_second_commit_that_does_not_replace_the_first_is_caught(tmp_path, monkeypatch, name, check):
    run = P._variant_check(check)
    ok = run(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, name)
    bad = run(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["acked-commit-durable"], bad.summary
    assert "serves offset 1 for p0 but 2 was acknowledged" in bad.summary


# --- the classic member: a lost answer is given up at request.timeout.ms --------------------------------------
@pytest.mark.parametrize("name", ["request-times-out-late", "join-timeout-swapped"])
def test_request_timing_out_late_is_caught_by_recoverability(tmp_path, monkeypatch, name):
    """The world jumps time to the request's deadline: a member that does not expire the request exactly then
    is left waiting for an answer that was lost, with nothing else due (a dead end once faults stop)."""
    run = P._variant_check("explore:group-world/lost-request")
    ok = run(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, name)
    bad = run(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["recoverable"], bad.summary


# --- configuration defaults: Kafka's, recorded with their source ---------------------------------------------
def test_a_changed_default_is_caught_by_the_kafka_defaults_table(tmp_path, monkeypatch):
    ok = P._kafka_defaults(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS and ok.covered["defaults"] >= 20, ok.summary
    plant_function(monkeypatch, "session-timeout-default")
    assert classic_config.MemberConfig("g").session_timeout_ms == 45001
    bad = P._kafka_defaults(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert bad.violations[0]["message"] == ("MemberConfig.session_timeout_ms defaults to 45001; Kafka's session.timeout.ms "
                                            "(ConsumerConfig (since 3.0)) defaults to 45000")


# --- a group unloaded by a preferred election of its offsets partition (quick reaches it with 2 brokers) ------
def test_unloading_that_raises_is_caught_in_quick(tmp_path, monkeypatch):
    run = P._variant_check("explore:offsets-world/preferred")
    ok = run(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "unload-member-keys-sub")
    bad = run(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["exception"], bad.summary


# --- the classic coordinator answers OffsetFetch from the committed offsets (group-world) ---------------------
def test_offset_fetch_that_ignores_the_commits_is_caught_by_offset_fetch_reads_committed(monkeypatch):
    """One member commits, leaves and restarts: its new incarnation fetches the committed offset. Planted: the
    coordinator answers "no offset" (-1) for every partition of an existing group (offset_handling.py
    `_handle_offset_fetch`, AddNot on `if group is None or ...`). Requests reach their handler through the
    coordinator's dispatch table, so the mutant is planted there too."""
    from kverify.impl.coordinator import coordinator as coord_module
    from kverify.impl.coordinator.messages import OffsetFetchRequest
    from kverify.model import registry
    from kverify.model.explore import explore

    bound = {"members": 1, "events": 3, "faults": 0}
    ok = explore(registry.build("group-world", bound), graph=False)
    assert ok.complete and not ok.violations
    src = textwrap.dedent(inspect.getsource(offset_handling.OffsetHandling._handle_offset_fetch))
    old, new = "if group is None or group.state == DEAD:", "if not group is None or group.state == DEAD:"
    assert src.count(old) == 1
    namespace = dict(vars(offset_handling))
    exec(compile(src.replace(old, new), "<mutant fetch-ignores-commits>", "exec"), namespace)
    monkeypatch.setattr(offset_handling.OffsetHandling, "_handle_offset_fetch", namespace["_handle_offset_fetch"])
    monkeypatch.setitem(coord_module._HANDLERS, OffsetFetchRequest, namespace["_handle_offset_fetch"])
    bad = explore(registry.build("group-world", bound), graph=False, stop_on_first=True)
    assert [f.invariant for f in bad.violations] == ["offset-fetch-reads-committed"]
    assert "answered t-0 at -1, the group's committed offset is 1" in bad.violations[0].violation.message


# --- member ids: Kafka's GroupMetadata.generateMemberId makes them prefix + '-' + a v4 UUID ----------------
def test_a_malformed_member_id_is_caught_by_member_ids_kafka_shaped(tmp_path, monkeypatch):
    check = P._explore_check("group-world")
    ok = check(_ctx(tmp_path / "ok"))
    assert ok.verdict != FAIL and not ok.violations, ok.summary     # quick caps group-world: INCONCLUSIVE
    plant(monkeypatch, "member-id-not-a-uuid")
    bad = check(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["member-ids-kafka-shaped"], bad.summary


# --- KIP-848 regex subscriptions: quick reaches them; settled means every subscribed pattern is resolved ------
def test_a_regex_never_resolved_is_caught_by_recoverability_in_quick(tmp_path, monkeypatch):
    """Quick explores regex subscriptions with one member (198 states). Planted: the coordinator never schedules
    a regex resolution; the member subscribed to `t.*` is given nothing while the group looks Stable, and no
    state where its pattern is resolved can be reached."""
    assert "explore:consumer-group-world/regex" in [c.name for c in P.variants("quick")]
    run = P._variant_check("explore:consumer-group-world/regex")
    ok = run(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "regex-never-resolved")
    bad = run(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["recoverable"], bad.summary
    assert "cannot reach a quiescent good state" in bad.summary


# --- KIP-848 ServerAssignor: sent when joining (and when changed), kept by the coordinator ------------------
def test_server_assignor_recorded_on_views():
    assert server_assignor_recorded(_cg()) is None
    assert server_assignor_recorded(_cg()._replace(assignors=((0, "uniform", "uniform"),))) is None
    assert server_assignor_recorded(_cg()._replace(assignors=((1, "uniform", None),))) == (
        "m1's client asks for server assignor 'uniform', its member records None")


def test_a_server_assignor_never_sent_is_caught_by_server_assignor_recorded(monkeypatch):
    bound = {"members": 1, "perturbations": 0, "failover": False, "grow": False}
    ok = explore(registry.build("consumer-group-world", bound), graph=False)
    assert ok.complete and not ok.violations
    plant(monkeypatch, "server-assignor-never-sent")
    bad = explore(registry.build("consumer-group-world", bound), graph=False, stop_on_first=True)
    assert [f.invariant for f in bad.violations] == ["server-assignor-recorded"]


# --- the uniform heterogeneous builder: a pinned scenario reaches the most-loaded exclusion -----------------
def test_a_corrupted_balancer_exclusion_is_caught_by_the_pinned_scenario(tmp_path, monkeypatch):
    check = P._assignor_check("consumer:uniform")
    ok = check(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "balancer-excludes-wrong-member")
    bad = check(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["balanced"], bad.summary
    assert "c2 holds 4 partitions and c0 holds 1, yet c0 could take t0-0" in bad.summary


# --- the classic member: fenced out of its generation, it gives it up (static replacement in quick) ----------
def _fence(kept, error="FENCED_INSTANCE_ID"):
    return Fence(0, 1, "heartbeat", error, kept)


def test_fenced_gives_up_generation_on_views():
    from kverify.invariants.group import GroupView
    v = GroupView(0, 0, 1, -1, 1, None, (), (), ())
    assert check_fenced_gives_up_generation(v, v) is None
    assert check_fenced_gives_up_generation(v, v._replace(fenced=(_fence(False),))) is None
    assert check_fenced_gives_up_generation(v, v._replace(fenced=(_fence(True, "ILLEGAL_GENERATION"),))) == (
        "m0 was answered ILLEGAL_GENERATION to its heartbeat of generation 1 and still acts under generation 1")


def test_a_fenced_heartbeat_handled_as_a_rebalance_is_caught_in_quick(tmp_path, monkeypatch):
    """A crashed static member's late JoinGroup takes the instance id back from its restarted successor, whose
    heartbeat is then answered FENCED_INSTANCE_ID. Planted: that answer (and ILLEGAL_GENERATION) handled like
    REBALANCE_IN_PROGRESS, so the fenced member keeps its generation. Responses reach their handler through the
    member's dispatch table, so the mutant is planted there too."""
    run = P._variant_check("explore:group-world/static-fenced")
    ok = run(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, "fenced-heartbeat-as-rebalance")
    mutated = classic_member.Member._on_heartbeat_response
    monkeypatch.setitem(classic_member._HANDLERS, ("heartbeat", classic_member.HeartbeatResponse), mutated)
    bad = run(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["fenced-gives-up-generation"], bad.summary


# --- the classic member: one OffsetFetch of its partitions at a time (ConsumerCoordinator.fetchCommittedOffsets) --
def _fetching(*kinds_and_parts):
    from types import SimpleNamespace

    from kverify.impl.member.member import InFlight, Generation
    gen = Generation(1, "m0-x", "range")
    inflight = {cid: InFlight(kind, gen, 0, parts) for cid, (kind, parts) in enumerate(kinds_and_parts, 1)}
    return SimpleNamespace(members=(SimpleNamespace(inflight=inflight),))


def test_fetch_not_repeated_on_states():
    from kverify.impl.coordinator.messages import TopicPartition

    world = registry.build("group-world", {"members": 1})
    check = world._check_fetch_not_repeated
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    assert check(_fetching(("fetch", (t0,)), ("commit", ()))) is None
    assert check(_fetching(("fetch", (t0,)), ("fetch", (t1,)))) is None        # Kafka: another request, another future
    assert check(_fetching(("fetch", (t0,)), ("fetch", (t0,)))) == (
        "m0 sent OffsetFetch 2 of ['t-0'] under generation 1 while an identical one was still in flight")


def test_a_fetch_repeated_while_in_flight_is_caught_in_quick(tmp_path, monkeypatch):
    """Planted (member.py `f.kind == "fetch"` -> `f.kind < "fetch"`): the member looks for an OffsetCommit in flight
    instead of its OffsetFetch, so it sends the same OffsetFetch again at its next poll."""
    check = P._explore_check("group-world")
    ok = check(_ctx(tmp_path / "ok"))
    assert ok.verdict != FAIL and not ok.violations, ok.summary     # quick caps group-world: INCONCLUSIVE
    plant(monkeypatch, "fetch-waits-for-commit")
    bad = check(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["invariant"] for v in bad.violations] == ["offset-fetch-not-repeated"], bad.summary


@pytest.mark.filterwarnings("ignore:\"is\" with a literal:SyntaxWarning")
def test_fetch_kind_by_identity_is_caught_across_worker_processes(monkeypatch):
    """`f.kind is "fetch"` agrees with `==` while every InFlight was built in this process (its kind is the interned
    literal); the process-parallel explorer pickles states between workers, and an unpickled kind is an equal but
    distinct string. Serial exploration cannot tell the mutant apart; two worker processes can. No check of the
    quick profile explores group-world on processes (docs/notes/requests.md asks for one), so the mutant survives
    quick: this test is the evidence that it is a real bug, not an equivalent."""
    import pickle

    from kverify.model.search.parallel import explore_processes

    literal = "fetch"
    kind = pickle.loads(pickle.dumps(_fetching((literal, ())).members[0].inflight[1])).kind
    assert kind == literal and kind is not literal
    bound = {"members": 1, "events": 3, "faults": 0}
    assert not explore_processes(registry.build("group-world", bound), workers=2, graph_limit=0).violations
    plant(monkeypatch, "fetch-kind-by-identity")
    serial = explore(registry.build("group-world", bound), graph=False)
    assert serial.complete and not serial.violations
    bad = explore_processes(registry.build("group-world", bound), workers=2, graph_limit=0)
    assert "offset-fetch-not-repeated" in [f.invariant for f in bad.violations]


# --- the coordinator through the conformance scenarios: ids as a broker receives them, retention, topic deletion --
def test_the_adapter_hands_over_equal_strings_never_the_coordinators_own():
    from kverify.conformance.adapter import as_received

    mid = "-".join(["clientId", "0000"])                         # built at run time, like a generated member id
    got = as_received({"member_id": mid, "assignment": {mid: "00"}, "members": [{"member_id": mid}], "generation": 1})
    assert got == {"member_id": mid, "assignment": {mid: "00"}, "members": [{"member_id": mid}], "generation": 1}
    assert got["member_id"] is not mid and next(iter(got["assignment"])) is not mid
    assert got["members"][0]["member_id"] is not mid


@pytest.mark.parametrize("name, scenario", [
    ("rejoining-leader-by-identity", "leader_rejoin_in_completing_rebalance_gets_members_again"),
    ("expire-timestamp-by-identity", "offsets_with_retention_time_expire_at_their_expire_timestamp"),
    ("expire-timestamp-exclusive", "offsets_with_retention_time_expire_at_their_expire_timestamp"),
    ("deleted-partitions-mod", "deleted_partitions_offsets_removed_from_every_group"),
    ("deleted-partitions-or", "deleted_partitions_offsets_removed_from_every_group"),
])
def test_coordinator_mutants_are_caught_by_the_scenarios(tmp_path, monkeypatch, name, scenario):
    ok = P._conformance(_ctx(tmp_path / "ok"))
    assert ok.verdict == PASS, ok.summary
    plant(monkeypatch, name)
    bad = P._conformance(_ctx(tmp_path / "bad"))
    assert bad.verdict == FAIL, bad.summary
    assert [v["signature"] for v in bad.violations] == [scenario], bad.summary


def test_the_format_extensions_are_validated():
    from kverify.conformance.format import FormatError, load_text

    def one(steps, features=()):
        return json.dumps({"id": "t", "source": "s", "topic": "commit_fetch", "features": list(features),
                           "config": {}, "steps": steps})

    commit = {"op": "commit", "as": "c", "group": "groupId", "offsets": {"foo-0": {"offset": 1}}}
    assert load_text(one([commit]))[0].steps[0]["retention_time_ms"] == -1
    with pytest.raises(FormatError, match="retention_time_ms must be -1"):
        load_text(one([dict(commit, retention_time_ms=-2)]))
    with pytest.raises(FormatError, match="partition_deletion"):
        load_text(one([{"op": "delete_partitions", "partitions": ["foo-0"]}]))
    with pytest.raises(FormatError, match="delete_partitions.partitions"):
        load_text(one([{"op": "delete_partitions", "partitions": []}], ["partition_deletion"]))
    assert load_text(one([{"op": "delete_partitions", "partitions": ["foo-0"]}], ["partition_deletion"]))
