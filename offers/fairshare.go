package offers

import (
	"maps"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// fairShares caches every declared framework's H-DRF fair share.
type fairShares struct {
	stale  bool
	shares map[protocol.FrameworkID]protocol.Resources
	// all holds every role's and framework's fair share as preemption
	// sees it (preempt_fair.go), recomputed when allStale.
	allStale bool
	all      map[*node]vec
}

// FairShares returns each declared framework's fair share A_k: what
// static H-DRF (the paper's Algorithm 1, by whole tasks) gives it of the
// whole cluster's capacity when every framework asks for all the work it
// described (its fair demand, its optional tasks and the tasks it runs; a
// suppressed framework only the tasks it runs, since it wants no more). This is the share an altruistic planner must finish within, so it
// counts the optional work too: a job that defers work does not shrink its
// own share by doing so. Frameworks with no scalar share get none. The
// result is cached until demand, capacity or the tree change, and is the
// caller's to keep.
func (a *Allocator) FairShares() map[protocol.FrameworkID]protocol.Resources {
	if a.fair.stale || a.fair.shares == nil {
		a.fair.stale = false
		a.fair.shares = a.computeFairShares()
	}
	out := make(map[protocol.FrameworkID]protocol.Resources, len(a.fair.shares))
	for id, r := range a.fair.shares {
		out[id] = r.Clone()
	}
	return out
}

func (a *Allocator) computeFairShares() map[protocol.FrameworkID]protocol.Resources {
	byShape := map[*framework]map[string]vec{}
	targets := staticFill(a.tree.root, a.capacity, func(f *framework) []fillShape {
		if !f.declared {
			return nil
		}
		res := map[string]vec{}
		var out []fillShape
		add := func(key string, r vec, count int64) {
			if r.isZero() {
				return
			}
			for i := range out {
				if out[i].key == key {
					out[i].left = addCount(out[i].left, count)
					return
				}
			}
			res[key] = r
			out = append(out, fillShape{key: key, res: r, left: count})
		}
		if !f.suppressed {
			for _, s := range f.shapes {
				add(s.key, s.res, s.count)
			}
			for _, s := range f.optional {
				add(s.key, s.res, s.count)
			}
		}
		// Sorted, so the fill's order within the leaf does not depend on
		// map iteration.
		for _, key := range slices.Sorted(maps.Keys(f.launched)) {
			add(key, f.launchRes[key], f.launched[key])
		}
		byShape[f] = res
		return out
	})
	out := make(map[protocol.FrameworkID]protocol.Resources, len(targets))
	for f, counts := range targets {
		var sum vec
		for key, n := range counts {
			res := byShape[f][key]
			for range n {
				sum = sum.add(res)
			}
		}
		if !sum.isZero() {
			out[f.id] = a.reg.toResources(sum)
		}
	}
	return out
}
