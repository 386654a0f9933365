"""An external assignor that never answers a problem in which some topic has no partitions
(it waits forever), and answers everything else (round-robin over sorted member ids).

Used by tests/test_certify_external.py: a hang past the timeout is a finding, not a stuck check."""
import json
import sys
import time

for line in sys.stdin:
    problem = json.loads(line)
    if any(n == 0 for n in problem["topics"].values()):
        while True:
            time.sleep(60)
    members = sorted(m["id"] for m in problem["members"])
    answer = {m["id"]: [] for m in problem["members"]}
    i = 0
    for t in sorted(problem["topics"]):
        for p in range(problem["topics"][t]):
            subs = [m for m in members if t in next(x["topics"] for x in problem["members"] if x["id"] == m)]
            if subs:
                answer[subs[i % len(subs)]].append([t, p])
                i += 1
    print(json.dumps({"id": problem["id"], "assignment": answer}), flush=True)
