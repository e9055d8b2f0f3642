package altruism

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// RemainingWork returns job j's remaining work at now in task-seconds, the
// unit of protocol.DemandRequest.RemainingWork: duration estimates of its
// unstarted tasks plus the remaining time of its running ones (at least
// MinRemaining each). It equals Decision.RemainingWork of a plan at now.
func (p *Planner) RemainingWork(j *Job, now time.Time) float64 {
	p.prepare(j, now)
	return p.remainingWork(j)
}

// NormalizedWork returns job j's remaining work at now weighted by demand,
// the leftover scheduler's shortest-remaining-time-first key (docs/carbyne.md):
// Σ over unfinished tasks of remaining duration (seconds) × Σ_r demand_r /
// capacity_r, where capacity is normally the cluster's. Resources that
// capacity lacks are left out.
func (p *Planner) NormalizedWork(j *Job, now time.Time, capacity protocol.Resources) float64 {
	p.prepare(j, now)
	weight := make([]float64, len(j.stages))
	for si := range j.stages {
		for name, v := range j.stages[si].demand.Scalars {
			if c := capacity.Scalars[name]; c > 0 {
				weight[si] += float64(v) / float64(c)
			}
		}
	}
	total := 0.0
	for si := range j.stages {
		total += float64(j.stages[si].unstarted) * j.stages[si].dur.Seconds() * weight[si]
	}
	for _, r := range p.runs {
		total += float64(r.count) * time.Duration(r.rem).Seconds() * weight[r.stage]
	}
	return total
}
