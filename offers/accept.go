package offers

import (
	"fmt"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Accept launches tasks on a framework's offers. The offers must be
// outstanding, belong to the framework and lie on one agent; every task's
// resources must be valid and non-empty, their scalars together must fit in
// the offers' sum, and their ports must come from the offers' ports without
// overlapping. On success the tasks' resources become the framework's usage,
// the rest of the offers returns to the agent's free pool, and each task that
// matches a declared shape lowers that shape's pending count. On error
// nothing changes. It returns the agent the tasks run on.
func (a *Allocator) Accept(fwID protocol.FrameworkID, ids []protocol.OfferID, tasks []protocol.Resources, now time.Time) (protocol.AgentID, error) {
	f, err := a.framework(fwID)
	if err != nil {
		return "", err
	}
	held, err := a.ownedOffers(f, ids)
	if err != nil {
		return "", err
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
			return "", fmt.Errorf("task %d: %w", i, err)
		}
		if t.IsEmpty() {
			return "", fmt.Errorf("%w: task %d asks for no resources", ErrInvalid, i)
		}
		for name := range t.Ranges {
			if name != protocol.ResPorts {
				return "", fmt.Errorf("%w: task %d: range resource %q is not offered", ErrInsufficient, i, name)
			}
		}
		for name := range t.Scalars {
			if _, known := a.reg.index[name]; !known {
				return "", fmt.Errorf("%w: task %d: resource %q is not offered", ErrInsufficient, i, name)
			}
		}
		ports := t.Ranges[protocol.ResPorts].Normalize()
		if !offeredPorts.ContainsAll(ports) {
			return "", fmt.Errorf("%w: task %d: ports %s not in the offers", ErrInsufficient, i, ports)
		}
		if overlap := ports.Minus(ports.Minus(usedPorts)); len(overlap) > 0 {
			return "", fmt.Errorf("%w: task %d: ports %s used by another task", ErrInvalid, i, overlap)
		}
		usedPorts = usedPorts.Union(ports)
		vecs[i] = a.reg.toVec(t)
		sum = sum.add(vecs[i])
	}
	if !offered.fits(sum) {
		return "", fmt.Errorf("%w: tasks need %s, offers hold %s", ErrInsufficient,
			a.reg.toResources(sum), a.reg.toResources(offered))
	}
	ag := held[0].ag
	for _, o := range held {
		a.dropOffer(o)
	}
	a.take(ag, f, sum, usedPorts)
	for _, v := range vecs {
		a.countLaunch(f, v, 1)
		if s := f.shapeFor(v); s != nil && s.count != Unlimited && s.count > 0 {
			s.count--
		}
	}
	a.refresh(f)
	return ag.id, nil
}
