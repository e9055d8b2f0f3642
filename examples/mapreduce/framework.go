package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/protocol"
)

// Stage names of every job's DAG: maps, a barrier, reducers.
const (
	stageMap    = "map"
	stageReduce = "reduce"
)

// Planning estimates of a task's run time; the planner refines them with
// the run times it observes.
const (
	mapEstimate    = time.Second
	reduceEstimate = time.Second
)

// maxAttempts is how often a task may fail before its job fails, as
// Hadoop's default: a reducer whose input was on a lost agent fails once
// for the shuffle, and may be lost once more if it was launched there
// before the master noticed.
const maxAttempts = 4

// roleFramework is the framework of one role: a dag.Scheduler running
// its jobs, plus what the shuffle needs to know. It watches the offers
// for the agents' file server addresses, and the statuses for where each
// task finished, before handing both on to the scheduler. A reduce task
// is built only after every map task of its job has finished (the
// barrier), so its builder finds every map output's location.
type roleFramework struct {
	*dag.Scheduler
	role string
	exe  string // the worker binary: this program
	// demand is one task's resources.
	demand protocol.Resources
	out    *printer
	prog   *progress
	// shuffles registers the jobs' shuffles as coflows; stop ends its
	// loop.
	shuffles *shuffles
	ctx      context.Context
	stop     context.CancelFunc

	mu sync.Mutex
	// addrs are the agents' file servers, from the offers.
	addrs map[protocol.AgentID]string
	// done holds where each task last finished.
	done map[taskKey]finished
	jobs map[string]*runJob
	id   protocol.FrameworkID
}

// taskKey names a task of a job, all attempts alike.
type taskKey struct {
	job, stage string
	index      int
}

// finished is a finished attempt of a task.
type finished struct {
	attempt int
	task    protocol.TaskID
	agent   protocol.AgentID
	addr    string
	// memPeak is the most memory, in bytes, its agent saw it hold (0
	// when the agent did not say).
	memPeak int64
}

// runJob is a job of the run and its input.
type runJob struct {
	spec   jobSpec
	src    source
	bounds bounds // sort jobs with several reducers
	// output is the job's output directory; empty leaves the results in
	// the reducers' sandboxes.
	output string
}

func newRoleFramework(role, exe string, demand protocol.Resources, out *printer, prog *progress, opts ...dag.Option) (*roleFramework, error) {
	s, err := dag.New(opts...)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	return &roleFramework{Scheduler: s, role: role, exe: exe, demand: demand, out: out, prog: prog,
		shuffles: newShuffles(out, role), ctx: ctx, stop: stop,
		addrs: map[protocol.AgentID]string{}, done: map[taskKey]finished{}, jobs: map[string]*runJob{}}, nil
}

// Close stops the scheduler and the shuffles' registrations.
func (f *roleFramework) Close() {
	f.stop()
	f.Scheduler.Close()
}

// Registered notes the framework's ID (sandboxes are named after it).
func (f *roleFramework) Registered(d *framework.Driver, id protocol.FrameworkID) {
	f.mu.Lock()
	f.id = id
	f.mu.Unlock()
	f.shuffles.start(f.ctx, d)
	f.Scheduler.Registered(d, id)
}

// Offers notes the agents' file servers and hands the offers on.
func (f *roleFramework) Offers(d *framework.Driver, offers []protocol.Offer) {
	f.mu.Lock()
	for _, o := range offers {
		if o.Addresses.HTTP != "" {
			f.addrs[o.AgentID] = o.Addresses.HTTP
		}
	}
	f.mu.Unlock()
	f.Scheduler.Offers(d, offers)
}

// StatusUpdate notes where a task finished, runs again the maps whose
// output a failed reducer could not fetch (lost.go), and hands the status
// on.
// Statuses come at least once, and an earlier attempt may report
// FINISHED after a later one ran (it was thought lost in a leader
// change): the latest attempt that finished wins, and any finished
// attempt's output is as good as another's.
func (f *roleFramework) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	switch st.State {
	case protocol.TaskRunning:
		if key, _, ok := parseTaskID(st.TaskID); ok {
			f.prog.running(key, time.Now())
		}
	case protocol.TaskFinished:
		f.finished(st)
	case protocol.TaskFailed:
		f.rerunLost(d, st)
	}
	f.Scheduler.StatusUpdate(d, st)
}

// finished records where a task finished, and prints its first finish.
func (f *roleFramework) finished(st protocol.TaskStatus) {
	key, attempt, ok := parseTaskID(st.TaskID)
	if !ok {
		return
	}
	f.mu.Lock()
	prev, seen := f.done[key]
	addr := f.addrs[st.AgentID]
	if !seen || attempt > prev.attempt && addr != "" {
		f.done[key] = finished{attempt: attempt, task: st.TaskID, agent: st.AgentID, addr: addr, memPeak: st.MemPeakMiB << 20}
	}
	f.mu.Unlock()
	if !seen {
		f.prog.finished(key, time.Now(), fmt.Sprintf("[%s] %s: %s %d finished on %s", f.role, key.job, key.stage, key.index, st.AgentID))
	}
}

// parseTaskID splits a dag task ID, "<job>.<stage>.<index>.<attempt>".
func parseTaskID(id protocol.TaskID) (taskKey, int, bool) {
	parts := strings.Split(string(id), ".")
	if len(parts) != 4 {
		return taskKey{}, 0, false
	}
	index, err1 := strconv.Atoi(parts[2])
	attempt, err2 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil {
		return taskKey{}, 0, false
	}
	return taskKey{job: parts[0], stage: parts[1], index: index}, attempt, true
}

// output returns where task index of stage of job last finished, with
// its sandbox.
func (f *roleFramework) output(job, stage string, index int) (finished, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fin, ok := f.done[taskKey{job: job, stage: stage, index: index}]
	if !ok || fin.addr == "" {
		return finished{}, "", false
	}
	return fin, string(f.id) + "_" + string(fin.task), true
}

// mapAgents counts the agents job's map tasks finished on.
func (f *roleFramework) mapAgents(job string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	agents := map[protocol.AgentID]bool{}
	for k, fin := range f.done {
		if k.job == job && k.stage == stageMap {
			agents[fin.agent] = true
		}
	}
	return len(agents)
}

// dagJob is the dag job that runs j: a map stage and a reduce stage
// behind a barrier.
func (f *roleFramework) dagJob(j *runJob) dag.Job {
	f.mu.Lock()
	f.jobs[j.spec.ID] = j
	f.mu.Unlock()
	return dag.Job{
		ID: j.spec.ID,
		Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
			{Name: stageMap, Tasks: j.spec.Maps, Demand: f.demand, Duration: mapEstimate},
			{Name: stageReduce, Tasks: j.spec.Reducers, Demand: f.demand, Duration: reduceEstimate,
				Parents: []string{stageMap}},
		}},
		Task: func(r dag.TaskRef) protocol.TaskInfo { return f.task(j, r) },
	}
}

// task builds one attempt of a task of j. It runs under the scheduler's
// lock, from the driver's callbacks.
func (f *roleFramework) task(j *runJob, r dag.TaskRef) protocol.TaskInfo {
	var args []string
	mem := f.demand.Scalars[protocol.ResMem]
	if r.Stage == stageMap {
		args = mapArgs{kind: j.spec.Kind, src: j.src, split: r.Index, splits: j.spec.Maps,
			reducers: j.spec.Reducers, bounds: j.bounds, memMiB: mem}.args()
	} else {
		from := make([]mapOutput, 0, j.spec.Maps)
		srcs := make([]protocol.AgentID, 0, j.spec.Maps)
		for i := range j.spec.Maps {
			fin, sandbox, ok := f.output(j.spec.ID, stageMap, i)
			if !ok {
				// Cannot happen behind the barrier; the reducer fails
				// for the missing output, and the attempt counts.
				f.out.printf("[%s] %s: map %d has no known output for reducer %d\n", f.role, j.spec.ID, i, r.Index)
				continue
			}
			from = append(from, mapOutput{Addr: fin.addr, Sandbox: sandbox})
			srcs = append(srcs, fin.agent)
		}
		coflow := ""
		if protocol.ValidID(j.spec.ID) {
			coflow = j.spec.ID
			f.shuffles.reducerPlaced(j.spec.ID, r.Agent, srcs)
		}
		args = reduceArgs{kind: j.spec.Kind, partition: r.Index, reducers: j.spec.Reducers, coflow: coflow,
			maps: j.spec.Maps, from: from, memMiB: mem, output: j.output}.args()
	}
	b := framework.NewTask("", f.exe, args...)
	if mem > 0 {
		b.Env("GOMEMLIMIT", memoryLimitEnv(mem))
	}
	if v, ok := os.LookupEnv("GORACE"); ok {
		// A race-enabled worker passes its settings on.
		b.Env("GORACE", v)
	}
	return b.Build()
}

// printer writes lines to the run's output, one at a time.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}
