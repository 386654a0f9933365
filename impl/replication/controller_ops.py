"""The controller's decisions: failover, broker failure/startup, elections, AlterPartition,
controlled shutdown, topic creation and partition reassignment.

A mixin of `Cluster` (it needs the store, the network and the brokers). Every decision is written to
the store with a conditional write first and only then announced with LeaderAndIsr, so a controller
crash between any two calls leaves a state the next controller can read and finish.
"""
from __future__ import annotations

from kverify.impl.replication import elections
from kverify.impl.replication import messages as M
from kverify.impl.replication.controller import (BADVERSION, CONTROLLER_MOVED, OK, Controller)
from kverify.impl.replication.placement import assign_replicas


class ControllerError(Exception):
    """A controller step that cannot be taken in the current state (bad input to the model)."""


class ControllerOps:
    # ------------------------------------------------------------------ helpers
    def _controller(self, controller=None) -> Controller:
        cid = self.store.controller_id if controller is None else controller
        ctrl = self.controllers.get(cid)
        if ctrl is None:
            raise ControllerError(f"broker {cid} is not running a controller")
        if not ctrl.active:
            raise ControllerError(f"controller on broker {cid} has resigned")
        return ctrl

    def _announce(self, ctrl: Controller, tp, state, targets, replicas=None) -> None:
        replicas = ctrl.assignments[tp] if replicas is None else replicas
        body = M.LeaderAndIsr(ctrl.broker, ctrl.epoch, tp, state.leader, state.leader_epoch, state.isr,
                              state.version, tuple(replicas))
        for b in sorted(set(targets)):
            self._send(ctrl.broker, b, body)

    def _write(self, ctrl: Controller, tp, decide):
        """Conditional partition-state write; on BADVERSION re-read and decide again (bounded)."""
        for _ in range(4):
            cur = ctrl.states.get(tp)
            decision = decide(cur)
            if decision is None:
                return None
            leader, leader_epoch, isr = decision
            res, st = self.store.write_state(tp, leader, leader_epoch, isr,
                                             cur.version if cur is not None else -1, ctrl.epoch)
            if res == OK:
                ctrl.states[tp] = st
                return st
            if res == CONTROLLER_MOVED:
                ctrl.active = False       # KAFKA-6082: a zombie resigns on its first fenced write
                return None
            ctrl.retries += 1
            if st.controller_epoch > ctrl.epoch:
                ctrl.active = False       # already written by a newer controller
                return None
            ctrl.states[tp] = st
        return None

    def _live_replicas(self, ctrl, tp):
        live = ctrl.live_set()
        return [r for r in ctrl.assignments[tp] if r in live]

    @staticmethod
    def _without_replica(b: int):
        """decide() of taking broker b's replica offline, Kafka's ReplicaStateMachine.doRemoveReplicasFromIsr
        (ZK controller, tag 3.9): the leader becomes NoLeader (-1) when it is b; b leaves the ISR unless it is
        its only member (the ISR never empties); the leader epoch is bumped (LeaderAndIsr.newLeaderAndIsr).
        Used on broker failure, controlled shutdown (a follower's OfflineReplica) and controller failover."""
        def decide(cur):
            leader = -1 if cur.leader == b else cur.leader
            isr = cur.isr if len(cur.isr) <= 1 else tuple(r for r in cur.isr if r != b)
            return leader, cur.leader_epoch + 1, isr
        return decide

    def _take_replicas_offline(self, ctrl, b: int) -> None:
        """OfflineReplica for every replica of broker b in a stored ISR (controller failover): write
        `_without_replica(b)` and announce it to the live replicas. A write that would change neither leader nor
        ISR (b the only member of a leaderless ISR) is skipped; Kafka would still bump the leader epoch there."""
        for tp in sorted(ctrl.assignments):
            st = ctrl.states.get(tp)
            if st is None or b not in ctrl.assignments[tp] or b not in st.isr:
                continue
            if st.leader != b and len(st.isr) <= 1:
                continue
            new = self._write(ctrl, tp, self._without_replica(b))
            if new is not None:
                self._announce(ctrl, tp, new, self._live_replicas(ctrl, tp))
            if not ctrl.active:
                return

    # ------------------------------------------------------------------ controller election
    def elect_controller(self, broker: int) -> Controller:
        """`broker` wins the controller znode: bump the controller epoch, read everything, then what Kafka's
        ZK controller does on failover (KafkaController.onControllerFailover, tag 3.9): ReplicaStateMachine.startup
        (every live replica is told the stored state; every replica on a broker that is not registered becomes
        OfflineReplica: removeReplicasFromIsr), then PartitionStateMachine.startup (triggerOnlinePartitionStateChange:
        a partition with no live leader gets an offline election)."""
        b = self.brokers.get(broker)
        if b is None or not b.alive or broker not in self.store.brokers:
            raise ControllerError(f"broker {broker} is not a live registered broker")
        if self.store.controller_id >= 0 and self.store.controller_id != broker:
            raise ControllerError(f"broker {self.store.controller_id} holds the controller znode")
        self.store.controller_epoch += 1
        self.store.controller_id = broker
        ctrl = Controller(broker, self.store.controller_epoch, self.store)
        self.controllers[broker] = ctrl
        # 1. ReplicaStateMachine.startup, OnlineReplica: a LeaderAndIsr with the stored state to every live replica
        for tp in sorted(ctrl.assignments):
            st = ctrl.states.get(tp)
            if st is not None:
                self._announce(ctrl, tp, st, self._live_replicas(ctrl, tp))
        # 2. ReplicaStateMachine.startup, OfflineReplica (ControllerContext.onlineAndOfflineReplicas): a broker that
        #    died before this election (its failure never processed, e.g. the previous controller died first) is
        #    not in ctrl.live, so handle_broker_changes will never see it die; its replicas leave the ISRs here,
        #    one broker at a time (handleStateChanges groups by replica id), a dead leader becoming NoLeader.
        #    Without this step a dead broker stayed in the stored ISR for good and every ISR expansion, which must
        #    carry it, was refused INELIGIBLE_REPLICA (docs/FINDINGS.md, fifth session).
        live = ctrl.live_set()
        for dead in sorted({r for ar in ctrl.assignments.values() for r in ar if r not in live}):
            self._take_replicas_offline(ctrl, dead)
            if not ctrl.active:
                return ctrl
        # 3. PartitionStateMachine.startup: an offline election for every partition with no live leader
        for tp in sorted(ctrl.assignments):
            st = ctrl.states.get(tp)
            if st is not None and st.leader not in ctrl.live_set():
                self._offline_election(ctrl, tp, failed=st.leader)
        return ctrl

    def expire_controller_session(self, broker: int) -> None:
        """The controller's session expires but its process keeps running (a zombie until fenced)."""
        if self.store.controller_id == broker:
            self.store.controller_id = -1

    # ------------------------------------------------------------------ topic creation
    def create_topic(self, topic: str, partitions: int, replication_factor: int, start_index: int = 0,
                     shift: int = 0, assignment=None, controller=None) -> dict:
        ctrl = self._controller(controller)
        if assignment is None:
            assignment = assign_replicas(sorted(self.brokers), partitions, replication_factor, start_index, shift)
        live = ctrl.live_set()
        for p in sorted(assignment):
            tp = (topic, p)
            if tp in ctrl.assignments:
                raise ControllerError(f"partition {tp} already exists")
            ar = tuple(assignment[p])
            if self.store.write_assignment(tp, ar, ctrl.epoch) != OK:
                ctrl.active = False
                raise ControllerError("controller moved during topic creation")
            ctrl.assignments[tp] = ar
            isr = tuple(r for r in ar if r in live)
            if not isr:
                raise ControllerError(f"no live replica for {tp}")
            st = self._write(ctrl, tp, lambda cur, isr=isr: (isr[0], 0, isr))
            self._announce(ctrl, tp, st, isr)
        return {p: tuple(a) for p, a in assignment.items()}

    # ------------------------------------------------------------------ broker changes
    def handle_broker_changes(self, controller=None) -> dict:
        """Process registrations seen in the store: failures, startups, bounces (KIP-380)."""
        ctrl = self._controller(controller)
        registered = self.store.brokers
        dead = sorted(b for b in ctrl.live if b not in registered)
        bounced = sorted(b for b in ctrl.live if b in registered and registered[b] != ctrl.live[b])
        new = sorted(b for b in registered if b not in ctrl.live)
        for b in dead + bounced:
            del ctrl.live[b]
            ctrl.shutting_down.discard(b)
        for b in dead + bounced:
            self._on_broker_failure(ctrl, b)
            if not ctrl.active:
                return {"dead": dead, "bounced": bounced, "new": new}
        for b in bounced + new:
            ctrl.live[b] = registered[b]
        for b in sorted(bounced + new):
            self._on_broker_startup(ctrl, b)
        return {"dead": dead, "bounced": bounced, "new": new}

    def _on_broker_failure(self, ctrl, b: int) -> None:
        for tp in sorted(ctrl.assignments):
            st = ctrl.states.get(tp)
            if st is None or b not in ctrl.assignments[tp]:
                continue
            if st.leader == b:
                self._offline_election(ctrl, tp, failed=b)
            elif b in st.isr and len(st.isr) > 1:
                new = self._write(ctrl, tp, self._without_replica(b))    # b is not the leader: it leaves the ISR
                if new is not None:
                    self._announce(ctrl, tp, new, self._live_replicas(ctrl, tp))
            if not ctrl.active:
                return

    def _on_broker_startup(self, ctrl, b: int) -> None:
        for tp in sorted(ctrl.assignments):
            if b in ctrl.assignments[tp] and tp in ctrl.states:
                self._announce(ctrl, tp, ctrl.states[tp], [b])
        for tp in sorted(ctrl.assignments):
            st = ctrl.states.get(tp)
            if st is not None and st.leader not in ctrl.live_set():
                self._offline_election(ctrl, tp, failed=st.leader)

    def _offline_election(self, ctrl, tp, failed: int):
        unclean = self.settings.unclean_election

        def decide(cur):
            live = ctrl.live_set()
            if cur.leader in live:
                return None
            pick = elections.offline(ctrl.assignments[tp], cur.isr, live, unclean)
            if pick is not None:
                leader, isr = pick
                return leader, cur.leader_epoch + 1, isr
            if cur.leader < 0:
                return None  # already offline
            isr = tuple(r for r in cur.isr if r != cur.leader) or cur.isr   # the ISR never empties
            return -1, cur.leader_epoch + 1, isr

        st = self._write(ctrl, tp, decide)
        if st is not None:
            self._announce(ctrl, tp, st, self._live_replicas(ctrl, tp))
        return st

    # ------------------------------------------------------------------ explicit elections
    def elect_preferred(self, tp, controller=None):
        """Preferred replica election: move leadership to AR[0] if it is live and in the ISR."""
        ctrl = self._controller(controller)
        self._require(ctrl, tp)

        def decide(cur):
            pick = elections.preferred(ctrl.assignments[tp], cur.isr, ctrl.live_set(),
                                       self.settings.preferred_outside_isr)
            if pick is None or pick[0] == cur.leader:
                return None
            return pick[0], cur.leader_epoch + 1, pick[1]

        st = self._write(ctrl, tp, decide)
        if st is not None:
            self._announce(ctrl, tp, st, self._live_replicas(ctrl, tp))
        return st

    def controlled_shutdown(self, broker: int, controller=None) -> list:
        """The broker asks to shut down: move its leaderships away, drop it from ISRs.
        Returns the partitions it still leads (the shutdown may finish only when that is empty)."""
        ctrl = self._controller(controller)
        if broker not in ctrl.live:
            raise ControllerError(f"broker {broker} is not live")
        ctrl.shutting_down.add(broker)
        self._own(broker).shutting_down = True
        remaining = []
        for tp in sorted(ctrl.assignments):
            st = ctrl.states.get(tp)
            if st is None or broker not in ctrl.assignments[tp]:
                continue
            if st.leader == broker:
                def decide(cur):
                    pick = elections.controlled_shutdown(ctrl.assignments[tp], cur.isr, set(ctrl.live),
                                                         ctrl.shutting_down)
                    if pick is None or cur.leader != broker:
                        return None
                    return pick[0], cur.leader_epoch + 1, pick[1]
                new = self._write(ctrl, tp, decide)
                if new is None:
                    remaining.append(tp)
                    continue
            elif broker in st.isr and len(st.isr) > 1:
                # a follower's OfflineReplica (KafkaController.doControlledShutdown)
                new = self._write(ctrl, tp, self._without_replica(broker))
            else:
                continue
            if new is not None:
                self._announce(ctrl, tp, new, [r for r in ctrl.assignments[tp] if r in ctrl.live])
        return remaining

    # ------------------------------------------------------------------ AlterPartition
    def _on_alter_partition(self, dst: int, src: int, req: M.AlterPartition) -> None:
        ctrl = self.controllers.get(dst)
        tp = req.tp

        def reply(error, st=None):
            if st is None:
                body = M.AlterPartitionResponse(tp, error, -1, -1, (), -1)
            else:
                body = M.AlterPartitionResponse(tp, error, st.leader, st.leader_epoch, st.isr, st.version)
            self._send(dst, src, body)

        if ctrl is None or not ctrl.active or self.store.controller_id != dst:
            return reply(M.NOT_CONTROLLER)
        st = ctrl.states.get(tp)
        if st is None:
            return reply(M.INVALID_REQUEST)
        ids = tuple(r for r, _ in req.new_isr)
        # order of KafkaController.processAlterPartition (ZK mode, trunk 1eb7644349c)
        if req.leader_epoch > st.leader_epoch or req.partition_epoch > st.version:
            return reply(M.NOT_CONTROLLER)          # this controller is probably stale
        if req.leader_epoch < st.leader_epoch:
            return reply(M.FENCED_LEADER_EPOCH, st)
        if req.broker_id != st.leader:
            return reply(M.INVALID_REQUEST, st)
        if ids == st.isr:
            return reply(M.NONE, st)                # already applied (equalsAllowStalePartitionEpoch)
        if req.partition_epoch < st.version:
            return reply(M.INVALID_UPDATE_VERSION, st)
        ar = ctrl.assignments[tp]
        if st.leader not in ids or any(r not in ar for r in ids):
            return reply(M.INVALID_REQUEST, st)
        for r, epoch in req.new_isr:
            if r not in ctrl.live or r in ctrl.shutting_down:
                return reply(M.INELIGIBLE_REPLICA, st)
            if not self.settings.no_broker_epoch_check and epoch != -1 and epoch != ctrl.live[r]:
                return reply(M.INELIGIBLE_REPLICA, st)  # KIP-903: stale broker epoch
        res, new = self.store.write_state(tp, st.leader, st.leader_epoch, ids, st.version, ctrl.epoch)
        if res == CONTROLLER_MOVED:
            ctrl.active = False
            return reply(M.NOT_CONTROLLER)
        if res == BADVERSION:
            ctrl.states[tp] = new
            return reply(M.INVALID_UPDATE_VERSION, new)
        ctrl.states[tp] = new
        reply(M.NONE, new)

    # ------------------------------------------------------------------ reassignment
    def reassign(self, tp, target, controller=None) -> None:
        """Admin request: record (original AR, target AR) in the store; the controller drives it."""
        ctrl = self._controller(controller)
        self._require(ctrl, tp)
        target = tuple(target)
        if not target or len(set(target)) != len(target) or any(b not in self.brokers for b in target):
            raise ControllerError(f"invalid target replicas {target}")
        if tp in self.store.reassignments:
            raise ControllerError(f"{tp} is already being reassigned")
        self.store.reassignments[tp] = (ctrl.assignments[tp], target)
        ctrl.reassignments[tp] = self.store.reassignments[tp]

    def reassignment_step(self, tp, controller=None) -> str:
        """Take the next step of tp's reassignment, derived from the stored state so any controller
        can resume it: expand-replicas, wait, elect-leader, remove-old-from-isr, shrink-replicas,
        complete (or none when nothing is in progress)."""
        ctrl = self._controller(controller)
        if tp not in ctrl.reassignments:
            if tp in self.store.reassignments:
                ctrl.reassignments[tp] = self.store.reassignments[tp]
            else:
                return "none"
        orig, target = ctrl.reassignments[tp]
        ar = ctrl.assignments[tp]
        st = ctrl.states[tp]
        union = tuple(target) + tuple(r for r in orig if r not in target)
        removing = tuple(r for r in orig if r not in target)
        live = ctrl.live_set()
        if ar != union and ar != tuple(target):
            if self.store.write_assignment(tp, union, ctrl.epoch) != OK:
                ctrl.active = False
                return "fenced"
            ctrl.assignments[tp] = union
            new = self._write(ctrl, tp, lambda cur: (cur.leader, cur.leader_epoch + 1, cur.isr))
            if new is None:
                return "fenced"
            self._announce(ctrl, tp, new, [r for r in union if r in live])
            return "expand-replicas"
        if ar == union and not self.settings.reassignment_drops_early:
            if any(r not in st.isr for r in target):
                return "wait"
        if st.leader not in target or st.leader not in live:
            def decide(cur):
                leader = elections.reassignment(target, cur.isr, live)
                if leader is None:
                    return None
                return leader, cur.leader_epoch + 1, cur.isr
            new = self._write(ctrl, tp, decide)
            if new is None:
                return "wait" if ctrl.active else "fenced"
            self._announce(ctrl, tp, new, [r for r in ctrl.assignments[tp] if r in live], replicas=target)
            return "elect-leader"
        if any(r in st.isr for r in removing):
            new = self._write(ctrl, tp, lambda cur: (cur.leader, cur.leader_epoch + 1,
                                                     tuple(r for r in cur.isr if r not in removing)))
            if new is None:
                return "fenced"
            self._announce(ctrl, tp, new, [r for r in target if r in live], replicas=target)
            for r in removing:
                if r in live:
                    self._send(ctrl.broker, r, M.StopReplica(ctrl.broker, ctrl.epoch, tp, False))
            return "remove-old-from-isr"
        if ar != tuple(target):
            if self.store.write_assignment(tp, target, ctrl.epoch) != OK:
                ctrl.active = False
                return "fenced"
            ctrl.assignments[tp] = tuple(target)
            for r in removing:
                if r in ctrl.live:
                    self._send(ctrl.broker, r, M.StopReplica(ctrl.broker, ctrl.epoch, tp, True))
            return "shrink-replicas"
        if self.store.delete_reassignment(tp, ctrl.epoch) != OK:
            ctrl.active = False
            return "fenced"
        ctrl.reassignments.pop(tp, None)
        return "complete"

    def _require(self, ctrl, tp) -> None:
        if tp not in ctrl.assignments or tp not in ctrl.states:
            raise ControllerError(f"unknown partition {tp}")
