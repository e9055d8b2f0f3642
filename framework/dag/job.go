package dag

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// Job is a DAG job to run.
type Job struct {
	// ID names the job within the scheduler. Task IDs are built from it,
	// so it may hold only what protocol.ValidID allows, and no '.'.
	ID string
	// Spec is the job's DAG: stages of identical tasks, their demand and
	// duration estimates, and their parent stages. Spec.Greedy keeps this
	// job greedy whatever P(altruism).
	Spec altruism.JobSpec
	// Task builds one attempt of one task. The scheduler then sets the
	// task's TaskID (and its Name when empty), its AgentID and its
	// Resources (the stage's Demand); everything else (the command above
	// all, labels, kill grace period, NonPreemptible) is the builder's,
	// except that NonPreemptible is cleared on leftover offers, whose
	// tasks the master never takes as non-preemptible. It is called with
	// the scheduler's lock held and must not call the scheduler.
	Task func(TaskRef) protocol.TaskInfo
}

// TaskRef names one attempt of one task of a job.
type TaskRef struct {
	// Job is the job's ID.
	Job string
	// Stage and Index name the task within the job.
	Stage string
	Index int
	// Attempt counts the launches tried for the task, from 1.
	Attempt int
	// Kind is the kind of offer the attempt launches on.
	Kind protocol.OfferKind
	// Agent is the agent the attempt launches on.
	Agent protocol.AgentID
}

// TaskID returns the attempt's task ID: "<job>.<stage>.<index>.<attempt>".
// Job IDs hold no '.', and the index and attempt are the last two parts,
// so no two attempts of a scheduler's jobs share an ID.
func (r TaskRef) TaskID() protocol.TaskID {
	return protocol.TaskID(r.Job + "." + r.Stage + "." + strconv.Itoa(r.Index) + "." + strconv.Itoa(r.Attempt))
}

// Result is how a job ended.
type Result struct {
	// Job is the job's ID.
	Job string
	// Err is nil when every task finished; otherwise it wraps
	// ErrJobFailed (a task failed too often) or ErrClosed.
	Err error
	// Submitted and Ended are when the job was submitted and when its
	// last task finished (or it failed), on the scheduler's clock.
	Submitted, Ended time.Time
	// JCT is the job's completion time, Ended − Submitted.
	JCT time.Duration
	// FairTasks and LeftoverTasks count the task attempts launched on
	// fair and on leftover offers.
	FairTasks, LeftoverTasks int
	// Failures counts failed task attempts. Attempts dropped or lost,
	// those the master killed to preempt or revoke them or to drain their
	// agent, and those the scheduler released in place of warned ones,
	// are not failures: they run again without counting against
	// WithMaxAttempts.
	Failures int
	// Preempted counts attempts the master killed for preemption,
	// revocation or a drain (their KILLED status's reason); Released
	// those the scheduler killed itself in place of attempts the master
	// warned it would revoke.
	Preempted, Released int
	// Plans counts the job's plans.
	Plans int
}

// jobState is a submitted job and its progress.
type jobState struct {
	spec    Job
	seq     int // submission order
	job     *altruism.Job
	planner *altruism.Planner
	rng     *rand.Rand
	// demand is one task's demand per stage.
	demand map[string]protocol.Resources
	// share is the job's part of the framework's share, when known.
	share protocol.Resources
	plan  altruism.Decision
	// attempts counts launches per task; failures counts failed ones.
	attempts map[altruism.TaskID]int
	failures map[altruism.TaskID]int
	// running holds the job's launched attempts that have not ended.
	running map[protocol.TaskID]*attempt
	res     Result
	ended   bool
	done    chan struct{}
}

// attempt is one launched attempt of one task.
type attempt struct {
	js    *jobState
	task  altruism.TaskID
	agent protocol.AgentID
	kind  protocol.OfferKind
	// res is what the attempt holds; started is when its launch was
	// accepted, on the scheduler's clock.
	res     protocol.Resources
	started time.Time
	// revocable: it runs on revocable (leftover) resources.
	revocable bool
	// warned: the master warned it will kill the attempt, and has not
	// withdrawn the warning. released: the scheduler killed it in place
	// of a warned attempt (preempt.go); its end is no failure. cover is
	// the attempt released in this one's place.
	warned, released bool
	cover            protocol.TaskID
}

// newJobState checks j and builds its state.
func newJobState(j Job, seq int, cfg config, now time.Time) (*jobState, error) {
	if !protocol.ValidID(j.ID) || strings.Contains(j.ID, ".") {
		return nil, fmt.Errorf("%w: id %q", ErrInvalidJob, j.ID)
	}
	if j.Task == nil {
		return nil, fmt.Errorf("%w: %s: no task builder", ErrInvalidJob, j.ID)
	}
	job, err := altruism.NewJob(j.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidJob, j.ID, err)
	}
	demand := map[string]protocol.Resources{}
	for _, st := range j.Spec.Stages {
		// The longest ID the job can produce: its last task at a large
		// attempt (attempts taken back by preemption do not count against
		// the limit, so a task may run many times).
		ref := TaskRef{Job: j.ID, Stage: st.Name, Index: st.Tasks - 1, Attempt: 999999}
		if !protocol.ValidID(string(ref.TaskID())) {
			return nil, fmt.Errorf("%w: %s: stage %q cannot name tasks", ErrInvalidJob, j.ID, st.Name)
		}
		if d, _, err := job.Estimate(st.Name); err == nil {
			demand[st.Name] = d
		}
	}
	planner, err := altruism.NewPlanner(cfg.planner)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	h := fnv.New64a()
	h.Write([]byte(j.ID))
	return &jobState{
		spec:     j,
		seq:      seq,
		job:      job,
		planner:  planner,
		rng:      rand.New(rand.NewPCG(cfg.seed, h.Sum64())),
		demand:   demand,
		attempts: map[altruism.TaskID]int{},
		failures: map[altruism.TaskID]int{},
		running:  map[protocol.TaskID]*attempt{},
		res:      Result{Job: j.ID, Submitted: now},
		done:     make(chan struct{}),
	}, nil
}

// unfinished returns the summed demand of the job's unfinished tasks: its
// demand cap when the framework's share is split among jobs.
func (js *jobState) unfinished() protocol.Resources {
	var out protocol.Resources
	for _, ti := range js.job.Tasks() {
		if ti.State != altruism.Finished {
			out.AddInPlace(js.demand[ti.ID.Stage])
		}
	}
	return out
}

// unstarted reports whether task id waits to be launched.
func (js *jobState) unstarted(id altruism.TaskID) bool {
	ti, err := js.job.Task(id)
	return err == nil && (ti.State == altruism.Pending || ti.State == altruism.Failed)
}

// buildTask builds the next attempt of task id for an offer of kind on
// agent.
func (js *jobState) buildTask(id altruism.TaskID, kind protocol.OfferKind, agent protocol.AgentID) (protocol.TaskInfo, TaskRef) {
	ref := TaskRef{Job: js.spec.ID, Stage: id.Stage, Index: id.Index, Attempt: js.attempts[id] + 1, Kind: kind, Agent: agent}
	t := js.spec.Task(ref)
	t.TaskID = ref.TaskID()
	if t.Name == "" {
		t.Name = string(t.TaskID)
	}
	t.AgentID = agent
	t.Resources = js.demand[id.Stage].Clone()
	if kind == protocol.OfferLeftover {
		t.NonPreemptible = false
	}
	return t, ref
}
