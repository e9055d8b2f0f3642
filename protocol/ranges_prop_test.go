package protocol

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRanges_SetOperationsProperty checks Union, Minus and Take against
// sets of members on random operands, normal or not, near zero and near
// the top of the uint64 range (where End+1 overflows), and that every
// result is normal.
func TestRanges_SetOperationsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, base := range []uint64{0, math.MaxUint64 - 63} {
		for range 5000 {
			a, b := randomRanges(rng, base), randomRanges(rng, base)
			ma, mb := members(a, base), members(b, base)
			if got, want := members(a.Union(b), base), ma|mb; got != want {
				t.Fatalf("%v ∪ %v = %v: members %064b, want %064b", a, b, a.Union(b), got, want)
			}
			if got, want := members(a.Minus(b), base), ma&^mb; got != want {
				t.Fatalf("%v \\ %v = %v: members %064b, want %064b", a, b, a.Minus(b), got, want)
			}
			for _, r := range []Ranges{a.Union(b), a.Minus(b)} {
				if !r.normal() {
					t.Fatalf("result %v of %v and %v is not normal", r, a, b)
				}
			}
			n := uint64(rng.IntN(8))
			took, ok := a.Take(n)
			if ok != (a.Normalize().Count() >= n) || ok && (took.Count() != n || members(took, base)&^ma != 0) {
				t.Fatalf("%v.Take(%d) = %v, %v", a, n, took, ok)
			}
		}
	}
}

// randomRanges draws up to four intervals within [base, base+63], some
// empty, overlapping, adjacent or out of order.
func randomRanges(rng *rand.Rand, base uint64) Ranges {
	var rs Ranges
	for range rng.IntN(5) {
		lo, hi := uint64(rng.IntN(64)), uint64(rng.IntN(64))
		if rng.IntN(4) > 0 && lo > hi {
			lo, hi = hi, lo
		}
		rs = append(rs, Range{Begin: base + lo, End: base + hi})
	}
	return rs
}

// members is rs as a bit set of offsets from base.
func members(rs Ranges, base uint64) uint64 {
	var m uint64
	for _, r := range rs {
		for x := r.Begin; x >= r.Begin && x <= r.End; x++ {
			m |= 1 << (x - base)
			if x == math.MaxUint64 {
				break
			}
		}
	}
	return m
}
