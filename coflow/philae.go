package coflow

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// philae is the sampling scheduler (docs/coflow.md). A coflow of at most ThinLimit
// flows is THIN: all its flows are granted at once in the top class. A wider
// coflow PILOTs: a few pilot flows run first, at top priority, and its size
// is estimated from their lengths when the last one finishes; it is then
// placed in a main queue by the Policy metric and moves between queues (to
// the tail) whenever a recomputation finds a different queue.
//
// Grant order (docs/coflow.md): thin coflows by (contention c, arrival); pilot
// flows by coflow arrival; the slot's working queue; the other main queues
// from the top, smallest metric first (Config.QueueFIFO: by entry; policy C:
// by c, then entry); and, when
// WorkConserving, the non-pilot flows of piloting coflows by arrival.
type philae struct {
	cfg    *Config
	fb     *fabric
	load   *pilotLoad
	queues *mainQueues

	thin, piloting, queued []*coflowState // scratch
}

func newPhilae(cfg *Config, fb *fabric) *philae {
	return &philae{cfg: cfg, fb: fb, load: newPilotLoad(cfg.Ports), queues: newMainQueues(cfg)}
}

func (p *philae) admit(c *coflowState) {
	c.queue = -1 // not placed yet
	switch {
	case len(c.flows) <= p.cfg.ThinLimit:
		c.phase = PhaseThin
	case p.cfg.Policy == PolicyC:
		// Least-contention ordering needs no size, so nothing is piloted
		// (the authors' simulator does the same).
		c.phase = PhaseQueued
	default:
		c.phase = PhasePilot
		c.setPilots(p.load.pick(c, pilotCount(len(c.senders), p.cfg.PilotFraction)))
	}
}

func (p *philae) flowFinished(c *coflowState, f int, freed bool) bool {
	recompute := false
	fl := &c.flows[f]
	c.doneSum += fl.sent
	c.doneN++
	if c.phase == PhaseQueued && !fl.pilot && c.doneN > len(c.pilots) {
		// Re-estimation (docs/coflow.md): every finished flow is one more
		// sample of the coflow's flow lengths.
		c.estimate = float64(c.doneSum) / float64(c.doneN)
		if math.Abs(c.estimate-c.usedEst) > reestimateStep*c.usedEst {
			c.usedEst = c.estimate
			recompute = true
		}
	}
	if fl.pilot {
		p.load.add(fl.link, -1)
		c.pilotsLeft--
		if c.pilotsLeft == 0 && c.phase == PhasePilot {
			// l̂ is the mean pilot length; Ŝ = l̂·N (docs/coflow.md).
			var sum int64
			for _, pf := range c.pilots {
				sum += c.flows[pf].sent
			}
			c.estimate = float64(sum) / float64(len(c.pilots))
			c.pilotEst, c.usedEst = c.estimate, c.estimate
			c.phase = PhaseQueued
			recompute = true
		}
	}
	if freed && (p.cfg.Policy == PolicyC || p.cfg.Policy == PolicyD) {
		recompute = true // contention changed (docs/coflow.md)
	}
	return recompute
}

// reestimateStep is how far a re-estimated l̂ must move from the one
// the schedule was last computed with to recompute it.
const reestimateStep = 0.1

// progressed never recomputes: philae's schedule changes on events only.
// Policies B and D read the bytes at the next recomputation.
func (p *philae) progressed([]*coflowState) bool { return false }

func (p *philae) drop(c *coflowState) {
	if c.phase != PhasePilot {
		return
	}
	for _, f := range c.pilots {
		if !c.flows[f].finished {
			p.load.add(c.flows[f].link, -1)
		}
	}
}

func (p *philae) decide(now time.Time, active []*coflowState, d *Decision) {
	p.thin, p.piloting, p.queued = p.thin[:0], p.piloting[:0], p.queued[:0]
	for _, c := range active {
		switch c.phase {
		case PhaseThin:
			p.thin = append(p.thin, c)
		case PhasePilot:
			p.piloting = append(p.piloting, c)
		case PhaseQueued:
			p.queued = append(p.queued, c)
		}
	}
	// Metrics first, then moves, so that policy C's same-queue contention
	// is measured on the queues as they stood.
	for _, c := range p.queued {
		c.metric = p.metric(c)
	}
	for _, c := range p.queued {
		if q := queueOf(p.cfg, c.metric); q != c.queue {
			p.queues.enqueue(c, q)
		}
	}

	for _, c := range p.thin {
		c.metric = float64(p.fb.contention(c, nil))
	}
	slices.SortStableFunc(p.thin, func(a, b *coflowState) int {
		if a.metric != b.metric {
			if a.metric < b.metric {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, c := range p.thin {
		d.Grants = append(d.Grants, Grant{Coflow: c.id, Class: ClassThin, Queue: -1, Flows: c.order, Links: c.links})
	}
	for _, c := range p.piloting {
		d.Grants = append(d.Grants, Grant{Coflow: c.id, Class: ClassPilot, Queue: -1, Flows: c.pilots, Links: c.links})
	}
	p.queues.emit(now, p.queued, p.cfg.Policy == PolicyC || !p.cfg.QueueFIFO, func(c *coflowState) []int { return c.order }, d)
	if p.cfg.WorkConserving {
		for _, c := range p.piloting {
			d.Grants = append(d.Grants, Grant{Coflow: c.id, Class: ClassWorkConserving, Queue: -1,
				Flows: c.others, Links: c.links})
		}
	}
}

// metric is x(C) of the configured policy (docs/coflow.md).
func (p *philae) metric(c *coflowState) float64 {
	n := float64(len(c.flows))
	switch p.cfg.Policy {
	case PolicyA:
		return c.estimate * n
	case PolicyB:
		return math.Max(1, c.estimate*n-float64(c.bytesSent))
	case PolicyC:
		// Other queued coflows in the same queue sharing an active port; a
		// coflow not placed yet is about to enter queue 0.
		qc := max(c.queue, 0)
		return float64(p.fb.contention(c, func(o *coflowState) bool {
			return o.phase == PhaseQueued && max(o.queue, 0) == qc
		}))
	}
	return p.metricD(c)
}

// metricD is Σ over active port sides p of max(1, l̂ − b_p)·k_p, where k_p
// counts the coflows with unfinished flows at p (itself included when
// ContentionIncludesSelf) and b_p is the bytes sent by C's least-advanced
// unfinished flow at p (0 without progress reports).
func (p *philae) metricD(c *coflowState) float64 {
	var bSend, bRecv []int64
	if c.progressed {
		bSend = make([]int64, len(c.senders))
		bRecv = make([]int64, len(c.receivers))
		for i := range bSend {
			bSend[i] = math.MaxInt64
		}
		for i := range bRecv {
			bRecv[i] = math.MaxInt64
		}
		for i := range c.flows {
			if f := &c.flows[i]; !f.finished {
				bSend[f.sendIdx] = min(bSend[f.sendIdx], f.sent)
				bRecv[f.recvIdx] = min(bRecv[f.recvIdx], f.sent)
			}
		}
	}
	self := 0
	if !p.cfg.ContentionIncludesSelf {
		self = 1
	}
	sum := 0.0
	side := func(left []int, ports []Port, sets [][]*coflowState, b []int64) {
		for i, port := range ports {
			if left[i] == 0 {
				continue
			}
			rem := c.estimate
			if b != nil {
				rem -= float64(b[i])
			}
			sum += math.Max(1, rem) * float64(len(sets[port])-self)
		}
	}
	side(c.sendLeft, c.senders, p.fb.egress, bSend)
	side(c.recvLeft, c.receivers, p.fb.ingress, bRecv)
	return sum
}
