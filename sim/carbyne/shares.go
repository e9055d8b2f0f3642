package carbyne

import (
	"math"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// shareGrain is how finely the share allocator divides a job's remaining
// demand: a grain is 1/shareGrain of the cluster in the job's dominant
// resource.
const shareGrain = 2000

// shareCalc computes the inter-job scheduler's shares A_k (docs/carbyne.md):
// DRF for divisible demands, capped by each job's remaining DAG (the summed
// demand of its unfinished tasks), by water filling. It runs on a second
// offers.Allocator that holds the whole cluster as one agent and in which
// each job declares its remaining demand as grains of equal direction;
// Allocator.FairShares, static H-DRF by whole grains, is then the water
// filling to within one grain. The allocator that makes offers cannot give
// this share itself: its FairShares counts only the runnable work a job
// declares (a later stage's tasks are not declared until they can run, or
// they would be offered), and by whole tasks.
type shareCalc struct {
	alloc    *offers.Allocator
	capacity protocol.Resources
}

func newShareCalc(capacity protocol.Resources) (*shareCalc, error) {
	a, err := offers.New(offers.Config{})
	if err != nil {
		return nil, err
	}
	if err := a.AddAgent(offers.AgentInfo{ID: "cluster", Total: capacity}); err != nil {
		return nil, err
	}
	return &shareCalc{alloc: a, capacity: capacity}, nil
}

func (s *shareCalc) add(id protocol.FrameworkID) error {
	return s.alloc.AddFramework(offers.FrameworkInfo{ID: id})
}

func (s *shareCalc) remove(id protocol.FrameworkID) error {
	_, err := s.alloc.RemoveFramework(id)
	return err
}

// set declares a job's remaining demand: n grains of demand/n each,
// rounded up, with n the job's dominant share of the cluster in grains
// (capped so that rounding adds less than one unit per grain).
func (s *shareCalc) set(id protocol.FrameworkID, demand protocol.Resources) error {
	dom := 0.0
	for name, v := range demand.Scalars {
		if c := s.capacity.Scalars[name]; c > 0 {
			dom = max(dom, float64(v)/float64(c))
		}
	}
	if dom == 0 {
		return s.alloc.ClearDemand(id)
	}
	// No more grains than the smallest amount, so that rounding a grain
	// up adds less than one unit per grain.
	n := max(1, int64(math.Ceil(dom*shareGrain-1e-9)))
	for _, v := range demand.Scalars {
		if v > 0 {
			n = min(n, v)
		}
	}
	grain := map[string]int64{}
	for name, v := range demand.Scalars {
		if v > 0 {
			grain[name] = (v + n - 1) / n
		}
	}
	return s.alloc.SetDemand(id, []offers.Demand{{Resources: protocol.Scalars(grain), Count: n}})
}

// shares returns every job's A_k.
func (s *shareCalc) shares() map[protocol.FrameworkID]protocol.Resources {
	return s.alloc.FairShares()
}
