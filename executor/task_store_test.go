package executor

import (
	"context"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestTaskStore_NotBehindTheSession: the task store has a lock of its own.
// While the session lock is held (as by a reregistration taking its
// snapshot), kills and acknowledgements still change the tasks and queue
// their records, and a record reaches the disk; the held session lock then
// sees the result.
func TestTaskStore_NotBehindTheSession(t *testing.T) {
	t.Parallel()
	a, j := idleAgent(t)
	a.id.store("agent-1")
	a.startFlusher(j)
	defer a.stopFlusher()

	a.mu.Lock()
	done := make(chan uint64)
	go func() {
		a.kill("fw", "ghost", protocol.ReasonKilledByFramework, 0)
		a.tasks.mu.Lock()
		seq := a.tasks.records.last()
		a.tasks.mu.Unlock()
		done <- seq
	}()
	var seq uint64
	select {
	case seq = <-done:
	case <-time.After(wait):
		a.mu.Unlock()
		t.Fatal("a kill waited for the session lock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := a.waitDurable(ctx, seq); err != nil {
		a.mu.Unlock()
		t.Fatalf("the record of a kill did not reach the disk while the session lock was held: %v", err)
	}
	a.tasks.mu.Lock()
	tk, ok := a.tasks.live[taskKey{"fw", "ghost"}]
	if !ok || tk.rec.State != protocol.TaskLost || len(tk.rec.Queue) != 1 || tk.rec.Queue[0].Status.AgentID != "agent-1" {
		a.tasks.mu.Unlock()
		a.mu.Unlock()
		t.Fatalf("kill of an unknown task: got %+v, want it LOST with one update from agent-1", tk)
	}
	uuid := tk.rec.Queue[0].UUID
	a.tasks.mu.Unlock()

	go func() {
		a.ack([]protocol.StatusAck{{FrameworkID: "fw", TaskID: "ghost", UUID: uuid}})
		done <- 0
	}()
	select {
	case <-done:
	case <-time.After(wait):
		a.mu.Unlock()
		t.Fatal("an acknowledgement waited for the session lock")
	}
	a.mu.Unlock()
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if _, live := a.tasks.live[taskKey{"fw", "ghost"}]; live {
		t.Fatal("the acknowledged terminal task is still live")
	}
	if e, ok := a.tasks.ended[taskKey{"fw", "ghost"}]; !ok || e.status.State != protocol.TaskLost {
		t.Fatalf("ended memory: got %+v, want the task LOST", e)
	}
}
