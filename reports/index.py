"""index.html of a verification run: every check with its verdict, links to each report, and
plots where a picture says more (states per depth, coverage per action, steps per second).

Three colours for the three verdicts (green PASS, amber INCONCLUSIVE, red FAIL) and grey for a
failure the baseline knows; an INCONCLUSIVE row says what cut the check short."""
from __future__ import annotations

import os

from kverify.reports.html import CSS
from kverify.reports.svg import bar_chart, esc

COLOURS = {"PASS": "#1e8449", "INCONCLUSIVE": "#b9770e", "FAIL": "#c0392b", "KNOWN": "#7f8c8d"}


def to_index(results, *, title: str, meta: dict, out_dir: str) -> str:
    rows, plots = [], []
    for r in results:
        verdict = "KNOWN" if r.verdict == "FAIL" and r.known else r.verdict
        color = COLOURS[verdict]
        cut = f'<br><em>cut by: {esc(r.cut)}</em>' if r.cut else ""
        links = " ".join(
            f'<a href="{esc(os.path.relpath(p, out_dir).replace(".json", ".html"))}">{esc(os.path.basename(os.path.dirname(p)) or "report")}</a>'
            for p in r.reports)
        rows.append(f'<tr class="check verdict-{verdict.lower()}"><td>{esc(r.name)}</td><td>{esc(r.category)}</td>'
                    f'<td style="color:{color};font-weight:bold">{verdict}</td><td>{r.seconds:.1f}s</td>'
                    f'<td>{esc(r.summary)}{cut}</td><td>{links}</td></tr>')
        for key, label in (("states_per_depth", "states explored per depth"),
                           ("action_coverage", "coverage per action (times fired)"),
                           ("steps_per_second", "steps per second")):
            data = r.figures.get(key)
            if data:
                plots.append(bar_chart(f"{r.name}: {label}", {str(k): v for k, v in data.items()}))
    meta_html = " · ".join(f"{esc(k)} <code>{esc(v)}</code>" for k, v in meta.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title><style>{CSS}
table.checks{{border-collapse:collapse;width:100%;font-size:13px}} table.checks td,table.checks th{{border:1px solid #ddd;padding:4px 6px;text-align:left}}
</style></head><body><h1>{esc(title)}</h1><p class="meta">{meta_html}</p>
<table class="checks"><thead><tr><th>check</th><th>kind</th><th>verdict</th><th>time</th><th>summary</th><th>reports</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<h2>Figures</h2>{"".join(f'<div>{p}</div>' for p in plots) or "<p>none</p>"}
</body></html>
"""
