package coflow

import (
	"cmp"
	"slices"
	"time"
)

// queueOf maps a metric (bytes, or philae's weighted bytes) to a main queue:
// queue q covers [Q_hi_{q−1}, Q_hi_q) with Q_hi_q = FirstQueueLimit·E^q, and
// the last queue is unbounded (docs/coflow.md). It multiplies instead of taking a
// logarithm so that a metric exactly on a threshold lands in the lower queue
// deterministically.
func queueOf(cfg *Config, x float64) int {
	hi := cfg.FirstQueueLimit
	q := 0
	for q < cfg.Queues-1 && x >= hi {
		hi *= cfg.QueueGrowth
		q++
	}
	return q
}

// queueLimit is Q_hi_q, the bytes at which Aalo demotes a coflow out of q.
func queueLimit(cfg *Config, q int) float64 {
	hi := cfg.FirstQueueLimit
	for range q {
		hi *= cfg.QueueGrowth
	}
	return hi
}

// mainQueues is the K-queue structure Philae shares with Aalo: FIFO inside
// a queue (by order of entry) or by metric, weighted slots across queues.
type mainQueues struct {
	cfg       *Config
	nextEntry uint64
	plan      slotPlan
	byQueue   [][]*coflowState // scratch, reused between decisions
}

func newMainQueues(cfg *Config) *mainQueues {
	return &mainQueues{cfg: cfg, byQueue: make([][]*coflowState, cfg.Queues)}
}

// enqueue appends c at the tail of queue q.
func (m *mainQueues) enqueue(c *coflowState, q int) {
	c.queue = q
	c.entry = m.nextEntry
	m.nextEntry++
}

// emit appends the grants of the queued coflows: the working queue of the
// current slot first, then the other queues in priority order, FIFO inside
// each (or by metric then entry when byMetric is set, for policy C). It also
// sets the decision's WorkingQueue and NextChange.
func (m *mainQueues) emit(now time.Time, queued []*coflowState, byMetric bool,
	flowsOf func(*coflowState) []int, d *Decision) {
	for q := range m.byQueue {
		m.byQueue[q] = m.byQueue[q][:0]
	}
	var nonEmpty []int
	for _, c := range queued {
		if len(m.byQueue[c.queue]) == 0 {
			nonEmpty = append(nonEmpty, c.queue)
		}
		m.byQueue[c.queue] = append(m.byQueue[c.queue], c)
	}
	slices.Sort(nonEmpty)
	working, end := m.plan.at(now, nonEmpty, m.cfg)
	d.WorkingQueue, d.NextChange = working, end
	for _, q := range nonEmpty {
		slices.SortFunc(m.byQueue[q], func(a, b *coflowState) int {
			if byMetric && a.metric != b.metric {
				if a.metric < b.metric {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.entry, b.entry)
		})
	}
	add := func(q int, class Class) {
		for _, c := range m.byQueue[q] {
			d.Grants = append(d.Grants, Grant{Coflow: c.id, Class: class, Queue: q,
				Flows: flowsOf(c), Links: c.links})
		}
	}
	if working >= 0 {
		add(working, ClassWorking)
	}
	for _, q := range nonEmpty {
		if q != working {
			add(q, ClassQueue)
		}
	}
}
