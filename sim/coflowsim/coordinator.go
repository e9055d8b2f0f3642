package coflowsim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/allot-project/allot/coflow"
)

// deliver hands the coordinator everything due at s.now and refreshes the
// rates if needed.
func (s *engine) deliver() error {
	t := clockAt(s.now)
	if len(s.pending) > 0 {
		slices.SortFunc(s.pending, func(a, b flowAt) int {
			return cmp.Or(cmp.Compare(a.c.seq, b.c.seq), cmp.Compare(a.f, b.f))
		})
		for _, p := range s.pending {
			fl := &p.c.flows[p.f]
			err := s.co.FlowCompleted(t, coflow.FlowCompletion{Flow: coflow.FlowRef{Coflow: p.c.id, Flow: p.f},
				Bytes: fl.size, Pilot: fl.pilot})
			if err != nil {
				return fmt.Errorf("t=%.6fs: %w", s.now, err)
			}
			s.load.message(fl.end, fl.src)
			s.load.completions++
			if p.c.unsent--; p.c.unsent == 0 {
				if err := s.retire(t, p.c); err != nil {
					return err
				}
			}
		}
		s.pending = s.pending[:0]
		s.stale = true
	}
	for s.next < len(s.coflows) && s.coflows[s.next].arrival <= s.now+sameTime {
		if err := s.admit(t, s.coflows[s.next]); err != nil {
			return err
		}
		s.next++
		s.stale = true
	}
	if s.active == 0 {
		s.rated = s.rated[:0]
		return nil
	}
	if s.reports && s.now >= float64(s.report)*s.delta-sameTime {
		if err := s.sendReport(t); err != nil {
			return err
		}
		s.report = int64(math.Floor(s.now/s.delta+sameTime)) + 1
	}
	if s.eachDec && s.co.Stale(t) {
		if err := s.sendReport(t); err != nil {
			return err
		}
	}
	d, err := s.co.Decide(t)
	if err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	if d != s.rawDec {
		s.rawDec = d
		if s.orderOnly {
			d = withoutCaps(d)
		}
		s.load.decision(s.now, s.dec, d)
		s.dec, s.stale = d, true
	}
	if s.stale && s.fair != nil {
		s.fair.refresh(s.now)
		if s.checkRates {
			s.checkFair()
		}
		s.stale = false
		s.load.rateRuns++
	} else if s.stale {
		s.setRates()
	}
	return nil
}

func (s *engine) admit(t time.Time, c *coflowState) error {
	spec := coflow.CoflowSpec{ID: c.id, Flows: make([]coflow.FlowSpec, len(c.tc.Flows))}
	c.flows = make([]flowState, len(c.tc.Flows))
	for i, f := range c.tc.Flows {
		spec.Flows[i] = coflow.FlowSpec{Src: coflow.Port(f.Src), Dst: coflow.Port(f.Dst), Size: f.Bytes}
		c.flows[i] = flowState{rem: float64(f.Bytes), size: f.Bytes, src: f.Src}
	}
	if err := s.co.Register(t, spec); err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	info, err := s.co.Info(c.id)
	if err != nil {
		return err
	}
	for _, f := range info.Pilots {
		c.flows[f].pilot = true
	}
	if s.fair != nil {
		for i, f := range c.tc.Flows {
			s.fair.join(flowAt{c, i}, f.Src, f.Dst, float64(f.Bytes), s.now)
		}
	}
	s.byID[c.id] = c
	s.active++
	return nil
}

// retire deregisters a finished coflow.
func (s *engine) retire(t time.Time, c *coflowState) error {
	if info, err := s.co.Info(c.id); err == nil && len(info.Pilots) > 0 {
		c.est = info.EstimatedSize
	}
	if err := s.co.Deregister(t, c.id); err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	delete(s.byID, c.id)
	if s.hit == c {
		s.hit = nil
	}
	c.flows, c.indexes, c.recvRank = nil, nil, nil // the trace keeps the sizes; free the fluid state
	s.active--
	return nil
}

// reportFlow appends flow p's progress to reps if it is unfinished and sent
// bytes since its last report, and counts the agent's message.
func (s *engine) reportFlow(reps []coflow.FlowProgress, p flowAt) []coflow.FlowProgress {
	fl := &p.c.flows[p.f]
	if fl.done {
		return reps
	}
	b := min(fl.size, max(fl.rep, int64(float64(fl.size)-s.remNow(fl))))
	if b == fl.rep {
		return reps
	}
	fl.rep = b
	s.load.message(s.now-sameTime, fl.src)
	return append(reps, coflow.FlowProgress{Flow: coflow.FlowRef{Coflow: p.c.id, Flow: p.f}, Sent: b})
}

// sendReport reports the bytes of every unfinished flow that sent since the
// last report (the others have nothing new to say).
func (s *engine) sendReport(t time.Time) error {
	var reps []coflow.FlowProgress
	if s.maddMode {
		reps = s.maddReport(reps)
	}
	for _, p := range s.sentSet {
		if p.c.flows != nil {
			p.c.flows[p.f].sent = false
			reps = s.reportFlow(reps, p)
		}
	}
	s.sentSet = s.sentSet[:0]
	if len(reps) == 0 {
		return nil
	}
	s.load.reports++
	if err := s.co.Progress(t, reps); err != nil {
		return fmt.Errorf("t=%.6fs: %w", s.now, err)
	}
	return nil
}

// setRates turns the current decision into rates.
func (s *engine) setRates() {
	if s.maddMode {
		s.maddSetRates()
		return
	}
	for _, p := range s.rated {
		if p.c.flows != nil {
			p.c.flows[p.f].rate = 0
		}
	}
	s.rated = s.rated[:0]
	rates := s.fastRates(s.dec)
	if s.checkRates {
		if want := coflow.Rates(s.dec, s.cap, s); !slices.Equal(rates, want) {
			panic(fmt.Sprintf("t=%.6fs: fastRates %v, coflow.Rates %v", s.now, rates, want))
		}
	}
	for _, r := range rates {
		c := s.lookup(r.Flow.Coflow)
		c.flows[r.Flow.Flow].rate = r.Rate
		s.rated = append(s.rated, flowAt{c, r.Flow.Flow})
	}
	s.stale = false
	s.load.rateRuns++
}
