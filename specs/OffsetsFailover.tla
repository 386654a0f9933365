---------------------------- MODULE OffsetsFailover ----------------------------
(***************************************************************************)
(* A consumer group's coordinator state on the replicated                  *)
(* __consumer_offsets partition.  The storage is the Replication module,   *)
(* instantiated as is (same rules, same behaviours, without its Write      *)
(* action, which only the coordinator uses here); the coordinator is the   *)
(* replica that leads the partition and has loaded the group.              *)
(*                                                                         *)
(* - a replica that becomes leader (by applying a LeaderAndIsr) in the     *)
(*   controller's current epoch loads the group from its whole log (the    *)
(*   generation and assignment of the last group record, to the LEO);      *)
(* - Join: a join phase completes in memory (generation + 1, a new         *)
(*   assignment), not persisted;                                           *)
(* - Sync: the leader's SyncGroup appends the group record (acks=all);     *)
(*   the assignment is delivered when that record is acknowledged;         *)
(* - Commit(r, p): an offset commit appends data partition p's next offset *)
(*   (acks=all), acknowledged when the HW passes it;                       *)
(* - losing leadership (a crash, a newer LeaderAndIsr) unloads the group;  *)
(*   a generation completed in memory but never persisted is then lost and *)
(*   its number is reused later (allowed: nobody received it).             *)
(*                                                                         *)
(* This module states what model/offsets.py (kverify model "offsets")     *)
(* states, action by action, and kverify/tla compares the two state sets   *)
(* for every shipped .cfg.  `passed` is a history variable (the group      *)
(* states a Join step passes through, for the step invariants); the VIEW   *)
(* leaves it out.                                                          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    REPLICAS, RECORDS, EPOCHS, MIN_ISR, INIT_ISR, ALTERS, CRASHES, LOSSY, CTRL_FAILOVERS, UNCLEAN,
    JOINS, PARTITIONS,
    \* historical behaviours (BOOLEAN)
    TruncateToHw, OfleOffsetOnly, SkipTruncateSameLeader, NoFetchEpochFencing,
    ExpandWithoutEpochStart, NoMaximalIsr, NoBrokerEpochCheck, UncleanElection,
    IsrShrinksToLeaderMinIsr1, HwIgnoresMinIsr, StaleControllerAccepted, Kafka14704HwBeforeTruncate

VARIABLES
    replicas, controller, requests, zombie, nextRecord, committed, acked, spent,  \* the offsets partition
    coordinator,  \* the group as the coordinator has it in memory: owner, generation, pending assignment, ...
    payloads,     \* payloads[id]: what the coordinator wrote in record id (a group record or an offset commit)
    joins,        \* join phases completed so far
    nextOffset,   \* nextOffset[p]: the offset the last commit of data partition p wrote (0: none)
    lost,         \* generations completed in memory and lost by an unload
    passed        \* (history) the group states the last step passed through

R == INSTANCE Replication

vars == <<replicas, controller, requests, zombie, nextRecord, committed, acked, spent,
          coordinator, payloads, joins, nextOffset, lost, passed>>
modelVars == <<replicas, controller, requests, zombie, nextRecord, committed, acked, spent,
               coordinator, payloads, joins, nextOffset, lost>>

\* TLC deduplicates states on the model's variables only (not `passed`)
ModelView == modelVars

Parts == 0 .. PARTITIONS - 1
None == -1
\* assignments of 2 data partitions over 2 members, in the order successive joins make them
Assignments == << <<{0}, {1}>>, <<{1}, {0}>>, <<{0, 1}, {}>>, <<{}, {0, 1}>> >>

Init ==
    /\ R!Init
    /\ coordinator = [owner |-> 0, generation |-> 0, pending |-> None, loads |-> 1, assignment |-> None]
    /\ payloads = <<>>
    /\ joins = 0
    /\ nextOffset = [p \in Parts |-> 0]
    /\ lost = {}
    /\ passed = <<>>

-----------------------------------------------------------------------------
(* The coordinator follows leadership of the offsets partition *)

\* <<generation, assignment>> of the last group record in a log (<<0, None>>: none)
LoadGroup(log) ==
    LET idx == {k \in 1 .. Len(log) : payloads[log[k].id].kind = "group"}
    IN IF idx = {} THEN <<0, None>>
       ELSE LET pl == payloads[log[R!MaxOf(idx)].id] IN <<pl.generation, pl.assignment>>

\* the group leaves memory: a generation completed in memory but never persisted is lost
Unloaded == [coordinator EXCEPT !.owner = None, !.pending = None]
LostByUnload ==
    IF coordinator.owner >= 0 /\ coordinator.pending >= 0
    THEN lost \cup {[generation |-> coordinator.generation, assignment |-> coordinator.pending]}
    ELSE lost

\* after a replication action (by replica r): a replica that newly leads in the controller's
\* current epoch loads the group (only Apply makes a leader); an owner that crashed or stopped
\* leading unloads it
Follow(isApply, r) ==
    /\ IF isApply /\ replicas'[r].leader = r /\ replicas[r].leader # r
          /\ controller'.leader = r /\ replicas'[r].leaderEpoch = controller'.leaderEpoch
       THEN LET g == LoadGroup(replicas'[r].log)
            IN /\ coordinator' = [owner |-> r, generation |-> g[1], pending |-> None,
                                  loads |-> coordinator.loads + 1, assignment |-> g[2]]
               /\ lost' = LostByUnload
       ELSE IF coordinator.owner >= 0
               /\ ~(replicas'[coordinator.owner].alive /\ replicas'[coordinator.owner].leader = coordinator.owner)
       THEN /\ coordinator' = Unloaded
            /\ lost' = LostByUnload
       ELSE UNCHANGED <<coordinator, lost>>
    /\ passed' = <<>>
    /\ UNCHANGED <<payloads, joins, nextOffset>>

-----------------------------------------------------------------------------
(* Actions: the replication actions except Write, then Join, Sync, Commit *)
Restart(r, keep) == R!Restart(r, keep) /\ Follow(FALSE, r)
Apply(r, q) == R!Apply(r, q) /\ Follow(TRUE, r)
IncHw(r) == R!IncHw(r) /\ Follow(FALSE, r)
AlterResp(r) == R!AlterResp(r) /\ Follow(FALSE, r)
CtrlAlter(r) == R!CtrlAlter(r) /\ Follow(FALSE, r)
Shrink(r, f) == R!Shrink(r, f) /\ Follow(FALSE, r)
Expand(r, f) == R!Expand(r, f) /\ Follow(FALSE, r)
Truncate(r) == R!Truncate(r) /\ Follow(FALSE, r)
FetchHw(r) == R!FetchHw(r) /\ Follow(FALSE, r)
Fetch(r) == R!Fetch(r) /\ Follow(FALSE, r)
Crash(r) == R!Crash(r) /\ Follow(FALSE, r)
Elect(r) == R!Elect(r) /\ Follow(FALSE, r)
ElectUnclean(r) == R!ElectUnclean(r) /\ Follow(FALSE, r)
CtrlFailover == R!CtrlFailover /\ Follow(FALSE, 0)
ZombieElect(r) == R!ZombieElect(r) /\ Follow(FALSE, r)

\* replica r's coordinator has the group loaded and r still runs and believes it leads
Serves(r) == coordinator.owner = r /\ R!Leads(r)

\* a join phase completes in memory (no append)
Join(r) ==
    /\ Serves(r) /\ coordinator.pending < 0 /\ joins < JOINS
    /\ coordinator' = [coordinator EXCEPT !.generation = @ + 1, !.pending = joins]
    /\ joins' = joins + 1
    /\ passed' = <<"PreparingRebalance">>
    /\ UNCHANGED <<replicas, controller, requests, zombie, nextRecord, committed, acked, spent,
                   payloads, nextOffset, lost>>

\* the leader's SyncGroup appends the group record (acks=all): Replication's Write on the owner
Sync(r) ==
    /\ Serves(r) /\ coordinator.pending >= 0
    /\ R!Write(r)
    /\ payloads' = Append(payloads, [kind |-> "group", generation |-> coordinator.generation,
                                     assignment |-> coordinator.pending])
    /\ coordinator' = [coordinator EXCEPT !.pending = None, !.assignment = coordinator.pending]
    /\ passed' = <<>>
    /\ UNCHANGED <<joins, nextOffset, lost>>

\* an offset commit for data partition p appends its next offset (acks=all)
Commit(r, p) ==
    /\ Serves(r)
    /\ R!Write(r)
    /\ payloads' = Append(payloads, [kind |-> "commit", partition |-> p, offset |-> nextOffset[p] + 1])
    /\ nextOffset' = [nextOffset EXCEPT ![p] = @ + 1]
    /\ passed' = <<>>
    /\ UNCHANGED <<coordinator, joins, lost>>

Next ==
    \/ \E r \in R!ReplicaIds, keep \in 0 .. RECORDS : Restart(r, keep)
    \/ \E r \in R!ReplicaIds, q \in requests : Apply(r, q)
    \/ \E r \in R!ReplicaIds : IncHw(r)
    \/ \E r \in R!ReplicaIds : AlterResp(r)
    \/ \E r \in R!ReplicaIds : CtrlAlter(r)
    \/ \E r, f \in R!ReplicaIds : Shrink(r, f)
    \/ \E r, f \in R!ReplicaIds : Expand(r, f)
    \/ \E r \in R!ReplicaIds : Truncate(r)
    \/ \E r \in R!ReplicaIds : FetchHw(r)
    \/ \E r \in R!ReplicaIds : Fetch(r)
    \/ \E r \in R!ReplicaIds : Crash(r)
    \/ \E r \in R!ReplicaIds : Elect(r)
    \/ \E r \in R!ReplicaIds : ElectUnclean(r)
    \/ CtrlFailover
    \/ \E r \in R!ReplicaIds : ZombieElect(r)
    \/ \E r \in R!ReplicaIds : Join(r)
    \/ \E r \in R!ReplicaIds : Sync(r)
    \/ \E r \in R!ReplicaIds, p \in Parts : Commit(r, p)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Views *)
AckedPayloads == {payloads[acked[k].record.id] : k \in 1 .. Len(acked)}

\* <<generation, assignment>> of every acknowledged group record
Delivered == {<<pl.generation, Assignments[pl.assignment + 1]>> : pl \in {x \in AckedPayloads : x.kind = "group"}}

AckedOffset(p) ==
    LET vals == {pl.offset : pl \in {x \in AckedPayloads : x.kind = "commit" /\ x.partition = p}}
    IN IF vals = {} THEN 0 ELSE R!MaxOf(vals)

\* the offset of data partition p the coordinator would return: its last commit in the owner's log
ServedOffset(p) ==
    IF coordinator.owner < 0 THEN 0
    ELSE LET log == replicas[coordinator.owner].log
             idx == {k \in 1 .. Len(log) : payloads[log[k].id].kind = "commit" /\ payloads[log[k].id].partition = p}
         IN IF idx = {} THEN 0 ELSE payloads[log[R!MaxOf(idx)].id].offset

\* the owner leads in the controller's current epoch
IsCurrent == /\ coordinator.owner >= 0 /\ controller.leader = coordinator.owner
             /\ replicas[coordinator.owner].leaderEpoch = controller.leaderEpoch

\* the group as invariants/group.py sees it (no member processes here)
GState(c) ==
    IF c.owner < 0 THEN "Dead"
    ELSE IF c.pending >= 0 THEN "CompletingRebalance"
    ELSE IF c.generation > 0 THEN "Stable"
    ELSE "Empty"

-----------------------------------------------------------------------------
(* Invariants: the replication ones, acked-commit-durable (invariants/offsets.py), *)
(* generation-monotonicity and valid-state-transition (invariants/group.py)        *)
IDur == R!IDur
ILc == R!ILc
ILcc == R!ILcc
ILm == R!ILm
IHwm == R!IHwm
IRqs == R!IRqs
LeaderInIsr == R!LeaderInIsr
HwBounds == R!HwBounds
LeaderEpochNamesOneLeader == R!LeaderEpochNamesOneLeader
LogEpochsOrdered == R!LogEpochsOrdered
IEpoch == R!IEpoch

\* the current coordinator never serves an offset below one acknowledged to a committer
AckedCommitDurable == IsCurrent => \A p \in Parts : ServedOffset(p) >= AckedOffset(p)

Path == <<GState(coordinator)>> \o passed' \o <<GState(coordinator')>>
Hops == {k \in 1 .. Len(Path) - 1 : TRUE}

\* (step) while loaded the generation grows by exactly one per completed join; no generation is
\* delivered with two assignments; reloads never lose a delivered generation
GenerationMonotonicity ==
    /\ IF coordinator'.loads = coordinator.loads
       THEN coordinator'.generation = coordinator.generation
                + Cardinality({k \in Hops : Path[k] = "PreparingRebalance"
                                            /\ Path[k + 1] \in {"CompletingRebalance", "Empty"}})
       ELSE LET gens == {d[1] : d \in Delivered}
                top == IF gens = {} THEN -1 ELSE R!MaxOf(gens)
            IN coordinator'.generation >= top
    /\ \A d, e \in Delivered' : d[1] = e[1] => d = e

ValidPrevious(b) ==
    CASE b = "Empty" -> {"PreparingRebalance"}
      [] b = "PreparingRebalance" -> {"Stable", "CompletingRebalance", "Empty"}
      [] b = "CompletingRebalance" -> {"PreparingRebalance"}
      [] b = "Stable" -> {"CompletingRebalance"}
      [] b = "Dead" -> {"Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"}

\* (step) the group only takes the state transitions of Kafka's table (reloads land in Empty or Stable)
ValidStateTransition ==
    IF coordinator'.loads # coordinator.loads
    THEN GState(coordinator') \in {"Empty", "Stable"}
    ELSE \A k \in Hops : Path[k] # Path[k + 1] => Path[k] \in ValidPrevious(Path[k + 1])

\* the step invariants as TLC properties (PROPERTY in the .cfg)
AlwaysIEpoch == [][IEpoch]_vars
AlwaysGenerationMonotonicity == [][GenerationMonotonicity]_vars
AlwaysValidStateTransition == [][ValidStateTransition]_vars
=============================================================================
