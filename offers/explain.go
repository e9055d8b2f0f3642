package offers

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Explanation is the allocator's answer to an operator's "why is this
// framework not getting offers?": what it asks for and, for each task shape,
// how many agents could take one task now and why the others cannot.
type Explanation struct {
	Framework protocol.FrameworkID
	// Role is the role path the framework subscribed into.
	Role       string
	Suppressed bool
	// Declared reports whether the framework declared demand; one that did
	// not is offered whole remainders (Mesos-style).
	Declared bool
	// Allocation is what the framework runs plus holds in outstanding
	// offers; Offered is the part in offers, held in Offers offers.
	Allocation    protocol.Resources
	Offered       protocol.Resources
	Offers        int
	DominantShare float64
	// Filters are the agents the framework declined with a refuse filter
	// still in force.
	Filters []AgentFilter
	// Shapes are its declared task shapes, fair ones first.
	Shapes []ShapeExplanation
	// Agents is how many agents are registered.
	Agents int
}

// AgentFilter is one decline filter in force: Until is zero for a filter
// without expiry.
type AgentFilter struct {
	Agent protocol.AgentID
	Until time.Time
}

// ShapeExplanation is one declared task shape and where one task of it
// could go now.
type ShapeExplanation struct {
	Kind        Kind
	Resources   protocol.Resources
	Ports       int
	Constraints []protocol.Constraint
	// Pending is the number of tasks still wanted (Unlimited for no
	// bound); Offered how many are in outstanding offers.
	Pending int64
	Offered int64
	// LimitedBy names the roles above the framework whose quota limit one
	// more task of this shape would exceed.
	LimitedBy []string
	// HeldBack reports that one more task would eat into the resources held
	// back for other roles' unmet quota guarantees.
	HeldBack bool
	// Agents counts every registered agent once, under the first reason in
	// this order that keeps one task of the shape off it.
	Agents AgentFit
}

// AgentFit counts agents by what keeps a task off them.
type AgentFit struct {
	Draining    int // the operator is draining the agent
	Filtered    int // the framework declined it with a filter still in force
	Role        int // it fails an offer constraint of a role above the framework
	Constraints int // its attributes fail the shape's hard (or unrelaxed soft) constraints
	Resources   int // its free resources or ports are too few
	Fit         int // one task fits now
}

// Explain returns why framework id is or is not offered resources at now.
// It reads the allocator's state and changes nothing.
func (a *Allocator) Explain(id protocol.FrameworkID, now time.Time) (Explanation, error) {
	f, err := a.framework(id)
	if err != nil {
		return Explanation{}, err
	}
	ex := Explanation{
		Framework: id, Role: f.leaf.parent.path, Suppressed: f.suppressed, Declared: f.declared,
		Allocation: a.reg.toResources(f.alloc), Offered: a.reg.toResources(f.offered),
		Offers: f.offers.len(), Agents: len(a.agentList),
	}
	_, ex.DominantShare, _ = a.FrameworkShares(id)
	for _, ag := range a.agentList {
		if ag.isFiltered(f.idx) && filterInForce(ag, f, now) {
			ex.Filters = append(ex.Filters, AgentFilter{Agent: ag.id, Until: ag.filters[f.idx].until})
		}
	}
	slices.SortFunc(ex.Filters, func(x, y AgentFilter) int { return cmp.Compare(x.Agent, y.Agent) })
	for _, k := range []Kind{KindFair, KindLeftover} {
		for _, s := range f.shapesOf(k) {
			ex.Shapes = append(ex.Shapes, a.explainShape(f, k, s, now))
		}
	}
	return ex, nil
}

func (a *Allocator) explainShape(f *framework, k Kind, s *shape, now time.Time) ShapeExplanation {
	se := ShapeExplanation{
		Kind: k, Resources: a.reg.toResources(s.res), Ports: int(s.ports),
		Constraints: slices.Clone(s.hard), Pending: s.pending(), Offered: s.offered,
	}
	for n := f.leaf.parent; n != nil; n = n.parent {
		for j, ok := range n.limited {
			if ok && n.held.at(j)+s.res.at(j) > n.limit[j] {
				se.LimitedBy = append(se.LimitedBy, n.path)
				break
			}
		}
	}
	se.HeldBack = !a.headroomAllows(f, s.res)
	for _, ag := range a.agentList {
		switch {
		case ag.draining:
			se.Agents.Draining++
		case ag.isFiltered(f.idx) && filterInForce(ag, f, now):
			se.Agents.Filtered++
		case !a.rolesAdmit(f, ag):
			se.Agents.Role++
		case !a.satisfiesOn(ag, s):
			se.Agents.Constraints++
		case !ag.free.fits(s.res) || s.ports > 0 && ag.freePorts.Count() < s.ports || !devicesFit(ag.free, ag.gpuDims, s.gpu):
			se.Agents.Resources++
		default:
			se.Agents.Fit++
		}
	}
	return se
}

// filterInForce reports whether f's filter on ag has not expired by now
// (expired filters stay set until the next round lifts them).
func filterInForce(ag *agent, f *framework, now time.Time) bool {
	fl, ok := ag.filters[f.idx]
	return !ok || fl.until.IsZero() || fl.until.After(now)
}

// satisfiesOn reports whether ag's attributes satisfy the hard constraints
// of s, and its soft ones until they relax.
func (a *Allocator) satisfiesOn(ag *agent, s *shape) bool {
	if !s.constrained() {
		return true
	}
	ok := protocol.HoldHard(s.hard, ag.info.Attributes)
	if ok && !s.relaxed {
		ok = softOK(s.soft, ag.info.Attributes)
	}
	return ok
}

// Reasons says in plain words why the framework may get no offers, most
// decisive first; it is empty when some shape fits an agent now and nothing
// stands in the way, which leaves only the framework's turn in H-DRF order.
func (ex Explanation) Reasons() []string {
	var out []string
	if ex.Suppressed {
		out = append(out, "the framework is suppressed: it gets no offers until it revives")
	}
	if ex.Agents == 0 {
		out = append(out, "no agent is registered")
	}
	if !ex.Declared {
		if len(out) == 0 && ex.Offers > 0 {
			out = append(out, fmt.Sprintf("it declared no demand and holds %d outstanding offers", ex.Offers))
		}
		return out
	}
	pending := false
	for _, s := range ex.Shapes {
		if s.Pending == 0 {
			continue
		}
		pending = true
		what := fmt.Sprintf("%s task %s", s.Kind, s.Resources)
		if len(s.LimitedBy) > 0 {
			out = append(out, fmt.Sprintf("%s: role %q is at its quota limit", what, s.LimitedBy[0]))
		}
		if s.HeldBack {
			out = append(out, fmt.Sprintf("%s: what is free is held back for quota guarantees not yet met", what))
		}
		if s.Agents.Fit == 0 && ex.Agents > 0 {
			out = append(out, fmt.Sprintf("%s fits no agent now: %s", what, s.Agents))
		}
	}
	if !pending {
		out = append(out, "it declared no pending tasks")
	}
	return out
}

// String lists the nonzero counts, e.g. "2 draining, 3 too small".
func (c AgentFit) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Draining, "draining"}, {c.Filtered, "declined with a filter"}, {c.Role, "outside the role's offer constraints"},
		{c.Constraints, "failing constraints"},
		{c.Resources, "too few free resources"}, {c.Fit, "fit"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "no agents"
	}
	return strings.Join(parts, ", ")
}
