"""The compiled enumerator of an ActionTable (model/enumerator.py) gives exactly the plain enumeration:
every registered model with a table, on the states a short search reaches; guards it cannot inline are
called, and a table whose action list changes is compiled again."""
import pytest

from kverify.model import registry
from kverify.model.actions import Action, ActionTable
from kverify.model.enumerator import compile_enabled
from kverify.model.search import ExactStore, StateCollector, search

TABLED = [n for n in registry.names() if registry.build(n, {}).action_table is not None]


@pytest.mark.parametrize("name", TABLED)
def test_compiled_enumeration_equals_the_plain_one(name):
    p = registry.build(name, {})
    table = p.action_table
    fast = compile_enabled(table.actions)
    assert fast is not None
    states = StateCollector()
    search(p, ExactStore(), [states], max_states=400)
    assert len(states.states) > 50
    for _depth, s in states.states.values():
        assert fast(p, s) == table.enabled_plain(p, s) == table.enabled(p, s)


def _small(proto, s):
    return s < proto


def _odd_args(proto, s):
    return ((1,), (2,), (3,))


def _by_lambda(proto, s, k):
    return any(x == k for x in [s])          # a comprehension: not inlined, called


def test_shapes_it_cannot_inline_are_called_and_a_changed_table_is_recompiled():
    inc = Action("inc", _small, lambda proto, s: s + 1)
    jump = Action("jump", _by_lambda, lambda proto, s, k: s + k, domain=_odd_args)
    table = ActionTable([inc, jump])
    assert table.enabled(3, 2) == [("inc",), ("jump", 2)]
    assert table.enabled(3, 3) == [("jump", 3)]
    table.actions = (jump,)
    assert table.enabled(3, 1) == [("jump", 1)]
