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
		need := protocol.Resources{Scalars: map[string]int64{}}
		ports := 0
		for _, t := range g.Tasks {
			need.Scalars[protocol.ResCPUs] += t.Resources.CPUMilli
			need.Scalars[protocol.ResMem] += t.Resources.MemMiB
			if t.Resources.DiskMiB > 0 {
				need.Scalars[protocol.ResDisk] += t.Resources.DiskMiB
			}
			if n := int64(t.Resources.GPUs)*protocol.DeviceMilli + t.Resources.GPUMilli; n > 0 {
				need.Scalars[protocol.ResGPUs] += n
			}
			ports += t.Resources.Ports
		}
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
