package offers

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// Soft constraints (docs/phoenix.md). A fair shape's soft
// constraints filter agents like hard ones until the shape has waited
// Config.SoftWait, counted from the first round that sees it with pending
// tasks; then they relax and the shape may go anywhere its hard constraints
// allow. They relax at once when no agent satisfies them together with the
// hard ones (the job would be infeasible), and the clock restarts when the
// shape's count drops to zero. The clock is per shape, not per task:
// the allocator sees shapes. Re-declaring a shape with the same key keeps
// its clock and relaxation. Optional (leftover) shapes never filter by
// soft constraints.

// crvSoftTick starts and checks the wait clocks of soft shapes at now.
func (a *Allocator) crvSoftTick(now time.Time) {
	for _, s := range a.crv.soft {
		switch {
		case s.count == 0:
			s.since = time.Time{}
			s.relaxed = a.cfg.SoftWait <= 0
		case s.relaxed:
			continue
		case s.since.IsZero():
			s.since = now
		}
		if !s.relaxed && s.count > 0 && (now.Sub(s.since) >= a.cfg.SoftWait || !a.softFeasible(s)) {
			s.relaxed = true
		}
		a.crvCount(s, s.crvUnits, !s.relaxed)
	}
}

// softFeasible reports whether some agent satisfies s's hard and soft
// constraints together; the answer is kept until agents join or leave.
func (a *Allocator) softFeasible(s *shape) bool {
	if s.feasVer == a.crv.agentVer+1 {
		return s.feasible
	}
	s.feasVer, s.feasible = a.crv.agentVer+1, false
	for _, ag := range a.agentList {
		if protocol.HoldHard(s.hard, ag.info.Attributes) && softOK(s.soft, ag.info.Attributes) {
			s.feasible = true
			break
		}
	}
	return s.feasible
}

// softOK reports whether attrs satisfy every constraint in cs.
func softOK(cs []protocol.Constraint, attrs protocol.Attributes) bool {
	for _, c := range cs {
		if !c.Holds(attrs) {
			return false
		}
	}
	return true
}
