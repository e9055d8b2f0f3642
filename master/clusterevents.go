package master

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// Cluster events (protocol.ClusterEvent on Subjects.Events): the leader
// publishes each committed change of a task, an agent or a framework, for
// operators and tools; GET /v1/events streams them over HTTP
// (http_events.go).

func (l *leader) publishClusterEvent(ev protocol.ClusterEvent) {
	ev.Time = time.Now().UnixNano()
	l.publish(l.subj.Events(), protocol.MsgClusterEvent, ev)
}

func (l *leader) taskEvent(st protocol.TaskStatus) {
	l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventTask, Task: &st})
}

func (l *leader) agentEvent(id protocol.AgentID, hostname, state string) {
	l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventAgent,
		Agent: &protocol.AgentChange{AgentID: id, Hostname: hostname, State: state}})
}

// frameworkEvent reports a framework's new state, with its name and role
// while the state still knows them.
func (l *leader) frameworkEvent(id protocol.FrameworkID, state string) {
	ch := &protocol.FrameworkChange{FrameworkID: id, State: state}
	if f, ok := l.view().Framework(id); ok {
		ch.Name, ch.Role = f.Name, f.Role
	}
	l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventFramework, Framework: ch})
}

// sendAgentLost tells every connected framework that an agent is out of
// the cluster, as Mesos tells its frameworks with a FAILURE event: tasks
// that ended there may have left output the framework can no longer
// read.
func (l *leader) sendAgentLost(ev protocol.AgentLostEvent) {
	for _, f := range l.view().Frameworks() {
		if f.Connected {
			l.publishFramework(f.ID, protocol.MsgAgentLostEvent, ev)
		}
	}
}
