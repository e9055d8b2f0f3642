package phoenix

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// The feasibility index of docs/phoenix.md: one worker bitset per constraint
// class, and per constraint signature (a set of classes) the feasible
// workers as a list, so probes sample without scanning the cluster.

// bitset is a worker bitset.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) clear(i int)    { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}
func (b bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// members lists the set bits, ascending.
func (b bitset) members() []int32 {
	out := make([]int32, 0, b.count())
	for i, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			out = append(out, int32(i*64+t))
			w &= w - 1
		}
	}
	return out
}

// constraintClass is one constraint class (offers.ClassKey) with its bitset and its
// CRV counters.
type constraintClass struct {
	id   int
	key  string
	c    protocol.Constraint
	bits bitset
	load offers.ClassLoad // Demand: outstanding tasks; Supply: slots

	// M/G/1 inputs (docs/phoenix.md), gathered over one CRV period.
	n, sum, sum2 float64
	lam, m1, m2  float64
	backlog      float64 // estimated work of outstanding tasks
	wait         float64 // current W[k]
}

// signature is a set of constraint classes (sorted ids) with the workers
// that satisfy them all.
type signature struct {
	key     string
	classes []int
	all     []int32 // feasible workers
	short   []int32 // feasible workers of the short-only partition
	big     []int32 // feasible workers of the big partition
	bits    bitset

	// Short work admitted with this signature (estimated task seconds) in
	// the current partition period, and its smoothed rate (docs/phoenix.md's
	// demand reporting, used to shape the short-only partition).
	shortWork, shortRate float64
}

// classIndex interns classes and signatures over fixed workers.
type classIndex struct {
	attrs     []protocol.Attributes
	shortOnly bitset // the short-only partition; the rest is the big one
	classes   []*constraintClass
	byKey     map[string]*constraintClass
	sigs      map[string]*signature
	universe  *signature
}

// newClassIndex indexes workers whose first bigFrom ids form the short-only
// partition.
func newClassIndex(attrs []protocol.Attributes, bigFrom int) *classIndex {
	ix := &classIndex{attrs: attrs, shortOnly: newBitset(len(attrs)), byKey: map[string]*constraintClass{}, sigs: map[string]*signature{}}
	for w := range bigFrom {
		ix.shortOnly.set(w)
	}
	ix.universe = ix.sig(nil)
	return ix
}

// class interns the class of c, evaluating it on every worker once.
func (ix *classIndex) class(c protocol.Constraint) *constraintClass {
	key, norm := offers.ClassKey(c)
	if k := ix.byKey[key]; k != nil {
		return k
	}
	k := &constraintClass{id: len(ix.classes), key: key, c: norm, bits: newBitset(len(ix.attrs))}
	for w, a := range ix.attrs {
		if norm.Holds(a) {
			k.bits.set(w)
		}
	}
	k.load.Supply = int64(k.bits.count())
	ix.classes = append(ix.classes, k)
	ix.byKey[key] = k
	return k
}

// classIDs interns the classes of cs (per-task operators only).
func (ix *classIndex) classIDs(cs []protocol.Constraint) []int {
	var out []int
	for _, c := range cs {
		if c.IsGroup() {
			continue
		}
		out = append(out, ix.class(c).id)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sig returns the feasible set of the classes ids (sorted), computing it
// once.
func (ix *classIndex) sig(ids []int) *signature {
	var sb strings.Builder
	for _, id := range ids {
		sb.WriteString(strconv.Itoa(id))
		sb.WriteByte(',')
	}
	key := sb.String()
	if s := ix.sigs[key]; s != nil {
		return s
	}
	b := newBitset(len(ix.attrs))
	for w := range ix.attrs {
		b.set(w)
	}
	for _, id := range ids {
		b.and(ix.classes[id].bits)
	}
	s := &signature{key: key, classes: slices.Clone(ids), all: b.members(), bits: b}
	ix.split(s)
	ix.sigs[key] = s
	return s
}

// split divides s's feasible workers between the two partitions.
func (ix *classIndex) split(s *signature) {
	s.short, s.big = s.short[:0], s.big[:0]
	for _, w := range s.all {
		if ix.shortOnly.has(int(w)) {
			s.short = append(s.short, w)
		} else {
			s.big = append(s.big, w)
		}
	}
}

// setShortOnly moves the partition boundary and re-splits every signature.
func (ix *classIndex) setShortOnly(b bitset) {
	ix.shortOnly = b
	for _, s := range ix.sigs {
		ix.split(s)
	}
}
