package carbyne

import (
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// policy is how the jobs of one scheduler talk to the allocator: what each
// declares, and which tasks it launches on an offer of each kind.
type policy interface {
	// leftoverOrder configures the allocator.
	leftoverOrder() offers.LeftoverOrder
	// usesShares reports whether jobs need their share A_k.
	usesShares() bool
	// declare sets j's launch quotas for the current state and returns
	// the declaration that goes with them.
	declare(e *engine, j *simJob) (offers.Declaration, error)
	// declineLeftover reports whether an unused offer of kind k goes back
	// to the leftover pool (DeclineLeftover) rather than as a plain decline.
	declineLeftover(k offers.Kind) bool
}

func newPolicy(name string) policy {
	switch name {
	case SchedDRF:
		return strictDRF{}
	case SchedDRFWC:
		return workConservingDRF{}
	case SchedTetris:
		return packing{order: offers.LeftoverEfficiencyFirst}
	case SchedSJF:
		return packing{order: offers.LeftoverJCTFirst, sjf: true}
	}
	return carbyne{}
}

// workConservingDRF: every runnable task is fair demand, so dynamic H-DRF
// between jobs hands out whatever fits; jobs launch breadth-first.
type workConservingDRF struct{}

func (workConservingDRF) leftoverOrder() offers.LeftoverOrder { return offers.LeftoverJCTFirst }
func (workConservingDRF) usesShares() bool                    { return false }
func (workConservingDRF) declineLeftover(offers.Kind) bool    { return false }

func (workConservingDRF) declare(_ *engine, j *simJob) (offers.Declaration, error) {
	j.fairQ, j.leftQ = j.runnableBFS(), nil
	return offers.Declaration{Demand: toDemands(j.shapes(j.fairQ))}, nil
}

// strictDRF holds every job to its share A_k: it declares, breadth-first,
// the runnable tasks that fit in A_k less what it runs, and nothing else,
// so that what it leaves of its share idles (docs/carbyne.md's strict
// partition). A job that runs nothing may start one task even if no task
// fits its share, so that whole tasks always make progress.
type strictDRF struct{}

func (strictDRF) leftoverOrder() offers.LeftoverOrder { return offers.LeftoverJCTFirst }
func (strictDRF) usesShares() bool                    { return true }
func (strictDRF) declineLeftover(offers.Kind) bool    { return false }

func (strictDRF) declare(e *engine, j *simJob) (offers.Declaration, error) {
	budget := make([]int64, len(e.dims))
	idle := true
	for d, name := range e.dims {
		budget[d] = j.share.Scalars[name] - j.used[d]
		idle = idle && j.used[d] == 0
	}
	var q []quota
	for _, s := range j.byBFS {
		st := &j.stage[s]
		if !st.runnable() {
			continue
		}
		n := 0
		for n < st.unstarted && fitsVec(st.need, budget) {
			subVec(budget, st.need)
			n++
		}
		if n > 0 {
			q = append(q, quota{stage: s, n: n})
		}
	}
	if len(q) == 0 && idle {
		if r := j.runnableBFS(); len(r) > 0 {
			q = []quota{{stage: r[0].stage, n: 1}}
		}
	}
	j.fairQ, j.leftQ = q, nil
	return offers.Declaration{Demand: toDemands(j.shapes(q))}, nil
}

// packing declares every runnable task as optional only, so that the
// leftover phase places everything: efficiency-first is Tetris (f = 0,
// alignment alone), and jct-first with the remaining critical path as the
// job's remaining work is SJF.
type packing struct {
	order offers.LeftoverOrder
	sjf   bool
}

func (p packing) leftoverOrder() offers.LeftoverOrder { return p.order }
func (packing) usesShares() bool                      { return false }
func (packing) declineLeftover(offers.Kind) bool      { return false }

func (p packing) declare(e *engine, j *simJob) (offers.Declaration, error) {
	j.fairQ, j.leftQ = nil, j.runnableBFS()
	work := j.remainingWork(e.now)
	if p.sjf {
		work = j.criticalPath(e.now)
	}
	return offers.Declaration{Optional: toDemands(j.shapes(j.leftQ)), RemainingWork: max(work, 1e-3)}, nil
}

// carbyne plans each job with framework/altruism in its share A_k: the
// must-start tasks are fair demand, the other runnable tasks optional,
// and the declaration is what Decision.AddTo reports. Fair offers launch
// must-start tasks and whatever they hold beyond is declined as leftover;
// leftover offers launch optional tasks.
type carbyne struct{}

func (carbyne) leftoverOrder() offers.LeftoverOrder { return offers.LeftoverJCTFirst }
func (carbyne) usesShares() bool                    { return true }
func (carbyne) declineLeftover(k offers.Kind) bool  { return k == offers.KindFair }
func (carbyne) planJob(spec jobSpec) altruism.JobSpec {
	return altruism.JobSpec{Stages: spec.estimates, Greedy: spec.greedy, FixedEstimates: true}
}

func (c carbyne) declare(e *engine, j *simJob) (offers.Declaration, error) {
	if j.plan == nil {
		pj, err := altruism.NewJob(c.planJob(j.spec))
		if err != nil {
			return offers.Declaration{}, err
		}
		j.plan = pj
	}
	if !j.plan.Share().Equal(j.share) {
		if err := j.plan.ShareChanged(j.share); err != nil {
			return offers.Declaration{}, err
		}
	}
	d, err := e.planner.Plan(j.plan, e.at(e.now), j.draws.Float64())
	if err != nil {
		return offers.Declaration{}, err
	}
	e.plans++
	if j.planned < 0 {
		j.planned = 0
		if d.Feasible() {
			j.planned = d.Completion
		}
	}
	j.fairQ, j.leftQ = j.fairQ[:0], j.leftQ[:0]
	for _, tp := range d.Tasks {
		switch {
		case d.FairNow(tp):
			j.fairQ = addQuota(j.fairQ, j.index[tp.Task.Stage])
		case tp.Runnable:
			j.leftQ = addQuota(j.leftQ, j.index[tp.Task.Stage])
		}
	}
	if !d.NextReplan.IsZero() {
		e.setTimer(j, d.NextReplan.Sub(e.epoch))
	}
	if j.spec.exact() {
		var req protocol.DemandRequest
		d.AddTo(&req)
		return offers.Declaration{Demand: toDemands(req.Demand), MustStart: toDemands(req.MustStart),
			Optional: toDemands(req.Optional), RemainingWork: req.RemainingWork}, nil
	}
	// The planner saw misestimated demands; the tasks ask for true ones.
	must, opt := j.shapes(j.fairQ), j.shapes(j.leftQ)
	all := j.shapes(append(append([]quota(nil), j.fairQ...), j.leftQ...))
	return offers.Declaration{Demand: toDemands(all), MustStart: toDemands(must),
		Optional: toDemands(opt), RemainingWork: d.RemainingWork}, nil
}

// addQuota counts one more task of stage s, keeping stages in order of
// first appearance.
func addQuota(q []quota, s int) []quota {
	for i := range q {
		if q[i].stage == s {
			q[i].n++
			return q
		}
	}
	return append(q, quota{stage: s, n: 1})
}

func toDemands(shapes []protocol.TaskShape) []offers.Demand {
	out := make([]offers.Demand, 0, len(shapes))
	for _, s := range shapes {
		out = append(out, offers.Demand{Resources: s.Resources, Count: s.Count})
	}
	return out
}

func fitsVec(need, free []int64) bool {
	for i, x := range need {
		if x > free[i] {
			return false
		}
	}
	return true
}

func subVec(v, o []int64) {
	for i, x := range o {
		v[i] -= x
	}
}

func addVec(v, o []int64) {
	for i, x := range o {
		v[i] += x
	}
}
