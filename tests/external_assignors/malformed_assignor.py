"""An external assignor that writes a line that is not JSON once a topic has 4+ partitions.

Used by tests/test_certify_external.py: a malformed line is a finding with its input."""
import json
import sys

for line in sys.stdin:
    problem = json.loads(line)
    if any(n >= 4 for n in problem["topics"].values()):
        print("assignment: (not json)", flush=True)
        continue
    answer = {m["id"]: [] for m in problem["members"]}
    members = sorted(m["id"] for m in problem["members"])
    for t in sorted(problem["topics"]):
        for p in range(problem["topics"][t]):
            subs = [m["id"] for m in problem["members"] if t in m["topics"]]
            if subs:
                answer[sorted(subs)[p % len(subs)]].append([t, p])
    print(json.dumps({"id": problem["id"], "assignment": answer}), flush=True)
