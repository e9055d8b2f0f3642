package coflow

import (
	"fmt"
	"sort"
	"time"
)

// Port is a switch port, one per node (per rack in the FB2010 trace). Every
// port has an egress side (sending) and an ingress side (receiving).
type Port int

// CoflowID names a coflow; it is unique among the registered coflows.
type CoflowID string

// FlowSpec is one flow of a coflow: bytes sent from Src's egress to Dst's
// ingress. A coflow has at most one flow per (Src, Dst) pair.
type FlowSpec struct {
	Src, Dst Port
	// Size is the flow's length in bytes when known, else 0. Only the
	// clairvoyant schedulers (sebf, scf, aalo-oracle) and fifo's MADD rates
	// read it.
	Size int64
}

// CoflowSpec is what a framework registers: the coflow's structure. Flows are
// referred to afterwards by their index in Flows.
type CoflowSpec struct {
	ID    CoflowID
	Flows []FlowSpec
}

// FlowRef names one flow: its coflow and its index in the coflow's spec.
type FlowRef struct {
	Coflow CoflowID
	Flow   int
}

// FlowCompletion is an agent's report that a flow finished.
type FlowCompletion struct {
	Flow FlowRef
	// Bytes is the flow's final length. It is always filled: philae learns
	// sizes from pilots' lengths, and the others count bytes sent.
	Bytes int64
	// Pilot says whether the sender served the flow as a pilot; it must
	// agree with the coordinator's pilot set.
	Pilot bool
}

// FlowProgress reports the bytes a flow has sent so far (cumulative). Aalo
// learns from these (the simulator sends them every Slot); sebf reads them
// for remaining sizes; philae's policies B and D use them when present.
type FlowProgress struct {
	Flow FlowRef
	Sent int64
}

// Link is a flow's two endpoints.
type Link struct{ Src, Dst Port }

// Phase is where a coflow is in philae's life cycle (docs/coflow.md).
type Phase uint8

// Coflow phases. Schedulers other than philae keep every coflow Queued.
const (
	// PhaseThin: at most ThinLimit flows; all flows are eligible at once.
	PhaseThin Phase = iota
	// PhasePilot: only the pilot flows are eligible (and others as work
	// conservation) until every pilot has finished.
	PhasePilot
	// PhaseQueued: in a main queue (estimated, for philae).
	PhaseQueued
	// PhaseFinished: every flow has finished; awaiting Deregister.
	PhaseFinished
)

func (p Phase) String() string {
	switch p {
	case PhaseThin:
		return "thin"
	case PhasePilot:
		return "pilot"
	case PhaseQueued:
		return "queued"
	case PhaseFinished:
		return "finished"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// flowState is the coordinator's view of one flow.
type flowState struct {
	link     Link
	size     int64 // revealed size (clairvoyant schedulers only)
	sent     int64 // bytes sent as last reported (final bytes once finished)
	sendIdx  int   // index of link.Src in coflowState.senders
	recvIdx  int   // index of link.Dst in coflowState.receivers
	pilot    bool
	finished bool
}

// coflowState is the coordinator's view of one registered coflow.
type coflowState struct {
	id      CoflowID
	seq     uint64 // registration order: the arrival tie-break everywhere
	arrival time.Time
	flows   []flowState
	links   []Link // shared with Grants; never mutated after registration

	// Distinct ports in first-appearance order, and the number of
	// unfinished flows of this coflow at each.
	senders, receivers []Port
	sendLeft, recvLeft []int

	// Flow index lists in the coflow's canonical order (sender-major, both
	// sides in first-appearance order). Shared with Grants; never mutated.
	order, pilots, others []int
	pickOrder             []int // pilots in the order they were picked

	left       int   // unfinished flows
	bytesSent  int64 // bytes of finished flows plus reported progress of the rest
	totalSize  int64 // sum of revealed sizes
	pilotsLeft int
	progressed bool // some progress was reported for an unfinished flow

	phase     Phase
	estimate  float64 // l̂: the mean length of the finished flows, pilots first (philae)
	pilotEst  float64 // l̂ when the pilots finished
	usedEst   float64 // l̂ at the last recomputation it asked for
	doneSum   int64   // lengths of the finished flows
	doneN     int
	estimated time.Time
	metric    float64 // philae's x(C); sebf's Γ
	queue     int     // main queue
	entry     uint64  // order of entry into the current queue (FIFO key)
	mark      uint64  // scratch stamp for counting distinct coflows

	// Remaining bytes (revealed size minus bytes sent, at least 0, over
	// the unfinished flows) per sender and receiver, kept up to date by
	// completions and progress reports: sebf's Γ without a rescan.
	sendRem, recvRem []int64
}

// newCoflowState validates spec against a fabric of ports and builds the
// coflow's state. It copies everything it keeps.
func newCoflowState(spec CoflowSpec, ports int, seq uint64, now time.Time) (*coflowState, error) {
	if spec.ID == "" {
		return nil, fmt.Errorf("%w: empty coflow ID", ErrBadSpec)
	}
	if len(spec.Flows) == 0 {
		return nil, fmt.Errorf("%w: coflow %s has no flows", ErrBadSpec, spec.ID)
	}
	c := &coflowState{
		id:      spec.ID,
		seq:     seq,
		arrival: now,
		flows:   make([]flowState, len(spec.Flows)),
		links:   make([]Link, len(spec.Flows)),
		left:    len(spec.Flows),
		phase:   PhaseQueued,
		queue:   -1,
	}
	sendAt := map[Port]int{}
	recvAt := map[Port]int{}
	seen := make(map[Link]struct{}, len(spec.Flows))
	for i, f := range spec.Flows {
		if f.Src < 0 || int(f.Src) >= ports || f.Dst < 0 || int(f.Dst) >= ports {
			return nil, fmt.Errorf("%w: coflow %s flow %d: %d->%d outside [0, %d)",
				ErrBadPort, spec.ID, i, f.Src, f.Dst, ports)
		}
		if f.Size < 0 {
			return nil, fmt.Errorf("%w: coflow %s flow %d: size %d", ErrBadSpec, spec.ID, i, f.Size)
		}
		l := Link{Src: f.Src, Dst: f.Dst}
		if _, dup := seen[l]; dup {
			return nil, fmt.Errorf("%w: coflow %s: %d->%d", ErrDuplicateFlow, spec.ID, f.Src, f.Dst)
		}
		seen[l] = struct{}{}
		si, ok := sendAt[f.Src]
		if !ok {
			si = len(c.senders)
			sendAt[f.Src] = si
			c.senders = append(c.senders, f.Src)
			c.sendLeft = append(c.sendLeft, 0)
			c.sendRem = append(c.sendRem, 0)
		}
		ri, ok := recvAt[f.Dst]
		if !ok {
			ri = len(c.receivers)
			recvAt[f.Dst] = ri
			c.receivers = append(c.receivers, f.Dst)
			c.recvLeft = append(c.recvLeft, 0)
			c.recvRem = append(c.recvRem, 0)
		}
		c.sendRem[si] += f.Size
		c.recvRem[ri] += f.Size
		c.sendLeft[si]++
		c.recvLeft[ri]++
		c.flows[i] = flowState{link: l, size: f.Size, sendIdx: si, recvIdx: ri}
		c.links[i] = l
		c.totalSize += f.Size
	}
	c.order = make([]int, len(c.flows))
	for i := range c.order {
		c.order[i] = i
	}
	sort.SliceStable(c.order, func(a, b int) bool {
		fa, fb := &c.flows[c.order[a]], &c.flows[c.order[b]]
		if fa.sendIdx != fb.sendIdx {
			return fa.sendIdx < fb.sendIdx
		}
		return fa.recvIdx < fb.recvIdx
	})
	return c, nil
}

// remaining is what f has left to send as far as the coordinator knows.
func (f *flowState) remaining() int64 { return max(0, f.size-f.sent) }

// sent records that f has now sent bytes (cumulative) and keeps the
// per-port remaining bytes in step.
func (c *coflowState) sentBytes(f *flowState, bytes int64) {
	before := f.remaining()
	c.bytesSent += bytes - f.sent
	f.sent = bytes
	if f.finished {
		c.sendRem[f.sendIdx] -= before
		c.recvRem[f.recvIdx] -= before
		return
	}
	d := before - f.remaining()
	c.sendRem[f.sendIdx] -= d
	c.recvRem[f.recvIdx] -= d
}

// setPilots marks the given flows as pilots and splits the canonical order
// into pilots and others.
func (c *coflowState) setPilots(pilots []int) {
	for _, f := range pilots {
		c.flows[f].pilot = true
	}
	c.pilotsLeft = len(pilots)
	c.pickOrder = pilots
	c.pilots = make([]int, 0, len(pilots))
	c.others = make([]int, 0, len(c.order)-len(pilots))
	for _, f := range c.order {
		if c.flows[f].pilot {
			c.pilots = append(c.pilots, f)
		} else {
			c.others = append(c.others, f)
		}
	}
}
