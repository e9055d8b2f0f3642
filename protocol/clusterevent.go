package protocol

// ClusterEvent is one change of the cluster's state, published by the
// leader on Subjects.Events once it is committed, for operators and tools
// (Mesos's operator event stream, Nomad's event stream). Delivery is at
// most once on NATS and at least once per change: a status update a leader
// sends again is published again. Exactly one of Task, Agent and
// Framework is set, as Type says.
type ClusterEvent struct {
	Type ClusterEventType `msgpack:"type" json:"type"`
	// Time is when the leader published it, Unix nanoseconds.
	Time      int64            `msgpack:"time" json:"time"`
	Task      *TaskStatus      `msgpack:"task,omitempty" json:"task,omitempty"`
	Agent     *AgentChange     `msgpack:"agent,omitempty" json:"agent,omitempty"`
	Framework *FrameworkChange `msgpack:"fw,omitempty" json:"framework,omitempty"`
	// Operator is an action an operator took (ClusterEventOperator).
	Operator *OperatorAction `msgpack:"op,omitempty" json:"operator,omitempty"`
	// Preemption is a task warned, killed or let go by the master
	// (ClusterEventPreemption).
	Preemption *PreemptionChange `msgpack:"pre,omitempty" json:"preemption,omitempty"`
}

// ClusterEventType says what a ClusterEvent is about.
type ClusterEventType string

// The kinds of cluster event.
const (
	ClusterEventTask      ClusterEventType = "task_status"
	ClusterEventAgent     ClusterEventType = "agent"
	ClusterEventFramework ClusterEventType = "framework"
	// ClusterEventOperator records an operator's action.
	ClusterEventOperator ClusterEventType = "operator"
	// ClusterEventPreemption records a preemption, revocation or drain
	// kill: warned, killed or withdrawn.
	ClusterEventPreemption ClusterEventType = "preemption"
)

// Operator actions recorded in OperatorAction.Action.
const (
	OperatorKillTask          = "kill_task"
	OperatorTeardownFramework = "teardown_framework"
	OperatorDrainAgent        = "drain_agent"
	OperatorActivateAgent     = "activate_agent"
	OperatorMarkAgentGone     = "mark_agent_gone"
)

// OperatorAction is one action an operator took through the API.
type OperatorAction struct {
	Action      string      `msgpack:"action" json:"action"`
	FrameworkID FrameworkID `msgpack:"fw,omitempty" json:"framework_id,omitempty"`
	TaskID      TaskID      `msgpack:"tid,omitempty" json:"task_id,omitempty"`
	AgentID     AgentID     `msgpack:"ag,omitempty" json:"agent_id,omitempty"`
	// Detail says more: a drain's deadline, a forced kill.
	Detail string `msgpack:"detail,omitempty" json:"detail,omitempty"`
}

// Preemption states recorded in PreemptionChange.State.
const (
	PreemptionWarned    = "warned"
	PreemptionKilled    = "killed"
	PreemptionWithdrawn = "withdrawn"
)

// PreemptionChange is a step in the life of one preemption, revocation or
// drain kill.
type PreemptionChange struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	TaskID      TaskID      `msgpack:"tid" json:"task_id"`
	AgentID     AgentID     `msgpack:"ag" json:"agent_id"`
	// Reason is the kill's reason (ReasonPreempted, ReasonRevoked,
	// ReasonAgentDrained).
	Reason string `msgpack:"reason" json:"reason"`
	State  string `msgpack:"st" json:"state"`
	// Deadline is when the task is killed, Unix nanoseconds (warned).
	Deadline int64 `msgpack:"deadline,omitempty" json:"deadline,omitempty"`
	// For names the role or framework whose need the task was taken for.
	For string `msgpack:"for,omitempty" json:"for,omitempty"`
}

// AgentChange is an agent's new state: "active", "draining",
// "unreachable" or "gone", or "drained" for a draining agent left with no
// live task (reported once per drain by each leader).
type AgentChange struct {
	AgentID  AgentID `msgpack:"ag" json:"agent_id"`
	Hostname string  `msgpack:"host,omitempty" json:"hostname,omitempty"`
	State    string  `msgpack:"st" json:"state"`
}

// FrameworkChange is a framework's new state: "subscribed",
// "disconnected" or "removed".
type FrameworkChange struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	Name        string      `msgpack:"name,omitempty" json:"name,omitempty"`
	Role        string      `msgpack:"role,omitempty" json:"role,omitempty"`
	State       string      `msgpack:"st" json:"state"`
}
