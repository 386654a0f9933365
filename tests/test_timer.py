"""The deterministic timer follows Kafka MockTimer semantics (coordinator-scenarios.md §3.3)."""
from kverify.impl.timer import Timer


def make():
    fired = []
    t = Timer(lambda key, payload: fired.append((t.now, key, payload)))
    return t, fired


def test_deadline_must_be_strictly_before_new_now():
    t, fired = make()
    t.schedule("a", 10)
    t.advance(10)
    assert fired == []
    t.advance(1)
    assert fired == [(11, "a", None)]


def test_clock_moves_first_and_tasks_fire_in_deadline_order():
    t, fired = make()
    t.schedule("late", 30, 3)
    t.schedule("early", 5, 1)
    t.schedule("mid", 20, 2)
    t.advance(100)
    assert [k for _, k, _ in fired] == ["early", "mid", "late"]
    assert all(now == 100 for now, _, _ in fired)


def test_equal_deadlines_fire_most_recently_scheduled_first():
    t, fired = make()
    for k in ("first", "second", "third"):
        t.schedule(k, 7)
    t.advance(8)
    assert [k for _, k, _ in fired] == ["third", "second", "first"]


def test_tasks_scheduled_while_firing_use_advanced_clock():
    fired = []

    def fire(key, payload):
        fired.append((t.now, key))
        if key == "chain":
            t.schedule("next", 5)

    t = Timer(fire)
    t.schedule("chain", 5)
    t.advance(100)               # "next" gets deadline 105, so it does not fire in this advance
    assert fired == [(100, "chain")]
    assert t.deadline("next") == 105
    t.advance(6)
    assert fired[-1] == (106, "next")


def test_non_positive_delay_runs_at_once():
    t, fired = make()
    t.schedule("now", 0, "p")
    t.schedule("neg", -3)
    assert fired == [(0, "now", "p"), (0, "neg", None)]
    assert len(t) == 0


def test_cancel_and_reschedule_replaces():
    t, fired = make()
    t.schedule("a", 5)
    t.schedule("b", 5)
    assert t.cancel("a") is True
    assert t.cancel("a") is False
    t.schedule("b", 50)          # replaces the earlier "b"
    t.advance(10)
    assert fired == []
    t.advance(41)
    assert [k for _, k, _ in fired] == ["b"]


def test_copy_is_independent_and_snapshot_compares():
    t, fired = make()
    t.schedule("a", 5, 1)
    other_fired = []
    u = t.copy(lambda k, p: other_fired.append(k))
    assert u.snapshot() == t.snapshot()
    u.advance(6)
    assert other_fired == ["a"] and fired == []
    assert u.snapshot() != t.snapshot()
    t.advance(6)
    assert fired and t.snapshot() == u.snapshot()


def test_backwards_time_is_refused():
    t, _ = make()
    try:
        t.advance(-1)
    except ValueError:
        return
    raise AssertionError("negative advance accepted")
