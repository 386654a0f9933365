"""counterexample.md: the record as a pull-request comment."""
from __future__ import annotations

from kverify.reports.diff import changed_fields, compact
from kverify.reports.record import Counterexample


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def headline(cx: Counterexample) -> str:
    """The one sentence at the top of every rendering."""
    where = f"after step {cx.violation_step}" if cx.violation_step else "in the initial state"
    beh = f" with {', '.join(cx.behaviours)} switched on" if cx.behaviours else ""
    return f"`{cx.invariant}` breaks {where} of a {len(cx.trace) - 1}-step trace of `{cx.model}`{beh}: {cx.violation}"


def lasso_text(cx: Counterexample) -> str:
    """One sentence saying where a liveness counterexample's loop is (↻ marks its steps)."""
    last = len(cx.trace) - 1
    if cx.loop_start >= last:
        return (f"steps 0-{cx.loop_start} are the prefix; then no fair move is enabled in the state of step "
                f"{cx.loop_start}: the run stands still there forever (↻) without the property becoming true")
    return (f"steps 0-{cx.loop_start} are the prefix; the loop ↻ runs steps {cx.loop_start + 1}-{last} and returns "
            f"to the state of step {cx.loop_start}, forever, without the property becoming true")


def to_markdown(cx: Counterexample) -> str:
    lines = [f"### kverify: `{cx.invariant}` violated", "", headline(cx), "",
             f"> {cx.statement}" if cx.statement else "", "",
             f"- engine: `{cx.engine}`" + (f", seed `{cx.seed}`" if cx.seed is not None else ""),
             f"- model: `{cx.model}` params `{compact(cx.params)}`",
             f"- behaviours: {', '.join(f'`{b}`' for b in cx.behaviours) or 'none'}",
             f"- replay: `{cx.replay}`", "",
             "| step | action | changed |", "|---:|---|---|"]
    prev = None
    for s in cx.trace:
        changes = changed_fields(prev, s.state)
        text = "; ".join(f"{k}: {compact(o)} → **{compact(n)}**" for k, (o, n) in changes.items()) or ""
        mark = " ⚡" if s.fault else ""
        bad = " ❌" if s.index == cx.violation_step else ""
        if cx.loop_start is not None and s.index >= cx.loop_start:
            bad += " ↻"                                       # a step of the lasso's loop
        lines.append(f"| {s.index}{bad} | `{_cell(s.label)}`{mark} | {_cell(text)} |")
        prev = s.state
    lines += ["", f"**Violation:** {_cell(cx.violation)}", ""]
    if cx.loop_start is not None:
        lines += [f"**Lasso:** {lasso_text(cx)}", ""]
    return "\n".join(lines)
