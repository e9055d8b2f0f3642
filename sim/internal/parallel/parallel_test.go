package parallel

import (
	"sync/atomic"
	"testing"
)

func TestEach_callsEveryIndexOnce(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 7, 100} {
		calls := make([]atomic.Int32, n)
		Each(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}
