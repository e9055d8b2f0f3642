package stats

import (
	"math"
	"slices"
	"testing"
)

func TestPercentileAndMedian(t *testing.T) {
	t.Parallel()
	xs := []float64{5, 1, 4, 2, 3}
	if got := Percentile(xs, 0.95); got != 5 {
		t.Errorf("p95: got %v, want 5", got)
	}
	if got := Percentile(xs, 0.4); got != 2 {
		t.Errorf("p40: got %v, want 2", got)
	}
	if got := Percentile(xs, 0); got != 1 {
		t.Errorf("p0: got %v, want 1 (the smallest)", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median: got %v, want 2.5", got)
	}
	if got := Median(xs); got != 3 {
		t.Errorf("median of an odd count: got %v, want 3", got)
	}
	if !slices.Equal(xs, []float64{5, 1, 4, 2, 3}) {
		t.Error("Percentile or Median sorted its input")
	}
	if Percentile(nil, 0.5) != 0 || Median(nil) != 0 || Mean(nil) != 0 {
		t.Error("an empty sample does not summarise to 0")
	}
}

func TestMeanAndRatio(t *testing.T) {
	t.Parallel()
	if got := Mean([]float64{1, 2, 6}); got != 3 {
		t.Errorf("mean: got %v, want 3", got)
	}
	if got := Ratio(3, 2); got != 1.5 {
		t.Errorf("ratio: got %v, want 1.5", got)
	}
	if got := Ratio(3, 0); got != 0 {
		t.Errorf("ratio over 0: got %v, want 0", got)
	}
}

func TestJain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
		ok   bool
	}{
		{[]float64{0.5, 0.25}, 0.9, true}, // 0.75²/(2·0.3125)
		{[]float64{2, 2, 2}, 1, true},
		{[]float64{1, 0, 0, 0}, 0.25, true},
		{[]float64{0, 0}, 0, false},
		{nil, 0, false},
	} {
		got, ok := Jain(tc.xs)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Jain(%v) = %v, %v; want %v, %v", tc.xs, got, ok, tc.want, tc.ok)
		}
	}
}
