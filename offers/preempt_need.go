package offers

import (
	"cmp"
	"slices"
	"time"
)

// need is a Need with the plan's bookkeeping.
type need struct {
	*Need
	key string
	// node is the guaranteed role, or the framework's leaf.
	node *node
	// guarantee: a role short of its guarantee; otherwise a fair share.
	guarantee bool
	// fws are the demanding frameworks the need serves.
	fws []*framework
	// fairShare is the framework's fair share (fair-share needs).
	fairShare vec
	// revocableOnly needs take back revocable tasks only.
	revocableOnly bool
	// ancestors maps node and each of its ancestors to its depth; maxTier
	// is the depth of the nearest common ancestor the need may take from:
	// node's parent, or for a guarantee's need the parent of the outermost
	// role above it short of its own guarantee.
	ancestors map[*node]int
	maxTier   int
	rank      float64
	// stuck are the shapes this plan found no room for.
	stuck []*shape
	// tierOf is fwTier by framework index; byTier the frameworks with
	// tasks that may be taken, by tier.
	tierOf []int16
	byTier [][]*framework
}

// findNeeds lists the needs in the order they are served (guarantees
// first, the shortest first; then fair shares, the furthest below first),
// and remembers when each began.
func (p *planner) findNeeds() []*need {
	a := p.a
	var demanding []*framework
	for _, f := range a.fwByIdx {
		if f != nil && f.demanding() {
			demanding = append(demanding, f)
		}
	}
	seen := map[string]bool{}
	var guar, fair []*need
	for _, g := range a.guaranteedRoles {
		pol := a.policyOf(g)
		if pol == PreemptOff {
			continue
		}
		var fws []*framework
		for _, f := range demanding {
			if f.leaf.under(g) {
				fws = append(fws, f)
			}
		}
		short, rank := guaranteeShort(g, fws)
		if short == nil {
			continue
		}
		n := p.newNeed("role "+g.path, g, pol, fws, short, seen)
		n.guarantee, n.rank = true, rank
		// What a task frees under a role above g that is short of its own
		// guarantee goes back to that role's frameworks first (the
		// guarantee phase of a round), which leaves the role as short as
		// before and g perhaps no better off: take only from outside the
		// outermost such role.
		for x := g.parent; x != nil; x = x.parent {
			if shortOfGuarantee(x) {
				n.maxTier = min(n.maxTier, depth(x)-1)
			}
		}
		guar = append(guar, n)
	}
	if len(demanding) > 0 {
		p.fair = a.preemptFairShares()
	}
	for _, f := range demanding {
		pol := a.policyOf(f.leaf)
		if pol == PreemptOff {
			continue
		}
		fs := p.fair[f.leaf]
		if !belowFair(a, f.alloc, fs, f.shapes) {
			continue
		}
		n := p.newNeed("framework "+string(f.id), f.leaf, pol, []*framework{f}, shortfall(fs, f.alloc), seen)
		n.Framework, n.Role = f.id, f.leaf.parent.path
		n.fairShare = fs
		n.revocableOnly = pol != PreemptFair
		n.rank = a.dom(f.alloc) / max(a.dom(fs), shareEps)
		fair = append(fair, n)
	}
	for k := range a.preempt.since {
		if !seen[k] {
			delete(a.preempt.since, k)
		}
	}
	slices.SortStableFunc(guar, func(x, y *need) int { return cmp.Or(cmp.Compare(y.rank, x.rank), cmp.Compare(x.key, y.key)) })
	slices.SortStableFunc(fair, func(x, y *need) int { return cmp.Or(cmp.Compare(x.rank, y.rank), cmp.Compare(x.key, y.key)) })
	all := append(guar, fair...)
	for _, n := range all {
		p.out.Needs = append(p.out.Needs, *n.Need)
	}
	for i, n := range all {
		// Needs report what serving them found.
		n.Need = &p.out.Needs[i]
	}
	return all
}

func (p *planner) newNeed(name string, at *node, pol PreemptionPolicy, fws []*framework, short vec, seen map[string]bool) *need {
	a := p.a
	key := name
	seen[key] = true
	if a.preempt.since == nil {
		a.preempt.since = map[string]time.Time{}
	}
	since, ok := a.preempt.since[key]
	if !ok {
		since = p.now
		a.preempt.since[key] = since
	}
	n := &need{
		Need: &Need{For: name, Role: at.path, Policy: pol, Short: a.reg.toResources(short),
			Since: since, EligibleAt: since.Add(a.cfg.Preemption.Delay)},
		key: key, node: at, fws: fws,
		ancestors: map[*node]int{},
	}
	d := depth(at)
	for x := at; x != nil; x = x.parent {
		n.ancestors[x] = d
		d--
	}
	n.maxTier = depth(at) - 1
	return n
}

// guaranteeShort is what g lacks of its guarantee in the resources its
// demanding frameworks' pending tasks use, counting only the tasks a unit
// of which g is owed (short in every guaranteed resource the task uses, as
// the guarantee phase of a round judges), with how short it is at most (a
// fraction of the guarantee); nil when it lacks nothing they could use.
func guaranteeShort(g *node, fws []*framework) (vec, float64) {
	var short vec
	rank := 0.0
	for _, f := range fws {
		for _, s := range f.shapes {
			if s.pending() == 0 || !shortWith(g, nil, s.res) {
				continue
			}
			for j, ok := range g.guaranteed {
				if !ok || s.res.at(j) == 0 {
					continue
				}
				if d := g.guar[j] - g.held.at(j); d > 0 {
					short = short.grow(j + 1)
					short[j] = d
					rank = max(rank, float64(d)/float64(g.guar[j]))
				}
			}
		}
	}
	return short, rank
}

// belowFair reports whether one more pending task of some shape keeps
// held within the fair share fs (by dominant share).
func belowFair(a *Allocator, held, fs vec, shapes []*shape) bool {
	limit := a.dom(fs) + shareEps
	for _, s := range shapes {
		if s.pending() > 0 && !s.res.isZero() && a.dom(held.clone().add(s.res)) <= limit {
			return true
		}
	}
	return false
}

// next is the pending task shape the need takes next, with its framework,
// or nil when it is no longer short. What the plan already found room for,
// for any need, counts.
func (p *planner) next(n *need) (*framework, *shape) {
	var got vec
	if n.guarantee {
		for _, f := range n.fws {
			got = got.add(p.placedFw[f])
		}
	}
	for _, f := range n.fws {
		for _, s := range f.shapes {
			if s.res.isZero() || slices.Contains(n.stuck, s) {
				continue
			}
			if left := s.pending(); left != Unlimited && left-p.placedShape[s] <= 0 {
				continue
			}
			if n.guarantee {
				if shortWith(n.node, got, s.res) {
					return f, s
				}
				continue
			}
			if p.a.dom(f.alloc.clone().add(p.placedFw[f]).add(s.res)) <= p.a.dom(n.fairShare)+shareEps {
				return f, s
			}
		}
	}
	return nil, nil
}

// shortWith reports whether g, holding got more, is still short of its
// guarantee in a resource v uses (short, guarantee.go).
func shortWith(g *node, got, v vec) bool {
	uses := false
	for j, ok := range g.guaranteed {
		if !ok || v.at(j) == 0 {
			continue
		}
		if g.held.at(j)+got.at(j) >= g.guar[j] {
			return false
		}
		uses = true
	}
	return uses
}

// The plan's view of what a round admits (guarantee.go headroomAllows,
// quota.go withinLimits), as it will be once its victims are gone and the
// tasks it placed launched: dfree is what they free less what they take,
// cluster-wide; dheld the same for each role with a guarantee or a limit.

// gone records that t's resources will be freed.
func (p *planner) gone(t *planTask) {
	p.dfree = p.dfree.add(t.res)
	p.heldDelta(t.f, t.res, -1)
}

// launch records that one task of v will run for f.
func (p *planner) launch(f *framework, v vec) {
	p.dfree = p.dfree.sub(v)
	p.heldDelta(f, v, 1)
}

func (p *planner) heldDelta(f *framework, v vec, sign int64) {
	if len(p.a.guaranteedRoles) == 0 && p.a.limits == 0 {
		return
	}
	for x := f.leaf.parent; x != nil; x = x.parent {
		if x.guaranteed == nil && x.limited == nil {
			continue
		}
		if p.dheld == nil {
			p.dheld = map[*node]vec{}
		}
		d := p.dheld[x].grow(len(v))
		for j, y := range v {
			d[j] += sign * y
		}
		p.dheld[x] = d
	}
}

// heldBy is what role x will hold: now, plus the plan's placements under
// it, less its victims and the tasks in freed (indices into tasks) under
// it.
func (p *planner) heldBy(x *node, j int, freed []int) int64 {
	h := x.held.at(j) + p.dheld[x].at(j)
	for _, i := range freed {
		if t := &p.tasks[i]; t.f.leaf.under(x) {
			h -= t.res.at(j)
		}
	}
	return h
}

// required is what must be freed cluster-wide, beyond room on its agent,
// for a round to hand one task of v to f under the headroom of unmet
// guarantees: per resource v uses that an outermost guarantee names, v
// less what the task meets of its own outermost role's shortfall, less
// the headroom's slack (unallocated less unmet), given the plan so far.
// Entries of zero or less ask for nothing.
func (p *planner) required(f *framework, v vec) vec {
	a := p.a
	if len(a.outerGuaranteed) == 0 {
		return nil
	}
	var req vec
	for j, x := range v {
		if x == 0 {
			continue
		}
		if r, named := p.headroomNeeds(f, j, x, nil); named {
			req = req.grow(j + 1)
			req[j] = r
		}
	}
	return req
}

// headroomNeeds is how much of resource j must still be freed for a round
// to allocate x of it to f, once the tasks in freed are gone: x less what
// it meets of f's outermost guaranteed role's shortfall, less unallocated
// less unmet where that is positive (headroomAllows); and whether any
// outermost guarantee names j.
func (p *planner) headroomNeeds(f *framework, j int, x int64, freed []int) (int64, bool) {
	a := p.a
	var unmet, met int64
	named := false
	for _, g := range a.outerGuaranteed {
		if j >= len(g.guaranteed) || !g.guaranteed[j] {
			continue
		}
		named = true
		lack := max(0, g.guar[j]-p.heldBy(g, j, freed))
		unmet += lack
		if f.leaf.under(g) {
			met = min(x, lack)
		}
	}
	if !named {
		return 0, false
	}
	free := a.unallocated(j) + p.dfree.at(j)
	for _, i := range freed {
		free += p.tasks[i].res.at(j)
	}
	return x - met - max(0, free-unmet), true
}

// admits reports whether a round would hand one task of v to f once the
// tasks in freed are gone: the headroom of unmet guarantees allows it and
// every role above f stays within its limit.
func (p *planner) admits(f *framework, v vec, freed []int) bool {
	a := p.a
	if len(a.outerGuaranteed) > 0 {
		for j, x := range v {
			if x == 0 {
				continue
			}
			if r, named := p.headroomNeeds(f, j, x, freed); named && r > 0 {
				return false
			}
		}
	}
	if a.limits == 0 {
		return true
	}
	for x := f.leaf.parent; x != nil; x = x.parent {
		for j, ok := range x.limited {
			if ok && p.heldBy(x, j, freed)+v.at(j) > x.limit[j] {
				return false
			}
		}
	}
	return true
}
