"""An external KIP-848 server-side assignor: reads consumer-protocol problems (members carry `assigned`, the
current target assignment) and deals every subscribed partition round-robin over the sorted subscribers,
ignoring `assigned`: complete and exclusive, but not sticky. It refuses a classic-protocol problem (one with `owned`).

Used by tests/test_certify_consumer.py."""
import json
import sys

for line in sys.stdin:
    problem = json.loads(line)
    if problem.get("protocol") != "consumer" or any("owned" in m for m in problem["members"]):
        print(json.dumps({"id": problem.get("id"), "error": "not a consumer-protocol problem"}), flush=True)
        continue
    answer = {m["id"]: [] for m in problem["members"]}
    turn = 0
    for t in sorted({t for m in problem["members"] for t in m["topics"]}):
        subs = sorted(m["id"] for m in problem["members"] if t in m["topics"])
        for p in range(problem["topics"].get(t, 0)):
            answer[subs[turn % len(subs)]].append([t, p])
            turn += 1
    print(json.dumps({"id": problem["id"], "assignment": answer}), flush=True)
