//go:build linux

package executor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// TestRunTask_fetchesOnlyOnceTheRecordIsOnDisk: a task's launch does
// nothing outside the agent (here, its fetch) before the task's record is
// in the journal. An agent killed after a fetch began must find the task
// when it restarts and drop it; one that did not know it would have the
// leader launch it again beside what the crash left.
func TestRunTask_fetchesOnlyOnceTheRecordIsOnDisk(t *testing.T) {
	t.Parallel()
	a, j := idleAgent(t)
	fetched := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched <- journalHolds(t, a.cfg.WorkDir, "fw_t")
		http.NotFound(w, r) // the launch fails here: nothing is run
	}))
	t.Cleanup(srv.Close)

	info := protocol.TaskInfo{TaskID: "t", Command: protocol.CommandInfo{Value: "true", Shell: true,
		URIs: []protocol.URI{{Value: srv.URL + "/payload"}}},
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 100, protocol.ResMem: 32})}
	a.tasks.mu.Lock()
	tk := a.newTaskLocked("fw", info)
	tk.admitted = true
	a.enqueueLocked(tk, protocol.TaskStarting, "", "", nil)
	a.tasks.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	a.wg.Add(1)
	go a.runTask(ctx, tk)

	// The flusher is not running, so the record cannot be on disk yet: a
	// fetch now is the fault. (Were the flusher started at once, a fetch
	// could win the race against the journal's fsync or lose it.)
	select {
	case err := <-fetched:
		t.Fatalf("fetched before the flusher ran: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	a.startFlusher(j)
	t.Cleanup(a.stopFlusher)
	select {
	case err := <-fetched:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the task was never fetched once its record was on disk")
	}
	a.wg.Wait()
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if tk.rec.State != protocol.TaskFailed || tk.rec.Latest.Status.Reason != protocol.ReasonFetchFailed {
		t.Fatalf("after a failed fetch: task %s (%s), want FAILED (fetch_failed)", tk.rec.State, tk.rec.Latest.Status.Reason)
	}
}

// journalHolds reports whether the journal in workDir, read as a
// restarted agent would read it, holds the record name.
func journalHolds(t *testing.T, workDir, name string) error {
	data, err := os.ReadFile(filepath.Join(workDir, journalFile))
	if err != nil {
		return err
	}
	crashed := t.TempDir()
	if err := os.WriteFile(filepath.Join(crashed, journalFile), data, 0o600); err != nil {
		return err
	}
	j, recs, err := openJournal(crashed, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	defer j.close()
	for _, r := range recs {
		if r.Name == name {
			return nil
		}
	}
	return fmt.Errorf("the journal holds %d records, none named %s", len(recs), name)
}
