package executor

import "github.com/allot-project/allot/protocol"

// taskTable is the agent's tasks: those it runs or holds a record of, by
// framework and task, and a short memory of those that ended, enough to
// ignore a late launch of one and to show it in /v1/state. It is part of
// the task store (task_store.go), whose lock guards it.
type taskTable struct {
	live       map[taskKey]*task
	ended      map[taskKey]endedTask
	endedOrder []taskKey
}

func newTaskTable() taskTable {
	return taskTable{live: map[taskKey]*task{}, ended: map[taskKey]endedTask{}}
}

// forget moves a finished task from the live tasks to the ended memory,
// which keeps the latest maxEnded.
func (tt *taskTable) forget(t *task) {
	k := t.key()
	if tt.live[k] == t {
		delete(tt.live, k)
	}
	var st protocol.TaskStatus
	if t.rec.Latest != nil {
		st = t.rec.Latest.Status
	}
	if _, ok := tt.ended[k]; !ok {
		tt.endedOrder = append(tt.endedOrder, k)
	}
	tt.ended[k] = endedTask{name: t.rec.Name, sandbox: t.admitted && !t.rec.Unknown, status: st}
	for len(tt.endedOrder) > maxEnded {
		delete(tt.ended, tt.endedOrder[0])
		tt.endedOrder = tt.endedOrder[1:]
	}
}
