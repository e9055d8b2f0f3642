package phoenix

import (
	"slices"

	"github.com/allot-project/allot/protocol"
)

// Admission control (docs/phoenix.md): reject jobs whose hard constraints no
// worker satisfies, drop soft constraints that make a job infeasible, and
// (Phoenix) negotiate away soft constraints whose contention costs more
// waiting than the job's budget. Eagle-C, Hawk-C and Yaq-d treat soft
// constraints as hard.

// admit sets j's effective classes and feasible set; false rejects it.
func (s *engine) admit(j *job) bool {
	ix := s.ix
	if !s.pol.constraints || len(j.spec.cons) == 0 {
		if s.pol.constraints || len(j.hard) == 0 {
			j.sig = ix.universe
			return true
		}
		// eagle ignores constraints but runs the same jobs as the others.
		if len(ix.sig(ix.classIDs(j.hard)).all) == 0 {
			return false
		}
		j.sig = ix.universe
		return true
	}
	hard := ix.classIDs(j.hard)
	if len(ix.sig(hard).all) == 0 {
		return false
	}
	var keep []protocol.Constraint
	for _, c := range j.spec.cons {
		if c.Soft {
			keep = append(keep, c)
		}
	}
	effective := func() []int { return ix.classIDs(append(slices.Clone(j.hard), keep...)) }
	// 1. Drop soft constraints that make the job infeasible (lowest weight
	// first; every soft constraint weighs 1, so the last listed).
	for len(keep) > 0 && len(ix.sig(effective()).all) == 0 {
		j.relaxed = append(j.relaxed, keep[len(keep)-1])
		keep = keep[:len(keep)-1]
	}
	// 2. Negotiate: drop the most contended soft constraint while the wait it
	// adds exceeds the budget.
	if s.pol.negotiate && s.crv != nil {
		budget := max(budgetMin, budgetFactor*j.spec.est)
		if j.spec.long {
			budget = longBudget * j.spec.est
		}
		base := s.crv.setWait(hard)
		for len(keep) > 0 && s.crv.setWait(effective())-base > budget {
			worst, wait := 0, -1.0
			for i, c := range keep {
				if w := s.crv.setWait(ix.classIDs([]protocol.Constraint{c})); w > wait {
					worst, wait = i, w
				}
			}
			j.relaxed = append(j.relaxed, keep[worst])
			keep = slices.Delete(keep, worst, worst+1)
		}
	}
	j.classes = effective()
	j.sig = ix.sig(j.classes)
	if len(j.relaxed) > 0 {
		s.relaxedJobs++
		if s.pol.prefer {
			if p := ix.sig(ix.classIDs(append(slices.Clone(j.hard), j.spec.cons...))); len(p.all) > 0 {
				j.pref = p
			}
		}
	}
	return true
}
