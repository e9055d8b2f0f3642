package offers

import (
	"math"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// The pure, shared part of the Constraint Resource Vector (docs/phoenix.md):
// how a constraint becomes a class, and one class's demand,
// supply, ratio and contention with hysteresis. The allocator (crv.go) and
// the hybrid-scheduler simulator (sim/phoenix) both use it.

// ClassKey normalises a per-task constraint into its CRV class: hard, no
// group count, values sorted and without duplicates. It returns the class's
// canonical form, e.g. `gpu == "a100"` or `rack in [r1 r2]`, and the
// normalised constraint. Soft and hard constraints on the same predicate
// share one class.
func ClassKey(c protocol.Constraint) (string, protocol.Constraint) {
	c.Soft = false
	c.N = 0
	if len(c.Values) > 0 {
		c.Values = slices.Compact(slices.Sorted(slices.Values(c.Values)))
	}
	return c.String(), c
}

// Hysteresis holds the contention thresholds of a class (docs/phoenix.md): a class
// becomes contended when its ratio reaches On and stays contended until the
// ratio drops below Off.
type Hysteresis struct {
	On, Off float64
}

// DefaultHysteresis is TAU_ON = 1.0, TAU_OFF = 0.8 (docs/phoenix.md).
func DefaultHysteresis() Hysteresis { return Hysteresis{On: 1.0, Off: 0.8} }

// Next returns the contention flag after observing ratio r, given the flag
// before.
func (h Hysteresis) Next(contended bool, r float64) bool {
	return r >= h.On || (contended && r >= h.Off)
}

// ClassLoad counts one class's demand (outstanding tasks that need it) and
// supply (slots on the workers or agents that satisfy it).
type ClassLoad struct {
	Demand    int64
	Supply    int64
	Contended bool
}

// Ratio is Demand/Supply: 0 without demand, +Inf with demand and no supply.
func (l ClassLoad) Ratio() float64 {
	switch {
	case l.Demand <= 0:
		return 0
	case l.Supply <= 0:
		return math.Inf(1)
	}
	return float64(l.Demand) / float64(l.Supply)
}

// Update recomputes Contended from the current ratio with hysteresis h and
// returns it.
func (l *ClassLoad) Update(h Hysteresis) bool {
	l.Contended = h.Next(l.Contended, l.Ratio())
	return l.Contended
}
