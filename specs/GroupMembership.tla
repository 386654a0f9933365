--------------------------- MODULE GroupMembership ---------------------------
(***************************************************************************)
(* The abstract group model of kverify (model/group.py, registry name      *)
(* "group"), stated in TLA+: classic-protocol membership, rebalancing and  *)
(* offset commits, each request handled atomically with its response.      *)
(*                                                                         *)
(* This module says exactly what model/group.py says; tests/test_specs.py  *)
(* checks that its variables, the actions named in Next and the invariant  *)
(* operators match the Python model, and tests/test_tlc_crosscheck.py that *)
(* TLC finds the same number of distinct states and the same verdicts as   *)
(* the kverify explorer (symmetry off on both sides).                      *)
(*                                                                         *)
(* Names: an action operator is the Python action name in CamelCase        *)
(* (join_timeout <-> JoinTimeout); an invariant operator is the kverify    *)
(* invariant name in CamelCase (committed-offset-safety <->                *)
(* CommittedOffsetSafety); a constant is a model parameter in upper case  *)
(* (max_generation <-> MAX_GENERATION) or a historical behaviour in        *)
(* CamelCase (kafka-12890-no-sync-barrier <-> Kafka12890NoSyncBarrier).    *)
(* The mapping lives in kverify/tla/names.py.                              *)
(*                                                                         *)
(* Representation: member slots 0..MEMBERS-1 and partitions                *)
(* 0..PARTITIONS-1; the Python bitmasks are sets here; "no assignment"     *)
(* (Python None) is NoAsg, the empty function <<>>; -1 stands for "none"   *)
(* as in Python.  The two history variables `passed` (group states entered *)
(* inside the last step) and `accepted` (commits acknowledged by the last  *)
(* step) feed the step invariants; the VIEW in every .cfg leaves them out, *)
(* so TLC counts the same distinct states as the Python explorer.          *)
(* A commit is sent (Commit) and handled later (CommitArrives): a client's *)
(* `inflight` is <<generation, partitions>> or NoCommit.  AllowedEnd (a    *)
(* stutter in QuiescentGood states) + TLC's deadlock check = the explorer's *)
(* `deadlock` check (model/group.py allows_terminal).                      *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    MEMBERS, PARTITIONS, EVENTS, FAULTS, COMMITS, MAX_GENERATION, FAILOVER, ADMIN,
    \* historical behaviours (BOOLEAN)
    StaleGenerationCommit, NoGenerationBump, LeaderNotReelected,
    Kafka12890NoSyncBarrier, UncleanElection

VARIABLES coord, clients, offsets, persisted, budget, delivered, prev,
          passed, accepted

vars == <<coord, clients, offsets, persisted, budget, delivered, prev, passed, accepted>>
modelVars == <<coord, clients, offsets, persisted, budget, delivered, prev>>

Slots == 0 .. MEMBERS - 1
Parts == 0 .. PARTITIONS - 1
NoAsg == <<>>
NoPrev == <<>>
Unclean == UncleanElection /\ FAILOVER

\* group states as the invariants see them, plus the coordinator's internal
\* "PreparingRebalance entered from Empty" (initial delay running)
Empty == "Empty"
Preparing == "PreparingRebalance"
Completing == "CompletingRebalance"
Stable == "Stable"
Dead == "Dead"
PrepInitial == "PreparingInitial"

\* client statuses and flags
Down == "down"
Idle == "idle"
Joining == "joining"
Syncing == "syncing"
SyncWait == "sync-wait"
CStable == "stable"
Run == "running"
Paused == "paused"
Stalled == "stalled"

\* inflight: <<generation, partitions>> of an OffsetCommit on its way, or NoCommit
NoCommit == <<>>
Client(st, g, owned, flag, acted, inflight) ==
    [st |-> st, gen |-> g, owned |-> owned, flag |-> flag, acted |-> acted, inflight |-> inflight]
DownClient == Client(Down, -1, {}, Run, -1, NoCommit)

Min(S) == CHOOSE x \in S : \A y \in S : x <= y
Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Upd(f, k, v) == [f EXCEPT ![k] = v]

-----------------------------------------------------------------------------
(* Initial state *)
InitCoord == [state |-> Empty, gen |-> 0, leader |-> -1, members |-> {}, awaiting |-> {},
              syncwait |-> {}, pending |-> {}, assign |-> NoAsg, epoch |-> 0]
InitPersisted == [gen |-> 0, members |-> {}, leader |-> -1, assign |-> NoAsg]

Init ==
    /\ coord = InitCoord
    /\ clients = [m \in Slots |-> DownClient]
    /\ offsets = [q \in Parts |-> 0]
    /\ persisted = InitPersisted
    \* commitGen: highest generation under which a member commit was accepted (a ghost the
    \* Python model keeps for a `sometimes` property; part of the state there, so here too)
    /\ budget = [events |-> EVENTS, faults |-> FAULTS, commits |-> COMMITS, commitGen |-> 0]
    /\ delivered = <<>>
    /\ prev = IF Unclean THEN [persisted |-> InitPersisted, offsets |-> [q \in Parts |-> 0]]
              ELSE NoPrev
    /\ passed = <<>>
    /\ accepted = <<>>

-----------------------------------------------------------------------------
(* Coordinator rules, on a "world" record w (the model's state plus `rec`, *)
(* the group states entered during the step), as model/group.py does them. *)

World == [coord |-> coord, clients |-> clients, offsets |-> offsets, persisted |-> persisted,
          budget |-> budget, delivered |-> delivered, prev |-> prev, rec |-> <<>>]

SetCoord(w, c) == [w EXCEPT !.coord = c]
SetClient(w, m, c) == [w EXCEPT !.clients[m] = c]

\* Some member in S will not answer by itself (crashed, paused or stalled).
Unresponsive(cl, S) == \E i \in S : cl[i].st = Down \/ cl[i].flag # Run

HeartbeatError(c, m, cg) ==
    \/ m \notin c.members
    \/ cg # c.gen
    \/ c.state \in {Preparing, PrepInitial}

\* OffsetCommit from slot m carrying generation cg (coordinator.md 7.1.2); with
\* StaleGenerationCommit an older generation of a current member lands (the bug)
CommitVerdict(c, m, cg) ==
    IF m \notin c.members THEN "UNKNOWN_MEMBER_ID"
    ELSE IF cg # c.gen /\ ~(StaleGenerationCommit /\ 0 <= cg /\ cg < c.gen) THEN "ILLEGAL_GENERATION"
    ELSE IF c.state = Completing THEN "REBALANCE_IN_PROGRESS"
    ELSE "NONE"

\* leave / expiry: the leader moves to the lowest remaining member
Remove(c, m) ==
    LET ms == c.members \ {m}
        ld == IF c.leader = m /\ ~LeaderNotReelected
              THEN IF ms # {} THEN Min(ms) ELSE -1
              ELSE c.leader
    IN [c EXCEPT !.members = ms, !.leader = ld, !.awaiting = @ \ {m},
                 !.syncwait = @ \ {m}, !.pending = @ \ {m}]

\* prepareRebalance: parked SyncGroups get REBALANCE_IN_PROGRESS (client -> idle)
Prepare(w) ==
    LET c == w.coord
        cl == IF c.state = Completing
              THEN [i \in Slots |-> IF i \in c.syncwait /\ w.clients[i].st = SyncWait
                                    THEN [w.clients[i] EXCEPT !.st = Idle, !.owned = {}]
                                    ELSE w.clients[i]]
              ELSE w.clients
        asg == IF c.state = Completing THEN NoAsg ELSE c.assign
        ns == IF c.state = Empty THEN PrepInitial ELSE Preparing
    IN [w EXCEPT !.coord = [c EXCEPT !.state = ns, !.syncwait = {}, !.pending = {}, !.assign = asg],
                 !.clients = cl, !.rec = Append(@, Preparing)]

Prune(dl, pers, pv) ==
    LET low == IF pv = NoPrev THEN pers.gen
               ELSE IF pers.gen < pv.persisted.gen THEN pers.gen ELSE pv.persisted.gen
    IN SelectSeq(dl, LAMBDA d : d[1] >= low)

\* onCompleteJoin: drop members that did not rejoin, bump the generation
Complete(w) ==
    LET c == w.coord
        ms == c.members \cap c.awaiting
        ld == IF c.leader < 0 \/ c.leader \notin ms
              THEN IF ms # {} THEN Min(ms)
                   ELSE IF ~LeaderNotReelected THEN -1 ELSE c.leader
              ELSE c.leader
        ng == IF NoGenerationBump THEN c.gen ELSE c.gen + 1
    IN IF ms = {}
       THEN LET record == [gen |-> ng, members |-> {}, leader |-> ld, assign |-> NoAsg]
                pv == IF Unclean THEN [persisted |-> w.persisted, offsets |-> w.offsets] ELSE w.prev
            IN [w EXCEPT !.coord = [state |-> Empty, gen |-> ng, leader |-> ld, members |-> {},
                                    awaiting |-> {}, syncwait |-> {}, pending |-> {},
                                    assign |-> NoAsg, epoch |-> c.epoch],
                         !.prev = pv, !.persisted = record,
                         !.delivered = Prune(w.delivered, record, pv),
                         !.rec = Append(@, Empty)]
       ELSE [w EXCEPT !.coord = [state |-> Completing, gen |-> ng, leader |-> ld, members |-> ms,
                                 awaiting |-> {}, syncwait |-> {}, pending |-> ms,
                                 assign |-> NoAsg, epoch |-> c.epoch],
                      !.clients = [i \in Slots |-> IF i \in ms /\ w.clients[i].st = Joining
                                                   THEN [w.clients[i] EXCEPT !.st = Syncing, !.gen = ng, !.owned = {}]
                                                   ELSE w.clients[i]],
                      !.rec = Append(@, Completing)]

MaybeComplete(w) ==
    IF w.coord.state = Preparing /\ w.coord.members \subseteq w.coord.awaiting
    THEN Complete(w) ELSE w

\* the leader assigns partition q to the (q mod k)-th member of the sorted member list
RECURSIVE SortedSeq(_)
SortedSeq(S) == IF S = {} THEN <<>> ELSE <<Min(S)>> \o SortedSeq(S \ {Min(S)})
AssignTo(ms) ==
    LET order == SortedSeq(ms)
    IN [i \in Slots |-> {q \in Parts : order[(q % Len(order)) + 1] = i}]

\* JoinGroup from slot m (known or new member), then completion if all rejoined
JoinW(w, m) ==
    LET c == w.coord
        cl == w.clients[m]
        joining == [cl EXCEPT !.st = Joining, !.owned = {}]
    IN MaybeComplete(
        IF m \in c.members
        THEN IF c.state \in {Preparing, PrepInitial}
             THEN SetClient(SetCoord(w, [c EXCEPT !.awaiting = @ \cup {m}]), m, joining)
             ELSE IF c.state = Stable /\ c.leader = m
             THEN LET w1 == Prepare(w)
                  IN SetClient([w1 EXCEPT !.coord.awaiting = @ \cup {m}], m, joining)
             ELSE SetClient(w, m, [cl EXCEPT !.st = Syncing, !.gen = c.gen, !.owned = {}])
        ELSE LET c1 == [c EXCEPT !.leader = IF c.leader < 0 THEN m ELSE c.leader,
                                 !.members = @ \cup {m}, !.awaiting = @ \cup {m}]
                 w1 == SetClient(SetCoord(w, c1), m, joining)
             IN IF c.state \in {Empty, Stable, Completing} THEN Prepare(w1) ELSE w1)

SyncW(w, m) ==
    LET c == w.coord
        cl == w.clients[m]
    IN IF m \notin c.members \/ cl.gen # c.gen \/ c.state \in {Preparing, PrepInitial}
       THEN SetClient(w, m, [cl EXCEPT !.st = Idle, !.owned = {}])
       ELSE IF c.state = Stable
       THEN SetClient(SetCoord(w, [c EXCEPT !.pending = @ \ {m}]), m,
                      [cl EXCEPT !.st = CStable, !.gen = c.gen, !.owned = c.assign[m], !.acted = c.gen])
       ELSE \* CompletingRebalance: park; the leader's SyncGroup persists and answers everyone parked
            LET sw == c.syncwait \cup {m}
                pd == c.pending \ {m}
                w1 == SetClient(w, m, [cl EXCEPT !.st = SyncWait, !.owned = {}])
            IN IF m # c.leader
               THEN SetCoord(w1, [c EXCEPT !.syncwait = sw, !.pending = pd])
               ELSE LET asg == AssignTo(c.members)
                        pv == IF Unclean THEN [persisted |-> w.persisted, offsets |-> w.offsets] ELSE w.prev
                        pers == [gen |-> c.gen, members |-> c.members, leader |-> c.leader, assign |-> asg]
                    IN [w1 EXCEPT
                          !.prev = pv, !.persisted = pers,
                          !.clients = [i \in Slots |-> IF i \in sw /\ w1.clients[i].st = SyncWait
                                                       THEN [w1.clients[i] EXCEPT !.st = CStable, !.gen = c.gen,
                                                                                  !.owned = asg[i], !.acted = c.gen]
                                                       ELSE w1.clients[i]],
                          !.delivered = Prune(Append(w.delivered, <<c.gen, asg>>), pers, pv),
                          !.coord = [c EXCEPT !.state = Stable, !.syncwait = {}, !.pending = pd, !.assign = asg]]

AfterRemoval(w) ==
    MaybeComplete(IF w.coord.state \in {Stable, Completing} THEN Prepare(w) ELSE w)

\* a coordinator (re)load of the group from a persisted record and offsets
Load(w, pers, offs) ==
    LET has == pers.members # {}
        pv == IF Unclean THEN [persisted |-> pers, offsets |-> offs] ELSE w.prev
    IN [w EXCEPT
          !.coord = [state |-> IF has THEN Stable ELSE Empty, gen |-> pers.gen,
                     leader |-> IF has THEN pers.leader ELSE -1, members |-> pers.members,
                     awaiting |-> {}, syncwait |-> {}, pending |-> {},
                     assign |-> IF has THEN pers.assign ELSE NoAsg, epoch |-> w.coord.epoch + 1],
          !.clients = [i \in Slots |-> IF w.clients[i].st \in {Joining, SyncWait}
                                       THEN [w.clients[i] EXCEPT !.st = Idle, !.owned = {}]
                                       ELSE w.clients[i]],
          !.offsets = offs, !.persisted = pers, !.prev = pv,
          !.delivered = Prune(w.delivered, pers, pv),
          !.budget.faults = @ - 1]

-----------------------------------------------------------------------------
(* Taking a step: the model variables from w; `passed` as the Python model's *)
(* step_views computes it; `accepted` given by the action.                  *)
AllButLast(s) == SubSeq(s, 1, Len(s) - 1)

Finish(w, acc) ==
    /\ coord' = w.coord
    /\ clients' = w.clients
    /\ offsets' = w.offsets
    /\ persisted' = w.persisted
    /\ budget' = w.budget
    /\ delivered' = w.delivered
    /\ prev' = w.prev
    /\ passed' = IF (w.coord.state # coord.state \/ w.coord.gen # coord.gen) /\ w.coord.epoch = coord.epoch
                 THEN AllButLast(w.rec) ELSE <<>>
    /\ accepted' = acc

EnvOk == coord.gen < MAX_GENERATION
NotParked(m) == m \in coord.members /\ m \notin (coord.awaiting \cup coord.syncwait)

-----------------------------------------------------------------------------
(* Actions: one per Python action name *)
Start(m) ==
    /\ clients[m].st = Down /\ budget.events > 0 /\ EnvOk /\ m \notin coord.members
    /\ Finish(JoinW([World EXCEPT !.clients[m] = Client(Idle, -1, {}, Run, -1, NoCommit),
                                  !.budget.events = @ - 1], m), <<>>)

Join(m) ==
    /\ clients[m].st = Idle /\ clients[m].flag = Run
    /\ Finish(JoinW(World, m), <<>>)

\* a stable client's heartbeat got an error; it drops its partitions and rejoins
Rejoin(m) ==
    /\ clients[m].st = CStable /\ clients[m].flag = Run
    /\ HeartbeatError(coord, m, clients[m].gen)
    /\ Finish(JoinW(World, m), <<>>)

Sync(m) ==
    /\ clients[m].st = Syncing /\ clients[m].flag = Run
    /\ Finish(SyncW(World, m), <<>>)

\* the application sends its positions under its generation; the request travels on its own
Commit(m) ==
    /\ clients[m].st = CStable /\ clients[m].flag = Run
    /\ clients[m].owned # {} /\ budget.commits > 0 /\ clients[m].inflight = NoCommit
    /\ Finish([World EXCEPT !.clients[m].inflight = <<clients[m].gen, clients[m].owned>>,
                            !.budget.commits = @ - 1], <<>>)

\* the coordinator handles the OffsetCommit in flight (possibly after the group moved on)
CommitArrives(m) ==
    /\ clients[m].inflight # NoCommit
    /\ LET cl == clients[m]
           sentGen == cl.inflight[1]
           parts == cl.inflight[2]
       IN IF CommitVerdict(coord, m, sentGen) # "NONE"
          THEN \* CommitFailed / RebalanceInProgress: a client still stable in that generation
               \* drops its partitions and rejoins; one that already moved on ignores the answer
               Finish([World EXCEPT !.clients[m] =
                          IF cl.st = CStable /\ cl.gen = sentGen
                          THEN [cl EXCEPT !.st = Idle, !.owned = {}, !.inflight = NoCommit]
                          ELSE [cl EXCEPT !.inflight = NoCommit]], <<>>)
          ELSE LET offs == [q \in Parts |-> IF q \in parts THEN offsets[q] + 1 ELSE offsets[q]]
               IN Finish([World EXCEPT !.offsets = offs, !.clients[m].inflight = NoCommit,
                                       !.budget.commitGen = IF sentGen > @ THEN sentGen ELSE @,
                                       !.prev = IF Unclean THEN [persisted |-> persisted, offsets |-> offsets]
                                                ELSE prev],
                         IF offs # offsets
                         THEN <<[member |-> m, gen |-> sentGen, parts |-> parts, reset |-> FALSE]>>
                         ELSE <<>>)

AdminReset(q) ==
    /\ ADMIN /\ budget.commits > 0 /\ coord.state = Empty /\ offsets[q] # 0
    /\ Finish([World EXCEPT !.offsets[q] = 0, !.budget.commits = @ - 1,
                            !.prev = IF Unclean THEN [persisted |-> persisted, offsets |-> offsets] ELSE prev],
              <<[member |-> -1, gen |-> -1, parts |-> {q}, reset |-> TRUE]>>)

Leave(m) ==
    /\ clients[m].st = CStable /\ clients[m].flag = Run
    /\ budget.events > 0 /\ EnvOk /\ m \in coord.members
    /\ Finish(AfterRemoval([World EXCEPT !.clients[m] = DownClient, !.coord = Remove(coord, m),
                                         !.budget.events = @ - 1]), <<>>)

\* session expiry of a crashed or paused member that is not parked in Join/Sync
Expire(m) ==
    /\ \/ clients[m].st = Down
       \/ clients[m].flag = Paused
    /\ NotParked(m)
    /\ Finish(AfterRemoval([World EXCEPT !.coord = Remove(coord, m)]), <<>>)

Crash(m) ==
    /\ budget.faults > 0 /\ EnvOk
    /\ clients[m].st # Down
    /\ Finish([World EXCEPT !.clients[m] = DownClient, !.budget.faults = @ - 1], <<>>)

Pause(m) ==
    /\ budget.faults > 0 /\ EnvOk
    /\ clients[m].st # Down /\ clients[m].flag = Run
    /\ Finish([World EXCEPT !.clients[m].flag = Paused, !.budget.faults = @ - 1], <<>>)

\* the process keeps heartbeating but never sends SyncGroup
Stall(m) ==
    /\ budget.faults > 0 /\ EnvOk
    /\ clients[m].st = Syncing /\ clients[m].flag = Run
    /\ Finish([World EXCEPT !.clients[m].flag = Stalled, !.budget.faults = @ - 1], <<>>)

Resume(m) ==
    /\ clients[m].st # Down /\ clients[m].flag = Paused
    /\ Finish([World EXCEPT !.clients[m].flag = Run], <<>>)

\* the (initial) join window ends: complete with whoever rejoined
JoinTimeout ==
    /\ \/ coord.state = PrepInitial
       \/ coord.state = Preparing /\ Unresponsive(clients, coord.members \ coord.awaiting)
    /\ Finish(Complete(World), <<>>)

\* pending-sync barrier expiry: remove members that never synced, rebalance
SyncTimeout ==
    /\ ~Kafka12890NoSyncBarrier
    /\ coord.state \in {Completing, Stable}
    /\ Unresponsive(clients, coord.pending)
    /\ LET pd == coord.pending
           ms == coord.members \ pd
           ld == IF coord.leader \in pd /\ ~LeaderNotReelected
                 THEN IF ms # {} THEN Min(ms) ELSE -1
                 ELSE coord.leader
           c1 == [coord EXCEPT !.members = ms, !.leader = ld, !.awaiting = @ \ pd,
                               !.syncwait = @ \ pd, !.pending = {}]
       IN Finish(MaybeComplete(Prepare([World EXCEPT !.coord = c1])), <<>>)

Failover ==
    /\ FAILOVER /\ budget.faults > 0 /\ EnvOk
    /\ Finish(Load(World, persisted, offsets), <<>>)

\* unclean election of the offsets partition: the last append is lost
UncleanFailover ==
    /\ FAILOVER /\ budget.faults > 0 /\ EnvOk
    /\ Unclean /\ prev # NoPrev /\ prev # [persisted |-> persisted, offsets |-> offsets]
    /\ Finish(Load(World, prev.persisted, prev.offsets), <<>>)

\* a settled, healthy state: every live process is a member, Stable with the whole
\* assignment (or no live process and an Empty group); paused processes are not settled
QuiescentGood ==
    LET live == {i \in Slots : clients[i].st # Down /\ clients[i].flag # Stalled}
    IN /\ ~\E i \in Slots : clients[i].st # Down /\ clients[i].flag = Paused
       /\ coord.members = live
       /\ IF live = {}
          THEN coord.state = Empty
          ELSE /\ coord.state = Stable /\ coord.pending = {} /\ coord.assign # NoAsg
               /\ \A i \in live : /\ clients[i].st = CStable /\ clients[i].gen = coord.gen
                                 /\ clients[i].owned = coord.assign[i]
               /\ UNION {coord.assign[i] : i \in live} = Parts

\* the explorer's `deadlock` check (model/group.py allows_terminal): a state without actions must
\* be settled and healthy. This stuttering step makes such a state a legal end for TLC, which then
\* runs WITH its deadlock check (kverify/tla/runner.py turns it on when Next has AllowedEnd).
AllowedEnd == QuiescentGood /\ UNCHANGED vars

Next ==
    \/ \E m \in Slots : Start(m)
    \/ \E m \in Slots : Join(m)
    \/ \E m \in Slots : Rejoin(m)
    \/ \E m \in Slots : Sync(m)
    \/ \E m \in Slots : Commit(m)
    \/ \E m \in Slots : CommitArrives(m)
    \/ \E q \in Parts : AdminReset(q)
    \/ \E m \in Slots : Leave(m)
    \/ \E m \in Slots : Expire(m)
    \/ \E m \in Slots : Crash(m)
    \/ \E m \in Slots : Pause(m)
    \/ \E m \in Slots : Stall(m)
    \/ \E m \in Slots : Resume(m)
    \/ JoinTimeout
    \/ SyncTimeout
    \/ Failover
    \/ UncleanFailover
    \/ AllowedEnd

Spec == Init /\ [][Next]_vars

\* TLC deduplicates states on the model's variables only (not the history variables)
ModelView == modelVars

-----------------------------------------------------------------------------
(* Invariants (invariants/group.py), over the group as the invariants view it *)
VState(c) == IF c.state = PrepInitial THEN Preparing ELSE c.state
Alive(cl) == cl.st # Down
CanCommit(c, i, cl) == cl.st = CStable /\ CommitVerdict(c, i, cl.gen) = "NONE"

\* no partition has two owners in a stored assignment, and no two live members
\* that can commit a partition consume it at once
ExclusiveOwnership ==
    /\ coord.assign # NoAsg =>
         \A i, j \in Slots : i < j => coord.assign[i] \cap coord.assign[j] = {}
    /\ \A i, j \in Slots :
         (i < j /\ Alive(clients[i]) /\ Alive(clients[j])
          /\ CanCommit(coord, i, clients[i]) /\ CanCommit(coord, j, clients[j]))
         => clients[i].owned \cap clients[j].owned = {}

\* the leader is a member, and a group with members has a leader
LeaderInMembers ==
    /\ coord.leader >= 0 => coord.leader \in coord.members
    /\ ~(coord.leader < 0 /\ coord.members # {})

\* (step) every accepted commit comes from the partition's owner in the current
\* generation (or a standalone consumer on an Empty group); acknowledged offsets
\* never go back without an explicit reset
CommittedOffsetSafety ==
    LET evs == {accepted'[k] : k \in 1 .. Len(accepted')}
        reset == UNION {ev.parts : ev \in {e \in evs : e.member < 0 /\ e.reset}}
        mine(m) == IF coord.assign # NoAsg THEN coord.assign[m] ELSE {}
    IN /\ \A ev \in evs :
            IF ev.member < 0
            THEN VState(coord) = Empty
            ELSE /\ ev.gen = coord.gen
                 /\ ev.member \in coord.members
                 /\ ev.parts \subseteq mine(ev.member)
       /\ \A q \in Parts : offsets'[q] < offsets[q] => q \in reset

Path == <<VState(coord)>> \o [k \in 1 .. Len(passed') |-> IF passed'[k] = PrepInitial THEN Preparing ELSE passed'[k]]
        \o <<VState(coord')>>
Hops == {k \in 1 .. Len(Path) - 1 : TRUE}

\* (step) while loaded the generation grows by exactly one per completed join;
\* member generations never decrease; no generation is delivered with two
\* assignments; reloads never lose a delivered generation
GenerationMonotonicity ==
    /\ IF coord'.epoch = coord.epoch
       THEN coord'.gen = coord.gen
                         + Cardinality({k \in Hops : Path[k] = Preparing /\ Path[k + 1] \in {Completing, Empty}})
       ELSE LET gens == {delivered[k][1] : k \in 1 .. Len(delivered)}
                top == IF gens = {} THEN -1 ELSE Max(gens)
            IN coord'.gen >= top
    /\ \A i \in Slots :
         (Alive(clients[i]) /\ Alive(clients'[i]) /\ clients[i].acted >= 0)
         => clients'[i].acted >= clients[i].acted
    /\ \A k, l \in 1 .. Len(delivered') :
         delivered'[k][1] = delivered'[l][1] => delivered'[k][2] = delivered'[l][2]

ValidPrevious(b) ==
    CASE b = Empty -> {Preparing}
      [] b = Preparing -> {Stable, Completing, Empty}
      [] b = Completing -> {Preparing}
      [] b = Stable -> {Completing}
      [] b = Dead -> {Stable, Preparing, Completing, Empty, Dead}

\* (step) the group only takes the state transitions of Kafka's table (reloads
\* land in Empty or Stable)
ValidStateTransition ==
    IF coord'.epoch # coord.epoch
    THEN VState(coord') \in {Empty, Stable}
    ELSE \A k \in Hops : Path[k] # Path[k + 1] => Path[k] \in ValidPrevious(Path[k + 1])

\* the step invariants as TLC properties (PROPERTY in the .cfg)
AlwaysCommittedOffsetSafety == [][CommittedOffsetSafety]_vars
AlwaysGenerationMonotonicity == [][GenerationMonotonicity]_vars
AlwaysValidStateTransition == [][ValidStateTransition]_vars
=============================================================================
