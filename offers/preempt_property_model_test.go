package offers

// The property tests' own model of fair shares, protection and kinship
// (preempt_property_test.go), computed without the planner's helpers.

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// policyOf is n's effective policy.
func (s *psim) policyOf(n *psNode) PreemptionPolicy {
	for m := n; m != nil; m = m.parent {
		if m.policy != "" {
			return m.policy
		}
	}
	return s.cfg.Policy
}

func (s *psim) dom(x ppr) float64 {
	d := 0.0
	for j := range x {
		if x[j] > 0 {
			d = max(d, float64(x[j])/float64(s.capacity[j]))
		}
	}
	return d
}

func (s *psim) free(ag *psAgent) ppr {
	if s.freeMemo == nil {
		s.freeMemo = map[*psAgent]ppr{}
		for _, a := range s.agents {
			s.freeMemo[a] = a.total
		}
		for _, t := range s.tasks {
			s.freeMemo[t.ag] = s.freeMemo[t.ag].minus(t.res)
		}
	}
	return s.freeMemo[ag]
}

// held is what the tasks under n hold, all of them.
func (s *psim) held(n *psNode) ppr {
	if s.heldMemo == nil {
		s.heldMemo = map[*psNode]ppr{}
		for _, t := range s.tasks {
			for x := t.fw.leaf; x != nil; x = x.parent {
				s.heldMemo[x] = s.heldMemo[x].plus(t.res)
			}
		}
	}
	return s.heldMemo[n]
}

// changed forgets what the memos hold: the tasks changed.
func (s *psim) changed() { s.fairMemo, s.sureMemo, s.freeMemo, s.heldMemo = nil, nil, nil, nil }

// sure is, per node, what its frameworks run for sure: non-revocable tasks
// not warned.
func (s *psim) sure() map[*psNode]ppr {
	if s.sureMemo != nil {
		return s.sureMemo
	}
	m := map[*psNode]ppr{}
	defer func() { s.sureMemo = m }()
	for _, t := range s.tasks {
		if t.revocable || t.warned {
			continue
		}
		for x := t.fw.leaf; x != nil; x = x.parent {
			m[x] = m[x].plus(t.res)
		}
	}
	return m
}

// fair is every node's fair share as the planner's comment defines it:
// static H-DRF by whole tasks over the cluster's capacity, each framework
// asking for the tasks it runs, its pending fair demand and its optional
// tasks; a role's share is the sum of its frameworks'. It is computed here
// from scratch, by a fill of the test's own.
func (s *psim) fair() map[*psNode]ppr {
	if s.fairMemo != nil {
		return s.fairMemo
	}
	asks := s.fairAsks()
	var build func(n *psNode, parent *psFill) *psFill
	build = func(n *psNode, parent *psFill) *psFill {
		x := &psFill{n: n, parent: parent}
		if n.fw != nil {
			x.asks = slices.Clone(asks[n.fw])
		}
		for _, k := range n.kids {
			x.kids = append(x.kids, build(k, x))
		}
		return x
	}
	root := build(s.root, nil)
	free := s.capacity
	key := func(x *psFill) float64 { return s.dom(x.u) / x.n.weight }
	less := func(x, y *psFill) bool {
		kx, ky := key(x), key(y)
		if d := math.Abs(kx - ky); d > 1e-9*max(kx, ky) {
			return kx < ky
		}
		return x.n.seq < y.n.seq
	}
	var descend func(x *psFill) (*psFill, int)
	descend = func(x *psFill) (*psFill, int) {
		if x.done {
			return nil, -1
		}
		if x.n.fw != nil {
			for i, a := range x.asks {
				if a.left > 0 && free.holds(a.res) {
					return x, i
				}
			}
			x.done = true
			return nil, -1
		}
		for {
			var best *psFill
			for _, k := range x.kids {
				if !k.done && (best == nil || less(k, best)) {
					best = k
				}
			}
			if best == nil {
				x.done = true
				return nil, -1
			}
			if leaf, i := descend(best); leaf != nil {
				return leaf, i
			}
		}
	}
	for {
		leaf, i := descend(root)
		if leaf == nil {
			break
		}
		r := leaf.asks[i].res
		leaf.asks[i].left--
		free = free.minus(r)
		for x := leaf; x != nil; x = x.parent {
			x.u = x.u.plus(r)
		}
	}
	m := map[*psNode]ppr{}
	var collect func(x *psFill)
	collect = func(x *psFill) {
		m[x.n] = x.u
		for _, k := range x.kids {
			collect(k)
		}
	}
	collect(root)
	s.fairMemo = m
	return m
}

// psAsk is the tasks of one size that a framework still asks for in the
// fair fill (psim.fair).
type psAsk struct {
	res  ppr
	left int64
}

// psFill is a node of the fair fill.
type psFill struct {
	n      *psNode
	kids   []*psFill
	parent *psFill
	u      ppr
	asks   []psAsk
	done   bool
}

// fairAsks is what each framework asks for in the fair fill: its pending
// and optional tasks, then the tasks it runs by their resources (in the
// order of the planner's keys for tasks launched without a shape);
// identical resources may come in any order.
func (s *psim) fairAsks() map[*psFw][]psAsk {
	asks := map[*psFw][]psAsk{}
	for _, f := range s.fws {
		if n := f.pending + f.optional; n > 0 {
			asks[f] = append(asks[f], psAsk{f.shape, n})
		}
	}
	running := map[*psFw]map[ppr]int64{}
	for _, t := range s.tasks {
		if running[t.fw] == nil {
			running[t.fw] = map[ppr]int64{}
		}
		running[t.fw][t.res]++
	}
	for f, byRes := range running {
		keys := slices.Collect(maps.Keys(byRes))
		slices.SortFunc(keys, func(x, y ppr) int { return strings.Compare(x.resources().String(), y.resources().String()) })
		for _, r := range keys {
			asks[f] = append(asks[f], psAsk{r, byRes[r]})
		}
	}
	return asks
}

// needNode is the node a victim's For names.
func (s *psim) needNode(forName string) *psNode {
	if p, ok := strings.CutPrefix(forName, "role "); ok {
		if n := s.roles[p]; n != nil {
			return n
		}
	}
	if id, ok := strings.CutPrefix(forName, "framework "); ok {
		if f := s.fwByID[protocol.FrameworkID(id)]; f != nil {
			return f.leaf
		}
	}
	s.t.Fatalf("step %d: need %q names nothing", s.step, forName)
	return nil
}

// needFws are the frameworks a need serves that have pending fair demand.
func (s *psim) needFws(n *psNode) []*psFw {
	var out []*psFw
	for _, f := range s.fws {
		if f.pending > 0 && f.leaf.within(n) {
			out = append(out, f)
		}
	}
	return out
}

// eligibleFor reports whether the planner's rules let t be taken for the
// need at nn: never non-preemptible, never a task of the need's own
// subtree (or of the framework in need), revocable only when the need is a
// fair share under policy guarantees, and for a fair share never a task of
// a role short of its guarantee; for a guarantee never a task below a role
// above it short of its own guarantee (what it frees goes back to that
// role first).
func (s *psim) eligibleFor(t *psTask, nn *psNode) bool {
	if t.np || t.fw.leaf.within(nn) {
		return false
	}
	if nn.fw != nil && s.policyOf(nn) != PreemptFair && !t.revocable {
		return false
	}
	if nn.fw != nil {
		for g := t.fw.leaf.parent; g != nil; g = g.parent {
			if s.shortOf(g) {
				return false
			}
		}
	}
	if nn.fw == nil {
		for g := nn.parent; g != nil; g = g.parent {
			if s.shortOf(g) && t.fw.leaf.within(g) {
				return false
			}
		}
	}
	return true
}

// shortOf reports whether g holds less than its guarantee in a resource
// it names.
func (s *psim) shortOf(g *psNode) bool {
	h := s.held(g)
	for j := range 2 {
		if g.named[j] && h[j] < g.guar[j] {
			return true
		}
	}
	return false
}

// between lists the nodes between t's framework (included) and the need:
// its ancestors that do not contain the need.
func between(t *psTask, nn *psNode) []*psNode {
	var out []*psNode
	for x := t.fw.leaf; x != nil && !nn.within(x); x = x.parent {
		out = append(out, x)
	}
	return out
}
