package coflowsim

import (
	mbits "math/bits"
	"slices"

	"github.com/allot-project/allot/coflow"
)

// fastRates is coflow.Rates for uncapped priority decisions (philae, aalo,
// aalo-oracle, scf), made cheap enough to run after every batch of
// completions on FB2010, where one granted coflow can have 21,000 flows.
// It returns the same rates in the same order (tests run whole traces
// comparing the two) but avoids walking every granted flow:
//
// With no caps every port side starts at the full capacity and each flow
// takes min(free egress, free ingress), so every granted flow gets the
// whole capacity of both its ports: a port is either free or busy, and a
// sender serves at most one flow. So:
//   - the walk stops once no egress or no ingress is free;
//   - a grant with no free sender, or no free receiver, among its
//     unfinished flows is skipped after counting its ports;
//   - a grant whose list is sender-major with receivers in one order (every
//     list the coordinator hands out) is served sender by sender by looking
//     up each free sender's flows to the free receivers, rather than walking
//     the sender's whole run of flows;
//   - other lists are walked, jumping over a full sender's run and over
//     finished flows (a per-list union-find "next unfinished" index).
//
// Capped (sebf, fifo) and fair-share decisions go to coflow.Rates (the
// engine's fast paths, madd.go, fair.go and maxmin.go,
// take them over in event-driven runs).
func (s *engine) fastRates(d *coflow.Decision) []coflow.FlowRate {
	if d.FairShare {
		return coflow.Rates(d, s.cap, s)
	}
	for _, g := range d.Grants {
		if g.Caps != nil {
			return coflow.Rates(d, s.cap, s)
		}
	}
	if len(s.busyE) != d.Ports {
		s.busyE, s.busyI = make([]bool, d.Ports), make([]bool, d.Ports)
		s.freeE, s.freeI = newPortSet(d.Ports), newPortSet(d.Ports)
	}
	busyE, busyI := s.busyE, s.busyI
	clear(busyE)
	clear(busyI)
	s.freeE.fill()
	s.freeI.fill()
	out := s.rateBuf[:0]
	take := func(g *coflow.Grant, f int, l coflow.Link) {
		out = append(out, coflow.FlowRate{Flow: coflow.FlowRef{Coflow: g.Coflow, Flow: f}, Rate: s.cap})
		busyE[l.Src], busyI[l.Dst] = true, true
		s.freeE.remove(int(l.Src))
		s.freeI.remove(int(l.Dst))
	}
	for gi := range d.Grants {
		if len(s.freeE.list) == 0 || len(s.freeI.list) == 0 {
			break
		}
		g := &d.Grants[gi]
		c := s.lookup(g.Coflow)
		if c == nil || len(g.Flows) == 0 {
			continue
		}
		ix := c.index(g.Flows, g.Links, d.Ports)
		if len(g.Flows) <= len(ix.senders)+len(ix.receivers) {
			s.walk(ix, c, g, take)
			continue
		}
		// The free senders and receivers with unfinished flows in the
		// list, as bits over their slots, found from whichever side is
		// shorter.
		sendMask := growMask(&s.sendMask, (len(ix.senders)+63)/64)
		if freeMask(sendMask, ix.senders, ix.sendSlot, ix.sendLeft, busyE, s.freeE.list) == 0 {
			continue
		}
		mask := growMask(&s.mask, ix.words)
		nfree := freeMask(mask, ix.receivers, ix.recvSlot, ix.recvLeft, busyI, s.freeI.list)
		if nfree == 0 {
			continue
		}
		if ix.pos == nil {
			s.walk(ix, c, g, take)
			continue
		}
		// Each free sender takes its first unfinished flow to a free
		// receiver: the lowest bit of (its unfinished receivers AND the
		// free receivers), since slots follow the list's receiver order.
		words, nr := ix.words, len(ix.receivers)
	senders:
		for sw, sbits := range sendMask {
			for ; sbits != 0; sbits &= sbits - 1 {
				si := sw<<6 + mbits.TrailingZeros64(sbits)
				row := ix.unfinished[si*words : (si+1)*words]
				for w, bits := range row {
					if x := bits & mask[w]; x != 0 {
						r := w<<6 + mbits.TrailingZeros64(x)
						mask[w] &^= 1 << (r & 63)
						f := g.Flows[ix.pos[si*nr+r]]
						take(g, f, g.Links[f])
						nfree--
						break
					}
				}
				if nfree == 0 {
					break senders
				}
			}
		}
	}
	s.rateBuf = out
	return out
}

// walk serves one grant by walking its list in order.
func (s *engine) walk(ix *grantIndex, c *coflowState, g *coflow.Grant, take func(*coflow.Grant, int, coflow.Link)) {
	for i := ix.find(0); i < len(g.Flows); {
		f := g.Flows[i]
		l := g.Links[f]
		switch {
		case s.busyE[l.Src]:
			i = ix.find(int(ix.blockEnd[i]))
		case c.flows[f].done:
			ix.next[i] = int32(i + 1)
			i = ix.find(i + 1)
		default:
			if !s.busyI[l.Dst] {
				take(g, f, l)
			}
			i = ix.find(i + 1)
		}
	}
}

// grantIndex speeds up serving one grant list (a slice the coordinator
// shares between decisions).
type grantIndex struct {
	flows []int
	// blockEnd[i] is the end of the run of flows with the same sender as
	// flows[i].
	blockEnd []int32
	// next is a union-find "next position that may be unfinished"; next[i]
	// == i for a position not known to be finished. len(flows) is the end.
	next []int32
	// senders are the distinct sending ports in list order; receivers the
	// distinct receiving ports in the coflow's receiver order. sendLeft and
	// recvLeft count the list's unfinished flows per port; member tells
	// which of the coflow's flows are in the list (nil: all).
	senders, receivers []int
	sendLeft, recvLeft []int32
	member             []bool
	// pos[s·len(receivers)+r] is the list position of the unfinished flow
	// from sender slot s to receiver slot r, or -1; nil when the list is
	// not sender-major with receivers in order (then walk serves it).
	// blockStart[s] is where sender slot s's run begins; sendSlot and
	// recvSlot map ports to slots.
	pos []int32
	// unfinished holds, per sender slot, words bits over the receiver
	// slots: set for an unfinished flow of the list.
	unfinished         []uint64
	words              int
	sendSlot, recvSlot []int32 // by port; -1: none
}

// freeMask sets in mask (cleared first) the bits of the slots of the ports
// on one side of a list that have unfinished flows and are not busy,
// walking either the list's ports or the free ports, whichever is shorter,
// and returns how many it set.
func freeMask(mask []uint64, ports []int, slot, left []int32, busy []bool, free []int) int {
	clear(mask)
	n := 0
	if len(ports) <= len(free) {
		for i, p := range ports {
			if left[p] > 0 && !busy[p] {
				mask[i>>6] |= 1 << (i & 63)
				n++
			}
		}
		return n
	}
	for _, p := range free {
		if i := slot[p]; i >= 0 && left[p] > 0 {
			mask[i>>6] |= 1 << (i & 63)
			n++
		}
	}
	return n
}

// growMask resizes *buf to words words.
func growMask(buf *[]uint64, words int) []uint64 {
	*buf = slices.Grow((*buf)[:0], words)[:words]
	return *buf
}

// portSet is a set of ports with O(1) removal.
type portSet struct {
	list []int
	at   []int // index in list, or -1
}

func newPortSet(ports int) *portSet {
	return &portSet{list: make([]int, 0, ports), at: make([]int, ports)}
}

// fill makes the set hold every port.
func (ps *portSet) fill() {
	ps.list = ps.list[:len(ps.at)]
	for p := range ps.at {
		ps.list[p], ps.at[p] = p, p
	}
}

func (ps *portSet) remove(p int) {
	i := ps.at[p]
	if i < 0 {
		return
	}
	last := ps.list[len(ps.list)-1]
	ps.list[i], ps.at[last] = last, i
	ps.list = ps.list[:len(ps.list)-1]
	ps.at[p] = -1
}

// index returns the grantIndex of one of c's grant lists, building it on
// first use.
func (c *coflowState) index(flows []int, links []coflow.Link, ports int) *grantIndex {
	for _, ix := range c.indexes {
		if len(ix.flows) == len(flows) && &ix.flows[0] == &flows[0] {
			return ix
		}
	}
	if c.recvRank == nil {
		// The coordinator's receiver order: first appearance in the spec.
		c.recvRank = make(map[coflow.Port]int32)
		for _, l := range links {
			if _, ok := c.recvRank[l.Dst]; !ok {
				c.recvRank[l.Dst] = int32(len(c.recvRank))
			}
		}
	}
	n := len(flows)
	ix := &grantIndex{flows: flows, blockEnd: make([]int32, n), next: make([]int32, n+1),
		sendLeft: make([]int32, ports), recvLeft: make([]int32, ports),
		sendSlot: make([]int32, ports), recvSlot: make([]int32, ports)}
	if n != len(links) {
		ix.member = make([]bool, len(links))
	}
	for i := range ix.next {
		ix.next[i] = int32(i)
	}
	end := n
	for i := n - 1; i >= 0; i-- {
		if i+1 < n && links[flows[i]].Src != links[flows[i+1]].Src {
			end = i + 1
		}
		ix.blockEnd[i] = int32(end)
	}
	sendSlot := map[coflow.Port]int{}
	recvSeen := map[coflow.Port]bool{}
	ordered := true
	for i, f := range flows {
		if ix.member != nil {
			ix.member[f] = true
		}
		l := links[f]
		if _, ok := sendSlot[l.Src]; !ok {
			sendSlot[l.Src] = len(ix.senders)
			ix.senders = append(ix.senders, int(l.Src))
		} else if i > 0 && links[flows[i-1]].Src != l.Src {
			ordered = false // the sender's flows are not one run
		}
		if i > 0 && links[flows[i-1]].Src == l.Src && c.recvRank[links[flows[i-1]].Dst] >= c.recvRank[l.Dst] {
			ordered = false
		}
		if !recvSeen[l.Dst] {
			recvSeen[l.Dst] = true
			ix.receivers = append(ix.receivers, int(l.Dst))
		}
		if !c.flows[f].done {
			ix.sendLeft[l.Src]++
			ix.recvLeft[l.Dst]++
		}
	}
	slices.SortFunc(ix.receivers, func(a, b int) int {
		return int(c.recvRank[coflow.Port(a)] - c.recvRank[coflow.Port(b)])
	})
	nr := len(ix.receivers)
	for i := range ports {
		ix.sendSlot[i], ix.recvSlot[i] = -1, -1
	}
	for i, p := range ix.senders {
		ix.sendSlot[p] = int32(i)
	}
	for i, p := range ix.receivers {
		ix.recvSlot[p] = int32(i)
	}
	if ordered && len(ix.senders)*nr <= 4*n {
		ix.words = (nr + 63) / 64
		ix.unfinished = make([]uint64, len(ix.senders)*ix.words)
		ix.pos = make([]int32, len(ix.senders)*nr)
		for i := range ix.pos {
			ix.pos[i] = -1
		}
		for i, f := range flows {
			l := links[f]
			si, ri := int(ix.sendSlot[l.Src]), int(ix.recvSlot[l.Dst])
			ix.pos[si*nr+ri] = int32(i)
			if !c.flows[f].done {
				ix.unfinished[si*ix.words+ri>>6] |= 1 << (ri & 63)
			} else {
				ix.next[i] = int32(i + 1)
			}
		}
	}
	c.indexes = append(c.indexes, ix)
	return ix
}

// finished updates c's indexes after its flow f (src -> dst) finished.
func (c *coflowState) finished(f, src, dst int) {
	for _, ix := range c.indexes {
		if ix.member == nil || ix.member[f] {
			ix.sendLeft[src]--
			ix.recvLeft[dst]--
			if ix.pos != nil {
				si, ri := int(ix.sendSlot[src]), int(ix.recvSlot[dst])
				ix.unfinished[si*ix.words+ri>>6] &^= 1 << (ri & 63)
			}
		}
	}
}

// find returns the first position at or after i not known to be finished,
// compressing the path.
func (ix *grantIndex) find(i int) int {
	root := i
	for int(ix.next[root]) != root {
		root = int(ix.next[root])
	}
	for int(ix.next[i]) != root {
		nx := int(ix.next[i])
		ix.next[i] = int32(root)
		i = nx
	}
	return root
}
