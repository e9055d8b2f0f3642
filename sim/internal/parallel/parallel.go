package parallel

import (
	"runtime"
	"sync"
)

// Each calls f(0) .. f(n-1), each once, on as many goroutines as there are
// processors, handing out the indexes in order (so a caller that wants its
// longest runs started first puts them first), and returns when every call
// has. f must be safe to call concurrently.
func Each(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
