package offers

import (
	"time"

	"github.com/allot-project/allot/internal/heapq"
)

// filterEntry is a decline filter waiting to expire.
type filterEntry struct {
	until time.Time
	ag    *agent
	fw    *framework
}

// newFilterQueue is a min-heap of filters by expiry.
func newFilterQueue() *heapq.Heap[filterEntry] {
	return heapq.New(func(a, b filterEntry) bool { return a.until.Before(b.until) })
}

// addFilter refuses agent ag to framework f until the given time.
func (a *Allocator) addFilter(ag *agent, f *framework, until time.Time) {
	ag.setFilter(f.idx, until)
	a.filterQ.Push(filterEntry{until: until, ag: ag, fw: f})
}

// expireFilters lifts every filter whose time has come. Entries made stale
// by a revive, a newer filter, or a removed agent or framework are skipped.
func (a *Allocator) expireFilters(now time.Time) {
	for e, ok := a.filterQ.Peek(); ok && !e.until.After(now); e, ok = a.filterQ.Peek() {
		a.filterQ.Pop()
		if a.agents[e.ag.id] != e.ag || a.frameworks[e.fw.id] != e.fw {
			continue
		}
		if until, ok := e.ag.filterUntil[e.fw.idx]; ok && until.Equal(e.until) {
			e.ag.clearFilter(e.fw.idx)
		}
	}
}
