package sim

import (
	"fmt"

	"github.com/allot-project/allot/coflow"
)

// fairFluid is the engine's fast path for the fair scheduler (event-driven
// runs only). Under per-flow fair sharing every flow of a link (src, dst)
// sends at the same rate, coflow.FairRate(capacity, flows at src's egress,
// flows at dst's ingress), and a completion changes the rates of the links
// at its two port sides only. So instead of recomputing and advancing every
// active flow after each of FB2010's 706,397 completions, it keeps per link
// a virtual clock v (bytes each of its flows has been served since an
// origin), each flow's finishing point on that clock (v at its arrival plus
// its size), and a heap of links by the time their next flow finishes. An
// event then costs O(links at the ports it touches · log links). The rates
// are exactly those coflow.Rates gives (tests compare the two at every
// step).
type fairFluid struct {
	ports    int
	cap      float64
	nE, nI   []int32 // unfinished flows per egress, ingress
	links    []fairLink
	out, in  [][]int32 // active links per egress, ingress port
	heap     []int32   // active links, a min-heap by end
	touchE   []bool
	touchI   []bool
	touched  []int32 // port sides to refresh: egress p is p, ingress p is ports+p
	finished []flowAt
}

type fairLink struct {
	v, t  float64 // virtual clock v as of time t
	rate  float64
	end   float64 // when the flow with the smallest key finishes
	flows []fairEntry
	hpos  int32 // index in heap, -1 when absent
	opos  int32 // index in out[src], in[dst]
	ipos  int32
}

type fairEntry struct {
	key float64
	at  flowAt
}

func newFairFluid(ports int, capacity float64) *fairFluid {
	ff := &fairFluid{ports: ports, cap: capacity, nE: make([]int32, ports), nI: make([]int32, ports),
		links: make([]fairLink, ports*ports), out: make([][]int32, ports), in: make([][]int32, ports),
		touchE: make([]bool, ports), touchI: make([]bool, ports)}
	for i := range ff.links {
		ff.links[i].hpos = -1
	}
	return ff
}

func (ff *fairFluid) touch(src, dst int) {
	if !ff.touchE[src] {
		ff.touchE[src] = true
		ff.touched = append(ff.touched, int32(src))
	}
	if !ff.touchI[dst] {
		ff.touchI[dst] = true
		ff.touched = append(ff.touched, int32(ff.ports+dst))
	}
}

// settle moves link l's clock to now at its current rate.
func (l *fairLink) settle(now float64) {
	l.v += l.rate * (now - l.t)
	l.t = now
}

// join adds flow p (size bytes from src to dst) at now.
func (ff *fairFluid) join(p flowAt, src, dst int, size, now float64) {
	id := int32(src*ff.ports + dst)
	l := &ff.links[id]
	l.settle(now)
	if len(l.flows) == 0 {
		l.opos, l.ipos = int32(len(ff.out[src])), int32(len(ff.in[dst]))
		ff.out[src] = append(ff.out[src], id)
		ff.in[dst] = append(ff.in[dst], id)
	}
	l.flows = append(l.flows, fairEntry{key: l.v + size, at: p})
	entryUp(l.flows, len(l.flows)-1)
	ff.nE[src]++
	ff.nI[dst]++
	ff.touch(src, dst)
}

// refresh recomputes the rates of the links at every touched port side.
func (ff *fairFluid) refresh(now float64) {
	for _, side := range ff.touched {
		var ids []int32
		if p := int(side); p < ff.ports {
			ids, ff.touchE[p] = ff.out[p], false
		} else {
			ids, ff.touchI[p-ff.ports] = ff.in[p-ff.ports], false
		}
		for _, id := range ids {
			l := &ff.links[id]
			l.settle(now)
			src, dst := int(id)/ff.ports, int(id)%ff.ports
			l.rate = coflow.FairRate(ff.cap, int(ff.nE[src]), int(ff.nI[dst]))
			l.end = now + (l.flows[0].key-l.v)/l.rate
			ff.fix(id)
		}
	}
	ff.touched = ff.touched[:0]
}

// next is the time of the next completion (+Inf when none).
func (ff *fairFluid) next(inf float64) float64 {
	if len(ff.heap) == 0 {
		return inf
	}
	return ff.links[ff.heap[0]].end
}

// advance finishes every flow that ends by next (within sameTime) and
// returns them; the rates of the ports they leave wait for refresh.
func (ff *fairFluid) advance(next float64) []flowAt {
	ff.finished = ff.finished[:0]
	for len(ff.heap) > 0 {
		id := ff.heap[0]
		l := &ff.links[id]
		if l.end > next+sameTime {
			break
		}
		l.settle(next)
		src, dst := int(id)/ff.ports, int(id)%ff.ports
		for len(l.flows) > 0 && l.flows[0].key-l.v <= l.rate*sameTime {
			ff.finished = append(ff.finished, l.flows[0].at)
			last := len(l.flows) - 1
			l.flows[0] = l.flows[last]
			l.flows = l.flows[:last]
			entryDown(l.flows, 0)
			ff.nE[src]--
			ff.nI[dst]--
			ff.touch(src, dst)
		}
		if len(l.flows) == 0 {
			ff.drop(id, src, dst)
			continue
		}
		l.end = next + (l.flows[0].key-l.v)/l.rate
		ff.fix(id)
	}
	return ff.finished
}

// drop takes an empty link out of the heap and its ports' lists.
func (ff *fairFluid) drop(id int32, src, dst int) {
	l := &ff.links[id]
	ff.heapRemove(l.hpos)
	o := ff.out[src]
	moved := o[len(o)-1]
	o[l.opos] = moved
	ff.links[moved].opos = l.opos
	ff.out[src] = o[:len(o)-1]
	in := ff.in[dst]
	moved = in[len(in)-1]
	in[l.ipos] = moved
	ff.links[moved].ipos = l.ipos
	ff.in[dst] = in[:len(in)-1]
	l.v, l.t, l.rate = 0, 0, 0
}

// linkRate is the current rate of every flow from src to dst.
func (ff *fairFluid) linkRate(src, dst int) float64 { return ff.links[src*ff.ports+dst].rate }

func entryUp(h []fairEntry, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].key <= h[i].key {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func entryDown(h []fairEntry, i int) {
	for {
		small := i
		if l := 2*i + 1; l < len(h) && h[l].key < h[small].key {
			small = l
		}
		if r := 2*i + 2; r < len(h) && h[r].key < h[small].key {
			small = r
		}
		if small == i {
			return
		}
		h[small], h[i] = h[i], h[small]
		i = small
	}
}

// The link heap orders links by end, then id (determinism).
func (ff *fairFluid) less(a, b int32) bool {
	ea, eb := ff.links[a].end, ff.links[b].end
	return ea < eb || (ea == eb && a < b)
}

func (ff *fairFluid) swap(i, j int) {
	h := ff.heap
	h[i], h[j] = h[j], h[i]
	ff.links[h[i]].hpos, ff.links[h[j]].hpos = int32(i), int32(j)
}

// fix restores the heap after link id's end changed (inserting it if
// absent).
func (ff *fairFluid) fix(id int32) {
	l := &ff.links[id]
	if l.hpos < 0 {
		l.hpos = int32(len(ff.heap))
		ff.heap = append(ff.heap, id)
	}
	i := int(l.hpos)
	if !ff.up(i) {
		ff.down(i)
	}
}

func (ff *fairFluid) up(i int) bool {
	moved := false
	for i > 0 {
		parent := (i - 1) / 2
		if !ff.less(ff.heap[i], ff.heap[parent]) {
			break
		}
		ff.swap(i, parent)
		i, moved = parent, true
	}
	return moved
}

func (ff *fairFluid) down(i int) {
	n := len(ff.heap)
	for {
		small := i
		if l := 2*i + 1; l < n && ff.less(ff.heap[l], ff.heap[small]) {
			small = l
		}
		if r := 2*i + 2; r < n && ff.less(ff.heap[r], ff.heap[small]) {
			small = r
		}
		if small == i {
			return
		}
		ff.swap(i, small)
		i = small
	}
}

func (ff *fairFluid) heapRemove(pos int32) {
	i := int(pos)
	last := len(ff.heap) - 1
	ff.links[ff.heap[i]].hpos = -1
	if i != last {
		ff.heap[i] = ff.heap[last]
		ff.links[ff.heap[i]].hpos = int32(i)
	}
	ff.heap = ff.heap[:last]
	if i != last {
		if !ff.up(i) {
			ff.down(i)
		}
	}
}

// checkFair compares the fast path's rates with coflow.Rates (tests).
func (s *coflowSim) checkFair() {
	want := coflow.Rates(s.dec, s.cap, s)
	n := 0
	for _, r := range want {
		tf := s.lookup(r.Flow.Coflow).tc.Flows[r.Flow.Flow]
		if got := s.fair.linkRate(tf.Src, tf.Dst); got != r.Rate {
			panic(fmt.Sprintf("t=%.6fs: flow %v: fair fast path %v, coflow.Rates %v", s.now, r.Flow, got, r.Rate))
		}
		n++
	}
	active := 0
	for _, c := range s.fair.nE {
		active += int(c)
	}
	if n != active {
		panic(fmt.Sprintf("t=%.6fs: fair fast path has %d flows, coflow.Rates %d", s.now, active, n))
	}
}
