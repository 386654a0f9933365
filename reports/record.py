"""The counterexample record: what every engine hands back when an invariant breaks.

Explorer, Hypothesis, random walks, Spark, Z3 and assignor certification all produce this one
record; `reports/` renders it (JSON, Markdown, HTML, JUnit) and `kverify replay` re-executes it.
The JSON schema is versioned by `SCHEMA`; a reader refuses a record of an unknown version with
one clear line. A step that raised is recorded like a broken invariant: the violation `exception`
(type, message, site; model/walk.py `crash_violation`), the trace ending with the raising action,
whose `state` is the state before it plus an `exception` field.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

SCHEMA = "kverify.counterexample/1"


class RecordError(ValueError):
    """A malformed or unsupported counterexample file (one-line message)."""


@dataclass
class Step:
    index: int                    # 0 = initial state, i = after the i-th action
    action: Optional[list]        # the action as JSON (name first, then arguments); None for index 0
    label: str                    # human form, e.g. "join(m1)"
    state: dict                   # Protocol.describe(state): what matters after this step
    fault: bool = False           # the action is a fault (crash, loss, expiry, ...)
    src: Optional[str] = None     # sequence-diagram arrow: from this participant ...
    dst: Optional[str] = None     # ... to this one (equal for a local action)


@dataclass
class Counterexample:
    invariant: str                # kverify name of the broken property
    statement: str                # its one-line statement
    model: str                    # registry name of the protocol / world (model/registry.py)
    params: dict                  # parameters that rebuild it
    behaviours: list              # historical behaviours switched on
    engine: str                   # explore | hypothesis | walk | spark | z3 | assignor-check
    violation_step: int           # index in `trace` of the step after which it broke
    violation: str                # one-line explanation with the values that broke it
    trace: list = field(default_factory=list)     # [Step]
    seed: Optional[int] = None
    init_index: int = 0           # which initial state the trace starts from
    replay: str = ""              # exact command that replays it
    extra: dict = field(default_factory=dict)     # engine-specific (e.g. Z3 model, assignor input)
    participants: list = field(default_factory=list)   # sequence-diagram lifelines
    schema: str = SCHEMA
    # a liveness counterexample is a lasso (model/search/liveness.py): the trace from step `loop_start`
    # on is the loop, whose last state equals the state of step `loop_start` (or, when `loop_start` is the
    # last step, no fair move is enabled there: the run stands still); None for every other record
    loop_start: Optional[int] = None

    @property
    def is_lasso(self) -> bool:
        return self.loop_start is not None

    def to_json(self) -> dict:
        d = asdict(self)
        return d

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False)

    @property
    def actions(self) -> list:
        """The trace's actions as protocol tuples (for replay)."""
        from kverify.model.protocol import action_from_json

        return [action_from_json(s.action) for s in self.trace[1:]]

    @classmethod
    def from_json(cls, data: Any) -> "Counterexample":
        if not isinstance(data, dict):
            raise RecordError("counterexample must be a JSON object")
        schema = data.get("schema")
        if schema != SCHEMA:
            raise RecordError(f"unsupported counterexample schema {schema!r} (this kverify reads {SCHEMA})")
        try:
            steps = [Step(**s) for s in data.get("trace", [])]
            fields = {k: v for k, v in data.items() if k != "trace"}
            return cls(trace=steps, **fields)
        except TypeError as exc:
            raise RecordError(f"malformed counterexample: {exc}") from None

    @classmethod
    def load(cls, path: str) -> "Counterexample":
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise RecordError(f"{path}: no such file") from None
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        return cls.from_json(data)


def from_trace(protocol, actions, violation, *, engine: str, seed=None, init_index: int = 0,
               model_name: Optional[str] = None) -> Counterexample:
    """Build a record by re-executing `actions` on `protocol` (states are reconstructed, so
    engines only need to keep the action sequence)."""
    from kverify.model.protocol import action_label, action_to_json

    try:
        state = protocol.init_states()[init_index]
    except Exception as exc:       # a protocol that cannot even start: the record says so
        state, actions = None, []
        steps = [Step(0, None, "init", {"exception": f"{type(exc).__name__}: {exc}"})]
    else:
        steps = [Step(0, None, "init", _describe(protocol, state))]
    for i, a in enumerate(actions, 1):
        arrow = protocol.arrow(a) or (None, None)
        try:
            state = protocol.step(state, a)
        except Exception as exc:   # the crash a record of the violation `exception` ends with
            crashed = dict(steps[-1].state, exception=f"{type(exc).__name__}: {exc}")
            steps.append(Step(i, action_to_json(a), action_label(a), crashed, protocol.is_fault(a), arrow[0], arrow[1]))
            break
        steps.append(Step(i, action_to_json(a), action_label(a), _describe(protocol, state), protocol.is_fault(a),
                          arrow[0], arrow[1]))
    from kverify.model.walk import EXCEPTION, EXCEPTION_STATEMENT

    inv = {i.name: i for i in protocol.invariants()}.get(violation.invariant)
    name = model_name or protocol.name
    beh = sorted(protocol.behaviours)
    cmd = "kverify replay counterexample.json"
    return Counterexample(
        invariant=violation.invariant,
        statement=inv.statement if inv else (EXCEPTION_STATEMENT if violation.invariant == EXCEPTION else ""),
        model=name,
        params=protocol.replay_params(),
        behaviours=beh,
        engine=engine,
        violation_step=violation.step_index,
        violation=violation.message,
        trace=steps,
        seed=seed,
        init_index=init_index,
        replay=cmd,
        participants=list(protocol.participants()),
        # the explorer's own graph properties are checked by no invariant object: they replay
        # through the explorer's replayer
        extra={"replayer": "kverify.model.explore:replay_graph_property"}
        if violation.invariant in ("deadlock", "recoverable") else {},
    )


def _describe(protocol, state) -> dict:
    """`protocol.describe(state)`, or what went wrong describing it (a report is still written)."""
    try:
        return protocol.describe(state)
    except Exception as exc:
        return {"describe-failed": f"{type(exc).__name__}: {exc}"}
