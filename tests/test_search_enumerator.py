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


# --- what the compiled function shares between actions: domains, attribute reads -----------------
class _Box:
    """A state whose `inner` may be None: a guard reads `s.inner.size` only behind a test."""

    def __init__(self, inner, flag=True):
        self.inner, self.flag = inner, flag


class _Inner:
    def __init__(self, size):
        self.size = size


def _has_room(proto, s, k):
    return s.inner is not None and s.inner.size > k


def _room_again(proto, s, k):
    return s.flag and s.inner is not None and s.inner.size > k + 1


_CALLS: list = []


def _counted(proto, s):
    _CALLS.append(s)
    return (x for x in ((0,), (1,), (2,)))        # a generator: must not be spent by the first action


def test_a_read_that_raises_when_hoisted_falls_back_to_the_guards_own_order():
    grow = Action("grow", _has_room, lambda proto, s, k: s, domain=_counted)
    again = Action("again", _room_again, lambda proto, s, k: s, domain=_counted)
    table = ActionTable([grow, again])
    fast = compile_enabled(table.actions)
    for s in (_Box(None), _Box(_Inner(0)), _Box(_Inner(2)), _Box(_Inner(3), flag=False)):
        want = table.enabled_plain(None, s)
        _CALLS.clear()
        assert fast(None, s) == want
        assert len(_CALLS) <= 2                    # once per state, plus once if the hoisted reads fell back
    _CALLS.clear()
    assert fast(None, _Box(_Inner(3))) == [("grow", 0), ("grow", 1), ("grow", 2), ("again", 0), ("again", 1)]
    assert len(_CALLS) == 1                        # the shared domain is called once per state


def _shadows_its_state(proto, s):
    s = s - 10                                     # reassigns its parameter: inlining would change `s` for the next guard
    return s > 0


def _plain_small(proto, s):
    return s < 100


def test_a_guard_reassigning_its_parameter_is_called_not_inlined():
    table = ActionTable([Action("shadow", _shadows_its_state, lambda proto, s: s),
                         Action("small", _plain_small, lambda proto, s: s)])
    for s in (5, 50, 105, 500):
        assert table.enabled(None, s) == table.enabled_plain(None, s)
    assert table.enabled(None, 105) == [("shadow",)]


# --- domains written as one `return EXPR`: inlined, a shared base computed once per state ----------
class _Facts:
    def __init__(self, s):
        self.small = [(k,) for k in range(s % 3)]
        self.large = [(k,) for k in range(s % 3, s % 5)]


class _FactsModel:
    def __init__(self):
        self.calls = 0

    def facts(self, s):
        self.calls += 1
        return _Facts(s)


def _small_domain(m, s):
    return m.facts(s).small


def _large_domain(m, s):
    return m.facts(s).large


def _below(m, s, k):
    return k < s


def test_single_expression_domains_are_inlined_with_their_shared_base_computed_once():
    table = ActionTable([Action("a", _below, lambda m, s, k: s, domain=_small_domain),
                         Action("b", _below, lambda m, s, k: s, domain=_large_domain),
                         Action("c", _below, lambda m, s, k: s, domain=_small_domain)])
    fast = compile_enabled(table.actions)
    assert "_kv_dom0_fn" not in fast.__code__.co_varnames          # inlined, not called
    m = _FactsModel()
    for s in range(12):
        want = table.enabled_plain(m, s)
        m.calls = 0
        assert fast(m, s) == want
        assert m.calls == 1                                        # one `m.facts(s)` for both domains
    assert fast(m, 4) == [("a", 0), ("b", 1), ("b", 2), ("b", 3), ("c", 0)]


# --- composed models: domains that are already enabled, closures over constants, helpers ----------
_GUARD_CALLS: list = []


def _inner_guard(m, s, k):
    _GUARD_CALLS.append(k)
    return k < s


def _names_of(s):
    """Per action name, the arguments an inner table enables (what a composed model's domains read)."""
    return {"x": [(k,) for k in range(s) if k % 2 == 0], "y": [(k,) for k in range(s) if k % 2 == 1]}


def _closure_domain(name):
    def domain(m, s):
        return _names_of(s).get(name, ())
    return domain


def _plain_guard(m, s):
    return s > 1


def test_an_enabled_domain_is_not_guarded_again_and_its_closure_constants_are_inlined():
    table = ActionTable([Action(n, _inner_guard, lambda m, s, k: s, domain=_closure_domain(n), domain_enabled=True)
                         for n in ("x", "y")] + [Action("z", _plain_guard, lambda m, s: s)])
    fast = compile_enabled(table.actions)
    names = fast.__code__.co_varnames
    assert "_kv_dom0_fn" not in names and "_kv_dom1_fn" not in names      # x's and y's domains inlined
    for s in range(6):
        _GUARD_CALLS.clear()
        got = fast(None, s)
        assert _GUARD_CALLS == []                  # the guards were not called again
        assert got == table.enabled_plain(None, s)
    assert fast(None, 4) == [("x", 0), ("x", 2), ("y", 1), ("y", 3), ("z",)]


def test_a_domain_wrongly_declared_enabled_is_told_apart_by_the_plain_enumeration():
    """The claim `domain_enabled` is checked, not trusted: a domain yielding an argument its guard
    refuses makes the compiled enumeration differ from the plain one (what the test over every
    registered model compares)."""
    def too_wide(m, s):
        return [(k,) for k in range(s + 1)]        # k == s: the guard `k < s` refuses it
    table = ActionTable([Action("x", _inner_guard, lambda m, s, k: s, domain=too_wide, domain_enabled=True),
                         Action("z", _plain_guard, lambda m, s: s)])
    fast = compile_enabled(table.actions)
    assert fast(None, 3) != table.enabled_plain(None, 3)


def _big(m, s, k):
    return s > k and m > 0


def _uses_helper(m, s, k):
    return _big(m, s, k) and k != 2


def _uses_helper_on_an_expression(m, s, k):
    return _big(m, s + 1, k)


def test_one_expression_helpers_called_with_names_are_inlined_others_are_called():
    table = ActionTable([Action("h", _uses_helper, lambda m, s, k: s, domain=_odd_args),
                         Action("e", _uses_helper_on_an_expression, lambda m, s, k: s, domain=_odd_args)])
    fast = compile_enabled(table.actions)
    calls = [ins.argval for ins in __import__("dis").get_instructions(fast) if ins.opname == "LOAD_GLOBAL"]
    assert calls.count("_big") == 1                # only the call with an expression argument is left
    for m in (0, 1):
        for s in range(6):
            assert fast(m, s) == table.enabled_plain(m, s)
    assert fast(1, 3) == [("h", 1), ("e", 1), ("e", 2), ("e", 3)]


# --- domains that yield whole actions (a composed model passing its inner model's tuples on) ------
def _inner_actions(s):
    """An inner table's enumeration, grouped by name: the actions themselves, `(name, k)`."""
    return {"x": [("x", k) for k in range(s) if k % 2 == 0], "y": [("y", k) for k in range(s) if k % 2 == 1]}


def _actions_domain(name, wrong=None):
    def domain(m, s):
        got = _inner_actions(s).get(name, ())
        return [wrong(a) for a in got] if wrong else got
    return domain


def test_a_domain_of_whole_actions_is_passed_on_as_it_is_and_checked_by_the_plain_enumeration():
    table = ActionTable([Action(n, _inner_guard, lambda m, s, k: s, domain=_actions_domain(n), domain_enabled=True,
                                domain_actions=True) for n in ("x", "y")] + [Action("z", _plain_guard, lambda m, s: s)])
    fast = compile_enabled(table.actions)
    for s in range(6):
        _GUARD_CALLS.clear()
        got = fast(None, s)
        assert _GUARD_CALLS == []                  # not guarded again, not rebuilt
        assert got == table.enabled_plain(None, s) == table.enabled(None, s)
    assert fast(None, 4) == [("x", 0), ("x", 2), ("y", 1), ("y", 3), ("z",)]
    assert [list(a.enabled(None, 4)) for a in table.actions[:2]] == [[(0,), (2,)], [(1,), (3,)]]
    # a broken composition: the domain hands on actions of another name, or arguments the guard refuses
    for wrong in (lambda a: ("w",) + a[1:], lambda a: (a[0], a[1] + 10)):
        bad = ActionTable([Action("x", _inner_guard, lambda m, s, k: s, domain=_actions_domain("x", wrong),
                                  domain_enabled=True, domain_actions=True), Action("z", _plain_guard, lambda m, s: s)])
        assert compile_enabled(bad.actions)(None, 4) != bad.enabled_plain(None, 4)


# --- the guard's source is read from its lines (no tokenizer): odd layouts inline or fall back ----
def _commented(m, s):
    k = s + 1
# a comment at column 0 inside the body
    return k > 2


def _string_at_column_zero(m, s):
    k = """
x"""
    return s > len(k)


def test_guards_with_odd_layouts_are_inlined_or_called_and_give_the_plain_enumeration():
    table = ActionTable([Action("c", _commented, lambda m, s: s), Action("t", _string_at_column_zero, lambda m, s: s)])
    fast = compile_enabled(table.actions)
    names = fast.__code__.co_varnames
    assert "_kv_guard0" not in names               # the comment does not end the body: inlined
    assert "_kv_guard1" in names                   # cut inside its string: it does not parse, so it is called
    for s in range(5):
        assert fast(None, s) == table.enabled_plain(None, s)
    assert fast(None, 3) == [("c",), ("t",)]


def test_the_unhoisted_function_is_compiled_only_when_a_state_needs_it():
    from kverify.model.enumerator import _Later

    table = ActionTable([Action("grow", _has_room, lambda proto, s, k: s, domain=_odd_args),
                         Action("again", _room_again, lambda proto, s, k: s, domain=_odd_args)])
    fast = compile_enabled(table.actions)
    later = next(d for d in fast.__defaults__ if isinstance(d, _Later))
    assert fast(None, _Box(_Inner(3))) == table.enabled_plain(None, _Box(_Inner(3)))
    assert later.fn is None                        # the hoisted reads held: nothing more compiled
    assert fast(None, _Box(None)) == table.enabled_plain(None, _Box(None)) == []
    assert later.fn is not None                    # `s.inner.size` raised when hoisted: compiled now
