package protocol

// Offer is a bundle of one agent's resources offered to one framework.
type Offer struct {
	ID          OfferID     `msgpack:"id" json:"id"`
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	AgentID     AgentID     `msgpack:"ag" json:"agent_id"`
	Hostname    string      `msgpack:"host" json:"hostname"`
	// Addresses are the agent's advertised addresses: HTTP is its file
	// server, where tasks read their framework's sandboxes on that agent
	// (the shuffle), and its host is where the agent's tasks are reached.
	Addresses  Addresses  `msgpack:"addrs,omitempty" json:"addresses,omitempty"`
	Resources  Resources  `msgpack:"res" json:"resources"`
	Attributes Attributes `msgpack:"attrs,omitempty" json:"attributes,omitempty"`
	Kind       OfferKind  `msgpack:"kind" json:"kind"`
	// Revocable marks resources lent beyond the framework's fair share
	// (leftover offers): tasks launched on them may be revoked when the
	// lender wants them back (docs/preemption.md).
	Revocable bool `msgpack:"rev,omitempty" json:"revocable,omitempty"`
	// ExpiresAt is when the leader rescinds the offer if it is still held,
	// in Unix nanoseconds; 0 means no timeout.
	ExpiresAt int64 `msgpack:"exp,omitempty" json:"expires_at,omitempty"`
}

// OffersEvent delivers new offers to a framework.
type OffersEvent struct {
	Offers []Offer `msgpack:"offers" json:"offers"`
}

// RescindEvent withdraws an offer (timeout, agent lost, leader change);
// accepting it afterwards fails with ErrOfferRescinded or ErrUnknownOffer.
type RescindEvent struct {
	OfferID OfferID `msgpack:"of" json:"offer_id"`
	Reason  string  `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// StatusUpdateEvent delivers a status update to a framework. When UUID is
// set the framework must acknowledge it (AcknowledgeRequest); the leader
// resends it until then.
type StatusUpdateEvent struct {
	Status TaskStatus `msgpack:"s" json:"status"`
	UUID   StatusUUID `msgpack:"uuid,omitempty" json:"uuid,omitempty"`
}

// ShareUpdateEvent tells a framework where it stands in the fairness
// hierarchy, so its planner can tell its fair share from leftover.
type ShareUpdateEvent struct {
	// Role is the framework's role path.
	Role string `msgpack:"role" json:"role"`
	// DominantShare is the framework's weighted dominant share (0 to 1+).
	DominantShare float64 `msgpack:"dom" json:"dominant_share"`
	// Shares is the framework's share of each resource, by name.
	Shares map[string]float64 `msgpack:"shares,omitempty" json:"shares,omitempty"`
	// FairShare is the amount of each scalar resource the framework is
	// guaranteed under H-DRF at current demand.
	FairShare map[string]int64 `msgpack:"fair,omitempty" json:"fair_share,omitempty"`
}

// ErrorEvent reports an asynchronous error to a framework (e.g. it was
// removed after its failover timeout).
type ErrorEvent struct {
	Error Error `msgpack:"err" json:"error"`
}

// Err returns the event's error rebuilt with FromWire, so errors.Is works.
func (e ErrorEvent) Err() error { return FromWire(&e.Error) }

// HeartbeatEvent is sent to every subscribed framework at the interval in
// SubscribeReply; Seq increases by one per beat from the same leader.
type HeartbeatEvent struct {
	Seq uint64 `msgpack:"seq" json:"seq"`
	// FilesToken is a fresh files token of the framework (as in
	// SubscribeReply): tokens expire, so the leader hands out new ones
	// while the framework stays connected.
	FilesToken string `msgpack:"files,omitempty" json:"files_token,omitempty"`
}

// PreemptionEvent warns a framework that the master will kill some of its
// tasks at Deadline unless the need for them passes first (the framework
// may release other tasks of the same size on the same agents, for one).
// When Withdrawn is set the warning for these tasks is cancelled: they may
// run on.
type PreemptionEvent struct {
	Tasks []PreemptedTask `msgpack:"tasks" json:"tasks"`
	// Deadline is when the tasks are killed, Unix nanoseconds.
	Deadline  int64 `msgpack:"deadline,omitempty" json:"deadline,omitempty"`
	Withdrawn bool  `msgpack:"withdrawn,omitempty" json:"withdrawn,omitempty"`
}

// PreemptedTask is one task named in a PreemptionEvent.
type PreemptedTask struct {
	TaskID    TaskID    `msgpack:"tid" json:"task_id"`
	AgentID   AgentID   `msgpack:"ag" json:"agent_id"`
	Resources Resources `msgpack:"res,omitempty" json:"resources,omitempty"`
	// Reason is ReasonPreempted, ReasonRevoked, ReasonAgentDrained or
	// ReasonKilledByOperator: the reason the kill will carry.
	Reason string `msgpack:"reason" json:"reason"`
}

// AgentLostEvent tells every framework that the master took an agent out
// of the cluster (Mesos's FAILURE event): it missed its heartbeats
// (unreachable) or was removed (gone). Its tasks' statuses follow
// separately; what the event adds is for tasks that had already ended
// there, whose output in their sandboxes is now out of reach, as a
// MapReduce framework's finished maps' is.
type AgentLostEvent struct {
	AgentID  AgentID `msgpack:"agent" json:"agent_id"`
	Hostname string  `msgpack:"host,omitempty" json:"hostname,omitempty"`
	// State is the agent's state now: "unreachable" or "gone".
	State string `msgpack:"state" json:"state"`
}
