"""End to end: the HTML counterexample page renders in headless Chromium (Debian's `chromium`).

The page itself has no scripts; the test appends one to a copy that measures what the browser
laid out (lifelines and step rows with a real size) and writes the counts into the DOM, which
`--dump-dom` returns. A screenshot is saved to tests/artifacts/ as a test artifact.
"""
import os
import re
import shutil
import subprocess

import pytest

from test_reports import _violating_record
from kverify.reports.writer import write_report

ARTIFACTS = os.path.join(os.path.dirname(__file__), "artifacts")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

PROBE = """<script>
const vis = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
const out = document.createElement('pre'); out.id = 'probe';
out.textContent = 'lifelines=' + [...document.querySelectorAll('svg.sequence g.lifeline')].filter(vis).length
  + ' rows=' + [...document.querySelectorAll('table.steps tr.step-row')].filter(vis).length
  + ' scripts=' + document.querySelectorAll('script').length
  + ' alerts=' + (window.__alerted ? 1 : 0);
document.body.appendChild(out);
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (Debian package `chromium`) is not installed; "
                                              ".ci/run installs it so CI runs this test")
def test_html_report_renders_in_chromium(tmp_path):
    cx = _violating_record()
    write_report(cx, str(tmp_path))
    page = (tmp_path / "counterexample.html").read_text()
    # Any alert() reaching the page would set this flag (the member id is '<script>alert(1)</script>').
    probe_page = page.replace("<head>", "<head><script>window.alert = () => { window.__alerted = true; };</script>", 1)
    probe_page = probe_page.replace("</body>", PROBE + "</body>")
    probe = tmp_path / "probe.html"
    probe.write_text(probe_page)
    profile = tmp_path / "profile"
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=2000",
                          "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"lifelines=(\d+) rows=(\d+) scripts=(\d+) alerts=(\d+)", dom)
    assert m, f"probe did not run; Chromium returned: {dom[:300]!r}"
    lifelines, rows, scripts, alerts = map(int, m.groups())
    assert lifelines == 2                      # the member and the coordinator
    assert rows == len(cx.trace)
    assert scripts == 2 and alerts == 0        # only the test's own scripts; the member id stayed text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "counterexample.png")
    if os.path.exists(shot):
        os.remove(shot)
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1200,900",
                    f"--screenshot={shot}", (tmp_path / "counterexample.html").as_uri()],
                   capture_output=True, timeout=120)
    assert os.path.getsize(shot) > 10_000
