"""SVG drawings for the HTML reports: the sequence diagram of a trace, and simple bar charts.

Generated as text (no plotting library, no network): the page must open anywhere. Every piece of
user-supplied text goes through `esc`.
"""
from __future__ import annotations

from html import escape


def esc(text) -> str:
    return escape(str(text), quote=True)


SYSTEM = "system"


def lifelines_of(participants, steps) -> list[str]:
    names = [p for p in participants]
    for s in steps:
        for p in (s.src, s.dst):
            if p is not None and p not in names:
                names.append(p)
    if any(s.src is None for s in steps[1:]) and SYSTEM not in names:
        names.append(SYSTEM)
    return names or [SYSTEM]


def sequence_diagram(participants, steps, violation_step: int) -> str:
    """Lifelines left to right; one row per step (arrow, self-box, or fault marker)."""
    lanes = lifelines_of(participants, steps)
    col, top, row, left = 170, 50, 34, 34
    width = left + col * len(lanes) + 20
    height = top + row * max(1, len(steps) - 1) + 40
    x = {name: left + col * i + col // 2 for i, name in enumerate(lanes)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="sequence diagram">',
           '<defs><marker id="arr" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker>'
           '<marker id="arrf" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#c0392b"/></marker></defs>']
    for name in lanes:
        cx = x[name]
        out.append(f'<g class="lifeline" data-name="{esc(name)}"><rect x="{cx - 75}" y="8" width="150" height="26" rx="4" '
                   f'fill="#eef3fb" stroke="#5b7db1"/><text x="{cx}" y="26" text-anchor="middle" font-size="12">'
                   f'{esc(name)}</text><line x1="{cx}" y1="34" x2="{cx}" y2="{height - 10}" stroke="#9aa9bf" '
                   f'stroke-dasharray="4 3"/></g>')
    for i, s in enumerate(steps[1:], 1):
        y = top + row * (i - 1) + 10
        color = "#c0392b" if s.fault else "#333"
        bad = ' class="violation"' if s.index == violation_step else ""
        src = s.src if s.src is not None else SYSTEM
        dst = s.dst if s.dst is not None else src
        limit = 26 if src == dst else 40
        label = esc(s.label if len(s.label) <= limit else s.label[:limit - 3] + "...")
        out.append(f'<g class="msg" data-step="{s.index}"{bad}>')
        if src == dst:
            cx = x[src]
            out.append(f'<rect x="{cx - 80}" y="{y - 12}" width="160" height="20" rx="3" fill="{"#fdecea" if s.fault else "#fff"}" '
                       f'stroke="{color}"/><text x="{cx}" y="{y + 2}" text-anchor="middle" font-size="10" fill="{color}">'
                       f'{s.index}. {label}{" ⚡" if s.fault else ""}</text>')
        else:
            x1, x2 = x[src], x[dst]
            dash = ' stroke-dasharray="6 3"' if s.fault else ""
            mid = (x1 + x2) / 2
            out.append(f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="{color}"{dash} '
                       f'marker-end="url(#{"arrf" if s.fault else "arr"})"/>'
                       f'<text x="{mid}" y="{y - 4}" text-anchor="middle" font-size="10" fill="{color}">'
                       f'{s.index}. {label}{" ⚡" if s.fault else ""}</text>')
        if s.index == violation_step:
            out.append(f'<text x="6" y="{y + 4}" font-size="14" fill="#c0392b">✖</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def bar_chart(title: str, data: dict, *, width: int = 520, bar_height: int = 16) -> str:
    """Horizontal bars, one per key (keys are user-visible labels: escaped)."""
    if not data:
        return ""
    items = list(data.items())
    peak = max(float(v) for _, v in items) or 1.0
    height = 30 + bar_height * len(items) + 6 * len(items)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}">',
           f'<text x="4" y="16" font-size="13" font-weight="bold">{esc(title)}</text>']
    for i, (k, v) in enumerate(items):
        y = 26 + i * (bar_height + 6)
        w = max(1, int((width - 230) * float(v) / peak))
        out.append(f'<text x="4" y="{y + 12}" font-size="11">{esc(k)}</text>'
                   f'<rect x="150" y="{y}" width="{w}" height="{bar_height}" fill="#5b7db1"/>'
                   f'<text x="{156 + w}" y="{y + 12}" font-size="11">{esc(v)}</text>')
    out.append("</svg>")
    return "".join(out)
