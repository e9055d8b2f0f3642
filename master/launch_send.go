package master

import (
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// resendStagingLaunches sends again every launch that was committed but may
// never have reached its agent (the previous leader, or this one, lost
// leadership between the commit and the send). Agents ignore a launch of a
// task they already know.
func (l *leader) resendStagingLaunches() {
	var staging []*state.Task
	for _, t := range l.view().Tasks() {
		if t.State == protocol.TaskStaging {
			staging = append(staging, t)
		}
	}
	l.resendLaunches(staging)
}

// resendLaunches sends the launches of tasks again, per agent and
// framework (see sendLaunches).
func (l *leader) resendLaunches(tasks []*state.Task) {
	type target struct {
		agent protocol.AgentID
		fw    protocol.FrameworkID
	}
	var order []target
	byTarget := map[target][]protocol.TaskInfo{}
	for _, t := range tasks {
		k := target{t.AgentID, t.FrameworkID}
		if _, ok := byTarget[k]; !ok {
			order = append(order, k)
		}
		byTarget[k] = append(byTarget[k], t.Info)
	}
	for _, k := range order {
		l.sendLaunches(k.agent, k.fw, byTarget[k])
	}
}

// sendLaunches sends committed launches of one framework to an agent:
// tasks of a task group (TaskInfo.GroupID) go together as a group, which
// the agent starts all or nothing, the others as one launch.
func (l *leader) sendLaunches(agent protocol.AgentID, fw protocol.FrameworkID, tasks []protocol.TaskInfo) {
	var plain []protocol.TaskInfo
	var groups []string
	byGroup := map[string][]protocol.TaskInfo{}
	for _, t := range tasks {
		if t.GroupID == "" {
			plain = append(plain, t)
			continue
		}
		if _, ok := byGroup[t.GroupID]; !ok {
			groups = append(groups, t.GroupID)
		}
		byGroup[t.GroupID] = append(byGroup[t.GroupID], t)
	}
	for _, g := range groups {
		l.sendAgent(agent, protocol.MsgLaunchGroupCommand, protocol.LaunchGroupCommand{FrameworkID: fw, GroupID: g, Tasks: byGroup[g]})
	}
	if len(plain) > 0 {
		l.sendAgent(agent, protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: fw, Tasks: plain})
	}
}
