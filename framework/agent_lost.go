package framework

import "github.com/allot-project/allot/protocol"

// AgentLostHandler is an optional interface of a Scheduler: a scheduler
// that implements it is told when the master takes an agent out of the
// cluster (it missed its heartbeats, or was removed), as Mesos tells
// frameworks with its FAILURE event. The statuses of the tasks running
// there come all the same (UNREACHABLE or LOST); the event is for what
// tasks that had already finished left on the agent, which the framework
// can no longer read: a MapReduce framework runs the maps whose output
// was there again at once, rather than waiting for its reducers to fail
// to fetch it.
//
// The driver checks for it by type assertion on the Scheduler given to
// NewDriver. It is called like the Scheduler's callbacks, on the
// goroutine running Driver.Run. The event reaches the frameworks
// connected when the master took the agent out, at most once.
type AgentLostHandler interface {
	AgentLost(d *Driver, ev protocol.AgentLostEvent)
}
