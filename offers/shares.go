package offers

import "github.com/allot-project/allot/protocol"

// NodeShare is a role's or framework's standing in the tree, for the
// operator API and share updates.
type NodeShare struct {
	// Path is the role path, or the framework ID for a framework.
	Path      string
	Framework bool
	Parent    string
	Weight    float64
	// DominantShare is the share the policy orders siblings by (after any
	// rescaling), unweighted.
	DominantShare float64
	// Allocation is the plain sum of what the subtree runs and holds in
	// outstanding offers; Shares is that over cluster capacity per resource.
	Allocation protocol.Resources
	Shares     map[string]float64
	// Demanding reports pending declared demand in the subtree.
	Demanding bool
}

// Shares reports every node of the role tree, parents before children,
// siblings in creation order. The root is reported with Path "".
func (a *Allocator) Shares() []NodeShare {
	if a.rules.rescale != rescalePlain {
		a.syncAvail()
	}
	a.eval(a.tree.root)
	var out []NodeShare
	var walk func(n *node) vec
	walk = func(n *node) vec {
		i := len(out)
		out = append(out, NodeShare{
			Path:          n.path,
			Framework:     n.isLeaf(),
			Weight:        n.weight,
			DominantShare: n.s,
			Demanding:     n.demanding > 0,
		})
		if n.parent != nil {
			out[i].Parent = n.parent.path
		}
		var sum vec
		if n.isLeaf() {
			sum = n.fw.alloc.clone()
		}
		for _, c := range n.children {
			sum = sum.add(walk(c))
		}
		out[i].Allocation = a.reg.toResources(sum)
		out[i].Shares = a.sharesOf(sum)
		return sum
	}
	walk(a.tree.root)
	return out
}

// FrameworkShares returns a framework's allocation over capacity per
// resource and its dominant share, for share-update events.
func (a *Allocator) FrameworkShares(id protocol.FrameworkID) (map[string]float64, float64, error) {
	f, err := a.framework(id)
	if err != nil {
		return nil, 0, err
	}
	sh := a.sharesOf(f.alloc)
	dom := 0.0
	for _, v := range sh {
		dom = max(dom, v)
	}
	return sh, dom, nil
}

func (a *Allocator) sharesOf(v vec) map[string]float64 {
	out := make(map[string]float64, len(a.reg.names))
	for j, name := range a.reg.names {
		if r := a.capacity.at(j); r > 0 {
			out[name] = float64(v.at(j)) / float64(r)
		}
	}
	return out
}
