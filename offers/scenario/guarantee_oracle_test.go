package scenario

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/offers"
)

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
