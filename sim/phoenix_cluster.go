package sim

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

// pxBits is a worker bitset.
type pxBits []uint64

func newPxBits(n int) pxBits { return make(pxBits, (n+63)/64) }

func (b pxBits) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b pxBits) clear(i int)    { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b pxBits) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b pxBits) and(o pxBits) {
	for i := range b {
		b[i] &= o[i]
	}
}
func (b pxBits) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// members lists the set bits, ascending.
func (b pxBits) members() []int32 {
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

// pxClass is one constraint class (offers.ClassKey) with its bitset and its
// CRV counters.
type pxClass struct {
	id   int
	key  string
	c    protocol.Constraint
	bits pxBits
	load offers.ClassLoad // Demand: outstanding tasks; Supply: slots

	// M/G/1 inputs (docs/phoenix.md), gathered over one CRV period.
	n, sum, sum2 float64
	lam, m1, m2  float64
	backlog      float64 // estimated work of outstanding tasks
	wait         float64 // current W[k]
}

// pxSig is the feasible set of one signature (sorted class ids).
type pxSig struct {
	key     string
	classes []int
	all     []int32 // feasible workers
	short   []int32 // feasible workers of the short-only partition
	big     []int32 // feasible workers of the big partition
	bits    pxBits

	// Short work admitted with this signature (estimated task seconds) in
	// the current partition period, and its smoothed rate (docs/phoenix.md's
	// demand reporting, used to shape the short-only partition).
	shortWork, shortRate float64
}

// pxIndex interns classes and signatures over fixed workers.
type pxIndex struct {
	attrs     []protocol.Attributes
	shortOnly pxBits // the short-only partition; the rest is the big one
	classes   []*pxClass
	byKey     map[string]*pxClass
	sigs      map[string]*pxSig
	universe  *pxSig
}

// newPxIndex indexes workers whose first bigFrom ids form the short-only
// partition.
func newPxIndex(attrs []protocol.Attributes, bigFrom int) *pxIndex {
	ix := &pxIndex{attrs: attrs, shortOnly: newPxBits(len(attrs)), byKey: map[string]*pxClass{}, sigs: map[string]*pxSig{}}
	for w := range bigFrom {
		ix.shortOnly.set(w)
	}
	ix.universe = ix.sig(nil)
	return ix
}

// class interns the class of c, evaluating it on every worker once.
func (ix *pxIndex) class(c protocol.Constraint) *pxClass {
	key, norm := offers.ClassKey(c)
	if k := ix.byKey[key]; k != nil {
		return k
	}
	k := &pxClass{id: len(ix.classes), key: key, c: norm, bits: newPxBits(len(ix.attrs))}
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
func (ix *pxIndex) classIDs(cs []protocol.Constraint) []int {
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
func (ix *pxIndex) sig(ids []int) *pxSig {
	var sb strings.Builder
	for _, id := range ids {
		sb.WriteString(strconv.Itoa(id))
		sb.WriteByte(',')
	}
	key := sb.String()
	if s := ix.sigs[key]; s != nil {
		return s
	}
	b := newPxBits(len(ix.attrs))
	for w := range ix.attrs {
		b.set(w)
	}
	for _, id := range ids {
		b.and(ix.classes[id].bits)
	}
	s := &pxSig{key: key, classes: slices.Clone(ids), all: b.members(), bits: b}
	ix.split(s)
	ix.sigs[key] = s
	return s
}

// split divides s's feasible workers between the two partitions.
func (ix *pxIndex) split(s *pxSig) {
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
func (ix *pxIndex) setShortOnly(b pxBits) {
	ix.shortOnly = b
	for _, s := range ix.sigs {
		ix.split(s)
	}
}
