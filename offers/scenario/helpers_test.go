package scenario

// Shared fixtures of the scenario tests: tree builders, an independent
// static H-DRF oracle (docs/hdrf.md, discrete, exact rationals), the
// hierarchical share guarantee, the random-tree generator and the
// invariant checks (capacity, Pareto efficiency P5).

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-project/allot/offers"
)

// res is a resource vector by name.
type res = map[string]int64

// oracle is a pseudo-policy for example tables: the expected values are
// computed by staticOracle instead of the allocator.
const oracle offers.Policy = "oracle"

// hdrf are the policies that implement H-DRF (static target, dynamic rules).
var hdrf = []offers.Policy{offers.PolicyStatic, offers.PolicyDynamic, offers.PolicyPaper}

// lf is a leaf with weight 1 and unlimited tasks.
func lf(name string, d res) Node { return Node{Name: name, Demand: d, Tasks: offers.Unlimited} }

// lfw is a weighted leaf with unlimited tasks.
func lfw(name string, w float64, d res) Node {
	return Node{Name: name, Weight: w, Demand: d, Tasks: offers.Unlimited}
}

// grp is a role.
func grp(name string, w float64, children ...Node) Node {
	return Node{Name: name, Weight: w, Children: children}
}

// tree is a spec with one agent.
func tree(capacity res, children ...Node) Spec {
	return Spec{Capacity: capacity, Root: Node{Children: children}}
}

// without returns a deep copy of s with the named nodes (and any role left
// without children) removed.
func without(s Spec, names ...string) Spec {
	var prune func(n Node) (Node, bool)
	prune = func(n Node) (Node, bool) {
		if slices.Contains(names, n.Name) {
			return Node{}, false
		}
		out := n
		if len(n.Children) == 0 {
			return out, true
		}
		out.Children = nil
		for _, c := range n.Children {
			if pc, ok := prune(c); ok {
				out.Children = append(out.Children, pc)
			}
		}
		return out, len(out.Children) > 0
	}
	root, _ := prune(s.Root)
	s.Root = root
	return s
}

// leafNodes returns the leaves of s in tree order.
func leafNodes(s Spec) []Node {
	var out []Node
	var walk func(n Node)
	walk = func(n Node) {
		if len(n.Children) == 0 {
			out = append(out, n)
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, c := range s.Root.Children {
		walk(c)
	}
	return out
}

// mustRun loads s under p and runs the initial fill.
func mustRun(t testing.TB, s Spec, p offers.Policy) *Run {
	t.Helper()
	r, err := New(s, p)
	if err != nil {
		t.Fatalf("New(%s): %v", p, err)
	}
	if _, err := r.Fill(); err != nil {
		t.Fatalf("Fill(%s): %v", p, err)
	}
	return r
}

func mustChurn(t testing.TB, r *Run, n int, seed uint64) {
	t.Helper()
	if err := r.Churn(n, seed); err != nil {
		t.Fatalf("Churn: %v", err)
	}
}

// counts returns the running tasks of every leaf in tree order.
func counts(r *Run) []int64 {
	out := make([]int64, 0, len(r.Leaves()))
	for _, l := range r.Leaves() {
		out = append(out, r.Tasks(l))
	}
	return out
}

func fmtCounts(c []int64) string {
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, "/")
}

func fmtAlts(alts [][]int64) string {
	parts := make([]string, len(alts))
	for i, a := range alts {
		parts[i] = fmtCounts(a)
	}
	return strings.Join(parts, " or ")
}

func matchesAny(got []int64, alts [][]int64) bool {
	for _, a := range alts {
		if slices.Equal(got, a) {
			return true
		}
	}
	return false
}

// maxDiff reports the largest per-leaf difference between a and b.
func maxDiff(a, b []int64) int64 {
	var d int64
	for i := range a {
		d = max(d, abs64(a[i]-b[i]))
	}
	return d
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// completeWhere ends one running task chosen uniformly (with rng) among
// those of leaves accepted by keep, without refilling. It reports the leaf,
// or "" when no running task qualifies. It reads the run's task list, which
// the exported API does not expose.
func completeWhere(t testing.TB, r *Run, rng *rand.Rand, keep func(leaf string) bool) string {
	t.Helper()
	var idx []int
	for i, rt := range r.running {
		if keep == nil || keep(rt.leaf) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return ""
	}
	i := idx[rng.IntN(len(idx))]
	leaf := r.running[i].leaf
	if err := r.Complete(i); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	return leaf
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1)) }

// ---------------------------------------------------------------------------
// Static H-DRF oracle: Algorithm 1 by whole tasks, plain sums, weighted
// dominant shares compared exactly, ties to the leftmost child.

type onode struct {
	name     string
	w        *big.Rat
	children []*onode
	parent   *onode
	demand   []int64
	left     int64
	u        []int64
	key      *big.Rat // dominant share of u over w
	done     bool
}

// staticOracle returns the discrete static H-DRF allocation of s (single
// pool of s.Capacity), in tasks per leaf name.
func staticOracle(s Spec) map[string]int64 {
	names := resourceNames(s)
	capv := make([]int64, len(names))
	for j, n := range names {
		capv[j] = s.Capacity[n]
	}
	var build func(n Node, parent *onode) *onode
	build = func(n Node, parent *onode) *onode {
		w := n.Weight
		if w == 0 {
			w = 1
		}
		o := &onode{name: n.Name, w: new(big.Rat).SetFloat64(w), parent: parent,
			u: make([]int64, len(names)), key: new(big.Rat)}
		if len(n.Children) == 0 {
			o.demand = make([]int64, len(names))
			for j, rn := range names {
				o.demand[j] = n.Demand[rn]
			}
			o.left = n.Tasks
			return o
		}
		for _, c := range n.Children {
			o.children = append(o.children, build(c, o))
		}
		return o
	}
	root := build(s.Root, nil)
	free := slices.Clone(capv)
	fits := func(d []int64) bool {
		for j, x := range d {
			if x > free[j] {
				return false
			}
		}
		return true
	}
	rekey := func(o *onode) {
		best := new(big.Rat)
		for j, x := range o.u {
			if capv[j] > 0 && x > 0 {
				if q := big.NewRat(x, capv[j]); q.Cmp(best) > 0 {
					best = q
				}
			}
		}
		o.key = best.Quo(best, o.w)
	}
	var descend func(o *onode) *onode
	descend = func(o *onode) *onode {
		if o.done {
			return nil
		}
		if o.children == nil {
			if o.left > 0 && fits(o.demand) {
				return o
			}
			o.done = true
			return nil
		}
		for {
			var best *onode
			for _, c := range o.children {
				if !c.done && (best == nil || c.key.Cmp(best.key) < 0) {
					best = c
				}
			}
			if best == nil {
				o.done = true
				return nil
			}
			if l := descend(best); l != nil {
				return l
			}
		}
	}
	out := map[string]int64{}
	for _, l := range leafNodes(s) {
		out[l.Name] = 0
	}
	for {
		l := descend(root)
		if l == nil {
			return out
		}
		if l.left != offers.Unlimited {
			l.left--
		}
		for j, x := range l.demand {
			free[j] -= x
		}
		for n := l; n.parent != nil; n = n.parent {
			for j, x := range l.demand {
				n.u[j] += x
			}
			rekey(n)
		}
		out[l.name]++
	}
}

// oracleCounts is staticOracle in tree order.
func oracleCounts(s Spec) []int64 {
	m := staticOracle(s)
	var out []int64
	for _, l := range leafNodes(s) {
		out = append(out, m[l.Name])
	}
	return out
}

func resourceNames(s Spec) []string {
	names := make([]string, 0, len(s.Capacity))
	for n := range s.Capacity {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ---------------------------------------------------------------------------
// Hierarchical share guarantee: g_L is the product along the path of
// w_k over the summed weights of k's demanding siblings (k included).

type guaranteeNode struct {
	name    string
	path    string // role path for roles, framework ID for leaves
	leaf    bool
	g       float64
	taskDom float64 // largest dominant share of one task in the subtree
	demand  bool
}

func guarantees(s Spec, demanding func(leaf Node) bool) []guaranteeNode {
	var out []guaranteeNode
	var isDemanding func(n Node) bool
	isDemanding = func(n Node) bool {
		if len(n.Children) == 0 {
			return demanding(n)
		}
		for _, c := range n.Children {
			if isDemanding(c) {
				return true
			}
		}
		return false
	}
	weight := func(n Node) float64 {
		if n.Weight == 0 {
			return 1
		}
		return n.Weight
	}
	var walk func(n Node, path string, g float64) float64
	walk = func(n Node, path string, g float64) float64 {
		i := len(out)
		out = append(out, guaranteeNode{name: n.Name, path: path, leaf: len(n.Children) == 0, g: g, demand: isDemanding(n)})
		if len(n.Children) == 0 {
			out[i].path = n.Name
			for rn, x := range n.Demand {
				out[i].taskDom = max(out[i].taskDom, float64(x)/float64(s.Capacity[rn]))
			}
			return out[i].taskDom
		}
		sum := 0.0
		for _, c := range n.Children {
			if isDemanding(c) {
				sum += weight(c)
			}
		}
		td := 0.0
		for _, c := range n.Children {
			gc := 0.0
			if isDemanding(c) {
				gc = g * weight(c) / sum
			}
			cp := c.Name
			if path != "" {
				cp = path + "/" + c.Name
			}
			td = max(td, walk(c, cp, gc))
		}
		out[i].taskDom = td
		return td
	}
	for _, c := range s.Root.Children {
		sum := 0.0
		for _, d := range s.Root.Children {
			if isDemanding(d) {
				sum += weight(d)
			}
		}
		g := 0.0
		if isDemanding(c) {
			g = weight(c) / sum
		}
		walk(c, c.Name, g)
	}
	return out
}

// guaranteeViolations checks P4 on r: every demanding node's dominant share
// of its plain-sum allocation must be at least g_L minus one task. With
// siblingTask unset "one task" is the node's own largest task (its dominant
// share); with it set, the largest task among the node and its siblings'
// subtrees, the granularity by which the scale-down rule can misjudge a
// sibling group (a group's rescaled share lags its plain sum by up to one
// task of a child that is ahead). It returns one message per violation.
func guaranteeViolations(s Spec, r *Run, siblingTask bool) []string {
	out, _ := guaranteeShortfall(s, r, siblingTask)
	return out
}

// guaranteeShortfall is guaranteeViolations that also returns the largest
// shortfall below a guarantee in units of the node's tolerance (0 when
// every node reaches its guarantee; above 1 exactly when there are
// violations).
func guaranteeShortfall(s Spec, r *Run, siblingTask bool) ([]string, float64) {
	byPath := map[string]offers.NodeShare{}
	for _, ns := range r.Alloc.Shares() {
		byPath[ns.Path] = ns
	}
	gs := guarantees(s, func(Node) bool { return true })
	parentOf := map[string]string{}
	for _, g := range gs {
		if i := strings.LastIndexByte(g.path, '/'); i >= 0 {
			parentOf[g.path] = g.path[:i]
		}
	}
	// Leaves' paths are their names; recover their parents from the tree.
	var walk func(n Node, path string)
	walk = func(n Node, path string) {
		for _, c := range n.Children {
			cp := c.Name
			if path != "" {
				cp = path + "/" + c.Name
			}
			if len(c.Children) == 0 {
				parentOf[c.Name] = path
			}
			walk(c, cp)
		}
	}
	walk(s.Root, "")
	familyTask := map[string]float64{} // parent path -> largest task under it
	for _, g := range gs {
		p := parentOf[g.path]
		familyTask[p] = max(familyTask[p], g.taskDom)
	}
	var out []string
	worst := 0.0
	for _, g := range gs {
		if !g.demand {
			continue
		}
		ns, ok := byPath[g.path]
		if !ok {
			out = append(out, fmt.Sprintf("no share reported for %s", g.path))
			continue
		}
		dom := 0.0
		for _, v := range ns.Shares {
			dom = max(dom, v)
		}
		tol := g.taskDom
		if siblingTask {
			tol = familyTask[parentOf[g.path]]
		}
		if tol > 0 {
			worst = max(worst, (g.g-dom)/tol)
		}
		if dom < g.g-tol-1e-9 {
			out = append(out, fmt.Sprintf("node %s dominant share %.4f < guarantee %.4f - one task %.4f (counts %s)",
				g.path, dom, g.g, tol, r.Counts()))
		}
	}
	return out, worst
}

// depth is the number of levels below the root.
func depth(n Node) int {
	d := 0
	for _, c := range n.Children {
		d = max(d, 1+depth(c))
	}
	return d
}

// ---------------------------------------------------------------------------
// Random trees.

type genOpts struct {
	unit           bool // demand components in {0,1} instead of {0..3}
	equalWeights   bool
	minCap, maxCap int64
	maxDepth       int // 1..3
	agents         int
}

// randomSpec draws a tree: depth 1..maxDepth, fan-out 2-3, 2-3 resources,
// demand components in {0..3} (or {0,1}) with one positive at least,
// weights in {1,2,3}, capacities in [minCap, maxCap].
func randomSpec(rng *rand.Rand, o genOpts) Spec {
	m := 2 + rng.IntN(2)
	names := []string{"cpus", "gpus", "mem"}[:m]
	capacity := res{}
	for _, n := range names {
		capacity[n] = o.minCap + rng.Int64N(o.maxCap-o.minCap+1)
	}
	depth := 1 + rng.IntN(max(1, o.maxDepth))
	hi := 4
	if o.unit {
		hi = 2
	}
	weight := func() float64 {
		if o.equalWeights {
			return 1
		}
		return float64(1 + rng.IntN(3))
	}
	var gen func(name string, level int) []Node
	gen = func(name string, level int) []Node {
		fan := 2 + rng.IntN(2)
		var out []Node
		for i := 1; i <= fan; i++ {
			cname := fmt.Sprintf("%s%d", name, i)
			if level < depth && (i == 1 || rng.IntN(2) == 0) {
				out = append(out, grp(cname, weight(), gen(cname+".", level+1)...))
				continue
			}
			d := res{}
			for len(d) == 0 {
				for _, rn := range names {
					if x := int64(rng.IntN(hi)); x > 0 {
						d[rn] = x
					}
				}
			}
			out = append(out, lfw(cname, weight(), d))
		}
		return out
	}
	s := tree(capacity, gen("n", 1)...)
	s.Agents = o.agents
	return s
}

func isUnit(s Spec) bool {
	for _, l := range leafNodes(s) {
		for _, x := range l.Demand {
			if x > 1 {
				return false
			}
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Invariants: capacity and Pareto efficiency (P5), checked against the
// spec's own numbers, independently of the allocator's bookkeeping.

// agentTotals splits the capacity as Spec.Agents does.
func agentTotals(s Spec) map[string]res {
	k := int64(max(1, s.Agents))
	out := map[string]res{}
	for i := int64(0); i < k; i++ {
		tot := res{}
		for n, v := range s.Capacity {
			part := v / k
			if i < v%k {
				part++
			}
			tot[n] = part
		}
		out["agent-"+strconv.FormatInt(i, 10)] = tot
	}
	return out
}

// agentFree returns every agent's free resources, from the spec totals minus
// the demands of the tasks the run holds there.
func agentFree(s Spec, r *Run) map[string]res {
	demand := map[string]res{}
	for _, l := range leafNodes(s) {
		demand[l.Name] = l.Demand
	}
	free := agentTotals(s)
	for _, rt := range r.running {
		f, ok := free[string(rt.agent)]
		if !ok {
			free[string(rt.agent)] = res{}
			f = free[string(rt.agent)]
		}
		for n, x := range demand[rt.leaf] {
			f[n] -= x
		}
	}
	return free
}

func fitsIn(d, free res) bool {
	for n, x := range d {
		if x > free[n] {
			return false
		}
	}
	return true
}

// checkInvariants asserts, after a fill: no agent over capacity (by the
// tasks it runs and by the allocator's own tree shares), no outstanding
// offer, and P5: no leaf with pending tasks has a task that fits any agent's
// free resources. launched counts every task a leaf ever launched (for
// leaves with a bounded number of tasks); nil means all unlimited.
func checkInvariants(t testing.TB, label string, s Spec, r *Run, launched map[string]int64) bool {
	t.Helper()
	ok := true
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: "+format, append([]any{label}, args...)...)
		ok = false
	}
	if out := r.Alloc.Outstanding(); len(out) != 0 {
		fail("%d offers outstanding after Fill", len(out))
	}
	free := agentFree(s, r)
	totals := agentTotals(s)
	for id, f := range free {
		if _, known := totals[id]; !known {
			fail("task on unknown agent %s", id)
		}
		for n, x := range f {
			if x < 0 {
				fail("agent %s over capacity on %s by %d", id, n, -x)
			}
		}
	}
	for _, ns := range r.Alloc.Shares() {
		if ns.Path == "" {
			for n, x := range ns.Allocation.Scalars {
				if x > s.Capacity[n] {
					fail("root allocation %s=%d exceeds capacity %d", n, x, s.Capacity[n])
				}
			}
		}
		for n, v := range ns.Shares {
			if v > 1+1e-12 {
				fail("node %q share of %s is %v > 1", ns.Path, n, v)
			}
		}
	}
	for _, l := range leafNodes(s) {
		if got := r.Tasks(l.Name); got < 0 {
			fail("leaf %s runs %d tasks", l.Name, got)
		}
		if l.Tasks != offers.Unlimited {
			n := r.Tasks(l.Name)
			if launched != nil {
				n = launched[l.Name]
			}
			if n > l.Tasks {
				fail("leaf %s launched %d tasks of %d", l.Name, n, l.Tasks)
			}
			if n >= l.Tasks {
				continue
			}
		}
		for id, f := range free {
			if fitsIn(l.Demand, f) {
				fail("P5: leaf %s has pending tasks and %v fits agent %s's free %v (counts %s)",
					l.Name, l.Demand, id, f, r.Counts())
			}
		}
	}
	return ok
}

// churnChecked completes n random running tasks (seeded), refilling and
// checking the invariants after each; it returns the launches per leaf.
func churnChecked(t testing.TB, label string, s Spec, r *Run, n int, seed uint64) map[string]int64 {
	t.Helper()
	launched := map[string]int64{}
	for _, l := range r.Leaves() {
		launched[l] = r.Tasks(l)
	}
	rng := newRNG(seed)
	for i := 0; i < n; i++ {
		if completeWhere(t, r, rng, nil) == "" {
			break
		}
		before := map[string]int64{}
		for _, l := range r.Leaves() {
			before[l] = r.Tasks(l)
		}
		if _, err := r.Fill(); err != nil {
			t.Fatalf("%s: Fill: %v", label, err)
		}
		for _, l := range r.Leaves() {
			launched[l] += r.Tasks(l) - before[l]
		}
		if !checkInvariants(t, fmt.Sprintf("%s after completion %d", label, i+1), s, r, launched) {
			return launched
		}
	}
	return launched
}

// dominant returns a leaf's dominant share.
func dominant(r *Run, leaf string) float64 {
	d := 0.0
	for _, v := range r.Shares(leaf) {
		d = math.Max(d, v)
	}
	return d
}

// ---------------------------------------------------------------------------
// Dynamic H-DRF oracle: the rescaling rules, literal (the H-DRF paper's
// Algorithms 2-4) and scale-down (docs/hdrf.md), written straight from
// their definitions, one whole task at a time on a single pool, with the allocator's tie rule (relative
// tolerance 1e-9, then tree order). Used in lock step with the allocator to
// tell implementation bugs from properties of the rules themselves.

type rnode struct {
	name     string
	w        float64
	children []*rnode
	leaf     bool
	demand   []float64
	u, v     []float64
	s        float64
	nb       bool
}

type ruleOracle struct {
	literal bool
	capv    []float64
	free    []float64
	root    *rnode
	leaves  []*rnode
	byName  map[string]*rnode
	tasks   map[string]int64
}

// newRuleOracle loads s (every leaf must have unlimited tasks).
func newRuleOracle(s Spec, literal bool) *ruleOracle {
	names := resourceNames(s)
	o := &ruleOracle{literal: literal, byName: map[string]*rnode{}, tasks: map[string]int64{}}
	for _, n := range names {
		o.capv = append(o.capv, float64(s.Capacity[n]))
	}
	var build func(n Node) *rnode
	build = func(n Node) *rnode {
		w := n.Weight
		if w == 0 {
			w = 1
		}
		x := &rnode{name: n.Name, w: w, u: make([]float64, len(names))}
		if len(n.Children) == 0 {
			x.leaf = true
			for _, rn := range names {
				x.demand = append(x.demand, float64(n.Demand[rn]))
			}
			o.leaves = append(o.leaves, x)
			o.byName[n.Name] = x
			return x
		}
		for _, c := range n.Children {
			x.children = append(x.children, build(c))
		}
		return x
	}
	o.root = build(s.Root)
	o.free = slices.Clone(o.capv)
	return o
}

// inY: j is available when the free amount reaches the smallest positive
// per-task demand for j among pending leaves (1 when none).
func (o *ruleOracle) inY(j int) bool {
	thr := 0.0
	for _, l := range o.leaves {
		if x := l.demand[j]; x > 0 && (thr == 0 || x < thr) {
			thr = x
		}
	}
	if thr == 0 {
		thr = 1
	}
	return o.free[j] >= thr
}

func (o *ruleOracle) share(v []float64, overY bool) float64 {
	m := 0.0
	for j, x := range v {
		if x == 0 || (overY && !o.inY(j)) {
			continue
		}
		m = max(m, x/o.capv[j])
	}
	return m
}

// update is UpdateS: post-order (V, s, nb).
func (o *ruleOracle) update(n *rnode) {
	if n.leaf {
		n.v = n.u
		n.s = o.share(n.v, o.literal)
		n.nb = true // unlimited tasks: pending
		for j, x := range n.demand {
			if x > 0 && !o.inY(j) {
				n.nb = false
			}
		}
		return
	}
	t := math.Inf(1)
	for _, c := range n.children {
		o.update(c)
		if c.nb {
			t = min(t, c.s/c.w)
		}
	}
	n.nb = !math.IsInf(t, 1)
	n.v = make([]float64, len(o.capv))
	for _, c := range n.children {
		f := 1.0
		if n.nb && c.s > 0 && (!o.literal || c.nb) {
			f = math.Min(1, t*c.w/c.s)
		}
		for j, x := range c.v {
			n.v[j] += f * x
		}
	}
	n.s = o.share(n.v, o.literal)
}

func (o *ruleOracle) fits(n *rnode) bool {
	if n.leaf {
		for j, x := range n.demand {
			if x > o.free[j] {
				return false
			}
		}
		return true
	}
	for _, c := range n.children {
		if o.fits(c) {
			return true
		}
	}
	return false
}

// fill gives one task at a time to the leaf Alloc's walk reaches.
func (o *ruleOracle) fill() {
	for {
		o.update(o.root)
		n := o.root
		for n != nil && !n.leaf {
			var best *rnode
			for _, c := range n.children {
				if !o.fits(c) {
					continue
				}
				if best == nil {
					best = c
					continue
				}
				kc, kb := c.s/c.w, best.s/best.w
				if math.Abs(kc-kb) > 1e-9*math.Max(kc, kb) && kc < kb {
					best = c
				}
			}
			n = best
		}
		if n == nil {
			return
		}
		for j, x := range n.demand {
			o.free[j] -= x
			n.u[j] += x
		}
		o.tasks[n.name]++
	}
}

func (o *ruleOracle) complete(leaf string) {
	l := o.byName[leaf]
	for j, x := range l.demand {
		o.free[j] += x
		l.u[j] -= x
	}
	o.tasks[leaf]--
}

func (o *ruleOracle) counts() []int64 {
	out := make([]int64, 0, len(o.leaves))
	for _, l := range o.leaves {
		out = append(out, o.tasks[l.name])
	}
	return out
}

// withCapacity returns s on another capacity.
func withCapacity(s Spec, capacity map[string]int64) Spec {
	s.Capacity = map[string]int64{}
	for k, v := range capacity {
		s.Capacity[k] = v
	}
	return s
}
