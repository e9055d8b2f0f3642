package stats

import (
	"math"
	"slices"
)

// Mean is the arithmetic mean of xs, 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median is the middle of xs, the mean of the middle two for an even
// count, 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percentile is the nearest-rank p-quantile of xs, 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return NearestRank(s, p)
}

// NearestRank is Percentile over xs already sorted ascending and not
// empty: a caller taking several percentiles of one sample sorts it once.
func NearestRank(sorted []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(len(sorted)-1, k))]
}

// Ratio is a over b, 0 when b is 0: a factor against a run that took no
// time says nothing.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Jain is Jain's fairness index of xs, (Σx)²/(n·Σx²): 1 when every x is
// equal, 1/n when one x holds everything. ok is false when it is undefined,
// for no xs or all of them zero.
func Jain(xs []float64) (index float64, ok bool) {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 0, false
	}
	return s * s / (float64(len(xs)) * s2), true
}
