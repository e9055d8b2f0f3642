package placement

import (
	"math"

	"github.com/allot-project/allot/protocol"
)

// SumOffers returns the resources of offers added up (scalars summed,
// port ranges united). Offers on different agents add up too, though one
// accept can only use offers on one agent; see ByAgent.
func SumOffers(offers []protocol.Offer) protocol.Resources {
	var sum protocol.Resources
	for _, o := range offers {
		sum.AddInPlace(o.Resources)
	}
	return sum
}

// ByAgent groups offers by agent, keeping their order within each agent;
// agents come in the order of their first offer.
func ByAgent(offers []protocol.Offer) [][]protocol.Offer {
	var out [][]protocol.Offer
	index := map[protocol.AgentID]int{}
	for _, o := range offers {
		i, ok := index[o.AgentID]
		if !ok {
			i = len(out)
			index[o.AgentID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], o)
	}
	return out
}

// OfferIDs returns the offers' IDs, in order.
func OfferIDs(offers []protocol.Offer) []protocol.OfferID {
	ids := make([]protocol.OfferID, len(offers))
	for i, o := range offers {
		ids[i] = o.ID
	}
	return ids
}

// Fits reports whether need fits in avail: every scalar of need is at most
// avail's, and every range of need (explicit ports) is inside avail's.
func Fits(avail, need protocol.Resources) bool { return avail.Contains(need) }

// Subtract returns what is left of avail once need is taken from it, e.g.
// an offer's resources minus a task's. Scalars that would go negative stay
// negative, so check Fits first.
func Subtract(avail, need protocol.Resources) protocol.Resources { return avail.Sub(need) }

// FitsShape reports whether one task of shape s fits in avail: its scalars,
// and s.Ports ports from avail's port ranges. Constraints are not checked;
// see MatchOffer.
func FitsShape(avail protocol.Resources, s protocol.TaskShape) bool { return HowMany(avail, s) >= 1 }

// HowMany returns how many tasks of shape s fit in avail together: limited
// by every scalar s needs and by the ports it needs. A shape that needs
// nothing fits zero times.
func HowMany(avail protocol.Resources, s protocol.TaskShape) int64 {
	n := int64(math.MaxInt64)
	asks := false
	for k, v := range s.Resources.Scalars {
		if v <= 0 {
			continue
		}
		asks = true
		n = min(n, max(avail.Scalar(k), 0)/v)
	}
	if s.Ports > 0 {
		asks = true
		free := avail.Ranges[protocol.ResPorts].Normalize().Count()
		n = min(n, int64(min(free/uint64(s.Ports), math.MaxInt64)))
	}
	if !asks {
		return 0
	}
	return n
}

// ShapeOf describes count tasks like t for a demand declaration: t's
// scalar resources, the number of ports it holds, and its hard per-task
// constraints (the allocator ignores the rest).
func ShapeOf(t protocol.TaskInfo, count int64) protocol.TaskShape {
	s := protocol.TaskShape{
		Resources: protocol.Scalars(t.Resources.Scalars),
		Ports:     int(t.Resources.Ranges[protocol.ResPorts].Normalize().Count()),
		Count:     count,
	}
	for _, c := range t.Constraints {
		if !c.Soft && !c.IsGroup() {
			s.Constraints = append(s.Constraints, c)
		}
	}
	return s
}
