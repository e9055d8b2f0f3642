package offers

import (
	"fmt"
	"math"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// Declaration is a framework's full demand report, as a DemandRequest
// carries it. Demand is every task the framework would launch now;
// MustStart is the part that must start now (Carbyne's must-start set) and
// Optional the part that may run early on leftover resources, both subsets
// of Demand.
//
// Per task shape, the fair demand (what the H-DRF phase serves) is
// max(Demand − Optional, MustStart): a framework that declares only Demand
// is served it all fairly, an altruistic one (Demand = MustStart +
// Optional) only its must-start set, and a shape listed only in MustStart
// counts as fair demand as well. Optional shapes are the framework's
// candidates for the leftover phase; RemainingWork (task-seconds, zero for
// unknown) orders frameworks there, shortest first.
type Declaration struct {
	Demand        []Demand
	MustStart     []Demand
	Optional      []Demand
	RemainingWork float64
}

// Declare replaces a framework's fair and leftover demand at once (see
// Declaration). A declaration with no shapes at all returns the framework
// to the undeclared state, as ClearDemand does. On error nothing changes.
func (a *Allocator) Declare(id protocol.FrameworkID, d Declaration) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	if len(d.Demand)+len(d.MustStart)+len(d.Optional) == 0 {
		return a.ClearDemand(id)
	}
	if err := checkWork(d.RemainingWork); err != nil {
		return err
	}
	var lists [3][]*shape
	for i, l := range [][]Demand{d.Demand, d.MustStart, d.Optional} {
		if lists[i], err = a.buildShapes(l); err != nil {
			return err
		}
	}
	a.setFair(f, fairShapes(lists[0], lists[1], lists[2]))
	a.keepDemand(f, nil) // the shapes merge three lists: no shortcut next time
	a.setOptional(f, mergeShapes(nil, lists[2]), d.RemainingWork)
	f.declared = true
	a.refresh(f)
	a.changed()
	return nil
}

// SetDemand replaces a framework's declared fair demand, leaving its
// leftover demand as it is. A framework that declares demand is offered one
// task's worth at a time; an empty list means it currently wants nothing.
func (a *Allocator) SetDemand(id protocol.FrameworkID, demand []Demand) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	if f.sameShapes(demand) {
		for i, s := range f.shapes {
			s.count = demand[i].Count
		}
	} else {
		shapes, err := a.buildShapes(demand)
		if err != nil {
			return err
		}
		a.setFair(f, shapes)
		a.keepDemand(f, demand)
	}
	f.declared = true
	a.refresh(f)
	a.changed()
	return nil
}

// SetLeftoverDemand replaces a framework's leftover candidates (its
// optional task shapes) and its remaining work in task-seconds (zero for
// unknown), leaving its fair demand as it is. Declaring candidates makes
// the framework declared: it is no longer offered whole agent remainders.
func (a *Allocator) SetLeftoverDemand(id protocol.FrameworkID, shapes []Demand, remainingWork float64) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	if err := checkWork(remainingWork); err != nil {
		return err
	}
	built, err := a.buildShapes(shapes)
	if err != nil {
		return err
	}
	a.setOptional(f, mergeShapes(nil, built), remainingWork)
	if len(built) > 0 {
		f.declared = true
	}
	a.refresh(f)
	a.changed()
	return nil
}

// ClearDemand returns a framework to the undeclared state, in which it is
// offered whole agent remainders as Mesos does, and drops its leftover
// candidates.
func (a *Allocator) ClearDemand(id protocol.FrameworkID) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	a.setFair(f, nil)
	a.keepDemand(f, nil)
	a.setOptional(f, nil, 0)
	f.declared = false
	a.refresh(f)
	a.changed()
	return nil
}

func checkWork(w float64) error {
	if !(w >= 0) || math.IsInf(w, 0) {
		return fmt.Errorf("%w: remaining work %v", ErrInvalid, w)
	}
	return nil
}

// buildShapes validates demand entries and turns them into shapes.
func (a *Allocator) buildShapes(demand []Demand) ([]*shape, error) {
	shapes := make([]*shape, 0, len(demand))
	for _, d := range demand {
		if err := d.Resources.Validate(); err != nil {
			return nil, err
		}
		if d.Count < 0 || d.Ports < 0 {
			return nil, fmt.Errorf("%w: negative demand", ErrInvalid)
		}
		var hard, soft []protocol.Constraint
		for _, c := range d.Constraints {
			if err := c.Validate(); err != nil {
				return nil, err
			}
			switch {
			case c.IsGroup():
			case c.Soft:
				soft = append(soft, c)
			default:
				hard = append(hard, c)
			}
		}
		if len(d.Resources.GPUDevices()) > 0 {
			return nil, fmt.Errorf("%w: demand names GPU devices; ask for gpus, and the offer names the devices", ErrInvalid)
		}
		res := a.toVec(d.Resources)
		if res.isZero() && d.Ports == 0 {
			return nil, fmt.Errorf("%w: demand asks for nothing", ErrInvalid)
		}
		gpu := a.gpuNeedOf(res)
		shapes = append(shapes, &shape{key: shapeKey(d), res: res, ports: uint64(d.Ports), gpu: gpu, hard: hard, soft: soft, count: d.Count})
	}
	return shapes, nil
}

// setFair installs fair shapes; units already offered keep counting
// against the new declaration.
func (a *Allocator) setFair(f *framework, shapes []*shape) {
	carryOffered(shapes, f.shapes)
	a.crvInstall(shapes, f.shapes)
	f.shapes = shapes
}

// setOptional installs leftover candidates and remaining work, and keeps
// the allocator's list of frameworks with candidates.
func (a *Allocator) setOptional(f *framework, shapes []*shape, work float64) {
	carryOffered(shapes, f.optional)
	for _, s := range shapes {
		// The leftover phase takes what nobody's fair demand could use:
		// soft preferences do not hold optional work back.
		s.relaxed = true
	}
	f.optional, f.work = shapes, work
	switch in := slices.Contains(a.leftover.spare, f); {
	case len(shapes) > 0 && !in:
		a.leftover.spare = append(a.leftover.spare, f)
	case len(shapes) == 0 && in:
		a.leftover.spare = slices.DeleteFunc(a.leftover.spare, func(x *framework) bool { return x == f })
	}
	a.leftover.spareSorted = false
}

// carryOffered moves the offered-unit counts of old shapes onto the new
// shapes with the same key, and with them how long the shape has waited
// and whether its soft constraints have relaxed.
func carryOffered(shapes, old []*shape) {
	for _, s := range shapes {
		for _, o := range old {
			if o.key == s.key {
				s.offered += o.offered
				o.offered = 0
				if !o.since.IsZero() && (s.since.IsZero() || o.since.Before(s.since)) {
					s.since = o.since
				}
				s.relaxed = s.relaxed || o.relaxed
			}
		}
	}
}

// mergeShapes adds shapes to dst, summing the counts of equal keys, in
// order of first appearance.
func mergeShapes(dst, shapes []*shape) []*shape {
next:
	for _, s := range shapes {
		for _, d := range dst {
			if d.key == s.key {
				d.count = addCount(d.count, s.count)
				continue next
			}
		}
		c := *s
		dst = append(dst, &c)
	}
	return dst
}

// fairShapes is the fair part of a declaration: per key,
// max(Demand − Optional, MustStart).
func fairShapes(demand, must, optional []*shape) []*shape {
	d := mergeShapes(nil, demand)
	m := mergeShapes(nil, must)
	o := mergeShapes(nil, optional)
	out := mergeShapes(nil, append(slices.Clone(d), m...))
	for _, s := range out {
		s.count = max(subCount(countOf(d, s.key), countOf(o, s.key)), countOf(m, s.key))
	}
	return out
}

func countOf(shapes []*shape, key string) int64 {
	for _, s := range shapes {
		if s.key == key {
			return s.count
		}
	}
	return 0
}

// addCount adds task counts, saturating at Unlimited.
func addCount(x, y int64) int64 {
	if x == Unlimited || y == Unlimited || x > Unlimited-y {
		return Unlimited
	}
	return x + y
}

// subCount subtracts y from x: Unlimited less anything finite stays
// Unlimited, anything less Unlimited is zero, and counts never go negative.
func subCount(x, y int64) int64 {
	switch {
	case x == Unlimited && y != Unlimited:
		return Unlimited
	case y >= x:
		return 0
	}
	return x - y
}
