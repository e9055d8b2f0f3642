package offers

// Shared helpers for the allocator tests in this package (book_test.go,
// accept_test.go, round_test.go, fuzz_test.go).

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// t0 is the epoch of every test clock; tests advance it with at.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// res builds scalar resources from alternating name, amount pairs.
func res(kv ...any) protocol.Resources {
	r := protocol.Resources{}
	for i := 0; i+1 < len(kv); i += 2 {
		if r.Scalars == nil {
			r.Scalars = map[string]int64{}
		}
		r.Scalars[kv[i].(string)] = int64(toInt(kv[i+1]))
	}
	return r
}

func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	}
	panic(fmt.Sprintf("toInt(%T)", v))
}

// cpuMem is the common two-resource bundle.
func cpuMem(cpus, mem int64) protocol.Resources {
	return protocol.Resources{Scalars: map[string]int64{protocol.ResCPUs: cpus, protocol.ResMem: mem}}
}

// withPorts returns r plus the port ranges given as begin, end pairs.
func withPorts(r protocol.Resources, be ...uint64) protocol.Resources {
	r = r.Clone()
	var rs protocol.Ranges
	for i := 0; i+1 < len(be); i += 2 {
		rs = append(rs, protocol.Range{Begin: be[i], End: be[i+1]})
	}
	if r.Ranges == nil {
		r.Ranges = map[string]protocol.Ranges{}
	}
	r.Ranges[protocol.ResPorts] = rs.Normalize()
	return r
}

// testConfig is DefaultConfig with a fixed policy and prefix.
func testConfig(p Policy) Config {
	c := DefaultConfig()
	c.Policy = p
	return c
}

// newAlloc builds an allocator from cfg or fails the test.
func newAlloc(t testing.TB, cfg Config) *Allocator {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return a
}

// must fails the test on a non-nil error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// addAgent adds an agent with the given total and optional attributes.
func addAgent(t testing.TB, a *Allocator, id string, total protocol.Resources, attrs protocol.Attributes) {
	t.Helper()
	must(t, a.AddAgent(AgentInfo{ID: protocol.AgentID(id), Hostname: id + ".test", Total: total, Attributes: attrs}))
}

// addFw adds a framework under role.
func addFw(t testing.TB, a *Allocator, id, role string) {
	t.Helper()
	must(t, a.AddFramework(FrameworkInfo{ID: protocol.FrameworkID(id), Role: role}))
}

// demand sets one demand entry for fw.
func demand(t testing.TB, a *Allocator, fw string, d ...Demand) {
	t.Helper()
	must(t, a.SetDemand(protocol.FrameworkID(fw), d))
}

// offerKey is the part of an offer tests compare: who, where, what.
type offerKey struct {
	Fw, Agent string
	Res       string
	Tasks     int64
}

func keyOf(o Offer) offerKey {
	return offerKey{Fw: string(o.FrameworkID), Agent: string(o.AgentID), Res: o.Resources.String(), Tasks: o.Tasks}
}

// keys summarises offers in the order given.
func keys(os []Offer) []offerKey {
	out := make([]offerKey, 0, len(os))
	for _, o := range os {
		out = append(out, keyOf(o))
	}
	return out
}

// sortedKeys summarises offers sorted by framework then agent.
func sortedKeys(os []Offer) []offerKey {
	out := keys(os)
	slices.SortFunc(out, func(x, y offerKey) int {
		if c := strings.Compare(x.Fw, y.Fw); c != 0 {
			return c
		}
		return strings.Compare(x.Agent, y.Agent)
	})
	return out
}

// offersFor returns the offers made to fw.
func offersFor(os []Offer, fw string) []Offer {
	var out []Offer
	for _, o := range os {
		if string(o.FrameworkID) == fw {
			out = append(out, o)
		}
	}
	return out
}

// offerOn returns fw's single offer on agent, failing if there is not
// exactly one.
func offerOn(t testing.TB, os []Offer, fw, agent string) Offer {
	t.Helper()
	var out []Offer
	for _, o := range os {
		if string(o.FrameworkID) == fw && string(o.AgentID) == agent {
			out = append(out, o)
		}
	}
	if len(out) != 1 {
		t.Fatalf("offers to %s on %s: got %d, want 1 (all: %v)", fw, agent, len(out), keys(os))
	}
	return out[0]
}

// ids returns the IDs of the offers.
func ids(os ...Offer) []protocol.OfferID {
	out := make([]protocol.OfferID, 0, len(os))
	for _, o := range os {
		out = append(out, o.ID)
	}
	return out
}

// wantErr checks that err matches target under errors.Is.
func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want errors.Is(_, %v)", what, err, target)
	}
}

// snapshot is the observable state tests compare before and after a call
// that must change nothing.
type snapshot struct {
	Outstanding []Offer
	Usage       map[protocol.FrameworkID]string
	Root        string
}

func snap(a *Allocator) snapshot {
	s := snapshot{Outstanding: a.Outstanding(), Usage: map[protocol.FrameworkID]string{}}
	for id := range a.frameworks {
		u, _ := a.Usage(id)
		s.Usage[id] = u.String()
	}
	for _, n := range a.Shares() {
		if n.Path == "" && !n.Framework {
			s.Root = n.Allocation.String()
		}
	}
	return s
}

// sameState fails when the observable state differs from before.
func sameState(t testing.TB, what string, before snapshot, a *Allocator) {
	t.Helper()
	after := snap(a)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("%s changed state:\n got  %+v\n want %+v", what, after, before)
	}
}

// freeOf returns an agent's free scalars and ports as protocol resources.
func freeOf(a *Allocator, id string) protocol.Resources {
	ag := a.agents[protocol.AgentID(id)]
	return a.protocolResources(ag.free, ag.freePorts)
}

// checkInvariants verifies the allocator's bookkeeping through its exported
// views (plus per-agent internals where the public API has no view):
//   - per agent: free + outstanding offers + usage == total, scalars and ports;
//     no free amount is negative; no port is in two places;
//   - the root allocation in Shares() never exceeds Capacity() (which
//     leaves GPU devices out: they are checked agent by agent);
//   - per framework: Usage() equals the sum of its per-agent usage;
//   - every outstanding offer's framework and agent exist;
//   - no two outstanding offers share a port on one agent.
func checkInvariants(a *Allocator) error {
	if err := checkCRV(a); err != nil {
		return err
	}
	capacity := a.Capacity()
	for _, n := range a.Shares() {
		if n.Path != "" || n.Framework {
			continue
		}
		for name, v := range n.Allocation.Scalars {
			if _, device := protocol.GPUIndex(name); device {
				continue // devices are per agent; capacity counts gpus
			}
			if v > capacity.Scalars[name] || v < 0 {
				return fmt.Errorf("root allocation %s=%d exceeds capacity %d", name, v, capacity.Scalars[name])
			}
		}
	}
	perAgent := map[protocol.AgentID][]Offer{}
	for _, o := range a.Outstanding() {
		if _, ok := a.frameworks[o.FrameworkID]; !ok {
			return fmt.Errorf("offer %s of unknown framework %s", o.ID, o.FrameworkID)
		}
		if _, ok := a.agents[o.AgentID]; !ok {
			return fmt.Errorf("offer %s on unknown agent %s", o.ID, o.AgentID)
		}
		perAgent[o.AgentID] = append(perAgent[o.AgentID], o)
	}
	fwUsed := map[protocol.FrameworkID]protocol.Resources{}
	for _, ag := range a.agentList {
		free := a.protocolResources(ag.free, ag.freePorts)
		for name, v := range free.Scalars {
			if v < 0 {
				return fmt.Errorf("agent %s: free %s=%d is negative", ag.id, name, v)
			}
		}
		parts := []protocol.Resources{free}
		for _, o := range perAgent[ag.id] {
			parts = append(parts, o.Resources)
		}
		for _, f := range a.frameworksOn(ag) {
			u := ag.usage[f]
			ur := a.protocolResources(u.res, u.ports)
			parts = append(parts, ur)
			fwUsed[f.id] = fwUsed[f.id].Add(protocol.Resources{Scalars: ur.Scalars})
		}
		var sum protocol.Resources
		var seen protocol.Ranges
		for _, p := range parts {
			ports := p.Ranges[protocol.ResPorts]
			if overlap := ports.Minus(ports.Minus(seen)); len(overlap) > 0 {
				return fmt.Errorf("agent %s: ports %s are in two places (free, offers, usage)", ag.id, overlap)
			}
			seen = seen.Union(ports)
			sum = sum.Add(p)
		}
		total := a.protocolResources(ag.total, ag.totalPorts)
		if !sum.Equal(total) {
			return fmt.Errorf("agent %s: free+offers+usage = %s, total %s", ag.id, sum, total)
		}
	}
	for id := range a.frameworks {
		u, _ := a.Usage(id)
		if !u.Equal(fwUsed[id]) {
			return fmt.Errorf("framework %s: Usage() = %s, sum over agents %s", id, u, fwUsed[id])
		}
	}
	return nil
}

// checkAvailability verifies that the incrementally kept availability
// trees match the agents' free vectors (run after syncAvail, as Shares
// does, so the thresholds are current), and Y with them.
func checkAvailability(a *Allocator) error {
	a.syncAvail()
	av := &a.avail
	for j := range av.thr {
		most := int64(math.MinInt64)
		for _, ag := range a.agentList {
			if !ag.draining {
				most = max(most, ag.free.at(j))
			}
		}
		if y := most >= av.thr[j]; av.y[j] != y {
			return fmt.Errorf("availability of %s: in Y %v, the agents' most free %d against threshold %d", a.reg.names[j], av.y[j], most, av.thr[j])
		}
	}
	// Each tree kept: the agents' free amounts by index at its leaves,
	// the larger child at every inner node.
	for j, t := range av.most {
		if t == nil || len(t)/2 < len(a.agentList) {
			continue // built again before use
		}
		n := len(t) / 2
		for i := range n {
			want := int64(math.MinInt64)
			if i < len(a.agentList) && !a.agentList[i].draining {
				want = a.agentList[i].free.at(j)
			}
			if t[n+i] != want {
				return fmt.Errorf("availability tree of %s: leaf %d holds %d, free %d", a.reg.names[j], i, t[n+i], want)
			}
		}
		for k := n - 1; k >= 1; k-- {
			if t[k] != max(t[2*k], t[2*k+1]) {
				return fmt.Errorf("availability tree of %s: node %d holds %d, children %d and %d", a.reg.names[j], k, t[k], t[2*k], t[2*k+1])
			}
		}
	}
	return nil
}
