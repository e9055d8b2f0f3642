package offers

import (
	"container/heap"
	"time"
)

// filterEntry is a decline filter waiting to expire.
type filterEntry struct {
	until time.Time
	ag    *agent
	fw    *framework
}

// filterQueue is a min-heap of filters by expiry.
type filterQueue []filterEntry

func (q filterQueue) Len() int           { return len(q) }
func (q filterQueue) Less(i, j int) bool { return q[i].until.Before(q[j].until) }
func (q filterQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *filterQueue) Push(x any)        { *q = append(*q, x.(filterEntry)) }
func (q *filterQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// addFilter refuses agent ag to framework f until the given time.
func (a *Allocator) addFilter(ag *agent, f *framework, until time.Time) {
	ag.setFilter(f.idx, until)
	heap.Push(&a.filterQ, filterEntry{until: until, ag: ag, fw: f})
}

// expireFilters lifts every filter whose time has come. Entries made stale
// by a revive, a newer filter, or a removed agent or framework are skipped.
func (a *Allocator) expireFilters(now time.Time) {
	for a.filterQ.Len() > 0 && !a.filterQ[0].until.After(now) {
		e := heap.Pop(&a.filterQ).(filterEntry)
		if a.agents[e.ag.id] != e.ag || a.frameworks[e.fw.id] != e.fw {
			continue
		}
		if until, ok := e.ag.filterUntil[e.fw.idx]; ok && until.Equal(e.until) {
			e.ag.clearFilter(e.fw.idx)
		}
	}
}
