package state

import (
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// LaunchTasks records a batch of tasks of one framework launched on one
// active agent, all STAGING. Each task's Info.AgentID must be AgentID and
// its ID new in the framework (IDs of removed tasks may be reused); an
// empty Info.Kind becomes fair. The initial STAGING status has no UUID and
// needs no acknowledgement. Capacity is not checked here: the leader
// validates every accept against its offer book before proposing it.
// Apply result: []*Task, the stored tasks in batch order.
// Errors: ErrUnknownFramework, ErrUnknownAgent, ErrAgentNotActive,
// ErrDuplicate, ErrInvalidArgument (and the protocol errors of
// TaskInfo.Validate); on any error no task is launched.
type LaunchTasks struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw"`
	AgentID     protocol.AgentID     `msgpack:"ag"`
	Tasks       []protocol.TaskInfo  `msgpack:"tasks"`
	Time        int64                `msgpack:"time"`
}

// UpdateTaskStatus applies a batch of status updates from agents, in
// order. For each update the task's status is replaced by the update's
// (latest wins), unacknowledged, under the update's UUID. Terminal states
// are final: the task stays, terminal, until the framework acknowledges
// it (AcknowledgeStatus), then it moves to the completed history.
//
// A malformed update fails the whole batch (the leader validates requests
// before batching them). Per-update problems that depend on the state do
// not: an update for an unknown framework or task, for a task on another
// agent, or changing a terminal task (ErrTaskTerminal) is reported in
// UpdateResult.Errors and the rest of the batch applies. An update whose
// UUID is already the task's latest is a duplicate delivery: it changes
// nothing and is listed in UpdateResult.Duplicates.
// Apply result: UpdateResult.
type UpdateTaskStatus struct {
	Updates []protocol.StatusUpdate `msgpack:"updates"`
	Time    int64                   `msgpack:"time"`
}

// UpdateResult is the outcome of UpdateTaskStatus.
type UpdateResult struct {
	// Applied are the new latest statuses, in batch order, to send to the
	// frameworks.
	Applied []protocol.TaskStatus
	// Duplicates are the UUIDs of updates that were already applied.
	Duplicates []protocol.StatusUUID
	// Errors are the updates that were not applied, in batch order.
	Errors []StatusError
}

// StatusError says why one update of a batch was not applied.
type StatusError struct {
	// Index is the update's position in the batch.
	Index int
	UUID  protocol.StatusUUID
	Task  TaskKey
	Err   error
}

// Error implements error.
func (e StatusError) Error() string {
	return fmt.Sprintf("status update %s for task %s: %v", e.UUID, e.Task, e.Err)
}

// Unwrap returns the cause.
func (e StatusError) Unwrap() error { return e.Err }

// AcknowledgeStatus records that a framework acknowledged status updates
// of its tasks: each task is Acked, and when its state is terminal it
// leaves the task table for the framework's completed history (see
// View.CompletedTasks).
// Acknowledging the latest status again changes nothing. Apply result:
// AckResult, one outcome per ack. Command errors: ErrUnknownFramework,
// ErrInvalidArgument; per-ack errors: ErrUnknownTask, ErrStaleAck (UUID is
// not the latest status).
type AcknowledgeStatus struct {
	FrameworkID protocol.FrameworkID `msgpack:"fw"`
	Acks        []StatusAck          `msgpack:"acks"`
}

// StatusAck names one acknowledged status update.
type StatusAck struct {
	TaskID protocol.TaskID     `msgpack:"tid"`
	UUID   protocol.StatusUUID `msgpack:"uuid"`
}

// AckResult is the outcome of AcknowledgeStatus, in the order of its Acks.
type AckResult []AckOutcome

// AckOutcome is the outcome of one StatusAck.
type AckOutcome struct {
	// Task is the task after the acknowledgement (as it was, if removed);
	// nil when Err is set.
	Task *Task
	// Removed reports that the task was terminal and left the table for
	// the completed history.
	Removed bool
	Err     error
}

func (c *LaunchTasks) validate() error {
	if err := (protocol.LaunchCommand{FrameworkID: c.FrameworkID, Tasks: c.Tasks}).Validate(); err != nil {
		return err
	}
	if err := checkID("agent_id", c.AgentID); err != nil {
		return err
	}
	for i, t := range c.Tasks {
		if t.AgentID != c.AgentID {
			return errorf(protocol.ErrInvalidArgument, "tasks[%d] names agent %s, batch is for %s", i, t.AgentID, c.AgentID)
		}
	}
	return checkTime("time", c.Time)
}

func (s *State) applyLaunchTasks(_ uint64, body []byte) (any, error) {
	var c LaunchTasks
	if err := decode(CmdLaunchTasks, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("launch tasks: %w", err)
	}
	if _, err := s.framework("launch tasks", c.FrameworkID); err != nil {
		return nil, err
	}
	a, err := s.agent("launch tasks", c.AgentID)
	if err != nil {
		return nil, err
	}
	if a.State != AgentActive {
		return nil, fmt.Errorf("launch tasks on %s agent %s: %w", a.State, a.ID, ErrAgentNotActive)
	}
	seen := make(map[protocol.TaskID]bool, len(c.Tasks))
	for _, t := range c.Tasks {
		if _, ok := s.cur.tasks.get(taskKey(c.FrameworkID, t.TaskID)); ok || seen[t.TaskID] {
			return nil, errorf(protocol.ErrDuplicate, "launch task %s/%s", c.FrameworkID, t.TaskID)
		}
		seen[t.TaskID] = true
	}
	out := make([]*Task, 0, len(c.Tasks))
	for _, info := range c.Tasks {
		if info.Kind == "" {
			info.Kind = protocol.OfferFair
		}
		t := &Task{
			FrameworkID: c.FrameworkID, ID: info.TaskID, AgentID: c.AgentID, Info: info,
			State: protocol.TaskStaging, Kind: info.Kind, Acked: true,
			Status: protocol.TaskStatus{
				TaskID: info.TaskID, FrameworkID: c.FrameworkID, AgentID: c.AgentID,
				State: protocol.TaskStaging, Timestamp: c.Time,
			},
			LaunchedAt: c.Time, UpdatedAt: c.Time,
		}
		s.cur.putTask(t)
		out = append(out, t)
	}
	return out, nil
}

func (c *UpdateTaskStatus) validate() error {
	if len(c.Updates) == 0 {
		return errorf(protocol.ErrInvalidArgument, "no updates")
	}
	if len(c.Updates) > protocol.MaxListLen {
		return errorf(protocol.ErrInvalidArgument, "%d updates, limit %d", len(c.Updates), protocol.MaxListLen)
	}
	for i, u := range c.Updates {
		if err := u.Validate(); err != nil {
			return fmt.Errorf("updates[%d]: %w", i, err)
		}
	}
	return checkTime("time", c.Time)
}

func (s *State) applyUpdateTaskStatus(_ uint64, body []byte) (any, error) {
	var c UpdateTaskStatus
	if err := decode(CmdUpdateTaskStatus, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("update task status: %w", err)
	}
	var res UpdateResult
	for i, u := range c.Updates {
		st := u.Status
		key := TaskKey{FrameworkID: st.FrameworkID, TaskID: st.TaskID}
		fail := func(err error) {
			res.Errors = append(res.Errors, StatusError{Index: i, UUID: u.UUID, Task: key, Err: err})
		}
		t, ok := s.cur.tasks.get(taskKey(st.FrameworkID, st.TaskID))
		switch {
		case !ok:
			if _, fw := s.cur.frameworks.get(string(st.FrameworkID)); !fw {
				fail(protocol.ErrUnknownFramework)
			} else {
				fail(protocol.ErrUnknownTask)
			}
		case st.AgentID != "" && st.AgentID != t.AgentID:
			fail(errorf(protocol.ErrInvalidArgument, "update from agent %s, task is on %s", st.AgentID, t.AgentID))
		case u.UUID == t.StatusUUID:
			res.Duplicates = append(res.Duplicates, u.UUID)
		case t.Terminal():
			fail(fmt.Errorf("%s is %s: %w", key, t.State, ErrTaskTerminal))
		default:
			if st.State == protocol.TaskDropped {
				st.State = s.cur.StateFor(st.FrameworkID, st.State)
			}
			res.Applied = append(res.Applied, s.cur.setStatus(t, st, u.UUID, c.Time).Status)
		}
	}
	return res, nil
}

func (s *State) applyAcknowledgeStatus(_ uint64, body []byte) (any, error) {
	var c AcknowledgeStatus
	if err := decode(CmdAcknowledgeStatus, body, &c); err != nil {
		return nil, err
	}
	if len(c.Acks) == 0 || len(c.Acks) > protocol.MaxListLen {
		return nil, errorf(protocol.ErrInvalidArgument, "acknowledge status: %d acks, want 1 to %d", len(c.Acks), protocol.MaxListLen)
	}
	for i, a := range c.Acks {
		if err := checkID("task_id", a.TaskID); err != nil {
			return nil, fmt.Errorf("acknowledge status acks[%d]: %w", i, err)
		}
		if err := checkID("uuid", a.UUID); err != nil {
			return nil, fmt.Errorf("acknowledge status acks[%d]: %w", i, err)
		}
	}
	if _, err := s.framework("acknowledge status", c.FrameworkID); err != nil {
		return nil, err
	}
	res := make(AckResult, len(c.Acks))
	for i, a := range c.Acks {
		res[i] = s.acknowledge(c.FrameworkID, a)
	}
	return res, nil
}

func (s *State) acknowledge(fw protocol.FrameworkID, a StatusAck) AckOutcome {
	t, ok := s.cur.tasks.get(taskKey(fw, a.TaskID))
	if !ok {
		return AckOutcome{Err: errorf(protocol.ErrUnknownTask, "acknowledge status %s of task %s/%s", a.UUID, fw, a.TaskID)}
	}
	if i := slices.IndexFunc(t.Unacked, func(st protocol.TaskStatus) bool { return st.UUID == a.UUID }); i >= 0 {
		// Statuses go out in order, so this one acknowledges those before.
		n := *t
		n.Unacked = slices.Clone(t.Unacked[i+1:])
		if len(n.Unacked) == 0 {
			n.Unacked = nil
		}
		s.cur.putTask(&n)
		return AckOutcome{Task: &n}
	}
	if a.UUID != t.StatusUUID {
		return AckOutcome{Err: fmt.Errorf("acknowledge status %s of task %s/%s, latest is %q: %w",
			a.UUID, fw, a.TaskID, t.StatusUUID, ErrStaleAck)}
	}
	if t.Terminal() {
		s.cur.deleteTask(t)
		n := *t
		n.Acked, n.Unacked = true, nil
		s.cur.addCompleted(&n)
		return AckOutcome{Task: t, Removed: true}
	}
	if t.Acked {
		return AckOutcome{Task: t}
	}
	n := *t
	n.Acked, n.Unacked = true, nil
	s.cur.putTask(&n)
	return AckOutcome{Task: &n}
}

// StateFor is the state a framework is told for a task in state st: a
// framework that is not partition aware knows neither UNREACHABLE nor
// DROPPED, and hears LOST for both, as Mesos tells it. The leader uses it
// for the statuses it sends without a command (a refused launch's).
func (v *View) StateFor(fw protocol.FrameworkID, st protocol.TaskState) protocol.TaskState {
	if st != protocol.TaskUnreachable && st != protocol.TaskDropped {
		return st
	}
	if f, ok := v.frameworks.get(string(fw)); ok && f.HasCapability(protocol.CapPartitionAware) {
		return st
	}
	return protocol.TaskLost
}
