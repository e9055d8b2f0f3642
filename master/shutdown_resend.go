package master

import (
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// A removed framework's shutdown goes to every agent its tasks ran on that
// the master still knows of: those where tasks still ran, which kill them,
// and those where only its completed tasks (the ones the master keeps, at
// most state.MaxCompletedTasks) ran, which learn that nobody will read
// those tasks' sandboxes any more and may remove them early when their
// disk is short (executor's sandbox collector). One command per agent.

// sendFrameworkShutdown tells the agents of tasks, a removed framework's,
// to shut framework fw down, once each, and returns how many it told.
func (l *leader) sendFrameworkShutdown(fw protocol.FrameworkID, tasks ...[]*state.Task) int {
	v := l.view()
	seen := map[protocol.AgentID]bool{}
	told := 0
	for _, ts := range tasks {
		for _, t := range ts {
			if seen[t.AgentID] {
				continue
			}
			seen[t.AgentID] = true
			if ag, ok := v.Agent(t.AgentID); !ok || ag.State == state.AgentGone {
				continue
			}
			l.sendAgent(t.AgentID, protocol.MsgShutdownFrameworkCommand, protocol.ShutdownFrameworkCommand{FrameworkID: fw})
			told++
		}
	}
	return told
}

// completedFramework returns the completed record of removed framework
// fw, the latest if it was removed more than once.
func completedFramework(v *state.View, fw protocol.FrameworkID) (*state.CompletedFramework, bool) {
	cfs := v.CompletedFrameworks()
	for i := len(cfs) - 1; i >= 0; i-- {
		if cfs[i].Framework.ID == fw {
			return cfs[i], true
		}
	}
	return nil, false
}

// resendFrameworkShutdowns tells the agents again to shut down the removed
// frameworks the master keeps. The leader that committed a removal sends
// the commands once, after the commit; if it lost leadership in between,
// no leader would send them again and the tasks would run on, their
// framework gone (agents do not reregister after a leader change). The
// completed frameworks' history marks the tasks that still ran (KILLED,
// framework_removed). Agents ignore a shutdown of a framework they do not
// run, but for remembering it gone.
func (l *leader) resendFrameworkShutdowns() {
	n := 0
	for _, cf := range l.view().CompletedFrameworks() {
		n += l.sendFrameworkShutdown(cf.Framework.ID, cf.Tasks)
	}
	if n > 0 {
		l.logger.Debug("framework shutdowns sent again", "count", n)
	}
}
