package master

import (
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// resendFrameworkShutdowns tells the agents again to shut down the removed
// frameworks that still had tasks on them. The leader that committed a
// removal sends the command once, after the commit; if it lost leadership
// in between, no leader would send it again and the tasks would run on,
// their framework gone (agents do not reregister after a leader change).
// The completed frameworks' history marks those tasks (KILLED,
// framework_removed). Agents ignore a shutdown of a framework they do not
// run.
func (l *leader) resendFrameworkShutdowns() {
	type target struct {
		agent     protocol.AgentID
		framework protocol.FrameworkID
	}
	seen := map[target]bool{}
	v := l.view()
	for _, cf := range v.CompletedFrameworks() {
		for _, t := range cf.Tasks {
			k := target{t.AgentID, cf.Framework.ID}
			if t.Reason != protocol.ReasonFrameworkRemoved || seen[k] {
				continue
			}
			seen[k] = true
			if ag, ok := v.Agent(t.AgentID); !ok || ag.State == state.AgentGone {
				continue
			}
			l.sendAgent(t.AgentID, protocol.MsgShutdownFrameworkCommand, protocol.ShutdownFrameworkCommand{FrameworkID: cf.Framework.ID})
		}
	}
	if len(seen) > 0 {
		l.logger.Debug("framework shutdowns sent again", "count", len(seen))
	}
}
