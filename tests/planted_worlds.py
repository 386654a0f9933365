"""Worlds with a planted mutant (tests/planted_mutants.py) that travel to Spark executors by name.

Why it exists: pytest's monkeypatch changes the driver process only; Spark executors build the world
from its name (kverify/spark/world.py) in their own Python workers, which Spark reuses across jobs.
`never_fails_over` is replication-world whose calls into the implementation (initial states, enabled
actions, steps) run with the controller that never fails a partition over, and with the reference code
again as soon as each call returns: nothing else in the worker is changed. A test ships this module and
planted_mutants.py with `SparkContext.addPyFile`; the driver imports them from tests/."""
from kverify.model import registry

from planted_mutants import plant

SPEC = registry.spec_for("replication-world")     # its parameters (kverify/spark/world.py `factory_spec`)


class _Capture:
    """A stand-in for pytest's monkeypatch: `plant` hands it the mutated method instead of installing it."""

    def setattr(self, cls, name, fn):
        self.patch = (cls, name, fn)


class Planted:
    """`inner` with the mutant installed only while one of its implementation calls runs."""

    def __init__(self, inner, mutant: str):
        cap = _Capture()
        plant(cap, mutant)
        self._inner, self._patch = inner, cap.patch

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _run(self, fn, *args):
        cls, name, mutated = self._patch
        original = cls.__dict__[name]
        setattr(cls, name, mutated)
        try:
            return fn(*args)
        finally:
            setattr(cls, name, original)

    def init_states(self):
        return self._run(self._inner.init_states)

    def actions(self, state):
        return self._run(lambda s: list(self._inner.actions(s)), state)

    def step(self, state, action):
        return self._run(self._inner.step, state, action)


def never_fails_over(params, behaviours):
    return Planted(registry.build("replication-world", params, behaviours), "never-fails-over")
