package framework

import (
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestDriver_launchedLocked_mirrorsTheLeader: the driver lowers its copy of
// the demand as the leader does, so a declaration sent again after a
// subscribe asks the leader for what it still holds as pending. An accept
// of a fair offer (two tasks' worth) and a leftover offer with four tasks
// counts two against the fair offer and two against the leftover one: the
// fair demand max(Demand − Optional, MustStart) goes from 2 to 0 and the
// optional work from 3 to 1.
func TestDriver_launchedLocked_mirrorsTheLeader(t *testing.T) {
	unit := protocol.Scalars(map[string]int64{protocol.ResCPUs: 100})
	cpus := func(n int64) protocol.Resources { return protocol.Scalars(map[string]int64{protocol.ResCPUs: n}) }
	shape := func(n int64) []protocol.TaskShape { return []protocol.TaskShape{{Resources: unit, Count: n}} }
	d := &Driver{outstanding: map[protocol.OfferID]protocol.Offer{
		"o-fair":     {ID: "o-fair", Kind: protocol.OfferFair, Resources: cpus(200)},
		"o-leftover": {ID: "o-leftover", Kind: protocol.OfferLeftover, Resources: cpus(300)},
	}}
	d.demand.own = protocol.DemandRequest{Demand: shape(5), MustStart: shape(2), Optional: shape(3)}
	tasks := slices.Repeat([]protocol.TaskInfo{{Resources: unit}}, 4)

	kinds := d.launchKinds([]protocol.OfferID{"o-leftover", "o-fair"}, tasks)
	want := []protocol.OfferKind{protocol.OfferFair, protocol.OfferFair, protocol.OfferLeftover, protocol.OfferLeftover}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds: got %v, want %v", kinds, want)
	}
	for i, tk := range tasks {
		d.launchedLocked(tk, kinds[i])
	}
	own := d.demand.own
	if got := []int64{own.Demand[0].Count, own.MustStart[0].Count, own.Optional[0].Count}; !slices.Equal(got, []int64{1, 0, 1}) {
		t.Fatalf("demand, must-start, optional: got %v, want [1 0 1]", got)
	}

	// Only leftover offers: every task is leftover; only fair ones: fair.
	if k := d.launchKinds([]protocol.OfferID{"o-leftover"}, tasks[:1]); k[0] != protocol.OfferLeftover {
		t.Errorf("on a leftover offer: got %s", k[0])
	}
	if k := d.launchKinds([]protocol.OfferID{"o-fair"}, tasks[:3]); !slices.Equal(k, slices.Repeat([]protocol.OfferKind{protocol.OfferFair}, 3)) {
		t.Errorf("on a fair offer: got %v", k)
	}
}
