package phoenix

import (
	"cmp"
	"slices"
)

// Demand-shaped short-only partition: Phoenix's resource negotiation between
// its long and short sides (docs/phoenix.md, "Shaping the short-only
// partition"). It is an [R] choice: the paper says Phoenix negotiates
// resources from shared demand and supply, and the design section that would
// say how is lost.
//
// Eagle keeps a fixed short-only partition, a random sample of the fleet, so
// a constrained short job refused by the scarce workers that hold long work
// falls back to the few scarce workers that happen to be short-only. Phoenix
// keeps the partition's size but chooses its members every REPARTITION
// period from the short work each constraint signature brought: the most
// restricted signatures first, each takes a share of the partition in
// proportion to its smoothed short work, from the workers that can serve it,
// so short demand over short-only supply is as even across signatures as the
// fleet allows; unconstrained short work takes what is left. Before the
// first period ends the partition is Eagle's.

const (
	// repartitionCutoffs is REPARTITION as a fraction of the trace's
	// short/long cutoff: a worker that leaves the big partition first
	// drains its long work, so the period scales with long task lengths
	// (113 s Google-like, 27 s Cloudera-like, 9 s Yahoo-like). Repartitioning
	// much faster churns the partition under long work.
	repartitionCutoffs = 0.1
	partitionAlpha     = 0.2 // smoothing of each signature's short work rate
)

// repartitionTicks is the REPARTITION period in CRV periods.
func (s *engine) repartitionTicks() uint64 {
	return uint64(max(1, repartitionCutoffs*s.trace.cutoff/crvPeriod+0.5))
}

// noteShort records an admitted short job's work against its signature.
func (s *engine) noteShort(j *job) {
	j.sig.shortWork += j.spec.est * float64(j.tasks())
}

// repartition reshapes the short-only partition from the smoothed short work
// of every signature, keeping its size.
func (s *engine) repartition() {
	ix := s.ix
	period := float64(s.repartitionTicks()) * crvPeriod
	sigs := make([]*signature, 0, len(ix.sigs))
	total := 0.0
	for _, sg := range ix.sigs {
		rate := sg.shortWork / period
		if s.repartitions == 0 {
			sg.shortRate = rate
		} else {
			sg.shortRate = partitionAlpha*rate + (1-partitionAlpha)*sg.shortRate
		}
		sg.shortWork = 0
		if sg.shortRate > 0 && sg != ix.universe {
			sigs = append(sigs, sg)
		}
		total += sg.shortRate
	}
	size := s.bigFrom
	if total == 0 || size == 0 {
		return
	}
	// Most restricted first; ties by key, so a run is deterministic.
	slices.SortFunc(sigs, func(a, b *signature) int {
		if c := cmp.Compare(len(a.all), len(b.all)); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	next := newBitset(len(s.workers))
	chosen := 0
	for _, sg := range sigs {
		quota := min(int(float64(size)*sg.shortRate/total+0.5), size-chosen)
		chosen += s.pickShortOnly(next, sg.all, quota)
	}
	s.pickShortOnly(next, ix.universe.all, size-chosen)
	ix.setShortOnly(next)
	s.repartitions++
}

// pickShortOnly adds up to n workers of list to next: current members
// first (so the partition moves little), then workers holding no long work
// (useful at once), then any; ascending ids within each pass.
func (s *engine) pickShortOnly(next bitset, list []int32, n int) int {
	got := 0
	for pass := 0; pass < 3 && got < n; pass++ {
		for _, w := range list {
			if got == n {
				break
			}
			if next.has(int(w)) {
				continue
			}
			current := s.ix.shortOnly.has(int(w))
			idle := s.workers[w].longWork == 0
			if (pass == 0 && current) || (pass == 1 && idle) || pass == 2 {
				next.set(int(w))
				got++
			}
		}
	}
	return got
}
