package coflowsim

import (
	"fmt"
	"math"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/internal/heapq"
)

// fairFluid is the engine's fast path for the fair and fair-split
// schedulers (event-driven runs only). Under both, every flow of a link
// (src, dst) sends at the same rate. So instead of recomputing and advancing
// every active flow after each of FB2010's 706,397 completions, it keeps per
// link a virtual clock v (bytes each of its flows has been served since an
// origin), each flow's finishing point on that clock (v at its arrival plus
// its size), and a heap of links by the time their next flow finishes; a
// link's clock is brought up to date only when its rate changes.
//
// The rate rule is the scheduler's:
//   - fair-split: coflow.SplitRate(capacity, flows at src's egress, flows
//     at dst's ingress). A completion changes the rates of the links at its
//     two port sides only, so an event costs O(links at the ports it
//     touches · log links), and the rates are exactly those of coflow.Rates;
//   - fair (max-min): progressive filling over links weighted by their
//     flow counts, redone only from the lowest level the event can change
//     (maxmin.go); rates equal coflow.Rates' up to float rounding.
//
// Tests compare the rates with coflow.Rates at every step.
type fairFluid struct {
	ports    int
	cap      float64
	maxMin   bool
	mm       maxMinFill
	nE, nI   []int32 // unfinished flows per egress, ingress
	links    []fairLink
	out, in  [][]int32    // active links per egress, ingress port
	heap     heapq.IDHeap // active links by the time their next flow ends
	touchE   []bool
	touchI   []bool
	touched  []int32 // port sides to refresh: egress p is p, ingress p is ports+p
	finished []flowAt
}

type fairLink struct {
	v, t  float64 // virtual clock v as of time t
	rate  float64
	end   float64                // when the flow with the smallest key finishes
	head  float64                // the smallest key
	flows *heapq.Heap[fairEntry] // its unfinished flows by key; nil until its first flow
	opos  int32                  // index in out[src], in[dst]
	ipos  int32
}

type fairEntry struct {
	key float64
	at  flowAt
}

// keyFirst orders a link's flows by where they finish on its clock.
func keyFirst(a, b fairEntry) bool { return a.key < b.key }

func newFairFluid(ports int, capacity float64, maxMin bool) *fairFluid {
	ff := &fairFluid{ports: ports, cap: capacity, maxMin: maxMin, mm: newMaxMinFill(ports, maxMin),
		nE: make([]int32, ports), nI: make([]int32, ports),
		links: make([]fairLink, ports*ports), out: make([][]int32, ports), in: make([][]int32, ports),
		touchE: make([]bool, ports), touchI: make([]bool, ports)}
	ff.heap.Reset(len(ff.links))
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
	if l.flows == nil {
		l.flows = heapq.New(keyFirst)
	}
	if l.flows.Len() == 0 {
		l.opos, l.ipos = int32(len(ff.out[src])), int32(len(ff.in[dst]))
		ff.out[src] = append(ff.out[src], id)
		ff.in[dst] = append(ff.in[dst], id)
		if ff.maxMin {
			ff.mm.fresh = append(ff.mm.fresh, id)
		}
	}
	l.flows.Push(fairEntry{key: l.v + size, at: p})
	head, _ := l.flows.Peek()
	l.head = head.key
	if ff.maxMin {
		ff.mm.cnt[id]++
		ff.mm.joined[id] = true
	}
	ff.nE[src]++
	ff.nI[dst]++
	ff.touch(src, dst)
}

// refresh recomputes the rates the touched port sides' changes affect.
func (ff *fairFluid) refresh(now float64) {
	if ff.maxMin {
		ff.refreshMaxMin(now)
		return
	}
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
			l.rate = coflow.SplitRate(ff.cap, int(ff.nE[src]), int(ff.nI[dst]))
			l.end = now + (l.head-l.v)/l.rate
			ff.fix(id)
		}
	}
	ff.touched = ff.touched[:0]
}

// next is the time of the next completion (+Inf when none).
func (ff *fairFluid) next(inf float64) float64 {
	if ff.heap.Len() == 0 {
		return inf
	}
	return ff.heap.Min().Key
}

// advance finishes every flow that ends by next (within sameTime) and
// returns them; the rates of the ports they leave wait for refresh.
func (ff *fairFluid) advance(next float64) []flowAt {
	ff.finished = ff.finished[:0]
	for ff.heap.Len() > 0 {
		id := ff.heap.Min().ID
		l := &ff.links[id]
		if l.end > next+sameTime {
			break
		}
		l.settle(next)
		src, dst := int(id)/ff.ports, int(id)%ff.ports
		for e, ok := l.flows.Peek(); ok && e.key-l.v <= l.rate*sameTime; e, ok = l.flows.Peek() {
			ff.finished = append(ff.finished, l.flows.Pop().at)
			if head, ok := l.flows.Peek(); ok {
				l.head = head.key
			}
			if ff.maxMin {
				ff.mm.cnt[id]--
			}
			ff.nE[src]--
			ff.nI[dst]--
			ff.touch(src, dst)
		}
		if l.flows.Len() == 0 {
			ff.drop(id, src, dst)
			continue
		}
		l.end = next + (l.head-l.v)/l.rate
		ff.fix(id)
	}
	return ff.finished
}

// drop takes an empty link out of the heap and its ports' lists.
func (ff *fairFluid) drop(id int32, src, dst int) {
	l := &ff.links[id]
	ff.heap.Remove(id)
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
	if ff.maxMin {
		ff.mm.pos[id], ff.mm.rate[id] = -1, 0
	}
}

// linkRate is the current rate of every flow from src to dst.
func (ff *fairFluid) linkRate(src, dst int) float64 { return ff.links[src*ff.ports+dst].rate }

// fix re-keys link id in the heap by its end (inserting it if absent).
func (ff *fairFluid) fix(id int32) { ff.heap.Set(id, ff.links[id].end) }

// checkFair compares the fast path's rates with coflow.Rates (tests):
// exactly for the equal split, up to 10^-9 of a port for max-min, whose
// fast path adds a link's flows' shares in one step.
func (s *engine) checkFair() {
	want := coflow.Rates(s.dec, s.cap, s)
	tol := 0.0
	if s.fair.maxMin {
		tol = 1e-9 * s.cap
	}
	n := 0
	for _, r := range want {
		tf := s.lookup(r.Flow.Coflow).tc.Flows[r.Flow.Flow]
		if got := s.fair.linkRate(tf.Src, tf.Dst); math.Abs(got-r.Rate) > tol {
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
