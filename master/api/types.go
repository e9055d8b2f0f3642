// Package api is the master's operator HTTP API as Go values: the JSON
// bodies the master serves and a client that finds the leader among the
// masters and calls it. The master renders these types; the allot CLI and
// any Go program decode them.
//
// Keys are snake_case and every key is always present (null when unset),
// so clients can rely on the shape. Lists are sorted (agents and frameworks
// by ID, tasks by framework then task ID, roles by path, offers by ID) and
// maps are emitted with sorted keys, so equal state renders to equal bytes.
// Times are RFC 3339 strings in UTC with nanoseconds, or null when unset.
package api

import "github.com/allot-project/allot/protocol"

// Leader answers GET /v1/leader.
type Leader struct {
	// LeaderID and LeaderRaftAddr are the Raft leader as this master's
	// Raft node knows it; empty during an election.
	LeaderID       string `json:"leader_id"`
	LeaderRaftAddr string `json:"leader_raft_addr"`
	// LeaderHTTPAddr is the leader's operator API: this master's own on
	// the leader, else the latest leader announcement from that leader
	// (empty until one arrives).
	LeaderHTTPAddr string `json:"leader_http_addr"`
	SelfID         string `json:"self_id"`
	// IsLeader reports whether this master serves as the leader (elected
	// and past its barrier).
	IsLeader bool `json:"is_leader"`
	// RaftIndex is the index of the last command applied to this master's
	// replicated state.
	RaftIndex uint64 `json:"raft_index"`
}

// State answers GET /v1/state.
type State struct {
	// LeaderID and LeaderHTTP name the leader that served the state (a
	// follower redirects to it), so they never disagree with the rest.
	LeaderID   string      `json:"leader_id"`
	LeaderHTTP string      `json:"leader_http,omitempty"`
	RaftIndex  uint64      `json:"raft_index"`
	Agents     []Agent     `json:"agents"`
	Frameworks []Framework `json:"frameworks"`
	Tasks      []Task      `json:"tasks"`
	Roles      []Role      `json:"roles"`
	Offers     []Offer     `json:"offers"`
	// CompletedFrameworks are removed frameworks, in the order they were
	// removed, each with its completed tasks.
	CompletedFrameworks []Framework `json:"completed_frameworks"`
}

// Agent is one registered agent.
type Agent struct {
	ID       protocol.AgentID `json:"id"`
	Hostname string           `json:"hostname"`
	// HTTP is the agent's file and shuffle server (host:port).
	HTTP         string             `json:"http"`
	State        string             `json:"state"`
	Resources    protocol.Resources `json:"resources"`
	Attributes   map[string]any     `json:"attributes"`
	RegisteredAt *string            `json:"registered_at"`
	// DrainDeadline is when the tasks still on a draining agent are
	// killed (null: never, or not draining).
	DrainDeadline *string `json:"drain_deadline"`
	// Drained reports a draining agent that runs no task any more.
	Drained bool `json:"drained"`
}

// Framework is one registered (or completed) framework.
type Framework struct {
	ID             protocol.FrameworkID `json:"id"`
	Name           string               `json:"name"`
	Principal      string               `json:"principal"`
	Role           string               `json:"role"`
	Weight         float64              `json:"weight"`
	Connected      bool                 `json:"connected"`
	DisconnectedAt *string              `json:"disconnected_at"`
	Suppressed     bool                 `json:"suppressed"`
	// FailoverTimeout is in seconds.
	FailoverTimeout float64 `json:"failover_timeout"`
	// CompletedTasks are the framework's most recent tasks that ended and
	// whose end it acknowledged, oldest first.
	CompletedTasks []Task `json:"completed_tasks"`
}

// Task is one task the master knows.
type Task struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	TaskID      protocol.TaskID      `json:"task_id"`
	AgentID     protocol.AgentID     `json:"agent_id"`
	State       protocol.TaskState   `json:"state"`
	Reason      string               `json:"reason"`
	Acked       bool                 `json:"acked"`
	Resources   protocol.Resources   `json:"resources"`
	Kind        protocol.OfferKind   `json:"kind"`
	// Healthy is the latest health-check result, null when the task has
	// no check or no result yet.
	Healthy *bool `json:"healthy"`
}

// Role is one role of the allocator's tree (frameworks, the tree's leaves,
// are not listed) with its current standing.
type Role struct {
	Path   string  `json:"path"`
	Weight float64 `json:"weight"`
	// DominantShare is the share H-DRF orders siblings by (unweighted,
	// after the policy's rescaling).
	DominantShare float64 `json:"dominant_share"`
	// Allocation is what the role's subtree runs and holds in outstanding
	// offers; Shares is that over cluster capacity, per resource name.
	Allocation protocol.Resources `json:"allocation"`
	Shares     map[string]float64 `json:"shares"`
	// Guarantee and Limit are the role's quota, when it has them.
	Guarantee *protocol.Resources `json:"guarantee,omitempty"`
	Limit     *protocol.Resources `json:"limit,omitempty"`
	// OfferConstraints are the role's, when it has any.
	OfferConstraints []protocol.Constraint `json:"offer_constraints,omitempty"`
	// Preemption is the role's preemption policy: "off", "guarantees" or
	// "fair"; empty inherits its parent's (docs/preemption.md).
	Preemption string `json:"preemption,omitempty"`
}

// Offer is one outstanding offer.
type Offer struct {
	ID          protocol.OfferID     `json:"id"`
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	AgentID     protocol.AgentID     `json:"agent_id"`
	Resources   protocol.Resources   `json:"resources"`
	Kind        string               `json:"kind"`
	Expires     *string              `json:"expires"`
}

// Error is the body of every HTTP error.
type Error struct {
	Error string `json:"error"`
	// Code is the error's protocol code (protocol.ErrUnknownTask's, say)
	// when a typed error of the leader caused it; absent otherwise.
	Code protocol.Code `json:"code,omitempty"`
	// LeaderID names the leader when a follower cannot redirect to it.
	LeaderID string `json:"leader_id,omitempty"`
}

// AgentState answers an operator action on an agent (drain, activate,
// gone).
type AgentState struct {
	AgentID string `json:"agent_id"`
	State   string `json:"state"`
	// DrainDeadline is when the agent's remaining tasks are killed (null:
	// never).
	DrainDeadline *string `json:"drain_deadline"`
}

// RoleRequest is the body of PUT /v1/roles/{path}. A field left out (nil,
// or "" for Preemption) keeps the role's current setting, or its default
// for a new role: weight 1, no guarantee, no limit, no offer
// constraints, its parent's preemption policy. An empty guarantee, limit
// or list of offer constraints removes it; Preemption "inherit" goes back
// to the parent's policy.
type RoleRequest struct {
	Weight    *float64         `json:"weight,omitempty"`
	Guarantee map[string]int64 `json:"guarantee"`
	Limit     map[string]int64 `json:"limit"`
	// OfferConstraints keep the role's frameworks to the agents that
	// satisfy them all (hard, per-agent constraints).
	OfferConstraints []protocol.Constraint `json:"offer_constraints"`
	// Preemption is the role's preemption policy: "off", "guarantees",
	// "fair" or "inherit" (its parent's; docs/preemption.md).
	Preemption string `json:"preemption,omitempty"`
}

// PreemptionInherit in a RoleRequest sets a role back to its parent's
// preemption policy.
const PreemptionInherit = "inherit"

// RoleConfig answers PUT /v1/roles/{path}.
type RoleConfig struct {
	Path             string                `json:"path"`
	Weight           float64               `json:"weight"`
	Guarantee        protocol.Resources    `json:"guarantee"`
	Limit            protocol.Resources    `json:"limit"`
	OfferConstraints []protocol.Constraint `json:"offer_constraints"`
	Preemption       string                `json:"preemption,omitempty"`
	// Warnings say what in the role's setting cannot hold as set, e.g. a
	// guarantee beyond what the cluster's agents hold.
	Warnings []string `json:"warnings,omitempty"`
}

// Explanation answers GET /v1/frameworks/{id}/explain: what the framework
// asks for and why it is or is not offered resources.
type Explanation struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	Role        string               `json:"role"`
	Connected   bool                 `json:"connected"`
	Suppressed  bool                 `json:"suppressed"`
	// Declared reports whether it declared demand; one that did not is
	// offered whole remainders.
	Declared bool `json:"declared"`
	// Allocation is what it runs plus holds in outstanding offers; Offered
	// the part in its Offers outstanding offers.
	Allocation    protocol.Resources `json:"allocation"`
	Offered       protocol.Resources `json:"offered"`
	Offers        int                `json:"offers"`
	DominantShare float64            `json:"dominant_share"`
	// Agents is how many agents are registered.
	Agents  int      `json:"agents"`
	Filters []Filter `json:"filters"`
	Shapes  []Shape  `json:"shapes"`
	// Reasons say in plain words what keeps offers from it, most decisive
	// first; empty when a task of it fits some agent now, which leaves only
	// its turn in H-DRF order.
	Reasons []string `json:"reasons"`
	// Preemption lists the needs for which the leader takes, or will take,
	// resources back that concern the framework: its own fair share, or a
	// guarantee of a role above it; and Warned its tasks warned of being
	// taken.
	Preemption []PreemptionNeed `json:"preemption,omitempty"`
	Warned     []WarnedTask     `json:"warned,omitempty"`
}

// Filter is a decline filter in force on an agent; Until is null for one
// without expiry.
type Filter struct {
	AgentID protocol.AgentID `json:"agent_id"`
	Until   *string          `json:"until"`
}

// Shape is one declared task shape and where one task of it could go now.
type Shape struct {
	// Kind is "fair" (must-start) or "leftover" (optional).
	Kind        string                `json:"kind"`
	Resources   protocol.Resources    `json:"resources"`
	Ports       int                   `json:"ports"`
	Constraints []protocol.Constraint `json:"constraints"`
	// Pending is how many tasks are still wanted, null for no bound;
	// Offered how many are in outstanding offers.
	Pending *int64 `json:"pending"`
	Offered int64  `json:"offered"`
	// LimitedBy names the roles whose quota limit one more task would
	// exceed.
	LimitedBy []string `json:"limited_by"`
	// HeldBack reports that one more task would eat into what is held back
	// for other roles' unmet quota guarantees.
	HeldBack bool     `json:"held_back"`
	Agents   AgentFit `json:"agents"`
}

// AgentFit counts the registered agents once each, under the first reason
// in this order that keeps one task of a shape off them.
type AgentFit struct {
	Draining    int `json:"draining"`
	Filtered    int `json:"filtered"`
	Role        int `json:"role"`
	Constraints int `json:"constraints"`
	Resources   int `json:"resources"`
	Fit         int `json:"fit"`
}

// RaftPeers answers GET /v1/operator/raft/peers and the membership
// changes: the masters' Raft configuration as the answering master knows
// it.
type RaftPeers struct {
	Peers []RaftPeer `json:"peers"`
}

// RaftPeer is one member of the masters' Raft configuration.
type RaftPeer struct {
	ID      string `json:"id"`
	Address string `json:"address"`
	Leader  bool   `json:"leader"`
}

// RaftPeerRequest is the body of POST /v1/operator/raft/peers: the new
// master's node ID and advertised Raft address.
type RaftPeerRequest struct {
	ID      string `json:"id"`
	Address string `json:"address"`
}

// Restored answers PUT /v1/operator/snapshot.
type Restored struct {
	// SnapshotIndex is the Raft index the snapshot was taken at.
	SnapshotIndex uint64 `json:"snapshot_index"`
}

// FilesToken answers GET /v1/frameworks/{id}/files-token: the token that
// reads the framework's sandboxes on the agents' file servers.
type FilesToken struct {
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	Token       string               `json:"token"`
}

// Coflows is GET /v1/coflows: the shuffles frameworks registered with the
// leader for coflow scheduling, and how many have completed since it was
// elected.
type Coflows struct {
	Coflows   []Coflow `json:"coflows"`
	Completed uint64   `json:"completed"`
}

// Coflow is one registered coflow as the coordinator sees it.
type Coflow struct {
	FrameworkID string `json:"framework_id"`
	CoflowID    string `json:"coflow_id"`
	// Phase is "thin", "pilot" or "queued" (Philae; other schedulers keep
	// every coflow queued); Queue is its priority queue, -1 when in none.
	Phase string `json:"phase"`
	Queue int    `json:"queue"`
	Flows int    `json:"flows"`
	// FlowsLeft counts the flows that have not finished.
	FlowsLeft int   `json:"flows_left"`
	BytesSent int64 `json:"bytes_sent"`
	// EstimatedBytes is the size Philae estimates from its pilot flows
	// (0 before they finish).
	EstimatedBytes float64 `json:"estimated_bytes"`
	RegisteredAt   int64   `json:"registered_at"`
}

// Job is a job of a principal's job runner, as the runner recorded it in
// the principal's store (docs/jobs.md).
type Job struct {
	Principal string `json:"principal"`
	Name      string `json:"name"`
	// Version is the version to run; State what the runner last
	// recorded of it ("pending" before it did, "stopped" once asked to).
	Version       int    `json:"version"`
	State         string `json:"state"`
	Message       string `json:"message,omitempty"`
	StableVersion int    `json:"stable_version,omitempty"`
	Versions      []int  `json:"versions"`
	// Parent names the periodic job a run was made of.
	Parent    string        `json:"parent,omitempty"`
	Instances []JobInstance `json:"instances"`
	// Source is the current version's job file (a job's own page only).
	Source string `json:"source,omitempty"`
}

// JobInstance is one instance of a job.
type JobInstance struct {
	ID      string           `json:"id"`
	State   string           `json:"state"`
	Healthy bool             `json:"healthy"`
	Agent   protocol.AgentID `json:"agent,omitempty"`
	Since   string           `json:"since"`
	Message string           `json:"message,omitempty"`
}
