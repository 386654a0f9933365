"""An external assignor that refuses any problem in which a subscribed topic is missing (as some client
libraries do: an error answer, not a crash) and otherwise gives every partition of a topic to the topic's
first subscriber (by id): complete and exclusive, but neither balanced nor sticky.

Used by tests/test_certify_refusals.py: the refusal is the `answers` finding, and the balance and
stickiness defects are still reported from the problems it did answer."""
import json
import sys

for line in sys.stdin:
    problem = json.loads(line)
    topics = problem["topics"]
    missing = sorted({t for m in problem["members"] for t in m["topics"] if t not in topics})
    if missing:
        print(json.dumps({"id": problem["id"], "error": f"topic {missing[0]} has no metadata"}), flush=True)
        continue
    answer = {m["id"]: [] for m in problem["members"]}
    for t in sorted({t for m in problem["members"] for t in m["topics"]}):
        first = min(m["id"] for m in problem["members"] if t in m["topics"])
        answer[first].extend([t, p] for p in range(topics[t]))
    print(json.dumps({"id": problem["id"], "assignment": answer}), flush=True)
