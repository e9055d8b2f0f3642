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
}

// ClusterEventType says what a ClusterEvent is about.
type ClusterEventType string

// The kinds of cluster event.
const (
	ClusterEventTask      ClusterEventType = "task_status"
	ClusterEventAgent     ClusterEventType = "agent"
	ClusterEventFramework ClusterEventType = "framework"
)

// AgentChange is an agent's new state: "active", "draining",
// "unreachable" or "gone".
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
