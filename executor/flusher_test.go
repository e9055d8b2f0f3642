//go:build linux

package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// idleAgent is an agent that is never run, with its journal open and the
// flusher not started yet.
func idleAgent(t *testing.T) (*Agent, *journal) {
	t.Helper()
	a, err := New(Config{
		NATSURLs:  []string{"nats://127.0.0.1:1"},
		WorkDir:   t.TempDir(),
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 1024}),
		Isolation: runner.IsolationPortable,
		Shim:      []string{os.Args[0]},
		Logger:    testlog.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	j, recs, err := a.ckpt.openTasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Fatalf("fresh work dir holds %+v", recs)
	}
	return a, j
}

// TestFlusher_SendsOnlyDurableUpdates: an update is not sent before the
// flusher wrote its record, and is once it has; stopping the flusher
// writes what is still queued.
func TestFlusher_SendsOnlyDurableUpdates(t *testing.T) {
	t.Parallel()
	a, j := idleAgent(t)
	a.tasks.mu.Lock()
	tk := a.newTaskLocked("fw", protocol.TaskInfo{TaskID: "t"})
	a.enqueueLocked(tk, protocol.TaskStarting, "", "", nil)
	if got := a.tasks.takeBatchesLocked(time.Now(), a.cfg.ResendInterval); len(got) != 0 {
		t.Fatalf("sent %+v before its record was written", got[0].updates)
	}
	seq := a.tasks.records.last()
	a.tasks.mu.Unlock()

	a.startFlusher(j)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			a.stopFlusher()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := a.waitDurable(ctx, seq); err != nil {
		t.Fatal(err)
	}
	a.tasks.mu.Lock()
	got := a.tasks.takeBatchesLocked(time.Now(), a.cfg.ResendInterval)
	if len(got) != 1 || len(got[0].updates) != 1 || got[0].updates[0].Status.State != protocol.TaskStarting {
		t.Fatalf("sent %d batches, want one with STARTING", len(got))
	}
	tk.inflight = false
	a.enqueueLocked(tk, protocol.TaskRunning, "", "", nil)
	a.tasks.mu.Unlock()

	// A crash now: the disk holds STARTING at least.
	crashed := t.TempDir()
	data, err := os.ReadFile(filepath.Join(a.cfg.WorkDir, journalFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crashed, journalFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, recs := openOK(t, crashed)
	if len(recs) != 1 || len(recs[0].Queue) == 0 || recs[0].Queue[0].Status.State != protocol.TaskStarting {
		t.Fatalf("after a crash: got %+v, want the task with STARTING queued", recs)
	}

	a.stopFlusher()
	stopped = true
	_, recs = openOK(t, a.cfg.WorkDir)
	if len(recs) != 1 || recs[0].State != protocol.TaskRunning || len(recs[0].Queue) != 2 {
		t.Fatalf("after a stop: got %+v, want the task RUNNING with 2 updates queued", recs)
	}
}

// TestFlusher_Removal: a task terminal with nothing left to send has its
// record removed.
func TestFlusher_Removal(t *testing.T) {
	t.Parallel()
	a, j := idleAgent(t)
	a.startFlusher(j)
	a.tasks.mu.Lock()
	for _, id := range []protocol.TaskID{"keep", "drop"} {
		tk := a.newTaskLocked("fw", protocol.TaskInfo{TaskID: id})
		a.enqueueLocked(tk, protocol.TaskFinished, "", "", nil)
	}
	drop := a.tasks.live[taskKey{"fw", "drop"}]
	dropUpdate(drop, drop.rec.Queue[0].UUID)
	a.tasks.persistLocked(drop)
	a.tasks.mu.Unlock()
	a.stopFlusher()
	_, recs := openOK(t, a.cfg.WorkDir)
	checkRecords(t, recs, map[string]protocol.TaskState{"fw_keep": protocol.TaskFinished})
}
