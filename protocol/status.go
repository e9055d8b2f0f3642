package protocol

import "fmt"

// TaskState is a task's place in its lifecycle. The normal path is
// STAGING → STARTING → RUNNING → (KILLING →) a terminal state.
type TaskState string

// Task states.
const (
	// TaskStaging: accepted by the master, not yet started by the agent.
	TaskStaging TaskState = "STAGING"
	// TaskStarting: the agent is fetching URIs and starting the process.
	TaskStarting TaskState = "STARTING"
	// TaskRunning: the process runs.
	TaskRunning TaskState = "RUNNING"
	// TaskKilling: a kill was delivered; the process is in its grace period.
	TaskKilling TaskState = "KILLING"
	// TaskFinished: exited with status 0. Terminal.
	TaskFinished TaskState = "FINISHED"
	// TaskFailed: exited non-zero or could not start. Terminal.
	TaskFailed TaskState = "FAILED"
	// TaskKilled: killed on request. Terminal.
	TaskKilled TaskState = "KILLED"
	// TaskError: the task description was invalid (bad resources,
	// violated hard constraint, ...). Terminal.
	TaskError TaskState = "ERROR"
	// TaskLost: the master lost track of the task (agent removed, or unknown
	// on reconciliation). Terminal.
	TaskLost TaskState = "LOST"
	// TaskUnreachable: the task's agent is partitioned away; the task may
	// come back. Sent to partition-aware frameworks. Not terminal.
	TaskUnreachable TaskState = "UNREACHABLE"
	// TaskDropped: the launch never reached the agent. Terminal.
	TaskDropped TaskState = "DROPPED"
)

// TaskStates returns every task state in lifecycle order.
func TaskStates() []TaskState {
	return []TaskState{
		TaskStaging, TaskStarting, TaskRunning, TaskKilling, TaskFinished, TaskFailed,
		TaskKilled, TaskError, TaskLost, TaskUnreachable, TaskDropped,
	}
}

// Terminal reports whether no further state can follow s.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskFinished, TaskFailed, TaskKilled, TaskError, TaskLost, TaskDropped:
		return true
	}
	return false
}

// Valid reports whether s is a known state.
func (s TaskState) Valid() bool {
	switch s {
	case TaskStaging, TaskStarting, TaskRunning, TaskKilling, TaskUnreachable:
		return true
	}
	return s.Terminal()
}

// Reasons carried in TaskStatus.Reason. Senders may use others; receivers
// must treat unknown reasons as informational.
const (
	ReasonReconciliation     = "reconciliation"
	ReasonTaskUnknown        = "task_unknown"
	ReasonTaskInvalid        = "task_invalid"
	ReasonInvalidOffers      = "invalid_offers"
	ReasonConstraintViolated = "constraint_violated"
	ReasonFetchFailed        = "fetch_failed"
	ReasonCommandFailed      = "command_failed"
	ReasonMemoryLimit        = "memory_limit"
	ReasonKilledDuringLaunch = "killed_during_launch"
	ReasonAgentRemoved       = "agent_removed"
	ReasonAgentGone          = "agent_gone" // the operator marked the agent gone
	ReasonAgentUnreachable   = "agent_unreachable"
	ReasonAgentRestarted     = "agent_restarted"
	ReasonFrameworkRemoved   = "framework_removed"
	ReasonGroupMemberFailed  = "group_member_failed"
	ReasonExecutorTerminated = "executor_terminated"
	ReasonKilledByFramework  = "killed_by_framework"
	ReasonLaunchNotDelivered = "launch_not_delivered"
	ReasonFailoverTimeout    = "failover_timeout"
	// ReasonPreempted: the master killed the task, after a warning and a
	// deadline, so that a role below its guarantee or fair share could run.
	ReasonPreempted = "preempted"
	// ReasonRevoked: the task ran on revocable (leftover) resources and the
	// role that lent them wanted them back.
	ReasonRevoked = "revoked"
	// ReasonAgentDrained: the task was still running when its agent's drain
	// deadline passed.
	ReasonAgentDrained = "agent_drained"
	// ReasonKilledByOperator: an operator killed the task.
	ReasonKilledByOperator = "killed_by_operator"
)

// KnownReason reports whether reason is one of the reasons above.
func KnownReason(reason string) bool {
	switch reason {
	case ReasonReconciliation, ReasonTaskUnknown, ReasonTaskInvalid, ReasonInvalidOffers, ReasonConstraintViolated,
		ReasonFetchFailed, ReasonCommandFailed, ReasonMemoryLimit, ReasonKilledDuringLaunch, ReasonAgentRemoved,
		ReasonAgentGone, ReasonAgentUnreachable, ReasonAgentRestarted, ReasonFrameworkRemoved, ReasonGroupMemberFailed,
		ReasonExecutorTerminated, ReasonKilledByFramework, ReasonLaunchNotDelivered, ReasonFailoverTimeout,
		ReasonPreempted, ReasonRevoked, ReasonAgentDrained, ReasonKilledByOperator:
		return true
	}
	return false
}

// MasterKillReason reports whether reason is one the master may put on a
// kill it sends an agent (KillCommand.Reason).
func MasterKillReason(reason string) bool {
	switch reason {
	case ReasonPreempted, ReasonRevoked, ReasonAgentDrained, ReasonKilledByOperator:
		return true
	}
	return false
}

// TaskStatus is a task's state at a point in time, as reported by its agent
// or, for reconciliation and lost agents, by the master.
type TaskStatus struct {
	TaskID      TaskID      `msgpack:"tid" json:"task_id"`
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	AgentID     AgentID     `msgpack:"ag,omitempty" json:"agent_id,omitempty"`
	State       TaskState   `msgpack:"st" json:"state"`
	// Reason is a machine-readable cause, usually one of the Reason consts.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Message is human-readable detail (e.g. the tail of stderr).
	Message string `msgpack:"msg,omitempty" json:"message,omitempty"`
	// ExitCode is the process exit status, when the process exited.
	ExitCode *int `msgpack:"exit,omitempty" json:"exit_code,omitempty"`
	// Timestamp is when the state was observed, in Unix nanoseconds.
	Timestamp int64 `msgpack:"ts" json:"timestamp"`
	// UUID is the status update that carried this status; empty for
	// statuses the master generates for reconciliation, which need no
	// acknowledgement.
	UUID StatusUUID `msgpack:"uuid,omitempty" json:"uuid,omitempty"`
	// Healthy is the latest health-check result, when the task has one.
	Healthy *bool `msgpack:"healthy,omitempty" json:"healthy,omitempty"`
	// MemPeakMiB is, in a terminal status the agent sends, the most
	// resident memory the task's processes were seen to hold together
	// (sampled while it ran, rounded up; 0 when not known).
	MemPeakMiB int64 `msgpack:"mempk,omitempty" json:"mem_peak_mib,omitempty"`
}

// Validate checks IDs, state and text sizes.
func (s TaskStatus) Validate() error {
	if err := checkID("task_id", s.TaskID); err != nil {
		return err
	}
	if err := checkID("framework_id", s.FrameworkID); err != nil {
		return err
	}
	if err := checkOptionalID("agent_id", s.AgentID); err != nil {
		return err
	}
	if !s.State.Valid() {
		return Errorf(ErrInvalidArgument, "task %s: unknown state %q", s.TaskID, truncate(string(s.State)))
	}
	if err := checkText("reason", s.Reason, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("message", s.Message, MaxTextLen); err != nil {
		return err
	}
	if err := checkNonNegative("timestamp", s.Timestamp); err != nil {
		return err
	}
	if err := checkNonNegative("mem_peak_mib", s.MemPeakMiB); err != nil {
		return err
	}
	return checkOptionalID("uuid", s.UUID)
}

// StatusUpdate is one reliable status update: the agent keeps it until the
// master acknowledges UUID (AckCommand), the master keeps it until the
// framework acknowledges UUID (AcknowledgeRequest).
type StatusUpdate struct {
	Status TaskStatus `msgpack:"s" json:"status"`
	// UUID identifies the update; Status.UUID is empty or equal to it.
	UUID StatusUUID `msgpack:"uuid" json:"uuid"`
}

// Validate checks the status and that the UUIDs agree.
func (u StatusUpdate) Validate() error {
	if err := checkID("uuid", u.UUID); err != nil {
		return err
	}
	if u.Status.UUID != "" && u.Status.UUID != u.UUID {
		return Errorf(ErrInvalidArgument, "status uuid %q differs from update uuid %q", u.Status.UUID, u.UUID)
	}
	if err := u.Status.Validate(); err != nil {
		return fmt.Errorf("status update %s: %w", u.UUID, err)
	}
	return nil
}
