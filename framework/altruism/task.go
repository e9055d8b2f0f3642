package altruism

import (
	"fmt"
	"strconv"
	"time"
)

// TaskState is where a task is in its life.
type TaskState uint8

// Task states. A task that failed is unstarted again: it is planned exactly
// like a pending task (a restarted task is a new task) until it starts.
const (
	Pending TaskState = iota
	Running
	Finished
	Failed
)

func (s TaskState) String() string {
	switch s {
	case Pending:
		return "pending"
	case Running:
		return "running"
	case Finished:
		return "finished"
	case Failed:
		return "failed"
	}
	return "TaskState(" + strconv.Itoa(int(s)) + ")"
}

// unstarted reports whether a task in state s is waiting to be started.
func (s TaskState) unstarted() bool { return s == Pending || s == Failed }

// TaskID names a task: its stage and its index within the stage.
type TaskID struct {
	Stage string
	Index int
}

func (id TaskID) String() string { return id.Stage + "/" + strconv.Itoa(id.Index) }

type task struct {
	state TaskState
	// start is when the current or last attempt started.
	start time.Time
	// failures counts failed attempts.
	failures int
}

// TaskInfo is a snapshot of one task.
type TaskInfo struct {
	ID    TaskID
	State TaskState
	// Start is when the current (Running) or last attempt started; zero if
	// the task never started.
	Start time.Time
	// Failures counts failed attempts.
	Failures int
	// Runnable reports whether every task of every parent stage has
	// finished.
	Runnable bool
}

func (j *Job) lookup(id TaskID) (*stage, *task, error) {
	i, ok := j.index[id.Stage]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownStage, id.Stage)
	}
	s := &j.stages[i]
	if id.Index < 0 || id.Index >= len(s.tasks) {
		return nil, nil, fmt.Errorf("%w: %v (stage has %d tasks)", ErrUnknownTask, id, len(s.tasks))
	}
	return s, &s.tasks[id.Index], nil
}

// Task returns a snapshot of one task.
func (j *Job) Task(id TaskID) (TaskInfo, error) {
	s, t, err := j.lookup(id)
	if err != nil {
		return TaskInfo{}, err
	}
	return TaskInfo{ID: id, State: t.state, Start: t.start, Failures: t.failures, Runnable: s.waiting == 0}, nil
}

// Tasks returns a snapshot of every task, stage by stage in topological
// order.
func (j *Job) Tasks() []TaskInfo {
	var out []TaskInfo
	for _, si := range j.order {
		s := &j.stages[si]
		for k, t := range s.tasks {
			out = append(out, TaskInfo{
				ID: TaskID{Stage: s.name, Index: k}, State: t.state, Start: t.start,
				Failures: t.failures, Runnable: s.waiting == 0,
			})
		}
	}
	return out
}

// TaskStarted records that a pending or failed task started at at.
func (j *Job) TaskStarted(id TaskID, at time.Time) error {
	s, t, err := j.lookup(id)
	if err != nil {
		return err
	}
	if !t.state.unstarted() {
		return fmt.Errorf("%w: start %v, which is %v", ErrTaskState, id, t.state)
	}
	if s.waiting > 0 {
		return fmt.Errorf("%w: %v waits for %d parent stage(s)", ErrNotRunnable, id, s.waiting)
	}
	t.state, t.start = Running, at
	s.unstarted--
	s.running++
	return nil
}

// TaskFinished records that a running task finished at at. Once every task
// of a stage has finished, its child stages may start. Unless the job has
// FixedEstimates, the stage's duration estimate becomes the mean run time of
// its finished tasks.
func (j *Job) TaskFinished(id TaskID, at time.Time) error {
	s, t, err := j.lookup(id)
	if err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("%w: finish %v, which is %v", ErrTaskState, id, t.state)
	}
	if at.Before(t.start) {
		return fmt.Errorf("%w: %v finished at %v, started at %v", ErrTimeOrder, id, at, t.start)
	}
	t.state = Finished
	s.running--
	s.finished++
	s.doneSum += at.Sub(t.start)
	s.doneN++
	if !j.fixedEstimates {
		s.dur = max(s.doneSum/time.Duration(s.doneN), 1)
	}
	if s.unfinished() == 0 {
		for _, c := range s.children {
			j.stages[c].waiting--
		}
	}
	return nil
}

// TaskFailed records that a running task failed at at. The task becomes
// unstarted again (state Failed) and is planned like a new task.
func (j *Job) TaskFailed(id TaskID, at time.Time) error {
	s, t, err := j.lookup(id)
	if err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("%w: fail %v, which is %v", ErrTaskState, id, t.state)
	}
	if at.Before(t.start) {
		return fmt.Errorf("%w: %v failed at %v, started at %v", ErrTimeOrder, id, at, t.start)
	}
	t.state = Failed
	t.failures++
	s.running--
	s.unstarted++
	return nil
}

// TaskLost records that a finished task's output is gone (the machine that
// held it died) while a child stage still needs it: the task is unstarted
// again, planned like a new one, and its child stages wait for it once
// more. Their tasks already running or finished are left alone; the ones
// not started yet start only after it finishes again. Losing an output
// that no unfinished task reads is refused with ErrTaskState.
func (j *Job) TaskLost(id TaskID) error {
	s, t, err := j.lookup(id)
	if err != nil {
		return err
	}
	if t.state != Finished {
		return fmt.Errorf("%w: lose the output of %v, which is %v", ErrTaskState, id, t.state)
	}
	needed := false
	for _, c := range s.children {
		needed = needed || j.stages[c].unfinished() > 0
	}
	if !needed {
		return fmt.Errorf("%w: the output of %v: no unfinished task reads it", ErrTaskState, id)
	}
	if s.unfinished() == 0 {
		for _, c := range s.children {
			j.stages[c].waiting++
		}
	}
	t.state = Pending
	s.finished--
	s.unstarted++
	return nil
}
