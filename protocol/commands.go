package protocol

import (
	"fmt"
	"time"
)

// LaunchCommand tells an agent to launch tasks of one framework.
type LaunchCommand struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	Tasks       []TaskInfo  `msgpack:"tasks" json:"tasks"`
}

// Validate checks the framework ID and every task.
func (c LaunchCommand) Validate() error {
	return validateLaunch(c.FrameworkID, "", c.Tasks)
}

// LaunchGroupCommand tells an agent to launch a task group all or nothing:
// if any task cannot start, none runs.
type LaunchGroupCommand struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	GroupID     string      `msgpack:"gid" json:"group_id"`
	Tasks       []TaskInfo  `msgpack:"tasks" json:"tasks"`
}

// Validate checks the IDs and every task.
func (c LaunchGroupCommand) Validate() error {
	if err := checkID("group_id", c.GroupID); err != nil {
		return err
	}
	return validateLaunch(c.FrameworkID, c.GroupID, c.Tasks)
}

// KillCommand tells an agent to kill a task: SIGTERM, then SIGKILL after
// GracePeriod (0 means the task's KillGracePeriod).
type KillCommand struct {
	FrameworkID FrameworkID   `msgpack:"fw" json:"framework_id"`
	TaskID      TaskID        `msgpack:"tid" json:"task_id"`
	GracePeriod time.Duration `msgpack:"grace,omitempty" json:"grace_period,omitempty"`
	// Reason is why the master kills the task when it is not the
	// framework's kill: one of the reasons MasterKillReason accepts. The
	// task's KILLED status carries it.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Validate checks the IDs, grace period and reason.
func (c KillCommand) Validate() error {
	if c.Reason != "" && !MasterKillReason(c.Reason) {
		return Errorf(ErrInvalidArgument, "kill reason %q", c.Reason)
	}
	if err := checkID("framework_id", c.FrameworkID); err != nil {
		return err
	}
	if err := checkID("task_id", c.TaskID); err != nil {
		return err
	}
	return checkNonNegative("grace_period", c.GracePeriod)
}

// ShutdownFrameworkCommand tells an agent to kill every task of a framework
// that was torn down or failed to fail over in time.
type ShutdownFrameworkCommand struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
}

// AckCommand tells an agent the master has durably stored (or will never
// take) the status updates it names, so the agent may stop resending them.
type AckCommand struct {
	Acks []StatusAck `msgpack:"acks" json:"acks"`
}

// StatusAck names one status update of task (FrameworkID, TaskID).
type StatusAck struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	TaskID      TaskID      `msgpack:"tid" json:"task_id"`
	UUID        StatusUUID  `msgpack:"uuid" json:"uuid"`
}

func validateLaunch(fw FrameworkID, group string, tasks []TaskInfo) error {
	if err := checkID("framework_id", fw); err != nil {
		return err
	}
	if len(tasks) == 0 {
		return Errorf(ErrInvalidArgument, "launch without tasks")
	}
	if err := checkLen("tasks", len(tasks), MaxTasksPerAccept); err != nil {
		return err
	}
	for i, t := range tasks {
		if err := t.Validate(); err != nil {
			return fmt.Errorf("tasks[%d]: %w", i, err)
		}
		if group != "" && t.GroupID != "" && t.GroupID != group {
			return Errorf(ErrInvalidArgument, "task %s group_id %q differs from %q", t.TaskID, t.GroupID, group)
		}
	}
	return nil
}
