---------------------------- MODULE OffsetsFailover ----------------------------
(***************************************************************************)
(* The abstract offsets model of kverify (model/offsets.py, registry name  *)
(* "offsets"), stated in TLA+: a group's coordinator state on the          *)
(* replicated __consumer_offsets partition.  The storage is Replication    *)
(* (instantiated as is: same rules, same behaviours, without its Write     *)
(* action); the coordinator is whichever replica leads the partition and   *)
(* loaded the group.                                                       *)
(*                                                                         *)
(* - a replica that becomes leader (by applying a LeaderAndIsr) loads the  *)
(*   group from its whole log (generation and assignment of the last group *)
(*   record) when it is the controller's current leader;                   *)
(* - Join: a join phase completes in memory (generation + 1, a new         *)
(*   assignment), not persisted;                                           *)
(* - Sync: the leader's SyncGroup appends the group record (acks=all);     *)
(* - Commit(p): an offset commit appends <<p, next offset>> (acks=all);    *)
(* - losing leadership unloads the group; a generation completed in memory *)
(*   but never persisted is lost (its number is reused later).             *)
(*                                                                         *)
(* Variables: the replication state (reps, ctrl, reqs, zombie, hist: the   *)
(* Python state's first field), `coord` (its second), `payloads` (the      *)
(* record id -> what the coordinator wrote, third) and `grouphist` (joins  *)
(* so far, next offset per partition, lost generations: the fourth, named  *)
(* `hist` in Python).  `passed` is a history variable (the join phase a    *)
(* Join step passes through, for the step invariants); the VIEW leaves it  *)
(* out.  Naming conventions: see Replication.tla.                          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    REPLICAS, RECORDS, EPOCHS, MIN_ISR, INIT_ISR, ALTERS, CRASHES, LOSSY, CTRL_FAILOVERS, UNCLEAN,
    JOINS, PARTITIONS,
    \* historical behaviours (BOOLEAN)
    TruncateToHw, OfleOffsetOnly, SkipTruncateSameLeader, NoFetchEpochFencing,
    ExpandWithoutEpochStart, NoMaximalIsr, NoBrokerEpochCheck, UncleanElection,
    IsrShrinksToLeaderMinIsr1, HwIgnoresMinIsr, StaleControllerAccepted, Kafka14704HwBeforeTruncate

VARIABLES reps, ctrl, reqs, zombie, hist, coord, payloads, grouphist, passed

R == INSTANCE Replication

vars == <<reps, ctrl, reqs, zombie, hist, coord, payloads, grouphist, passed>>
modelVars == <<reps, ctrl, reqs, zombie, hist, coord, payloads, grouphist>>

Parts == 0 .. PARTITIONS - 1
\* assignments of 2 data partitions over 2 members, in the order successive joins make them
Assignments == << <<{0}, {1}>>, <<{1}, {0}>>, <<{0, 1}, {}>>, <<{}, {0, 1}>> >>
Group == "g"
OffsetCommit == "o"

Init ==
    /\ R!ReplInit
    /\ coord = [owner |-> 0, gen |-> 0, pend |-> -1, loads |-> 1, asg |-> -1]
    /\ payloads = <<>>
    /\ grouphist = [joins |-> 0, next |-> [p \in Parts |-> 0], lost |-> {}]
    /\ passed = <<>>

-----------------------------------------------------------------------------
(* The coordinator follows leadership of the offsets partition *)

\* generation and assignment index of the last group record in a log (<<0, -1>>: none)
LoadGroup(log) ==
    LET idx == {k \in 1 .. Len(log) : payloads[log[k][2]][1] = Group}
    IN IF idx = {} THEN <<0, -1>>
       ELSE LET pl == payloads[log[R!MaxOf(idx)][2]] IN <<pl[2], pl[3]>>

\* unloading: a generation completed in memory but never persisted is lost
UnloadHist(c, gh) ==
    IF c.owner >= 0 /\ c.pend >= 0 THEN [gh EXCEPT !.lost = @ \cup {<<c.gen, c.pend>>}] ELSE gh
UnloadCoord(c) == IF c.owner < 0 THEN c ELSE [c EXCEPT !.owner = -1, !.pend = -1]

\* after replication action `isApply` (by replica r): load, unload or keep the group
Follow(isApply, r) ==
    /\ IF isApply /\ reps'[r].ldr = r /\ reps[r].ldr # r
          /\ ctrl'.ldr = r /\ reps'[r].ep = ctrl'.ep   \* only the controller's current leader loads
       THEN LET g == LoadGroup(reps'[r].log)
            IN /\ coord' = [owner |-> r, gen |-> g[1], pend |-> -1, loads |-> coord.loads + 1, asg |-> g[2]]
               /\ grouphist' = UnloadHist(coord, grouphist)
       ELSE IF coord.owner >= 0 /\ (~reps'[coord.owner].alive \/ reps'[coord.owner].ldr # coord.owner)
       THEN /\ coord' = UnloadCoord(coord)
            /\ grouphist' = UnloadHist(coord, grouphist)
       ELSE UNCHANGED <<coord, grouphist>>
    /\ UNCHANGED payloads
    /\ passed' = <<>>

-----------------------------------------------------------------------------
(* Actions: the replication actions (without Write), then Join, Sync, Commit *)
Apply(r, q) == R!Apply(r, q) /\ Follow(TRUE, r)
IncHw(r) == R!IncHw(r) /\ Follow(FALSE, r)
AlterResp(r) == R!AlterResp(r) /\ Follow(FALSE, r)
CtrlAlter(r) == R!CtrlAlter(r) /\ Follow(FALSE, r)
Shrink(r, f) == R!Shrink(r, f) /\ Follow(FALSE, r)
Expand(r, f) == R!Expand(r, f) /\ Follow(FALSE, r)
Truncate(r) == R!Truncate(r) /\ Follow(FALSE, r)
Fetch(r) == R!Fetch(r) /\ Follow(FALSE, r)
FetchHw(r) == R!FetchHw(r) /\ Follow(FALSE, r)
Crash(r) == R!Crash(r) /\ Follow(FALSE, r)
Restart(r, keep) == R!Restart(r, keep) /\ Follow(FALSE, r)
Elect(r) == R!Elect(r) /\ Follow(FALSE, r)
ElectUnclean(r) == R!ElectUnclean(r) /\ Follow(FALSE, r)
CtrlFailover == R!CtrlFailover /\ Follow(FALSE, 0)
ZombieElect(r) == R!ZombieElect(r) /\ Follow(FALSE, r)

Serving == coord.owner >= 0 /\ reps[coord.owner].alive /\ reps[coord.owner].ldr = coord.owner
CanAppend == hist.next <= RECORDS /\ Cardinality(reps[coord.owner].isr) >= R!MinIsr

\* a join phase completes in memory
Join ==
    /\ Serving /\ coord.pend < 0 /\ grouphist.joins < JOINS
    /\ coord' = [coord EXCEPT !.gen = @ + 1, !.pend = grouphist.joins]
    /\ grouphist' = [grouphist EXCEPT !.joins = @ + 1]
    /\ passed' = <<"PreparingRebalance">>
    /\ UNCHANGED <<reps, ctrl, reqs, zombie, hist, payloads>>

\* the leader's SyncGroup appends the group record
Sync ==
    /\ Serving /\ CanAppend /\ coord.pend >= 0
    /\ R!DoWrite(coord.owner)
    /\ payloads' = Append(payloads, <<Group, coord.gen, coord.pend>>)
    /\ coord' = [coord EXCEPT !.pend = -1, !.asg = coord.pend]
    /\ passed' = <<>>
    /\ UNCHANGED grouphist

\* an offset commit for data partition p appends its next offset
Commit(p) ==
    /\ Serving /\ CanAppend
    /\ R!DoWrite(coord.owner)
    /\ payloads' = Append(payloads, <<OffsetCommit, p, grouphist.next[p] + 1>>)
    /\ grouphist' = [grouphist EXCEPT !.next[p] = @ + 1]
    /\ passed' = <<>>
    /\ UNCHANGED coord

Next ==
    \/ \E r \in R!Reps, q \in reqs : Apply(r, q)
    \/ \E r \in R!Reps : IncHw(r)
    \/ \E r \in R!Reps : AlterResp(r)
    \/ \E r \in R!Reps : CtrlAlter(r)
    \/ \E r, f \in R!Reps : Shrink(r, f)
    \/ \E r, f \in R!Reps : Expand(r, f)
    \/ \E r \in R!Reps : Truncate(r)
    \/ \E r \in R!Reps : Fetch(r)
    \/ \E r \in R!Reps : FetchHw(r)
    \/ \E r \in R!Reps : Crash(r)
    \/ \E r \in R!Reps, keep \in 0 .. RECORDS : Restart(r, keep)
    \/ \E r \in R!Reps : Elect(r)
    \/ \E r \in R!Reps : ElectUnclean(r)
    \/ CtrlFailover
    \/ \E r \in R!Reps : ZombieElect(r)
    \/ Join
    \/ Sync
    \/ \E p \in Parts : Commit(p)

Spec == Init /\ [][Next]_vars

\* TLC deduplicates states on the model's variables only (not `passed`)
ModelView == modelVars

-----------------------------------------------------------------------------
(* Views *)
AckedPayloads == {payloads[hist.acked[k][2][2]] : k \in 1 .. Len(hist.acked)}

Delivered == {<<pl[2], Assignments[pl[3] + 1]>> : pl \in {x \in AckedPayloads : x[1] = Group}}

AckedOffset(p) ==
    LET vals == {pl[3] : pl \in {x \in AckedPayloads : x[1] = OffsetCommit /\ x[2] = p}}
    IN IF vals = {} THEN 0 ELSE R!MaxOf(vals)

ServedOffset(p) ==
    IF coord.owner < 0 THEN 0
    ELSE LET log == reps[coord.owner].log
             idx == {k \in 1 .. Len(log) : payloads[log[k][2]][1] = OffsetCommit
                                            /\ payloads[log[k][2]][2] = p}
         IN IF idx = {} THEN 0 ELSE payloads[log[R!MaxOf(idx)][2]][3]

IsCurrent == coord.owner >= 0 /\ ctrl.ldr = coord.owner /\ reps[coord.owner].ep = ctrl.ep

\* the group as invariants/group.py sees it (no member processes here)
GState(c) ==
    IF c.owner < 0 THEN "Dead"
    ELSE IF c.pend >= 0 THEN "CompletingRebalance"
    ELSE IF c.gen > 0 THEN "Stable"
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
LogEpochsOrdered == R!LogEpochsOrdered
IEpoch == R!IEpoch

\* the current coordinator never serves an offset below one acknowledged to a committer
AckedCommitDurable == IsCurrent => \A p \in Parts : ServedOffset(p) >= AckedOffset(p)

Path == <<GState(coord)>> \o passed' \o <<GState(coord')>>
Hops == {k \in 1 .. Len(Path) - 1 : TRUE}

\* (step) while loaded the generation grows by exactly one per completed join;
\* no generation is delivered with two assignments; reloads never lose a
\* delivered generation
GenerationMonotonicity ==
    /\ IF coord'.loads = coord.loads
       THEN coord'.gen = coord.gen + Cardinality({k \in Hops : Path[k] = "PreparingRebalance"
                                                  /\ Path[k + 1] \in {"CompletingRebalance", "Empty"}})
       ELSE LET gens == {d[1] : d \in Delivered}
                top == IF gens = {} THEN -1 ELSE R!MaxOf(gens)
            IN coord'.gen >= top
    /\ \A d, e \in Delivered' : d[1] = e[1] => d = e

ValidPrevious(b) ==
    CASE b = "Empty" -> {"PreparingRebalance"}
      [] b = "PreparingRebalance" -> {"Stable", "CompletingRebalance", "Empty"}
      [] b = "CompletingRebalance" -> {"PreparingRebalance"}
      [] b = "Stable" -> {"CompletingRebalance"}
      [] b = "Dead" -> {"Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"}

\* (step) the group only takes the state transitions of Kafka's table (reloads
\* land in Empty or Stable)
ValidStateTransition ==
    IF coord'.loads # coord.loads
    THEN GState(coord') \in {"Empty", "Stable"}
    ELSE \A k \in Hops : Path[k] # Path[k + 1] => Path[k] \in ValidPrevious(Path[k + 1])

\* the step invariants as TLC properties (PROPERTY in the .cfg)
AlwaysIEpoch == [][IEpoch]_vars
AlwaysGenerationMonotonicity == [][GenerationMonotonicity]_vars
AlwaysValidStateTransition == [][ValidStateTransition]_vars
=============================================================================
