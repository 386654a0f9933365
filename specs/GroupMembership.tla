--------------------------- MODULE GroupMembership ---------------------------
(***************************************************************************)
(* Kafka's classic consumer group protocol, as the group coordinator runs  *)
(* it: membership (JoinGroup, SyncGroup, LeaveGroup, session expiry),      *)
(* rebalancing (PreparingRebalance -> CompletingRebalance -> Stable), the  *)
(* group record persisted in __consumer_offsets, coordinator failover, and *)
(* offset commits.  Each request is handled atomically together with the  *)
(* response the coordinator produces for it.                               *)
(*                                                                         *)
(* This is kverify's abstract group model (model/group.py, registry name   *)
(* "group") stated in TLA+.  Each action below is one disjunct of Next and *)
(* carries the name of the Python action in CamelCase (join_timeout <->    *)
(* JoinTimeout); each invariant is the kverify invariant's name in         *)
(* CamelCase (committed-offset-safety <-> CommittedOffsetSafety); each     *)
(* constant is a model parameter in upper case or a historical behaviour   *)
(* in CamelCase (kverify/tla/names.py).  tests/test_tlc_crosscheck.py      *)
(* checks that TLC and the kverify explorer reach exactly the same states  *)
(* on every .cfg shipped beside this module.                               *)
(*                                                                         *)
(* Member slots are 0 .. MEMBERS-1 and partitions 0 .. PARTITIONS-1.  The  *)
(* environment's bound is a budget (EVENTS process starts and leaves,      *)
(* FAULTS crashes, pauses, stalls and failovers, COMMITS commit requests)  *)
(* and MAX_GENERATION: no new event or fault once the generation reaches   *)
(* it.  `passed` and `accepted` are history variables read only by the     *)
(* step invariants; the VIEW (ModelView) leaves them out.                  *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    MEMBERS, PARTITIONS, EVENTS, FAULTS, COMMITS, MAX_GENERATION, FAILOVER, ADMIN,
    \* historical behaviours (BOOLEAN), each a deliberate deviation from Kafka's rules
    StaleGenerationCommit,     \* a commit carrying an older generation of a member is accepted
    NoGenerationBump,          \* a completed join keeps the generation
    LeaderNotReelected,        \* a departed leader keeps its id (KAFKA-8220)
    Kafka12890NoSyncBarrier,   \* no pending-sync barrier (KAFKA-12890)
    UncleanElection            \* a failover may lose the last append to __consumer_offsets

VARIABLES
    coord,      \* the group as the coordinator holds it in memory (GroupMetadata)
    clients,    \* clients[m]: the consumer process in member slot m
    offsets,    \* offsets[q]: the committed offset of partition q
    persisted,  \* the last group record appended to __consumer_offsets
    budget,     \* what the environment may still do, and a ghost (commitGeneration)
    delivered,  \* assignments answered to SyncGroup, oldest first, while a reload may reach them
    prev,       \* the record and offsets before the last append (UncleanElection only)
    passed,     \* history: the group states a step went through on its way (step invariants)
    accepted    \* history: the commits the last step acknowledged (step invariants)

modelVars == <<coord, clients, offsets, persisted, budget, delivered, prev>>
vars == <<coord, clients, offsets, persisted, budget, delivered, prev, passed, accepted>>

Slots == 0 .. MEMBERS - 1
Parts == 0 .. PARTITIONS - 1
Unclean == UncleanElection /\ FAILOVER

\* group states (Kafka's names); PrepInitial is PreparingRebalance entered from Empty,
\* while the initial rebalance delay runs (the invariants see it as PreparingRebalance)
Empty == "Empty"
Preparing == "PreparingRebalance"
Completing == "CompletingRebalance"
Stable == "Stable"
Dead == "Dead"
PrepInitial == "PreparingInitial"

\* client statuses and flags
Down == "down"            \* no process
Idle == "idle"            \* must (re)join
Joining == "joining"      \* its JoinGroup is parked at the coordinator
Syncing == "syncing"      \* holds its JoinGroup answer, must send SyncGroup
SyncWait == "sync-wait"   \* its SyncGroup is parked at the coordinator
CStable == "stable"       \* holds an assignment and consumes it
Running == "running"
Paused == "paused"        \* the whole process is frozen
Stalled == "stalled"      \* heartbeats, but never sends SyncGroup

\* "none" values
NoLeader == -1
NoAssignment == <<>>
NoCommit == <<>>
NoPrev == <<>>

Min(S) == CHOOSE x \in S : \A y \in S : x <= y
Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Lowest(S) == IF S = {} THEN NoLeader ELSE Min(S)

Assignment == [Slots -> SUBSET Parts]
Record == [generation : Int, members : SUBSET Slots, leader : Slots \cup {NoLeader},
           assignment : Assignment \cup {NoAssignment}]
Client == [status : {Down, Idle, Joining, Syncing, SyncWait, CStable}, generation : Int,
           owned : SUBSET Parts, flag : {Running, Paused, Stalled}, acted : Int,
           inflight : [generation : Int, partitions : SUBSET Parts] \cup {NoCommit}]

TypeOK ==
    /\ coord \in [state : {Empty, Preparing, Completing, Stable, PrepInitial}, generation : Int,
                  leader : Slots \cup {NoLeader}, members : SUBSET Slots, awaitingJoin : SUBSET Slots,
                  awaitingSync : SUBSET Slots, pendingSync : SUBSET Slots,
                  assignment : Assignment \cup {NoAssignment}, epoch : Nat]
    /\ clients \in [Slots -> Client]
    /\ offsets \in [Parts -> Nat]
    /\ persisted \in Record
    /\ budget \in [events : Nat, faults : Nat, commits : Nat, commitGeneration : Int]

DownClient == [status |-> Down, generation |-> -1, owned |-> {}, flag |-> Running, acted |-> -1,
               inflight |-> NoCommit]
EmptyRecord == [generation |-> 0, members |-> {}, leader |-> NoLeader, assignment |-> NoAssignment]

-----------------------------------------------------------------------------
Init ==
    /\ coord = [state |-> Empty, generation |-> 0, leader |-> NoLeader, members |-> {},
                awaitingJoin |-> {}, awaitingSync |-> {}, pendingSync |-> {},
                assignment |-> NoAssignment, epoch |-> 0]
    /\ clients = [m \in Slots |-> DownClient]
    /\ offsets = [q \in Parts |-> 0]
    /\ persisted = EmptyRecord
    /\ budget = [events |-> EVENTS, faults |-> FAULTS, commits |-> COMMITS, commitGeneration |-> 0]
    /\ delivered = <<>>
    /\ prev = IF Unclean THEN [record |-> EmptyRecord, offsets |-> [q \in Parts |-> 0]] ELSE NoPrev
    /\ passed = <<>>
    /\ accepted = <<>>

-----------------------------------------------------------------------------
(***************************************************************************)
(* The coordinator's rules, as operators on values (c: a group, cl: the    *)
(* clients).                                                               *)
(***************************************************************************)

\* the environment's bound: no new event or fault once the generation reaches MAX_GENERATION
EnvOk == coord.generation < MAX_GENERATION

\* some member in S will not answer by itself (crashed, paused or stalled): only then do the
\* rebalance timers fire (they are long next to a healthy member's latency)
Unresponsive(S) == \E i \in S : clients[i].status = Down \/ clients[i].flag # Running

\* a heartbeat from a stable client in generation g gets an error (it then rejoins)
HeartbeatError(c, m, g) == m \notin c.members \/ g # c.generation \/ c.state \in {Preparing, PrepInitial}

\* the answer to an OffsetCommit from slot m carrying generation g
CommitVerdict(c, m, g) ==
    IF m \notin c.members THEN "UNKNOWN_MEMBER_ID"
    ELSE IF g # c.generation /\ ~(StaleGenerationCommit /\ 0 <= g /\ g < c.generation)
         THEN "ILLEGAL_GENERATION"
    ELSE IF c.state = Completing THEN "REBALANCE_IN_PROGRESS"
    ELSE "NONE"

\* members S removed (leave, expiry, pending-sync expiry): a removed leader is replaced by the
\* lowest remaining member
Removed(c, S) ==
    [c EXCEPT !.members = @ \ S,
              !.leader = IF @ \in S /\ ~LeaderNotReelected THEN Lowest(c.members \ S) ELSE @,
              !.awaitingJoin = @ \ S, !.awaitingSync = @ \ S, !.pendingSync = @ \ S]

\* prepareRebalance: the group enters PreparingRebalance (from Empty: with the initial delay)
Prepared(c) ==
    [c EXCEPT !.state = IF @ = Empty THEN PrepInitial ELSE Preparing,
              !.awaitingSync = {}, !.pendingSync = {},
              !.assignment = IF c.state = Completing THEN NoAssignment ELSE @]

\* ... and the SyncGroups parked in CompletingRebalance get REBALANCE_IN_PROGRESS
SyncsRefused(c, cl) ==
    [i \in Slots |-> IF c.state = Completing /\ i \in c.awaitingSync /\ cl[i].status = SyncWait
                     THEN [cl[i] EXCEPT !.status = Idle, !.owned = {}]
                     ELSE cl[i]]

\* onCompleteJoin's leader: kept if it rejoined, else the lowest rejoined member
NewLeader(c, joined) ==
    IF c.leader \in joined \/ (LeaderNotReelected /\ c.leader # NoLeader) THEN c.leader
    ELSE Lowest(joined)

\* the leader's assignment: partition q to the (q mod k)-th member in slot order
RECURSIVE SortedSeq(_)
SortedSeq(S) == IF S = {} THEN <<>> ELSE <<Min(S)>> \o SortedSeq(S \ {Min(S)})
AssignTo(ms) ==
    LET order == SortedSeq(ms)
    IN [i \in Slots |-> {q \in Parts : order[(q % Len(order)) + 1] = i}]

\* what an unclean election could fall back to, once a new append is made
BeforeAppend == IF Unclean THEN [record |-> persisted, offsets |-> offsets] ELSE prev

\* delivered assignments a reload could still come back to or reuse
Prune(dl, r, pv) ==
    LET low == IF pv = NoPrev THEN r.generation ELSE Min({r.generation, pv.record.generation})
    IN SelectSeq(dl, LAMBDA d : d.generation >= low)

\* append group record r; dl: the delivered assignments before pruning
AppendRecord(r, dl) ==
    /\ persisted' = r
    /\ prev' = BeforeAppend
    /\ delivered' = Prune(dl, r, BeforeAppend)

\* onCompleteJoin: members that did not rejoin are dropped, the generation grows, every
\* parked JoinGroup is answered; a join that ends without members lands in Empty and is persisted.
\* `via`: the group states the step went through before
CompleteJoin(c, cl, via) ==
    LET joined == c.members \cap c.awaitingJoin
        leader == NewLeader(c, joined)
        gen == IF NoGenerationBump THEN c.generation ELSE c.generation + 1
    IN /\ passed' = via
       /\ IF joined = {}
          THEN /\ coord' = [state |-> Empty, generation |-> gen, leader |-> leader, members |-> {},
                            awaitingJoin |-> {}, awaitingSync |-> {}, pendingSync |-> {},
                            assignment |-> NoAssignment, epoch |-> c.epoch]
               /\ clients' = cl
               /\ AppendRecord([generation |-> gen, members |-> {}, leader |-> leader,
                                assignment |-> NoAssignment], delivered)
          ELSE /\ coord' = [state |-> Completing, generation |-> gen, leader |-> leader, members |-> joined,
                            awaitingJoin |-> {}, awaitingSync |-> {}, pendingSync |-> joined,
                            assignment |-> NoAssignment, epoch |-> c.epoch]
               /\ clients' = [i \in Slots |-> IF i \in joined /\ cl[i].status = Joining
                                              THEN [cl[i] EXCEPT !.status = Syncing, !.generation = gen, !.owned = {}]
                                              ELSE cl[i]]
               /\ UNCHANGED <<persisted, prev, delivered>>

\* the coordinator ends a request with group c and clients cl: the join completes at once
\* when every member has rejoined
Settle(c, cl, via) ==
    IF c.state = Preparing /\ c.members \subseteq c.awaitingJoin
    THEN CompleteJoin(c, cl, via)
    ELSE /\ coord' = c
         /\ clients' = cl
         /\ passed' = <<>>
         /\ UNCHANGED <<persisted, prev, delivered>>

\* a member left the group: Stable and CompletingRebalance groups rebalance
AfterRemoval(c, cl) ==
    IF c.state \in {Stable, Completing}
    THEN Settle(Prepared(c), SyncsRefused(c, cl), <<Preparing>>)
    ELSE Settle(c, cl, <<>>)

\* JoinGroup from slot m, with the clients cl
JoinGroup(m, cl) ==
    LET c == coord
        joining == [cl EXCEPT ![m] = [@ EXCEPT !.status = Joining, !.owned = {}]]
    IN IF m \in c.members
       THEN IF c.state \in {Preparing, PrepInitial}
            THEN Settle([c EXCEPT !.awaitingJoin = @ \cup {m}], joining, <<>>)
            ELSE IF c.state = Stable /\ c.leader = m
            THEN Settle([Prepared(c) EXCEPT !.awaitingJoin = @ \cup {m}], joining, <<Preparing>>)
            ELSE \* a follower, or a member of CompletingRebalance: its generation at once
                 Settle(c, [cl EXCEPT ![m] = [@ EXCEPT !.status = Syncing, !.generation = c.generation,
                                                       !.owned = {}]], <<>>)
       ELSE LET new == [c EXCEPT !.leader = IF @ = NoLeader THEN m ELSE @,
                                 !.members = @ \cup {m}, !.awaitingJoin = @ \cup {m}]
            IN IF c.state \in {Empty, Stable, Completing}
               THEN Settle(Prepared(new), SyncsRefused(new, joining), <<Preparing>>)
               ELSE Settle(new, joining, <<>>)

\* the coordinator (re)loads the group from record r and offsets offs; parked JoinGroup and
\* SyncGroup requests are answered NOT_COORDINATOR, so those clients rejoin
Load(r, offs) ==
    LET has == r.members # {}
        pv == IF Unclean THEN [record |-> r, offsets |-> offs] ELSE prev
    IN /\ coord' = [state |-> IF has THEN Stable ELSE Empty, generation |-> r.generation,
                    leader |-> IF has THEN r.leader ELSE NoLeader, members |-> r.members,
                    awaitingJoin |-> {}, awaitingSync |-> {}, pendingSync |-> {},
                    assignment |-> IF has THEN r.assignment ELSE NoAssignment, epoch |-> coord.epoch + 1]
       /\ clients' = [i \in Slots |-> IF clients[i].status \in {Joining, SyncWait}
                                      THEN [clients[i] EXCEPT !.status = Idle, !.owned = {}]
                                      ELSE clients[i]]
       /\ offsets' = offs
       /\ persisted' = r
       /\ prev' = pv
       /\ delivered' = Prune(delivered, r, pv)
       /\ budget' = [budget EXCEPT !.faults = @ - 1]

NoCommitAcknowledged == accepted' = <<>>
Quiet == passed' = <<>> /\ accepted' = <<>>

-----------------------------------------------------------------------------
(***************************************************************************)
(* The actions: one per Python action, same name                           *)
(***************************************************************************)

\* a process starts in a free slot and sends JoinGroup
Start(m) ==
    /\ clients[m].status = Down /\ budget.events > 0 /\ EnvOk /\ m \notin coord.members
    /\ budget' = [budget EXCEPT !.events = @ - 1]
    /\ JoinGroup(m, [clients EXCEPT ![m] = [DownClient EXCEPT !.status = Idle]])
    /\ NoCommitAcknowledged
    /\ UNCHANGED offsets

\* an idle running client sends JoinGroup
Join(m) ==
    /\ clients[m].status = Idle /\ clients[m].flag = Running
    /\ JoinGroup(m, clients)
    /\ NoCommitAcknowledged
    /\ UNCHANGED <<offsets, budget>>

\* a stable client's heartbeat got an error: it drops its partitions and rejoins
Rejoin(m) ==
    /\ clients[m].status = CStable /\ clients[m].flag = Running
    /\ HeartbeatError(coord, m, clients[m].generation)
    /\ JoinGroup(m, clients)
    /\ NoCommitAcknowledged
    /\ UNCHANGED <<offsets, budget>>

\* SyncGroup: refused, answered at once (Stable), or parked until the leader's SyncGroup
\* persists the assignment and answers everyone parked
Sync(m) ==
    /\ clients[m].status = Syncing /\ clients[m].flag = Running
    /\ LET c == coord
       IN IF m \notin c.members \/ clients[m].generation # c.generation \/ c.state \in {Preparing, PrepInitial}
          THEN /\ clients' = [clients EXCEPT ![m] = [@ EXCEPT !.status = Idle, !.owned = {}]]
               /\ UNCHANGED <<coord, persisted, prev, delivered>>
          ELSE IF c.state = Stable
          THEN /\ coord' = [c EXCEPT !.pendingSync = @ \ {m}]
               /\ clients' = [clients EXCEPT ![m] = [@ EXCEPT !.status = CStable, !.generation = c.generation,
                                                              !.owned = c.assignment[m], !.acted = c.generation]]
               /\ UNCHANGED <<persisted, prev, delivered>>
          ELSE IF m # c.leader
          THEN /\ coord' = [c EXCEPT !.awaitingSync = @ \cup {m}, !.pendingSync = @ \ {m}]
               /\ clients' = [clients EXCEPT ![m] = [@ EXCEPT !.status = SyncWait, !.owned = {}]]
               /\ UNCHANGED <<persisted, prev, delivered>>
          ELSE LET parked == c.awaitingSync \cup {m}
                   asg == AssignTo(c.members)
               IN /\ coord' = [c EXCEPT !.state = Stable, !.awaitingSync = {}, !.pendingSync = @ \ {m},
                                        !.assignment = asg]
                  /\ clients' = [i \in Slots |->
                                    IF i \in parked /\ (i = m \/ clients[i].status = SyncWait)
                                    THEN [clients[i] EXCEPT !.status = CStable, !.generation = c.generation,
                                                            !.owned = asg[i], !.acted = c.generation]
                                    ELSE clients[i]]
                  /\ AppendRecord([generation |-> c.generation, members |-> c.members, leader |-> c.leader,
                                   assignment |-> asg],
                                  Append(delivered, [generation |-> c.generation, assignment |-> asg]))
    /\ Quiet
    /\ UNCHANGED <<offsets, budget>>

\* the application of a stable client sends its positions (OffsetCommit, or TxnOffsetCommit
\* through a transactional producer) under its generation; the request travels on its own
Commit(m) ==
    /\ clients[m].status = CStable /\ clients[m].flag = Running /\ clients[m].owned # {}
    /\ budget.commits > 0 /\ clients[m].inflight = NoCommit
    /\ clients' = [clients EXCEPT ![m].inflight = [generation |-> clients[m].generation,
                                                   partitions |-> clients[m].owned]]
    /\ budget' = [budget EXCEPT !.commits = @ - 1]
    /\ Quiet
    /\ UNCHANGED <<coord, offsets, persisted, delivered, prev>>

\* the coordinator handles the OffsetCommit in flight (possibly after the group moved on)
CommitArrives(m) ==
    /\ clients[m].inflight # NoCommit
    /\ LET cl == clients[m]
           sent == cl.inflight
       IN IF CommitVerdict(coord, m, sent.generation) # "NONE"
          THEN \* a client still stable in that generation drops its partitions and rejoins;
               \* one that already moved on ignores the late answer
               /\ clients' = [clients EXCEPT ![m] =
                                 IF cl.status = CStable /\ cl.generation = sent.generation
                                 THEN [cl EXCEPT !.status = Idle, !.owned = {}, !.inflight = NoCommit]
                                 ELSE [cl EXCEPT !.inflight = NoCommit]]
               /\ accepted' = <<>>
               /\ UNCHANGED <<offsets, prev, budget>>
          ELSE /\ clients' = [clients EXCEPT ![m].inflight = NoCommit]
               /\ offsets' = [q \in Parts |-> IF q \in sent.partitions THEN offsets[q] + 1 ELSE offsets[q]]
               /\ prev' = BeforeAppend
               /\ budget' = [budget EXCEPT !.commitGeneration = Max({@, sent.generation})]
               /\ accepted' = <<[member |-> m, generation |-> sent.generation, partitions |-> sent.partitions,
                                 reset |-> FALSE]>>
    /\ passed' = <<>>
    /\ UNCHANGED <<coord, persisted, delivered>>

\* an admin resets a committed offset of an Empty group (a standalone commit, generation -1)
AdminReset(q) ==
    /\ ADMIN /\ budget.commits > 0 /\ coord.state = Empty /\ offsets[q] # 0
    /\ offsets' = [offsets EXCEPT ![q] = 0]
    /\ prev' = BeforeAppend
    /\ budget' = [budget EXCEPT !.commits = @ - 1]
    /\ accepted' = <<[member |-> -1, generation |-> -1, partitions |-> {q}, reset |-> TRUE]>>
    /\ passed' = <<>>
    /\ UNCHANGED <<coord, clients, persisted, delivered>>

\* a stable member leaves the group (LeaveGroup) and its process stops
Leave(m) ==
    /\ clients[m].status = CStable /\ clients[m].flag = Running
    /\ budget.events > 0 /\ EnvOk /\ m \in coord.members
    /\ budget' = [budget EXCEPT !.events = @ - 1]
    /\ AfterRemoval(Removed(coord, {m}), [clients EXCEPT ![m] = DownClient])
    /\ NoCommitAcknowledged
    /\ UNCHANGED offsets

\* the session of a crashed or paused member that is not parked in Join/Sync expires
Expire(m) ==
    /\ clients[m].status = Down \/ clients[m].flag = Paused
    /\ m \in coord.members /\ m \notin coord.awaitingJoin \cup coord.awaitingSync
    /\ AfterRemoval(Removed(coord, {m}), clients)
    /\ NoCommitAcknowledged
    /\ UNCHANGED <<offsets, budget>>

Crash(m) ==
    /\ clients[m].status # Down /\ budget.faults > 0 /\ EnvOk
    /\ clients' = [clients EXCEPT ![m] = DownClient]
    /\ budget' = [budget EXCEPT !.faults = @ - 1]
    /\ Quiet
    /\ UNCHANGED <<coord, offsets, persisted, delivered, prev>>

Pause(m) ==
    /\ clients[m].status # Down /\ clients[m].flag = Running /\ budget.faults > 0 /\ EnvOk
    /\ clients' = [clients EXCEPT ![m].flag = Paused]
    /\ budget' = [budget EXCEPT !.faults = @ - 1]
    /\ Quiet
    /\ UNCHANGED <<coord, offsets, persisted, delivered, prev>>

\* the process keeps heartbeating but never sends SyncGroup
Stall(m) ==
    /\ clients[m].status = Syncing /\ clients[m].flag = Running /\ budget.faults > 0 /\ EnvOk
    /\ clients' = [clients EXCEPT ![m].flag = Stalled]
    /\ budget' = [budget EXCEPT !.faults = @ - 1]
    /\ Quiet
    /\ UNCHANGED <<coord, offsets, persisted, delivered, prev>>

Resume(m) ==
    /\ clients[m].status # Down /\ clients[m].flag = Paused
    /\ clients' = [clients EXCEPT ![m].flag = Running]
    /\ Quiet
    /\ UNCHANGED <<coord, offsets, persisted, budget, delivered, prev>>

\* the (initial) join window ends: the join completes with whoever rejoined
JoinTimeout ==
    /\ \/ coord.state = PrepInitial
       \/ coord.state = Preparing /\ Unresponsive(coord.members \ coord.awaitingJoin)
    /\ CompleteJoin(coord, clients, <<>>)
    /\ NoCommitAcknowledged
    /\ UNCHANGED <<offsets, budget>>

\* the pending-sync barrier expires: members that never sent SyncGroup are removed, rebalance
SyncTimeout ==
    /\ ~Kafka12890NoSyncBarrier
    /\ coord.state \in {Completing, Stable}
    /\ Unresponsive(coord.pendingSync)
    /\ LET c == Removed(coord, coord.pendingSync)
       IN Settle(Prepared(c), SyncsRefused(c, clients), <<Preparing>>)
    /\ NoCommitAcknowledged
    /\ UNCHANGED <<offsets, budget>>

\* the coordinator moves (the offsets partition's leader changes) and reloads the group
Failover ==
    /\ FAILOVER /\ budget.faults > 0 /\ EnvOk
    /\ Load(persisted, offsets)
    /\ Quiet

\* unclean election of the offsets partition: the new leader misses the last append
UncleanFailover ==
    /\ Unclean /\ budget.faults > 0 /\ EnvOk
    /\ prev # NoPrev /\ prev # [record |-> persisted, offsets |-> offsets]
    /\ Load(prev.record, prev.offsets)
    /\ Quiet

\* a settled, healthy state: every live process is a member, Stable with the whole
\* assignment (or no live process and an Empty group); paused processes are not settled
QuiescentGood ==
    LET live == {i \in Slots : clients[i].status # Down /\ clients[i].flag # Stalled}
    IN /\ ~\E i \in Slots : clients[i].status # Down /\ clients[i].flag = Paused
       /\ coord.members = live
       /\ IF live = {}
          THEN coord.state = Empty
          ELSE /\ coord.state = Stable /\ coord.pendingSync = {} /\ coord.assignment # NoAssignment
               /\ \A i \in live : /\ clients[i].status = CStable /\ clients[i].generation = coord.generation
                                 /\ clients[i].owned = coord.assignment[i]
               /\ UNION {coord.assignment[i] : i \in live} = Parts

\* the explorer's `deadlock` check (model/group.py allows_terminal): a state without actions must
\* be settled and healthy. This stuttering step makes such a state a legal end for TLC, which then
\* runs WITH its deadlock check (kverify/tla/runner.py turns it on when Next has AllowedEnd).
AllowedEnd == QuiescentGood /\ UNCHANGED vars

Next ==
    \/ \E m \in Slots : CommitArrives(m)
    \/ \E m \in Slots : Start(m)
    \/ \E m \in Slots : Expire(m)
    \/ \E m \in Slots : Join(m)
    \/ \E m \in Slots : Sync(m)
    \/ \E m \in Slots : Rejoin(m)
    \/ \E m \in Slots : Commit(m)
    \/ \E m \in Slots : Leave(m)
    \/ \E m \in Slots : Pause(m)
    \/ \E m \in Slots : Stall(m)
    \/ \E m \in Slots : Resume(m)
    \/ \E m \in Slots : Crash(m)
    \/ JoinTimeout
    \/ SyncTimeout
    \/ \E q \in Parts : AdminReset(q)
    \/ Failover
    \/ UncleanFailover
    \/ AllowedEnd

Spec == Init /\ [][Next]_vars

\* TLC tells states apart by the model's variables only (not the history variables)
ModelView == modelVars

-----------------------------------------------------------------------------
(***************************************************************************)
(* Invariants (invariants/group.py), over the group as the invariants see  *)
(* it.                                                                     *)
(***************************************************************************)
VState(s) == IF s = PrepInitial THEN Preparing ELSE s
Alive(cl) == cl.status # Down
CanCommit(c, i, cl) == cl.status = CStable /\ CommitVerdict(c, i, cl.generation) = "NONE"

\* no partition has two owners in a stored assignment, and no two live members
\* that can commit a partition consume it at once
ExclusiveOwnership ==
    /\ coord.assignment # NoAssignment =>
         \A i, j \in Slots : i < j => coord.assignment[i] \cap coord.assignment[j] = {}
    /\ \A i, j \in Slots :
         (i < j /\ Alive(clients[i]) /\ Alive(clients[j])
          /\ CanCommit(coord, i, clients[i]) /\ CanCommit(coord, j, clients[j]))
         => clients[i].owned \cap clients[j].owned = {}

\* the leader is a member, and a group with members has a leader
LeaderInMembers ==
    /\ coord.leader # NoLeader => coord.leader \in coord.members
    /\ ~(coord.leader = NoLeader /\ coord.members # {})

\* (step) every accepted commit comes from the partition's owner in the current
\* generation (or a standalone consumer on an Empty group); acknowledged offsets
\* never go back without an explicit reset
CommittedOffsetSafety ==
    LET evs == {accepted'[k] : k \in 1 .. Len(accepted')}
        reset == UNION {ev.partitions : ev \in {e \in evs : e.member < 0 /\ e.reset}}
        mine(m) == IF coord.assignment # NoAssignment THEN coord.assignment[m] ELSE {}
    IN /\ \A ev \in evs :
            IF ev.member < 0
            THEN VState(coord.state) = Empty
            ELSE /\ ev.generation = coord.generation
                 /\ ev.member \in coord.members
                 /\ ev.partitions \subseteq mine(ev.member)
       /\ \A q \in Parts : offsets'[q] < offsets[q] => q \in reset

\* the group states a step went through, as the invariants see a step: inside one load of the
\* group, from the state before to the state after
Through == IF (coord'.state # coord.state \/ coord'.generation # coord.generation) /\ coord'.epoch = coord.epoch
           THEN passed' ELSE <<>>
Path == <<VState(coord.state)>> \o [k \in 1 .. Len(Through) |-> VState(Through[k])] \o <<VState(coord'.state)>>
Hops == 1 .. Len(Path) - 1

\* (step) while loaded the generation grows by exactly one per completed join;
\* member generations never decrease; no generation is delivered with two
\* assignments; reloads never lose a delivered generation
GenerationMonotonicity ==
    /\ IF coord'.epoch = coord.epoch
       THEN coord'.generation = coord.generation
                + Cardinality({k \in Hops : Path[k] = Preparing /\ Path[k + 1] \in {Completing, Empty}})
       ELSE LET gens == {delivered[k].generation : k \in 1 .. Len(delivered)}
            IN gens # {} => coord'.generation >= Max(gens)
    /\ \A i \in Slots :
         (Alive(clients[i]) /\ Alive(clients'[i]) /\ clients[i].acted >= 0)
         => clients'[i].acted >= clients[i].acted
    /\ \A k, l \in 1 .. Len(delivered') :
         delivered'[k].generation = delivered'[l].generation => delivered'[k].assignment = delivered'[l].assignment

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
    THEN VState(coord'.state) \in {Empty, Stable}
    ELSE \A k \in Hops : Path[k] # Path[k + 1] => Path[k] \in ValidPrevious(Path[k + 1])

\* the step invariants as TLC properties (PROPERTY in the .cfg)
AlwaysCommittedOffsetSafety == [][CommittedOffsetSafety]_vars
AlwaysGenerationMonotonicity == [][GenerationMonotonicity]_vars
AlwaysValidStateTransition == [][ValidStateTransition]_vars
=============================================================================
