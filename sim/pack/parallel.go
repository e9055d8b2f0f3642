package pack

import (
	"runtime"
	"sync"
)

// forEach calls run(0..n-1) on up to workers goroutines (GOMAXPROCS when
// workers is 0) and returns the error of the lowest index that failed, so
// that the outcome does not depend on scheduling.
func forEach(n, workers int, run func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				errs[i] = run(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
