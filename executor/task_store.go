package executor

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/allot-project/allot/protocol"
)

// taskStore is everything the agent keeps about its tasks, under one lock
// of its own: the table of tasks (task_table.go), each task's record and
// queue of status updates (updates.go), and the record log that writes
// their changes to the journal (flusher.go, journal.go).
//
// Its lock guards the table and every field of every task in it. The
// session (Agent.mu: connection, registration, leader) is a separate
// concern with a separate lock; code that needs both takes Agent.mu first
// and the store's lock inside it, never the other way round. The record
// log's lock is a leaf below the store's. Methods named ...Locked that
// take a *task run with the store's lock held.
type taskStore struct {
	mu sync.Mutex
	taskTable
	records *recordLog
}

func newTaskStore(records *recordLog) *taskStore {
	return &taskStore{taskTable: newTaskTable(), records: records}
}

// agentID is the agent's ID, empty before it is known. It is written under
// the session lock and read anywhere, the task store included, without it.
type agentID struct {
	p atomic.Pointer[protocol.AgentID]
}

func (c *agentID) load() protocol.AgentID {
	if p := c.p.Load(); p != nil {
		return *p
	}
	return ""
}

func (c *agentID) store(id protocol.AgentID) { c.p.Store(&id) }

// resendAll makes every task's queue due to be sent now.
func (s *taskStore) resendAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.live {
		t.lastSent = time.Time{}
	}
}

// queueLocked queues a task's journal entry (t may be nil) and records the
// change as t's latest. The task store's lock is held.
func (s *taskStore) queueLocked(t *task, e journalEntry) {
	seq := s.records.queue(e)
	if t != nil {
		t.version = seq
	}
}

// persistLocked queues t's record for the journal, or its removal (and
// forgets t but for a short memory) once it is terminal with nothing left
// to send. The flusher writes it (flusher.go).
func (s *taskStore) persistLocked(t *task) {
	if t.abandoned {
		return
	}
	if t.rec.State.Terminal() && len(t.rec.Queue) == 0 {
		s.queueLocked(t, removeEntry(t.rec.Name))
		s.forget(t)
		return
	}
	e, err := putEntry(&t.rec)
	if err != nil {
		// A record always encodes; were it not to, the update is sent
		// anyway, as after a failed write (flusher.go).
		t.log.Error("checkpoint task", "error", err)
		return
	}
	s.queueLocked(t, e)
}

// durableLocked reports whether t's latest record change is on disk.
func (s *taskStore) durableLocked(t *task) bool { return s.records.isDurable(t.version) }

// knownLocked reports whether the agent has or had the task k.
func (s *taskStore) knownLocked(k taskKey) bool {
	_, live := s.live[k]
	_, ended := s.ended[k]
	return live || ended
}

// freeLocked returns total minus the resources of the admitted tasks that
// have not ended.
func (s *taskStore) freeLocked(total protocol.Resources) protocol.Resources {
	free := total.Clone()
	for _, t := range s.live {
		if t.admitted && !t.rec.State.Terminal() {
			free.SubInPlace(t.rec.Info.Resources)
		}
	}
	return free
}

// usedLocked returns the resources of the admitted tasks that have not
// ended.
func (s *taskStore) usedLocked() protocol.Resources {
	var used protocol.Resources
	for _, t := range s.live {
		if t.admitted && !t.rec.State.Terminal() {
			used.AddInPlace(t.rec.Info.Resources)
		}
	}
	return used
}
