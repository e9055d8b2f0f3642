package jobs

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// Agent is what CheckFits needs of an agent: its total resources and its
// attributes.
type Agent struct {
	Resources  protocol.Resources
	Attributes protocol.Attributes
}

// CheckFits reports, at each group's position, the groups whose instance
// no agent could ever run: its tasks together need more than any agent
// has, or no agent meets its per-agent constraints. It says nothing of
// what the agents hold now, which changes.
func CheckFits(j *Job, agents []Agent) error {
	p := &problems{}
	for _, g := range j.Groups {
		if g.Count == 0 {
			continue
		}
		need, ports := g.Need()
		meets, fits := 0, 0
		for _, a := range agents {
			if !holdsAll(g.Constraints, a.Attributes) {
				continue
			}
			meets++
			if a.Resources.Contains(need) && int(a.Resources.Ranges[protocol.ResPorts].Normalize().Count()) >= ports {
				fits++
			}
		}
		p.file = g.Pos.File
		switch {
		case meets == 0:
			p.list = append(p.list, Problem{File: g.Pos.File, Line: g.Pos.Line, Column: g.Pos.Column,
				Message: fmt.Sprintf("group %q: none of the %d agents meets its constraints (%s)", g.Name, len(agents), constraintsText(g.Constraints))})
		case fits == 0:
			p.list = append(p.list, Problem{File: g.Pos.File, Line: g.Pos.Line, Column: g.Pos.Column,
				Message: fmt.Sprintf("group %q: an instance needs %s and %d ports, more than any agent that meets its constraints has", g.Name, need, ports)})
		}
	}
	return p.err()
}

func holdsAll(cs []protocol.Constraint, attrs protocol.Attributes) bool {
	for _, c := range cs {
		if !c.Soft && !c.IsGroup() && !c.Holds(attrs) {
			return false
		}
	}
	return true
}

func constraintsText(cs []protocol.Constraint) string {
	var parts []string
	for _, c := range cs {
		if !c.Soft && !c.IsGroup() {
			parts = append(parts, c.String())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Scalars is what the task asks for as allot resources (ports apart).
func (r Resources) Scalars() protocol.Resources {
	s := map[string]int64{protocol.ResCPUs: r.CPUMilli, protocol.ResMem: r.MemMiB}
	if r.DiskMiB > 0 {
		s[protocol.ResDisk] = r.DiskMiB
	}
	if n := int64(r.GPUs)*protocol.DeviceMilli + r.GPUMilli; n > 0 {
		s[protocol.ResGPUs] = n
	}
	return protocol.Resources{Scalars: s}
}

// Need is what one instance of the group asks for: its tasks' resources
// together, and their ports.
func (g Group) Need() (protocol.Resources, int) {
	need, ports := protocol.Resources{}, 0
	for _, t := range g.Tasks {
		need = need.Add(t.Resources.Scalars())
		ports += t.Resources.Ports
	}
	return need, ports
}
