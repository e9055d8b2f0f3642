package jobrunner

import (
	"fmt"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// tasksFor builds an instance's tasks on an agent whose free resources
// are avail: each task's resources, ports picked from what the agent
// offers, its health check pointed at the port its job names. It returns
// what is left, or false when the instance does not fit.
func tasksFor(in *instance, agent protocol.AgentID, avail protocol.Resources) ([]protocol.TaskInfo, protocol.Resources, bool) {
	left := avail.Clone()
	var out []protocol.TaskInfo
	for _, t := range in.group.Tasks {
		res := t.Resources.Scalars()
		if !placement.Fits(left, res) {
			return nil, avail, false
		}
		ports, err := placement.PickPorts(left, t.Resources.Ports)
		if err != nil {
			return nil, avail, false
		}
		res = placement.WithPorts(res, ports)
		left = left.Sub(res)
		b := framework.NewTask(taskID(in.id, t.Name), t.Command, t.Args...).Name(in.id+"."+t.Name).
			Resources(res).Constraint(in.group.Constraints...).On(agent).
			Label("allot.job", in.job).Label("allot.group", in.Group).Label("allot.version", fmt.Sprint(in.Version))
		if t.Shell {
			b.Shell()
		}
		for k, v := range t.Env {
			b.Env(k, v)
		}
		for _, u := range t.Artifacts {
			b.URI(u)
		}
		if t.User != "" {
			b.User(t.User)
		}
		if t.KillGrace > 0 {
			b.KillGrace(t.KillGrace)
		}
		if t.Check != nil {
			hc := *t.Check
			if hc.Type != protocol.HealthCheckCommand {
				hc.Port = int(placement.PortList(ports)[hc.Port])
			}
			b.HealthCheck(hc)
		}
		out = append(out, b.Build())
	}
	return out, left, true
}

// admits reports whether an instance may run on an agent with attrs: the
// group's per-agent constraints hold there, and its group constraints
// (unique, max_per, same) hold with the group's other live instances.
func admits(in *instance, attrs protocol.Attributes, peers []*instance) bool {
	var placed []protocol.Attributes
	for _, p := range peers {
		if p != in && p.Group == in.Group && p.placed && !p.State.Ended() {
			placed = append(placed, p.attrs)
		}
	}
	for _, c := range in.group.Constraints {
		if c.Soft {
			continue
		}
		if c.IsGroup() {
			if !protocol.GroupAllows(c, placed, attrs) {
				return false
			}
		} else if !c.Holds(attrs) {
			return false
		}
	}
	return true
}

// spreadLoad counts the group's live instances on agents that share a
// spread attribute's value with attrs: the offer with the least is used
// first.
func spreadLoad(in *instance, attrs protocol.Attributes, peers []*instance) int {
	n := 0
	for _, attr := range in.group.Spread {
		v, ok := attrs[attr]
		if !ok {
			continue
		}
		for _, p := range peers {
			if pv, ok := p.attrs[attr]; ok && p.Group == in.Group && p.placed && !p.State.Ended() && pv.String() == v.String() {
				n++
			}
		}
	}
	return n
}
