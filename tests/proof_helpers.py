"""Shared by the Z3 cross-check tests: the explicit model's reachable states with their successors."""
from collections import deque


def reachable(model, limit: int):
    """BFS over raw states (no symmetry): (state, [(action, successor)]) for up to `limit` states."""
    init = model.init_states()
    seen, queue, out = set(init), deque(init), []
    while queue and len(out) < limit:
        s = queue.popleft()
        succ = []
        for a in model.actions(s):
            t = model.step(s, a)
            succ.append((a, t))
            if t not in seen:
                seen.add(t)
                queue.append(t)
        out.append((s, succ))
    return out
