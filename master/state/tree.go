package state

import (
	"hash/maphash"
	"strings"
)

// tree is an immutable ordered map from string keys to V: a treap with path
// copying. A write returns a new tree that shares every untouched node with
// the old one, so copying a tree value is a snapshot and costs nothing, and
// a tree may be read from many goroutines at once. Writes cost O(log n)
// expected time and allocations.
//
// Within one command the state writes many keys (a launch of thousands of
// tasks); copying every path for every key would dominate its cost. So a
// tree may carry an edit token: nodes created under the token belong to the
// command being applied, which nobody else has seen yet, and later writes
// under the same token change them in place instead of copying them. The
// state starts every command with a fresh token, so nodes a View or a
// rollback copy can see are never changed. A nil token always copies.
//
// Node priorities come from a hash with a per-process random seed, so the
// shape of a tree differs between processes but its contents and key order
// do not; nothing observable depends on the shape.
type tree[V any] struct {
	root *node[V]
	n    int
	edit *editToken
}

type node[V any] struct {
	key         string
	val         V
	prio        uint64
	left, right *node[V]
	edit        *editToken
}

// editToken identifies one command's writes. It is not zero-sized, so
// every token has its own address.
type editToken struct{ _ byte }

// own returns n itself when it was created under e, else a copy of n
// that is.
func own[V any](n *node[V], e *editToken) *node[V] {
	if e != nil && n.edit == e {
		return n
	}
	c := *n
	c.edit = e
	return &c
}

var prioSeed = maphash.MakeSeed()

// Len returns the number of keys.
func (t tree[V]) Len() int { return t.n }

// get returns the value stored under k.
func (t tree[V]) get(k string) (V, bool) {
	for n := t.root; n != nil; {
		switch c := strings.Compare(k, n.key); {
		case c < 0:
			n = n.left
		case c > 0:
			n = n.right
		default:
			return n.val, true
		}
	}
	var zero V
	return zero, false
}

// set returns a tree with k bound to v.
func (t tree[V]) set(k string, v V) tree[V] {
	if _, ok := t.get(k); ok {
		return tree[V]{root: replaceNode(t.root, k, v, t.edit), n: t.n, edit: t.edit}
	}
	return tree[V]{root: insertNode(t.root, k, v, maphash.String(prioSeed, k), t.edit), n: t.n + 1, edit: t.edit}
}

// delete returns a tree without k.
func (t tree[V]) delete(k string) tree[V] {
	if _, ok := t.get(k); !ok {
		return t
	}
	return tree[V]{root: removeNode(t.root, k, t.edit), n: t.n - 1, edit: t.edit}
}

// ascend calls fn in key order for every key in [lo, hi) until fn returns
// false; an empty hi means no upper bound.
func (t tree[V]) ascend(lo, hi string, fn func(k string, v V) bool) {
	ascendNode(t.root, lo, hi, fn)
}

// values returns the values of the keys in [lo, hi), in key order.
func (t tree[V]) values(lo, hi string) []V {
	var out []V
	t.ascend(lo, hi, func(_ string, v V) bool {
		out = append(out, v)
		return true
	})
	return out
}

// last returns the largest key in [lo, hi) and its value; an empty hi
// means no upper bound.
func (t tree[V]) last(lo, hi string) (string, V, bool) {
	var (
		best  *node[V]
		found bool
	)
	for n := t.root; n != nil; {
		switch {
		case hi != "" && n.key >= hi:
			n = n.left
		case n.key < lo:
			n = n.right
		default:
			best, found = n, true
			n = n.right
		}
	}
	if !found {
		var zero V
		return "", zero, false
	}
	return best.key, best.val, true
}

func ascendNode[V any](n *node[V], lo, hi string, fn func(string, V) bool) bool {
	if n == nil {
		return true
	}
	if n.key >= lo && !ascendNode(n.left, lo, hi, fn) {
		return false
	}
	if hi != "" && n.key >= hi {
		return false
	}
	if n.key >= lo && !fn(n.key, n.val) {
		return false
	}
	return ascendNode(n.right, lo, hi, fn)
}

func replaceNode[V any](n *node[V], k string, v V, e *editToken) *node[V] {
	c := own(n, e)
	switch cmp := strings.Compare(k, n.key); {
	case cmp < 0:
		c.left = replaceNode(n.left, k, v, e)
	case cmp > 0:
		c.right = replaceNode(n.right, k, v, e)
	default:
		c.val = v
	}
	return c
}

// insertNode adds k, which n does not hold.
func insertNode[V any](n *node[V], k string, v V, p uint64, e *editToken) *node[V] {
	if n == nil || p > n.prio {
		l, r := splitNode(n, k, e)
		return &node[V]{key: k, val: v, prio: p, left: l, right: r, edit: e}
	}
	c := own(n, e)
	if k < n.key {
		c.left = insertNode(n.left, k, v, p, e)
	} else {
		c.right = insertNode(n.right, k, v, p, e)
	}
	return c
}

// splitNode returns the nodes of n with keys below k and above k; n does
// not hold k.
func splitNode[V any](n *node[V], k string, e *editToken) (l, r *node[V]) {
	if n == nil {
		return nil, nil
	}
	c := own(n, e)
	if k < n.key {
		l, c.left = splitNode(n.left, k, e)
		return l, c
	}
	c.right, r = splitNode(n.right, k, e)
	return c, r
}

// removeNode deletes k, which n holds.
func removeNode[V any](n *node[V], k string, e *editToken) *node[V] {
	switch {
	case k < n.key:
		c := own(n, e)
		c.left = removeNode(n.left, k, e)
		return c
	case k > n.key:
		c := own(n, e)
		c.right = removeNode(n.right, k, e)
		return c
	}
	return mergeNodes(n.left, n.right, e)
}

// mergeNodes joins a and b, where every key of a is below every key of b.
func mergeNodes[V any](a, b *node[V], e *editToken) *node[V] {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		c := own(a, e)
		c.right = mergeNodes(a.right, b, e)
		return c
	}
	c := own(b, e)
	c.left = mergeNodes(a, b.left, e)
	return c
}

// prefixRange returns the key range [lo, hi) of the keys that start with
// the given parts joined by keySep and followed by keySep. Parts are IDs,
// which never contain keySep.
func prefixRange(parts ...string) (lo, hi string) {
	p := strings.Join(parts, keySep) + keySep
	return p, p[:len(p)-1] + "\x01"
}

// keySep separates the parts of a composite key. It sorts below every byte
// an ID may hold, so composite keys sort like tuples of their parts.
const keySep = "\x00"
