"""The one breadth-first search of kverify: a loop, storage classes and visitors.

Why it exists: issue 19 asked for exactly one BFS loop in the code base. The explorer
(model/explore.py), refinement's path search (model/refine.py), the TLA+ state comparison
(kverify/tla), the recovery check of a replayed trace and the benchmarks all run `search(...)`
with their own store (storage.py) and visitors (visitors.py); the expansion of one state
(expand.py) is the unit a worker process or a Spark executor reuses.
"""
from kverify.model.search.expand import Expander, Expansion, expand_one  # noqa: F401
from kverify.model.search.loop import Run, search  # noqa: F401
from kverify.model.search.storage import (ExactStore, FingerprintSet, FingerprintStore, IndexedStore,  # noqa: F401
                                          Subsumption, SubsumptionStore, offers_subsumption)
from kverify.model.search.visitors import (DEADLOCK, RECOVERABLE, ActionNames, Deadlock, DepthCounter,  # noqa: F401
                                           GraphBuilder, Goal, HookTable, SometimesTracker, StateCollector, StateInvariants,
                                           StepInvariants, Visitor, crash)


def checks(protocol) -> list:
    """The visitors of the explorer's checks, in the order it applies them: state invariants, step
    invariants, deadlock, `sometimes` (a worker expanding states runs the same list)."""
    return [StateInvariants(protocol), StepInvariants(protocol), Deadlock(protocol), SometimesTracker(protocol)]
