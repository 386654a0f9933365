"""acked-commit-durable over its view (both sides), the correct offsets model satisfying it, and an
unclean election of the offsets partition breaking it."""
from kverify.invariants.offsets import ACKED_COMMIT_DURABLE, OffsetsView, check_acked_commit_durable
from kverify.model import registry
from kverify.model.walk import walk


def test_allows_serving_at_or_above_acked_and_no_current_coordinator():
    assert check_acked_commit_durable(OffsetsView(1, True, (3, 2), (3, 1))) is None
    assert check_acked_commit_durable(OffsetsView(-1, False, (0, 0), (3, 1))) is None     # offline
    assert check_acked_commit_durable(OffsetsView(0, False, (1, 0), (3, 1))) is None      # deposed zombie


def test_forbids_current_coordinator_below_acked():
    msg = check_acked_commit_durable(OffsetsView(2, True, (3, 0), (3, 1)))
    assert msg == "coordinator on broker 2 serves offset 0 for p1 but 1 was acknowledged"


def test_correct_model_satisfies_it_along_walks():
    model = registry.build("offsets", {"partitions": "2", "records": "3"}, [])
    check = next(i for i in model.invariants() if i.name == ACKED_COMMIT_DURABLE.name).check
    for seed in range(10):
        res = walk(model, seed=seed, steps=50, record_trace=True)
        assert res.violation is None
        s = model.init_states()[0]
        for a in res.trace:
            s = model.step(s, a)
            assert check(s) is None


def test_unclean_election_breaks_it():
    model = registry.build("offsets", {"records": "1", "joins": "0", "epochs": "3", "crashes": "2", "init_isr": "2"},
                           ["unclean-election"])
    s = model.init_states()[0]
    for a in [("commit", 0, 0), ("fetch", 1), ("inc_hw", 0), ("crash", 0), ("crash", 1), ("elect_unclean", 2),
              ("apply", 2, 3)]:
        assert a in model.actions(s)
        s = model.step(s, a)
    v = model.offsets_view(s)
    assert v.current and v.acked == (1,) and v.served == (0,)
    assert "unclean-election" in ACKED_COMMIT_DURABLE.broken_by
    assert check_acked_commit_durable(v)
