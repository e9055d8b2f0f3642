package state

import (
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// The model types below are stored in a State and handed out by a View.
// A stored object is never modified: Apply replaces it with a new one.
// Callers that get one from a View must treat it, and every map and slice
// it holds, as read-only. Times are Unix nanoseconds stamped by the leader
// into the command that set them; 0 means unset. The msgpack names are the
// snapshot format and are never renumbered or repurposed.

// Quota bounds what a role's subtree may use. Resource names absent from
// Limit are unbounded.
type Quota struct {
	// Guarantee is what the role is entitled to even under contention.
	Guarantee protocol.Resources `msgpack:"guar,omitempty" json:"guarantee,omitempty"`
	// Limit is the most the role may hold.
	Limit protocol.Resources `msgpack:"limit,omitempty" json:"limit,omitempty"`
}

// Role is a configured node of the role tree. Roles that frameworks use but
// nobody configured are implicit, with weight 1 and no quota; the role tree
// is the set of paths, so a parent need not be configured for a child to be.
type Role struct {
	// Path names the role, e.g. "eng/prod".
	Path string `msgpack:"path" json:"path"`
	// Weight is the role's weight among its siblings; always > 0.
	Weight float64 `msgpack:"w" json:"weight"`
	// Quota is nil when the role has none.
	Quota *Quota `msgpack:"quota,omitempty" json:"quota,omitempty"`
	// OfferConstraints keep the role's frameworks, and those of the roles
	// below it, to agents whose attributes satisfy them all.
	OfferConstraints []protocol.Constraint `msgpack:"cons,omitempty" json:"offer_constraints,omitempty"`
	// Preemption is the role's preemption policy ("off", "guarantees",
	// "fair"); "" inherits its parent's, and the root's is the cluster's.
	Preemption string `msgpack:"preempt,omitempty" json:"preemption,omitempty"`
}

// AgentState is an agent's administrative and liveness state.
type AgentState string

// Agent states.
const (
	// AgentActive: registered and receiving offers.
	AgentActive AgentState = "active"
	// AgentDraining: running its tasks but getting no new ones.
	AgentDraining AgentState = "draining"
	// AgentUnreachable: missed its heartbeats; it may reregister.
	AgentUnreachable AgentState = "unreachable"
	// AgentGone: permanently out of the cluster; it may not reregister.
	AgentGone AgentState = "gone"
)

// Valid reports whether s is a known state.
func (s AgentState) Valid() bool {
	switch s {
	case AgentActive, AgentDraining, AgentUnreachable, AgentGone:
		return true
	}
	return false
}

// Agent is a registered agent.
type Agent struct {
	ID       protocol.AgentID `msgpack:"id" json:"id"`
	Hostname string           `msgpack:"host" json:"hostname"`
	// Principal is the credential the agent registered with ("" for an
	// agent of a cluster that authenticates none): only connections of
	// that credential may act as the agent or receive its commands.
	Principal string `msgpack:"principal,omitempty" json:"principal,omitempty"`
	// HTTPAddr is the host:port of the agent's file and shuffle server.
	HTTPAddr string `msgpack:"http,omitempty" json:"http_addr,omitempty"`
	// Resources are the agent's total resources.
	Resources  protocol.Resources  `msgpack:"res" json:"resources"`
	Attributes protocol.Attributes `msgpack:"attrs,omitempty" json:"attributes,omitempty"`
	// Version is the agent's software version.
	Version      string     `msgpack:"ver,omitempty" json:"version,omitempty"`
	State        AgentState `msgpack:"st" json:"state"`
	RegisteredAt int64      `msgpack:"reg" json:"registered_at"`
	// UnreachableAt is when the agent became unreachable; 0 unless State
	// is AgentUnreachable (or AgentGone after being unreachable).
	UnreachableAt int64 `msgpack:"unreach,omitempty" json:"unreachable_at,omitempty"`
	// UpdatedAt is when the agent last (re)registered or changed state.
	UpdatedAt int64 `msgpack:"upd" json:"updated_at"`
	// DrainDeadline is when the leader kills the tasks still running on a
	// draining agent, Unix nanoseconds; 0 for a drain without one (and for
	// an agent that is not draining).
	DrainDeadline int64 `msgpack:"drain_by,omitempty" json:"drain_deadline,omitempty"`
	// SilentSince is when a leader last heard from the agent, Unix
	// nanoseconds, once it has gone quiet for a few heartbeats
	// (MarkAgentsSilent); 0 while it is heard from. A new leader counts
	// the agent's silence from it.
	SilentSince int64 `msgpack:"silent,omitempty" json:"silent_since,omitempty"`
}

// Framework is a subscribed framework.
type Framework struct {
	ID        protocol.FrameworkID `msgpack:"id" json:"id"`
	Name      string               `msgpack:"name" json:"name"`
	Principal string               `msgpack:"principal,omitempty" json:"principal,omitempty"`
	// Role is the role path the framework is a leaf under.
	Role string `msgpack:"role" json:"role"`
	// Weight is the framework's weight among its role's frameworks; > 0.
	Weight float64 `msgpack:"w" json:"weight"`
	// FailoverTimeout is how long the framework's tasks survive its
	// disconnection.
	FailoverTimeout time.Duration `msgpack:"failover,omitempty" json:"failover_timeout,omitempty"`
	// Capabilities are sorted and free of duplicates.
	Capabilities []string `msgpack:"caps,omitempty" json:"capabilities,omitempty"`
	// User is the Unix user the framework's tasks run as when they name
	// none ("" for the agents' default task user).
	User      string `msgpack:"user,omitempty" json:"user,omitempty"`
	Connected bool   `msgpack:"conn" json:"connected"`
	// DisconnectedAt is when the framework disconnected; 0 while
	// connected. The failover timer runs from here, also across a master
	// failover.
	DisconnectedAt int64 `msgpack:"disc,omitempty" json:"disconnected_at,omitempty"`
	RegisteredAt   int64 `msgpack:"reg" json:"registered_at"`
	// Suppressed frameworks want no offers until they revive.
	Suppressed bool `msgpack:"supp,omitempty" json:"suppressed,omitempty"`
	// Nonce is the registration nonce of the framework's first subscribe.
	Nonce string `msgpack:"nonce,omitempty" json:"-"`
	// Session counts the schedulers that have held the framework: 1 for the
	// one that registered it, one more at each takeover (see
	// RegisterFramework). Instance is the current holder's.
	Session  uint64 `msgpack:"sess,omitempty" json:"session,omitempty"`
	Instance string `msgpack:"inst,omitempty" json:"-"`
}

// HasCapability reports whether the framework declared capability c.
func (f *Framework) HasCapability(c string) bool {
	_, ok := slices.BinarySearch(f.Capabilities, c)
	return ok
}

// TaskKey identifies a task: task IDs are unique only within a framework.
type TaskKey struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw" json:"framework_id"`
	TaskID      protocol.TaskID      `msgpack:"tid" json:"task_id"`
}

// String renders the key as "framework/task".
func (k TaskKey) String() string { return string(k.FrameworkID) + "/" + string(k.TaskID) }

// Task is a launched task with its latest status. A task stays in the
// table until it is terminal and the framework has acknowledged its
// terminal status, or until its framework is removed.
type Task struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw" json:"framework_id"`
	ID          protocol.TaskID      `msgpack:"id" json:"id"`
	AgentID     protocol.AgentID     `msgpack:"ag" json:"agent_id"`
	// Info is the task as launched; Info.Kind is always set.
	Info protocol.TaskInfo `msgpack:"info" json:"info"`
	// State, Reason and Message repeat Status's fields.
	State   protocol.TaskState `msgpack:"st" json:"state"`
	Reason  string             `msgpack:"reason,omitempty" json:"reason,omitempty"`
	Message string             `msgpack:"msg,omitempty" json:"message,omitempty"`
	// Kind is the kind of offer the task was launched on.
	Kind protocol.OfferKind `msgpack:"kind" json:"kind"`
	// Status is the latest status; its UUID equals StatusUUID.
	Status protocol.TaskStatus `msgpack:"status" json:"status"`
	// StatusUUID names the latest status update; empty for the initial
	// STAGING status, which needs no acknowledgement.
	StatusUUID protocol.StatusUUID `msgpack:"uuid,omitempty" json:"status_uuid,omitempty"`
	// Acked reports whether the framework acknowledged the latest status.
	Acked bool `msgpack:"acked,omitempty" json:"acked"`
	// Unacked holds the statuses before the latest that the framework has
	// not acknowledged, oldest first. They go to the framework one at a
	// time, in order, before the latest (Pending), as a Mesos agent sends a
	// task's next update only once the scheduler acknowledged the one
	// before.
	Unacked    []protocol.TaskStatus `msgpack:"unacked,omitempty" json:"unacked,omitempty"`
	LaunchedAt int64                 `msgpack:"launched" json:"launched_at"`
	UpdatedAt  int64                 `msgpack:"upd" json:"updated_at"`
}

// Key returns the task's key.
func (t *Task) Key() TaskKey { return TaskKey{FrameworkID: t.FrameworkID, TaskID: t.ID} }

// Pending returns the status the framework is to receive next: the oldest
// it has not acknowledged. ok is false when it acknowledged them all.
func (t *Task) Pending() (st protocol.TaskStatus, ok bool) {
	if len(t.Unacked) > 0 {
		return t.Unacked[0], true
	}
	return t.Status, !t.Acked
}

// Terminal reports whether the task is in a terminal state.
func (t *Task) Terminal() bool { return t.State.Terminal() }

// taskKey is the tasks tree key of a task: framework, then task ID.
func taskKey(fw protocol.FrameworkID, id protocol.TaskID) string {
	return string(fw) + keySep + string(id)
}

// agentTaskKey is the byAgent tree key of a task: agent, framework, task ID.
func agentTaskKey(ag protocol.AgentID, fw protocol.FrameworkID, id protocol.TaskID) string {
	return string(ag) + keySep + string(fw) + keySep + string(id)
}
