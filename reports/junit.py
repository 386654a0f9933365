"""junit.xml for CI systems: one test case per check; a failure carries the one-line explanation
and the report path, so any CI shows kverify's verdicts natively."""
from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr


def to_junit(results, *, suite: str = "kverify") -> str:
    failures = sum(1 for r in results if not r.passed and not r.known)
    total = sum(r.seconds for r in results)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name={quoteattr(suite)} tests="{len(results)}" failures="{failures}" time="{total:.3f}">',
           f'<testsuite name={quoteattr(suite)} tests="{len(results)}" failures="{failures}" errors="0" time="{total:.3f}">']
    for r in results:
        out.append(f'<testcase classname={quoteattr(suite + "." + r.category)} name={quoteattr(r.name)} time="{r.seconds:.3f}">')
        if not r.passed and not r.known:
            where = f" (report: {r.reports[0]})" if r.reports else ""
            out.append(f'<failure message={quoteattr(r.summary + where)}>{escape(r.summary)}{escape(where)}'
                       + "".join(f"\n{escape(p)}" for p in r.reports[1:]) + "</failure>")
        elif r.known:
            out.append(f"<system-out>{escape('known violation (baseline): ' + r.summary)}</system-out>")
        else:
            out.append(f"<system-out>{escape(r.summary)}</system-out>")
        out.append("</testcase>")
    out += ["</testsuite>", "</testsuites>", ""]
    return "\n".join(out)
