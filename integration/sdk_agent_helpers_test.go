package integration

// Helpers of the TestAgent_* tests (sdk_helpers_test.go): what a real
// agent reports of its tasks, and the files in their sandboxes.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// agentTask returns the agent's summary of a task.
func agentTask(e *executors.Executor, fw protocol.FrameworkID, id protocol.TaskID) (executor.TaskSummary, bool) {
	for _, ts := range e.Agent().State().Tasks {
		if ts.FrameworkID == fw && ts.TaskID == id {
			return ts, true
		}
	}
	return executor.TaskSummary{}, false
}

// waitAgentTask waits until the agent reports a task in state st.
func waitAgentTask(t *testing.T, e *executors.Executor, fw protocol.FrameworkID, id protocol.TaskID, st protocol.TaskState) executor.TaskSummary {
	t.Helper()
	var out executor.TaskSummary
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		ts, ok := agentTask(e, fw, id)
		if !ok || ts.State != st {
			return fmt.Errorf("task %s on the agent: got %+v (known %v), want %s", id, ts, ok, st)
		}
		out = ts
		return nil
	})
	return out
}

// agentGet GETs path from the agent's HTTP server, with the files token,
// and decodes the JSON answer into into.
func agentGet(t *testing.T, e *executors.Executor, path string, into any) {
	t.Helper()
	a := e.Agent()
	req, err := http.NewRequest(http.MethodGet, "http://"+a.HTTPAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.FilesToken())
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v: %.300s", path, err, body)
	}
}

// sandboxOf returns a task's sandbox name from the agent's /v1/state.
func sandboxOf(t *testing.T, e *executors.Executor, fw protocol.FrameworkID, id protocol.TaskID) string {
	t.Helper()
	var st executor.StateResponse
	agentGet(t, e, "/v1/state", &st)
	for _, ts := range st.Tasks {
		if ts.FrameworkID == fw && ts.TaskID == id {
			if ts.Sandbox == "" {
				t.Fatalf("task %s has no sandbox: %+v", id, ts)
			}
			return ts.Sandbox
		}
	}
	t.Fatalf("task %s not in the agent's /v1/state", id)
	return ""
}

// readSandbox reads a file of a task's sandbox through the agent's file
// server (/v1/files/read).
func readSandbox(t *testing.T, e *executors.Executor, sandbox, name string) string {
	t.Helper()
	var got struct {
		Data string `json:"data"`
	}
	agentGet(t, e, "/v1/files/read?path="+url.QueryEscape(sandbox+"/"+name), &got)
	return got.Data
}

// sandboxFile is the path of a file in a task's sandbox on disk.
func sandboxFile(e *executors.Executor, sandbox, name string) string {
	return filepath.Join(e.Agent().SandboxRoot(), sandbox, name)
}

// touchIn creates a file in a task's sandbox.
func touchIn(t *testing.T, e *executors.Executor, sandbox, name string) {
	t.Helper()
	if err := os.WriteFile(sandboxFile(e, sandbox, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFile waits until a file exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		_, err := os.Stat(path)
		return err
	})
}
