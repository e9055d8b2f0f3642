package coflow

import (
	"slices"
	"time"
)

// aalo is D-CLAS (docs/coflow.md): every coflow enters the tail of queue 0 and,
// whenever a progress report shows its bytes sent d at or past its queue's
// limit Q_hi_q, moves one queue down (to the tail); it never moves up. It
// shares philae's main queues and slot plan, so both have the same
// starvation freedom. The oracle variant places each coflow at arrival in
// queueOf(true size) and so pays no learning cost.
//
// Demotion is checked on progress reports only, not on completions: Aalo's
// coordinator learns from the per-interval byte counts. A report checks
// every coflow, not only those it names, so that bytes of flows that
// finished since the last report count as soon as the next one arrives.
type aalo struct {
	cfg     *Config
	oracle  bool
	queues  *mainQueues
	members []*coflowState // unfinished, by arrival
}

func newAalo(cfg *Config, oracle bool) *aalo {
	return &aalo{cfg: cfg, oracle: oracle, queues: newMainQueues(cfg)}
}

func (a *aalo) admit(c *coflowState) {
	c.phase = PhaseQueued
	q := 0
	if a.oracle {
		q = queueOf(a.cfg, float64(c.totalSize))
	}
	a.queues.enqueue(c, q)
	a.members = append(a.members, c)
}

func (a *aalo) flowFinished(*coflowState, int, bool) bool { return false }

func (a *aalo) progressed([]*coflowState) bool {
	moved := false
	for _, c := range a.members {
		if c.queue < a.cfg.Queues-1 && float64(c.bytesSent) >= queueLimit(a.cfg, c.queue) {
			a.queues.enqueue(c, c.queue+1)
			moved = true
		}
	}
	return moved
}

func (a *aalo) drop(c *coflowState) {
	a.members = slices.DeleteFunc(a.members, func(o *coflowState) bool { return o == c })
}

func (a *aalo) decide(now time.Time, active []*coflowState, d *Decision) {
	a.queues.emit(now, active, false, func(c *coflowState) []int { return c.order }, d)
}
