// Package integration holds end-to-end tests on the in-process test
// cluster (internal/testcluster).
package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// unitTask is the shape every test task has: 1 CPU and 64 MiB.
func unitTask() protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 64})
}

func agentResources(cpus int64) protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: cpus * 1000, protocol.ResMem: 4096})
}

// runningCPUs sums, per framework, the CPUs of the tasks the agents run
// (STARTING or RUNNING).
func runningCPUs(agents []*testcluster.TestAgent) map[protocol.FrameworkID]int64 {
	out := map[protocol.FrameworkID]int64{}
	for _, a := range agents {
		for _, t := range a.Tasks() {
			if !t.State.Terminal() {
				out[t.Key.FrameworkID] += t.Info.Resources.Scalar(protocol.ResCPUs)
			}
		}
	}
	return out
}

// launchOne launches a task on one of the framework's offers, trying
// again on fresh offers when a leadership change voided them (a launch
// that did commit after all answers ErrDuplicate).
func launchOne(t *testing.T, fw *testcluster.TestFramework, ti protocol.TaskInfo) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		offers := fw.Offers()
		if len(offers) == 0 {
			return errors.New("no offers")
		}
		if err := fw.Launch(offers[0], ti); err != nil && !errors.Is(err, protocol.ErrDuplicate) {
			return err
		}
		return nil
	})
}

// raftTerm is the serving leader's Raft term.
func raftTerm(c *testcluster.Cluster) string {
	return c.WaitForLeader().Raft().Stats()["term"]
}

// checkNoDuplicateLaunch fails the test for every task launched twice: on
// two agents, or on one agent under the same ID with different task info.
// (A new leader may deliver the same launch again; agents start it once.)
func checkNoDuplicateLaunch(t *testing.T, agents []*testcluster.TestAgent) map[testcluster.TaskKey]testcluster.AgentTask {
	t.Helper()
	all := map[testcluster.TaskKey]testcluster.AgentTask{}
	for _, a := range agents {
		for _, at := range a.Tasks() {
			if at.Conflicts != 0 {
				t.Errorf("task %s launched %d times on %s with different task info", at.Key, at.Conflicts+1, a.Hostname())
			}
			if _, dup := all[at.Key]; dup {
				t.Errorf("task %s launched on two agents", at.Key)
			}
			all[at.Key] = at
		}
	}
	return all
}

// checkLifecycle fails the test unless every task the framework launched
// (or heard of) reached RUNNING before FINISHED, and every status update
// with a UUID it received was acknowledged.
func checkLifecycle(t *testing.T, fw *testcluster.TestFramework) {
	t.Helper()
	checkTaskEnds(t, fw, true)
}

// checkTaskEnds is checkLifecycle; without running, a task's RUNNING may
// be missing: across a leader killed between committing it and forwarding
// it, the master resends only each task's latest status, and FINISHED
// supersedes it.
func checkTaskEnds(t *testing.T, fw *testcluster.TestFramework, running bool) {
	t.Helper()
	for _, ft := range fw.Tasks() {
		if ft.Outcome == testcluster.AcceptRefused {
			continue
		}
		// Delivery is at least once, not in order across a leader change:
		// the new leader resends a task's latest unacknowledged update when
		// the framework subscribes again, which may overtake earlier ones
		// still on their way. What must hold is that RUNNING and the
		// agent's FINISHED update both arrived.
		ran := slices.ContainsFunc(ft.Statuses, func(s protocol.TaskStatus) bool { return s.State == protocol.TaskRunning })
		finished := slices.ContainsFunc(ft.Statuses, func(s protocol.TaskStatus) bool {
			return s.State == protocol.TaskFinished && s.UUID != ""
		})
		if running && !ran || !finished {
			t.Errorf("%s task %s: got states %v, want RUNNING and FINISHED", fw.Name(), ft.Info.TaskID, stateList(ft.Statuses))
		}
		if last, ok := lastWithUUID(ft.Statuses); ok && !slices.Contains(ft.Acked, last.UUID) {
			t.Errorf("%s task %s: latest update %s (%s) not acknowledged", fw.Name(), ft.Info.TaskID, last.UUID, last.State)
		}
	}
	if errs := fw.AckErrors(); len(errs) > 0 {
		t.Errorf("%s: acknowledgements failed: %v", fw.Name(), errs)
	}
}

// lastWithUUID is a task's latest update with a UUID: its terminal one
// when that arrived (an earlier update a new leader sent again may arrive
// after it, and is superseded), else the last to arrive.
func lastWithUUID(sts []protocol.TaskStatus) (protocol.TaskStatus, bool) {
	for i := len(sts) - 1; i >= 0; i-- {
		if sts[i].UUID != "" && sts[i].State.Terminal() {
			return sts[i], true
		}
	}
	for i := len(sts) - 1; i >= 0; i-- {
		if sts[i].UUID != "" {
			return sts[i], true
		}
	}
	return protocol.TaskStatus{}, false
}

func stateList(sts []protocol.TaskStatus) []protocol.TaskState {
	out := make([]protocol.TaskState, len(sts))
	for i, s := range sts {
		out[i] = s.State
	}
	return out
}

// unfinished describes the framework's tasks that did not finish, for
// failure messages.
func unfinished(fw *testcluster.TestFramework) []string {
	var out []string
	for _, ft := range fw.Tasks() {
		if !ft.Seen(protocol.TaskFinished) {
			out = append(out, fmt.Sprintf("%s(%s %v)", ft.Info.TaskID, ft.Outcome, stateList(ft.Statuses)))
		}
	}
	return out
}

// finished counts the framework's tasks that reached FINISHED.
func finished(fw *testcluster.TestFramework) int {
	n := 0
	for _, ft := range fw.Tasks() {
		if ft.Seen(protocol.TaskFinished) {
			n++
		}
	}
	return n
}

// stateDoc is the part of GET /v1/state the tests read.
type stateDoc struct {
	Frameworks []struct {
		ID        protocol.FrameworkID `json:"id"`
		Role      string               `json:"role"`
		Connected bool                 `json:"connected"`
	} `json:"frameworks"`
	Tasks []struct {
		FrameworkID protocol.FrameworkID `json:"framework_id"`
		TaskID      protocol.TaskID      `json:"task_id"`
		AgentID     protocol.AgentID     `json:"agent_id"`
		State       protocol.TaskState   `json:"state"`
	} `json:"tasks"`
	Roles []struct {
		Path       string             `json:"path"`
		Weight     float64            `json:"weight"`
		Allocation protocol.Resources `json:"allocation"`
	} `json:"roles"`
	Offers []json.RawMessage `json:"offers"`
}

// httpState fetches GET /v1/state from the serving leader's operator API,
// retrying while leadership moves.
func httpState(t *testing.T, c *testcluster.Cluster) stateDoc {
	t.Helper()
	var doc stateDoc
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		m := c.Leader()
		if m == nil {
			return errors.New("no leader serves")
		}
		if m.HTTPAddr() == "" {
			return fmt.Errorf("master %s serves no HTTP API", m.ID())
		}
		var err error
		doc, err = getState("http://" + m.HTTPAddr() + "/v1/state")
		return err
	})
	return doc
}

func getState(url string) (stateDoc, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return stateDoc{}, fmt.Errorf("GET /v1/state: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return stateDoc{}, fmt.Errorf("GET /v1/state: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return stateDoc{}, fmt.Errorf("GET /v1/state: status %d: %s", resp.StatusCode, body)
	}
	var doc stateDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return stateDoc{}, fmt.Errorf("GET /v1/state: %w: %.300s", err, body)
	}
	return doc, nil
}
