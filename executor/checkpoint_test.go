package executor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

func TestCheckpoint_AgentRoundTrip(t *testing.T) {
	t.Parallel()
	c := checkpoint{dir: t.TempDir(), log: testlog.New(t)}
	if err := c.init(); err != nil {
		t.Fatal(err)
	}
	if _, found, err := c.loadAgent(); found || err != nil {
		t.Fatalf("empty dir: found %v, %v", found, err)
	}
	if err := c.saveAgent(agentRecord{AgentID: "ag-1"}); err != nil {
		t.Fatal(err)
	}
	if rec, found, err := c.loadAgent(); !found || err != nil || rec.AgentID != "ag-1" {
		t.Fatalf("got %+v %v %v", rec, found, err)
	}
	if err := c.removeAgent(); err != nil {
		t.Fatal(err)
	}
	if _, found, err := c.loadAgent(); found || err != nil {
		t.Fatalf("after removal: found %v, %v", found, err)
	}
}

func TestCheckpoint_BadAgentRecord(t *testing.T) {
	t.Parallel()
	c := checkpoint{dir: t.TempDir(), log: testlog.New(t)}
	if err := os.WriteFile(filepath.Join(c.dir, agentFile), []byte(`{"agent_id":"bad id"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.loadAgent(); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("got %v, want ErrCheckpoint", err)
	}
}

// TestCheckpoint_LegacyRecords opens a work directory of an earlier
// version, with a file per task record: the records are moved into the
// journal, a corrupt one is kept aside, and the journal wins over a record
// file it also holds.
func TestCheckpoint_LegacyRecords(t *testing.T) {
	t.Parallel()
	c := checkpoint{dir: t.TempDir(), log: testlog.New(t)}
	if err := c.init(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.dir, tasksDir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// fw_b is in the journal too, with a later state.
	j, _, err := c.openTasks()
	if err != nil {
		t.Fatal(err)
	}
	appendOK(t, j, put(t, record("b", "RUNNING", 2)))
	j.close()
	for _, rec := range []taskRecord{record("a", "RUNNING", 1), record("b", "STARTING", 1)} {
		data, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rec.Name+recordExt), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		"fw_x.json" + tempPattern + "123": "{",
		"fw_bad.json":                     "{",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	for run := range 2 { // the second run reads the journal alone
		j, recs, err := c.openTasks()
		if err != nil {
			t.Fatal(err)
		}
		j.close()
		checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "RUNNING", "fw_b": "RUNNING"})
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "fw_bad.json.corrupt" {
			t.Fatalf("run %d: left in tasks/: %v, want only the corrupt record", run, entries)
		}
	}
}

func TestLockWorkDir(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), lockFile)
	f, err := lockWorkDir(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockWorkDir(context.Background(), p, 0); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: got %v, want ErrLocked", err)
	}
	f.Close()
	f, err = lockWorkDir(context.Background(), p, 0)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}

	// A lock released while a second one waits for it is taken; a
	// cancelled wait gives up.
	got := make(chan error, 1)
	go func() {
		g, err := lockWorkDir(context.Background(), p, time.Minute)
		if err == nil {
			g.Close()
		}
		got <- err
	}()
	f.Close()
	if err := <-got; err != nil {
		t.Fatalf("lock released during the wait: %v", err)
	}
	f, err = lockWorkDir(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lockWorkDir(ctx, p, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: got %v, want context.Canceled", err)
	}
}
