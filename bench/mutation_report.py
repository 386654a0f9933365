"""The judged mutants of bench/mutation.py as data: rows saved after each mutant, the kill rate and its columns
(overall and per component of impl/), the carried-over kills of a re-judged sample, and the survivors as text or
Markdown. Kept apart from the runner so a saved run can be reported (and tested) without cosmic-ray."""
from __future__ import annotations

import json
import os


KILLS = ("killed", "timeout")


def carried_kill(previous: list, d: dict):
    """The earlier row that killed this very mutant (same place, same text before and after), else None: adding a
    property can only turn a PASS into a FAIL, so a kill stands; anything else is judged again."""
    for r in previous:
        if r["column"] in KILLS and mutant_key(r) == mutant_key(d) and (r["line"], r["mutant"]) == (
                d["line"], d["mutant"]):
            return r
    return None


def mutant_key(d: dict) -> str:
    """FILE:LINE:OPERATOR:OCCURRENCE, as --mutants takes it."""
    return f"{d['file']}:{d['lineno']}:{d['operator']}:{d['occurrence']}"


def save_rows(path: str, args, rows: list) -> None:
    """The judged mutants so far (written after each one, atomically): the input of --previous and --markdown."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump({"profile": args.profile, "seed": args.seed, "sample": args.sample, "rows": rows}, fh, indent=1)
    os.replace(tmp, path)


# not-protocol: a mutant of code in impl/ that is no protocol logic (a test-side oracle or double, a dead import
# fallback; bench/coverage.py EXCUSED names the same functions), listed with kind "not-protocol" in
# bench/mutation_equivalents.json: out of the denominator like an equivalent, but counted and printed on its own
COLUMNS = ("killed", "timeout", "survived", "unreached", "equivalent", "not-protocol", "wrongly-listed", "incompetent",
           "error")


def figures(rows: list) -> dict:
    """Counts per column and the kill rate: (killed + timeout + wrongly listed) over all but equivalent, not-protocol,
    incompetent (not valid Python) and error (an unreached mutant is a survivor: no check can see it)."""
    n = {c: sum(r["column"] == c for r in rows) for c in COLUMNS}
    judged = sum(n[c] for c in ("killed", "timeout", "survived", "unreached", "wrongly-listed"))
    dead = n["killed"] + n["timeout"] + n["wrongly-listed"]
    return dict(n, sample=len(rows), judged=judged, dead=dead, rate=100.0 * dead / judged if judged else 0.0)


def component(r: dict) -> str:
    parts = r["file"].split("/")
    return parts[1] if len(parts) > 2 else parts[-1]


def report(rows: list, args, seconds: float) -> None:
    f = figures(rows)
    print(f"profile {args.profile}, sample {len(rows)} (seed {args.seed}): killed {f['killed']}, "
          f"timeout {f['timeout']}, survived {f['survived']}, unreached {f['unreached']}, "
          f"equivalent {f['equivalent']}, not-protocol {f['not-protocol']}, incompetent {f['incompetent']}, "
          f"error {f['error']}"
          + (f", wrongly listed equivalent {f['wrongly-listed']}" if f["wrongly-listed"] else ""))
    print(f"kill rate {f['dead']}/{f['judged']} = {f['rate']:.1f}% (killed + timeout over all but equivalent, "
          f"not-protocol, incompetent and error; {seconds:.0f} s)")
    for comp in sorted({component(r) for r in rows}):
        c = figures([r for r in rows if component(r) == comp])
        print(f"  impl/{comp + '/':<14} {c['dead']:>3}/{c['judged']:<3} killed  ({c['timeout']} timeout, "
              f"{c['survived']} survived, {c['unreached']} unreached, {c['equivalent']} equivalent)")
    for col in ("survived", "unreached", "wrongly-listed", "incompetent", "error"):
        for r in (r for r in rows if r["column"] == col):
            print(f"  {col}: {mutant_key(r)}  `{r['line']}` -> `{r['mutant']}`  {r['detail']}")
    for r in (r for r in rows if r["column"] in ("equivalent", "not-protocol")):
        print(f"  {r['column']}: {r['file']}:{r['lineno']} {r['operator']}: `{r['line']}` -> `{r['mutant']}`: "
              f"{r['detail']}")


def markdown(rows: list, args) -> str:
    """The figures and every mutant not killed, as a Markdown page (the survivors list the other engineers read)."""
    f = figures(rows)
    out = [f"# Mutation survivors: profile {args.profile}, seed {args.seed}, sample {len(rows)}", "",
           f"killed {f['killed']} + timeout {f['timeout']} of {f['judged']} non-equivalent = **{f['rate']:.1f}%**; "
           f"survived {f['survived']}, unreached {f['unreached']}, equivalent {f['equivalent']}, "
           f"not-protocol {f['not-protocol']}, incompetent {f['incompetent']}, error {f['error']}",
           "", "| mutant (file:line:operator:occurrence) | column | before | after | checks that executed it |",
           "|---|---|---|---|---|"]
    for r in rows:
        if r["column"] in KILLS:
            continue
        detail = r["detail"]
        if r["column"] == "survived" and detail.startswith("ran "):
            detail = detail.split(": ", 1)[-1]
        cell = lambda t: str(t).replace("|", "\\|")
        out.append(f"| `{mutant_key(r)}` | {r['column']} | `{cell(r['line'])}` | `{cell(r['mutant'])}` | {cell(detail)} |")
    return "\n".join(out) + "\n"
