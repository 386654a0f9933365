------------------------------ MODULE Replication ------------------------------
(***************************************************************************)
(* Replication of one Kafka partition: leader epochs, the high watermark,  *)
(* the ISR changed by AlterPartition (KIP-497), a ZooKeeper-era controller *)
(* with KIP-966's eligible leader replicas (ELR) and unclean-shutdown      *)
(* detection, LeaderAndIsr requests that may be delayed, lost, duplicated  *)
(* or reordered (as in J. Gustafson's KafkaReplication.tla, a replica may  *)
(* apply any request with a higher leader epoch than its own), follower    *)
(* truncation by OffsetsForLeaderEpoch (KIP-101/279, fenced by KIP-320),   *)
(* crashes, lossy restarts, unclean elections and controller failover      *)
(* leaving a zombie controller.                                            *)
(*                                                                         *)
(* This module states what model/replication.py (kverify model             *)
(* "replication") states, action by action: each disjunct of Next is named *)
(* like the Python action (inc_hw <-> IncHw), each variable like the       *)
(* Python state's field (next_record <-> nextRecord), and kverify/tla      *)
(* compares the two state sets for every shipped .cfg.  The Python         *)
(* docstring gives the Kafka references; the abstractions are the same:    *)
(* a leader reads its followers' LEOs directly, the lag timer becomes "a   *)
(* follower whose LEO differs from the leader's may be shrunk out", and a  *)
(* restarted replica learns the controller's current state at once.        *)
(*                                                                         *)
(* Bounds are CONSTANTS used in guards: RECORDS writes, EPOCHS leader       *)
(* epochs (plus one recovery election of an offline partition), ALTERS    *)
(* AlterPartition proposals, CRASHES, LOSSY restarts, UNCLEAN elections,   *)
(* CTRL_FAILOVERS; `spent` counts what a behaviour has used of each.  The  *)
(* historical behaviours (kverify's switches) are BOOLEAN constants.       *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    REPLICAS, RECORDS, EPOCHS, MIN_ISR, INIT_ISR, ALTERS, CRASHES, LOSSY, CTRL_FAILOVERS, UNCLEAN,
    \* historical behaviours (BOOLEAN)
    TruncateToHw, OfleOffsetOnly, SkipTruncateSameLeader, NoFetchEpochFencing,
    ExpandWithoutEpochStart, NoMaximalIsr, NoBrokerEpochCheck, UncleanElection,
    IsrShrinksToLeaderMinIsr1, HwIgnoresMinIsr, StaleControllerAccepted, Kafka14704HwBeforeTruncate

VARIABLES
    replicas,     \* replicas[r]: what the broker hosting replica r knows (log, HW, epochs, leader, ...)
    controller,   \* the controller's record of the partition: leader, leader epoch, ISR, ELR, epochs
    requests,     \* every LeaderAndIsr request sent so far (any of them may still arrive)
    zombie,       \* {} or {the view of a deposed controller, which may still send one request}
    nextRecord,   \* id of the next record a producer writes (ids 1, 2, ...)
    committed,    \* the records below the true HW: what consumers may have read (history)
    acked,        \* [offset, record] acknowledged to acks=all producers, in order (history)
    spent         \* how much of each fault / change budget has been used

vars == <<replicas, controller, requests, zombie, nextRecord, committed, acked, spent>>
modelVars == <<replicas, controller, requests, zombie, nextRecord, committed, acked, spent>>

ReplicaIds == 0 .. REPLICAS - 1
NoLeader == -1
NoAlter == [isr |-> {}, applied |-> FALSE, stale |-> FALSE]   \* no AlterPartition in flight

Min2(a, b) == IF a < b THEN a ELSE b
Max2(a, b) == IF a > b THEN a ELSE b
MinOf(S) == CHOOSE x \in S : \A y \in S : x <= y
MaxOf(S) == CHOOSE x \in S : \A y \in S : x >= y

MinIsr == IF IsrShrinksToLeaderMinIsr1 THEN 1 ELSE Min2(MIN_ISR, REPLICAS)
MaxUnclean == IF UncleanElection THEN UNCLEAN ELSE 0
InitIsr == IF INIT_ISR = 0 THEN ReplicaIds ELSE 0 .. INIT_ISR - 1

\* the LeaderAndIsr request the controller sends for its record c of the partition
RequestFrom(c) == [leader |-> c.leader, leaderEpoch |-> c.leaderEpoch, isr |-> c.isr,
                   partitionEpoch |-> c.partitionEpoch, controllerEpoch |-> c.controllerEpoch]

\* replica 0 leads epoch 0 with the initial ISR; every replica runs with an empty log
Init ==
    /\ replicas = [r \in ReplicaIds |->
                     [alive |-> TRUE, log |-> <<>>, hw |-> 0, leaderEpoch |-> 0, partitionEpoch |-> 0,
                      controllerEpoch |-> 0, leader |-> 0, mustTruncate |-> FALSE,
                      isr |-> IF r = 0 THEN InitIsr ELSE {}, alter |-> NoAlter,
                      leso |-> IF r = 0 THEN 0 ELSE -1, leadingSince |-> IF r = 0 THEN 0 ELSE -1]]
    /\ controller = [leader |-> 0, leaderEpoch |-> 0, isr |-> InitIsr, elr |-> {}, partitionEpoch |-> 0,
                     controllerEpoch |-> 0]
    /\ requests = {[leader |-> 0, leaderEpoch |-> 0, isr |-> InitIsr, partitionEpoch |-> 0, controllerEpoch |-> 0]}
    /\ zombie = {}
    /\ nextRecord = 1
    /\ committed = <<>>
    /\ acked = <<>>
    /\ spent = [crashes |-> 0, lossy |-> 0, unclean |-> 0, alters |-> 0, failovers |-> 0]

-----------------------------------------------------------------------------
(* Leader epoch caches and the OffsetsForLeaderEpoch answer (KIP-101/279).  *)
(* A cache is a sequence of <<epoch, start offset>>; offsets are 0-based,   *)
(* so the record at offset o of a log l is l[o + 1].                        *)

RECURSIVE EntriesFrom(_, _, _)
EntriesFrom(log, o, last) ==
    IF o >= Len(log) THEN <<>>
    ELSE IF log[o + 1].epoch # last
         THEN <<<<log[o + 1].epoch, o>>>> \o EntriesFrom(log, o + 1, log[o + 1].epoch)
         ELSE EntriesFrom(log, o + 1, last)

EpochEntries(log) == EntriesFrom(log, 0, -1)

\* a leader's cache: its records' epochs plus (current epoch -> LESO) (KAFKA-7415)
LeaderEntries(rep) ==
    LET e == EpochEntries(rep.log)
    IN IF rep.leso >= 0 /\ (e = <<>> \/ e[Len(e)][1] < rep.leaderEpoch)
       THEN Append(e, <<rep.leaderEpoch, rep.leso>>) ELSE e

\* KIP-279: <<largest epoch <= e, its end offset>>, or <<>> (UNDEFINED)
EndOffsetFor(ents, leo, e) ==
    IF ents = <<>> THEN <<>>
    ELSE IF e = ents[Len(ents)][1] THEN <<e, leo>>
    ELSE LET bigger == {k \in 1 .. Len(ents) : ents[k][1] > e}
         IN IF bigger = {} THEN <<>>
            ELSE LET k == MinOf(bigger)
                 IN <<IF k = 1 THEN e ELSE ents[k - 1][1], ents[k][2]>>

\* KIP-101: an offset only; -1 (fall back to the HW) when undefined
EndOffsetOnly(ents, leo, e) ==
    IF ents = <<>> THEN -1
    ELSE IF e = ents[Len(ents)][1] THEN leo
    ELSE IF e < ents[1][1] THEN -1
    ELSE LET bigger == {k \in 1 .. Len(ents) : ents[k][1] > e}
         IN IF bigger = {} THEN -1 ELSE ents[MinOf(bigger)][2]

RECURSIVE TruncLoop(_, _, _, _, _, _)
TruncLoop(fents, fhw, leo, lents, lleo, e) ==
    LET ans == EndOffsetFor(lents, lleo, e)
    IN IF ans = <<>> THEN Min2(fhw, leo)
       ELSE LET le == ans[1]
                lend == ans[2]
                same == {i \in 1 .. Len(fents) : fents[i][1] = le}
                lower == {i \in 1 .. Len(fents) : fents[i][1] < le}
            IN IF same # {}
               THEN LET i == MinOf(same)
                        fend == IF i < Len(fents) THEN fents[i + 1][2] ELSE leo
                    IN Min2(Min2(fend, lend), leo)
               ELSE IF lower = {} THEN Min2(lend, leo)   \* no smaller epoch: the leader's offset
               ELSE TruncLoop(fents, fhw, leo, lents, lleo, fents[MaxOf(lower)][1])

\* where a follower with log flog and HW fhw truncates to against leader lrep
TruncationPoint(flog, fhw, lrep) ==
    LET leo == Len(flog)
        lents == LeaderEntries(lrep)
        lleo == Len(lrep.log)
        fents == EpochEntries(flog)
    IN IF leo = 0 THEN 0
       ELSE IF OfleOffsetOnly
       THEN LET ans == EndOffsetOnly(lents, lleo, fents[Len(fents)][1])
            IN IF ans < 0 THEN Min2(fhw, leo) ELSE Min2(ans, leo)
       ELSE TruncLoop(fents, fhw, leo, lents, lleo, fents[Len(fents)][1])

\* whether, after truncating to cut, the leader stops reporting a diverging epoch (KAFKA-10554;
\* otherwise the follower keeps truncating instead of fetching and is not counted, KAFKA-13141)
TruncDone(rep, lrep, cut) ==
    IF OfleOffsetOnly \/ cut = 0 THEN TRUE
    ELSE LET ef == rep.log[cut].epoch
             ans == EndOffsetFor(LeaderEntries(lrep), Len(lrep.log), ef)
         IN ans # <<>> /\ ans[1] = ef /\ ans[2] >= cut

-----------------------------------------------------------------------------
(* Rules shared by several actions *)

Leads(r) == replicas[r].alive /\ replicas[r].leader = r
Follows(r) == replicas[r].alive /\ replicas[r].leader # r

\* the replicas a leader waits for (HW, acks): its maximal ISR, committed and proposed (KIP-497)
Quorum(rep) == IF rep.alter.isr # {} /\ ~NoMaximalIsr THEN rep.isr \cup rep.alter.isr ELSE rep.isr

\* leader r knows follower f's LEO (f fetched from r in r's epoch, after truncating)
Counts(r, f) ==
    /\ replicas[f].leader = r /\ ~replicas[f].mustTruncate
    /\ NoFetchEpochFencing \/ replicas[f].leaderEpoch = replicas[r].leaderEpoch

\* follower f's fetch reaches a running leader that accepts its epoch (KIP-320)
FetchOk(f) ==
    LET l == replicas[f].leader
    IN /\ l >= 0 /\ l # f /\ replicas[f].alive
       /\ replicas[l].alive /\ replicas[l].leader = l
       /\ NoFetchEpochFencing \/ replicas[l].leaderEpoch = replicas[f].leaderEpoch

\* the lowest LEO over leader r's maximal ISR (0 for a member it does not hear from)
HwCandidate(r) ==
    MinOf({Len(replicas[r].log)}
          \cup {IF Counts(r, f) THEN Len(replicas[f].log) ELSE 0 : f \in Quorum(replicas[r]) \ {r}})

\* the HW a follower whose LEO is leo takes from a fetch response of leader lrep
FetchedHw(lrep, leo) == Min2(lrep.hw, leo)

\* KIP-966: members removed while the ISR is below MinISR join the ELR; ISR >= MinISR clears it
NewElr(oldIsr, newIsr, elr) ==
    IF Cardinality(newIsr) >= MinIsr THEN {} ELSE (elr \cup (oldIsr \ newIsr)) \ newIsr

\* replica r (state rep) after it applies LeaderAndIsr q
Become(rep, r, q) ==
    IF q.leader = r
    THEN [rep EXCEPT !.alive = TRUE, !.leaderEpoch = q.leaderEpoch, !.partitionEpoch = q.partitionEpoch,
                     !.controllerEpoch = q.controllerEpoch, !.leader = r, !.mustTruncate = FALSE,
                     !.isr = q.isr, !.alter = NoAlter, !.leso = Len(rep.log),
                     !.leadingSince = IF rep.leader = r /\ rep.leadingSince >= 0 THEN @ ELSE q.leaderEpoch]
    ELSE LET cut == Min2(rep.hw, Len(rep.log))     \* truncate-to-hw: pre-KIP-101 followers cut at the HW
         IN [rep EXCEPT !.alive = TRUE, !.leaderEpoch = q.leaderEpoch, !.partitionEpoch = q.partitionEpoch,
                        !.controllerEpoch = q.controllerEpoch, !.leader = q.leader,
                        !.log = IF TruncateToHw THEN SubSeq(@, 1, cut) ELSE @,
                        !.hw = IF TruncateToHw THEN cut ELSE @,
                        !.mustTruncate = IF TruncateToHw THEN FALSE
                                         ELSE IF SkipTruncateSameLeader /\ q.leader = rep.leader /\ q.leader # NoLeader
                                         THEN @ ELSE TRUE,
                        !.isr = {}, !.alter = NoAlter, !.leso = -1, !.leadingSince = -1]

\* a restarting broker registers with a new broker epoch: an AlterPartition that adds it, built
\* from its previous incarnation's fetches, carries a stale one (KIP-903)
AddsRestarted(rep, r) ==
    /\ ~NoBrokerEpochCheck
    /\ rep.alter.isr # {} /\ ~rep.alter.applied /\ r \in rep.alter.isr \ rep.isr

\* EPOCHS caps the elections that move a live leader; an offline partition may still get one
\* recovery election (so recoverability is not an artefact of the bound)
ElectionAllowed == controller.leaderEpoch < EPOCHS \/ (controller.leader = NoLeader /\ controller.leaderEpoch = EPOCHS)

-----------------------------------------------------------------------------
(* Actions, in the order of model/replication.py's action table *)

\* a crashed replica restarts with the first `keep` records of its log (fewer: a lossy restart)
Restart(r, keep) ==
    LET rep == replicas[r]
        lossy == keep < Len(rep.log)
        c == IF lossy THEN [controller EXCEPT !.isr = @ \ {r}, !.elr = @ \ {r}]  \* unclean shutdown (KAFKA-15586)
             ELSE controller
        cep == Max2(rep.controllerEpoch, c.controllerEpoch)
        base == [rep EXCEPT !.alive = TRUE, !.log = SubSeq(@, 1, keep), !.hw = Min2(@, keep), !.controllerEpoch = cep,
                            !.leader = NoLeader, !.mustTruncate = TRUE, !.isr = {}, !.alter = NoAlter,
                            !.leso = -1, !.leadingSince = -1]
        \* it registers and learns the controller's current record (a crash removed it as leader)
        current == [leader |-> IF c.leader = r THEN NoLeader ELSE c.leader, leaderEpoch |-> c.leaderEpoch,
                    isr |-> c.isr, partitionEpoch |-> c.partitionEpoch, controllerEpoch |-> cep]
    IN /\ ~rep.alive
       /\ keep <= Len(rep.log)
       /\ keep = Len(rep.log) \/ spent.lossy < LOSSY
       /\ replicas' = [x \in ReplicaIds |->
                         IF x = r THEN (IF c.leaderEpoch >= rep.leaderEpoch THEN Become(base, r, current) ELSE base)
                         ELSE IF AddsRestarted(replicas[x], r) THEN [replicas[x] EXCEPT !.alter.stale = TRUE]
                         ELSE replicas[x]]
       /\ controller' = c
       /\ spent' = IF lossy THEN [spent EXCEPT !.lossy = @ + 1] ELSE spent
       /\ UNCHANGED <<requests, zombie, nextRecord, committed, acked>>

\* a running replica applies a LeaderAndIsr with a higher leader epoch than its own, from a
\* controller at least as recent as the newest it has seen
Apply(r, q) ==
    /\ replicas[r].alive
    /\ q.leaderEpoch > replicas[r].leaderEpoch
    /\ StaleControllerAccepted \/ q.controllerEpoch >= replicas[r].controllerEpoch
    /\ replicas' = [replicas EXCEPT ![r] = Become(@, r, [q EXCEPT !.controllerEpoch = Max2(@, replicas[r].controllerEpoch)])]
    /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked, spent>>

\* an acks=all produce request reaches the leader while its ISR has MinISR members
Write(r) ==
    /\ Leads(r) /\ nextRecord <= RECORDS /\ Cardinality(replicas[r].isr) >= MinIsr
    /\ replicas' = [replicas EXCEPT ![r].log = Append(@, [epoch |-> replicas[r].leaderEpoch, id |-> nextRecord])]
    /\ nextRecord' = nextRecord + 1
    /\ UNCHANGED <<controller, requests, zombie, committed, acked, spent>>

\* the leader advances its HW to the lowest LEO of its maximal ISR while its ISR has MinISR members
\* (KAFKA-15583); the acks=all writes of its uninterrupted leadership below the new HW are acknowledged
\* when the maximal ISR has MinISR members (else NOT_ENOUGH_REPLICAS_AFTER_APPEND)
IncHw(r) ==
    LET rep == replicas[r]
        new == HwCandidate(r)
        reached == [k \in 1 .. new - rep.hw |-> [offset |-> rep.hw + k - 1, record |-> rep.log[rep.hw + k]]]
        mine == SelectSeq(reached, LAMBDA a : a.record.epoch >= rep.leadingSince)
    IN /\ Leads(r)
       /\ HwIgnoresMinIsr \/ Cardinality(rep.isr) >= MinIsr
       /\ new > rep.hw
       /\ replicas' = [replicas EXCEPT ![r].hw = new]
       /\ acked' = IF Cardinality(Quorum(rep)) >= MinIsr THEN acked \o mine ELSE acked
       /\ committed' = IF new > Len(committed) THEN committed \o SubSeq(rep.log, Len(committed) + 1, new)
                       ELSE committed
       /\ UNCHANGED <<controller, requests, zombie, nextRecord, spent>>

\* the leader hears that the controller applied its AlterPartition
AlterResp(r) ==
    /\ Leads(r) /\ replicas[r].alter.applied
    /\ replicas' = [replicas EXCEPT ![r].partitionEpoch = @ + 1, ![r].isr = replicas[r].alter.isr,
                                    ![r].alter = NoAlter]
    /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked, spent>>

\* the controller handles the leader's AlterPartition
CtrlAlter(r) ==
    LET rep == replicas[r]
        prop == rep.alter.isr
        accepted == /\ controller.leader = r /\ controller.leaderEpoch = rep.leaderEpoch
                    /\ controller.partitionEpoch = rep.partitionEpoch /\ ~rep.alter.stale
                    /\ \A f \in prop \ controller.isr : replicas[f].alive
    IN /\ Leads(r) /\ prop # {} /\ ~rep.alter.applied
       /\ IF accepted
          THEN /\ controller' = [controller EXCEPT !.isr = prop, !.elr = NewElr(controller.isr, prop, controller.elr),
                                                   !.partitionEpoch = @ + 1]
               /\ replicas' = [replicas EXCEPT ![r].alter.applied = TRUE]
          ELSE /\ replicas' = [replicas EXCEPT ![r].alter = NoAlter]
               /\ UNCHANGED controller   \* FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION / INELIGIBLE_REPLICA
       /\ UNCHANGED <<requests, zombie, nextRecord, committed, acked, spent>>

MayAlter(r, f) == Leads(r) /\ f # r /\ replicas[r].alter.isr = {} /\ spent.alters < ALTERS

\* the leader proposes to remove a follower that is not caught up with it (or that it does not hear from)
Shrink(r, f) ==
    /\ MayAlter(r, f) /\ f \in replicas[r].isr
    /\ ~(replicas[f].alive /\ Counts(r, f) /\ Len(replicas[f].log) = Len(replicas[r].log))
    /\ replicas' = [replicas EXCEPT ![r].alter = [NoAlter EXCEPT !.isr = replicas[r].isr \ {f}]]
    /\ spent' = [spent EXCEPT !.alters = @ + 1]
    /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked>>

\* the leader proposes to add a follower that caught up to its HW and to its epoch start (KIP-101)
Expand(r, f) ==
    /\ MayAlter(r, f) /\ f \notin replicas[r].isr
    /\ replicas[f].alive /\ Counts(r, f)
    /\ Len(replicas[f].log) >= replicas[r].hw
    /\ ExpandWithoutEpochStart \/ Len(replicas[f].log) >= replicas[r].leso
    /\ replicas' = [replicas EXCEPT ![r].alter = [NoAlter EXCEPT !.isr = replicas[r].isr \cup {f}]]
    /\ spent' = [spent EXCEPT !.alters = @ + 1]
    /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked>>

\* a follower that must truncate asks its leader (OffsetsForLeaderEpoch) and truncates
Truncate(r) ==
    LET rep == replicas[r]
        cut == TruncationPoint(rep.log, rep.hw, replicas[rep.leader])
        done == TruncDone(rep, replicas[rep.leader], cut)
    IN /\ Follows(r) /\ rep.mustTruncate /\ FetchOk(r)
       /\ done \/ cut < Len(rep.log)
       /\ replicas' = [replicas EXCEPT ![r].log = SubSeq(@, 1, cut), ![r].hw = Min2(@, cut), ![r].mustTruncate = ~done]
       /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked, spent>>

\* KAFKA-14704 (behaviour only): a follower that must truncate takes the HW of the diverging fetch
\* response before it truncates
FetchHw(r) ==
    LET hw == FetchedHw(replicas[replicas[r].leader], Len(replicas[r].log))
    IN /\ Kafka14704HwBeforeTruncate
       /\ Follows(r) /\ replicas[r].mustTruncate /\ FetchOk(r)
       /\ hw # replicas[r].hw
       /\ replicas' = [replicas EXCEPT ![r].hw = hw]
       /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked, spent>>

\* a follower fetches the next record and the leader's HW, when that changes something
Fetch(r) ==
    LET rep == replicas[r]
        lr == replicas[rep.leader]
        log == IF Len(rep.log) < Len(lr.log) THEN Append(rep.log, lr.log[Len(rep.log) + 1]) ELSE rep.log
        hw == FetchedHw(lr, Len(log))
    IN /\ Follows(r) /\ ~rep.mustTruncate /\ FetchOk(r)
       /\ Len(log) # Len(rep.log) \/ hw # rep.hw
       /\ replicas' = [replicas EXCEPT ![r].log = log, ![r].hw = hw]
       /\ UNCHANGED <<controller, requests, zombie, nextRecord, committed, acked, spent>>

\* a running replica crashes; the controller sees its session expire: it leaves the ISR (and the
\* leadership), which needs a new leader epoch
Crash(r) ==
    /\ replicas[r].alive /\ spent.crashes < CRASHES
    /\ r \notin controller.isr \/ controller.leaderEpoch < EPOCHS
    /\ replicas' = [replicas EXCEPT ![r].alive = FALSE]
    /\ spent' = [spent EXCEPT !.crashes = @ + 1]
    /\ IF r \in controller.isr
       THEN LET isr == controller.isr \ {r}
                c == [controller EXCEPT !.leader = IF @ = r THEN NoLeader ELSE @, !.leaderEpoch = @ + 1,
                                        !.isr = isr, !.elr = NewElr(controller.isr, isr, controller.elr),
                                        !.partitionEpoch = @ + 1]
            IN /\ controller' = c
               /\ requests' = requests \cup {RequestFrom(c)}
       ELSE UNCHANGED <<controller, requests>>
    /\ UNCHANGED <<zombie, nextRecord, committed, acked>>

\* the controller elects a running ISR member, or an ELR member when the ISR is empty (KIP-966)
Elect(r) ==
    /\ ElectionAllowed /\ r # controller.leader /\ replicas[r].alive
    /\ r \in controller.isr \/ (controller.isr = {} /\ r \in controller.elr)
    /\ LET fromIsr == r \in controller.isr
           c == [controller EXCEPT !.leader = r, !.leaderEpoch = @ + 1, !.partitionEpoch = @ + 1,
                                   !.isr = IF fromIsr THEN @ ELSE {r}, !.elr = IF fromIsr THEN @ ELSE @ \ {r}]
       IN /\ controller' = c
          /\ requests' = requests \cup {RequestFrom(c)}
    /\ UNCHANGED <<replicas, zombie, nextRecord, committed, acked, spent>>

\* (unclean-election) no running ISR/ELR member: the controller elects any running replica
ElectUnclean(r) ==
    /\ ElectionAllowed /\ MaxUnclean > spent.unclean /\ controller.leader = NoLeader
    /\ replicas[r].alive
    /\ ~\E x \in controller.isr \cup controller.elr : replicas[x].alive
    /\ LET c == [controller EXCEPT !.leader = r, !.leaderEpoch = @ + 1, !.isr = {r}, !.elr = {},
                                   !.partitionEpoch = @ + 1]
       IN /\ controller' = c
          /\ requests' = requests \cup {RequestFrom(c)}
    /\ spent' = [spent EXCEPT !.unclean = @ + 1]
    /\ UNCHANGED <<replicas, zombie, nextRecord, committed, acked>>

\* a new controller takes over and tells every running broker its epoch (UpdateMetadata); the old
\* one lives on as a zombie with its view
CtrlFailover ==
    /\ spent.failovers < CTRL_FAILOVERS
    /\ zombie' = {RequestFrom(controller)}
    /\ controller' = [controller EXCEPT !.controllerEpoch = @ + 1]
    /\ replicas' = [r \in ReplicaIds |-> IF replicas[r].alive
                                         THEN [replicas[r] EXCEPT !.controllerEpoch = controller.controllerEpoch + 1]
                                         ELSE replicas[r]]
    /\ spent' = [spent EXCEPT !.failovers = @ + 1]
    /\ UNCHANGED <<requests, nextRecord, committed, acked>>

\* the zombie controller sends one LeaderAndIsr from its stale view, electing another running
\* member of the ISR it knows
ZombieElect(r) ==
    \E z \in zombie :
        /\ z.leaderEpoch < EPOCHS /\ r # z.leader /\ r \in z.isr /\ replicas[r].alive
        /\ requests' = requests \cup {[z EXCEPT !.leader = r, !.leaderEpoch = @ + 1, !.partitionEpoch = @ + 1]}
        /\ zombie' = {}
        /\ UNCHANGED <<replicas, controller, nextRecord, committed, acked, spent>>

Next ==
    \/ \E r \in ReplicaIds, keep \in 0 .. RECORDS : Restart(r, keep)
    \/ \E r \in ReplicaIds, q \in requests : Apply(r, q)
    \/ \E r \in ReplicaIds : Write(r)
    \/ \E r \in ReplicaIds : IncHw(r)
    \/ \E r \in ReplicaIds : AlterResp(r)
    \/ \E r \in ReplicaIds : CtrlAlter(r)
    \/ \E r, f \in ReplicaIds : Shrink(r, f)
    \/ \E r, f \in ReplicaIds : Expand(r, f)
    \/ \E r \in ReplicaIds : Truncate(r)
    \/ \E r \in ReplicaIds : FetchHw(r)
    \/ \E r \in ReplicaIds : Fetch(r)
    \/ \E r \in ReplicaIds : Crash(r)
    \/ \E r \in ReplicaIds : Elect(r)
    \/ \E r \in ReplicaIds : ElectUnclean(r)
    \/ CtrlFailover
    \/ \E r \in ReplicaIds : ZombieElect(r)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants (invariants/replication.py) *)

\* log has exactly committed's records at offsets below upto
Prefix(log, upto) == Len(log) >= upto /\ \A k \in 1 .. upto : log[k] = committed[k]
Holds(log, o, rec) == o < Len(log) /\ log[o + 1] = rec
Take(s, n) == [k \in 1 .. Min2(n, Len(s)) |-> s[k]]

\* every acks=all-acked record is in the current leader's log at its offset, and on some replica
IDur ==
    \A k \in 1 .. Len(acked) :
        /\ controller.leader # NoLeader => Holds(replicas[controller.leader].log, acked[k].offset, acked[k].record)
        /\ \E r \in ReplicaIds : Holds(replicas[r].log, acked[k].offset, acked[k].record)

\* the controller's leader holds every record below the true HW
ILc == controller.leader # NoLeader => Prefix(replicas[controller.leader].log, Len(committed))

\* every running ISR/ELR member holds every record below the true HW
ILcc == \A r \in controller.isr \cup controller.elr : replicas[r].alive => Prefix(replicas[r].log, Len(committed))

\* any two replicas agree on every offset below both HWs
ILm == \A i, j \in ReplicaIds :
          LET m == Min2(replicas[i].hw, replicas[j].hw)
          IN i < j /\ m > 0 => Take(replicas[i].log, m) = Take(replicas[j].log, m)

\* no leader exposes, below its HW, a record other than the one consumers read there
IHwm == \A r \in ReplicaIds : Leads(r) => Prefix(replicas[r].log, Min2(replicas[r].hw, Len(committed)))

\* a current leader at MinISR waits for every replica the controller may elect
IRqs ==
    controller.leader # NoLeader =>
        LET rep == replicas[controller.leader]
        IN (rep.leader = controller.leader /\ rep.leaderEpoch = controller.leaderEpoch /\ Cardinality(rep.isr) >= MinIsr)
           => (controller.isr \cup controller.elr) \subseteq Quorum(rep)

\* a leader is a member of its ISR
LeaderInIsr ==
    /\ controller.leader # NoLeader => controller.leader \in controller.isr
    /\ \A r \in ReplicaIds : replicas[r].leader = r => r \in replicas[r].isr

\* every HW is at most its replica's LEO and covers only committed records
HwBounds == \A r \in ReplicaIds : /\ replicas[r].hw <= Len(replicas[r].log)
                                  /\ replicas[r].hw <= Len(committed)
                                  /\ Prefix(replicas[r].log, replicas[r].hw)

\* leader epochs never decrease along a log
LogEpochsOrdered == \A r \in ReplicaIds : \A k \in 1 .. Len(replicas[r].log) - 1 :
                        replicas[r].log[k].epoch <= replicas[r].log[k + 1].epoch

\* a leader epoch names one leader: a running replica that names a leader at the controller's epoch names
\* the controller's leader, and two running replicas at the same epoch name the same leader
LeaderEpochNamesOneLeader ==
    /\ \A r \in ReplicaIds :
          (/\ replicas[r].alive /\ replicas[r].leader # NoLeader /\ replicas[r].leaderEpoch >= 0
           /\ replicas[r].leaderEpoch = controller.leaderEpoch) => replicas[r].leader = controller.leader
    /\ \A i, j \in ReplicaIds :
          (/\ replicas[i].alive /\ replicas[j].alive
           /\ replicas[i].leader # NoLeader /\ replicas[j].leader # NoLeader
           /\ replicas[i].leaderEpoch >= 0 /\ replicas[i].leaderEpoch = replicas[j].leaderEpoch)
          => replicas[i].leader = replicas[j].leader

\* (step) leader, partition and controller epochs never decrease, on any replica or the controller
IEpoch ==
    /\ \A r \in ReplicaIds : /\ replicas'[r].leaderEpoch >= replicas[r].leaderEpoch
                             /\ replicas'[r].partitionEpoch >= replicas[r].partitionEpoch
                             /\ replicas'[r].controllerEpoch >= replicas[r].controllerEpoch
    /\ controller'.leaderEpoch >= controller.leaderEpoch
    /\ controller'.partitionEpoch >= controller.partitionEpoch
    /\ controller'.controllerEpoch >= controller.controllerEpoch

\* the step invariant as a TLC property (PROPERTY in the .cfg)
AlwaysIEpoch == [][IEpoch]_vars
=============================================================================
