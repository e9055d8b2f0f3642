package carbyne

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// simStage is one stage of a running job, with its true demand and
// duration.
type simStage struct {
	name     string
	demand   protocol.Resources // one task's true demand; read-only
	need     []int64            // demand over the engine's dimensions
	dur      time.Duration      // true duration
	est      time.Duration      // the planner's estimate
	children []int
	depth    int // longest path from a source, in stages

	tasks, unstarted, running, finished int
	waiting                             int // parent stages not finished
	next                                int // next task index to start

	// Start times of the running tasks: their sum and the latest.
	sumStart, lastStart time.Duration
}

func (s *simStage) runnable() bool { return s.waiting == 0 && s.unstarted > 0 }

// quota is how many tasks of a stage a job will launch on offers of one
// kind, in its priority order.
type quota struct {
	stage int
	n     int
}

// simJob is one job of a run: its DAG's progress, the framework it is in
// the allocator and, for carbyne, its planner state.
type simJob struct {
	idx   int
	name  string
	fw    protocol.FrameworkID
	spec  jobSpec
	stage []simStage
	byBFS []int // stages breadth-first: by depth, then index
	index map[string]int

	arrived, done bool
	finish        time.Duration
	unfinished    int
	used          []int64 // true demand of running tasks
	share         protocol.Resources

	// Launch quotas for fair and leftover offers, set when the job
	// declares and lowered as it launches.
	fairQ, leftQ []quota

	plan       *altruism.Job
	draws      *rand.Rand
	planned    time.Duration // T_k of the first plan; -1 none yet
	timer      time.Duration // pending plan timer; -1 none
	replan     bool          // an event of the job since it last declared
	shareDirty bool          // its remaining demand changed
}

func newSimJob(idx int, spec jobSpec, dims []string, seed uint64) (*simJob, error) {
	j := &simJob{
		idx: idx, name: spec.name, fw: protocol.FrameworkID(fmt.Sprintf("job-%d", idx)), spec: spec,
		stage: make([]simStage, len(spec.stages)), used: make([]int64, len(dims)),
		draws: rand.New(rand.NewPCG(seed, streamDraws+uint64(idx))), planned: -1, timer: -1,
	}
	index := map[string]int{}
	for i, ss := range spec.stages {
		index[ss.Name] = i
	}
	j.index = index
	for i, ss := range spec.stages {
		st := &j.stage[i]
		*st = simStage{name: ss.Name, demand: ss.Demand, dur: ss.Duration, est: spec.estimates[i].Duration,
			tasks: ss.Tasks, unstarted: ss.Tasks, waiting: len(ss.Parents)}
		st.need = make([]int64, len(dims))
		for d, name := range dims {
			st.need[d] = ss.Demand.Scalars[name]
		}
		for _, p := range ss.Parents {
			pi, ok := index[p]
			if !ok {
				return nil, fmt.Errorf("%w: job %s: stage %s has unknown parent %s", ErrBadSimulation, spec.name, ss.Name, p)
			}
			j.stage[pi].children = append(j.stage[pi].children, i)
		}
		j.unfinished += ss.Tasks
	}
	// Depths in topological order (Kahn), which also rejects cycles.
	indeg := make([]int, len(j.stage))
	for i := range j.stage {
		indeg[i] = j.stage[i].waiting
	}
	var ready, order []int
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		s := ready[0]
		ready = ready[1:]
		order = append(order, s)
		for _, c := range j.stage[s].children {
			j.stage[c].depth = max(j.stage[c].depth, j.stage[s].depth+1)
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	if len(order) != len(j.stage) {
		return nil, fmt.Errorf("%w: job %s has a cycle", ErrBadSimulation, spec.name)
	}
	j.byBFS = slices.Clone(order)
	slices.SortStableFunc(j.byBFS, func(a, b int) int {
		if c := cmp.Compare(j.stage[a].depth, j.stage[b].depth); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return j, nil
}

// runnableBFS lists every runnable task, stage by stage breadth-first.
func (j *simJob) runnableBFS() []quota {
	var q []quota
	for _, s := range j.byBFS {
		if st := &j.stage[s]; st.runnable() {
			q = append(q, quota{stage: s, n: st.unstarted})
		}
	}
	return q
}

// remaining returns the true demand of the job's unfinished tasks, the
// cap of its share.
func (j *simJob) remaining(dims []string, runnableOnly bool) protocol.Resources {
	out := map[string]int64{}
	for i := range j.stage {
		st := &j.stage[i]
		n := int64(st.unstarted + st.running)
		if runnableOnly && st.waiting > 0 {
			n = int64(st.running)
		}
		if n > 0 {
			for d, name := range dims {
				out[name] += n * st.need[d]
			}
		}
	}
	return protocol.Scalars(out)
}

// remainingWork is the job's remaining work at now in task-seconds by
// estimates: unstarted tasks whole, running ones from now.
func (j *simJob) remainingWork(now time.Duration) float64 {
	var total time.Duration
	for i := range j.stage {
		st := &j.stage[i]
		total += time.Duration(st.unstarted) * st.est
		if st.running > 0 {
			total += max(0, time.Duration(st.running)*(st.est-now)+st.sumStart)
		}
	}
	return total.Seconds()
}

// criticalPath is the length in seconds at now of the longest chain of
// unfinished stages by estimates, a stage with only running tasks counting
// the longest time one has left: SJF's job length.
func (j *simJob) criticalPath(now time.Duration) float64 {
	longest := make([]time.Duration, len(j.stage))
	var best time.Duration
	for k := len(j.byBFS) - 1; k >= 0; k-- {
		s := j.byBFS[k]
		st := &j.stage[s]
		var own time.Duration
		switch {
		case st.unstarted > 0:
			own = st.est
		case st.running > 0:
			own = max(0, st.est-(now-st.lastStart))
		}
		var tail time.Duration
		for _, c := range st.children {
			tail = max(tail, longest[c])
		}
		longest[s] = own + tail
		best = max(best, longest[s])
	}
	return best.Seconds()
}

// shapes turns quotas into demand shapes of the true demands, equal
// shapes merged, in priority order.
func (j *simJob) shapes(q []quota) []protocol.TaskShape {
	var out []protocol.TaskShape
next:
	for _, x := range q {
		if x.n <= 0 {
			continue
		}
		d := j.stage[x.stage].demand
		for i := range out {
			if out[i].Resources.Equal(d) {
				out[i].Count += int64(x.n)
				continue next
			}
		}
		out = append(out, protocol.TaskShape{Resources: d, Count: int64(x.n)})
	}
	return out
}
