package phoenix

import "math"

// The worker queue (docs/phoenix.md): late binding, SRPT with Eagle's starvation
// guard, Phoenix's CRV-based order when a queued reservation is contended,
// and sticky batch probing.

// slotFree runs when w's slot is free: it drops reservations whose job has
// nothing left to launch, picks one, and asks its scheduler for a task.
func (s *engine) slotFree(w int) {
	wk := &s.workers[w]
	if wk.busy {
		return
	}
	q := wk.queue[:0]
	for _, r := range wk.queue {
		if r.job.unlaunched() {
			q = append(q, r)
		}
	}
	for k := len(q); k < len(wk.queue); k++ {
		wk.queue[k] = nil
	}
	wk.queue = q
	if len(q) == 0 {
		if s.pol.stealing {
			s.trySteal(w)
		}
		return
	}
	i := s.choose(q)
	p := q[i]
	s.jump(q, i)
	if s.pol.sbp && !p.long {
		p.sticky = true
	} else {
		copy(q[i:], q[i+1:])
		q[len(q)-1] = nil
		wk.queue = q[:len(q)-1]
	}
	wk.busy = true
	s.at(netDelay, event{kind: evGetTask, worker: int32(w), resv: p})
}

// jump charges the reservations ahead of position i with its estimated
// duration (acc) and counts any that exceeds the guard.
func (s *engine) jump(q []*reservation, i int) {
	for _, r := range q[:i] {
		if !r.long || !s.pol.longAtHead {
			r.acc += q[i].est
			r.bypass++
			if r.acc > guardCap*r.est+1e-9 {
				s.guardBreaches++
			}
		}
	}
}

// choose returns the position of the reservation to run next.
func (s *engine) choose(q []*reservation) int {
	if !s.pol.srpt || (s.pol.longAtHead && q[0].long) {
		return 0
	}
	crvMode := false
	if s.pol.reorder && s.crv != nil {
		for _, r := range q {
			if !r.long && s.crv.contended(r.job) {
				crvMode = true
				break
			}
		}
	}
	best := -1
	var bestKey queueKey
	slack := math.Inf(1)
	for i, r := range q {
		guarded := !r.long || !s.pol.longAtHead
		eligible := guarded && r.est <= slack
		if eligible {
			k := s.key(r, crvMode)
			if best < 0 || k.less(bestKey) {
				best, bestKey = i, k
			}
		}
		if guarded {
			slack = min(slack, guardCap*r.est-r.acc)
		}
	}
	if best < 0 {
		return 0
	}
	return best
}

// queueKey orders reservations: contended first, longer class wait first, then
// SRPT, then enqueue order (docs/phoenix.md). Eagle mode leaves the first two
// zero.
type queueKey struct {
	notContended bool
	negWait      float64
	remain       float64
	enq          uint64
}

func (a queueKey) less(b queueKey) bool {
	if a.notContended != b.notContended {
		return !a.notContended
	}
	if a.negWait != b.negWait {
		return a.negWait < b.negWait
	}
	if a.remain != b.remain {
		return a.remain < b.remain
	}
	return a.enq < b.enq
}

func (s *engine) key(r *reservation, crvMode bool) queueKey {
	k := queueKey{remain: r.job.remain, enq: r.enq}
	if crvMode && s.pol.weighted {
		k.remain -= beta * s.crv.jobWait(r.job)
	} else if crvMode {
		if s.crv.contended(r.job) {
			k.negWait = -s.crv.jobWait(r.job)
		} else {
			k.notContended = true
		}
	}
	return k
}
