package loadgen

import (
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// watchLaunches subscribes a client of the load generator's own, beside
// the agents, to every agent's commands, and records for each task
// launched the time from its offer's arrival at its framework to the
// first time its launch command arrives here: offer to launch as far as
// the wire to the agent. It leaves out the agents' process, which on this
// machine runs niced behind the masters and frameworks (lagProbe), and
// would run on machines of its own in a cluster.
func (r *run) watchLaunches(nc *nats.Conn) error {
	byName := map[string]*busy{}
	for _, b := range r.scheds {
		byName[b.name] = b
	}
	_, err := nc.Subscribe(protocol.Subjects{}.AgentCmdAll("*"), func(msg *nats.Msg) {
		now := time.Now()
		env, err := protocol.Decode(msg.Data)
		if err != nil {
			return
		}
		var tasks []protocol.TaskInfo
		switch env.Type {
		case protocol.MsgLaunchCommand:
			var c protocol.LaunchCommand
			if protocol.DecodeBody(env, &c) == nil {
				tasks = c.Tasks
			}
		case protocol.MsgLaunchGroupCommand:
			var c protocol.LaunchGroupCommand
			if protocol.DecodeBody(env, &c) == nil {
				tasks = c.Tasks
			}
		}
		for _, t := range tasks {
			name, _, _ := strings.Cut(string(t.TaskID), "-")
			if b := byName[name]; b != nil {
				if at, ok := b.heardFirst(t.TaskID); ok {
					r.rec.onWire(at, now)
				}
			}
		}
	})
	return err
}
