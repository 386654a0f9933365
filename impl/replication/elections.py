"""The controller's leader-election rules as pure functions of (AR, ISR, live brokers).

Separate from the controller's bookkeeping so each rule of the reference (replication.md facts 8, 9,
13, 14, 15) can be read and tested on its own. Each returns (leader, new ISR) or None when no
leader can be chosen; `live` is the controller's view (alive, registered, not shutting down).
"""
from __future__ import annotations


def offline(ar, isr, live, unclean: bool):
    """Clean election: first AR replica that is live and in the ISR; new ISR = ISR filtered to live.
    Unclean fallback (when enabled): first live AR replica, ISR = [it]."""
    for r in ar:
        if r in live and r in isr:
            return r, tuple(x for x in isr if x in live)
    if unclean:
        for r in ar:
            if r in live:
                return r, (r,)
    return None


def controlled_shutdown(ar, isr, live, shutting_down):
    """First AR replica that is live, in the ISR and not shutting down; ISR minus shutting-down brokers."""
    for r in ar:
        if r in live and r in isr and r not in shutting_down:
            return r, tuple(x for x in isr if x not in shutting_down)
    return None


def preferred(ar, isr, live, outside_isr: bool = False):
    """AR[0] if it is live and in the ISR (with `outside_isr`, the historical switch: even if not in it)."""
    if not ar:
        return None
    head = ar[0]
    if head not in live:
        return None
    if head in isr:
        return head, tuple(isr)
    if outside_isr:
        return head, (head,) + tuple(x for x in isr if x != head)
    return None


def reassignment(target, isr, live):
    """First replica of the target list that is live and in the ISR; no unclean fallback."""
    for r in target:
        if r in live and r in isr:
            return r
    return None
