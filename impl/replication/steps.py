"""The cluster's explicit steps as data: `enabled_steps(cluster)` lists every step that can be taken
now as a tuple `(name, *json primitives)` in a deterministic order, and `apply(cluster, step)` takes
one. This is what a model checker or the seeded walker interleaves (Protocol.actions / step).
"""
from __future__ import annotations

from kverify.impl.replication.replica import FOLLOWER, LEADER


def enabled_steps(c, values=("v",), acks=(-1,), advance_ms: int | None = None, crashes: bool = True,
                  lossy: bool = False, controller_steps: bool = True) -> list[tuple]:
    out: list[tuple] = []
    alive = [b for b in sorted(c.brokers) if c.brokers[b].alive]
    for b in alive:
        for tp, r in sorted(c.brokers[b].replicas.items()):
            if r.role == LEADER:
                for v in values:
                    for a in acks:
                        out.append(("produce", tp[0], tp[1], v, a, b))
                out.append(("isr_check", b, tp[0], tp[1]))
                out.append(("consume", tp[0], tp[1], b))
            elif r.role == FOLLOWER and r.leader >= 0:
                out.append(("send_fetch", b, tp[0], tp[1]))
    for mid in sorted(c.net):
        out.append(("deliver", mid))
        out.append(("drop", mid))
    if advance_ms:
        out.append(("advance", advance_ms))
    for b in sorted(c.brokers):
        if c.brokers[b].alive:
            out.append(("flush", b))
            if crashes:
                out.append(("crash", b, False))
                if lossy:
                    out.append(("crash", b, True))
        else:
            out.append(("restart", b))
    if controller_steps:
        ctrl = c.active_controller()
        out.extend(controller_upkeep(c, ctrl, alive))
        if ctrl is not None and ctrl.active:
            for tp in sorted(ctrl.assignments):
                out.append(("elect_preferred", tp[0], tp[1]))
                if tp in ctrl.reassignments or tp in c.store.reassignments:
                    out.append(("reassignment_step", tp[0], tp[1]))
    return out


def controller_upkeep(c, ctrl, alive) -> list:
    """The controller steps enabled by the cluster's state alone (one definition, used by this module
    and by replication-world): elect a controller when none is registered, and let the active one
    process broker registrations it has not seen yet."""
    if ctrl is None or not ctrl.active:
        if c.store.controller_id < 0:
            return [("elect_controller", b) for b in alive if b in c.store.brokers]
        return []
    return [("handle_broker_changes",)] if dict(ctrl.live) != c.store.brokers else []


def apply(c, step: tuple) -> None:
    name, args = step[0], step[1:]
    if name == "produce":
        topic, part, value, acks, broker = args
        c.produce((topic, part), value, acks=acks, broker=broker)
    elif name == "send_fetch":
        c.send_fetch(args[0], (args[1], args[2]))
    elif name == "isr_check":
        c.isr_check(args[0], (args[1], args[2]))
    elif name == "deliver":
        c.deliver(args[0])
    elif name == "drop":
        c.drop(args[0])
    elif name == "advance":
        c.advance(args[0])
    elif name == "crash":
        c.crash(args[0], lossy=args[1])
    elif name == "restart":
        c.restart(args[0])
    elif name == "elect_controller":
        c.elect_controller(args[0])
    elif name == "handle_broker_changes":
        c.handle_broker_changes()
    elif name == "elect_preferred":
        c.elect_preferred((args[0], args[1]))
    elif name == "reassignment_step":
        c.reassignment_step((args[0], args[1]))
    elif name == "flush":
        c.flush(args[0])
    elif name == "consume":
        c.consume((args[0], args[1]), *args[2:])
    else:
        raise ValueError(f"unknown replication step {name!r}")
