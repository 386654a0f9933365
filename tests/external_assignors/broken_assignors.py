"""Deliberately broken assignors (Python targets, `module:attribute`) that certification must catch.

Each one carries one classic bug; tests/test_certify_broken.py checks that the property that bug
breaks fails (with a shrunk counterexample) while the properties it does not touch hold. (The
sticky variants that mishandle generations are the reference's historical behaviours
kafka-12984-double-claim and kafka-14639-stale-owner-ignored, tested there too.)"""


def _subscribers(problem, topic):
    return sorted(m["id"] for m in problem["members"] if topic in m["topics"])


class OffByOneRange:
    """Range with `i <= extra` instead of `i < extra`: one member too many takes an extra partition."""

    claims = ["complete", "exclusive", "subscribed-only", "no-ghosts", "deterministic", "robust"]

    def assign(self, problem):
        out = {m["id"]: [] for m in problem["members"]}
        for topic, n in sorted(problem["topics"].items()):
            subs = _subscribers(problem, topic)
            if not subs or n == 0:
                continue
            per, extra = divmod(n, len(subs))
            start = 0
            for i, mid in enumerate(subs):
                length = per + (1 if i <= extra else 0)
                out[mid].extend([topic, p] for p in range(start, start + length))
                start += length
        return {"id": problem["id"], "assignment": out}


class AssignsTwice:
    """Round-robin that also hands partition 0 of every topic to the last member, subscribed or not."""

    claims = ["complete", "subscribed-only", "no-ghosts", "deterministic", "exclusive"]

    def assign(self, problem):
        members = sorted(m["id"] for m in problem["members"])
        out = {m["id"]: [] for m in problem["members"]}
        i = 0
        for t in sorted(problem["topics"]):
            subs = _subscribers(problem, t)
            for p in range(problem["topics"][t]):
                if subs:
                    out[subs[i % len(subs)]].append([t, p])
                    i += 1
            if subs and problem["topics"][t] > 0 and members[-1] != subs[0]:
                out[members[-1]].append([t, 0])
        return {"id": problem["id"], "assignment": out}


class Raises:
    """Crashes on any problem with an owned partition (a robustness bug)."""

    claims = ["robust"]

    def assign(self, problem):
        if any(m.get("owned") for m in problem["members"]):
            raise KeyError("owned")
        return {"id": problem["id"], "assignment": {m["id"]: [] for m in problem["members"]}}
