package coflowsim

import (
	"fmt"
	"math"
	mbits "math/bits"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/internal/heapq"
)

// maddRates is coflow.Rates for sebf's and fifo's capped decisions, made
// cheap enough to run after every completion on FB2010, where MADD keeps
// tens of thousands of flows in flight. It gives the same rates (tests
// compare the two at every step, up to float rounding):
//
// The caps fit the ports by construction, so Rates' first pass gives every
// unfinished flow exactly its cap, and only its second pass (the capacity
// the caps leave, handed out greedily in grant order) changes between
// decisions. So the caps are laid out once per decision, with each port
// side's residual capacity; a completion returns its cap to its two port
// sides; and the second pass is redone over the port sides with residual
// capacity only, serving each grant through its grantIndex (free senders ×
// free receivers, as fastRates does). A flow's bytes left are brought up to
// date only when its rate changes or a report needs them, and a heap keyed
// by end time (stale entries skipped by version) gives the next completion.
type maddRates struct {
	dec        *coflow.Decision
	cs         []*coflowState        // per grant
	ix         []*grantIndex         // per grant
	flows      []flowAt              // unfinished flows of the decision when it came
	resE, resI []float64             // capacity minus the caps of unfinished flows
	fE, fI     []float64             // scratch: what the second pass has left
	extra      []flowAt              // flows with a second-pass share
	prev       []flowAt              // scratch: extra of the previous pass
	ends       *heapq.Heap[endEntry] // by end; superseded entries stay until popped
}

type endEntry struct {
	end float64
	p   flowAt
	ver uint32
}

// endsFirst orders end entries by end, then by coflow and flow, so that
// flows ending together finish in trace order.
func endsFirst(a, b endEntry) bool {
	if a.end != b.end {
		return a.end < b.end
	}
	return a.p.c.seq < b.p.c.seq || (a.p.c.seq == b.p.c.seq && a.p.f < b.p.f)
}

// remNow is a flow's bytes left at s.now.
func (s *engine) remNow(fl *flowState) float64 {
	if !s.maddMode || fl.done {
		return fl.rem
	}
	return max(0, fl.rem-fl.rate*(s.now-fl.at))
}

// setRate changes p's rate at s.now.
func (s *engine) setRate(p flowAt, rate float64) {
	fl := &p.c.flows[p.f]
	if fl.rate == rate {
		return
	}
	fl.rem = s.remNow(fl)
	fl.at, fl.rate = s.now, rate
	fl.ver++
	if rate > 0 {
		s.mr.ends.Push(endEntry{end: s.now + fl.rem/rate, p: p, ver: fl.ver})
	}
}

// maddReport lists the bytes sent by every unfinished flow of the decision
// whose count changed since its last report (madd mode reports before each
// new decision only, so walking them all is cheap).
func (s *engine) maddReport(reps []coflow.FlowProgress) []coflow.FlowProgress {
	for _, p := range s.mr.flows {
		if p.c.flows != nil {
			reps = s.reportFlow(reps, p)
		}
	}
	return reps
}

// maddRelease returns a finishing flow's cap to its port sides.
func (s *engine) maddRelease(fl *flowState, tf TraceFlow) {
	s.mr.resE[tf.Src] += fl.cap
	s.mr.resI[tf.Dst] += fl.cap
	fl.cap = 0
}

// maddSetRates lays out a new decision's caps (or keeps the current one's)
// and redoes the second pass.
func (s *engine) maddSetRates() {
	m := &s.mr
	eps := s.cap * 1e-12
	if len(m.resE) != s.dec.Ports {
		m.resE, m.resI = make([]float64, s.dec.Ports), make([]float64, s.dec.Ports)
		m.fE, m.fI = make([]float64, s.dec.Ports), make([]float64, s.dec.Ports)
		s.busyE, s.busyI = make([]bool, s.dec.Ports), make([]bool, s.dec.Ports)
		s.freeE, s.freeI = newPortSet(s.dec.Ports), newPortSet(s.dec.Ports)
	}
	fresh := s.dec != m.dec
	if fresh {
		for _, p := range m.flows {
			if p.c.flows != nil && !p.c.flows[p.f].done {
				p.c.flows[p.f].cap, p.c.flows[p.f].share = 0, 0
				s.setRate(p, 0)
			}
		}
		m.dec, m.cs, m.ix, m.flows, m.extra = s.dec, m.cs[:0], m.ix[:0], m.flows[:0], m.extra[:0]
		m.ends.Reset() // every flow gets a fresh entry below
		for p := range m.resE {
			m.resE[p], m.resI[p] = s.cap, s.cap
		}
		for gi := range s.dec.Grants {
			g := &s.dec.Grants[gi]
			c := s.lookup(g.Coflow)
			var ix *grantIndex
			if c != nil && len(g.Flows) > 0 {
				ix = c.index(g.Flows, g.Links, s.dec.Ports)
			}
			m.cs, m.ix = append(m.cs, c), append(m.ix, ix)
			if ix == nil {
				continue
			}
			for i, f := range g.Flows {
				fl := &c.flows[f]
				if fl.done {
					continue
				}
				capF := 0.0
				if len(g.Caps) == len(g.Flows) && g.Caps[i] > eps {
					capF = g.Caps[i]
				}
				fl.cap = capF
				l := g.Links[f]
				m.resE[l.Src] -= capF
				m.resI[l.Dst] -= capF
				m.flows = append(m.flows, flowAt{c, f})
			}
		}
	}
	s.secondPass(eps, fresh)
	if s.checkRates {
		s.checkMADD()
	}
	s.stale = false
	s.load.rateRuns++
}

// secondPass hands the residual capacity out in grant order and applies
// the rates that changed: every flow's after a new layout (fresh), else
// those of the flows that had or now have a share.
func (s *engine) secondPass(eps float64, fresh bool) {
	m := &s.mr
	m.prev = append(m.prev[:0], m.extra...)
	m.extra = m.extra[:0]
	for _, p := range m.prev {
		if p.c.flows != nil {
			p.c.flows[p.f].share = 0
		}
	}
	s.freeE.fill()
	s.freeI.fill()
	for p := range m.fE {
		m.fE[p], m.fI[p] = m.resE[p], m.resI[p]
		if s.busyE[p] = m.fE[p] <= eps; s.busyE[p] {
			s.freeE.remove(p)
		}
		if s.busyI[p] = m.fI[p] <= eps; s.busyI[p] {
			s.freeI.remove(p)
		}
	}
	var c *coflowState
	take := func(_ *coflow.Grant, f int, l coflow.Link) {
		r := min(m.fE[l.Src], m.fI[l.Dst])
		if r <= eps {
			return
		}
		c.flows[f].share = r
		m.extra = append(m.extra, flowAt{c, f})
		if m.fE[l.Src] -= r; m.fE[l.Src] <= eps {
			s.busyE[l.Src] = true
			s.freeE.remove(int(l.Src))
		}
		if m.fI[l.Dst] -= r; m.fI[l.Dst] <= eps {
			s.busyI[l.Dst] = true
			s.freeI.remove(int(l.Dst))
		}
	}
	for gi := range m.dec.Grants {
		if len(s.freeE.list) == 0 || len(s.freeI.list) == 0 {
			break
		}
		ix := m.ix[gi]
		if c = m.cs[gi]; ix == nil || c.flows == nil {
			continue
		}
		s.serve(ix, c, &m.dec.Grants[gi], take)
	}
	if fresh {
		for _, p := range m.flows {
			if fl := &p.c.flows[p.f]; !fl.done {
				s.setRate(p, fl.cap+fl.share)
			}
		}
		return
	}
	for _, p := range m.prev {
		if p.c.flows != nil && !p.c.flows[p.f].done {
			s.setRate(p, p.c.flows[p.f].cap+p.c.flows[p.f].share)
		}
	}
	for _, p := range m.extra {
		s.setRate(p, p.c.flows[p.f].cap+p.c.flows[p.f].share)
	}
}

// serve runs the second pass over one grant: each free sender takes, in
// receiver order, its unfinished flows to free receivers until it or they
// run out.
func (s *engine) serve(ix *grantIndex, c *coflowState, g *coflow.Grant, take func(*coflow.Grant, int, coflow.Link)) {
	if ix.pos == nil {
		// No receiver bits without a position index (ix.words is 0).
		s.walk(ix, c, g, take)
		return
	}
	sendMask := growMask(&s.sendMask, (len(ix.senders)+63)/64)
	if freeMask(sendMask, ix.senders, ix.sendSlot, ix.sendLeft, s.busyE, s.freeE.list) == 0 {
		return
	}
	mask := growMask(&s.mask, ix.words)
	if freeMask(mask, ix.receivers, ix.recvSlot, ix.recvLeft, s.busyI, s.freeI.list) == 0 {
		return
	}
	words, nr := ix.words, len(ix.receivers)
	for sw, sbits := range sendMask {
		for ; sbits != 0; sbits &= sbits - 1 {
			si := sw<<6 + mbits.TrailingZeros64(sbits)
			src := ix.senders[si]
			row := ix.unfinished[si*words : (si+1)*words]
			for w := 0; w < words && !s.busyE[src]; w++ {
				for x := row[w] & mask[w]; x != 0 && !s.busyE[src]; x &= x - 1 {
					r := w<<6 + mbits.TrailingZeros64(x)
					f := g.Flows[ix.pos[si*nr+r]]
					l := g.Links[f]
					take(g, f, l)
					if s.busyI[l.Dst] {
						mask[w] &^= 1 << (r & 63)
					}
				}
			}
		}
	}
}

// maddNext is the next completion in madd mode, or inf.
func (s *engine) maddNext(inf float64) float64 {
	for e, ok := s.mr.ends.Peek(); ok; e, ok = s.mr.ends.Peek() {
		if e.p.c.flows != nil && !e.p.c.flows[e.p.f].done && e.p.c.flows[e.p.f].ver == e.ver {
			return e.end
		}
		s.mr.ends.Pop()
	}
	return inf
}

// maddAdvance finishes the flows that end by next.
func (s *engine) maddAdvance(next float64) {
	for s.maddNext(math.Inf(1)) <= next+sameTime {
		s.finish(s.mr.ends.Pop().p, next)
	}
}

// checkMADD compares the rates with coflow.Rates (tests).
func (s *engine) checkMADD() {
	want := coflow.Rates(s.dec, s.cap, s)
	tol := s.cap * 1e-9
	n := 0
	for _, r := range want {
		c := s.lookup(r.Flow.Coflow)
		if got := c.flows[r.Flow.Flow].rate; math.Abs(got-r.Rate) > tol {
			panic(fmt.Sprintf("t=%.6fs: flow %v: madd rates %v, coflow.Rates %v", s.now, r.Flow, got, r.Rate))
		}
		n++
	}
	have := 0
	for _, p := range s.mr.flows {
		if fl := &p.c.flows[p.f]; !fl.done && fl.rate > tol {
			have++
		}
	}
	if have != n {
		panic(fmt.Sprintf("t=%.6fs: madd rates give %d flows a rate, coflow.Rates %d", s.now, have, n))
	}
}
