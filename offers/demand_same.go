package offers

import (
	"maps"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// A framework re-declaring its demand mostly changes counts: the same
// entries in the same order, more or fewer tasks of each. SetDemand then
// keeps the shapes it has and sets their counts, instead of validating,
// keying and installing every entry again (demand.go).

// sameShapes reports whether demand differs from f's last declared
// demand in counts alone (valid ones), so its shapes can be kept.
func (f *framework) sameShapes(demand []Demand) bool {
	if f.lastDemand == nil || len(demand) != len(f.lastDemand) || len(demand) != len(f.shapes) {
		return false
	}
	for i, d := range demand {
		if d.Count < 0 || !sameEntry(d, f.lastDemand[i]) {
			return false
		}
	}
	return true
}

// sameEntry reports whether two demand entries ask for the same task
// shape (their counts aside).
func sameEntry(x, y Demand) bool {
	return x.Ports == y.Ports && maps.Equal(x.Resources.Scalars, y.Resources.Scalars) &&
		maps.EqualFunc(x.Resources.Ranges, y.Resources.Ranges, func(a, b protocol.Ranges) bool { return slices.Equal(a, b) }) &&
		slices.EqualFunc(x.Constraints, y.Constraints, func(a, b protocol.Constraint) bool {
			return a.Attribute == b.Attribute && a.Op == b.Op && a.Value == b.Value && slices.Equal(a.Values, b.Values) &&
				a.N == b.N && a.Soft == b.Soft
		})
}

// keepDemand remembers demand as f's last declared (a copy: the caller
// may reuse its slices), or forgets it (nil). An allocator whose tests
// compare the shortcut with the full path remembers nothing.
func (a *Allocator) keepDemand(f *framework, demand []Demand) {
	if demand == nil || a.fullDemand {
		f.lastDemand = nil
		return
	}
	f.lastDemand = make([]Demand, len(demand))
	for i, d := range demand {
		d.Resources = d.Resources.Clone()
		d.Constraints = slices.Clone(d.Constraints)
		for k := range d.Constraints {
			d.Constraints[k].Values = slices.Clone(d.Constraints[k].Values)
		}
		f.lastDemand[i] = d
	}
}
