package executor

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

func TestCheckpoint_RoundTrip(t *testing.T) {
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
	u := protocol.StatusUpdate{UUID: "st-1", Status: protocol.TaskStatus{TaskID: "t", FrameworkID: "fw", State: protocol.TaskRunning, UUID: "st-1"}}
	rec := taskRecord{Name: "fw_t", FrameworkID: "fw", Info: protocol.TaskInfo{TaskID: "t"}, State: protocol.TaskRunning, Latest: &u, Queue: []protocol.StatusUpdate{u}}
	if err := c.saveTask(&rec); err != nil {
		t.Fatal(err)
	}
	// Leftovers of a crash: a temporary file and a corrupt record.
	if err := os.WriteFile(filepath.Join(c.tasksPath(), "fw_x.json"+tempPattern+"123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.taskPath("fw_bad"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := c.loadTasks()
	if err != nil || len(recs) != 1 || recs[0].Name != "fw_t" || len(recs[0].Queue) != 1 || recs[0].Queue[0].UUID != "st-1" {
		t.Fatalf("got %+v, %v", recs, err)
	}
	if _, err := os.Stat(c.taskPath("fw_bad") + ".corrupt"); err != nil {
		t.Fatalf("corrupt record not moved aside: %v", err)
	}
	entries, _ := os.ReadDir(c.tasksPath())
	if len(entries) != 2 {
		t.Fatalf("left in tasks/: %v, want the record and the corrupt one", entries)
	}
	if err := c.removeTask("fw_t"); err != nil {
		t.Fatal(err)
	}
	if recs, _ := c.loadTasks(); len(recs) != 0 {
		t.Fatalf("removed record still loaded: %+v", recs)
	}
	if err := c.removeAgent(); err != nil {
		t.Fatal(err)
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

func TestLockWorkDir(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), lockFile)
	f, err := lockWorkDir(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockWorkDir(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: got %v, want ErrLocked", err)
	}
	f.Close()
	f, err = lockWorkDir(p)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	f.Close()
}
