package coflowsim

import (
	"fmt"
	"math"
	"slices"
)

// nextEvent is the time of the next event after s.now.
func (s *engine) nextEvent() (float64, error) {
	next := math.Inf(1)
	if s.fair != nil {
		next = s.fair.next(next)
	}
	if s.maddMode {
		next = s.maddNext(next)
	}
	for _, p := range s.rated {
		if fl := &p.c.flows[p.f]; !fl.done && fl.rate > 0 {
			next = min(next, s.now+fl.rem/fl.rate)
		}
	}
	if s.quantum > 0 {
		// Everything else waits for the grid.
		k := math.Floor(s.now/s.quantum+sameTime) + 1
		if s.active == 0 && s.next < len(s.coflows) {
			k = max(k, math.Ceil(s.coflows[s.next].arrival/s.quantum-sameTime))
		}
		return min(next, k*s.quantum), nil
	}
	if s.next < len(s.coflows) {
		next = min(next, s.coflows[s.next].arrival)
	}
	if s.active > 0 && s.dec != nil && !s.dec.NextChange.IsZero() {
		if nc := clockSeconds(s.dec.NextChange); nc > s.now {
			next = min(next, nc)
		}
	}
	if s.active > 0 && s.reports {
		next = min(next, float64(s.report)*s.delta)
	}
	if math.IsInf(next, 1) || next < s.now {
		return 0, fmt.Errorf("t=%.6fs: stalled with %d coflows unfinished", s.now, s.active)
	}
	return next, nil
}

// advance moves the fluid model to next, finishing the flows that end
// there.
func (s *engine) advance(next float64) {
	dt := next - s.now
	if s.active > 0 {
		s.load.busy(s.now, next)
	}
	finished := false
	if s.fair != nil {
		for _, p := range s.fair.advance(next) {
			s.finish(p, next)
		}
	}
	if s.maddMode {
		s.maddAdvance(next)
	}
	for _, p := range s.rated {
		fl := &p.c.flows[p.f]
		if fl.done || fl.rate <= 0 {
			continue
		}
		if !fl.sent {
			fl.sent = true
			s.sentSet = append(s.sentSet, p)
		}
		if s.now+fl.rem/fl.rate <= next+sameTime {
			s.finish(p, next)
			finished = true
			continue
		}
		fl.rem -= fl.rate * dt
	}
	if finished && s.quantum > 0 {
		// Finished flows keep nothing; the others keep their rates until
		// the grid.
		s.rated = slices.DeleteFunc(s.rated, func(p flowAt) bool { return p.c.flows[p.f].done })
	}
	s.now = next
}

// finish ends flow p at time end.
func (s *engine) finish(p flowAt, end float64) {
	fl := &p.c.flows[p.f]
	if s.maddMode {
		s.maddRelease(fl, p.c.tc.Flows[p.f])
	}
	fl.rem, fl.done, fl.end, fl.rate = 0, true, end, 0
	tf := &p.c.tc.Flows[p.f]
	p.c.finished(p.f, tf.Src, tf.Dst)
	p.c.left--
	if p.c.left == 0 {
		p.c.finish = end
	}
	s.pending = append(s.pending, p)
}
