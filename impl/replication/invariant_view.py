"""Maps one partition of a `Cluster` onto the view the shared replication invariants read
(`kverify.invariants.replication.ReplView` / `EpochView`), so the reference implementation is
judged by the very predicates the abstract model is judged by.

Conventions of the mapping: replica i is the i-th broker of the cluster in id order (brokers that
hold no replica of the partition appear with an empty log); a record is (leader epoch, value); the
committed prefix is the longest prefix any leader exposed below its HW (`Cluster.committed`); a
replica's epochs are the last ones it applied (kept across restarts, as the invariants assume); the
ELR is always empty (this ZK-era model has no KIP-966).
"""
from __future__ import annotations

from kverify.impl.replication.replica import LEADER


def _mask(ids, index) -> int:
    m = 0
    for b in ids:
        i = index.get(b)
        if i is not None:
            m |= 1 << i
    return m


def _replica_view(c, br, tp, index):
    from kverify.invariants.replication import ReplicaView
    r = br.replicas.get(tp)
    if r is None:
        return ReplicaView(br.alive, (), 0, -1, -1, br.ctrl_epoch_applied, -1, 0, 0)
    leads = br.alive and r.role == LEADER
    log = tuple((e, v) for _off, e, v in r.log.records)
    return ReplicaView(
        br.alive, log, r.hw, r.epochs_applied[0], r.epochs_applied[1], br.ctrl_epoch_applied,
        index[br.id] if leads else (index.get(r.leader, -1) if br.alive else -1),
        _mask(r.isr, index) if leads else 0,
        _mask(r.maximal_isr(c.settings), index) if leads else 0)


def repl_view(c, tp, cached: bool = False):
    """`cached`: reuse each broker's part from `Broker.cache` (for clusters that are only written to
    through their own methods, as model checkers' states are)."""
    from kverify.invariants.replication import ControllerView, ReplView
    order = sorted(c.brokers)
    index = {b: i for i, b in enumerate(order)}
    reps = []
    for b in order:
        br = c.brokers[b]
        if cached:
            key = ("view", tp)
            v = br.cache.get(key)
            if v is None:
                v = br.cache[key] = _replica_view(c, br, tp, index)
            reps.append(v)
        else:
            reps.append(_replica_view(c, br, tp, index))
    st = c.store.states.get(tp)
    if st is None:
        ctrl = ControllerView(-1, -1, 0, 0, -1, c.store.controller_epoch)
    else:
        ctrl = ControllerView(index.get(st.leader, -1), st.leader_epoch, _mask(st.isr, index), 0, st.version,
                              c.store.controller_epoch)
    acked = tuple((off, (epoch, value)) for (atp, off, value), epoch in zip(c.acked, c.acked_epochs) if atp == tp)
    rf = len(c.store.assignments.get(tp, ())) or 1
    return ReplView(tuple(reps), ctrl, acked, tuple(c.committed.get(tp, ())), c.settings.effective_min_isr(rf))


def epoch_view(c, tp):
    from kverify.invariants.replication import EpochView
    reps = []
    for b in sorted(c.brokers):
        br = c.brokers[b]
        r = br.replicas.get(tp)
        le, pe = r.epochs_applied if r is not None else (-1, -1)
        reps.append((le, pe, br.ctrl_epoch_applied))
    st = c.store.states.get(tp)
    ctrl = (st.leader_epoch, st.version, c.store.controller_epoch) if st is not None else (-1, -1, c.store.controller_epoch)
    return EpochView(tuple(reps), ctrl)


def violations(c, tp, prev_epochs=None, action=None) -> list[tuple[str, str]]:
    """(invariant name, message) for every shared replication invariant the partition breaks now;
    the step invariant I-EPOCH is checked when the previous EpochView is given."""
    from kverify.invariants import replication as I
    v = repl_view(c, tp)
    out = []
    for inv in I.ALL:
        if inv.kind == "step":
            if prev_epochs is not None:
                msg = inv.check(prev_epochs, action, epoch_view(c, tp))
                if msg:
                    out.append((inv.name, msg))
            continue
        msg = inv.check(v)
        if msg:
            out.append((inv.name, msg))
    return out
