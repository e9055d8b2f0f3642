package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// taskKey names a task across frameworks.
type taskKey struct {
	fw protocol.FrameworkID
	id protocol.TaskID
}

func (k taskKey) String() string { return string(k.fw) + "/" + string(k.id) }

// task is the agent's in-memory record of one task it owns. All fields
// are guarded by the task store's lock (task_store.go).
type task struct {
	rec taskRecord
	log hclog.Logger
	// rt is the running (or ended) process, once started or reattached.
	rt *runner.Task
	// killGrace is the grace period a kill asked for; 0 keeps the task's.
	killGrace time.Duration
	// admitted is set once the task passed admission: its resources count
	// as used until it ends.
	admitted bool
	// groupFailed makes the task end FAILED with ReasonGroupMemberFailed
	// whatever its process does: another member of its group failed.
	groupFailed bool
	// launchCut makes the task end DROPPED with ReasonAgentRestarted: the
	// agent's stop cut its group's launch short, so the group never ran.
	launchCut bool
	// abandoned is set when the master forgot the agent: the task is being
	// killed and nothing more is reported or checkpointed for it.
	abandoned bool
	// inflight is set while a request carrying its queue is unanswered;
	// lastSent is when its queue was last sent. solo sends its queue in a
	// request of its own, after a request with it was refused whole.
	inflight bool
	lastSent time.Time
	solo     bool
	// memPeakMiB is the most memory, in MiB, the task's processes were
	// seen to hold, once it ended (runner.Exit.MemPeak); its terminal
	// status carries it.
	memPeakMiB int64
	// healthy is the latest health-check result reported (health.go); nil
	// until one is.
	healthy *bool
	// version numbers the latest change of rec queued for the journal
	// (recordLog.seq); the change is on disk once recordLog.durable reaches
	// it.
	version uint64
}

func (t *task) key() taskKey { return taskKey{t.rec.FrameworkID, t.rec.Info.TaskID} }

// endedTask is what the agent remembers, in memory only, of a task whose
// record it deleted: enough to ignore a late launch of it and to show it
// in /v1/state.
type endedTask struct {
	name    string
	sandbox bool // the task got a sandbox (it was admitted)
	status  protocol.TaskStatus
}

// maxEnded bounds the ended tasks the agent remembers.
const maxEnded = 1024

// sandboxName returns the name of a new task's sandbox and record:
// "<framework>_<task>" when that is short enough and not taken, else a
// shortened form made unique with a random suffix.
func sandboxName(fw protocol.FrameworkID, id protocol.TaskID, taken func(string) bool) string {
	name := string(fw) + "_" + string(id)
	if len(name) > maxPlainName {
		sum := sha256.Sum256([]byte(name))
		name = shorten(string(fw), 40) + "_" + shorten(string(id), 80) + "_" + hex.EncodeToString(sum[:8])
	}
	if name[0] == '.' {
		name = "t" + name
	}
	if taken(name) {
		name += "_" + protocol.NewID("")
	}
	return name
}

// maxPlainName keeps sandbox names well under runner.MaxNameLen with room
// for a suffix.
const maxPlainName = 150

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// newStatus builds a status of the task, now.
func newStatus(t *task, agent protocol.AgentID, st protocol.TaskState, reason, msg string, code *int) protocol.TaskStatus {
	status := protocol.TaskStatus{
		TaskID: t.rec.Info.TaskID, FrameworkID: t.rec.FrameworkID, AgentID: agent, State: st,
		Reason: truncateText(reason, protocol.MaxNameLen), Message: truncateText(msg, protocol.MaxTextLen),
		ExitCode: code, Timestamp: time.Now().UnixNano(),
	}
	if t.healthy != nil && !st.Terminal() {
		h := *t.healthy
		status.Healthy = &h
	}
	if st.Terminal() {
		status.MemPeakMiB = t.memPeakMiB
	}
	return status
}

// finalStatus maps how a started task's process ended to its terminal
// status: state, reason, message and exit code.
//
//   - memory limit: FAILED, memory_limit;
//   - shim gone without a recorded exit: FAILED, executor_terminated;
//   - another member of its group failed: FAILED, group_member_failed;
//   - a kill was requested: KILLED with the kill's reason
//     (killed_by_framework or framework_removed), whatever the exit;
//   - killed although no kill was requested (the agent stopped during the
//     task's launch, or during its group's): DROPPED, agent_restarted, as
//     it never was reported started;
//   - never started: FAILED, command_failed;
//   - exit 0: FINISHED; any other exit or a signal: FAILED,
//     command_failed, with the tail of stderr as the message.
func finalStatus(t *task, e runner.Exit) (protocol.TaskState, string, string, *int) {
	msg := e.Message
	switch {
	case e.Reason == protocol.ReasonMemoryLimit:
		return protocol.TaskFailed, protocol.ReasonMemoryLimit, msg, e.Code
	case e.Reason == protocol.ReasonExecutorTerminated:
		return protocol.TaskFailed, protocol.ReasonExecutorTerminated, msg, e.Code
	case t.groupFailed:
		return protocol.TaskFailed, protocol.ReasonGroupMemberFailed,
			"another task of the group failed; this one was stopped", e.Code
	case t.rec.KillRequested:
		reason := t.rec.KillReason
		if reason == "" {
			reason = protocol.ReasonKilledByFramework
		}
		if msg == "" {
			msg = describeExit(e)
		}
		return protocol.TaskKilled, reason, msg, e.Code
	case t.launchCut:
		return protocol.TaskDropped, protocol.ReasonAgentRestarted,
			"the agent restarted during the launch of the task's group", e.Code
	case e.Reason == protocol.ReasonKilledByFramework:
		return protocol.TaskDropped, protocol.ReasonAgentRestarted,
			"killed while the agent stopped during the task's launch", e.Code
	case e.Reason == protocol.ReasonCommandFailed:
		return protocol.TaskFailed, protocol.ReasonCommandFailed, msg, e.Code
	case e.Reason != "":
		return protocol.TaskFailed, e.Reason, msg, e.Code
	case e.Code != nil && *e.Code == 0:
		return protocol.TaskFinished, "", msg, e.Code
	}
	desc := describeExit(e)
	if msg == "" {
		msg = desc
	} else {
		msg = desc + ": " + msg
	}
	return protocol.TaskFailed, protocol.ReasonCommandFailed, msg, e.Code
}

// describeExit renders an exit as "exited with status 3" or "killed by
// SIGKILL".
func describeExit(e runner.Exit) string {
	switch {
	case e.Code != nil:
		return fmt.Sprintf("exited with status %d", *e.Code)
	case e.Signal != "":
		return "killed by " + e.Signal
	}
	return "ended"
}
