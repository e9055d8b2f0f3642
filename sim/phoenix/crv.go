package phoenix

import (
	"math"

	"github.com/allot-project/allot/offers"
)

// The CRV aggregator (docs/phoenix.md): per class, outstanding demand over
// supply with contention hysteresis (offers.ClassLoad), and the M/G/1
// waiting-time estimate. It recomputes every CRV period; node monitors and
// admission read the latest values (the digest), so they are up to one
// period stale.

type crvTracker struct {
	s       *engine
	h       offers.Hysteresis
	all     constraintClass // every task, for r0 and W0
	version uint64
	wmax    float64
	// scarce is the union of the contended classes' workers, for
	// CRV_AWARE_SAMPLING; nil when no class is contended.
	scarce bitset
}

func newCRVTracker(s *engine) *crvTracker {
	c := &crvTracker{s: s, h: offers.DefaultHysteresis(), wmax: 10 * s.trace.cutoff}
	c.all.load.Supply = int64(len(s.workers))
	return c
}

// observe counts m tasks of estimated duration est arriving for class k.
func (k *constraintClass) observe(m, est float64) {
	k.load.Demand += int64(m)
	k.n += m
	k.sum += m * est
	k.sum2 += m * est * est
	k.backlog += m * est
}

// admitted counts an admitted job's tasks as demand on its effective classes.
func (c *crvTracker) admitted(j *job) {
	m := float64(j.tasks())
	for _, id := range j.classes {
		c.s.ix.classes[id].observe(m, j.spec.est)
	}
	c.all.observe(m, j.spec.est)
}

// finished takes one finished task of j off the demand.
func (c *crvTracker) finished(j *job) {
	for _, id := range j.classes {
		k := c.s.ix.classes[id]
		k.load.Demand--
		k.backlog -= j.spec.est
	}
	c.all.load.Demand--
	c.all.backlog -= j.spec.est
}

// tick recomputes ratios, contention and waits (one CRV period).
func (c *crvTracker) tick() {
	c.update(&c.all)
	c.scarce = nil
	for _, k := range c.s.ix.classes {
		c.update(k)
		if k.load.Update(c.h) && c.s.pol.crvSampling {
			if c.scarce == nil {
				c.scarce = newBitset(len(c.s.workers))
			}
			for i, w := range k.bits {
				c.scarce[i] |= w
			}
		}
	}
	c.version++
}

func (c *crvTracker) update(k *constraintClass) {
	rate := k.n / crvPeriod
	if k.n > 0 {
		m1, m2 := k.sum/k.n, k.sum2/k.n
		if k.m1 == 0 {
			k.m1, k.m2 = m1, m2
		} else {
			k.m1 = crvAlpha*m1 + (1-crvAlpha)*k.m1
			k.m2 = crvAlpha*m2 + (1-crvAlpha)*k.m2
		}
	}
	k.lam = crvAlpha*rate + (1-crvAlpha)*k.lam
	k.n, k.sum, k.sum2 = 0, 0, 0
	k.wait = waitEstimate(k.lam, k.m1, k.m2, float64(k.load.Supply), k.backlog, c.wmax)
}

// waitEstimate is the per-slot Pollaczek-Khinchine mean wait of docs/phoenix.md:
// arrival rate lam over s slots, service moments m1 and m2, with the fluid
// estimate backlog/s when a slot's utilisation reaches RHO_CAP; capped at
// wmax.
func waitEstimate(lam, m1, m2, s, backlog, wmax float64) float64 {
	if s <= 0 {
		return math.Inf(1)
	}
	lamW := lam / s
	rho := lamW * m1
	var w float64
	if rho < rhoCap {
		w = lamW * m2 / (2 * (1 - rho))
	} else {
		w = backlog / s
	}
	return min(w, wmax)
}

// contended reports whether any effective class of j is contended in the
// current digest.
func (c *crvTracker) contended(j *job) bool {
	for _, id := range j.classes {
		if c.s.ix.classes[id].load.Contended {
			return true
		}
	}
	return false
}

// jobWait is W(t): the largest class wait of j's classes, W0 without any.
func (c *crvTracker) jobWait(j *job) float64 {
	if len(j.classes) == 0 {
		return c.all.wait
	}
	w := 0.0
	for _, id := range j.classes {
		w = max(w, c.s.ix.classes[id].wait)
	}
	return w
}

// setWait is W(K) over class ids (docs/phoenix.md), W0 for none.
func (c *crvTracker) setWait(ids []int) float64 {
	if len(ids) == 0 {
		return c.all.wait
	}
	w := 0.0
	for _, id := range ids {
		w = max(w, c.s.ix.classes[id].wait)
	}
	return w
}
