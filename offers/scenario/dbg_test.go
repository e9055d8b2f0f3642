package scenario

import (
	"math"
	"fmt"
	"testing"

	"github.com/allot-project/allot/offers"
)

func dumpSpec(s Spec) string {
	out := fmt.Sprintf("cap %v agents %d\n", s.Capacity, s.Agents)
	var walk func(n Node, ind string)
	walk = func(n Node, ind string) {
		out += fmt.Sprintf("%s%s w=%v d=%v\n", ind, n.Name, n.Weight, n.Demand)
		for _, c := range n.Children {
			walk(c, ind+"  ")
		}
	}
	for _, c := range s.Root.Children {
		walk(c, "")
	}
	return out
}

func TestDbg14(t *testing.T) {
	for _, seed := range []uint64{2014, 2005} {
		s := mixedTree(seed)
		fmt.Print(dumpSpec(s))
		fmt.Println("oracle", fmtCounts(oracleCounts(s)))
		for _, p := range offers.Policies() {
			r := mustRun(t, s, p)
			fmt.Println(p, fmtCounts(counts(r)))
		}
	}
}

type dnode struct {
	name     string
	w        float64
	children []*dnode
	parent   *dnode
	demand   []float64
	u        []float64
	v        []float64
	s        float64
	nb       bool
	leaf     bool
	pending  bool
}

type dyn struct {
	R      []float64
	free   []float64
	leaves []*dnode
	root   *dnode
	cnt    map[string]int64
	byName map[string]*dnode
}

func newDyn(s Spec) *dyn {
	names := resourceNames(s)
	d := &dyn{cnt: map[string]int64{}, byName: map[string]*dnode{}}
	d.R = make([]float64, len(names))
	for j, n := range names {
		d.R[j] = float64(s.Capacity[n])
	}
	var build func(n Node, p *dnode) *dnode
	build = func(n Node, p *dnode) *dnode {
		w := n.Weight
		if w == 0 {
			w = 1
		}
		x := &dnode{name: n.Name, w: w, parent: p, u: make([]float64, len(names))}
		if len(n.Children) == 0 {
			x.leaf = true
			x.demand = make([]float64, len(names))
			for j, rn := range names {
				x.demand[j] = float64(n.Demand[rn])
			}
			x.pending = n.Tasks > 0
			d.leaves = append(d.leaves, x)
			d.byName[n.Name] = x
			return x
		}
		for _, c := range n.Children {
			x.children = append(x.children, build(c, x))
		}
		return x
	}
	d.root = build(s.Root, nil)
	d.free = append([]float64(nil), d.R...)
	return d
}

func (d *dyn) complete(leaf string) {
	l := d.byName[leaf]
	for j, x := range l.demand {
		d.free[j] += x
		l.u[j] -= x
	}
	d.cnt[leaf]--
}

func (d *dyn) counts() []int64 {
	var out []int64
	for _, l := range d.leaves {
		out = append(out, d.cnt[l.name])
	}
	return out
}

func (d *dyn) fill(trace bool) {
	R, free, leaves := d.R, d.free, d.leaves
	inY := func(j int) bool {
		thr := 0.0
		for _, l := range leaves {
			if l.pending && l.demand[j] > 0 && (thr == 0 || l.demand[j] < thr) {
				thr = l.demand[j]
			}
		}
		if thr == 0 {
			thr = 1
		}
		return free[j] >= thr
	}
	share := func(v []float64) float64 {
		m := 0.0
		for j, x := range v {
			if x > 0 && x/R[j] > m {
				m = x / R[j]
			}
		}
		return m
	}
	var update func(n *dnode)
	update = func(n *dnode) {
		if n.leaf {
			n.v = n.u
			n.s = share(n.v)
			n.nb = n.pending
			for j, x := range n.demand {
				if x > 0 && !inY(j) {
					n.nb = false
				}
			}
			return
		}
		for _, c := range n.children {
			update(c)
		}
		t := math.Inf(1)
		for _, c := range n.children {
			if c.nb && c.s/c.w < t {
				t = c.s / c.w
			}
		}
		n.nb = !math.IsInf(t, 1)
		n.v = make([]float64, len(R))
		for _, c := range n.children {
			f := 1.0
			if n.nb && c.s > 0 {
				f = math.Min(1, t*c.w/c.s)
			}
			for j, x := range c.v {
				n.v[j] += f * x
			}
		}
		n.s = share(n.v)
	}
	fits := func(l *dnode) bool {
		for j, x := range l.demand {
			if x > free[j] {
				return false
			}
		}
		return true
	}
	var canFit func(n *dnode) bool
	canFit = func(n *dnode) bool {
		if n.leaf {
			return n.pending && fits(n)
		}
		for _, c := range n.children {
			if canFit(c) {
				return true
			}
		}
		return false
	}
	for {
		update(d.root)
		n := d.root
		for n != nil && !n.leaf {
			var best *dnode
			for _, c := range n.children {
				if !canFit(c) {
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
			break
		}
		if trace {
			fmt.Printf("give %s\n", n.name)
		}
		for j, x := range n.demand {
			free[j] -= x
			n.u[j] += x
		}
		d.cnt[n.name]++
	}
}

func dynOracle(s Spec, literal bool, trace bool) []int64 {
	d := newDyn(s)
	d.fill(trace)
	return d.counts()
}

func TestDbgP3(t *testing.T) {
	for _, seed := range []uint64{1, 4} {
		s := unitTree(seed)
		fmt.Print(dumpSpec(s))
		fmt.Println("oracle ", fmtCounts(oracleCounts(s)))
		fmt.Println("dynorc ", fmtCounts(dynOracle(s, false, false)))
		r := mustRun(t, s, offers.PolicyDynamic)
		fmt.Println("dynamic", fmtCounts(counts(r)))
	}
	s := mixedTree(2014)
	fmt.Println("2014 dynorc ", fmtCounts(dynOracle(s, false, false)))
}

func TestDbgSweep(t *testing.T) {
	for _, o := range []genOpts{
		{unit: true, minCap: 60, maxCap: 60, maxDepth: 2, equalWeights: true},
		{unit: true, minCap: 60, maxCap: 90, maxDepth: 2},
		{unit: true, minCap: 60, maxCap: 90, maxDepth: 3, equalWeights: true},
		{unit: true, minCap: 60, maxCap: 90, maxDepth: 3},
		{unit: true, minCap: 180, maxCap: 240, maxDepth: 3},
	} {
		hist := map[int64]int{}
		histFill := map[int64]int{}
		for seed := uint64(0); seed < 100; seed++ {
			s := randomSpec(newRNG(seed), o)
			w := oracleCounts(s)
			r := mustRun(t, s, offers.PolicyDynamic)
			histFill[maxDiff(counts(r), w)]++
			r.Churn(500, seed)
			hist[maxDiff(counts(r), w)]++
		}
		fmt.Printf("%+v fill %v churn %v\n", o, histFill, hist)
	}
}

func TestDbgLockstep(t *testing.T) {
	o := genOpts{unit: true, minCap: 180, maxCap: 240, maxDepth: 3}
	for seed := uint64(0); seed < 100; seed++ {
		s := randomSpec(newRNG(seed), o)
		w := oracleCounts(s)
		r := mustRun(t, s, offers.PolicyDynamic)
		d := newDyn(s)
		d.fill(false)
		if maxDiff(d.counts(), counts(r)) != 0 {
			t.Fatalf("seed %d fill: alloc %s oracle %s", seed, fmtCounts(counts(r)), fmtCounts(d.counts()))
		}
		rng := newRNG(seed)
		for i := 0; i < 500; i++ {
			l := completeWhere(t, r, rng, nil)
			r.Fill()
			d.complete(l)
			d.fill(false)
			if maxDiff(d.counts(), counts(r)) != 0 {
				t.Fatalf("seed %d step %d (%s): alloc %s oracle %s", seed, i, l, fmtCounts(counts(r)), fmtCounts(d.counts()))
			}
		}
		if maxDiff(counts(r), w) > 2 {
			fmt.Printf("seed %d: static %s dynamic %s diff %d\n", seed, fmtCounts(w), fmtCounts(counts(r)), maxDiff(counts(r), w))
		}
	}
}

func TestDbgMinimal(t *testing.T) {
	best := 1000
	for seed := uint64(0); seed < 3000; seed++ {
		o := genOpts{unit: true, minCap: 30, maxCap: 60, maxDepth: 3, equalWeights: seed%2 == 0}
		s := randomSpec(newRNG(seed), o)
		n := len(leafNodes(s))
		if n >= best {
			continue
		}
		w := oracleCounts(s)
		r := mustRun(t, s, offers.PolicyDynamic)
		fd := maxDiff(counts(r), w)
		r.Churn(1000, seed)
		if d := maxDiff(counts(r), w); d > 2 {
			best = n
			fmt.Printf("seed %d leaves %d filldiff %d: static %s dynamic %s diff %d\n%s", seed, n, fd, fmtCounts(w), fmtCounts(counts(r)), d, dumpSpec(s))
		}
	}
}
