package state

import (
	"slices"
	"strconv"

	"github.com/allot-project/allot/protocol"
)

// View is a read-only snapshot of a State at one index. It never changes,
// costs nothing to keep, and is safe for concurrent use. Every object it
// returns is shared with the State and with other Views: callers must not
// modify it, nor any map or slice it holds. Lists are sorted: roles by
// path, agents and frameworks by ID, tasks by framework ID then task ID.
type View struct {
	index      uint64
	seq        uint64 // status updates the state generated; see nextUUID
	roles      tree[*Role]
	agents     tree[*Agent]
	frameworks tree[*Framework]
	tasks      tree[*Task]    // key: taskKey
	byAgent    tree[struct{}] // key: agentTaskKey
	// completed is the completed-task history: key completedKey.
	completed tree[*Task]
	// completedFWs are the removed frameworks: key seqKey(Seq).
	completedFWs tree[*CompletedFramework]
	// store holds the principals' store entries: key storeKey; storeUse
	// what each principal's holds.
	store    tree[*StoreEntry]
	storeUse tree[StoreUsage]
}

// beginEdit starts a command: its writes may change in place the nodes
// they create, and only those (see tree).
func (v *View) beginEdit() {
	e := new(editToken)
	v.roles.edit, v.agents.edit, v.frameworks.edit, v.tasks.edit, v.byAgent.edit = e, e, e, e, e
	v.completed.edit, v.completedFWs.edit, v.store.edit, v.storeUse.edit = e, e, e, e
}

// Index returns the Raft index of the last command applied before the
// View was taken.
func (v *View) Index() uint64 { return v.index }

// Role returns the configured role at path.
func (v *View) Role(path string) (*Role, bool) { return v.roles.get(path) }

// Roles returns every configured role.
func (v *View) Roles() []*Role { return v.roles.values("", "") }

// Agent returns the agent with ID id.
func (v *View) Agent(id protocol.AgentID) (*Agent, bool) { return v.agents.get(string(id)) }

// Agents returns every agent, whatever its state.
func (v *View) Agents() []*Agent { return v.agents.values("", "") }

// Framework returns the framework with ID id.
func (v *View) Framework(id protocol.FrameworkID) (*Framework, bool) {
	return v.frameworks.get(string(id))
}

// Frameworks returns every framework.
func (v *View) Frameworks() []*Framework { return v.frameworks.values("", "") }

// Task returns the task id of framework fw.
func (v *View) Task(fw protocol.FrameworkID, id protocol.TaskID) (*Task, bool) {
	return v.tasks.get(taskKey(fw, id))
}

// Tasks returns every task.
func (v *View) Tasks() []*Task { return v.tasks.values("", "") }

// NumTasks returns the number of tasks.
func (v *View) NumTasks() int { return v.tasks.Len() }

// TasksByFramework returns the tasks of framework fw.
func (v *View) TasksByFramework(fw protocol.FrameworkID) []*Task {
	lo, hi := prefixRange(string(fw))
	return v.tasks.values(lo, hi)
}

// TasksByAgent returns the tasks on agent ag, including those kept after
// the agent was removed until their frameworks acknowledge them.
func (v *View) TasksByAgent(ag protocol.AgentID) []*Task {
	var out []*Task
	lo, hi := prefixRange(string(ag))
	v.byAgent.ascend(lo, hi, func(k string, _ struct{}) bool {
		if t, ok := v.tasks.get(k[len(lo):]); ok {
			out = append(out, t)
		}
		return true
	})
	return out
}

// UnackedTasks returns the tasks of framework fw whose latest status the
// framework has not acknowledged: the status updates the master must
// (re)send to it.
func (v *View) UnackedTasks(fw protocol.FrameworkID) []*Task {
	var out []*Task
	lo, hi := prefixRange(string(fw))
	v.tasks.ascend(lo, hi, func(_ string, t *Task) bool {
		if !t.Acked {
			out = append(out, t)
		}
		return true
	})
	return out
}

// putTask stores t, new or replacing the task with its key. A task never
// changes agent.
func (v *View) putTask(t *Task) {
	k := taskKey(t.FrameworkID, t.ID)
	if _, ok := v.tasks.get(k); !ok {
		v.byAgent = v.byAgent.set(agentTaskKey(t.AgentID, t.FrameworkID, t.ID), struct{}{})
	}
	v.tasks = v.tasks.set(k, t)
}

// deleteTask removes t.
func (v *View) deleteTask(t *Task) {
	v.tasks = v.tasks.delete(taskKey(t.FrameworkID, t.ID))
	v.byAgent = v.byAgent.delete(agentTaskKey(t.AgentID, t.FrameworkID, t.ID))
}

// nextUUID returns a fresh UUID for a status update the state generates
// (LOST, UNREACHABLE, ...) while applying index: "st-<index>-<seq>", where
// seq counts every UUID generated so far. It is deterministic, unique
// even among commands sharing an index, and cannot collide with the
// leader's random UUIDs, which hold no second '-'.
func (v *View) nextUUID(index uint64) protocol.StatusUUID {
	v.seq++
	return protocol.StatusUUID(protocol.PrefixStatus + "-" + strconv.FormatUint(index, 10) + "-" +
		strconv.FormatUint(v.seq, 10))
}

// maxUnacked bounds a task's unacknowledged statuses before its latest;
// beyond it the oldest are dropped (a framework that acknowledges nothing
// still gets the latest).
const maxUnacked = 16

// setStatus stores a copy of t with st as its latest status under uuid,
// not yet acknowledged, and returns the copy. A latest status the
// framework has not acknowledged yet joins the queue before it.
func (v *View) setStatus(t *Task, st protocol.TaskStatus, uuid protocol.StatusUUID, now int64) *Task {
	n := *t
	if !t.Acked && t.StatusUUID != "" {
		q := append(slices.Clone(t.Unacked), t.Status)
		n.Unacked = q[max(0, len(q)-maxUnacked):]
	}
	st.TaskID, st.FrameworkID, st.AgentID, st.UUID = t.ID, t.FrameworkID, t.AgentID, uuid
	n.Status = st
	n.State, n.Reason, n.Message = st.State, st.Reason, st.Message
	n.StatusUUID = uuid
	n.Acked = false
	n.UpdatedAt = now
	v.putTask(&n)
	return &n
}

// generatedStatus is a status the state itself issues; setStatus fills
// in the task's IDs and the UUID.
func generatedStatus(state protocol.TaskState, reason, msg string, now int64) protocol.TaskStatus {
	return protocol.TaskStatus{State: state, Reason: reason, Message: msg, Timestamp: now}
}
