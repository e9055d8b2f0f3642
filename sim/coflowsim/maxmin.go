package coflowsim

import (
	"cmp"
	"math"
	"slices"

	"github.com/allot-project/allot/internal/heapq"
)

// maxMinFill is fairFluid's rate rule for the fair scheduler: per-flow
// max-min fair rates over the port sides, kept up to date incrementally.
//
// Every flow of a link (src, dst) has the same two constraints, so it gets
// the same max-min rate, and progressive filling can run over links
// weighted by their flow counts m instead of over flows: raise every
// unfrozen link's rate together; when a side saturates (its share, free
// capacity / unfrozen flows, is the smallest) freeze its unfrozen links at
// that level, taking m·level from each one's other side.
//
// A fill is a sequence of levels, and what happens below a level λ depends
// only on the sides that saturate below λ. An event changes flow counts
// only at the sides it touches (T). If no side of T saturated below λ
// before the event, nor saturates below λ after it, every link frozen below
// λ keeps its rate. So the fill keeps its freeze order (links with the
// level that froze them and their count then), and a refill:
//   - takes λ = the smallest over T of the level at which each side
//     saturated before and the level at which it saturates now, links
//     frozen below λ held at their rates (found by water-filling that side
//     alone, an O(deg log deg) sort of its links);
//   - unfreezes the links frozen at λ or above (a suffix of the order),
//     gives back their share at both their sides, and fills again from λ
//     over those links and the links that became active.
//
// Each side's load (the sum of m·rate over its links, as of the last fill)
// gives its free capacity above λ without walking its frozen links. Only
// refilled links whose rate changed (beyond rateNoise) or that gained a
// flow have their clock settled and their end re-keyed in the link heap.
type maxMinFill struct {
	epoch uint32
	// The freeze order: link ids, the level each froze at (nondecreasing)
	// and its flow count then.
	order []int32
	level []float64
	count []int32
	fresh []int32 // links that became active since the last refill

	// Per link, compact (the refill walks thousands of links per event):
	// its place in the freeze order (-1 when absent), its flows, its rate,
	// the refill that collected it, and whether a flow joined since its end
	// was last computed.
	pos    []int32
	cnt    []int32
	rate   []float64
	seenL  []uint32
	joined []bool

	// Per side (egress p is p, ingress p is ports+p).
	sat   []float64 // level it saturated at in the last fill, +Inf if not
	load  []float64 // Σ m·rate over its links, as of the last fill
	rem   []float64 // free capacity during a refill
	share []float64
	n     []int32  // unfrozen flows during a refill
	seen  []uint32 // the refill that counted it
	first []int32  // its refill links: adj[first[s]:first[s]+deg[s]]
	deg   []int32

	sides []int32      // the sides of the refill links
	links []int32      // the refill links
	rl    []fillLink   // and what the fill needs of them, by refill index
	adj   []int32      // refill indices by side
	heap  heapq.IDHeap // refill sides by share (a lower bound); empty between fills
	sort  []satLink
}

// rateNoise is the relative difference under which a refilled link keeps
// its rate: refilling adds the same shares in another order, and re-keying
// every link whose last bits moved would cost a heap fix each.
const rateNoise = 1e-12

type fillLink struct {
	src, dst int32
	m        int32
	frozen   bool
	next     float64 // the rate it froze at
	pos      int32   // and its place in the freeze order
}

type satLink struct {
	rate float64
	m    int32
}

func newMaxMinFill(ports int, on bool) maxMinFill {
	if !on {
		return maxMinFill{}
	}
	n := 2 * ports
	links := ports * ports
	mm := maxMinFill{pos: make([]int32, links), cnt: make([]int32, links), rate: make([]float64, links),
		seenL: make([]uint32, links), joined: make([]bool, links), sat: make([]float64, n), load: make([]float64, n), rem: make([]float64, n),
		share: make([]float64, n), n: make([]int32, n), seen: make([]uint32, n), first: make([]int32, n),
		deg: make([]int32, n)}
	mm.heap.Reset(n)
	for i := range mm.sat {
		mm.sat[i] = math.Inf(1)
	}
	for i := range mm.pos {
		mm.pos[i] = -1
	}
	return mm
}

// sideLinks returns the active links at side s.
func (ff *fairFluid) sideLinks(s int32) []int32 {
	if int(s) < ff.ports {
		return ff.out[s]
	}
	return ff.in[int(s)-ff.ports]
}

// sideFlows is the number of unfinished flows at side s.
func (ff *fairFluid) sideFlows(s int32) int32 {
	if int(s) < ff.ports {
		return ff.nE[s]
	}
	return ff.nI[int(s)-ff.ports]
}

// linkSides are the egress and ingress sides of link id.
func (ff *fairFluid) linkSides(id int32) (int32, int32) {
	return int32(int(id) / ff.ports), int32(ff.ports + int(id)%ff.ports)
}

// saturation is the level at which side s saturates now if the links
// frozen below it keep their rates (a link not in the freeze order counts
// as unfrozen at every level); +Inf if it does not.
func (ff *fairFluid) saturation(s int32) float64 {
	mm := &ff.mm
	mm.sort = mm.sort[:0]
	for _, id := range ff.sideLinks(s) {
		r := math.Inf(1)
		if mm.pos[id] >= 0 {
			r = mm.rate[id]
		}
		mm.sort = append(mm.sort, satLink{rate: r, m: mm.cnt[id]})
	}
	slices.SortFunc(mm.sort, func(a, b satLink) int { return cmp.Compare(a.rate, b.rate) })
	rem, n := ff.cap, ff.sideFlows(s)
	for _, e := range mm.sort {
		if n <= 0 {
			break
		}
		if x := rem / float64(n); x <= e.rate {
			return x
		}
		rem -= float64(e.m) * e.rate
		n -= e.m
	}
	return math.Inf(1)
}

// refreshMaxMin refills from the lowest level the touched sides can change.
func (ff *fairFluid) refreshMaxMin(now float64) {
	mm := &ff.mm
	mm.epoch++
	lambda := math.Inf(1)
	for _, side := range ff.touched {
		if p := int(side); p < ff.ports {
			ff.touchE[p] = false
		} else {
			ff.touchI[p-ff.ports] = false
		}
		lambda = min(lambda, mm.sat[side])
		if n := ff.sideFlows(side); n > 0 && ff.cap/float64(n) < lambda {
			lambda = min(lambda, ff.saturation(side))
		}
	}
	// Unfreeze the suffix at λ and above.
	cut := len(mm.order)
	for cut > 0 && mm.level[cut-1] >= lambda {
		cut--
	}
	mm.sides, mm.links, mm.rl = mm.sides[:0], mm.links[:0], mm.rl[:0]
	for p := cut; p < len(mm.order); p++ {
		id := mm.order[p]
		src, dst := ff.linkSides(id)
		give := float64(mm.count[p]) * mm.level[p]
		mm.load[src] -= give
		mm.load[dst] -= give
		if mm.pos[id] == int32(p) {
			mm.pos[id] = -1
			mm.collect(ff, id)
		}
	}
	for _, id := range mm.fresh {
		if mm.pos[id] < 0 && mm.cnt[id] > 0 && mm.seenL[id] != mm.epoch {
			mm.collect(ff, id)
		}
	}
	mm.fresh = mm.fresh[:0]
	for _, side := range ff.touched {
		mm.sat[side] = math.Inf(1)
	}
	ff.touched = ff.touched[:0]
	mm.order, mm.level, mm.count = mm.order[:cut], mm.level[:cut], mm.count[:cut]
	floor := 0.0
	if cut > 0 {
		floor = mm.level[cut-1]
	}
	mm.fill(ff, floor)
	for k, id := range mm.links {
		f := &mm.rl[k]
		mm.pos[id] = f.pos
		if math.Abs(f.next-mm.rate[id]) <= rateNoise*mm.rate[id] && !mm.joined[id] {
			continue // the same rate, but for the order of float additions
		}
		l := &ff.links[id]
		l.settle(now)
		l.rate, mm.rate[id], mm.joined[id] = f.next, f.next, false
		l.end = now + (l.head-l.v)/l.rate
		ff.fix(id)
	}
}

// collect adds link id to the refill and counts it at its sides.
func (mm *maxMinFill) collect(ff *fairFluid, id int32) {
	mm.seenL[id] = mm.epoch
	mm.links = append(mm.links, id)
	src, dst := ff.linkSides(id)
	m := mm.cnt[id]
	mm.rl = append(mm.rl, fillLink{src: src, dst: dst, m: m})
	for _, s := range [2]int32{src, dst} {
		if mm.seen[s] != mm.epoch {
			mm.seen[s] = mm.epoch
			mm.sides = append(mm.sides, s)
			mm.n[s], mm.deg[s] = 0, 0
		}
		mm.n[s] += m
		mm.deg[s]++
	}
}

// fill freezes the refill links by progressive filling from the sides'
// free capacity, no level below floor (the last level kept). A side's key
// in the heap is a lower bound on its share (shares only rise as links
// freeze elsewhere): a side popped with a stale key goes back with its
// share, and one popped with its share is the smallest.
func (mm *maxMinFill) fill(ff *fairFluid, floor float64) {
	// Lay out each side's refill links.
	off := int32(0)
	for _, s := range mm.sides {
		mm.first[s] = off
		off += mm.deg[s]
		mm.deg[s] = 0
	}
	mm.adj = slices.Grow(mm.adj[:0], int(off))[:off]
	for k := range mm.rl {
		src, dst := mm.rl[k].src, mm.rl[k].dst
		mm.adj[mm.first[src]+mm.deg[src]] = int32(k)
		mm.deg[src]++
		mm.adj[mm.first[dst]+mm.deg[dst]] = int32(k)
		mm.deg[dst]++
	}
	for _, s := range mm.sides {
		mm.sat[s] = math.Inf(1)
		mm.rem[s] = max(0, ff.cap-mm.load[s])
		mm.share[s] = mm.rem[s] / float64(mm.n[s])
		mm.heap.Set(s, mm.share[s])
	}
	for mm.heap.Len() > 0 {
		s := mm.heap.Min().ID
		if mm.n[s] == 0 {
			mm.heap.Remove(s)
			continue
		}
		if cur := mm.rem[s] / float64(mm.n[s]); cur > mm.share[s] {
			mm.share[s] = cur
			mm.heap.Set(s, cur)
			continue
		}
		mm.heap.Remove(s)
		x := max(mm.share[s], floor)
		floor, mm.sat[s] = x, x
		for _, k := range mm.adj[mm.first[s] : mm.first[s]+mm.deg[s]] {
			f := &mm.rl[k]
			if f.frozen {
				continue
			}
			f.frozen = true
			f.next, f.pos = x, int32(len(mm.order))
			mm.order, mm.level, mm.count = append(mm.order, mm.links[k]), append(mm.level, x), append(mm.count, f.m)
			give := float64(f.m) * x
			mm.load[f.src] += give
			mm.load[f.dst] += give
			o := f.src
			if o == s {
				o = f.dst
			}
			mm.rem[o] = max(0, mm.rem[o]-give)
			mm.n[o] -= f.m
		}
	}
}
