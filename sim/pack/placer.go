package pack

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Placer decides where pods go. Place is called when a pod arrives (and, in
// replay mode, again for waiting pods); it returns the index of the node it
// placed the pod on, or ok=false if it cannot place it now. Remove is called
// when a placed pod departs.
//
// A Placer serves one run and one goroutine. now is the run's clock (zero in
// fill mode, the trace time divided by the speed-up in replay mode). The
// harness checks every placement against its own state and fails the run if
// the pod does not fit there, so a Placer need not be trusted.
type Placer interface {
	Place(now time.Duration, p *Pod) (node int, ok bool)
	Remove(now time.Duration, p *Pod)
}

// A Policy builds a Placer for one run: the nodes, the whole workload (its
// pods, whose mix of shapes FGD-style policies need), and the run's seed.
//
// New may be called from several goroutines at once (runs execute in
// parallel); the Placers it returns are used by one goroutine each.
type Policy struct {
	Name string
	New  func(nodes []Node, workload []Pod, seed uint64) (Placer, error)
}

// DeviceChooser is an optional interface of a Placer that chooses devices as
// well as nodes (FGD picks the device of a sharing pod by fragmentation).
// After a Place that returned ok, the harness asks for the devices the pod
// took, checks them and applies exactly those, so that its state and the
// placer's stay the same. A Placer without it (one that sees nodes only)
// gets the harness's own choice: Cluster.BestFitDevices.
type DeviceChooser interface {
	Devices(p *Pod) []int
}

// Policies returns the reference policies, in the order reports list them.
func Policies() []Policy {
	return []Policy{FirstFit(), BestFit(), Random(), FGD()}
}

// SelectPolicies picks policies from all by name, in the order of names;
// an empty list picks all of them.
func SelectPolicies(all []Policy, names []string) ([]Policy, error) {
	if len(names) == 0 {
		return all, nil
	}
	var picked []Policy
	for _, name := range names {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(p Policy) bool { return p.Name == name })
		if i < 0 {
			known := make([]string, len(all))
			for j, p := range all {
				known[j] = p.Name
			}
			return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(known, ", "))
		}
		if slices.ContainsFunc(picked, func(p Policy) bool { return p.Name == name }) {
			return nil, fmt.Errorf("policy %q listed twice", name)
		}
		picked = append(picked, all[i])
	}
	return picked, nil
}
