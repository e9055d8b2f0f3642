package offers

import (
	"maps"
	"slices"
)

// preemptFairShares returns every role's and framework's fair share as
// preemption judges it: static H-DRF by whole tasks over the cluster's
// capacity, each framework asking for the tasks it runs, its pending fair
// demand and its optional tasks (a suppressed framework only what it runs;
// one without declared demand what it runs, which it evidently wants). A
// role's share is the sum of its frameworks'. The result is cached until
// demand, usage, capacity or the tree change.
func (a *Allocator) preemptFairShares() map[*node]vec {
	if !a.fair.allStale && a.fair.all != nil {
		return a.fair.all
	}
	a.fair.allStale = false
	targets := staticFill(a.tree.root, a.capacity, func(f *framework) []fillShape {
		var out []fillShape
		add := func(key string, r vec, count int64) {
			if r.isZero() || count <= 0 {
				return
			}
			for i := range out {
				if out[i].key == key {
					out[i].left = addCount(out[i].left, count)
					return
				}
			}
			out = append(out, fillShape{key: key, res: r, left: count})
		}
		if f.declared && !f.suppressed {
			for _, s := range f.shapes {
				add(s.key, s.res, s.count)
			}
			for _, s := range f.optional {
				add(s.key, s.res, s.count)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(f.launched)) {
			add(key, f.launchRes[key], f.launched[key])
		}
		return out
	})
	all := map[*node]vec{}
	for f, counts := range targets {
		var sum vec
		for key, n := range counts {
			sum = sum.add(scaled(resOfKey(f, key), n))
		}
		for x := f.leaf; x != nil; x = x.parent {
			all[x] = all[x].add(sum)
		}
	}
	a.fair.all = all
	return all
}

// resOfKey is the scalars of the shape or launched key of f.
func resOfKey(f *framework, key string) vec {
	if r, ok := f.launchRes[key]; ok {
		return r
	}
	for _, s := range f.shapes {
		if s.key == key {
			return s.res
		}
	}
	for _, s := range f.optional {
		if s.key == key {
			return s.res
		}
	}
	return nil
}

// scaled is v times n, new.
func scaled(v vec, n int64) vec {
	out := make(vec, len(v))
	for j, x := range v {
		out[j] = x * n
	}
	return out
}
