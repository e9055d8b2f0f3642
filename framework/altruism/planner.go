package altruism

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/allot-project/allot/internal/heapq"
)

// Never is the Completion of a job that cannot finish in its share: one of
// its tasks needs more of some resource than the whole share holds.
const Never = time.Duration(math.MaxInt64)

// runGroup is count running tasks of one stage with the same remaining time
// (offset from now, nanoseconds).
type runGroup struct {
	stage int
	rem   int64
	count int
}

// Planner computes Decisions for jobs. It holds its Config and scratch space
// reused from plan to plan, so one Planner can serve every job of a
// framework, one plan at a time.
type Planner struct {
	cfg Config

	// Per-plan view of the job.
	runs    []runGroup
	rems    []int64
	invCap2 []float64

	// Per-stage counters of the packers and the verifier.
	unf, ready, wait, left []int
	blocked                []int
	finish, first          []int64
	height                 []int64
	rank, byRank           []int
	groups                 []slot

	// Resource scratch, one entry per job dimension.
	used, use, peak vec

	events *heapq.Heap[finishEvent]
	bps    []breakpoint
	sweep  []sweepEvent
	pts    []jpoint
	order  []slot

	fwd, rev, com, jus schedule
}

// NewPlanner returns a planner with cfg, or an ErrInvalidConfig error.
func NewPlanner(cfg Config) (*Planner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Planner{cfg: cfg, events: heapq.New(func(a, b finishEvent) bool { return a.at < b.at })}, nil
}

// Config returns the planner's settings.
func (p *Planner) Config() Config { return p.cfg }

// Plan plans job j at now. draw is a uniform sample from [0, 1), taken by
// the caller from its own seeded generator: the plan is altruistic when
// draw < P(altruism) and the job is not Greedy, and greedy otherwise.
//
// Plan also records the schedule it returns in j, so that the next plan can
// hold on to this plan's completion time while it remains feasible. It is
// meant to be called after every event of the job: each packer places a
// task in O(S·|R|) for S stages over |R| resources (plus, in the reverse
// pack, the stretch of the usage profile the task would overlap), so a
// plan of n tasks costs about n times that; see BenchmarkPlan.
func (p *Planner) Plan(j *Job, now time.Time, draw float64) (Decision, error) {
	if !(draw >= 0 && draw < 1) {
		return Decision{}, fmt.Errorf("%w: %v", ErrInvalidDraw, draw)
	}
	p.prepare(j, now)
	altruistic := !j.greedy && draw < p.cfg.Altruism

	unstarted := 0
	for i := range j.stages {
		unstarted += j.stages[i].unstarted
	}
	if unstarted == 0 {
		// Only running tasks are left: nothing to decide.
		var horizon int64
		for _, r := range p.runs {
			horizon = max(horizon, r.rem)
		}
		j.commit.clear()
		return p.decide(j, now, nil, time.Duration(horizon), altruistic), nil
	}
	if !p.forward(j) {
		// No finite T_k: greedy, with the tasks the forward pack starts now
		// (docs/carbyne.md, gap 18).
		j.commit.clear()
		return p.decide(j, now, nil, Never, false), nil
	}
	chosen := p.choose(j, now)
	j.commit.record(now, chosen, len(j.stages))
	return p.decide(j, now, chosen, time.Duration(chosen.horizon), altruistic), nil
}

// choose picks the schedule to publish once the forward pack has found
// T_k. The horizon is the earlier of T_k and the deadline of the job's
// commitment, if that is still feasible. The reverse pack from that horizon
// is preferred, as it defers the most work; if it overruns, the commitment
// (when it set the horizon), else the forward schedule right-justified.
// Every candidate but the forward schedule, valid by construction, is
// verified before use.
func (p *Planner) choose(j *Job, now time.Time) *schedule {
	p.fwd.normalize()
	horizon := p.fwd.horizon
	committed := j.commit.load(j, now, &p.com)
	if committed {
		p.com.normalize()
		committed = p.verify(j, &p.com)
	}
	if committed && p.com.horizon < horizon {
		horizon = p.com.horizon
	}
	p.reverse(j, horizon)
	p.rev.normalize()
	switch {
	case p.verify(j, &p.rev):
		return &p.rev
	case committed && p.com.horizon == horizon:
		return &p.com
	}
	p.justify(j, &p.fwd)
	if p.verify(j, &p.jus) {
		return &p.jus
	}
	return &p.fwd
}

// prepare sizes the scratch space for j and takes the plan's view of it:
// running tasks grouped by remaining time, and the alignment weights of
// the share.
func (p *Planner) prepare(j *Job, now time.Time) {
	n, dims := len(j.stages), len(j.dims)
	p.unf = resize(p.unf, n)
	p.ready = resize(p.ready, n)
	p.wait = resize(p.wait, n)
	p.left = resize(p.left, n)
	p.blocked = resize(p.blocked, n)
	p.finish = resize(p.finish, n)
	p.first = resize(p.first, n)
	p.height = resize(p.height, n)
	p.rank = resize(p.rank, n)
	p.used = resize(p.used, dims)
	p.use = resize(p.use, dims)
	p.peak = resize(p.peak, dims)
	p.invCap2 = resize(p.invCap2, dims)
	for i, c := range j.capacity {
		p.invCap2[i] = 0
		if c > 0 {
			p.invCap2[i] = 1 / (float64(c) * float64(c))
		}
	}

	p.runs = p.runs[:0]
	floor := int64(p.cfg.MinRemaining)
	for si := range j.stages {
		s := &j.stages[si]
		if s.running == 0 {
			continue
		}
		p.rems = p.rems[:0]
		for k := range s.tasks {
			t := &s.tasks[k]
			if t.state != Running {
				continue
			}
			elapsed := max(int64(now.Sub(t.start)), 0)
			p.rems = append(p.rems, max(int64(s.dur)-elapsed, floor))
		}
		slices.Sort(p.rems)
		for _, r := range p.rems {
			if n := len(p.runs); n > 0 && p.runs[n-1].stage == si && p.runs[n-1].rem == r {
				p.runs[n-1].count++
				continue
			}
			p.runs = append(p.runs, runGroup{stage: si, rem: r, count: 1})
		}
	}
}

// resize returns s with length n, reusing its array when large enough. The
// contents are unspecified; callers overwrite what they read.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
