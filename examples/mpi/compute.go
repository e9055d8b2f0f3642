package main

import "fmt"

// The computation every rank takes part in, and the framework redoes
// locally to check what the ranks found.

// element is rank's contribution to element i of the reduced vector. The
// values are small integers, so their sums are exact in float64 whatever
// the order the ring adds them in, and the framework can demand equality.
func element(rank, i int) float64 {
	return float64((rank + 1) * (i%1000 + 1))
}

// localVector is rank's vector of length n.
func localVector(rank, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = element(rank, i)
	}
	return v
}

// checksum weighs each element by its position modulo 7, so that a sum
// that lands in the wrong place changes it. Exact for vectors of up to
// about 10^7 elements and 1000 ranks.
func checksum(v []float64) float64 {
	var s float64
	for i, x := range v {
		s += float64(i%7+1) * x
	}
	return s
}

// sampleIndexes are the positions of the elements a result reports: the
// first two, the middle one and the last.
func sampleIndexes(n int) []int {
	var out []int
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if i >= 0 && i < n && (len(out) == 0 || out[len(out)-1] < i) {
			out = append(out, i)
		}
	}
	return out
}

// sliceOf returns the intervals [lo, hi) of [0, intervals) that rank
// integrates: a contiguous share, the first intervals%size ranks taking
// one more.
func sliceOf(rank, size, intervals int) (lo, hi int) {
	lo = rank * intervals / size
	hi = (rank + 1) * intervals / size
	return lo, hi
}

// piPartial integrates 4/(1+x²) over rank's share of [0, 1] by the
// midpoint rule with intervals intervals over the whole of [0, 1].
func piPartial(rank, size, intervals int) float64 {
	h := 1 / float64(intervals)
	lo, hi := sliceOf(rank, size, intervals)
	var s float64
	for i := lo; i < hi; i++ {
		x := (float64(i) + 0.5) * h
		s += 4 / (1 + x*x)
	}
	return s * h
}

// piBound bounds the midpoint rule's error for 4/(1+x²) on [0, 1] (its
// second derivative is at most 8 there: error ≤ 8h²/24), plus room for
// rounding.
func piBound(intervals int) float64 {
	h := 1 / float64(intervals)
	return h*h/3 + 1e-9
}

// expected is what a run of size ranks must find.
type expected struct {
	Checksum float64
	Samples  []sample
	Pi       float64
}

// sample is one element of the reduced vector.
type sample struct {
	Index int     `json:"index"`
	Value float64 `json:"value"`
}

// expect recomputes a run's results locally: every rank's vector summed
// element by element, and every rank's share of the integral.
func expect(size, vectorLen, intervals int) expected {
	sum := make([]float64, vectorLen)
	for r := range size {
		for i := range sum {
			sum[i] += element(r, i)
		}
	}
	var e expected
	e.Checksum = checksum(sum)
	for _, i := range sampleIndexes(vectorLen) {
		e.Samples = append(e.Samples, sample{Index: i, Value: sum[i]})
	}
	for r := range size {
		e.Pi += piPartial(r, size, intervals)
	}
	return e
}

// piTolerance is how far the ranks' pi may be from the local one: the
// partial sums are added in another order.
const piTolerance = 1e-12

// checkSizes validates the sizes a run or a rank is given.
func checkSizes(size, vectorLen, intervals int) error {
	switch {
	case size < 1:
		return fmt.Errorf("ranks: %d, want at least 1", size)
	case vectorLen < 1 || vectorLen > maxVectorLen:
		return fmt.Errorf("vector length: %d, want 1 to %d", vectorLen, maxVectorLen)
	case intervals < size:
		return fmt.Errorf("intervals: %d, want at least one per rank (%d)", intervals, size)
	}
	return nil
}

// maxVectorLen keeps the checksum exact and the frames small.
const maxVectorLen = 1 << 22
