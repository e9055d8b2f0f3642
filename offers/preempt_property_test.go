package offers

// Property tests of PlanPreemption: a simulated master drives one
// allocator for 1,000 steps of one second over a random weighted role tree,
// random agents and frameworks whose demand comes and goes, planning,
// warning, killing at a deadline and allocating as the leader does
// (docs/architecture.md, the allocator). Everything the properties are
// checked against is recomputed here from the test's own model of the
// cluster (ppr, psNode, psTask), never from the planner's helpers: fair
// shares by a static H-DRF fill of its own, what roles run for sure, who is
// kin to whom.

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// ppr is the test's own resource pair: milli-CPUs and MiB.
type ppr [2]int64

func (x ppr) plus(y ppr) ppr  { return ppr{x[0] + y[0], x[1] + y[1]} }
func (x ppr) minus(y ppr) ppr { return ppr{x[0] - y[0], x[1] - y[1]} }

// holds reports whether y fits in x.
func (x ppr) holds(y ppr) bool { return y[0] <= x[0] && y[1] <= x[1] }

func (x ppr) times(k int64) ppr { return ppr{x[0] * k, x[1] * k} }

func (x ppr) resources() protocol.Resources {
	r := protocol.Resources{Scalars: map[string]int64{}}
	if x[0] > 0 {
		r.Scalars[protocol.ResCPUs] = x[0]
	}
	if x[1] > 0 {
		r.Scalars[protocol.ResMem] = x[1]
	}
	return r
}

// fitCount is how many tasks of s fit in x.
func (x ppr) fitCount(s ppr) int64 {
	n := int64(math.MaxInt64)
	for j := range x {
		if s[j] > 0 {
			n = min(n, max(0, x[j])/s[j])
		}
	}
	return n
}

// psNode is a role or a framework's leaf in the test's model of the tree.
type psNode struct {
	path   string
	parent *psNode
	kids   []*psNode
	weight float64
	seq    int // creation order, the fill's tie-break
	guar   ppr
	named  [2]bool // resources the guarantee names
	policy PreemptionPolicy
	fw     *psFw
}

// within reports whether n is x or lies under it.
func (n *psNode) within(x *psNode) bool {
	for m := n; m != nil; m = m.parent {
		if m == x {
			return true
		}
	}
	return false
}

func (n *psNode) guaranteed() bool { return n.named[0] || n.named[1] }

type psFw struct {
	id                protocol.FrameworkID
	leaf              *psNode
	shape             ppr
	zone              string // hard constraint zone == zone, "" for none
	pending, optional int64
	npOK              bool
}

func (f *psFw) admits(ag *psAgent) bool { return f.zone == "" || f.zone == ag.zone }

type psAgent struct {
	id    protocol.AgentID
	zone  string
	total ppr
}

type psTask struct {
	rt            RunningTask // as listed to the planner, but Warned
	id            protocol.TaskID
	fw            *psFw
	ag            *psAgent
	res           ppr
	revocable, np bool
	started       int
	warned        bool
	warnedAt      int
	warnedFor     string
}

// psim is the simulated master with its cluster.
type psim struct {
	t        *testing.T
	r        *rand.Rand
	a        *Allocator
	cfg      PreemptionConfig
	delay    int // steps a need waits (the configured delay)
	deadline int // steps from a warning to its kill
	root     *psNode
	roles    map[string]*psNode
	fws      []*psFw
	fwByID   map[protocol.FrameworkID]*psFw
	agents   []*psAgent
	tasks    []*psTask
	capacity ppr
	step     int
	seq      int // mirrors the allocator's tree creation order
	taskSeq  int
	// guarAt are the guarantees to set, by step; nGuar counts the roles.
	guarAt map[int][]psGuar
	nGuar  int

	// What the properties observed.
	chosen    map[protocol.TaskID]int // step a task was chosen
	preempted int
	killed    int
	streak    map[*psNode]int
	lastHeld  map[*psNode]ppr
	// launched marks the nodes above a task the last round launched.
	launched             map[*psNode]bool
	maxStreak            int
	needsSeen            int
	shortSteps, fixSteps int
	coveredChecks        int
	maxStreakAt          string
	rechosen             int
	arisen               int // units of need that arose (test-computed)
	arisenCost           int // the thrash bound (countArisen)
	times                map[protocol.TaskID]int
	maxTimes             int
	lastDeficit          ppr
	lastLacks            map[*psNode]int64

	// Memos of what the tasks make, forgotten when they change.
	fairMemo, sureMemo, heldMemo map[*psNode]ppr
	freeMemo                     map[*psAgent]ppr
}

// psSeeds adds seeds of each kind to TestPlanPreemption_properties, for
// longer runs: go test ./offers -run Preemption_properties -args
// -preempt.seeds=20.
var psSeeds = flag.Int("preempt.seeds", 0, "more seeds of each kind for TestPlanPreemption_properties")

// psOpts shape one run.
type psOpts struct {
	seed   uint64
	allOff bool
	// policy, when set, is the cluster's, and roles either inherit it or
	// turn preemption off.
	policy PreemptionPolicy
	steps  int
}

var psPolicies = []PreemptionPolicy{PreemptOff, PreemptGuarantees, PreemptFair}

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

	for i := range 6 + r.IntN(7) {
		ag := &psAgent{id: protocol.AgentID(fmt.Sprintf("a%02d", i)), zone: []string{"a", "b"}[r.IntN(2)],
			total: ppr{[]int64{4000, 8000, 16000}[r.IntN(3)], []int64{8192, 16384, 32768}[r.IntN(3)]}}
		must(t, s.a.AddAgent(agentInfo(string(ag.id), ag.total.resources(), protocol.Attributes{"zone": protocol.Text(ag.zone)})))
		s.agents = append(s.agents, ag)
		s.capacity = s.capacity.plus(ag.total)
	}

	// Roles: 2-4 top-level, each with up to 3 children down to depth 3,
	// random weights and policies.
	var all []*psNode
	var grow func(parent *psNode, depth int)
	grow = func(parent *psNode, depth int) {
		n := 2 + r.IntN(3)
		if depth > 1 {
			n = r.IntN(4)
		}
		for i := range n {
			path := fmt.Sprintf("r%d", i)
			if parent != s.root {
				path = parent.path + "/" + path
			}
			role := &psNode{path: path, parent: parent, weight: float64(1 + r.IntN(4))}
			switch x := r.IntN(4); {
			case o.allOff && x < 2:
				role.policy = PreemptOff
			case o.policy != "" && x == 0:
				role.policy = PreemptOff
			case o.policy == "" && !o.allOff && x < 2:
				role.policy = psPolicies[r.IntN(3)]
			}
			s.seq++
			role.seq = s.seq
			parent.kids = append(parent.kids, role)
			s.roles[path] = role
			all = append(all, role)
			must(t, s.a.SetRole(path, role.weight))
			if role.policy != "" {
				must(t, s.a.SetRolePreemption(path, role.policy))
			}
			if depth < 3 {
				grow(role, depth+1)
			}
		}
	}
	grow(s.root, 1)

	// Frameworks, under any role.
	for i := range 6 + r.IntN(9) {
		role := all[r.IntN(len(all))]
		f := &psFw{id: protocol.FrameworkID(fmt.Sprintf("f%02d", i)),
			shape: ppr{[]int64{500, 1000, 2000}[r.IntN(3)], []int64{512, 1024, 2048, 4096}[r.IntN(4)]},
			npOK:  r.IntN(3) == 0}
		if r.IntN(4) == 0 {
			f.zone = []string{"a", "b"}[r.IntN(2)]
		}
		w := float64(1 + r.IntN(2))
		s.seq++
		f.leaf = &psNode{path: string(f.id), parent: role, weight: w, seq: s.seq, fw: f}
		role.kids = append(role.kids, f.leaf)
		must(t, s.a.AddFramework(FrameworkInfo{ID: f.id, Role: role.path, Weight: w}))
		f.pending, f.optional = int64(r.IntN(9)), int64(r.IntN(5))
		s.fws = append(s.fws, f)
		s.fwByID[f.id] = f
		s.declare(f)
	}

	// Guarantees on up to 3 roles with frameworks below them, parents
	// before children, the outermost ones within 60% of the cluster
	// together, a nested one within half of its guaranteed ancestor's;
	// most are set while the cluster is busy, some raised later still.
	budget := ppr{s.capacity[0] * 6 / 10, s.capacity[1] * 6 / 10}
	var withFws []*psNode
	for _, n := range all {
		if slices.ContainsFunc(s.fws, func(f *psFw) bool { return f.leaf.within(n) }) {
			withFws = append(withFws, n)
		}
	}
	picked := map[*psNode]bool{}
	for range 1 + r.IntN(3) {
		n := withFws[r.IntN(len(withFws))]
		picked[n] = true
		if o.policy != "" && s.policyOf(n) == PreemptOff {
			// A guarantee under the cluster's policy takes back for it.
			n.policy = o.policy
			must(t, s.a.SetRolePreemption(n.path, n.policy))
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
		named := [2]bool{true, r.IntN(2) == 0}
		if !named[1] {
			g[1] = 0
		}
		planned[n] = g
		if above == nil {
			budget = budget.minus(g)
		}
		at := 0
		if r.IntN(4) != 0 {
			at = 30 + r.IntN(600)
		}
		if r.IntN(3) == 0 {
			// First half of it, the rest later.
			half := ppr{g[0] / 1000 * 500, g[1] / 1024 * 512}
			if half[0] > 0 {
				s.guarAt[at] = append(s.guarAt[at], psGuar{n, half, named})
				at += 50 + r.IntN(200)
			}
		}
		s.guarAt[at] = append(s.guarAt[at], psGuar{n, g, named})
		s.nGuar++
	}
	s.setGuarantees()
	return s
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

// victimsPerPlacement bounds how many tasks one placement of a task of
// shape sh may take: the planner's victims on an agent are irreducible (no
// one of them can be left out), so at most ⌈sh_j / m_j⌉ of them are kept
// for resource j, m_j being the smallest positive amount of j any task
// holds; summed over the resources.
func (s *psim) victimsPerPlacement(sh ppr) int {
	n := 0
	for j := range sh {
		m := int64(math.MaxInt64)
		for _, f := range s.fws {
			if f.shape[j] > 0 {
				m = min(m, f.shape[j])
			}
		}
		n += int((sh[j] + m - 1) / m)
	}
	return n
}

func (s *psim) now() time.Time { return at(time.Duration(s.step) * time.Second) }

// run simulates steps seconds of the master.
func (s *psim) run(steps int) {
	for s.step = 0; s.step < steps; s.step++ {
		if s.step > 0 {
			s.setGuarantees()
		}
		s.events()
		s.liveness()
		s.countArisen()
		p := s.a.PlanPreemption(s.runningTasks(), s.now())
		s.checkPlan(p)
		s.apply(p)
		s.allocate()
		s.checkModel()
	}
}

// events: demand arrives and leaves, tasks end on their own.
func (s *psim) events() {
	for _, f := range s.fws {
		changed := false
		switch x := s.r.IntN(200); {
		case x < 6:
			k := int64(1 + s.r.IntN(6))
			f.pending += k
			changed = true
		case x < 9:
			f.optional += int64(1 + s.r.IntN(4))
			changed = true
		case x < 11:
			f.pending, f.optional = 0, 0
			changed = true
		}
		if changed {
			s.declare(f)
		}
	}
	kept := s.tasks[:0]
	for _, t := range s.tasks {
		if s.r.IntN(1000) < 3 {
			must(s.t, s.a.Recover(t.fw.id, t.ag.id, t.res.resources()))
			continue
		}
		kept = append(kept, t)
	}
	s.tasks = kept
	s.changed()
}

func (s *psim) runningTasks() []RunningTask {
	out := make([]RunningTask, 0, len(s.tasks))
	for _, t := range s.tasks {
		if t.rt.TaskID == "" {
			t.rt = RunningTask{FrameworkID: t.fw.id, TaskID: t.id, AgentID: t.ag.id, Resources: t.res.resources(),
				Revocable: t.revocable, NonPreemptible: t.np, StartedAt: at(time.Duration(t.started) * time.Second)}
		}
		rt := t.rt
		rt.Warned = t.warned
		out = append(out, rt)
	}
	return out
}

// apply does what the leader does with a plan: warn, kill at the deadline
// what is still kept, withdraw what is released.
func (s *psim) apply(p PreemptionPlan) {
	defer s.changed()
	byID := s.taskIndex()
	for _, v := range p.Preempt {
		t := byID[v.TaskID]
		t.warned, t.warnedAt, t.warnedFor = true, s.step, v.For
		s.chosen[t.id] = s.step
		s.preempted++
	}
	kill := map[*psTask]bool{}
	for _, v := range p.Keep {
		if t := byID[v.TaskID]; s.step-t.warnedAt >= s.deadline {
			kill[t] = true
		}
	}
	for _, v := range p.Release {
		t := byID[v.TaskID]
		t.warned = false
	}
	if len(kill) == 0 {
		return
	}
	kept := s.tasks[:0]
	for _, t := range s.tasks {
		if kill[t] {
			must(s.t, s.a.Recover(t.fw.id, t.ag.id, t.res.resources()))
			s.killed++
			continue
		}
		kept = append(kept, t)
	}
	s.tasks = kept
}

// allocate runs a round; frameworks launch what they still want and
// decline the rest without a filter.
func (s *psim) allocate() {
	defer s.changed()
	now := s.now()
	d := s.a.Allocate(now)
	clear(s.launched)
	for _, o := range d.Offers {
		f := s.fwByID[o.FrameworkID]
		want := f.pending
		if o.Kind == KindLeftover {
			want = f.optional
		}
		n := min(o.Tasks, want)
		if n <= 0 {
			must(s.t, s.a.Decline(f.id, ids(o), 0, now))
			continue
		}
		tasks := make([]protocol.Resources, n)
		for i := range tasks {
			tasks[i] = f.shape.resources()
		}
		acc, err := s.a.AcceptTasks(f.id, ids(o), tasks, now)
		must(s.t, err)
		ag := s.agentByID(acc.Agent)
		for _, k := range acc.Kinds {
			t := &psTask{fw: f, ag: ag, res: f.shape, revocable: k == KindLeftover, started: s.step}
			s.taskSeq++
			t.id = protocol.TaskID(fmt.Sprintf("t%05d", s.taskSeq))
			own, other := &f.pending, &f.optional
			if t.revocable {
				own, other = other, own
			}
			if *own > 0 {
				*own--
			} else if *other > 0 {
				*other--
			}
			t.np = !t.revocable && f.npOK && s.npRoom(f, t.res)
			s.tasks = append(s.tasks, t)
			for x := f.leaf; x != nil; x = x.parent {
				s.launched[x] = true
			}
		}
	}
}

// npRoom reports whether f may run one more non-preemptible task of r:
// some guarantee above it is in force and each one in force keeps its
// non-preemptible tasks within it.
func (s *psim) npRoom(f *psFw, r ppr) bool {
	any := false
	for g := f.leaf.parent; g != nil; g = g.parent {
		if !s.active(g) {
			continue
		}
		any = true
		var np ppr
		for _, t := range s.tasks {
			if t.np && t.fw.leaf.within(g) {
				np = np.plus(t.res)
			}
		}
		np = np.plus(r)
		for j := range 2 {
			if g.named[j] && np[j] > g.guar[j] {
				return false
			}
		}
	}
	return any
}

func (s *psim) agentByID(id protocol.AgentID) *psAgent {
	for _, ag := range s.agents {
		if ag.id == id {
			return ag
		}
	}
	s.t.Fatalf("unknown agent %s", id)
	return nil
}

func (s *psim) taskIndex() map[protocol.TaskID]*psTask {
	m := make(map[protocol.TaskID]*psTask, len(s.tasks))
	for _, t := range s.tasks {
		m[t.id] = t
	}
	return m
}

// checkModel keeps the test's model honest: every framework's usage in the
// allocator is the sum of its tasks here, and no offer is left outstanding.
func (s *psim) checkModel() {
	used := map[*psFw]ppr{}
	for _, t := range s.tasks {
		used[t.fw] = used[t.fw].plus(t.res)
	}
	for _, f := range s.fws {
		u, err := s.a.Usage(f.id)
		must(s.t, err)
		if !u.Equal(used[f].resources()) {
			s.t.Fatalf("step %d: framework %s: allocator usage %s, model %v", s.step, f.id, u, used[f])
		}
	}
	if n := len(s.a.Outstanding()); n != 0 {
		s.t.Fatalf("step %d: %d offers outstanding after the frameworks answered", s.step, n)
	}
}

// TestPlanPreemption_properties runs the simulated master over random
// clusters (fixed seeds; -preempt.seeds adds more) and asserts, per plan:
//
//   - victims are running, not non-preemptible, not warned (a warned task
//     is never chosen again), eligible for their need (outside its
//     subtree; revocable only for a fair share under policy guarantees;
//     for a fair share, not under a role short of its guarantee), of a
//     need whose policy is not off; new victims stay within MaxFraction of
//     the capacity unless they are one pick;
//   - no non-revocable victim takes a node between it and its need below
//     its guarantee or its fair share of what it runs for sure, both
//     computed here (checkProtection);
//   - warned tasks kept are eligible for their need; nothing is taken for
//     a need warned tasks already cover (checkCovered);
//   - liveness: a role with a guarantee in force and policy guarantees or
//     fair, short of it with pending demand preemption could place
//     (couldFix), gains ground (a task launched under it) within
//     livenessBound steps: the delay, the deadline and one round where
//     the cap does not bind;
//   - thrash: the tasks chosen over the run are at most the units of need
//     that arose, each weighted by the victims one placement may take,
//     plus the units of headroom deficit that arose (countArisen). A
//     placement answers one unit with an irreducible set on one agent and
//     is made only for a unit warned tasks and free room leave uncovered;
//     a unit is placed again after its victims were released (counted when
//     it arises again) or when the round gave their room to another
//     framework, which the bound leaves out: it holds with a wide margin.
//
// A released task may be chosen again (its need came back, or the room
// counted for it went to another framework): the log says how often.
// With policy off everywhere, no plan has a need, a victim or a kept task.
func TestPlanPreemption_properties(t *testing.T) {
	t.Parallel()
	var cases []struct {
		name string
		opts psOpts
	}
	add := func(name string, o psOpts) {
		o.steps = 1000
		cases = append(cases, struct {
			name string
			opts psOpts
		}{fmt.Sprintf("%s/seed=%d", name, o.seed), o})
	}
	// The seeds run by default are ones that keep guarantees short often;
	// mixed 138 and guarantees 1161 nest a short role under a short role
	// (the room freed for the inner one once went back to the outer).
	seeds := func(base ...uint64) []uint64 {
		for i := range uint64(*psSeeds) {
			base = append(base, base[0]+100+i)
		}
		return base
	}
	for _, seed := range seeds(1, 4, 138) {
		add("mixed", psOpts{seed: seed})
	}
	for _, seed := range seeds(1011, 1020, 1161) {
		add("guarantees", psOpts{seed: seed, policy: PreemptGuarantees})
	}
	for _, seed := range seeds(2018) {
		add("fair", psOpts{seed: seed, policy: PreemptFair})
	}
	for _, seed := range seeds(3001) {
		add("off", psOpts{seed: seed, allOff: true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newPSim(t, tc.opts)
			s.run(tc.opts.steps)
			if s.preempted > s.arisenCost {
				t.Fatalf("%d tasks chosen, more than the bound %d", s.preempted, s.arisenCost)
			}
			t.Logf("policy %s, delay %d, deadline %d, cap %.2f: %d needs seen, %d chosen (%d again after a release, one task at most %d times), %d killed, %d units of need arose (bound %d), covered checked in %d plans, short %d fixable %d, longest fixable shortfall %d steps (%s; bound %d)",
				s.cfg.Policy, s.delay, s.deadline, s.cfg.MaxFraction, s.needsSeen, s.preempted, s.rechosen, s.maxTimes, s.killed, s.arisen, s.arisenCost, s.coveredChecks, s.shortSteps, s.fixSteps, s.maxStreak, s.maxStreakAt, s.livenessBound())
		})
	}
}
