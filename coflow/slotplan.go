package coflow

import (
	"math"
	"time"
)

// slotPlan is the weighted rotation across main queues (docs/coflow.md, the
// authors' block form): a round gives every queue q that was non-empty when
// the round was planned floor(W / w^(q−q_min)) consecutive slots of length
// δ, q_min being the highest non-empty queue, so with the defaults q_min
// gets 256 slots, q_min+1 25, q_min+2 2 and lower queues none. A round is
// replanned only when it is used up, as the authors' simulator does; a
// queue that is empty during its block simply leaves the slot to the others
// in priority order.
//
// One departure from the authors' simulator: when a queue above every queue
// of the current round becomes non-empty (a new q_min), the round is
// replanned at once. Otherwise a coflow entering queue 0 while a lower queue
// owns a block would wait for up to W slots behind bigger coflows, which
// defeats the weights (and hurts Aalo most, whose coflows all enter queue 0).
//
// The rotation runs on the event clock: a round starts when the first coflow
// enters an empty set of main queues, and the decision that owns a block
// reports the block's end as its NextChange.
type slotPlan struct {
	start  time.Time
	blocks []planBlock
	total  int64 // slots in the round
}

type planBlock struct {
	queue int
	slots int64
}

// build plans a round starting at start over the non-empty queues (sorted).
func (p *slotPlan) build(start time.Time, nonEmpty []int, cfg *Config) {
	p.start, p.blocks, p.total = start, p.blocks[:0], 0
	qmin := nonEmpty[0]
	for _, q := range nonEmpty {
		n := int64(math.Floor(float64(cfg.SlotsPerRound) / math.Pow(cfg.WeightRatio, float64(q-qmin))))
		if n <= 0 {
			continue
		}
		p.blocks = append(p.blocks, planBlock{queue: q, slots: n})
		p.total += n
	}
}

// at returns the queue owning the slot at now and the end of its block,
// replanning when the round is used up. With no non-empty queue it drops the
// plan and returns -1.
func (p *slotPlan) at(now time.Time, nonEmpty []int, cfg *Config) (int, time.Time) {
	if len(nonEmpty) == 0 {
		p.blocks, p.total = p.blocks[:0], 0
		return -1, time.Time{}
	}
	if p.total == 0 || nonEmpty[0] < p.blocks[0].queue {
		p.build(now, nonEmpty, cfg)
	}
	k := int64(now.Sub(p.start) / cfg.Slot)
	if k >= p.total {
		// The round is used up: the next one starts where it ended. Rounds
		// that passed with no decision at all are skipped whole.
		p.start = p.start.Add(time.Duration(p.total) * cfg.Slot)
		k -= p.total
		p.build(p.start, nonEmpty, cfg)
		if k >= p.total {
			skip := k / p.total
			p.start = p.start.Add(time.Duration(skip*p.total) * cfg.Slot)
			k -= skip * p.total
		}
	}
	var end int64
	for _, b := range p.blocks {
		end += b.slots
		if k < end {
			return b.queue, p.start.Add(time.Duration(end) * cfg.Slot)
		}
	}
	return -1, time.Time{} // unreachable: k < total
}
