"""An external assignor that answers like range until a problem has 3+ members, then crashes.

Used by tests/test_certify_external.py: a crash is a finding with its input, not a traceback."""
import json
import sys

for line in sys.stdin:
    problem = json.loads(line)
    if len(problem["members"]) >= 3:
        raise SystemExit("crashing_assignor: cannot handle 3 members")
    answer = {m["id"]: [] for m in problem["members"]}
    for t in sorted({t for m in problem["members"] for t in m["topics"]}):
        subs = sorted(m["id"] for m in problem["members"] if t in m["topics"])
        for p in range(problem["topics"].get(t, 0)):
            answer[subs[p % len(subs)]].append([t, p])
    print(json.dumps({"id": problem["id"], "assignment": answer}), flush=True)
