------------------------------ MODULE Replication ------------------------------
(***************************************************************************)
(* The abstract replication model of kverify (model/replication.py,        *)
(* registry name "replication"), stated in TLA+: one partition, replicas   *)
(* 0..REPLICAS-1, logs of records <<leader epoch, record id>>, HW, ISR     *)
(* with AlterPartition, a ZooKeeper-era controller with KIP-966's ELR,     *)
(* LeaderAndIsr requests kept in a set (any request with a higher leader   *)
(* epoch may be applied: delay, loss, duplication, reordering), follower   *)
(* truncation by OffsetsForLeaderEpoch, crashes, lossy restarts, unclean   *)
(* elections and controller failover with a zombie controller.             *)
(*                                                                         *)
(* It says exactly what model/replication.py says (the Python docstring    *)
(* gives the Kafka references); tests/test_specs.py and                    *)
(* tests/test_tlc_crosscheck.py keep the two in step.  Naming conventions  *)
(* are those of GroupMembership.tla (kverify/tla/names.py): actions and    *)
(* invariants in CamelCase (inc_hw <-> IncHw, i-dur <-> IDur), parameters  *)
(* in upper case (min_isr <-> MIN_ISR), behaviours in CamelCase            *)
(* (isr-shrinks-to-leader-min-isr-1 <-> IsrShrinksToLeaderMinIsr1).  The   *)
(* model parameter `symmetry` is not a constant: TLC's counterpart is a    *)
(* SYMMETRY line in the .cfg, and the cross-check runs both sides without. *)
(*                                                                         *)
(* Representation: Python bitmasks are sets of replicas; offsets are       *)
(* 0-based as in Python, so the record at offset o of log l is l[o + 1];   *)
(* -1 stands for "none" as in Python (no leader, no LESO).  A pending      *)
(* AlterPartition is a record [isr, applied, stale]; NoPend (all empty) is *)
(* the Python value 0.  The zombie controller is NoZombie (<<>>) when      *)
(* there is none.                                                          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    REPLICAS, RECORDS, EPOCHS, MIN_ISR, INIT_ISR, ALTERS, CRASHES, LOSSY, CTRL_FAILOVERS, UNCLEAN,
    \* historical behaviours (BOOLEAN)
    TruncateToHw, OfleOffsetOnly, SkipTruncateSameLeader, NoFetchEpochFencing,
    ExpandWithoutEpochStart, NoMaximalIsr, NoBrokerEpochCheck, UncleanElection,
    IsrShrinksToLeaderMinIsr1, HwIgnoresMinIsr, StaleControllerAccepted, Kafka14704HwBeforeTruncate

VARIABLES reps, ctrl, reqs, zombie, hist

modelVars == <<reps, ctrl, reqs, zombie, hist>>

Reps == 0 .. REPLICAS - 1
NoLeader == -1
NoPend == [isr |-> {}, applied |-> FALSE, stale |-> FALSE]
NoZombie == <<>>

Min2(a, b) == IF a < b THEN a ELSE b
MinOf(S) == CHOOSE x \in S : \A y \in S : x <= y
MaxOf(S) == CHOOSE x \in S : \A y \in S : x >= y

MinIsr == IF IsrShrinksToLeaderMinIsr1 THEN 1 ELSE Min2(MIN_ISR, REPLICAS)
MaxUnclean == IF UncleanElection THEN UNCLEAN ELSE 0
InitIsr == IF INIT_ISR = 0 THEN Reps ELSE 0 .. INIT_ISR - 1

\* since: the leader epoch since which the replica has led without interruption (-1: not
\* leading); its produce requests of those epochs still wait for the HW
Rep(alive, log, hw, ep, pep, cep, ldr, trunc, isr, pend, leso, since) ==
    [alive |-> alive, log |-> log, hw |-> hw, ep |-> ep, pep |-> pep, cep |-> cep, ldr |-> ldr,
     trunc |-> trunc, isr |-> isr, pend |-> pend, leso |-> leso, since |-> since]
Ctrl(ldr, ep, isr, elr, pep, cep) ==
    [ldr |-> ldr, ep |-> ep, isr |-> isr, elr |-> elr, pep |-> pep, cep |-> cep]
Req(ldr, ep, isr, pep, cep) == [ldr |-> ldr, ep |-> ep, isr |-> isr, pep |-> pep, cep |-> cep]

ReplInit ==
    /\ reps = [r \in Reps |-> IF r = 0 THEN Rep(TRUE, <<>>, 0, 0, 0, 0, 0, FALSE, InitIsr, NoPend, 0, 0)
                              ELSE Rep(TRUE, <<>>, 0, 0, 0, 0, 0, FALSE, {}, NoPend, -1, -1)]
    /\ ctrl = Ctrl(0, 0, InitIsr, {}, 0, 0)
    /\ reqs = {Req(0, 0, InitIsr, 0, 0)}
    /\ zombie = NoZombie
    /\ hist = [next |-> 1, committed |-> <<>>, acked |-> <<>>, crashes |-> 0, lossy |-> 0,
               unclean |-> 0, alters |-> 0, failovers |-> 0]

-----------------------------------------------------------------------------
(* Leader epoch caches and the OffsetsForLeaderEpoch answer (KIP-101/279) *)

RECURSIVE EntriesFrom(_, _, _)
EntriesFrom(log, o, last) ==
    IF o >= Len(log) THEN <<>>
    ELSE IF log[o + 1][1] # last
         THEN <<<<log[o + 1][1], o>>>> \o EntriesFrom(log, o + 1, log[o + 1][1])
         ELSE EntriesFrom(log, o + 1, last)

\* [<<epoch, start offset>>] in log order
EpochEntries(log) == EntriesFrom(log, 0, -1)

\* a leader's cache: its records' epochs plus (current epoch -> LESO)
LeaderEntries(rep) ==
    LET e == EpochEntries(rep.log)
    IN IF rep.leso >= 0 /\ (e = <<>> \/ e[Len(e)][1] < rep.ep)
       THEN Append(e, <<rep.ep, rep.leso>>) ELSE e

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

-----------------------------------------------------------------------------
(* Helpers *)

\* the replicas a leader waits for (HW, acks): its maximal ISR (committed + proposed)
Quorum(rep) == IF rep.pend # NoPend /\ ~NoMaximalIsr THEN rep.isr \cup rep.pend.isr ELSE rep.isr

\* leader r knows follower f's LEO (f fetched from r in r's epoch, after truncating)
Counts(rs, r, f) ==
    /\ rs[f].ldr = r /\ ~rs[f].trunc
    /\ NoFetchEpochFencing \/ rs[f].ep = rs[r].ep

FetchOk(rs, f) ==
    LET ldr == rs[f].ldr
    IN /\ ldr >= 0 /\ ldr # f /\ rs[f].alive
       /\ rs[ldr].alive /\ rs[ldr].ldr = ldr
       /\ NoFetchEpochFencing \/ rs[ldr].ep = rs[f].ep

HwCandidate(rs, r) ==
    LET leos == {IF Counts(rs, r, f) THEN Len(rs[f].log) ELSE 0 : f \in Quorum(rs[r]) \ {r}}
    IN MinOf(leos \cup {Len(rs[r].log)})

\* KIP-966: members removed while the ISR is below MinISR join the ELR
NewElr(oldIsr, newIsr, elr) ==
    IF Cardinality(newIsr) >= MinIsr THEN {} ELSE (elr \cup (oldIsr \ newIsr)) \ newIsr

\* the replica's state after it applies a LeaderAndIsr (leader ldr, epoch ep)
Become(rep, r, ldr, ep, isr, pep, cep) ==
    IF ldr = r THEN Rep(TRUE, rep.log, rep.hw, ep, pep, cep, r, FALSE, isr, NoPend, Len(rep.log),
                        IF rep.ldr = r /\ rep.since >= 0 THEN rep.since ELSE ep)
    ELSE IF TruncateToHw
    THEN LET cut == Min2(rep.hw, Len(rep.log))
         IN Rep(TRUE, SubSeq(rep.log, 1, cut), cut, ep, pep, cep, ldr, FALSE, {}, NoPend, -1, -1)
    ELSE LET trunc == IF SkipTruncateSameLeader /\ ldr = rep.ldr /\ ldr # NoLeader THEN rep.trunc ELSE TRUE
         IN Rep(TRUE, rep.log, rep.hw, ep, pep, cep, ldr, trunc, {}, NoPend, -1, -1)

Take(s, n) == [k \in 1 .. Min2(n, Len(s)) |-> s[k]]

-----------------------------------------------------------------------------
(* Actions: one per Python action name; DoX is the effect, X adds the guard *)

WriteEnabled(r) ==
    /\ reps[r].alive /\ reps[r].ldr = r
    /\ hist.next <= RECORDS /\ Cardinality(reps[r].isr) >= MinIsr

DoWrite(r) ==
    /\ reps' = [reps EXCEPT ![r].log = Append(@, <<reps[r].ep, hist.next>>)]
    /\ hist' = [hist EXCEPT !.next = @ + 1]
    /\ UNCHANGED <<ctrl, reqs, zombie>>

Write(r) == WriteEnabled(r) /\ DoWrite(r)

IncHw(r) ==
    /\ reps[r].alive /\ reps[r].ldr = r
    /\ HwIgnoresMinIsr \/ Cardinality(reps[r].isr) >= MinIsr
    /\ HwCandidate(reps, r) > reps[r].hw
    /\ LET rep == reps[r]
           new == HwCandidate(reps, r)
           add == SelectSeq([k \in 1 .. new - rep.hw |-> <<rep.hw + k - 1, rep.log[rep.hw + k]>>],
                            LAMBDA a : a[2][1] >= rep.since)
           acked == IF Cardinality(Quorum(rep)) >= MinIsr THEN hist.acked \o add ELSE hist.acked
           c == hist.committed
           committed == IF new > Len(c) THEN c \o SubSeq(rep.log, Len(c) + 1, new) ELSE c
       IN /\ reps' = [reps EXCEPT ![r].hw = new]
          /\ hist' = [hist EXCEPT !.committed = committed, !.acked = acked]
          /\ UNCHANGED <<ctrl, reqs, zombie>>

AlterEnabled(r) ==
    /\ reps[r].alive /\ reps[r].ldr = r
    /\ reps[r].pend = NoPend /\ hist.alters < ALTERS

Shrink(r, f) ==
    /\ AlterEnabled(r) /\ f # r /\ f \in reps[r].isr
    /\ ~(reps[f].alive /\ Counts(reps, r, f) /\ Len(reps[f].log) = Len(reps[r].log))
    /\ reps' = [reps EXCEPT ![r].pend = [isr |-> reps[r].isr \ {f}, applied |-> FALSE, stale |-> FALSE]]
    /\ hist' = [hist EXCEPT !.alters = @ + 1]
    /\ UNCHANGED <<ctrl, reqs, zombie>>

Expand(r, f) ==
    /\ AlterEnabled(r) /\ f # r /\ f \notin reps[r].isr
    /\ reps[f].alive /\ Counts(reps, r, f)
    /\ Len(reps[f].log) >= reps[r].hw
    /\ ExpandWithoutEpochStart \/ Len(reps[f].log) >= reps[r].leso
    /\ reps' = [reps EXCEPT ![r].pend = [isr |-> reps[r].isr \cup {f}, applied |-> FALSE, stale |-> FALSE]]
    /\ hist' = [hist EXCEPT !.alters = @ + 1]
    /\ UNCHANGED <<ctrl, reqs, zombie>>

\* the controller handles the leader's AlterPartition
CtrlAlter(r) ==
    /\ reps[r].alive /\ reps[r].ldr = r
    /\ reps[r].pend # NoPend /\ ~reps[r].pend.applied
    /\ LET rep == reps[r]
           prop == rep.pend.isr
           added == prop \ ctrl.isr
           ok == /\ ctrl.ldr = r /\ ctrl.ep = rep.ep /\ ctrl.pep = rep.pep
                 /\ ~rep.pend.stale
                 /\ \A f \in added : reps[f].alive
       IN IF ~ok   \* FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION / INELIGIBLE_REPLICA: roll back
          THEN /\ reps' = [reps EXCEPT ![r].pend = NoPend]
               /\ UNCHANGED <<ctrl, reqs, zombie, hist>>
          ELSE /\ ctrl' = Ctrl(ctrl.ldr, ctrl.ep, prop, NewElr(ctrl.isr, prop, ctrl.elr), ctrl.pep + 1, ctrl.cep)
               /\ reps' = [reps EXCEPT ![r].pend = [isr |-> prop, applied |-> TRUE, stale |-> FALSE]]
               /\ UNCHANGED <<reqs, zombie, hist>>

\* the leader learns that its AlterPartition was applied
AlterResp(r) ==
    /\ reps[r].alive /\ reps[r].ldr = r
    /\ reps[r].pend.applied
    /\ reps' = [reps EXCEPT ![r].pep = @ + 1, ![r].isr = reps[r].pend.isr, ![r].pend = NoPend]
    /\ UNCHANGED <<ctrl, reqs, zombie, hist>>

\* whether, after truncating to cut, the leader stops reporting a diverging epoch (KAFKA-10554;
\* otherwise the follower keeps truncating instead of fetching and is not counted, KAFKA-13141)
TruncDone(rep, lrep, cut) ==
    IF OfleOffsetOnly \/ cut = 0 THEN TRUE
    ELSE LET ef == rep.log[cut][1]
             ans == EndOffsetFor(LeaderEntries(lrep), Len(lrep.log), ef)
         IN ans # <<>> /\ ans[1] = ef /\ ans[2] >= cut

Truncate(r) ==
    /\ reps[r].alive /\ reps[r].ldr # r
    /\ reps[r].trunc /\ FetchOk(reps, r)
    /\ LET rep == reps[r]
           cut == TruncationPoint(rep.log, rep.hw, reps[rep.ldr])
           done == TruncDone(rep, reps[rep.ldr], cut)
       IN /\ done \/ cut < Len(rep.log)
          /\ reps' = [reps EXCEPT ![r].log = SubSeq(rep.log, 1, cut), ![r].hw = Min2(rep.hw, cut),
                                  ![r].trunc = ~done]
    /\ UNCHANGED <<ctrl, reqs, zombie, hist>>

\* the HW a follower whose LEO is leo takes from a fetch response of leader lrep
FetchedHw(lrep, leo) == Min2(lrep.hw, leo)

Fetch(r) ==
    /\ reps[r].alive /\ reps[r].ldr # r
    /\ ~reps[r].trunc /\ FetchOk(reps, r)
    /\ LET rep == reps[r]
           lr == reps[rep.ldr]
           log == IF Len(rep.log) < Len(lr.log) THEN Append(rep.log, lr.log[Len(rep.log) + 1]) ELSE rep.log
           hw == FetchedHw(lr, Len(log))
       IN /\ Len(log) # Len(rep.log) \/ hw # rep.hw
          /\ reps' = [reps EXCEPT ![r].log = log, ![r].hw = hw]
    /\ UNCHANGED <<ctrl, reqs, zombie, hist>>

\* KAFKA-14704: a follower that must truncate takes the leader's HW from the diverging fetch
\* response before truncating
FetchHw(r) ==
    /\ Kafka14704HwBeforeTruncate
    /\ reps[r].alive /\ reps[r].ldr # r
    /\ reps[r].trunc /\ FetchOk(reps, r)
    /\ LET hw == FetchedHw(reps[reps[r].ldr], Len(reps[r].log))
       IN /\ hw # reps[r].hw
          /\ reps' = [reps EXCEPT ![r].hw = hw]
    /\ UNCHANGED <<ctrl, reqs, zombie, hist>>

\* a replica applies a LeaderAndIsr request q (any with a higher leader epoch)
Apply(r, q) ==
    /\ reps[r].alive
    /\ q.ep > reps[r].ep /\ (StaleControllerAccepted \/ q.cep >= reps[r].cep)
    /\ reps' = [reps EXCEPT ![r] = Become(reps[r], r, q.ldr, q.ep, q.isr, q.pep,
                                          IF q.cep > reps[r].cep THEN q.cep ELSE reps[r].cep)]
    /\ UNCHANGED <<ctrl, reqs, zombie, hist>>

\* the controller sees the session expire: shrink, maybe lose the leader
Crash(r) ==
    /\ reps[r].alive /\ hist.crashes < CRASHES
    /\ r \notin ctrl.isr \/ ctrl.ep < EPOCHS
    /\ reps' = [reps EXCEPT ![r].alive = FALSE]
    /\ hist' = [hist EXCEPT !.crashes = @ + 1]
    /\ IF r \in ctrl.isr
       THEN LET isr == ctrl.isr \ {r}
                ldr == IF ctrl.ldr = r THEN NoLeader ELSE ctrl.ldr
            IN /\ ctrl' = Ctrl(ldr, ctrl.ep + 1, isr, NewElr(ctrl.isr, isr, ctrl.elr), ctrl.pep + 1, ctrl.cep)
               /\ reqs' = reqs \cup {Req(ldr, ctrl.ep + 1, isr, ctrl.pep + 1, ctrl.cep)}
       ELSE UNCHANGED <<ctrl, reqs>>
    /\ UNCHANGED zombie

\* a crashed replica restarts keeping the first `keep` records of its log
Restart(r, keep) ==
    /\ ~reps[r].alive
    /\ keep \in 0 .. Len(reps[r].log)
    /\ keep = Len(reps[r].log) \/ hist.lossy < LOSSY
    /\ LET rep == reps[r]
           lossy == keep < Len(rep.log)
           log == SubSeq(rep.log, 1, keep)
           hw == Min2(rep.hw, keep)
           c1 == IF lossy /\ r \in ctrl.isr \cup ctrl.elr   \* unclean shutdown detected (KAFKA-15586)
                 THEN [ctrl EXCEPT !.isr = @ \ {r}, !.elr = @ \ {r}] ELSE ctrl
           cep == IF rep.cep > c1.cep THEN rep.cep ELSE c1.cep
           \* the restarted broker registers with a new broker epoch (KIP-903)
           rs1 == IF NoBrokerEpochCheck THEN reps
                  ELSE [x \in Reps |-> IF reps[x].pend # NoPend /\ ~reps[x].pend.applied
                                          /\ r \in reps[x].pend.isr \ reps[x].isr
                                       THEN [reps[x] EXCEPT !.pend.stale = TRUE] ELSE reps[x]]
           base == Rep(TRUE, log, hw, rep.ep, rep.pep, cep, NoLeader, TRUE, {}, NoPend, -1, -1)
           nrep == IF c1.ep >= rep.ep
                   THEN Become(base, r, IF c1.ldr = r THEN NoLeader ELSE c1.ldr, c1.ep, c1.isr, c1.pep, cep)
                   ELSE base
       IN /\ reps' = [rs1 EXCEPT ![r] = nrep]
          /\ ctrl' = c1
          /\ hist' = IF lossy THEN [hist EXCEPT !.lossy = @ + 1] ELSE hist
    /\ UNCHANGED <<reqs, zombie>>

\* EPOCHS caps the elections that move a live leader; an offline partition may still get one
\* recovery election
ElectionAllowed == ctrl.ep < EPOCHS \/ (ctrl.ldr = NoLeader /\ ctrl.ep = EPOCHS)

Elect(r) ==
    /\ ElectionAllowed /\ r # ctrl.ldr /\ reps[r].alive
    /\ r \in ctrl.isr \/ (ctrl.isr = {} /\ r \in ctrl.elr)
    /\ LET isr == IF r \in ctrl.isr THEN ctrl.isr ELSE {r}
           elr == IF r \in ctrl.isr THEN ctrl.elr ELSE ctrl.elr \ {r}
       IN /\ ctrl' = Ctrl(r, ctrl.ep + 1, isr, elr, ctrl.pep + 1, ctrl.cep)
          /\ reqs' = reqs \cup {Req(r, ctrl.ep + 1, isr, ctrl.pep + 1, ctrl.cep)}
    /\ UNCHANGED <<reps, zombie, hist>>

ElectUnclean(r) ==
    /\ ElectionAllowed /\ MaxUnclean > hist.unclean /\ ctrl.ldr = NoLeader
    /\ ~\E x \in ctrl.isr \cup ctrl.elr : reps[x].alive
    /\ reps[r].alive
    /\ ctrl' = Ctrl(r, ctrl.ep + 1, {r}, {}, ctrl.pep + 1, ctrl.cep)
    /\ reqs' = reqs \cup {Req(r, ctrl.ep + 1, {r}, ctrl.pep + 1, ctrl.cep)}
    /\ hist' = [hist EXCEPT !.unclean = @ + 1]
    /\ UNCHANGED <<reps, zombie>>

\* a new controller takes over; the old one lives on as a zombie with its view
CtrlFailover ==
    /\ hist.failovers < CTRL_FAILOVERS
    /\ zombie' = Req(ctrl.ldr, ctrl.ep, ctrl.isr, ctrl.pep, ctrl.cep)
    /\ ctrl' = [ctrl EXCEPT !.cep = @ + 1]
    /\ reps' = [r \in Reps |-> IF reps[r].alive THEN [reps[r] EXCEPT !.cep = ctrl.cep + 1] ELSE reps[r]]
    /\ hist' = [hist EXCEPT !.failovers = @ + 1]
    /\ UNCHANGED reqs

\* the zombie controller sends one LeaderAndIsr from its stale view
ZombieElect(r) ==
    /\ zombie # NoZombie /\ zombie.ep < EPOCHS
    /\ r # zombie.ldr /\ r \in zombie.isr /\ reps[r].alive
    /\ reqs' = reqs \cup {Req(r, zombie.ep + 1, zombie.isr, zombie.pep + 1, zombie.cep)}
    /\ zombie' = NoZombie
    /\ UNCHANGED <<reps, ctrl, hist>>

Init == ReplInit

Next ==
    \/ \E r \in Reps : Write(r)
    \/ \E r \in Reps, q \in reqs : Apply(r, q)
    \/ \E r \in Reps : IncHw(r)
    \/ \E r \in Reps : AlterResp(r)
    \/ \E r \in Reps : CtrlAlter(r)
    \/ \E r, f \in Reps : Shrink(r, f)
    \/ \E r, f \in Reps : Expand(r, f)
    \/ \E r \in Reps : Truncate(r)
    \/ \E r \in Reps : Fetch(r)
    \/ \E r \in Reps : FetchHw(r)
    \/ \E r \in Reps : Crash(r)
    \/ \E r \in Reps, keep \in 0 .. RECORDS : Restart(r, keep)
    \/ \E r \in Reps : Elect(r)
    \/ \E r \in Reps : ElectUnclean(r)
    \/ CtrlFailover
    \/ \E r \in Reps : ZombieElect(r)

Spec == Init /\ [][Next]_modelVars

-----------------------------------------------------------------------------
(* Invariants (invariants/replication.py) *)

\* log has exactly committed's records at offsets below upto
Prefix(log, committed, upto) == Len(log) >= upto /\ \A k \in 1 .. upto : log[k] = committed[k]
Holds(log, o, rec) == o < Len(log) /\ log[o + 1] = rec

\* every acks=all-acked record is in the current leader's log at its offset, and on some replica
IDur ==
    \A k \in 1 .. Len(hist.acked) :
        LET o == hist.acked[k][1]
            rec == hist.acked[k][2]
        IN /\ ctrl.ldr # NoLeader => Holds(reps[ctrl.ldr].log, o, rec)
           /\ \E r \in Reps : Holds(reps[r].log, o, rec)

\* the controller's leader holds every record below the true HW
ILc == ctrl.ldr # NoLeader => Prefix(reps[ctrl.ldr].log, hist.committed, Len(hist.committed))

\* every running ISR/ELR member holds every record below the true HW
ILcc == \A r \in ctrl.isr \cup ctrl.elr :
            reps[r].alive => Prefix(reps[r].log, hist.committed, Len(hist.committed))

\* any two replicas agree on every offset below both HWs
ILm == \A i, j \in Reps :
          LET m == Min2(reps[i].hw, reps[j].hw)
          IN i < j /\ m > 0 => Take(reps[i].log, m) = Take(reps[j].log, m)

\* no leader exposes, below its HW, a record other than the one consumers read there
IHwm == \A r \in Reps :
           (reps[r].ldr = r /\ reps[r].alive)
           => Prefix(reps[r].log, hist.committed, Min2(reps[r].hw, Len(hist.committed)))

\* a current leader at MinISR waits for every replica the controller may elect
IRqs ==
    ctrl.ldr # NoLeader =>
        LET rep == reps[ctrl.ldr]
        IN (rep.ldr = ctrl.ldr /\ rep.ep = ctrl.ep /\ Cardinality(rep.isr) >= MinIsr)
           => (ctrl.isr \cup ctrl.elr) \subseteq Quorum(rep)

\* a leader is a member of its ISR
LeaderInIsr ==
    /\ ctrl.ldr # NoLeader => ctrl.ldr \in ctrl.isr
    /\ \A r \in Reps : reps[r].ldr = r => r \in reps[r].isr

\* every HW is at most its replica's LEO and covers only committed records (its log agrees with
\* what consumers read below it)
HwBounds == \A r \in Reps : /\ reps[r].hw <= Len(reps[r].log)
                            /\ reps[r].hw <= Len(hist.committed)
                            /\ Prefix(reps[r].log, hist.committed, reps[r].hw)

\* leader epochs never decrease along a log
LogEpochsOrdered == \A r \in Reps : \A k \in 1 .. Len(reps[r].log) - 1 :
                        reps[r].log[k][1] <= reps[r].log[k + 1][1]

\* (step) leader, partition and controller epochs never decrease on any replica
IEpoch ==
    /\ \A r \in Reps : reps'[r].ep >= reps[r].ep /\ reps'[r].pep >= reps[r].pep /\ reps'[r].cep >= reps[r].cep
    /\ ctrl'.ep >= ctrl.ep /\ ctrl'.pep >= ctrl.pep /\ ctrl'.cep >= ctrl.cep

\* the step invariant as a TLC property (PROPERTY in the .cfg)
AlwaysIEpoch == [][IEpoch]_modelVars
=============================================================================
