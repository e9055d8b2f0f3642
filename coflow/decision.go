package coflow

import "time"

// Class is a grant's priority class. Lower classes go first at every port.
type Class uint8

// Grant classes, highest priority first (docs/coflow.md).
const (
	// ClassThin: philae's thin coflows, all flows at once.
	ClassThin Class = iota
	// ClassPilot: philae's pilot flows, FIFO by coflow arrival.
	ClassPilot
	// ClassWorking: coflows of the main queue that owns the current slot.
	ClassWorking
	// ClassQueue: the other main queues in priority order (work conservation
	// across queues), and every coflow of the single-order schedulers.
	ClassQueue
	// ClassWorkConserving: non-pilot flows of coflows still piloting, only
	// on ports that would otherwise idle (docs/coflow.md).
	ClassWorkConserving
)

func (c Class) String() string {
	switch c {
	case ClassThin:
		return "thin"
	case ClassPilot:
		return "pilot"
	case ClassWorking:
		return "working"
	case ClassQueue:
		return "queue"
	case ClassWorkConserving:
		return "work-conserving"
	}
	return "class?"
}

// Grant lets some flows of one coflow send, in the order of Flows, with the
// priority of its place in Decision.Grants.
type Grant struct {
	Coflow CoflowID
	Class  Class
	// Queue is the main queue for ClassWorking and ClassQueue, else -1.
	Queue int
	// Flows are flow indices in priority order. The slice is shared between
	// decisions and must not be modified. It may name flows that have
	// finished (the coordinator does not recompute on every completion);
	// consumers skip those (see FinishedFlows).
	Flows []int
	// Links are the endpoints of every flow of the coflow, indexed by flow
	// index (not by position in Flows). Shared; must not be modified.
	Links []Link
	// Caps, when not nil, are rate caps in bytes per second aligned with
	// Flows (sebf's MADD rates). Nil means: as much as the ports have left.
	Caps []float64
}

// Decision is the coordinator's schedule: a global priority order of grants.
// Each port's egress list (what an agent enforces) is the subsequence of
// flows sending from it; see Egress. A Decision is immutable once returned.
//
// How to turn it into rates (Rates does exactly this): walk Grants in order
// and each grant's Flows in order, skip finished flows, and give each flow
// whatever its egress and ingress both have left (capped by Caps). With
// philae's and aalo's uncapped grants this is the paper's simple scheme: one
// flow per port at a time, at the whole port bandwidth, highest priority
// first, and any port a higher grant leaves free goes to the next flow that
// can use it (work conservation). Recompute the rates whenever a flow
// finishes, even when the Decision stays the same.
type Decision struct {
	// Epoch counts recomputations; it changes exactly when the schedule may
	// have changed, so agents need a push only when it does.
	Epoch uint64
	// At is when the decision was computed.
	At time.Time
	// Ports is the fabric's port count.
	Ports int
	// Grants in priority order, highest first.
	Grants []Grant
	// FairShare asks for per-flow fair sharing over every granted flow
	// instead of the priority order: max-min fair rates over the port
	// sides (the fair scheduler), or with EqualSplit the equal split.
	FairShare bool
	// EqualSplit, with FairShare, splits each port side equally among its
	// flows and sends each flow at the smaller of its two shares, handing
	// what a flow cannot use to no one (the fair-split scheduler; see
	// SplitRate).
	EqualSplit bool
	// WorkingQueue is the main queue that owns the current slot, or -1.
	WorkingQueue int
	// NextChange, when not zero, is when the slot rotation moves to another
	// queue: call Decide again at that time even if nothing else happens.
	NextChange time.Time
}

// FinishedFlows tells which flows have finished. *Coordinator implements
// it; a simulator may pass its own bookkeeping instead.
type FinishedFlows interface {
	Finished(coflow CoflowID, flow int) bool
}

// Egress returns, in priority order, the unfinished flows that may send from
// port p: the ordered grant list of that port's agent. fin may be nil.
func (d *Decision) Egress(p Port, fin FinishedFlows) []FlowRef {
	var out []FlowRef
	for _, g := range d.Grants {
		for _, f := range g.Flows {
			if f < 0 || f >= len(g.Links) || g.Links[f].Src != p || (fin != nil && fin.Finished(g.Coflow, f)) {
				continue
			}
			out = append(out, FlowRef{Coflow: g.Coflow, Flow: f})
		}
	}
	return out
}
