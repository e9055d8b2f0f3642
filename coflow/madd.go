package coflow

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// madd covers the two coflow-level schedulers that give rates with Varys's
// MADD (minimum allocation for desired duration):
//   - sebf (Varys, clairvoyant): coflows in ascending order of their
//     effective bottleneck Γ = max over port sides of the coflow's remaining
//     bytes there / capacity, ties by arrival;
//   - fifo: coflows in arrival order (the reference simulator's coflow-level
//     FIFO, the baseline the Philae and Aalo papers compare against).
//
// Each coflow in turn gets MADD rates on the capacity the coflows ahead of
// it left: with Γ' its bottleneck over that capacity, every unfinished flow
// gets remaining/Γ', so all its flows would finish together at Γ'. A coflow
// with remaining bytes at a port side that has nothing left gets no MADD
// rates, only the leftover (Rates' second pass, in the same order: Varys's
// work conservation). Remaining bytes are the sizes minus the bytes reported
// sent: the caller sends a progress report before a decision is computed
// (see Coordinator.Stale).
//
// As in Varys and the reference simulator, the order and the MADD caps are
// recomputed when a coflow arrives or leaves, not on every flow completion:
// MADD makes a coflow's flows end together, so a completion inside a
// coflow changes no cap worth a recomputation, and recomputing Γ over every
// flow of every coflow after each of FB2010's 706,397 completions is what
// made a full-trace run take hours. Between decisions the caps stand and
// Rates, re-run after each completion, hands the capacity finished flows
// free to the others in the same order (work conservation).
type madd struct {
	cfg     *Config
	byGamma bool
	freeE   []float64 // scratch: capacity left per egress, ingress
	freeI   []float64
	order   []*coflowState
}

func newMADD(cfg *Config, byGamma bool) *madd {
	return &madd{cfg: cfg, byGamma: byGamma, freeE: make([]float64, cfg.Ports), freeI: make([]float64, cfg.Ports)}
}

func (s *madd) admit(c *coflowState)                      { c.phase = PhaseQueued }
func (s *madd) flowFinished(*coflowState, int, bool) bool { return false }
func (s *madd) progressed([]*coflowState) bool            { return false }
func (s *madd) drop(*coflowState)                         {}

// bottleneck is c's largest remaining bytes at one port side.
func bottleneck(c *coflowState) int64 {
	worst := int64(0)
	for _, r := range c.sendRem {
		worst = max(worst, r)
	}
	for _, r := range c.recvRem {
		worst = max(worst, r)
	}
	return worst
}

func (s *madd) decide(_ time.Time, active []*coflowState, d *Decision) {
	s.order = append(s.order[:0], active...)
	for _, c := range s.order {
		c.metric = float64(bottleneck(c)) / s.cfg.Capacity
	}
	if s.byGamma {
		slices.SortStableFunc(s.order, func(a, b *coflowState) int {
			return cmp.Or(cmp.Compare(a.metric, b.metric), cmp.Compare(a.seq, b.seq))
		})
	}
	for p := range s.freeE {
		s.freeE[p], s.freeI[p] = s.cfg.Capacity, s.cfg.Capacity
	}
	d.Grants = slices.Grow(d.Grants, len(s.order))
	for _, c := range s.order {
		d.Grants = append(d.Grants, s.grant(c))
	}
	clear(s.order)
}

// grant lists c's flows with MADD rate caps on what is left. The list is
// c's canonical order, finished flows included (with cap 0), so that it is
// the same slice in every decision and consumers can index it once.
func (s *madd) grant(c *coflowState) Grant {
	g := Grant{Coflow: c.id, Class: ClassQueue, Queue: -1, Links: c.links, Flows: c.order,
		Caps: make([]float64, len(c.order))}
	gamma := 0.0
	for i, p := range c.senders {
		if c.sendRem[i] > 0 {
			gamma = max(gamma, float64(c.sendRem[i])/s.freeE[p]) // +Inf when the port is full
		}
	}
	for i, p := range c.receivers {
		if c.recvRem[i] > 0 {
			gamma = max(gamma, float64(c.recvRem[i])/s.freeI[p])
		}
	}
	if gamma == 0 || math.IsInf(gamma, 1) {
		return g // nothing left to send, or a port is full: leftovers only
	}
	for i, f := range g.Flows {
		fl := &c.flows[f]
		if fl.finished {
			continue
		}
		r := float64(fl.remaining()) / gamma
		g.Caps[i] = r
		s.freeE[fl.link.Src] = max(0, s.freeE[fl.link.Src]-r)
		s.freeI[fl.link.Dst] = max(0, s.freeI[fl.link.Dst]-r)
	}
	return g
}
