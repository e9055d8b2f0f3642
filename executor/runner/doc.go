// Package runner runs one task as a supervised process in a per-task
// sandbox, in a way that survives the agent's own restart.
//
// A task goes through three calls. Prepare creates the sandbox
// (Config.WorkDir/<Spec.Name>) and fetches the command's URIs into it. Start
// writes the task's spec into the sandbox and launches a shim (Config.Shim,
// normally `allot task-shim`, which calls ShimMain) in its own session, so
// that neither a signal to the agent's process group nor the agent's exit
// reaches it. The shim starts the command in its own process group with
// stdout and stderr going to files in the sandbox, enforces the limits
// (cgroup v2 when usable, otherwise a portable memory watch), carries out
// kills, and records the task's exit in the sandbox before it exits.
// Reattach finds such a task again from its sandbox, from this or from a
// later agent process.
//
// Sandbox layout:
//
//	<sandbox>/stdout, <sandbox>/stderr   the task's output
//	<sandbox>/.allot/spec.json           what the shim runs (written by Start)
//	<sandbox>/.allot/shim.json           the shim's and the task's pids and start times
//	<sandbox>/.allot/exit.json           the task's Exit, written once it ended
//	<sandbox>/.allot/shim.log            the shim's own log
//
// The .allot directory is reserved: fetched files and archive entries may
// not be written there.
//
// Only Linux is supported; elsewhere New returns ErrUnsupported.
//
// A deployment must not kill the whole control group of the agent when it
// stops it (with systemd: KillMode=process), or the shims die with it and
// their tasks are reported as executor_terminated.
package runner
