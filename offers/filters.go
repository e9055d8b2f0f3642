package offers

import (
	"time"

	"github.com/allot-project/allot/internal/heapq"
)

// filter is a framework's refusal of an agent: a decline's filter, or an
// accept's on what it left unused. As Mesos's refused-offer filter, it
// covers what was refused, not the agent: once a task's resources come
// back and the agent has more free than the framework refused, the filter
// lapses (liftOutgrownFilters), so a framework that declined while it had
// no use for the agent hears of the capacity its own tasks, or anyone's,
// gave back without waiting out the refusal.
type filter struct {
	until   time.Time // the zero time means forever
	refused vec
}

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

// addFilter refuses the resources refused on agent ag to framework f until
// the given time.
func (a *Allocator) addFilter(ag *agent, f *framework, until time.Time, refused vec) {
	ag.setFilter(f.idx, filter{until: until, refused: refused})
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
		if fl, ok := e.ag.filters[e.fw.idx]; ok && fl.until.Equal(e.until) {
			e.ag.clearFilter(e.fw.idx)
		}
	}
}

// liftOutgrownFilters lifts the filters on ag whose refused resources no
// longer hold all that ag has free. It runs when a task's resources come
// back (release), not when an offer does: an offer declined or rescinded
// returns what was free when the filters were set.
func (ag *agent) liftOutgrownFilters() {
	for idx, fl := range ag.filters {
		if !fl.refused.fits(ag.free) {
			ag.clearFilter(idx)
		}
	}
}
