package coflow

import (
	"cmp"
	"slices"
	"time"
)

// simpleOrder covers the single-order baselines that need no rates of
// their own (fifo and sebf are in madd.go):
//   - scf: shortest coflow first, by total size (clairvoyant), ties by
//     arrival;
//   - fair: per-flow max-min fair sharing (Decision.FairShare);
//   - fair-split: each port side split equally among its flows, nothing
//     redistributed (Decision.EqualSplit, SplitRate).
//
// They recompute only when a coflow arrives or leaves: between those, the
// order does not change and Rates skips finished flows (for fair, Rates
// recomputes the shares over the flows left).
type simpleOrder struct {
	kind Scheduler
}

func newSimpleOrder(kind Scheduler) *simpleOrder { return &simpleOrder{kind: kind} }

func (s *simpleOrder) admit(c *coflowState)                      { c.phase = PhaseQueued }
func (s *simpleOrder) flowFinished(*coflowState, int, bool) bool { return false }
func (s *simpleOrder) progressed([]*coflowState) bool            { return false }
func (s *simpleOrder) drop(*coflowState)                         {}

func (s *simpleOrder) decide(_ time.Time, active []*coflowState, d *Decision) {
	order := active
	if s.kind == SchedulerSCF {
		order = slices.Clone(active)
		slices.SortStableFunc(order, func(a, b *coflowState) int {
			if a.totalSize != b.totalSize {
				if a.totalSize < b.totalSize {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.seq, b.seq)
		})
	}
	d.FairShare = s.kind == SchedulerFair || s.kind == SchedulerFairSplit
	d.EqualSplit = s.kind == SchedulerFairSplit
	for _, c := range order {
		d.Grants = append(d.Grants, Grant{Coflow: c.id, Class: ClassQueue, Queue: -1, Flows: c.order, Links: c.links})
	}
}
