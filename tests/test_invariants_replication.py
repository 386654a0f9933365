"""Each replication invariant: a view that satisfies it, a view that breaks it, the correct model
satisfying it along random walks, and a historical behaviour whose trace breaks it."""
import pytest

from kverify.invariants import replication as I
from kverify.invariants.replication import ControllerView, EpochView, ReplicaView, ReplView
from kverify.model import registry
from kverify.model.walk import walk

A, B_, C_ = (0, 1), (0, 2), (1, 3)     # records (epoch, id)


def rep(log=(), hw=0, leader=0, alive=True, ep=0, pep=0, cep=0, isr=0, quorum=0):
    return ReplicaView(alive, tuple(log), hw, ep, pep, cep, leader, isr, quorum)


def view(replicas, leader=0, isr=0b11, elr=0, acked=(), committed=(), min_isr=2, ep=0):
    return ReplView(tuple(replicas), ControllerView(leader, ep, isr, elr, 0, 0), tuple(acked), tuple(committed), min_isr)


GOOD = view([rep([A, B_], hw=2, isr=0b11, quorum=0b11), rep([A, B_], hw=1)],
            acked=[(0, A), (1, B_)], committed=[A, B_])


@pytest.mark.parametrize("inv", [i for i in I.ALL if i.kind == "state"], ids=lambda i: i.name)
def test_good_view_satisfies(inv):
    assert inv.check(GOOD) is None


def test_dur_forbids_leader_without_acked_and_global_loss():
    v = view([rep([A], hw=1, isr=0b11, quorum=0b11), rep([A, B_], hw=1)], acked=[(1, B_)], committed=[A, B_])
    assert "not in leader 0's log" in I.check_dur(v)
    offline = v._replace(controller=v.controller._replace(leader=-1))
    assert I.check_dur(offline) is None                       # allowed: no leader
    lost = view([rep([A], leader=-1), rep([A], leader=-1)], leader=-1, acked=[(1, B_)])
    assert "on no replica" in I.check_dur(lost)


def test_lc_forbids_leader_missing_committed_prefix():
    v = view([rep([A], hw=1, isr=0b11, quorum=0b11), rep([A, B_], hw=2)], committed=[A, B_])
    assert "below true HW 2" in I.check_lc(v)
    assert I.check_lc(view([rep([A, B_, C_], hw=1, isr=1, quorum=1), rep([A, B_])], committed=[A, B_])) is None


def test_lcc_forbids_electable_member_without_committed_prefix_but_allows_crashed_ones():
    bad = view([rep([A, B_], hw=2, isr=0b11, quorum=0b11), rep([A], hw=1)], committed=[A, B_])
    assert "ISR member 1" in I.check_lcc(bad)
    crashed = bad._replace(replicas=(bad.replicas[0], bad.replicas[1]._replace(alive=False)))
    assert I.check_lcc(crashed) is None
    elr = view([rep([A, B_], hw=2, isr=1, quorum=1), rep([A], hw=1)], isr=0b01, elr=0b10, committed=[A, B_])
    assert "ELR member 1" in I.check_lcc(elr)


def test_lm_allows_divergent_tails_above_hw_only():
    tails = view([rep([A, B_], hw=1, isr=0b11, quorum=0b11), rep([A, C_], hw=1)], committed=[A])
    assert I.check_lm(tails) is None
    below = view([rep([A, B_], hw=2, isr=0b11, quorum=0b11), rep([A, C_], hw=2)], committed=[A, B_])
    assert "differ at offset 1" in I.check_lm(below)


def test_hwm_forbids_leader_exposing_other_data_but_allows_lagging_hw():
    lag = view([rep([A, B_], hw=0, isr=0b11, quorum=0b11), rep([A, B_], hw=2, leader=0)], committed=[A, B_])
    assert I.check_hwm(lag) is None
    bad = view([rep([C_], hw=1, isr=1, quorum=1), rep([A], leader=0)], isr=1, committed=[A])
    assert "exposes 3@e1 at offset 0" in I.check_hwm(bad)


def test_rqs_forbids_quorum_smaller_than_electable_set_at_min_isr():
    bad = view([rep([A], isr=0b011, quorum=0b011), rep([A]), rep([])], isr=0b111)
    assert "missing [2]" in I.check_rqs(bad)
    below_min = view([rep([A], isr=0b001, quorum=0b001), rep([A]), rep([])], isr=0b001, elr=0b110)
    assert I.check_rqs(below_min) is None                     # HW frozen below MinISR
    stale = bad._replace(controller=bad.controller._replace(leader_epoch=1))
    assert I.check_rqs(stale) is None                         # not the current leader


def test_epoch_step_forbids_any_decrease():
    a = EpochView(((1, 2, 0), (1, 2, 0)), (1, 2, 0))
    assert I.check_epoch(a, ("x",), EpochView(((2, 3, 1), (1, 2, 0)), (2, 3, 1))) is None
    assert "partition epoch went from 2 to 1" in I.check_epoch(a, ("x",), EpochView(((1, 1, 0), (1, 2, 0)), (1, 2, 0)))
    assert "controller's leader epoch" in I.check_epoch(a, ("x",), EpochView(a.replicas, (0, 2, 0)))


def test_log_epochs_ordered():
    assert I.check_log_epochs(view([rep([A, C_]), rep([])])) is None
    assert "epoch 0 at offset 1 after epoch 1" in I.check_log_epochs(view([rep([C_, A]), rep([])]))


def test_leader_in_isr_and_hw_bounds():
    assert "not in the ISR" in I.check_leader_in_isr(view([rep(isr=1, quorum=1), rep()], leader=1, isr=0b01))
    assert "outside its own ISR" in I.check_leader_in_isr(view([rep(isr=0b10), rep(leader=0)]))
    assert "above its LEO" in I.check_hw_bounds(view([rep([A], hw=2, isr=1), rep()], committed=[A, B_]))
    assert "above the true HW" in I.check_hw_bounds(view([rep([A, B_], hw=2, isr=1), rep()], committed=[A]))


def test_hw_bounds_allows_uncommitted_tails_above_the_hw_only():
    # a deposed leader's diverged record above its HW is fine (it will truncate it) ...
    tail = view([rep([A, B_], hw=2, isr=0b11, quorum=0b11), rep([A, C_], hw=1, leader=0)], committed=[A, B_])
    assert I.check_hw_bounds(tail) is None
    # ... but not once its HW covers it (KAFKA-14704: the leader's HW taken before truncating)
    covered = tail._replace(replicas=(tail.replicas[0], tail.replicas[1]._replace(hw=2)))
    assert "replica 1's HW 2 covers 3@e1 at offset 1, consumers read 2@e0 there" == I.check_hw_bounds(covered)
    # the same holds for a crashed replica's HW (what it would serve after a restart)
    dead = covered._replace(replicas=(covered.replicas[0], covered.replicas[1]._replace(alive=False)))
    assert "covers 3@e1" in I.check_hw_bounds(dead)


def test_correct_model_satisfies_every_invariant_along_walks():
    model = registry.build("replication", {}, [])
    invs = model.invariants()
    assert {i.name for i in invs} == {i.name for i in I.ALL}
    for seed in range(15):
        res = walk(model, seed=seed, steps=80)
        assert res.violation is None, (seed, res.violation)


# behaviour, params, trace, invariants its final state (or last step) breaks
UNCLEAN = {"records": "1", "epochs": "3", "crashes": "2", "lossy": "0", "alters": "0", "init_isr": "2"}
BREAKS = [
    ("unclean-election", UNCLEAN,
     [("write", 0), ("fetch", 1), ("inc_hw", 0), ("crash", 0), ("crash", 1), ("elect_unclean", 2)],
     ["i-dur", "i-lc"]),
    ("unclean-election", dict(UNCLEAN, records="2", alters="1"),
     [("write", 0), ("fetch", 1), ("inc_hw", 0), ("crash", 0), ("crash", 1), ("elect_unclean", 2), ("apply", 2, 3),
      ("restart", 0, 1), ("truncate", 0), ("expand", 2, 0), ("ctrl_alter", 2), ("alter_resp", 2), ("write", 2),
      ("fetch", 0), ("inc_hw", 2)],
     ["i-hwm", "i-lcc", "hw-bounds"]),
    ("truncate-to-hw", {"records": "1", "epochs": "1"},
     [("write", 0), ("fetch", 1), ("crash", 1), ("fetch", 2), ("inc_hw", 0), ("apply", 2, 1)],
     ["i-lcc"]),
    ("ofle-offset-only", {"records": "2", "epochs": "2", "crashes": "0", "lossy": "0", "alters": "0"},
     [("write", 0), ("fetch", 1), ("elect", 2), ("apply", 2, 1), ("write", 2), ("elect", 0), ("apply", 0, 1),
      ("apply", 1, 1), ("truncate", 1), ("apply", 2, 1), ("truncate", 2), ("inc_hw", 0), ("fetch", 2)],
     ["i-lm", "i-lcc", "hw-bounds"]),
    # KAFKA-14704: replica 1 fetched 1@e0 from leader 0 outside the ISR; after leader 2 committed 2@e1 at
    # offset 0, replica 1 (which must truncate) takes leader 2's HW from the diverging fetch response first
    ("kafka-14704-hw-before-truncate", {"records": "2", "epochs": "1", "alters": "1", "crashes": "0", "lossy": "0"},
     [("write", 0), ("shrink", 0, 1), ("ctrl_alter", 0), ("fetch", 1), ("elect", 2), ("apply", 0, 1), ("apply", 1, 1),
      ("apply", 2, 1), ("truncate", 0), ("write", 2), ("fetch", 0), ("inc_hw", 2), ("fetch_hw", 1)],
     ["hw-bounds", "i-lm"]),
    ("no-maximal-isr", {"records": "1", "epochs": "1", "alters": "2"},
     [("write", 0), ("shrink", 0, 1), ("ctrl_alter", 0), ("alter_resp", 0), ("expand", 0, 1), ("ctrl_alter", 0)],
     ["i-rqs"]),
    ("stale-controller-accepted", {"records": "1", "epochs": "2", "ctrl_failovers": "1", "crashes": "0", "lossy": "0",
                                   "alters": "2"},
     [("write", 0), ("shrink", 0, 1), ("ctrl_failover",), ("ctrl_alter", 0), ("alter_resp", 0), ("expand", 0, 1),
      ("ctrl_alter", 0), ("alter_resp", 0), ("zombie_elect", 1), ("apply", 0, 1)],
     ["i-epoch"]),
    ("no-fetch-epoch-fencing", {"records": "2", "epochs": "2", "crashes": "0", "lossy": "0", "alters": "0"},
     [("elect", 1), ("elect", 0), ("apply", 0, 1), ("write", 0), ("fetch", 1), ("apply", 1, 2), ("write", 1)],
     ["log-epochs-ordered"]),
    # reference scenario 3.B(j): truncation against a leader still in an older epoch falls back to the HW
    ("no-fetch-epoch-fencing", {"records": "2", "epochs": "2", "crashes": "0", "lossy": "0", "alters": "0"},
     [("write", 0), ("fetch", 1), ("fetch", 2), ("inc_hw", 0), ("elect", 1), ("apply", 1, 1), ("write", 1),
      ("elect", 0), ("apply", 1, 1), ("truncate", 1)],
     ["i-lcc"]),
]


def run(model, trace):
    states = [model.init_states()[0]]
    for a in trace:
        assert a in list(model.actions(states[-1])), f"{a} not enabled"
        states.append(model.step(states[-1], a))
    return states


@pytest.mark.parametrize("behaviour,params,trace,broken", BREAKS, ids=[f"{b[0]}-{'+'.join(b[3])}" for b in BREAKS])
def test_behaviour_trace_breaks_invariant(behaviour, params, trace, broken):
    bad = registry.build("replication", params, [behaviour])
    states = run(bad, trace)
    by_name = {i.name: i for i in bad.invariants()}
    for name in broken:
        inv = by_name[name]
        msg = inv.check(states[-2], trace[-1], states[-1]) if inv.kind == "step" else inv.check(states[-1])
        assert msg, name
    # without the behaviour the same trace is either impossible or harmless
    good = registry.build("replication", params, [])
    s = good.init_states()[0]
    for a in trace:
        if a not in list(good.actions(s)):
            break
        t = good.step(s, a)
        assert good.check_step(s, a, t, 0) is None and good.check_state(t) is None
        s = t


# hw-bounds: each behaviour it lists, and the bounds at which the explorer reaches the violation
HW_BOUNDS_HUNT = {
    "kafka-14704-hw-before-truncate": {"records": 2, "epochs": 1, "alters": 1, "crashes": 0, "lossy": 0},
    "ofle-offset-only": {"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0},
    "skip-truncate-same-leader": {"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0},
    "no-fetch-epoch-fencing": {"records": 2, "epochs": 2, "crashes": 0, "lossy": 0, "alters": 0},
    "truncate-to-hw": {"records": 2, "epochs": 2, "crashes": 1, "lossy": 0, "alters": 1},
}


def only(model, name):
    """The model checking one invariant only (so the explorer reports it even where another breaks first)."""
    model.__dict__["_state_invs"] = tuple(i for i in model.invariants() if i.name == name)
    model.__dict__["_step_invs"] = ()
    return model


def test_hw_bounds_lists_exactly_the_behaviours_shown_to_break_it():
    traced = {b for b, _, _, broken in BREAKS if "hw-bounds" in broken}
    assert set(I.HW_BOUNDS.broken_by) == set(HW_BOUNDS_HUNT) | traced


@pytest.mark.parametrize("behaviour", sorted(HW_BOUNDS_HUNT))
def test_behaviour_breaks_hw_bounds_in_the_explorer(behaviour):
    from kverify.model.explore import explore

    params = HW_BOUNDS_HUNT[behaviour]
    res = explore(only(registry.build("replication", params, [behaviour]), "hw-bounds"), graph=False,
                  stop_on_first=True)
    assert [f.invariant for f in res.violations] == ["hw-bounds"]
    assert "covers" in res.violations[0].violation.message      # the new clause, not a numeric bound


# --- isr-shrink-only-lagging and leaderless-write-drops-only-leader (step properties over views) --------------
def _lag(now, isr=(1, 2), pending=None, followers=((2, 1, 1, 600),), epoch=3, leo=2):
    return I.LagView(now, 1000, epoch, isr, pending, followers, leo)


def test_lag_shrink_forbids_dropping_a_follower_caught_up_within_the_limit():
    # follower 2 fetched at the leader's log end (offset 1) at 600 ms; at 1200 ms it is dropped: 600 ms < 1000 ms
    msg = I.check_lag_shrink(_lag(1200), ("isr_check",), _lag(1200, pending=(1,)))
    assert msg == ("follower 2 left the ISR [1, 2] -> [1] at 1200 ms although it fetched up to the leader's log "
                   "end (1) at 600 ms, within replica.lag.time.max.ms 1000")
    # the same through a direct (committed) ISR write instead of a proposal
    assert "follower 2 left" in I.check_lag_shrink(_lag(1200), None, _lag(1200, isr=(1,)))
    # a follower whose last fetch asked for the leader's current log end is caught up, however long ago
    at_end = _lag(1500, followers=((2, 2, 2, 0),))
    assert "equals the leader's" in I.check_lag_shrink(at_end, None, _lag(1500, pending=(1,)))


def test_lagging_dropped():
    late = _lag(1601, followers=((2, 1, 2, 600),))       # below the log end 2, last fetch 1001 ms ago
    assert I.out_of_sync(late) == [2]
    assert I.check_lagging_dropped(late, (1,)) is None
    assert I.check_lagging_dropped(late, None) == (
        "followers [2] are behind the leader's log end 2 and last fetched more than replica.lag.time.max.ms 1000 "
        "ago (now 1601 ms), yet the ISR task would do nothing")
    assert "propose [1, 2]" in I.check_lagging_dropped(late, (1, 2))
    for fine in (_lag(1600, followers=((2, 1, 2, 600),)),    # exactly at the limit: still caught up
                 _lag(1601, followers=((2, 2, 2, 600),)),    # at the log end
                 _lag(1601, followers=((2, -1, -1, -1),))):  # no fetch in this leadership: not certain
        assert I.out_of_sync(fine) == [] and I.check_lagging_dropped(fine, None) is None


@pytest.mark.parametrize("prev, nxt", [
    (_lag(1601), _lag(1601, pending=(1,))),                                    # caught up 1001 ms ago: lagging
    (_lag(700, followers=((2, 0, 1, 600),)), _lag(700, pending=(1,))),         # its last fetch stayed below the end
    (_lag(700, followers=((2, -1, -1, -1),)), _lag(700, pending=(1,))),        # no fetch in this leadership
    (_lag(700), _lag(700, pending=(1, 2, 3))),                                 # an expansion drops no one
    (_lag(700, pending=(1,)), _lag(700, pending=(1,))),                        # an earlier proposal, not this step's
    (_lag(700), _lag(700, isr=(1,), epoch=4)),                                 # a new leadership (LeaderAndIsr)
])
def test_lag_shrink_allows(prev, nxt):
    assert I.check_lag_shrink(prev, None, nxt) is None


def test_leaderless_write_removes_only_the_failed_leader():
    S = I.StoredState
    ok = [(S(1, (1, 2), 4), S(-1, (2,), 5)),           # ZK OfflineReplica of the leader: it leaves the ISR
          (S(1, (1,), 4), S(-1, (1,), 5)),             # ... unless it is the last member
          (S(1, (1, 2, 3), 4), S(-1, (3,), 6)),        # two writes in one step (a batch): not judged
          (S(1, (1, 2), 4), S(2, (2,), 5)),            # an election names a leader
          (S(-1, (2,), 4), S(-1, (2,), 5))]            # already leaderless
    for prev, nxt in ok:
        assert I.check_leaderless_write(prev, None, nxt) is None, (prev, nxt)
    assert I.check_leaderless_write(S(1, (1, 2), 4), None, S(-1, (1,), 5)) == (
        "the write leaving the partition leaderless (leader 1 failed) changed the ISR [1, 2] -> [1]: it may only "
        "remove 1")
    assert "kept the failed leader 1" in I.check_leaderless_write(S(1, (1, 2), 4), None, S(-1, (1, 2), 5))
    assert "may only remove 1" in I.check_leaderless_write(S(1, (1, 2), 4), None, S(-1, (2, 3), 5))


@pytest.mark.parametrize("isr, min_isr, error, bad", [
    (1, 2, "NOT_ENOUGH_REPLICAS", False),      # below the minimum: refused
    (2, 2, None, False),                       # at the minimum: appended, waits for the HW
    (2, 2, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", False),
    (1, 1, "NOT_ENOUGH_REPLICAS", True),       # refused although the ISR meets the minimum
    (1, 2, None, True),                        # appended below the minimum
    (1, 2, "NONE", True),
])
def test_min_isr_refusal(isr, min_isr, error, bad):
    msg = I.check_min_isr_refusal(I.AppendView(isr, min_isr), None, error)
    assert (msg is not None) == bad, msg


@pytest.mark.parametrize("maximal, min_isr, error, bad", [
    (2, 2, "NONE", False), (1, 2, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", False),
    (1, 2, "NOT_LEADER_OR_FOLLOWER", False),     # resigned: not this property's business
    (1, 2, "NONE", True), (2, 2, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True),
])
def test_min_isr_completion(maximal, min_isr, error, bad):
    msg = I.check_min_isr_completion(I.AppendView(maximal, min_isr), None, error)
    assert (msg is not None) == bad, msg


def test_leader_epoch_cached():
    assert I.check_leader_epoch_cached([("t-0", 1, 3, 3), ("t-1", 2, 0, 0)]) is None
    assert I.check_leader_epoch_cached([("t-0", 1, 3, 3), ("t-1", 2, 4, 2)]) == \
        "t-1: leader 2 in leader epoch 4 has epoch 2 last in its leader-epoch cache"
