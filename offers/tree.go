package offers

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// node is a role (internal node) or a framework (leaf) of the role tree.
type node struct {
	name     string // last path element, or the framework ID for a leaf
	path     string // role path ("" for the root); framework ID for a leaf
	parent   *node
	children []*node
	seq      uint64  // creation order; the tie-break after weighted share
	weight   float64 // > 0
	fw       *framework

	// Cached evaluation (see eval.go): the node's vector as its parent sees
	// it, its dominant share, and whether it is non-blocked.
	v     []float64
	s     float64
	key   float64 // s over the weight siblings compare with
	nb    bool
	dirty bool
	ver   uint64

	// Scale-down rescaling (view.go): the node's level (its lowest
	// non-blocked child's key, +Inf when blocked), a leaf's share of one
	// task, and a group's walk back through its whole-task fill, valid while
	// its version equals evalSeq, which changes when a re-evaluation changes
	// the node's content (eval.go contentChanged). spare is the vector
	// buffer of the evaluation before.
	level   float64
	step    float64
	evalSeq uint64
	capSeq  uint64
	walk    walkCache
	spare   []float64

	// Children kept sorted by (key, seq) for wide nodes (see order.go).
	order    []int32 // indices into children
	orderVer uint64
	stale    []*node // children whose key may have changed since sorting
	sortKey  float64 // this node's key when placed in its parent's order

	// Subtree counters for pruning the walk.
	demanding int // leaves with declared pending demand, not suppressed
	open      int // leaves without declared demand, not suppressed

	dead uint64 // walk stamp at which this subtree had nothing for the agent

	// Quota limit (quota.go): limit[j] bounds held[j] where limited[j].
	limit   vec
	limited []bool
	held    vec // what the subtree holds, running plus offered

	// Quota guarantee (guarantee.go): the subtree is entitled to guar[j]
	// where guaranteed[j].
	guar       vec
	guaranteed []bool
	guarBelow  int // guaranteed roles in the subtree, n included

	// offerCons are the role's offer constraints (roleconstraints.go).
	offerCons []protocol.Constraint

	// preempt is the role's preemption policy, "" to inherit (preempt.go).
	preempt PreemptionPolicy
}

func (n *node) isLeaf() bool { return n.fw != nil }

// tree is the weighted role tree.
type tree struct {
	root  *node
	roles map[string]*node
	seq   uint64
}

func newTree() *tree {
	root := &node{weight: 1, dirty: true}
	return &tree{root: root, roles: map[string]*node{"": root}}
}

// validRolePath accepts "" (the root) and slash-separated non-empty names
// without whitespace, e.g. "eng/prod".
func validRolePath(path string) bool {
	if path == "" {
		return true
	}
	for _, part := range strings.Split(path, "/") {
		if part == "" || len(part) > 64 || strings.ContainsAny(part, " \t\n>") {
			return false
		}
	}
	return len(path) <= 512
}

// role returns the node for path, creating it and its ancestors (weight 1)
// when create is set.
func (t *tree) role(path string, create bool) (*node, error) {
	if n, ok := t.roles[path]; ok {
		return n, nil
	}
	if !create {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRole, path)
	}
	if !validRolePath(path) {
		return nil, fmt.Errorf("%w: role path %q", ErrInvalid, path)
	}
	parentPath := ""
	name := path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parentPath, name = path[:i], path[i+1:]
	}
	parent, err := t.role(parentPath, true)
	if err != nil {
		return nil, err
	}
	n := t.attach(parent, &node{name: name, path: path, weight: 1})
	t.roles[path] = n
	return n, nil
}

func (t *tree) attach(parent, n *node) *node {
	t.seq++
	n.seq = t.seq
	n.parent = parent
	n.dirty = true
	parent.children = append(parent.children, n)
	parent.orderVer = 0
	t.invalidate(parent)
	return n
}

func (t *tree) detach(n *node) {
	p := n.parent
	for i, c := range p.children {
		if c == n {
			p.children = append(p.children[:i], p.children[i+1:]...)
			break
		}
	}
	n.parent = nil
	p.orderVer = 0
	t.invalidate(p)
}

// invalidate marks n and its ancestors for re-evaluation. A dirty node's
// ancestors are always dirty, so the climb stops at the first dirty one.
func (t *tree) invalidate(n *node) {
	for ; n != nil && !n.dirty; n = n.parent {
		n.dirty = true
		if n.parent != nil && n.parent.orderVer != 0 {
			n.parent.stale = append(n.parent.stale, n)
		}
	}
}

// adjustCounts adds the given deltas to n's subtree counters up to the root.
func (t *tree) adjustCounts(n *node, demanding, open int) {
	if demanding == 0 && open == 0 {
		return
	}
	for ; n != nil; n = n.parent {
		n.demanding += demanding
		n.open += open
	}
}

// leaves returns every framework leaf in depth-first, creation order.
func (t *tree) leaves() []*node {
	var out []*node
	var walk func(n *node)
	walk = func(n *node) {
		if n.isLeaf() {
			out = append(out, n)
			return
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(t.root)
	return out
}
