"""Write a counterexample record to a folder in all its renderings, with its replay command."""
from __future__ import annotations

import hashlib
import os
import re

from kverify.reports.html import to_html
from kverify.reports.markdown import to_markdown
from kverify.reports.record import Counterexample


def signature(cx: Counterexample) -> str:
    """Stable signature of a minimal trace: invariant, model, behaviours and the action sequence.
    Baselines (`kverify verify --baseline`) recognise known violations by it."""
    text = "\n".join([cx.invariant, cx.model, ",".join(sorted(cx.behaviours))] + [s.label for s in cx.trace[1:]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80] or "report"


def write_report(cx: Counterexample, out_dir: str) -> str:
    """Write counterexample.{json,md,html} into `out_dir`; returns the JSON path. The record's
    `replay` field is set to the exact command that replays this file."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "counterexample.json")
    cx.replay = f"kverify replay {path}"
    cx.extra.setdefault("signature", signature(cx))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(cx.dumps() + "\n")
    with open(os.path.join(out_dir, "counterexample.md"), "w", encoding="utf-8") as fh:
        fh.write(to_markdown(cx))
    with open(os.path.join(out_dir, "counterexample.html"), "w", encoding="utf-8") as fh:
        fh.write(to_html(cx))
    return path
