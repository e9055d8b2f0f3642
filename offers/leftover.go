package offers

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// LeftoverOrder says how the leftover phase shares an agent's leftover pool
// among the frameworks' optional work (docs/carbyne.md).
type LeftoverOrder string

// The leftover orders. JCTFirst is the default.
const (
	// LeftoverJCTFirst serves frameworks closest to completion first: in
	// ascending remaining work (SRTF; unknown work last, ties by creation
	// order), each takes as many of its optional tasks as fit the agent,
	// choosing among its shapes by Tetris alignment.
	LeftoverJCTFirst LeftoverOrder = "jct-first"
	// LeftoverEfficiencyFirst packs for utilisation: it repeatedly places
	// the (framework, shape) pair with the best Tetris score, alignment
	// less ε·remaining work when Config.LeftoverWorkWeight is set.
	LeftoverEfficiencyFirst LeftoverOrder = "efficiency-first"
)

// LeftoverOrders lists every leftover order, default first.
func LeftoverOrders() []LeftoverOrder {
	return []LeftoverOrder{LeftoverJCTFirst, LeftoverEfficiencyFirst}
}

// ParseLeftoverOrder resolves a leftover order name.
func ParseLeftoverOrder(name string) (LeftoverOrder, error) {
	names := make([]string, 0, 2)
	for _, o := range LeftoverOrders() {
		if string(o) == name {
			return o, nil
		}
		names = append(names, string(o))
	}
	return "", fmt.Errorf("%w: leftover order %q (want one of %s)", ErrInvalid, name, strings.Join(names, ", "))
}

// workKey is a framework's SRTF key: its remaining work, unknown last.
func (f *framework) workKey() float64 {
	if f.work > 0 {
		return f.work
	}
	return math.Inf(1)
}

// leftoverCandidates returns the frameworks with pending optional tasks,
// in SRTF order: remaining work ascending, unknown last, then creation
// order. The slice is scratch space for one round.
func (a *Allocator) leftoverCandidates() []*framework {
	if len(a.leftover.spare) == 0 {
		return nil
	}
	if !a.leftover.spareSorted {
		slices.SortStableFunc(a.leftover.spare, func(x, y *framework) int {
			if c := cmp.Compare(x.workKey(), y.workKey()); c != 0 {
				return c
			}
			return cmp.Compare(x.leaf.seq, y.leaf.seq)
		})
		a.leftover.spareSorted = true
	}
	out := a.leftover.spareBuf[:0]
	for _, f := range a.leftover.spare {
		if f.wantsLeftover() {
			out = append(out, f)
		}
	}
	a.leftover.spareBuf = out
	return out
}

// turnLeftover fits the candidates' optional tasks into what the fair
// phase left free on t.ag, and returns the candidates that still have
// pending optional tasks.
func (a *Allocator) turnLeftover(t *turn, cands []*framework) []*framework {
	if len(cands) == 0 {
		return cands
	}
	t.phase = phaseLeftover
	switch {
	case a.cfg.LeftoverOrder == LeftoverEfficiencyFirst && a.cfg.LeftoverWorkWeight == 0 && !a.leftover.generalPack:
		a.packByAlignment(t, cands)
	case a.cfg.LeftoverOrder == LeftoverEfficiencyFirst:
		a.packEfficient(t, cands)
	default:
		for _, f := range cands {
			if t.ag.free.isZero() && len(t.ag.freePorts) == 0 {
				break
			}
			if a.refused(t, f) {
				continue
			}
			for {
				s, _ := a.bestSpare(t, f)
				if s == nil {
					break
				}
				a.giveSpare(t, f, s)
			}
		}
	}
	return slices.DeleteFunc(cands, func(f *framework) bool { return !f.wantsLeftover() })
}

// bestSpare returns f's pending optional shape that fits t.ag with the
// highest alignment (the first declared on a tie), and that alignment.
func (a *Allocator) bestSpare(t *turn, f *framework) (*shape, float64) {
	var best *shape
	bestAlign := 0.0
	for _, s := range f.optional {
		if s.pending() == 0 || !a.fitsTurn(t, s) || !a.withinLimits(f, s.res) {
			continue
		}
		if x := alignment(t.ag, s); best == nil || x > bestAlign {
			best, bestAlign = s, x
		}
	}
	return best, bestAlign
}

// spareChoice is one framework's best-aligned candidate on the agent.
type spareChoice struct {
	f     *framework
	s     *shape
	align float64
}

// packEfficient repeatedly places the (framework, shape) pair with the
// highest score on t.ag until nothing fits. The score is the alignment,
// less ε·work when Config.LeftoverWorkWeight (m) is positive, with
// ε = m·ā/p̄ over the current candidates (unknown work counts as the
// largest known). Each framework's best-aligned shape is its only
// candidate: the work term is the same for all its shapes. Ties go to the
// earlier framework in SRTF order.
func (a *Allocator) packEfficient(t *turn, cands []*framework) {
	m := a.cfg.LeftoverWorkWeight
	for {
		choices := a.leftover.choiceBuf[:0]
		for _, f := range cands {
			if t.ag.free.isZero() && len(t.ag.freePorts) == 0 {
				break
			}
			if a.refused(t, f) {
				continue
			}
			if s, x := a.bestSpare(t, f); s != nil {
				choices = append(choices, spareChoice{f: f, s: s, align: x})
			}
		}
		a.leftover.choiceBuf = choices
		if len(choices) == 0 {
			return
		}
		eps, pMax := 0.0, 0.0
		if m > 0 {
			sumA, sumP, known := 0.0, 0.0, 0
			for _, c := range choices {
				sumA += c.align
				if c.f.work > 0 {
					sumP += c.f.work
					pMax = max(pMax, c.f.work)
					known++
				}
			}
			if known > 0 {
				sumP += float64(len(choices)-known) * pMax
				eps = float64(m*sumA) / sumP
			}
		}
		best, bestScore := -1, 0.0
		for i, c := range choices {
			score := c.align
			if eps > 0 {
				p := c.f.work
				if p <= 0 {
					p = pMax
				}
				score -= float64(eps * p)
			}
			if best < 0 || score > bestScore {
				best, bestScore = i, score
			}
		}
		a.giveSpare(t, choices[best].f, choices[best].s)
	}
}

// alignment is the Tetris alignment of a task shape with an agent's free
// resources, Σ_r (req_r/cap_r)·(free_r/cap_r) over the scalar resources
// the agent has. Each product is rounded before it is added, so no fused
// multiply-add can change a decision from one platform to another.
func alignment(ag *agent, s *shape) float64 {
	x := 0.0
	for j, r := range s.res {
		c := ag.total.at(j)
		if r == 0 || c <= 0 {
			continue
		}
		x += float64(float64(r) / float64(c) * (float64(ag.free.at(j)) / float64(c)))
	}
	return x
}

// fitsTurn reports whether one task of s fits t.ag's free resources and
// ports and satisfies its hard constraints there.
func (a *Allocator) fitsTurn(t *turn, s *shape) bool {
	if !t.ag.free.fits(s.res) || s.ports > 0 && t.ag.freePorts.Count() < s.ports || !devicesFit(t.ag.free, t.ag.gpuDims, s.gpu) ||
		t.kept && !s.large() {
		return false
	}
	return !s.constrained() || a.hardOn(t, s)
}

// giveSpare tentatively gives one optional task of shape s on t.ag to f,
// in f's leftover offer there.
func (a *Allocator) giveSpare(t *turn, f *framework, s *shape) {
	b := t.spare[f]
	if b == nil {
		b = &building{fw: f, kind: KindLeftover, units: map[string]int64{}}
		t.spare[f] = b
		t.offers = append(t.offers, b)
	}
	a.addUnit(t, b, s)
}

// leftoverState is what the leftover phase keeps between rounds: the
// frameworks with leftover candidates and its scratch.
type leftoverState struct {
	// spare are the frameworks with leftover candidates, in
	// shortest-remaining-work order once sorted.
	spare       []*framework
	spareSorted bool
	spareBuf    []*framework  // scratch: one round's candidates
	choiceBuf   []spareChoice // scratch: efficiency-first candidates
	groupBuf    []packGroup   // scratch: efficiency-first shape groups
	groupIdx    map[string]int
	// generalPack makes efficiency-first use the general packer even
	// without a work term (tests compare the two).
	generalPack bool
}
