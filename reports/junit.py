"""junit.xml for CI systems: one test case per check, so any CI shows kverify's verdicts natively.

Every test case carries its verdict as a property (`verdict` = PASS | INCONCLUSIVE | FAIL | KNOWN).
A FAIL is a `<failure>` with the one-line explanation and the report path; a crashed check adds its
traceback in `<system-err>`. An INCONCLUSIVE check is never a `<skipped>` (a skip reads as "not
applicable" and hides it): under `--strict` it is a `<failure type="inconclusive">`, otherwise a
passing test case whose `<system-out>` says what was covered and what cut it.
"""
from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from kverify.suite.verdicts import FAIL, INCONCLUSIVE


def _verdict(r) -> str:
    return "KNOWN" if r.verdict == FAIL and r.known else r.verdict


def to_junit(results, *, suite: str = "kverify", strict: bool = False) -> str:
    failing = [r for r in results if (r.verdict == FAIL and not r.known) or (strict and r.verdict == INCONCLUSIVE)]
    failures = len(failing)
    total = sum(r.seconds for r in results)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name={quoteattr(suite)} tests="{len(results)}" failures="{failures}" time="{total:.3f}">',
           f'<testsuite name={quoteattr(suite)} tests="{len(results)}" failures="{failures}" errors="0" '
           f'skipped="0" time="{total:.3f}">']
    for r in results:
        verdict = _verdict(r)
        out.append(f'<testcase classname={quoteattr(suite + "." + r.category)} name={quoteattr(r.name)} time="{r.seconds:.3f}">')
        out.append(f'<properties><property name="verdict" value={quoteattr(verdict)}/>'
                   + "".join(f'<property name={quoteattr("covered." + k)} value={quoteattr(str(v))}/>'
                             for k, v in sorted(r.covered.items()))
                   + (f'<property name="cut" value={quoteattr(r.cut)}/>' if r.cut else "") + "</properties>")
        if r.verdict == FAIL and not r.known:
            where = f" (report: {r.reports[0]})" if r.reports else ""
            kind = r.violations[0]["invariant"] if r.violations else "failure"
            out.append(f'<failure type={quoteattr(kind)} message={quoteattr("FAIL: " + r.summary + where)}>'
                       f'{escape(r.summary)}{escape(where)}' + "".join(f"\n{escape(p)}" for p in r.reports[1:])
                       + "</failure>")
        elif r.verdict == INCONCLUSIVE and strict:
            out.append(f'<failure type="inconclusive" message={quoteattr("INCONCLUSIVE (--strict): " + r.summary)}>'
                       f'{escape(r.summary)}</failure>')
        text = {"KNOWN": "known violation (baseline): ", INCONCLUSIVE: "INCONCLUSIVE: "}.get(verdict, "") + r.summary
        out.append(f"<system-out>{escape(text)}</system-out>")
        if r.detail:
            out.append(f"<system-err>{escape(r.detail)}</system-err>")
        out.append("</testcase>")
    out += ["</testsuite>", "</testsuites>", ""]
    return "\n".join(out)
