package pack

import (
	"fmt"
	"strconv"
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// Allocator is the production allocator (package offers) driven as the
// leader drives it: each node an agent with its GPUs as devices, each pod
// one pending task of a framework's demand, a round, and the framework
// accepting the offer that holds it without naming devices, so that the
// allocator names them; a pod that leaves is a task that ends. placement
// is the allocator's offers.Placement.
func Allocator(placement offers.Placement) Policy {
	return Policy{Name: "allot-" + string(placement), New: func(nodes []Node, _ []Pod, _ uint64) (Placer, error) {
		return newAllocPlacer(nodes, placement)
	}}
}

const allocFramework = protocol.FrameworkID("pods")

// allocPlacer is one run's allocator and what each placed pod holds.
type allocPlacer struct {
	a     *offers.Allocator
	index map[protocol.AgentID]int
	held  map[int]allocHeld
}

type allocHeld struct {
	agent protocol.AgentID
	res   protocol.Resources
}

func newAllocPlacer(nodes []Node, placement offers.Placement) (*allocPlacer, error) {
	cfg := offers.DefaultConfig()
	cfg.Placement = placement
	cfg.OfferTimeout = 0
	a, err := offers.New(cfg)
	if err != nil {
		return nil, err
	}
	p := &allocPlacer{a: a, index: map[protocol.AgentID]int{}, held: map[int]allocHeld{}}
	for i, n := range nodes {
		id := protocol.AgentID("node-" + strconv.Itoa(i))
		total := protocol.Resources{Scalars: map[string]int64{protocol.ResCPUs: n.CPUMilli, protocol.ResMem: n.MemoryMiB}}
		if n.GPUs > 0 {
			total.Scalars[protocol.ResGPUs] = int64(n.GPUs) * protocol.DeviceMilli
			for k := range n.GPUs {
				total.Scalars[protocol.GPUResource(k)] = protocol.DeviceMilli
			}
		}
		attrs := protocol.Attributes{}
		if n.Model != "" {
			attrs["gpu_model"] = protocol.ParseValue(n.Model)
		}
		if err := a.AddAgent(offers.AgentInfo{ID: id, Hostname: n.Name, Total: total, Attributes: attrs}); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		p.index[id] = i
	}
	if err := a.AddFramework(offers.FrameworkInfo{ID: allocFramework, Role: "pods"}); err != nil {
		return nil, err
	}
	return p, nil
}

// at is the simulated clock as the allocator's time.
func at(now time.Duration) time.Time { return time.Unix(0, 0).Add(now) }

func (p *allocPlacer) Place(now time.Duration, pod *Pod) (int, bool) {
	res := protocol.Resources{Scalars: map[string]int64{protocol.ResCPUs: pod.CPUMilli, protocol.ResMem: pod.MemoryMiB}}
	if g := pod.GPURequest(); g > 0 {
		res.Scalars[protocol.ResGPUs] = g
	}
	d := offers.Demand{Resources: res, Count: 1}
	if len(pod.Models) > 0 {
		d.Constraints = []protocol.Constraint{{Attribute: "gpu_model", Op: protocol.OpIn, Values: pod.Models}}
	}
	if err := p.a.SetDemand(allocFramework, []offers.Demand{d}); err != nil {
		return 0, false
	}
	defer func() { _ = p.a.SetDemand(allocFramework, []offers.Demand{}) }()
	t := at(now)
	dec := p.a.Allocate(t)
	placed, ok := -1, false
	for _, o := range dec.Offers {
		if !ok && o.Tasks > 0 {
			acc, err := p.a.AcceptTasks(allocFramework, []protocol.OfferID{o.ID}, []protocol.Resources{res}, t)
			if err == nil {
				placed, ok = p.index[acc.Agent], true
				p.held[pod.ID] = allocHeld{agent: acc.Agent, res: acc.Tasks[0]}
				continue
			}
		}
		_ = p.a.Decline(allocFramework, []protocol.OfferID{o.ID}, 0, t)
	}
	return placed, ok
}

func (p *allocPlacer) Remove(_ time.Duration, pod *Pod) {
	h, ok := p.held[pod.ID]
	if !ok {
		return
	}
	delete(p.held, pod.ID)
	_ = p.a.Recover(allocFramework, h.agent, h.res)
}

// Devices names the devices the allocator gave a placed pod.
func (p *allocPlacer) Devices(pod *Pod) []int {
	var out []int
	for k := range p.held[pod.ID].res.GPUDevices() {
		out = append(out, k)
	}
	return out
}
