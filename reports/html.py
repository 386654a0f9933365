"""counterexample.html: one self-contained page (inline CSS and SVG, no scripts, no network).

At the top, the violation in one sentence; then the sequence diagram of the messages between
members, coordinator, brokers and controller (faults in red); then the step table, with the
fields that changed at each step highlighted. Every user-supplied name is escaped.
"""
from __future__ import annotations

from kverify.reports.diff import changed_fields, compact, flatten
from kverify.reports.markdown import headline, lasso_text
from kverify.reports.record import Counterexample
from kverify.reports.svg import esc, sequence_diagram

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px;margin:0 0 8px} .headline{background:#fdecea;border-left:4px solid #c0392b;padding:10px 14px;margin:8px 0 16px}
.meta{color:#555;font-size:13px} .meta code{background:#f3f3f3;padding:1px 4px}
table.steps{border-collapse:collapse;width:100%;font-size:12px;margin-top:12px}
table.steps td,table.steps th{border:1px solid #ddd;padding:4px 6px;vertical-align:top;text-align:left}
tr.fault td{background:#fff6f5} tr.violation td{background:#fdecea}
tr.loop td:first-child{border-left:4px solid #2e86c1} .lasso{background:#eaf2f8;border-left:4px solid #2e86c1;padding:10px 14px}
span.changed{background:#fff3b0;border-radius:3px;padding:0 2px} .state{color:#444}
.diagram{overflow-x:auto;border:1px solid #eee;padding:6px;margin-top:8px}
"""


def to_html(cx: Counterexample) -> str:
    rows = []
    prev = None
    for s in cx.trace:
        changes = changed_fields(prev, s.state)
        cells = []
        for key, val in flatten(s.state).items():
            text = f"{esc(key)}: {esc(compact(val))}"
            cells.append(f'<span class="changed" title="was {esc(compact(changes[key][0]))}">{text}</span>'
                         if key in changes else text)
        loop = cx.loop_start is not None and s.index >= cx.loop_start
        cls = " ".join(c for c in ("fault" if s.fault else "", "violation" if s.index == cx.violation_step else "",
                                   "loop" if loop else "") if c)
        rows.append(f'<tr class="step-row {cls}"><td>{s.index}</td><td><code>{esc(s.label)}</code>'
                    f'{" ⚡" if s.fault else ""}{" ↻" if loop else ""}</td><td class="state">{"<br>".join(cells)}</td></tr>')
        prev = s.state
    seed = f" · seed <code>{esc(cx.seed)}</code>" if cx.seed is not None else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kverify: {esc(cx.invariant)} violated</title>
<style>{CSS}</style></head><body>
<h1>kverify counterexample: <code>{esc(cx.invariant)}</code></h1>
<p class="headline" id="headline">{esc(headline(cx))}</p>
<p class="meta">{esc(cx.statement)}</p>
<p class="meta">engine <code>{esc(cx.engine)}</code>{seed} · model <code>{esc(cx.model)}</code> · params
<code>{esc(compact(cx.params))}</code> · behaviours <code>{esc(", ".join(cx.behaviours) or "none")}</code></p>
<p class="meta">replay: <code>{esc(cx.replay)}</code></p>
<h2>Sequence</h2><div class="diagram">{sequence_diagram(cx.participants, cx.trace, cx.violation_step)}</div>
<h2>Steps</h2>
<table class="steps"><thead><tr><th>#</th><th>action</th><th>state after the step (changed fields highlighted)</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<p class="headline"><strong>Violation at step {cx.violation_step}:</strong> {esc(cx.violation)}</p>
{f'<p class="lasso" id="lasso"><strong>Lasso:</strong> {esc(lasso_text(cx))}</p>' if cx.loop_start is not None else ""}
</body></html>
"""
