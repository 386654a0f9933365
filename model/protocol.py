"""The one interface every kverify engine consumes (in the spirit of stateright's `Model`).

A `Protocol` is a transition system: initial states, the actions enabled in a state, the
(deterministic) successor under an action, a cheap fingerprint, the invariants that apply, and
optionally symmetry reduction and an abstraction. The BFS explorer, the seeded random walker,
the Hypothesis state machines, Spark runs and replay all drive a protocol only through this
class, so no engine carries its own copy of a protocol's rules.

Conventions (engines rely on them):
- A state is an immutable, hashable value (tuples / frozensets / NamedTuples of primitives).
- An action is a tuple whose first item is the action's name (a str) and whose other items are
  JSON primitives (str, int, bool, None) or tuples of them. `action_to_json`/`action_from_json`
  convert it losslessly, which is how traces are stored in reports and replayed.
- `step(s, a)` is only called with an `a` from `actions(s)`; it returns the successor state.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Hashable, Iterable, Optional, Sequence

from kverify.invariants.core import Invariant, Sometimes, Violation


class Protocol(ABC):
    """Base class; subclasses implement the three abstract methods."""

    name: str = "protocol"
    params: dict = {}
    behaviours: frozenset = frozenset()

    # --- optional hooks of a built protocol (read as plain attributes, never with getattr) ------
    memo_safe: bool = False
    """True when equal states behave identically (same actions, ids included; equal successors; same
    verdicts): the walker then memoises by state (model/walk.py `WalkMemo`)."""
    check_refinement = None
    """None, or `check_refinement(prev, action, next, step_index) -> Violation | None`: the step maps
    onto the abstract model (model/refine.py); engines call it after each step when set."""
    action_table = None
    """None, or the protocol's `ActionTable` (model/actions.py): one named guard and update per action;
    Hypothesis makes one rule per action from it."""

    # --- the transition system -----------------------------------------------------------------------
    @abstractmethod
    def init_states(self) -> Sequence[Hashable]:
        ...

    @abstractmethod
    def actions(self, state) -> Iterable[tuple]:
        ...

    @abstractmethod
    def step(self, state, action: tuple):
        ...

    # --- properties -------------------------------------------------------------------------
    def invariants(self) -> Sequence[Invariant]:
        return ()

    def sometimes(self) -> Sequence[Sometimes]:
        return ()

    def liveness(self) -> Sequence:
        """`Eventually` properties (invariants/liveness.py) checked under fairness (model/search/liveness.py)."""
        return ()

    # --- optional refinements ---------------------------------------------------------------
    def canonical(self, state):
        """Symmetry-reduced representative of `state` (identity unless overridden)."""
        return state

    def fingerprint(self, state) -> int:
        """Cheap 64-bit-ish fingerprint of the canonical state."""
        return hash(self.canonical(state))

    def subsumption(self, state):
        """None (default), or `(core, spare)`: the state without its fault budgets (hashable, already
        canonical) and those budgets (a tuple of ints). A protocol offers it only if, for two states
        with equal cores, the one with budgets >= the other's (item by item) can do every action the
        other can, into successors again equal in core with budgets >= (spare budgets only ever gate
        `is_fault` actions, which only ever decrease them), and if invariants, `sometimes`,
        `is_quiescent_good` and `allows_terminal` do not read them. The explorer then skips a state
        whose core it has seen with budgets >= its own (model/explore.py `Subsumption`)."""
        return None

    def abstract(self, state) -> Hashable:
        """A smaller state (coverage counting, refinement). Identity by default."""
        return state

    def is_fault(self, action: tuple) -> bool:
        """True for fault actions (crash, loss, expiry...): graph analysis removes them to ask
        whether a good quiescent state stays reachable once faults stop."""
        return False

    def is_quiescent_good(self, state) -> bool:
        """A settled, healthy state (all live members Stable with a complete assignment; every
        partition with a leader). Used by the explorer's recoverability analysis."""
        return True

    def allows_terminal(self, state) -> bool:
        """Whether a state without enabled actions is acceptable (not a deadlock). Bounded
        models usually end in such states once their budgets are spent."""
        return True

    def participants(self) -> Sequence[str]:
        """Lifelines of the report's sequence diagram (members, coordinator, brokers, controller)."""
        return ()

    def arrow(self, action: tuple):
        """(source, destination) participants of an action for the sequence diagram, or None
        when the action is local to one participant (then `(p, p)`) or not a message at all."""
        return None

    def describe(self, state) -> dict:
        """JSON-able rendering of the parts of a state that matter to a person (reports)."""
        return {"state": repr(state)}

    def replay_params(self) -> dict:
        """Parameters that rebuild this protocol through the registry (see model/registry.py)."""
        return dict(self.params)

    # --- helpers every engine uses (not meant to be overridden) ------------------------------
    def check_state(self, state, step_index: int = 0) -> Optional[Violation]:
        for inv in self.state_invariants:
            msg = inv.check(state)
            if msg is not None:
                return Violation(inv.name, msg, step_index)
        return None

    def check_step(self, prev, action, nxt, step_index: int) -> Optional[Violation]:
        for inv in self.step_invariants:
            msg = inv.check(prev, action, nxt)
            if msg is not None:
                return Violation(inv.name, msg, step_index)
        return None

    @property
    def state_invariants(self) -> tuple:
        cached = self.__dict__.get("_state_invs")
        if cached is None:
            cached = tuple(i for i in self.invariants() if i.kind == "state")
            self.__dict__["_state_invs"] = cached
        return cached

    @property
    def step_invariants(self) -> tuple:
        cached = self.__dict__.get("_step_invs")
        if cached is None:
            cached = tuple(i for i in self.invariants() if i.kind == "step")
            self.__dict__["_step_invs"] = cached
        return cached


def action_to_json(action: tuple) -> list:
    return [action_to_json(x) if isinstance(x, tuple) else x for x in action]


def action_from_json(data: Any):
    if isinstance(data, list):
        return tuple(action_from_json(x) for x in data)
    return data


def action_label(action: tuple) -> str:
    """Human form: `join(m1)`, `commit(m2, 3, (t0, 1))`."""
    name, *args = action
    return f"{name}({', '.join(_fmt(a) for a in args)})"


def _fmt(x) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_fmt(y) for y in x) + ")"
    return str(x)


def canonical_value(obj):
    """A process-independent form of a state: sets are sorted, dicts itemised. Python's `hash`
    of a str differs between processes (PYTHONHASHSEED), and so does the iteration order of a
    set of strings; anything that crosses a process boundary (Spark rows, reports, replay)
    goes through this form."""
    if isinstance(obj, (frozenset, set)):
        return ("<set>",) + tuple(sorted((canonical_value(x) for x in obj), key=repr))
    if isinstance(obj, dict):
        return ("<dict>",) + tuple(sorted(((canonical_value(k), canonical_value(v)) for k, v in obj.items()), key=repr))
    if isinstance(obj, tuple):
        return tuple(canonical_value(x) for x in obj)
    if isinstance(obj, list):
        return tuple(canonical_value(x) for x in obj)
    return obj


def stable_fingerprint(obj) -> int:
    """64-bit fingerprint that is equal across processes and machines (slower than `hash`)."""
    import hashlib

    digest = hashlib.blake2b(repr(canonical_value(obj)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
