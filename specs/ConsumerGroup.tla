---------------------------- MODULE ConsumerGroup ----------------------------
(***************************************************************************)
(* KIP-848, Kafka 4's consumer group protocol: ConsumerGroupHeartbeat      *)
(* drives members from the group's target assignment to their own, with   *)
(* group, assignment, member and partition epochs.  The group coordinator  *)
(* bumps the group epoch when a member joins, leaves, changes its          *)
(* subscription or the subscribed topics' metadata changed, computes the   *)
(* target assignment at the new epoch, and reconciles each member on its   *)
(* own heartbeat (CurrentAssignmentBuilder): a member first revokes        *)
(* (UNREVOKED_PARTITIONS), then reaches the target epoch, and a partition  *)
(* another member still holds is withheld (UNRELEASED_PARTITIONS).  A      *)
(* stale epoch is fenced (FENCED_MEMBER_EPOCH): the client drops all its   *)
(* partitions and re-joins with epoch 0.                                   *)
(*                                                                         *)
(* This is kverify's abstract model model/consumer_group.py (registry name *)
(* "consumer-group") stated in TLA+: one disjunct of Next per Python       *)
(* action, same name in CamelCase (expire_live <-> ExpireLive); one        *)
(* operator per kverify invariant (target-legal <-> TargetLegal; step      *)
(* invariants are action formulas checked as AlwaysX == [][X]_vars); a     *)
(* constant per parameter (upper case) and per historical behaviour.       *)
(* kverify/tla compares the state sets TLC and the explorer reach.         *)
(*                                                                         *)
(* Partition p of topic t is the number t * PMAX + p; member ids are       *)
(* numbers (a client slot, plus MEMBERS per restart of its process).       *)
(* answered, accepted and reconciled are history variables read only by    *)
(* the step invariants; the VIEW (ModelView) leaves them out.              *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    MEMBERS, TOPICS, PARTITIONS, PERTURBATIONS, LOSSES, COMMITS, GROW,
    \* historical behaviours (BOOLEAN), each a rule Kafka had before the named fix
    Kafka16147LostPartitionEpoch,         \* partition epochs redone per changed set only
    Kafka19974UnrevokedEpochBump,         \* leaving UNREVOKED_PARTITIONS bumps the member epoch
    Kafka19449OwnRevocationUnreleased,    \* a member's own pending revocation counts as unreleased
    Kafka19233NoEpochZeroRejoin,          \* epoch 0 from a known member is validated (and fenced)
    Kafka20442EmptyGroupAssignmentEpoch,  \* fencing the last member leaves the assignment epoch behind
    Kafka19335NegativeEpochJoining        \* a late leave answer gives a re-joining client epoch -1

VARIABLES
    group,      \* the ConsumerGroup at the coordinator
    clients,    \* clients[s]: the consumer in slot s (the Java client's membership manager)
    topics,     \* topics[t]: partitions of topic t (the metadata image)
    budget,     \* what the environment may still do
    answered,   \* history: the heartbeat the last step handled (step invariants)
    accepted,   \* history: the commit the last step accepted
    reconciled  \* history: the member the last step reconciled

modelVars == <<group, clients, topics, budget>>
vars == <<group, clients, topics, budget, answered, accepted, reconciled>>
ModelView == modelVars

PMAX == PARTITIONS + (IF GROW THEN 1 ELSE 0)
Slots == 0 .. MEMBERS - 1
Topics == 0 .. TOPICS - 1
PartIdx == 0 .. TOPICS * PMAX - 1
Free == -1
LeaveEpoch == -1
None == <<>>

\* coordinator-side member states, client states, errors (Kafka's names)
MStable == "STABLE"
Unrevoked == "UNREVOKED_PARTITIONS"
Unreleased == "UNRELEASED_PARTITIONS"
Unsubscribed == "UNSUBSCRIBED"
Joining == "JOINING"
Reconciling == "RECONCILING"
Acknowledging == "ACKNOWLEDGING"
CStable == "STABLE"
Leaving == "LEAVING"
Down == "DOWN"
Live == {Joining, Reconciling, Acknowledging, CStable}
NoError == "NONE"
Fenced == "FENCED_MEMBER_EPOCH"
Unknown == "UNKNOWN_MEMBER_ID"

(* --- helpers ----------------------------------------------------------- *)
PartsOf(tops, ts) == UNION {{t * PMAX + p : p \in 0 .. tops[t] - 1} : t \in ts}
IsMember(ms, id) == \E x \in ms : x.memberId = id
Find(ms, id) == CHOOSE x \in ms : x.memberId = id
TargetIn(ts, id) == IF \E x \in ts : x.memberId = id THEN (CHOOSE x \in ts : x.memberId = id).partitions ELSE {}
Held(x) == x.assigned \cup x.pendingRevocation
Nth(S, i) == CHOOSE x \in S : Cardinality({y \in S : y < x}) = i
Subscribers(ms, t) == {x.memberId : x \in {y \in ms : t \in y.subscribed}}
SubMeta(tops, ms) == [t \in Topics |-> IF Subscribers(ms, t) # {} THEN tops[t] ELSE 0]
NewMember(id) == [memberId |-> id, state |-> MStable, memberEpoch |-> 0, previousMemberEpoch |-> 0,
                  assigned |-> {}, pendingRevocation |-> {}, subscribed |-> {}]
GroupState(g) ==
    IF g.members = {} THEN "Empty"
    ELSE IF g.groupEpoch > g.assignmentEpoch THEN "Assigning"
    ELSE IF \E x \in g.members : x.state # MStable \/ x.memberEpoch # g.assignmentEpoch THEN "Reconciling"
    ELSE "Stable"

\* The abstract assignor: partitions in topic order, each to the next subscriber of its topic in
\* member-id order, one counter over the partitions of topics that have subscribers.
Owner(tops, ms, t, p) ==
    LET subs == Subscribers(ms, t)
        before == Cardinality(PartsOf(tops, {u \in Topics : u < t /\ Subscribers(ms, u) # {}}))
    IN Nth(subs, (before + p) % Cardinality(subs))
Assign(tops, ms) ==
    {[memberId |-> x.memberId,
      partitions |-> {q \in PartsOf(tops, x.subscribed) :
                         Owner(tops, ms, q \div PMAX, q % PMAX) = x.memberId}] : x \in ms}

(* --- CurrentAssignmentBuilder (owned: <<S>> when reported, None when omitted) *)
OwnsRevoked(owned, pending) == owned = None \/ owned[1] \cap pending # {}
UpdateEpoch(x, e) == [x EXCEPT !.previousMemberEpoch = x.memberEpoch, !.memberEpoch = e]

NextAssignment(x, epoch, tEpoch, target, pe, owned, subParts) ==
    LET effective == target \cap subParts
        kept == x.assigned \cap effective
        toRevoke == x.assigned \ kept
        candidates == effective \ kept
        unreleased == {q \in candidates : pe[q] # Free
                          /\ (Kafka19449OwnRevocationUnreleased \/ q \notin x.pendingRevocation)}
    IN IF toRevoke # {} /\ OwnsRevoked(owned, toRevoke)
       THEN [UpdateEpoch(x, epoch) EXCEPT !.state = Unrevoked, !.assigned = kept, !.pendingRevocation = toRevoke]
       ELSE [UpdateEpoch(x, tEpoch) EXCEPT !.state = IF unreleased # {} THEN Unreleased ELSE MStable,
                                           !.assigned = kept \cup (candidates \ unreleased),
                                           !.pendingRevocation = {}]

StripUnsubscribed(x, epoch, owned, subParts) ==
    LET drop == x.assigned \ subParts
        pending == x.pendingRevocation \cup drop
    IN IF drop = {} THEN x
       ELSE IF OwnsRevoked(owned, pending)
       THEN [UpdateEpoch(x, epoch) EXCEPT !.state = Unrevoked, !.assigned = x.assigned \ drop,
                                          !.pendingRevocation = pending]
       ELSE [UpdateEpoch(x, epoch) EXCEPT !.assigned = x.assigned \ drop]

ReconcileMember(x, tEpoch, target, pe, owned, subParts, enforce) ==
    CASE x.state = MStable ->
            IF x.memberEpoch # tEpoch THEN NextAssignment(x, x.memberEpoch, tEpoch, target, pe, owned, subParts)
            ELSE IF enforce THEN StripUnsubscribed(x, x.memberEpoch, owned, subParts) ELSE x
      [] x.state = Unrevoked ->
            IF OwnsRevoked(owned, x.pendingRevocation)
            THEN IF enforce THEN StripUnsubscribed(x, x.memberEpoch, owned, subParts) ELSE x
            ELSE NextAssignment(x, IF Kafka19974UnrevokedEpochBump THEN x.memberEpoch + 1 ELSE x.memberEpoch,
                                tEpoch, target, pe, owned, subParts)
      [] OTHER -> NextAssignment(x, x.memberEpoch, tEpoch, target, pe, owned, subParts)

(* --- ConsumerGroup partition epochs ------------------------------------- *)
SetEpochs(pe, old, new, e) == [q \in PartIdx |-> IF q \in new THEN e ELSE IF q \in old THEN Free ELSE pe[q]]
UpdatePartitionEpochs(pe, old, new) ==
    IF old = None THEN SetEpochs(pe, {}, Held(new), new.memberEpoch)
    ELSE IF ~Kafka16147LostPartitionEpoch THEN SetEpochs(pe, Held(old), Held(new), new.memberEpoch)
    ELSE LET pe1 == IF old.assigned # new.assigned
                    THEN SetEpochs(pe, old.assigned, new.assigned, new.memberEpoch) ELSE pe
         IN IF old.pendingRevocation # new.pendingRevocation
            THEN SetEpochs(pe1, old.pendingRevocation, new.pendingRevocation, new.memberEpoch) ELSE pe1

(* --- consumerGroupFenceMember: leave (epoch -1) and session expiry ------ *)
Fence(g, tops, x) ==
    LET ms == {y \in g.members : y.memberId # x.memberId}
    IN [groupEpoch |-> g.groupEpoch + 1,
        assignmentEpoch |-> IF ms = {} /\ ~Kafka20442EmptyGroupAssignmentEpoch THEN g.groupEpoch + 1
                            ELSE g.assignmentEpoch,
        members |-> ms,
        target |-> {t \in g.target : t.memberId # x.memberId},
        partitionEpochs |-> [q \in PartIdx |-> IF q \in Held(x) THEN Free ELSE g.partitionEpochs[q]],
        subscriptionMetadata |-> SubMeta(tops, ms)]

(* --- consumerGroupHeartbeat --------------------------------------------- *)
ValidEpoch(x, received, owned) ==
    IF received = 0 /\ ~Kafka19233NoEpochZeroRejoin THEN TRUE
    ELSE IF received > x.memberEpoch THEN FALSE
    ELSE IF received < x.memberEpoch
         THEN received = x.previousMemberEpoch /\ owned # None /\ owned[1] \subseteq x.assigned
    ELSE TRUE

\* TopicPartitions of the client's next heartbeat: sent when joining, after a reset, or changed
ReportedOwned(c) == IF c.memberEpoch <= 0 \/ c.reported = None \/ c.owned # c.reported[1] THEN <<c.owned>> ELSE None

Answer(e, epoch, a) == [error |-> e, memberEpoch |-> epoch, assignment |-> a]

Handled(g, tops, c, mem, known, owned) ==
    LET id == c.memberId
        updated == [mem EXCEPT !.subscribed = c.subscribed]
        others == {y \in g.members : y.memberId # id}
        subMeta == SubMeta(tops, others \cup {updated})
        ge == g.groupEpoch + (IF updated.subscribed # mem.subscribed \/ subMeta # g.subscriptionMetadata
                              THEN 1 ELSE 0)
        recompute == ge > g.assignmentEpoch
        targets == IF recompute THEN Assign(tops, others \cup {updated}) ELSE g.target
        ae == IF recompute THEN ge ELSE g.assignmentEpoch
        subParts == PartsOf(tops, updated.subscribed)
        new == IF updated.state = MStable /\ updated.memberEpoch = ae THEN updated
               ELSE ReconcileMember(updated, ae, TargetIn(targets, id), g.partitionEpochs, owned, subParts,
                                    updated.assigned \ subParts # {})
        pe == IF new # mem THEN UpdatePartitionEpochs(g.partitionEpochs, IF known THEN mem ELSE None, new)
              ELSE g.partitionEpochs
    IN [group |-> [groupEpoch |-> ge, assignmentEpoch |-> ae, members |-> others \cup {new}, target |-> targets,
                   partitionEpochs |-> pe, subscriptionMetadata |-> subMeta],
        answer |-> Answer(NoError, new.memberEpoch, new.assigned)]

HandleHeartbeat(g, tops, c) ==
    LET id == c.memberId
        owned == ReportedOwned(c)
        known == IsMember(g.members, id)
    IN IF c.memberEpoch = LeaveEpoch
       THEN IF known THEN [group |-> Fence(g, tops, Find(g.members, id)), answer |-> Answer(NoError, LeaveEpoch, {})]
            ELSE [group |-> g, answer |-> Answer(Unknown, 0, {})]
       ELSE IF ~known /\ c.memberEpoch # 0 THEN [group |-> g, answer |-> Answer(Unknown, 0, {})]
       ELSE IF known /\ ~ValidEpoch(Find(g.members, id), c.memberEpoch, owned)
       THEN [group |-> g, answer |-> Answer(Fenced, 0, {})]
       ELSE Handled(g, tops, c, IF known THEN Find(g.members, id) ELSE NewMember(id), known, owned)

(* --- the actions (one per Python action) -------------------------------- *)
Quiet == answered' = {} /\ accepted' = {} /\ reconciled' = {}
SetClient(s, c) == clients' = [clients EXCEPT ![s] = c]

Heartbeat(s) ==
    LET c == clients[s]
        h == HandleHeartbeat(group, topics, c)
        owned == ReportedOwned(c)
    IN /\ ~c.inflight
       /\ c.state \in {Joining, Acknowledging, CStable, Leaving}
       \* a periodic heartbeat that changes nothing is not a step (it only stutters)
       /\ c.state = CStable => \/ h.group # group
                               \/ h.answer # Answer(NoError, c.memberEpoch, c.assignment)
                               \/ owned # None
       /\ group' = h.group
       \* a LEAVING client is UNSUBSCRIBED once its leave heartbeat is sent (it does not wait)
       /\ SetClient(s, [c EXCEPT !.state = IF c.state = Leaving THEN Unsubscribed ELSE c.state,
                                 !.answer = h.answer, !.inflight = TRUE,
                                 !.reported = IF owned = None THEN c.reported ELSE owned])
       /\ answered' = {[memberId |-> c.memberId, sentEpoch |-> c.memberEpoch, error |-> h.answer.error]}
       /\ reconciled' = IF h.answer.error = NoError THEN {c.memberId} ELSE {}
       /\ accepted' = {}
       /\ UNCHANGED <<topics, budget>>

Receive(s) ==
    LET c == clients[s]
        a == c.answer
        c1 == [c EXCEPT !.answer = None, !.inflight = FALSE]
    IN /\ a # None
       /\ SetClient(s,
            IF c.state = Unsubscribed THEN c1
            ELSE IF a.error # NoError
            THEN [c1 EXCEPT !.state = Joining, !.memberEpoch = 0, !.owned = {}, !.assignment = {}, !.reported = None]
            \* a late answer to a leave heartbeat, after subscribing again: ignored (KAFKA-19335's fix)
            ELSE IF a.memberEpoch < 0
            THEN IF Kafka19335NegativeEpochJoining THEN [c1 EXCEPT !.memberEpoch = a.memberEpoch] ELSE c1
            ELSE [c1 EXCEPT !.state = IF a.assignment = c.owned THEN CStable ELSE Reconciling,
                            !.memberEpoch = a.memberEpoch, !.assignment = a.assignment,
                            !.reported = IF a.assignment # c.assignment THEN None ELSE c.reported])
       /\ Quiet
       /\ UNCHANGED <<group, topics, budget>>

Reconcile(s) ==
    /\ clients[s].state = Reconciling
    /\ SetClient(s, [clients[s] EXCEPT !.state = Acknowledging, !.owned = clients[s].assignment])
    /\ Quiet
    /\ UNCHANGED <<group, topics, budget>>

Commit(s) ==
    LET c == clients[s] IN
    /\ c.owned # {} /\ c.commit = None /\ budget.commits > 0 /\ c.state = Reconciling
    /\ SetClient(s, [c EXCEPT !.commit = [memberEpoch |-> c.memberEpoch, partitions |-> c.owned]])
    /\ budget' = [budget EXCEPT !.commits = @ - 1]
    /\ Quiet
    /\ UNCHANGED <<group, topics>>

CommitArrives(s) ==
    LET c == clients[s] IN
    /\ c.commit # None
    /\ SetClient(s, [c EXCEPT !.commit = None])
    /\ accepted' = IF IsMember(group.members, c.memberId)
                      /\ Find(group.members, c.memberId).memberEpoch = c.commit.memberEpoch
                   THEN {[memberId |-> c.memberId, memberEpoch |-> c.commit.memberEpoch,
                          partitions |-> c.commit.partitions]}
                   ELSE {}
    /\ answered' = {} /\ reconciled' = {}
    /\ UNCHANGED <<group, topics, budget>>

Expire(s) ==
    /\ clients[s].state = Down
    /\ IsMember(group.members, clients[s].memberId)
    /\ group' = Fence(group, topics, Find(group.members, clients[s].memberId))
    /\ Quiet
    /\ UNCHANGED <<clients, topics, budget>>

Restart(s) ==
    /\ clients[s].state = Down
    /\ ~IsMember(group.members, clients[s].memberId)
    /\ SetClient(s, [state |-> Joining, memberId |-> clients[s].memberId + MEMBERS, memberEpoch |-> 0,
                     owned |-> {}, assignment |-> {}, subscribed |-> Topics, reported |-> None,
                     answer |-> None, inflight |-> FALSE, commit |-> None])
    /\ Quiet
    /\ UNCHANGED <<group, topics, budget>>

Lose(s) ==
    /\ clients[s].answer # None
    /\ budget.losses > 0
    /\ SetClient(s, [clients[s] EXCEPT !.answer = None, !.inflight = FALSE, !.reported = None])
    /\ budget' = [budget EXCEPT !.losses = @ - 1]
    /\ Quiet
    /\ UNCHANGED <<group, topics>>

Perturb == budget' = [budget EXCEPT !.perturbations = @ - 1]

Subscribe(s, ts) ==
    /\ budget.perturbations > 0
    /\ clients[s].state \in Live
    /\ clients[s].subscribed # ts
    /\ SetClient(s, [clients[s] EXCEPT !.subscribed = ts])
    /\ Perturb /\ Quiet
    /\ UNCHANGED <<group, topics>>

Leave(s) ==
    LET c == clients[s] IN
    /\ budget.perturbations > 0
    /\ c.state = CStable /\ c.memberEpoch > 0 /\ ~c.inflight
    /\ SetClient(s, [c EXCEPT !.state = Leaving, !.memberEpoch = LeaveEpoch, !.owned = {}, !.assignment = {}])
    /\ Perturb /\ Quiet
    /\ UNCHANGED <<group, topics>>

Resubscribe(s) ==
    /\ budget.perturbations > 0
    /\ clients[s].state = Unsubscribed
    /\ SetClient(s, [clients[s] EXCEPT !.state = Joining, !.memberEpoch = 0, !.owned = {}, !.assignment = {},
                                       !.reported = None])
    /\ Perturb /\ Quiet
    /\ UNCHANGED <<group, topics>>

Crash(s) ==
    LET c == clients[s] IN
    /\ budget.perturbations > 0
    /\ c.state \in Live
    /\ SetClient(s, [c EXCEPT !.state = Down, !.memberEpoch = 0, !.owned = {}, !.assignment = {},
                              !.reported = None, !.answer = None, !.inflight = FALSE, !.commit = None])
    /\ Perturb /\ Quiet
    /\ UNCHANGED <<group, topics>>

ExpireLive(s) ==
    /\ budget.perturbations > 0
    /\ clients[s].state # Down
    /\ IsMember(group.members, clients[s].memberId)
    /\ group' = Fence(group, topics, Find(group.members, clients[s].memberId))
    /\ Perturb /\ Quiet
    /\ UNCHANGED <<clients, topics>>

AddPartition(t) ==
    /\ GROW /\ budget.perturbations > 0
    /\ topics[t] < PMAX
    /\ topics' = [topics EXCEPT ![t] = @ + 1]
    /\ Perturb /\ Quiet
    /\ UNCHANGED <<group, clients>>

\* settled and healthy: nothing in flight, the live clients exactly the members, each holding its target
QuiescentGood ==
    LET live == {s \in Slots : clients[s].state # Unsubscribed} IN
    /\ \A s \in Slots : /\ clients[s].answer = None /\ clients[s].commit = None
                        /\ ~clients[s].inflight /\ clients[s].state # Down
    /\ \A s \in live : clients[s].state = CStable
    /\ Cardinality(live) = Cardinality(group.members)
    /\ live # {} =>
         /\ GroupState(group) = "Stable"
         /\ group.subscriptionMetadata = SubMeta(topics, group.members)
         /\ \A s \in live : /\ IsMember(group.members, clients[s].memberId)
                            /\ LET x == Find(group.members, clients[s].memberId)
                               IN /\ clients[s].owned = x.assigned
                                  /\ clients[s].memberEpoch = x.memberEpoch
                                  /\ clients[s].subscribed = x.subscribed

\* a state without actions is a deadlock unless it is settled and healthy
AllowedEnd == QuiescentGood /\ UNCHANGED vars

Init ==
    /\ group = [groupEpoch |-> 0, assignmentEpoch |-> 0, members |-> {}, target |-> {},
                partitionEpochs |-> [q \in PartIdx |-> Free], subscriptionMetadata |-> [t \in Topics |-> 0]]
    /\ clients = [s \in Slots |-> [state |-> Joining, memberId |-> s, memberEpoch |-> 0, owned |-> {},
                                   assignment |-> {}, subscribed |-> Topics, reported |-> None,
                                   answer |-> None, inflight |-> FALSE, commit |-> None]]
    /\ topics = [t \in Topics |-> PARTITIONS]
    /\ budget = [perturbations |-> PERTURBATIONS, losses |-> LOSSES, commits |-> COMMITS]
    /\ answered = {} /\ accepted = {} /\ reconciled = {}

Next ==
    \/ \E s \in Slots : Heartbeat(s)
    \/ \E s \in Slots : Receive(s)
    \/ \E s \in Slots : Reconcile(s)
    \/ \E s \in Slots : Commit(s)
    \/ \E s \in Slots : CommitArrives(s)
    \/ \E s \in Slots : Expire(s)
    \/ \E s \in Slots : Restart(s)
    \/ \E s \in Slots : Lose(s)
    \/ \E s \in Slots, ts \in (SUBSET Topics) \ {{}} : Subscribe(s, ts)
    \/ \E s \in Slots : Leave(s)
    \/ \E s \in Slots : Resubscribe(s)
    \/ \E s \in Slots : Crash(s)
    \/ \E s \in Slots : ExpireLive(s)
    \/ \E t \in Topics : AddPartition(t)
    \/ AllowedEnd

Spec == Init /\ [][Next]_vars

(* --- invariants (invariants/consumer_group.py) -------------------------- *)
TargetLegal ==
    /\ \A t \in group.target : /\ IsMember(group.members, t.memberId)
                               /\ t.partitions \subseteq PartsOf(topics, Find(group.members, t.memberId).subscribed)
    /\ \A t1, t2 \in group.target : t1.memberId # t2.memberId => t1.partitions \cap t2.partitions = {}

ClientsSingleOwner ==
    LET known == {s \in Slots : clients[s].state \in Live /\ IsMember(group.members, clients[s].memberId)} IN
    /\ \A a, b \in known : a # b => clients[a].owned \cap clients[b].owned = {}
    /\ \A a \in known : clients[a].owned \subseteq Held(Find(group.members, clients[a].memberId))

PartitionEpochsNameOwners ==
    /\ \A x, y \in group.members : x.memberId # y.memberId => Held(x) \cap Held(y) = {}
    /\ \A x \in group.members : \A q \in Held(x) : group.partitionEpochs[q] = x.memberEpoch
    /\ \A q \in PartIdx : group.partitionEpochs[q] # Free => \E x \in group.members : q \in Held(x)

StableGroupHoldsTarget ==
    GroupState(group) = "Stable" =>
        \A x \in group.members : /\ x.state = MStable /\ x.memberEpoch = group.assignmentEpoch
                                 /\ x.pendingRevocation = {} /\ x.assigned = TargetIn(group.target, x.memberId)

EpochsBounded ==
    /\ group.assignmentEpoch <= group.groupEpoch
    /\ \A x \in group.members : x.memberEpoch <= group.groupEpoch
    /\ \A s \in Slots : clients[s].memberEpoch <= group.groupEpoch

ClientEpochsValid == \A s \in Slots : clients[s].state \in Live => clients[s].memberEpoch >= 0

EmptyGroupEpochsAgree == group.members = {} => group.assignmentEpoch = group.groupEpoch

EpochsMonotonic ==
    /\ \A x \in group'.members : IsMember(group.members, x.memberId) =>
                                     x.memberEpoch >= Find(group.members, x.memberId).memberEpoch
    /\ \A s \in Slots : (clients'[s].memberId = clients[s].memberId /\ clients'[s].memberEpoch > 0) =>
                            clients'[s].memberEpoch >= clients[s].memberEpoch

EpochFollowsTarget ==
    \A x \in group'.members :
        (IsMember(group.members, x.memberId) /\ Find(group.members, x.memberId).memberEpoch # x.memberEpoch) =>
            x.memberEpoch = group'.assignmentEpoch /\ x.state # Unrevoked

UnreleasedWaitsForAnother ==
    \A id \in reconciled' :
        (IsMember(group'.members, id) /\ Find(group'.members, id).state = Unreleased) =>
            LET x == Find(group'.members, id)
                others == UNION {Held(y) : y \in {z \in group'.members : z.memberId # id}}
            IN (TargetIn(group'.target, id) \ x.assigned) \cap others # {}

RejoinAccepted == \A a \in answered' : ~(a.sentEpoch = 0 /\ a.error = Fenced)

CommitsAtCurrentEpoch ==
    \A c \in accepted' : IsMember(group.members, c.memberId)
                         /\ Find(group.members, c.memberId).memberEpoch = c.memberEpoch

AlwaysEpochsMonotonic == [][EpochsMonotonic]_vars
AlwaysEpochFollowsTarget == [][EpochFollowsTarget]_vars
AlwaysUnreleasedWaitsForAnother == [][UnreleasedWaitsForAnother]_vars
AlwaysRejoinAccepted == [][RejoinAccepted]_vars
AlwaysCommitsAtCurrentEpoch == [][CommitsAtCurrentEpoch]_vars
=============================================================================
