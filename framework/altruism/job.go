package altruism

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// StageSpec describes one stage of a DAG job: a number of identical tasks
// and the stages they wait for.
//
// Tasks of a stage share one demand and one duration estimate: the paper
// assumes tasks of a stage look alike, and planning per stage (counts of
// identical tasks) is what keeps a plan cheap enough to run on every event.
type StageSpec struct {
	// Name identifies the stage within its job.
	Name string
	// Tasks is how many tasks the stage has; at least one.
	Tasks int
	// Demand is what one task needs, in scalars (cpus in milli-CPU, mem in
	// MiB, ...). Range resources are rejected.
	Demand protocol.Resources
	// Duration is the estimated run time of one task; positive.
	Duration time.Duration
	// Parents are the stages whose tasks must all finish before any task of
	// this stage starts. Every edge is such a barrier (all-to-all).
	Parents []string
}

// JobSpec describes a DAG job.
type JobSpec struct {
	// Stages lists the job's stages in any order; the DAG they form must be
	// acyclic.
	Stages []StageSpec
	// Greedy marks a job that is never altruistic, whatever the planner's
	// P(altruism): it is the per-job "not altruistic" flag of the paper.
	Greedy bool
	// FixedEstimates keeps each stage's duration estimate as given. By
	// default a stage's estimate becomes the mean run time of its finished
	// tasks as they finish, an online correction for
	// misestimated jobs.
	FixedEstimates bool
}

// stage is a stage's static description plus its tasks' state.
type stage struct {
	name     string
	parents  []int
	children []int
	// topo is the stage's position in the job's topological order; lower
	// wins ties between otherwise equal candidates.
	topo int
	// demand is one task's demand; the map is replaced, never mutated,
	// because Decisions hand it out.
	demand protocol.Resources
	need   vec
	dur    time.Duration
	tasks  []task
	// Task counts by state: unstarted counts Pending and Failed tasks.
	unstarted, running, finished int
	// waiting counts parent stages with unfinished tasks.
	waiting int
	// Run times of finished tasks, for re-estimation.
	doneSum time.Duration
	doneN   int64
}

func (s *stage) unfinished() int { return s.unstarted + s.running }

// Job is one DAG job's structure and the state of its tasks, its share and
// the schedule its last plan committed to. Build it with NewJob and keep it
// up to date with its event methods.
type Job struct {
	stages []stage
	index  map[string]int
	// order lists stage indices in topological order.
	order []int
	// dims are the resource names any stage demands, sorted; vecs index them.
	dims  []string
	share protocol.Resources
	// capacity is the share over dims.
	capacity       vec
	greedy         bool
	fixedEstimates bool
	commit         commitment
}

// NewJob validates spec and returns a job with every task pending and a zero
// share; call ShareChanged before planning.
func NewJob(spec JobSpec) (*Job, error) {
	if len(spec.Stages) == 0 {
		return nil, ErrNoStages
	}
	j := &Job{
		stages:         make([]stage, len(spec.Stages)),
		index:          make(map[string]int, len(spec.Stages)),
		greedy:         spec.Greedy,
		fixedEstimates: spec.FixedEstimates,
	}
	for i, ss := range spec.Stages {
		if err := checkStage(ss); err != nil {
			return nil, err
		}
		if _, dup := j.index[ss.Name]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateStage, ss.Name)
		}
		j.index[ss.Name] = i
		j.stages[i] = stage{
			name:      ss.Name,
			demand:    scalarsOnly(ss.Demand),
			dur:       ss.Duration,
			tasks:     make([]task, ss.Tasks),
			unstarted: ss.Tasks,
		}
	}
	for i, ss := range spec.Stages {
		for _, pname := range ss.Parents {
			p, ok := j.index[pname]
			if !ok {
				return nil, fmt.Errorf("%w: %q, parent of %q", ErrUnknownStage, pname, ss.Name)
			}
			if slices.Contains(j.stages[i].parents, p) {
				continue
			}
			j.stages[i].parents = append(j.stages[i].parents, p)
			j.stages[p].children = append(j.stages[p].children, i)
		}
		j.stages[i].waiting = len(j.stages[i].parents)
	}
	if err := j.sortStages(); err != nil {
		return nil, err
	}
	j.reindex()
	return j, nil
}

func checkStage(ss StageSpec) error {
	if ss.Name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidStage)
	}
	if ss.Tasks < 1 {
		return fmt.Errorf("%w: %q has %d tasks", ErrInvalidStage, ss.Name, ss.Tasks)
	}
	if ss.Duration <= 0 {
		return fmt.Errorf("%w: stage %q: %v", ErrInvalidDuration, ss.Name, ss.Duration)
	}
	if err := checkScalars(ss.Demand, true); err != nil {
		return fmt.Errorf("%w: stage %q: %v", ErrInvalidDemand, ss.Name, err)
	}
	return nil
}

// sortStages fills order and topo by Kahn's algorithm, taking ready stages
// in declaration order so that the order is deterministic.
func (j *Job) sortStages() error {
	indeg := make([]int, len(j.stages))
	for i := range j.stages {
		indeg[i] = len(j.stages[i].parents)
	}
	j.order = make([]int, 0, len(j.stages))
	placed := make([]bool, len(j.stages))
	for len(j.order) < len(j.stages) {
		next := -1
		for i := range j.stages {
			if !placed[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			var cyclic []string
			for i := range j.stages {
				if !placed[i] {
					cyclic = append(cyclic, j.stages[i].name)
				}
			}
			return fmt.Errorf("%w among %s", ErrCycle, strings.Join(cyclic, ", "))
		}
		placed[next] = true
		j.stages[next].topo = len(j.order)
		j.order = append(j.order, next)
		for _, c := range j.stages[next].children {
			indeg[c]--
		}
	}
	return nil
}

// reindex recomputes dims from the stages' demands and every dense vector
// built on them.
func (j *Job) reindex() {
	seen := map[string]bool{}
	j.dims = j.dims[:0]
	for i := range j.stages {
		for name := range j.stages[i].demand.Scalars {
			if !seen[name] {
				seen[name] = true
				j.dims = append(j.dims, name)
			}
		}
	}
	slices.Sort(j.dims)
	for i := range j.stages {
		j.stages[i].need = dense(j.dims, j.stages[i].demand)
	}
	j.capacity = dense(j.dims, j.share)
}

// ShareChanged sets the job's share A_k, as computed by the inter-job (DRF)
// scheduler. Range resources in share are ignored.
func (j *Job) ShareChanged(share protocol.Resources) error {
	if err := checkScalars(share, false); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidShare, err)
	}
	j.share = scalarsOnly(share)
	j.capacity = dense(j.dims, j.share)
	return nil
}

// Share returns the job's current share.
func (j *Job) Share() protocol.Resources { return j.share.Clone() }

// UpdateEstimate replaces a stage's per-task demand and duration estimates.
// Running tasks are re-planned with the new estimates too.
func (j *Job) UpdateEstimate(stageName string, demand protocol.Resources, d time.Duration) error {
	i, ok := j.index[stageName]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownStage, stageName)
	}
	if d <= 0 {
		return fmt.Errorf("%w: stage %q: %v", ErrInvalidDuration, stageName, d)
	}
	if err := checkScalars(demand, true); err != nil {
		return fmt.Errorf("%w: stage %q: %v", ErrInvalidDemand, stageName, err)
	}
	j.stages[i].demand = scalarsOnly(demand)
	j.stages[i].dur = d
	j.reindex()
	return nil
}

// Estimate returns a stage's current per-task demand and duration estimate.
func (j *Job) Estimate(stageName string) (protocol.Resources, time.Duration, error) {
	i, ok := j.index[stageName]
	if !ok {
		return protocol.Resources{}, 0, fmt.Errorf("%w: %q", ErrUnknownStage, stageName)
	}
	return j.stages[i].demand.Clone(), j.stages[i].dur, nil
}

// Done reports whether every task of the job has finished.
func (j *Job) Done() bool {
	for i := range j.stages {
		if j.stages[i].unfinished() > 0 {
			return false
		}
	}
	return true
}
