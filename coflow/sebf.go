package coflow

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// sebf is Varys (clairvoyant): coflows in ascending order of their
// effective bottleneck Γ = max over port sides of the coflow's remaining
// bytes there / capacity, ties by arrival. Each coflow in turn gets MADD
// rates: with Γ' its bottleneck over the capacity the coflows ahead of it
// left, every flow gets remaining/Γ', so all its flows finish together at
// Γ'. A coflow with a port left without capacity gets no MADD rates and
// only the leftover (Rates' second pass). Remaining bytes are the sizes
// minus the bytes reported sent: the simulator sends a progress report
// before asking for a decision. Recomputes on every arrival and completion.
type sebf struct {
	cfg          *Config
	freeE, freeI []float64 // scratch
	sendRem      []float64
	recvRem      []float64
}

func newSEBF(cfg *Config) *sebf {
	return &sebf{cfg: cfg, freeE: make([]float64, cfg.Ports), freeI: make([]float64, cfg.Ports)}
}

func (s *sebf) admit(c *coflowState)                      { c.phase = PhaseQueued }
func (s *sebf) flowFinished(*coflowState, int, bool) bool { return true }
func (s *sebf) progressed([]*coflowState) bool            { return false }
func (s *sebf) drop(*coflowState)                         {}

// portRemaining fills the remaining bytes of c per sender and receiver.
func (s *sebf) portRemaining(c *coflowState) {
	s.sendRem = slices.Grow(s.sendRem[:0], len(c.senders))[:len(c.senders)]
	s.recvRem = slices.Grow(s.recvRem[:0], len(c.receivers))[:len(c.receivers)]
	clear(s.sendRem)
	clear(s.recvRem)
	for i := range c.flows {
		if f := &c.flows[i]; !f.finished {
			r := float64(max(0, f.size-f.sent))
			s.sendRem[f.sendIdx] += r
			s.recvRem[f.recvIdx] += r
		}
	}
}

func (s *sebf) decide(_ time.Time, active []*coflowState, d *Decision) {
	order := slices.Clone(active)
	for _, c := range order {
		s.portRemaining(c)
		worst := 0.0
		for _, r := range s.sendRem {
			worst = max(worst, r)
		}
		for _, r := range s.recvRem {
			worst = max(worst, r)
		}
		c.metric = worst / s.cfg.Capacity
	}
	slices.SortStableFunc(order, func(a, b *coflowState) int {
		if a.metric != b.metric {
			if a.metric < b.metric {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for p := range s.freeE {
		s.freeE[p], s.freeI[p] = s.cfg.Capacity, s.cfg.Capacity
	}
	for _, c := range order {
		d.Grants = append(d.Grants, s.madd(c))
	}
}

// madd grants c's unfinished flows with MADD rate caps on what is left.
func (s *sebf) madd(c *coflowState) Grant {
	g := Grant{Coflow: c.id, Class: ClassQueue, Queue: -1, Links: c.links}
	for _, f := range c.order {
		if !c.flows[f].finished {
			g.Flows = append(g.Flows, f)
		}
	}
	g.Caps = make([]float64, len(g.Flows))
	s.portRemaining(c)
	gamma := 0.0
	for i, p := range c.senders {
		if s.sendRem[i] > 0 {
			gamma = max(gamma, s.sendRem[i]/s.freeE[p]) // +Inf when the port is full
		}
	}
	for i, p := range c.receivers {
		if s.recvRem[i] > 0 {
			gamma = max(gamma, s.recvRem[i]/s.freeI[p])
		}
	}
	if gamma == 0 || math.IsInf(gamma, 1) {
		return g // nothing left to send, or a port is full: leftovers only
	}
	for i, f := range g.Flows {
		fl := &c.flows[f]
		r := float64(max(0, fl.size-fl.sent)) / gamma
		g.Caps[i] = r
		s.freeE[fl.link.Src] = max(0, s.freeE[fl.link.Src]-r)
		s.freeI[fl.link.Dst] = max(0, s.freeI[fl.link.Dst]-r)
	}
	return g
}
