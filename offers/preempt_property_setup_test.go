package offers

// The random cluster a PlanPreemption property run starts from
// (preempt_property_test.go): agents, a role tree, frameworks and the
// guarantees to set over the run.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func newPSim(t *testing.T, o psOpts) *psim {
	t.Helper()
	r := rand.New(rand.NewPCG(o.seed, 0x9e3779b97f4a7c15))
	rootPol := psPolicies[r.IntN(3)]
	switch {
	case o.allOff:
		rootPol = PreemptOff
	case o.policy != "":
		rootPol = o.policy
	}
	s := &psim{
		t: t, r: r,
		delay:    r.IntN(4),
		deadline: 1 + r.IntN(4),
		roles:    map[string]*psNode{},
		fwByID:   map[protocol.FrameworkID]*psFw{},
		chosen:   map[protocol.TaskID]int{},
		times:    map[protocol.TaskID]int{},
		streak:   map[*psNode]int{},
		lastHeld: map[*psNode]ppr{}, launched: map[*psNode]bool{},
		guarAt: map[int][]psGuar{},
	}
	s.cfg = PreemptionConfig{Policy: rootPol, Delay: time.Duration(s.delay) * time.Second,
		MaxFraction: []float64{0.1, 0.25, 1}[r.IntN(3)]}
	cfg := testConfig(PolicyDynamic)
	cfg.Preemption = s.cfg
	s.a = newAlloc(t, cfg)
	s.root = &psNode{weight: 1}
	s.roles[""] = s.root

	s.addAgents()
	all := s.addRoles(o)
	s.addFrameworks(all)
	s.planGuarantees(o, all)
	s.setGuarantees()
	return s
}

// addAgents adds 6-12 agents of random sizes, each in zone a or b.
func (s *psim) addAgents() {
	s.t.Helper()
	for i := range 6 + s.r.IntN(7) {
		ag := &psAgent{id: protocol.AgentID(fmt.Sprintf("a%02d", i)), zone: []string{"a", "b"}[s.r.IntN(2)],
			total: ppr{[]int64{4000, 8000, 16000}[s.r.IntN(3)], []int64{8192, 16384, 32768}[s.r.IntN(3)]}}
		must(s.t, s.a.AddAgent(agentInfo(string(ag.id), ag.total.resources(), protocol.Attributes{"zone": protocol.Text(ag.zone)})))
		s.agents = append(s.agents, ag)
		s.capacity = s.capacity.plus(ag.total)
	}
}

// addRoles builds the role tree and returns its roles, parents first:
// 2-4 top-level roles, each with up to 3 children down to depth 3, with
// random weights and policies.
func (s *psim) addRoles(o psOpts) []*psNode {
	s.t.Helper()
	var all []*psNode
	var grow func(parent *psNode, depth int)
	grow = func(parent *psNode, depth int) {
		n := 2 + s.r.IntN(3)
		if depth > 1 {
			n = s.r.IntN(4)
		}
		for i := range n {
			path := fmt.Sprintf("r%d", i)
			if parent != s.root {
				path = parent.path + "/" + path
			}
			role := &psNode{path: path, parent: parent, weight: float64(1 + s.r.IntN(4))}
			switch x := s.r.IntN(4); {
			case o.allOff && x < 2:
				role.policy = PreemptOff
			case o.policy != "" && x == 0:
				role.policy = PreemptOff
			case o.policy == "" && !o.allOff && x < 2:
				role.policy = psPolicies[s.r.IntN(3)]
			}
			s.seq++
			role.seq = s.seq
			parent.kids = append(parent.kids, role)
			s.roles[path] = role
			all = append(all, role)
			must(s.t, s.a.SetRole(path, role.weight))
			if role.policy != "" {
				must(s.t, s.a.SetRolePreemption(path, role.policy))
			}
			if depth < 3 {
				grow(role, depth+1)
			}
		}
	}
	grow(s.root, 1)
	return all
}

// addFrameworks adds 6-14 frameworks, each under any of the roles all,
// and declares their demand.
func (s *psim) addFrameworks(all []*psNode) {
	s.t.Helper()
	for i := range 6 + s.r.IntN(9) {
		role := all[s.r.IntN(len(all))]
		f := &psFw{id: protocol.FrameworkID(fmt.Sprintf("f%02d", i)),
			shape: ppr{[]int64{500, 1000, 2000}[s.r.IntN(3)], []int64{512, 1024, 2048, 4096}[s.r.IntN(4)]},
			npOK:  s.r.IntN(3) == 0}
		if s.r.IntN(4) == 0 {
			f.zone = []string{"a", "b"}[s.r.IntN(2)]
		}
		w := float64(1 + s.r.IntN(2))
		s.seq++
		f.leaf = &psNode{path: string(f.id), parent: role, weight: w, seq: s.seq, fw: f}
		role.kids = append(role.kids, f.leaf)
		must(s.t, s.a.AddFramework(FrameworkInfo{ID: f.id, Role: role.path, Weight: w}))
		f.pending, f.optional = int64(s.r.IntN(9)), int64(s.r.IntN(5))
		s.fws = append(s.fws, f)
		s.fwByID[f.id] = f
		s.declare(f)
	}
}

// planGuarantees schedules, in s.guarAt, the guarantees of the roles all.
// They go on up to 3 roles with frameworks below them, parents
// before children, the outermost ones within 60% of the cluster
// together, a nested one within half of its guaranteed ancestor's;
// most are set while the cluster is busy, some raised later still.
func (s *psim) planGuarantees(o psOpts, all []*psNode) {
	s.t.Helper()
	budget := ppr{s.capacity[0] * 6 / 10, s.capacity[1] * 6 / 10}
	var withFws []*psNode
	for _, n := range all {
		if slices.ContainsFunc(s.fws, func(f *psFw) bool { return f.leaf.within(n) }) {
			withFws = append(withFws, n)
		}
	}
	picked := map[*psNode]bool{}
	for range 1 + s.r.IntN(3) {
		n := withFws[s.r.IntN(len(withFws))]
		picked[n] = true
		if o.policy != "" && s.policyOf(n) == PreemptOff {
			// A guarantee under the cluster's policy takes back for it.
			n.policy = o.policy
			must(s.t, s.a.SetRolePreemption(n.path, n.policy))
		}
	}
	planned := map[*psNode]ppr{}
	for _, n := range all { // all lists parents first
		if !picked[n] {
			continue
		}
		var above *psNode
		for p := n.parent; p != nil && above == nil; p = p.parent {
			if _, ok := planned[p]; ok {
				above = p
			}
		}
		limit := ppr{budget[0] / 2, budget[1] / 2}
		if above != nil {
			limit = ppr{planned[above][0] / 2, planned[above][1] / 2}
		}
		g := ppr{limit[0] / 500 * 500, limit[1] / 512 * 512}
		if g[0] == 0 {
			continue
		}
		named := [2]bool{true, s.r.IntN(2) == 0}
		if !named[1] {
			g[1] = 0
		}
		planned[n] = g
		if above == nil {
			budget = budget.minus(g)
		}
		at := 0
		if s.r.IntN(4) != 0 {
			at = 30 + s.r.IntN(600)
		}
		if s.r.IntN(3) == 0 {
			// First half of it, the rest later.
			half := ppr{g[0] / 1000 * 500, g[1] / 1024 * 512}
			if half[0] > 0 {
				s.guarAt[at] = append(s.guarAt[at], psGuar{n, half, named})
				at += 50 + s.r.IntN(200)
			}
		}
		s.guarAt[at] = append(s.guarAt[at], psGuar{n, g, named})
		s.nGuar++
	}
}

// psGuar is a guarantee set at some step.
type psGuar struct {
	n     *psNode
	g     ppr
	named [2]bool
}

// setGuarantees installs the guarantees due at this step.
func (s *psim) setGuarantees() {
	for _, e := range s.guarAt[s.step] {
		e.n.guar, e.n.named = e.g, e.named
		must(s.t, s.a.SetRoleGuarantee(e.n.path, e.g.resources()))
	}
}

// active reports whether n has a guarantee in force.
func (s *psim) active(n *psNode) bool { return n.guaranteed() }

// declare tells the allocator f's demand.
func (s *psim) declare(f *psFw) {
	var cons []protocol.Constraint
	if f.zone != "" {
		cons = []protocol.Constraint{{Attribute: "zone", Op: protocol.OpEq, Value: f.zone}}
	}
	var fair, opt []Demand
	if f.pending > 0 {
		fair = []Demand{{Resources: f.shape.resources(), Count: f.pending, Constraints: cons}}
	}
	if f.optional > 0 {
		opt = []Demand{{Resources: f.shape.resources(), Count: f.optional, Constraints: cons}}
	}
	must(s.t, s.a.SetDemand(f.id, fair))
	must(s.t, s.a.SetLeftoverDemand(f.id, opt, 0))
}
