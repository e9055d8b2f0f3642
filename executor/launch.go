package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// Environment variables the agent sets for every task, over the command's
// own environment (the runner adds ALLOT_SANDBOX).
const (
	EnvTaskID      = "ALLOT_TASK_ID"
	EnvFrameworkID = "ALLOT_FRAMEWORK_ID"
	EnvAgentID     = "ALLOT_AGENT_ID"
	// EnvAgentHTTP is the agent's advertised file server address.
	EnvAgentHTTP = "ALLOT_AGENT_HTTP"
	// EnvFilesToken is the task's framework token for the agents' file
	// servers (protocol.FrameworkFilesToken): it reads the
	// framework's sandboxes until Config.FilesTokenTTL after the launch.
	EnvFilesToken = "ALLOT_FILES_TOKEN"
	// EnvPorts lists the task's ports, comma-separated; PORT0, PORT1, ...
	// hold them one by one, in ascending order.
	EnvPorts = "ALLOT_PORTS"
)

// maxPortVars bounds the PORTn variables of one task.
const maxPortVars = 1024

// launch handles a LaunchCommand (group "") or a LaunchGroupCommand. Tasks
// of a plain launch that carry a GroupID are launched as that group, all
// or nothing: a new leader resends a group's launch as a plain one.
// A task the agent already has (a launch delivered again) is ignored.
func (a *Agent) launch(ctx context.Context, fw protocol.FrameworkID, group string, infos []protocol.TaskInfo) {
	if !protocol.ValidID(string(fw)) || len(infos) == 0 || len(infos) > protocol.MaxTasksPerAccept {
		a.log.Warn("invalid launch dropped", "framework_id", fw, "tasks", len(infos))
		return
	}
	if group != "" {
		a.launchGroup(ctx, fw, group, infos)
		return
	}
	groups := map[string][]protocol.TaskInfo{}
	var order []string
	for _, info := range infos {
		if info.GroupID == "" {
			a.launchOne(ctx, fw, info)
			continue
		}
		if _, ok := groups[info.GroupID]; !ok {
			order = append(order, info.GroupID)
		}
		groups[info.GroupID] = append(groups[info.GroupID], info)
	}
	for _, g := range order {
		a.launchGroup(ctx, fw, g, groups[g])
	}
}

// launchOne admits one task and starts launching it in the background.
func (a *Agent) launchOne(ctx context.Context, fw protocol.FrameworkID, info protocol.TaskInfo) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	t, ok := a.newLaunchLocked(fw, info)
	if !ok {
		return
	}
	if st, reason, msg, ok := a.admitLocked(t); !ok {
		a.enqueueLocked(t, st, reason, msg, nil)
		return
	}
	t.admitted = true
	a.enqueueLocked(t, protocol.TaskStarting, "", "", nil)
	a.wg.Add(1)
	go a.runTask(ctx, t)
}

// newLaunchLocked creates the task of a launch, or returns false for a
// task it must ignore: one without a usable ID, or one the agent already
// has or had.
func (a *Agent) newLaunchLocked(fw protocol.FrameworkID, info protocol.TaskInfo) (*task, bool) {
	if !protocol.ValidID(string(info.TaskID)) {
		a.log.Warn("launch of a task without a valid id dropped", "framework_id", fw)
		return nil, false
	}
	k := taskKey{fw, info.TaskID}
	if a.tasks.knownLocked(k) {
		a.log.Info("launch delivered again, ignored", "task", k.String())
		return nil, false
	}
	return a.newTaskLocked(fw, info), true
}

// newTaskLocked creates and registers a STAGING task.
func (a *Agent) newTaskLocked(fw protocol.FrameworkID, info protocol.TaskInfo) *task {
	name := sandboxName(fw, info.TaskID, a.nameTakenLocked)
	t := &task{
		rec: taskRecord{Name: name, FrameworkID: fw, Info: info, State: protocol.TaskStaging},
		log: a.log.With("framework_id", fw, "task_id", info.TaskID),
	}
	a.tasks.live[t.key()] = t
	return t
}

// nameTakenLocked reports whether a sandbox or record name is in use: by
// a task the agent has or had, or by a sandbox or control directory on
// disk.
func (a *Agent) nameTakenLocked(name string) bool {
	for _, t := range a.tasks.live {
		if t.rec.Name == name {
			return true
		}
	}
	for _, e := range a.tasks.ended {
		if e.name == name {
			return true
		}
	}
	for _, dir := range []string{a.SandboxRoot(), filepath.Join(a.cfg.WorkDir, controlDir)} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// admitLocked checks a new task against the agent: a valid description
// for this agent, hard constraints its attributes satisfy, and resources
// that fit in what the admitted tasks leave free. It returns the status
// that refuses the task otherwise.
func (a *Agent) admitLocked(t *task) (protocol.TaskState, string, string, bool) {
	info := t.rec.Info
	if err := info.Validate(); err != nil {
		return protocol.TaskError, protocol.ReasonTaskInvalid, err.Error(), false
	}
	if info.AgentID != a.ID() {
		return protocol.TaskError, protocol.ReasonTaskInvalid,
			fmt.Sprintf("task is for agent %s, this is agent %s", info.AgentID, a.ID()), false
	}
	if ok, why := protocol.MatchHard(info.Constraints, a.attrs); !ok {
		return protocol.TaskError, protocol.ReasonConstraintViolated, "hard constraint not satisfied: " + why, false
	}
	if free := a.tasks.freeLocked(a.total); !free.Contains(info.Resources) {
		return protocol.TaskError, protocol.ReasonTaskInvalid,
			fmt.Sprintf("resources %s exceed what is free on the agent (%s)", info.Resources, free), false
	}
	return "", "", "", true
}

// runTask prepares and starts one admitted task. If the agent stops
// meanwhile, nothing is reported: the restarted agent finds the task's
// fate from its checkpoint and sandbox.
//
// Nothing of the task happens before its record is on disk: a task whose
// fetch or process began before a crash, and which the restarted agent
// then did not know, would be launched again by the leader (it is still
// STAGING there) beside what the crash left of it.
func (a *Agent) runTask(ctx context.Context, t *task) {
	defer a.wg.Done()
	adv := a.advertised()
	a.tasks.mu.Lock()
	spec := a.specLocked(t, adv)
	version := t.version
	a.tasks.mu.Unlock()
	if err := a.waitDurable(ctx, version); err != nil {
		return // stopping: the restarted agent drops the task
	}
	_, err := a.runner.Prepare(ctx, spec)
	if ctx.Err() != nil {
		return
	}
	a.tasks.mu.Lock()
	switch {
	case t.abandoned:
		a.tasks.mu.Unlock()
		return
	case err != nil:
		a.launchFailedLocked(t, err)
		a.tasks.mu.Unlock()
		return
	case t.rec.KillRequested:
		a.enqueueLocked(t, protocol.TaskKilled, protocol.ReasonKilledDuringLaunch, "killed before it started", nil)
		a.tasks.mu.Unlock()
		return
	}
	a.tasks.mu.Unlock()
	// Starting a task spawns its supervisor; a burst of thousands at once
	// would starve everything else on the machine (the agent's own
	// heartbeats included), so only a few start at a time.
	select {
	case a.startSlots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	rt, err := a.runner.Start(ctx, spec)
	<-a.startSlots
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		a.launchFailedLocked(t, err)
	default:
		a.startedLocked(ctx, t, rt, true)
	}
}

// launchFailedLocked ends a task that could not be prepared or started:
// ERROR for an invalid task, FAILED otherwise, with the runner's reason.
func (a *Agent) launchFailedLocked(t *task, err error) {
	st, reason := launchFailure(err)
	a.enqueueLocked(t, st, reason, err.Error(), nil)
}

func launchFailure(err error) (protocol.TaskState, string) {
	switch reason := runner.Reason(err); reason {
	case protocol.ReasonTaskInvalid:
		return protocol.TaskError, reason
	case "":
		return protocol.TaskFailed, protocol.ReasonCommandFailed
	default:
		return protocol.TaskFailed, reason
	}
}

// startedLocked records a started task, reports it RUNNING (when running
// is set) and watches it; a kill that came during the start is carried
// out now.
func (a *Agent) startedLocked(ctx context.Context, t *task, rt *runner.Task, running bool) {
	t.rt = rt
	switch {
	case t.abandoned:
		_ = rt.Kill()
		return
	case t.rec.KillRequested || t.groupFailed:
		if err := rt.KillWithGrace(t.killGrace); err != nil {
			t.log.Warn("kill task", "error", err)
		}
	case running:
		a.enqueueLocked(t, protocol.TaskRunning, "", "", nil)
	}
	a.watchLocked(ctx, t)
	a.startHealthLocked(ctx, t)
}

// watchLocked reports t's end once its process ends, unless the agent
// stops first (the restarted agent reports it then).
func (a *Agent) watchLocked(ctx context.Context, t *task) {
	rt := t.rt
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case <-rt.Done():
		case <-ctx.Done():
			return
		}
		e, _ := rt.Exit()
		a.tasks.mu.Lock()
		defer a.tasks.mu.Unlock()
		a.exitedLocked(t, e)
	}()
}

// exitedLocked enqueues the final status of a task whose process ended.
func (a *Agent) exitedLocked(t *task, e runner.Exit) {
	st, reason, msg, code := finalStatus(t, e)
	t.memPeakMiB = e.MemPeakMiB()
	a.enqueueLocked(t, st, reason, msg, code)
}

// specLocked builds the runner spec of a task being launched: its command
// (run as Config.TaskUser if it names no user), the agent's environment
// variables (advertise is its file server's address) with a files token
// valid from now, limits from its resources, and its grace period.
func (a *Agent) specLocked(t *task, advertise string) runner.Spec {
	info := t.rec.Info
	env := map[string]string{
		EnvTaskID:      string(info.TaskID),
		EnvFrameworkID: string(t.rec.FrameworkID),
		EnvAgentID:     string(a.ID()),
		EnvFilesToken:  protocol.FrameworkFilesToken(a.cfg.FilesSecret, t.rec.FrameworkID, time.Now().Add(a.cfg.FilesTokenTTL)),
	}
	if advertise != "" {
		env[EnvAgentHTTP] = advertise
	}
	gpuEnv(env, info.Resources)
	if ports := portList(info.Resources.Ranges[protocol.ResPorts]); len(ports) > 0 {
		for i, p := range ports {
			env["PORT"+strconv.Itoa(i)] = p
		}
		env[EnvPorts] = strings.Join(ports, ",")
	}
	grace := info.KillGracePeriod
	if grace == 0 {
		grace = a.cfg.DefaultGrace
	}
	cmd := info.Command
	if cmd.User == "" {
		cmd.User = a.cfg.TaskUser
	}
	return runner.Spec{
		TaskID: string(info.TaskID), Name: t.rec.Name, Command: cmd, Env: env, Grace: grace,
		Limits: runner.Limits{
			CPUMilli: info.Resources.Scalar(protocol.ResCPUs),
			MemMiB:   info.Resources.Scalar(protocol.ResMem),
		},
	}
}

// portList returns the ports of a range set in ascending order, at most
// maxPortVars of them.
func portList(rs protocol.Ranges) []string {
	var out []string
	for _, r := range rs.Normalize() {
		for p := r.Begin; p <= r.End && len(out) < maxPortVars; p++ {
			out = append(out, strconv.FormatUint(p, 10))
			if p == r.End {
				break // r.End may be the largest uint64
			}
		}
	}
	return out
}
