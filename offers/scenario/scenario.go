// Package scenario replays H-DRF scenarios against the allocator: a weighted
// tree whose leaves run identical tasks, on a pool of agents, filled by
// allocation rounds in which every offer is accepted whole, then churned by
// completing random running tasks and refilling. A scenario with a timeline
// (arrivals, task durations, guarantees, preemption) is replayed instead by
// Replay, event by event as the master's leader drives the allocator
// (replay.go). It is the fixture of the offers tests and the engine of
// `allot sim hdrf`, so both exercise exactly the code the master runs; file.go
// reads the JSON scenario files.
package scenario

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// Node is a node of a scenario tree. A node with children is a role; a node
// without children is a leaf (a framework) and must have a Demand.
type Node struct {
	Name     string
	Weight   float64 // 0 means 1
	Children []Node
	// Demand is a leaf's per-task resources.
	Demand map[string]int64
	// Tasks is a leaf's total number of tasks; offers.Unlimited for no bound.
	Tasks int64

	// The timeline (timeline.go); all zero for a scenario without one.

	// Arrival is when a leaf's framework subscribes and declares its
	// demand, from the start of the replay.
	Arrival time.Duration
	// Duration is how long each of a leaf's tasks runs; zero runs it until
	// it is killed.
	Duration time.Duration
	// Guarantee is a role's guarantee, in effect from the first arrival
	// under it.
	Guarantee map[string]int64
	// Preemption is a role's own preemption policy ("" inherits).
	Preemption offers.PreemptionPolicy
}

// Spec is a whole scenario.
type Spec struct {
	Capacity map[string]int64
	Root     Node
	// Agents splits the capacity over this many equal agents (default 1).
	Agents int
	// Preemption, when set, configures the preemption Replay runs; nil
	// runs the master's defaults (DefaultPreemption).
	Preemption *Preemption
	// Until ends Replay at this time; zero replays until nothing more can
	// happen.
	Until time.Duration
}

// Run is a scenario loaded into an allocator.
type Run struct {
	Alloc  *offers.Allocator
	spec   Spec
	leaves []string // leaf names in tree order
	// leafRole is each leaf's role path; nodes every node by its key (a
	// role's path, a leaf's name); arrivals the leaves and guarantees
	// that wait for a later time (timeline.go).
	leafRole map[string]string
	nodes    map[string]*Node
	arrivals []arrival
	demand   map[string]protocol.Resources
	tasks    map[string]int64 // running tasks per leaf
	running  []runningTask
	now      time.Time
}

type runningTask struct {
	leaf  string
	agent protocol.AgentID
}

// New validates spec and loads it into an allocator with the given policy.
func New(spec Spec, policy offers.Policy) (*Run, error) {
	cfg := offers.DefaultConfig()
	cfg.Policy = policy
	cfg.OfferTimeout = 0
	if spec.Preemption != nil {
		if err := spec.Preemption.validate(); err != nil {
			return nil, err
		}
		cfg.Preemption = spec.Preemption.allocator()
	}
	if spec.Until < 0 {
		return nil, &FieldError{Field: "until", Reason: fmt.Sprintf("must not be negative, got %v", spec.Until)}
	}
	a, err := offers.New(cfg)
	if err != nil {
		return nil, err
	}
	r := &Run{Alloc: a, spec: spec, demand: map[string]protocol.Resources{}, tasks: map[string]int64{},
		now: time.Unix(0, 0).UTC(), leafRole: map[string]string{}, nodes: map[string]*Node{}}
	if len(spec.Capacity) == 0 {
		return nil, fmt.Errorf("%w: empty capacity", protocol.ErrInvalidArgument)
	}
	for name, v := range spec.Capacity {
		if !protocol.ValidResourceName(name) || v < 0 {
			return nil, fmt.Errorf("%w: capacity %s=%d", protocol.ErrInvalidArgument, name, v)
		}
	}
	if spec.Agents < 1 {
		spec.Agents = 1
		r.spec.Agents = 1
	}
	if err := r.addAgents(); err != nil {
		return nil, err
	}
	if len(spec.Root.Children) == 0 {
		return nil, fmt.Errorf("%w: the root has no children", protocol.ErrInvalidArgument)
	}
	if err := checkRootTimeline(spec.Root); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, c := range spec.Root.Children {
		if err := r.addNode(c, "", seen); err != nil {
			return nil, err
		}
	}
	r.sortArrivals()
	return r, nil
}

func (r *Run) addAgents() error {
	k := int64(r.spec.Agents)
	for i := int64(0); i < k; i++ {
		total := map[string]int64{}
		for name, v := range r.spec.Capacity {
			part := v / k
			if i < v%k {
				part++
			}
			total[name] = part
		}
		err := r.Alloc.AddAgent(offers.AgentInfo{
			ID:       protocol.AgentID("agent-" + strconv.FormatInt(i, 10)),
			Hostname: "agent-" + strconv.FormatInt(i, 10),
			Total:    protocol.Scalars(total),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Run) addNode(n Node, parent string, seen map[string]bool) error {
	if n.Name == "" || strings.ContainsAny(n.Name, "/ \t") {
		return fmt.Errorf("%w: node name %q", protocol.ErrInvalidArgument, n.Name)
	}
	if seen[n.Name] {
		return fmt.Errorf("%w: node name %q used twice", protocol.ErrInvalidArgument, n.Name)
	}
	seen[n.Name] = true
	w := n.Weight
	if w == 0 {
		w = 1
	}
	if !(w > 0) {
		return fmt.Errorf("%w: node %s: weight %v", protocol.ErrInvalidArgument, n.Name, n.Weight)
	}
	if len(n.Children) > 0 {
		if len(n.Demand) > 0 {
			return fmt.Errorf("%w: node %s has children and a demand", protocol.ErrInvalidArgument, n.Name)
		}
		path := n.Name
		if parent != "" {
			path = parent + "/" + n.Name
		}
		if err := r.Alloc.SetRole(path, w); err != nil {
			return err
		}
		if err := r.addRoleTimeline(n, path); err != nil {
			return err
		}
		for _, c := range n.Children {
			if err := r.addNode(c, path, seen); err != nil {
				return err
			}
		}
		return nil
	}
	return r.addLeaf(n, parent, w)
}

func (r *Run) addLeaf(n Node, role string, w float64) error {
	if len(n.Demand) == 0 {
		return fmt.Errorf("%w: leaf %s has no demand", protocol.ErrInvalidArgument, n.Name)
	}
	positive := false
	for name, v := range n.Demand {
		if _, ok := r.spec.Capacity[name]; !ok {
			return fmt.Errorf("%w: leaf %s: unknown resource %q", protocol.ErrInvalidArgument, n.Name, name)
		}
		if v < 0 {
			return fmt.Errorf("%w: leaf %s: negative demand %s=%d", protocol.ErrInvalidArgument, n.Name, name, v)
		}
		positive = positive || v > 0
	}
	if !positive {
		return fmt.Errorf("%w: leaf %s demands nothing", protocol.ErrInvalidArgument, n.Name)
	}
	if n.Tasks < 0 {
		return fmt.Errorf("%w: leaf %s: negative tasks", protocol.ErrInvalidArgument, n.Name)
	}
	if err := checkLeafTimeline(n); err != nil {
		return err
	}
	r.demand[n.Name] = protocol.Scalars(n.Demand)
	r.leaves = append(r.leaves, n.Name)
	r.leafRole[n.Name] = role
	r.nodes[n.Name] = &n
	if n.Arrival > 0 {
		r.arrivals = append(r.arrivals, arrival{at: n.Arrival, leaf: n.Name, weight: w})
		return nil
	}
	return r.join(n.Name, w)
}

// join adds a leaf's framework and declares its demand, as a framework that
// subscribes does.
func (r *Run) join(leaf string, w float64) error {
	id := protocol.FrameworkID(leaf)
	if err := r.Alloc.AddFramework(offers.FrameworkInfo{ID: id, Role: r.leafRole[leaf], Weight: w}); err != nil {
		return err
	}
	return r.Alloc.SetDemand(id, []offers.Demand{{Resources: r.demand[leaf], Count: r.nodes[leaf].Tasks}})
}

// Leaves returns the leaf names in tree order.
func (r *Run) Leaves() []string { return r.leaves }

// Tasks returns how many tasks a leaf runs.
func (r *Run) Tasks(leaf string) int64 { return r.tasks[leaf] }

// Fill runs allocation rounds, accepting every offer whole, until a round
// makes no offer. It returns the number of rounds that made offers.
func (r *Run) Fill() (int, error) {
	rounds := 0
	for {
		r.now = r.now.Add(time.Millisecond)
		d := r.Alloc.Allocate(r.now)
		if len(d.Offers) == 0 {
			return rounds, nil
		}
		rounds++
		for _, o := range d.Offers {
			leaf := string(o.FrameworkID)
			launches := make([]protocol.Resources, o.Tasks)
			for i := range launches {
				launches[i] = r.demand[leaf]
			}
			if _, err := r.Alloc.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, launches, r.now); err != nil {
				return rounds, fmt.Errorf("accept %s: %w", o.ID, err)
			}
			for range launches {
				r.running = append(r.running, runningTask{leaf: leaf, agent: o.AgentID})
			}
			r.tasks[leaf] += o.Tasks
		}
	}
}

// Complete ends the i-th running task (it leaves its leaf's remaining tasks).
func (r *Run) Complete(i int) error {
	t := r.running[i]
	r.running[i] = r.running[len(r.running)-1]
	r.running = r.running[:len(r.running)-1]
	r.tasks[t.leaf]--
	return r.Alloc.Recover(protocol.FrameworkID(t.leaf), t.agent, r.demand[t.leaf])
}

// Churn completes n running tasks chosen uniformly at random with the seed,
// refilling after each. It stops early when nothing runs.
func (r *Run) Churn(n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i < n && len(r.running) > 0; i++ {
		if err := r.Complete(rng.IntN(len(r.running))); err != nil {
			return err
		}
		if _, err := r.Fill(); err != nil {
			return err
		}
	}
	return nil
}

// Shares returns a leaf's running usage over capacity per resource, for
// every capacity resource.
func (r *Run) Shares(leaf string) map[string]float64 {
	out := map[string]float64{}
	use, _ := r.Alloc.Usage(protocol.FrameworkID(leaf))
	for name, c := range r.spec.Capacity {
		if c > 0 {
			out[name] = float64(use.Scalar(name)) / float64(c)
		} else {
			out[name] = 0
		}
	}
	return out
}

// Counts returns running tasks per leaf, in a form handy for test output.
func (r *Run) Counts() string {
	names := append([]string(nil), r.leaves...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%d ", n, r.tasks[n])
	}
	return strings.TrimSpace(b.String())
}
