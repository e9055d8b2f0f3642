package offers

import (
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Accepted is what a successful accept decided.
type Accepted struct {
	// Agent is the agent the tasks run on.
	Agent protocol.AgentID
	// Kinds holds, for each task, the kind of offer it was launched on.
	// When fair and leftover offers are accepted together, tasks are
	// counted against the fair offers first, in order, while their scalars
	// fit, and the rest against the leftover offers.
	Kinds []Kind
	// Remainder reports that the tasks left part of the offers unused (it
	// went back to the agent's free pool).
	Remainder bool
	// Tasks holds, for each task, the resources it holds: those asked,
	// with the GPU devices named where a task asked for gpus on an agent
	// with devices without naming them (devices.go).
	Tasks []protocol.Resources
	// Made is when the first of the offers was made (Launch only).
	Made time.Time
}

// Accept launches tasks on a framework's offers and returns the agent they
// run on; AcceptTasks says more.
func (a *Allocator) Accept(fwID protocol.FrameworkID, ids []protocol.OfferID, tasks []protocol.Resources, now time.Time) (protocol.AgentID, error) {
	ag, _, _, _, err := a.accept(fwID, ids, tasks)
	return ag, err
}

// AcceptTasks launches tasks on a framework's offers. The offers must be
// outstanding, belong to the framework and lie on one agent; every task's
// resources must be valid and non-empty, their scalars together must fit in
// the offers' sum, and their ports must come from the offers' ports without
// overlapping. On success the tasks' resources become the framework's usage
// (whatever the offers' kind), the rest of the offers returns to the
// agent's free pool, and each task that matches a declared shape lowers
// that shape's pending count: a shape of its own kind first (fair demand
// for a fair task, a leftover candidate for a leftover one), else one of
// the other kind. On error nothing changes.
func (a *Allocator) AcceptTasks(fwID protocol.FrameworkID, ids []protocol.OfferID, tasks []protocol.Resources, now time.Time) (Accepted, error) {
	ag, kinds, remainder, held, err := a.accept(fwID, ids, tasks)
	if err != nil {
		return Accepted{}, err
	}
	if kinds == nil {
		kinds = make([]Kind, len(tasks))
		for i := range kinds {
			kinds[i] = KindFair
		}
	}
	return Accepted{Agent: ag, Kinds: kinds, Remainder: remainder, Tasks: held}, nil
}

// RefuseAgent keeps an agent's resources from being offered to a framework
// for refuse (capped at Config.MaxRefuse), as a decline filter does: the
// filters of an accept, applied to what it left unused. What the agent has
// free now is what is refused.
func (a *Allocator) RefuseAgent(fwID protocol.FrameworkID, agentID protocol.AgentID, refuse time.Duration, now time.Time) error {
	f, err := a.framework(fwID)
	if err != nil {
		return err
	}
	ag, ok := a.agents[agentID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownAgent, agentID)
	}
	if a.cfg.MaxRefuse > 0 && refuse > a.cfg.MaxRefuse {
		refuse = a.cfg.MaxRefuse
	}
	if refuse > 0 {
		a.addFilter(ag, f, now.Add(refuse), ag.free.clone())
	}
	return nil
}

// accept is AcceptTasks; nil kinds means every task is fair.
func (a *Allocator) accept(fwID protocol.FrameworkID, ids []protocol.OfferID, tasks []protocol.Resources) (protocol.AgentID, []Kind, bool, []protocol.Resources, error) {
	fail := func(err error) (protocol.AgentID, []Kind, bool, []protocol.Resources, error) {
		return "", nil, false, nil, err
	}
	f, err := a.framework(fwID)
	if err != nil {
		return fail(err)
	}
	held, err := a.ownedOffers(f, ids, nil, true)
	if err != nil {
		return fail(err)
	}
	var offered vec
	var offeredPorts protocol.Ranges
	for _, o := range held {
		offered = offered.add(o.res)
		offeredPorts = offeredPorts.Union(o.ports)
	}
	var sum vec
	var usedPorts protocol.Ranges
	vecs := make([]vec, len(tasks))
	for i, t := range tasks {
		if err := t.Validate(); err != nil {
			return fail(fmt.Errorf("task %d: %w", i, err))
		}
		if t.IsEmpty() {
			return fail(fmt.Errorf("%w: task %d asks for no resources", ErrInvalid, i))
		}
		for name := range t.Ranges {
			if name != protocol.ResPorts {
				return fail(fmt.Errorf("%w: task %d: range resource %q is not offered", ErrInsufficient, i, name))
			}
		}
		for name := range t.Scalars {
			if _, known := a.reg.index[name]; !known {
				return fail(fmt.Errorf("%w: task %d: resource %q is not offered", ErrInsufficient, i, name))
			}
		}
		ports := t.Ranges[protocol.ResPorts].Normalize()
		if !offeredPorts.ContainsAll(ports) {
			return fail(fmt.Errorf("%w: task %d: ports %s not in the offers", ErrInsufficient, i, ports))
		}
		if overlap := ports.Minus(ports.Minus(usedPorts)); len(overlap) > 0 {
			return fail(fmt.Errorf("%w: task %d: ports %s used by another task", ErrInvalid, i, overlap))
		}
		usedPorts = usedPorts.Union(ports)
		vecs[i] = a.reg.toVec(t)
	}
	named, err := a.placeDevices(held[0].ag, offered, vecs)
	if err != nil {
		return fail(err)
	}
	for _, v := range vecs {
		sum = sum.add(v)
	}
	if !offered.fits(sum) {
		return fail(fmt.Errorf("%w: tasks need %s, offers hold %s", ErrInsufficient,
			a.reg.toResources(sum), a.reg.toResources(offered)))
	}
	ag := held[0].ag
	kinds := taskKinds(held, vecs)
	for _, o := range held {
		a.dropOffer(o)
	}
	a.take(ag, f, sum, usedPorts)
	out := make([]protocol.Resources, len(tasks))
	for i, v := range vecs {
		a.countLaunch(f, v, 1)
		own, other := f.shapes, f.optional
		if kinds != nil && kinds[i] == KindLeftover {
			own, other = other, own
		}
		if bare := a.withoutDevices(v); !lowerCount(own, bare) {
			lowerCount(other, bare)
		}
		out[i] = tasks[i]
		if named != nil && named[i] {
			out[i] = a.protocolResources(v, tasks[i].Ranges[protocol.ResPorts])
		}
	}
	a.refresh(f)
	remainder := !offered.sub(sum).isZero() || len(offeredPorts.Minus(usedPorts)) > 0
	return ag.id, kinds, remainder, out, nil
}

// taskKinds decides which kind of offer each task counts against: fair
// offers first, in task order, while the task's scalars fit what is left
// of them; the rest against leftover offers. It returns nil when every
// offer is fair.
func taskKinds(held []*offer, vecs []vec) []Kind {
	if !slices.ContainsFunc(held, func(o *offer) bool { return o.kind == KindLeftover }) {
		return nil
	}
	var fair vec
	haveFair := false
	for _, o := range held {
		if o.kind != KindLeftover {
			haveFair = true
			fair = fair.add(o.res)
		}
	}
	kinds := make([]Kind, len(vecs))
	for i, v := range vecs {
		kinds[i] = KindFair
		if !haveFair || !fair.fits(v) {
			kinds[i] = KindLeftover
			continue
		}
		fair = fair.sub(v)
	}
	return kinds
}

// lowerCount lowers the pending count of the first shape whose resources
// equal v and that has tasks pending (an unlimited one stays unlimited);
// it reports whether such a shape exists.
func lowerCount(shapes []*shape, v vec) bool {
	for _, s := range shapes {
		if !vecEqual(s.res, v) || s.count == 0 {
			continue
		}
		if s.count != Unlimited {
			s.count--
		}
		return true
	}
	return false
}
