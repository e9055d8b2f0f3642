package placement

import (
	"github.com/allot-project/allot/protocol"
)

// Constraint helpers. The evaluation itself is protocol's (MatchHard,
// GroupAllows, CheckGroup), the same the master and agents run, so the
// SDK can never judge an offer differently from them.

// MatchOffer reports whether the offer's agent satisfies every hard
// per-task constraint in cs and, when not, why. Soft and group
// constraints are ignored here.
func MatchOffer(o protocol.Offer, cs []protocol.Constraint) (bool, string) {
	return protocol.MatchHard(cs, o.Attributes)
}

// FilterOffers returns the offers whose agents satisfy every hard per-task
// constraint in cs.
func FilterOffers(offers []protocol.Offer, cs []protocol.Constraint) []protocol.Offer {
	var out []protocol.Offer
	for _, o := range offers {
		if ok, _ := MatchOffer(o, cs); ok {
			out = append(out, o)
		}
	}
	return out
}

// CanHost reports whether an offer can host task t on its own: t's
// resources fit in the offer and its agent satisfies t's hard
// constraints.
func CanHost(o protocol.Offer, t protocol.TaskInfo) bool {
	if !Fits(o.Resources, t.Resources) {
		return false
	}
	ok, _ := MatchOffer(o, t.Constraints)
	return ok
}

// SoftMisses counts the soft per-task constraints in cs the offer's agent
// fails; lower is better.
func SoftMisses(o protocol.Offer, cs []protocol.Constraint) int {
	return protocol.SoftMisses(cs, o.Attributes)
}

// GroupConstraints returns the hard group constraints (unique, same,
// max_per) in cs.
func GroupConstraints(cs []protocol.Constraint) []protocol.Constraint {
	var out []protocol.Constraint
	for _, c := range cs {
		if c.IsGroup() && !c.Soft {
			out = append(out, c)
		}
	}
	return out
}

// TaskConstraints returns the per-task constraints in cs (hard and soft).
func TaskConstraints(cs []protocol.Constraint) []protocol.Constraint {
	var out []protocol.Constraint
	for _, c := range cs {
		if !c.IsGroup() {
			out = append(out, c)
		}
	}
	return out
}

// GroupAllows reports whether one more task on an agent with attributes
// cand, next to tasks already placed on agents with attributes placed,
// keeps every hard group constraint in cs satisfied.
func GroupAllows(cs []protocol.Constraint, placed []protocol.Attributes, cand protocol.Attributes) bool {
	for _, c := range cs {
		if c.IsGroup() && !c.Soft && !protocol.GroupAllows(c, placed, cand) {
			return false
		}
	}
	return true
}

// CheckGroup verifies that placements (the attributes of each task's
// agent) satisfy every hard group constraint in cs; the error wraps
// protocol.ErrConstraintViolated.
func CheckGroup(cs []protocol.Constraint, placements []protocol.Attributes) error {
	return protocol.CheckGroup(cs, placements)
}
