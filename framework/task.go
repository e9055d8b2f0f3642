package framework

import (
	"maps"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// TaskBuilder builds a protocol.TaskInfo step by step:
//
//	t := framework.NewTask("web-1", "./server", "--port", "8080").
//		CPUs(500).Mem(256).Label("app", "web").Build()
//
// Its methods return the builder; Build returns an independent copy.
type TaskBuilder struct {
	t protocol.TaskInfo
}

// NewTask starts a task that runs command with args (no shell).
func NewTask(id protocol.TaskID, command string, args ...string) *TaskBuilder {
	return &TaskBuilder{t: protocol.TaskInfo{
		TaskID:  id,
		Name:    string(id),
		Command: protocol.CommandInfo{Value: command, Args: slices.Clone(args)},
	}}
}

// Shell runs the command line through /bin/sh -c instead.
func (b *TaskBuilder) Shell() *TaskBuilder { b.t.Command.Shell = true; return b }

// Name sets the human-readable name (default: the task ID).
func (b *TaskBuilder) Name(name string) *TaskBuilder { b.t.Name = name; return b }

// CPUs sets the CPU need in milli-CPUs (1000 = one core).
func (b *TaskBuilder) CPUs(milli int64) *TaskBuilder { return b.Scalar(protocol.ResCPUs, milli) }

// Mem sets the memory need in MiB.
func (b *TaskBuilder) Mem(mib int64) *TaskBuilder { return b.Scalar(protocol.ResMem, mib) }

// Disk sets the disk need in MiB.
func (b *TaskBuilder) Disk(mib int64) *TaskBuilder { return b.Scalar(protocol.ResDisk, mib) }

// GPUs asks for n whole GPU devices.
func (b *TaskBuilder) GPUs(n int64) *TaskBuilder {
	return b.Scalar(protocol.ResGPUs, n*protocol.DeviceMilli)
}

// GPUShare asks for milli thousandths of one GPU device (1 to 999), which
// other tasks' shares may use the rest of.
func (b *TaskBuilder) GPUShare(milli int64) *TaskBuilder { return b.Scalar(protocol.ResGPUs, milli) }

// Scalar sets the need of any scalar resource.
func (b *TaskBuilder) Scalar(name string, v int64) *TaskBuilder {
	if b.t.Resources.Scalars == nil {
		b.t.Resources.Scalars = map[string]int64{}
	}
	b.t.Resources.Scalars[name] = v
	return b
}

// Resources sets all the task's resources at once.
func (b *TaskBuilder) Resources(r protocol.Resources) *TaskBuilder {
	b.t.Resources = r.Clone()
	return b
}

// Ports adds ports (picked from an offer with PickPorts) to the task's
// resources.
func (b *TaskBuilder) Ports(ports protocol.Ranges) *TaskBuilder {
	b.t.Resources = placement.WithPorts(b.t.Resources, ports)
	return b
}

// Env sets an environment variable.
func (b *TaskBuilder) Env(key, value string) *TaskBuilder {
	if b.t.Command.Env == nil {
		b.t.Command.Env = map[string]string{}
	}
	b.t.Command.Env[key] = value
	return b
}

// URI adds a file to fetch into the sandbox before launch.
func (b *TaskBuilder) URI(u protocol.URI) *TaskBuilder {
	b.t.Command.URIs = append(b.t.Command.URIs, u)
	return b
}

// User runs the task as this user.
func (b *TaskBuilder) User(user string) *TaskBuilder { b.t.Command.User = user; return b }

// Label sets a label.
func (b *TaskBuilder) Label(key, value string) *TaskBuilder {
	if b.t.Labels == nil {
		b.t.Labels = map[string]string{}
	}
	b.t.Labels[key] = value
	return b
}

// Constraint adds placement constraints.
func (b *TaskBuilder) Constraint(cs ...protocol.Constraint) *TaskBuilder {
	b.t.Constraints = append(b.t.Constraints, cs...)
	return b
}

// KillGrace sets the time between SIGTERM and SIGKILL on a kill.
func (b *TaskBuilder) KillGrace(d time.Duration) *TaskBuilder { b.t.KillGracePeriod = d; return b }

// HealthCheck has the agent check the running task (protocol.HealthCheck):
// results reach StatusUpdate as RUNNING updates with Healthy set, and with
// ConsecutiveFailures set the agent kills a task that keeps failing.
func (b *TaskBuilder) HealthCheck(hc protocol.HealthCheck) *TaskBuilder {
	b.t.HealthCheck = &hc
	return b
}

// NonPreemptible asks the master never to preempt the task
// (protocol.TaskInfo.NonPreemptible). The master accepts it only on fair
// offers, within the guarantee of the framework's role (or of the nearest
// role above it with one); otherwise the launch is refused with
// protocol.ErrNotPreemptible.
func (b *TaskBuilder) NonPreemptible() *TaskBuilder { b.t.NonPreemptible = true; return b }

// On places the task on an agent (Launch fills it in from the offers when
// left empty).
func (b *TaskBuilder) On(agent protocol.AgentID) *TaskBuilder { b.t.AgentID = agent; return b }

// Build returns the task.
func (b *TaskBuilder) Build() protocol.TaskInfo {
	t := b.t
	t.Resources = b.t.Resources.Clone()
	t.Command.Args = slices.Clone(b.t.Command.Args)
	t.Command.Env = maps.Clone(b.t.Command.Env)
	t.Command.URIs = slices.Clone(b.t.Command.URIs)
	t.Labels = maps.Clone(b.t.Labels)
	if hc := b.t.HealthCheck; hc != nil {
		c := *hc
		t.HealthCheck = &c
	}
	t.Constraints = slices.Clone(b.t.Constraints)
	return t
}
