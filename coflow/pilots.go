package coflow

import (
	"math"
	"slices"
)

// pilotCount is m = min(s, max(1, ⌊ρ·s⌋)) for a coflow with s senders
// (docs/coflow.md). The tiny epsilon keeps ρ·s = 3.0000000000000004 and
// 2.9999999999999996 both at 3.
func pilotCount(senders int, rho float64) int {
	m := int(math.Floor(rho*float64(senders) + 1e-9))
	return min(senders, max(1, m))
}

// pilotLoad counts, per port side, the unfinished pilot flows crossing it:
// how busy a port is for pilot placement (docs/coflow.md).
type pilotLoad struct {
	egress, ingress []int
}

func newPilotLoad(ports int) *pilotLoad {
	return &pilotLoad{egress: make([]int, ports), ingress: make([]int, ports)}
}

func (l *pilotLoad) add(link Link, delta int) {
	l.egress[link.Src] += delta
	l.ingress[link.Dst] += delta
}

// pick chooses m pilot flows of c, at most one per sender (docs/coflow.md): take
// the sender with the fewest pilots crossing it, then the least-loaded
// receiver that has a flow of c from that sender; count the new pilot and
// repeat. Ties go to the port that appears first in c's flow list, as the
// authors' stable sort does. It updates the load and returns flow indices in
// the order they were picked.
func (l *pilotLoad) pick(c *coflowState, m int) []int {
	byPair := make(map[Link]int, len(c.flows))
	for i, f := range c.flows {
		byPair[f.link] = i
	}
	cand := slices.Clone(c.senders)
	recv := make([]int, len(c.receivers)) // indices into c.receivers
	pilots := make([]int, 0, m)
	for len(pilots) < m && len(cand) > 0 {
		best := 0
		for i, s := range cand {
			if l.egress[s] < l.egress[cand[best]] {
				best = i
			}
		}
		s := cand[best]
		cand = slices.Delete(cand, best, best+1)
		for i := range recv {
			recv[i] = i
		}
		slices.SortFunc(recv, func(a, b int) int {
			if d := l.ingress[c.receivers[a]] - l.ingress[c.receivers[b]]; d != 0 {
				return d
			}
			return a - b
		})
		for _, ri := range recv {
			if f, ok := byPair[Link{Src: s, Dst: c.receivers[ri]}]; ok {
				pilots = append(pilots, f)
				l.add(c.flows[f].link, 1)
				break
			}
		}
	}
	return pilots
}
