package state

import (
	"strconv"

	"github.com/allot-project/allot/protocol"
)

// Completed history, like Mesos's completed_tasks and
// completed_frameworks: what left the live tables stays visible, bounded.
const (
	// MaxCompletedTasks is how many completed tasks the state keeps per
	// framework, the most recent ones.
	MaxCompletedTasks = 1000
	// MaxCompletedFrameworks is how many removed frameworks the state
	// keeps, the most recently removed ones.
	MaxCompletedFrameworks = 50
)

// CompletedFramework is a framework that was removed (teardown or failover
// timeout) with its completed tasks.
type CompletedFramework struct {
	// Seq orders removals: it grows by one with every framework removed.
	Seq       uint64     `msgpack:"seq" json:"seq"`
	Framework *Framework `msgpack:"fw" json:"framework"`
	// Tasks are the framework's completed tasks, oldest first, at most
	// MaxCompletedTasks: its history, then the tasks it still had when it
	// was removed. Those that were not terminal yet appear KILLED
	// (framework_removed), which is what the leader makes of them.
	Tasks []*Task `msgpack:"tasks,omitempty" json:"tasks"`
}

// completedTask is a snapshot record of the completed-task history.
type completedTask struct {
	Seq  uint64 `msgpack:"seq"`
	Task *Task  `msgpack:"task"`
}

// CompletedTasks returns the completed tasks of framework fw, oldest
// first: those whose terminal status the framework acknowledged, at most
// MaxCompletedTasks.
func (v *View) CompletedTasks(fw protocol.FrameworkID) []*Task {
	lo, hi := prefixRange(string(fw))
	return v.completed.values(lo, hi)
}

// NumCompletedTasks returns the number of completed tasks of every
// framework still registered.
func (v *View) NumCompletedTasks() int { return v.completed.Len() }

// CompletedFrameworks returns the removed frameworks kept, in the order
// they were removed.
func (v *View) CompletedFrameworks() []*CompletedFramework {
	return v.completedFWs.values("", "")
}

// seqKey renders n so that keys sort like the numbers.
func seqKey(n uint64) string {
	s := strconv.FormatUint(n, 10)
	const width = 20
	return string(zeros[:width-len(s)]) + s
}

var zeros = []byte("00000000000000000000")

// parseSeqKey is the inverse of seqKey.
func parseSeqKey(k string) uint64 {
	n, _ := strconv.ParseUint(k, 10, 64)
	return n
}

// completedKey is the completed tree key of entry n of framework fw.
func completedKey(fw protocol.FrameworkID, n uint64) string {
	return string(fw) + keySep + seqKey(n)
}

// addCompleted appends t, which must be terminal, to its framework's
// completed history, dropping the oldest entry beyond MaxCompletedTasks.
// Entries of a framework are numbered consecutively from 0, so the next
// number follows the last one and the oldest kept is the first.
func (v *View) addCompleted(t *Task) {
	lo, hi := prefixRange(string(t.FrameworkID))
	next := uint64(0)
	if k, _, ok := v.completed.last(lo, hi); ok {
		next = parseSeqKey(k[len(lo):]) + 1
	}
	v.completed = v.completed.set(completedKey(t.FrameworkID, next), t)
	if next >= MaxCompletedTasks {
		v.completed = v.completed.delete(completedKey(t.FrameworkID, next-MaxCompletedTasks))
	}
}

// completeFramework moves framework f, with its history and the tasks
// removed with it, to the completed frameworks, dropping the oldest
// beyond MaxCompletedFrameworks.
func (v *View) completeFramework(f *Framework, removed []*Task) {
	lo, hi := prefixRange(string(f.ID))
	var tasks []*Task
	var keys []string
	v.completed.ascend(lo, hi, func(k string, t *Task) bool {
		tasks, keys = append(tasks, t), append(keys, k)
		return true
	})
	for _, k := range keys {
		v.completed = v.completed.delete(k)
	}
	for _, t := range removed {
		if !t.Terminal() {
			n := *t
			n.State, n.Reason, n.Message = protocol.TaskKilled, protocol.ReasonFrameworkRemoved, "framework removed"
			n.Status.State, n.Status.Reason, n.Status.Message = n.State, n.Reason, n.Message
			t = &n
		}
		tasks = append(tasks, t)
	}
	if len(tasks) > MaxCompletedTasks {
		tasks = tasks[len(tasks)-MaxCompletedTasks:]
	}
	next := uint64(0)
	if k, _, ok := v.completedFWs.last("", ""); ok {
		next = parseSeqKey(k) + 1
	}
	v.completedFWs = v.completedFWs.set(seqKey(next), &CompletedFramework{Seq: next, Framework: f, Tasks: tasks})
	if next >= MaxCompletedFrameworks {
		v.completedFWs = v.completedFWs.delete(seqKey(next - MaxCompletedFrameworks))
	}
}

// restoreCompletedTask adds a completed-task snapshot record to v.
func (v *View) restoreCompletedTask(body []byte) error {
	var c completedTask
	if err := decodeRecord(body, &c); err != nil {
		return err
	}
	t := c.Task
	if t == nil || !protocol.ValidID(string(t.FrameworkID)) || !protocol.ValidID(string(t.ID)) ||
		!t.State.Terminal() {
		return corrupt("completed task %d", c.Seq)
	}
	if _, ok := v.frameworks.get(string(t.FrameworkID)); !ok {
		return corrupt("completed task %s/%s before its framework", t.FrameworkID, t.ID)
	}
	k := completedKey(t.FrameworkID, c.Seq)
	lo, hi := prefixRange(string(t.FrameworkID))
	if last, _, ok := v.completed.last(lo, hi); ok && last >= k {
		return corrupt("completed task %s/%s out of order", t.FrameworkID, t.ID)
	}
	v.completed = v.completed.set(k, t)
	return nil
}

// restoreCompletedFramework adds a completed-framework snapshot record
// to v.
func (v *View) restoreCompletedFramework(body []byte) error {
	var c CompletedFramework
	if err := decodeRecord(body, &c); err != nil {
		return err
	}
	if c.Framework == nil || !protocol.ValidID(string(c.Framework.ID)) || len(c.Tasks) > MaxCompletedTasks {
		return corrupt("completed framework %d", c.Seq)
	}
	for _, t := range c.Tasks {
		if t == nil || t.FrameworkID != c.Framework.ID || !t.State.Terminal() {
			return corrupt("completed framework %s: bad task", c.Framework.ID)
		}
	}
	k := seqKey(c.Seq)
	if last, _, ok := v.completedFWs.last("", ""); ok && last >= k {
		return corrupt("completed framework %s out of order", c.Framework.ID)
	}
	v.completedFWs = v.completedFWs.set(k, &c)
	return nil
}

// writeCompleted writes the completed history records of v.
func (v *View) writeCompleted(sw *snapWriter) {
	v.completed.ascend("", "", func(k string, t *Task) bool {
		sw.record(recCompletedTask, completedTask{Seq: parseSeqKey(k[len(t.FrameworkID)+len(keySep):]), Task: t})
		return sw.err == nil
	})
	v.completedFWs.ascend("", "", func(_ string, c *CompletedFramework) bool {
		sw.record(recCompletedFramework, c)
		return sw.err == nil
	})
}

// checkCompletedCounts compares the end record's history counts with
// what was read.
func (v *View) checkCompletedCounts(e endRecord) error {
	if e.Completed != v.completed.Len() || e.CompletedFrameworks != v.completedFWs.Len() {
		return corrupt("end record history counts %d/%d, read %d/%d", e.Completed, e.CompletedFrameworks,
			v.completed.Len(), v.completedFWs.Len())
	}
	return nil
}
