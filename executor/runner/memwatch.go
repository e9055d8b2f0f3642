//go:build linux

package runner

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// memWatchInterval is how often the memory watch sums the task's memory;
// memWatchFirst is its first look, after the task started.
const (
	memWatchInterval = 100 * time.Millisecond
	memWatchFirst    = 5 * time.Millisecond
)

// memWatch samples the resident memory of a task's processes (the
// shim's descendants and the task's process group) while it runs: it
// keeps the peak, under every isolation, and under the portable one it
// enforces the limit. Resident memory is what the task's processes hold
// themselves, without the page cache a cgroup is also charged for, so the
// peak reads the same under every isolation.
type memWatch struct {
	log        hclog.Logger
	shim, pgid int
	limit      int64 // bytes; 0 for none
	over       chan string
	stop       chan struct{}
	wg         sync.WaitGroup
	peak       atomic.Int64
}

// startMemWatch starts watching the task whose process group is pgid.
func startMemWatch(log hclog.Logger, shim, pgid int, limit int64) *memWatch {
	w := &memWatch{log: log, shim: shim, pgid: pgid, limit: limit, over: make(chan string, 1), stop: make(chan struct{})}
	w.wg.Add(1)
	go w.run()
	return w
}

// overLimit delivers a message the first time the task's memory exceeds
// the limit; never when there is none. A nil watch never delivers.
func (w *memWatch) overLimit() <-chan string {
	if w == nil {
		return nil
	}
	return w.over
}

// halt stops the watch and waits for it; a nil watch does nothing.
func (w *memWatch) halt() {
	if w == nil {
		return
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
}

// memPeak is the larger of the largest sum of the task's processes'
// resident memory the watch saw and the largest peak of one of them
// (VmHWM, which catches a process's spikes between looks). Both are
// sampled: a process that lives less than memWatchFirst may not be
// seen. 0 for a nil watch.
func (w *memWatch) memPeak() int64 {
	if w == nil {
		return 0
	}
	return w.peak.Load()
}

// run looks every memWatchInterval, and more often at first (from
// memWatchFirst, doubling), so that a short task's memory is seen too.
func (w *memWatch) run() {
	defer w.wg.Done()
	every := memWatchFirst
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-timer.C:
		}
		every = min(2*every, memWatchInterval)
		timer.Reset(every)
		procs, err := findTaskProcs(w.shim, w.pgid)
		if err != nil {
			w.log.Warn("cannot list processes", "error", err)
			continue
		}
		var sum, one int64
		for _, q := range procs {
			sum += q.rss
			if hwm, err := readPeakRSS(q.pid); err == nil {
				one = max(one, hwm)
			}
		}
		if n := max(sum, one); n > w.peak.Load() {
			w.peak.Store(n)
		}
		if w.limit > 0 && sum > w.limit {
			w.over <- fmt.Sprintf("memory %d MiB over limit %d MiB", mibCeil(sum), w.limit>>20)
			return
		}
	}
}
