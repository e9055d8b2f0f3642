package altruism

import "github.com/allot-project/allot/protocol"

// MustStartShapes groups the must-start tasks into task shapes, one per
// distinct demand with its count, in priority order of first appearance:
// the MustStart field of a protocol.DemandRequest.
func (d Decision) MustStartShapes() []protocol.TaskShape {
	return groupShapes(nil, d.Tasks, func(tp TaskPlan) bool { return tp.MustStart })
}

// OptionalShapes groups the optional tasks (runnable, not must-start) into
// task shapes: the Optional field of a protocol.DemandRequest.
func (d Decision) OptionalShapes() []protocol.TaskShape {
	return groupShapes(nil, d.Tasks, func(tp TaskPlan) bool { return tp.Runnable && !tp.MustStart })
}

// DemandShapes groups every runnable task into task shapes: the Demand
// field of a protocol.DemandRequest, everything the job would launch now.
func (d Decision) DemandShapes() []protocol.TaskShape {
	return groupShapes(nil, d.Tasks, func(tp TaskPlan) bool { return tp.Runnable })
}

// AddTo adds the decision's shapes and remaining work to req, merging with
// identical shapes already there, so that a framework running several jobs
// can build one report from all their decisions.
//
// A greedy plan (feasible, not Altruistic) reports every runnable task as
// must-start and none as optional: a job that is not altruistic is served
// like a plain framework, by work-conserving H-DRF beyond its share, not
// from the leftover pool (with P(altruism) = 0 Carbyne is work-conserving
// DRF: docs/carbyne.md, "Targets"). A job whose share cannot hold one of its tasks
// keeps the split: what fits is must-start, the rest waits for leftover.
// Launch on fair offers what FairNow allows.
func (d Decision) AddTo(req *protocol.DemandRequest) {
	demand := d.DemandShapes()
	req.Demand = mergeShapes(req.Demand, demand)
	if d.greedyFair() {
		req.MustStart = mergeShapes(req.MustStart, demand)
	} else {
		req.MustStart = mergeShapes(req.MustStart, d.MustStartShapes())
		req.Optional = mergeShapes(req.Optional, d.OptionalShapes())
	}
	req.RemainingWork += d.RemainingWork
}

// FairNow reports whether tp is reported for the fair phase by AddTo, so
// may start on fair offers: a must-start task, or any runnable task of a
// feasible greedy plan.
func (d Decision) FairNow(tp TaskPlan) bool {
	return tp.MustStart || d.greedyFair() && tp.Runnable
}

func (d Decision) greedyFair() bool { return !d.Altruistic && d.Feasible() }

// groupShapes appends to out one shape per distinct demand among the tasks
// keep selects, counting them. Tasks of one stage share their demand map, so
// the shape key (the demand's canonical string) is computed once per stage.
func groupShapes(out []protocol.TaskShape, tasks []TaskPlan, keep func(TaskPlan) bool) []protocol.TaskShape {
	keyOfStage := map[string]string{}
	at := map[string]int{}
	for _, tp := range tasks {
		if !keep(tp) {
			continue
		}
		key, ok := keyOfStage[tp.Task.Stage]
		if !ok {
			key = tp.Demand.String()
			keyOfStage[tp.Task.Stage] = key
		}
		if i, ok := at[key]; ok {
			out[i].Count++
			continue
		}
		at[key] = len(out)
		out = append(out, protocol.TaskShape{Resources: tp.Demand.Clone(), Count: 1})
	}
	return out
}

// mergeShapes adds the counts of add to dst, appending shapes dst lacks.
// The shapes built here carry no ports or constraints, so only a shape of
// dst without them, and with equal resources, is a match.
func mergeShapes(dst, add []protocol.TaskShape) []protocol.TaskShape {
next:
	for _, a := range add {
		for i := range dst {
			if sameShape(dst[i], a) {
				dst[i].Count += a.Count
				continue next
			}
		}
		dst = append(dst, a)
	}
	return dst
}

func sameShape(a, b protocol.TaskShape) bool {
	return a.Ports == b.Ports && len(a.Constraints) == 0 && len(b.Constraints) == 0 &&
		a.Resources.Equal(b.Resources)
}
