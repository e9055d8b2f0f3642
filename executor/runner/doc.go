// Package runner runs one task as a supervised process in a per-task
// sandbox, in a way that survives the agent's own restart.
//
// A task goes through three calls. Prepare creates the sandbox
// (Config.WorkDir/<Spec.Name>), fetches the command's URIs into it and
// gives it to the task's user. Start writes the task's spec into its
// control directory (Config.ControlDir/<Spec.Name>) and launches a shim
// (Config.Shim, normally `allot task-shim <control dir>`, which calls
// ShimMain) in its own session, so that neither a signal to the agent's
// process group nor the agent's exit reaches it. The shim starts the
// command as the task's user, in its own process group, with stdout and
// stderr going to files in the sandbox, enforces the limits (cgroups, v2 or
// v1, when usable, otherwise a portable memory watch), carries out kills, and
// records the task's exit in the control directory before it exits.
// Reattach finds such a task again from its control directory, from this
// or from a later agent process.
//
// # Users
//
// Command.User names the user a task runs as (LookupUser); empty, the
// agent's own. An agent running as root runs it with that user's uid,
// primary gid and supplementary groups, while the shim stays root to
// account and kill. The sandbox then belongs to the user and its primary
// group, mode 0700, and so does everything the runner puts in it (fetched
// files, extracted archives, stdout, stderr). The runner fills a sandbox
// while it is still the agent's, and gives it away only at the end, so
// that nothing of the task's user can redirect what the agent writes;
// local file URIs are read with the user's permissions. The work directory
// is mode 0711: tasks reach their sandbox but list no other. Sandboxes an
// earlier version left readable by all are made private by New.
//
// Layout:
//
//	<work dir>/<name>/stdout, stderr      the task's output, and its files
//	<control dir>/<name>/spec.json        what the shim runs (written by Start)
//	<control dir>/<name>/shim.json        the shim's and the task's pids and start times
//	<control dir>/<name>/kill.json        a kill's grace period, for the shim
//	<control dir>/<name>/exit.json        the task's Exit, written once it ended
//	<control dir>/<name>/shim.log         the shim's own log
//
// The control directory, mode 0700, is the agent's alone, so the records
// the agent acts on (pids to kill, exits to report) are out of the task's
// reach; a sandbox is never trusted for them. Earlier versions kept it in
// the sandbox as .allot: tasks they started are still found there (see
// control.go), and fetched files and archive entries may not be written
// there.
//
// Only Linux is supported; elsewhere New returns ErrUnsupported.
//
// A deployment must not kill the whole control group of the agent when it
// stops it (with systemd: KillMode=process), or the shims die with it and
// their tasks are reported as executor_terminated.
package runner
